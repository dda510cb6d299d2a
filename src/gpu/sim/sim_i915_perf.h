// The kernel side of the i915 perf interface for a simulated GPU, so that `--access perf` runs
// end to end on SimGpu: it refuses what i915_perf.c refuses (with the same errno), keeps
// configurations per device as i915 does (ids from 2, visible as metrics/<uuid>/id), holds the OA
// unit for one stream at a time, programs the OA unit and writes the context-saved registers
// into every context image (so SimGpu's context switches restore them), and turns the OA
// buffer into records laid out exactly as i915's read() returns them.
//
// Not modelled: GEM contexts (CTX_HANDLE finds none: ENOENT), GLOBAL_SSEU (EINVAL), the
// per-platform test configuration (id 1), and report filtering by context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "gpu/i915/i915_perf.h"
#include "mmio/sim_gpu.h"

namespace oaprof::gpu {

// The caller's privileges and the sysctls i915 consults.
struct SimI915Options {
  int perf_stream_paranoid = 1;                  // /proc/sys/dev/i915/perf_stream_paranoid
  bool perfmon_capable = true;                   // holds CAP_PERFMON or CAP_SYS_ADMIN
  std::uint64_t oa_max_sample_rate_hz = 100000;  // dev.i915.oa_max_sample_rate
  std::size_t oa_buffer_bytes = 16u << 20;       // i915 allocates a 16 MiB OA buffer
};

// A render-node descriptor on `sim`'s simulated i915. Every SimI915Perf on the same SimGpu shares
// its configurations and its one stream, as descriptors on one device do.
std::unique_ptr<I915Perf> make_sim_i915_perf(mmio::SimGpu& sim, const SimI915Options& options = {});

}  // namespace oaprof::gpu
