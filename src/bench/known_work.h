// The work a catalogue kernel does at a size, as kernel_runner runs it: operations by class,
// bytes moved and touched. The simulator counts it when it knows the kernel (mmio::SimGpu), and
// checks of "counters against known work" compare measured counters with it.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "bench/catalogue.h"
#include "oa/kernel_work.h"

namespace oaprof::bench {

// kernel_runner's options that change a kernel's work; the defaults are its defaults.
struct WorkParams {
  int iterations = 0;  // 0: the runner's rule (compute: 2048 / width; pointer chase: one walk)
  std::size_t size_bytes = 16 << 20;  // memory kernels' buffer
  std::size_t stride = 16;            // pointer chase, in 4-byte elements
  // Outer repeats of a power variant's chain, which kernel_runner sizes from a timed launch:
  // unknown (nullopt) unless given, and then the work is unknown too.
  std::optional<int> outer;
};

// The work of `spec` over `global_size` work-items; nullopt when it depends on something not
// given (a power variant's outer repeats).
std::optional<oa::KernelWork> known_work(const KernelSpec& spec, std::size_t global_size,
                                         const WorkParams& params = {});
// By kernel name (the function name a program launches, or a catalogue name); nullopt for a name
// outside the catalogue.
std::optional<oa::KernelWork> known_work(std::string_view kernel_name, std::size_t global_size,
                                         const WorkParams& params = {});

}  // namespace oaprof::bench
