// Theoretical peaks of a Gen9/Gen9.5 iGPU by the formulas of reference/method.md ("Theoretical
// peaks"), so measured figures can be read as a fraction of what the hardware could do; and the
// look-up of the machine's Intel GPU in the platform table for their default inputs.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "mmio/pci_bar.h"
#include "oa/platform.h"

namespace oaprof::bench {

struct PeakInputs {
  int eus = 0;        // usable EUs (fused-off ones not counted)
  int subslices = 0;  // total
  double freq_mhz = 0;
  int threads_per_eu = 7;  // the platform's (6 on Broxton and Gemini Lake); 7 without one
  bool has_fp64 = true;    // false on Gen11 and Gen12, which have no FP64 hardware
};

struct Peaks {
  double add_sp_flops = 0;  // EUs × 2 FPUs × 4 lanes × f
  double mad_sp_flops = 0;  // ×2: a multiply-add counts two operations
  bool has_fp64 = true;     // false: the part has no FP64 hardware and the dp figures are 0
  double add_dp_flops = 0;  // one FPU with half the lanes: a quarter of single precision
  double mad_dp_flops = 0;
  double add_int_ops = 0;     // integer add: as float add
  double mad_int_ops = 0;     // integer mad as mul+add pairs, by the same ×2 as float mad
  double l3_bytes_per_s = 0;  // 64 B/cycle per subslice × subslices × f
  int hw_threads = 0;         // EUs × threads per EU
};

// Throws std::invalid_argument when an input is not positive.
Peaks compute_peaks(const PeakInputs& in);

// The first Intel display-class PCI device under <sysfs_root>/bus/pci/devices that the platform
// table knows; nullopt when there is none (or no such directory).
std::optional<oa::Platform> detect_intel_platform(const std::filesystem::path& sysfs_root);
// The same device with its PCI address, whose drm/renderDM names the render node to ask for its
// own topology.
struct DetectedGpu {
  oa::Platform platform;
  mmio::PciAddress address;
};
std::optional<DetectedGpu> detect_intel_gpu(const std::filesystem::path& sysfs_root);

// The peaks as kernel_runner --peaks prints them: a table with each formula, or JSON (the dp
// peaks null without FP64 hardware); `source` says where the inputs came from.
std::string peaks_text(const PeakInputs& in, const Peaks& p, const std::string& source, bool json);

// Whether a launch of `work_groups` groups of `work_items` fills every hardware thread a whole
// number of times: each group takes ceil(work_items / simd) threads, and the method's peaks
// appear where that count is a multiple of EUs × threads per EU (SIMD32 kernels: 32 work-items a
// thread).
bool fills_hw_threads(std::size_t work_groups, std::size_t work_items, int hw_threads,
                      int simd = 32);

// The platform's defaults: its EUs, subslices, nominal maximum frequency, threads per EU and
// whether it has FP64 hardware.
PeakInputs peak_inputs(const oa::Platform& platform);

}  // namespace oaprof::bench
