#include "bench/peaks.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "mmio/pci_sysfs.h"
#include "report/json_text.h"

namespace oaprof::bench {
namespace {

// The formulas' constants are reference/method.md's ("Theoretical peaks", Gen9/Gen9.5): 2 FPUs
// of 4 lanes per EU, double precision a quarter of single, 64 B/cycle of L3 per subslice. No
// kernel, Mesa or IGT source holds them. Threads per EU and FP64 come from the platform table
// (Mesa intel_device_info.c num_thread_per_eu and has_64bit_float, src/oa/platform.cc).
constexpr int kFpusPerEu = 2;
constexpr int kLanesPerFpu = 4;
constexpr double kDpFractionOfSp = 0.25;
constexpr double kL3BytesPerCyclePerSubslice = 64;

}  // namespace

Peaks compute_peaks(const PeakInputs& in) {
  if (in.eus <= 0 || in.subslices <= 0 || !(in.freq_mhz > 0) || in.threads_per_eu <= 0) {
    throw std::invalid_argument(fmt::format(
        "peaks need positive --eus, --subslices and --freq-mhz (got {}, {}, {}; {} threads per "
        "EU); with no Intel GPU in the platform table, give all three",
        in.eus, in.subslices, in.freq_mhz, in.threads_per_eu));
  }
  const double hz = in.freq_mhz * 1e6;
  Peaks p;
  p.add_sp_flops = in.eus * kFpusPerEu * kLanesPerFpu * hz;
  p.mad_sp_flops = 2 * p.add_sp_flops;
  p.has_fp64 = in.has_fp64;
  p.add_dp_flops = in.has_fp64 ? p.add_sp_flops * kDpFractionOfSp : 0;
  p.mad_dp_flops = in.has_fp64 ? p.mad_sp_flops * kDpFractionOfSp : 0;
  p.add_int_ops = p.add_sp_flops;
  p.mad_int_ops = p.mad_sp_flops;
  p.l3_bytes_per_s = kL3BytesPerCyclePerSubslice * in.subslices * hz;
  p.hw_threads = in.eus * in.threads_per_eu;
  return p;
}

std::optional<oa::Platform> detect_intel_platform(const std::filesystem::path& sysfs_root) {
  if (auto gpu = detect_intel_gpu(sysfs_root)) return gpu->platform;
  return std::nullopt;
}

std::optional<DetectedGpu> detect_intel_gpu(const std::filesystem::path& sysfs_root) {
  for (const mmio::PciDevice& d : mmio::list_pci_devices(sysfs_root)) {
    const bool intel_display =
        d.identity.vendor == 0x8086 && (d.identity.device_class >> 16) == 0x03;
    if (!intel_display) continue;
    if (auto p = oa::platform_for_pci_id(d.identity.device)) return DetectedGpu{*p, d.address};
  }
  return std::nullopt;
}

bool fills_hw_threads(std::size_t work_groups, std::size_t work_items, int hw_threads, int simd) {
  if (hw_threads <= 0 || simd <= 0 || work_groups == 0 || work_items == 0) return false;
  const std::size_t per_group =
      (work_items + static_cast<std::size_t>(simd) - 1) / static_cast<std::size_t>(simd);
  return (work_groups * per_group) % static_cast<std::size_t>(hw_threads) == 0;
}

PeakInputs peak_inputs(const oa::Platform& platform) {
  return {platform.eus, platform.subslices, platform.max_freq_mhz, platform.threads_per_eu,
          platform.has_fp64};
}

std::string peaks_text(const PeakInputs& in, const Peaks& p, const std::string& source, bool json) {
  std::ostringstream out;
  if (json) {
    // Without FP64 hardware the dp peaks are null, never 0 GFLOP/s read as a measurement.
    const auto dp = [&](double flops) {
      return p.has_fp64 ? nlohmann::ordered_json(flops / 1e9) : nlohmann::ordered_json(nullptr);
    };
    const nlohmann::ordered_json doc{{"source", source},
                                     {"eus", in.eus},
                                     {"subslices", in.subslices},
                                     {"freq_mhz", in.freq_mhz},
                                     {"threads_per_eu", in.threads_per_eu},
                                     {"fp64", p.has_fp64},
                                     {"add_sp_gflops", p.add_sp_flops / 1e9},
                                     {"mad_sp_gflops", p.mad_sp_flops / 1e9},
                                     {"add_dp_gflops", dp(p.add_dp_flops)},
                                     {"mad_dp_gflops", dp(p.mad_dp_flops)},
                                     {"add_int_gops", p.add_int_ops / 1e9},
                                     {"mad_int_gops", p.mad_int_ops / 1e9},
                                     {"l3_gbytes_per_s", p.l3_bytes_per_s / 1e9},
                                     {"hw_threads", p.hw_threads}};
    out << report::json_text(doc) << '\n';
    return out.str();
  }
  out << fmt::format("theoretical peaks: {} EUs, {} subslices, {} MHz ({})\n", in.eus, in.subslices,
                     in.freq_mhz, source);
  const auto line = [&out](const char* what, double v, const char* unit) {
    out << fmt::format("  {:<10} {:>12.1f} {}\n", what, v, unit);
  };
  line("add sp", p.add_sp_flops / 1e9, "GFLOP/s  (EUs x 2 FPUs x 4 lanes x f)");
  line("mad sp", p.mad_sp_flops / 1e9, "GFLOP/s  (x2 for multiply-add)");
  if (p.has_fp64) {
    line("add dp", p.add_dp_flops / 1e9, "GFLOP/s  (1/4 of sp)");
    line("mad dp", p.mad_dp_flops / 1e9, "GFLOP/s");
  } else {
    out << fmt::format("  {:<10} {:>12} (no FP64 hardware on this platform)\n", "add/mad dp",
                       "no FP64");
  }
  line("add int", p.add_int_ops / 1e9, "Gop/s    (as float add)");
  line("mad int", p.mad_int_ops / 1e9, "Gop/s    (mul+add pairs, as float mad)");
  line("L3", p.l3_bytes_per_s / 1e9, "GB/s     (64 B/cycle x subslices x f)");
  out << fmt::format("  {:<10} {:>12} threads  (EUs x {} per EU)\n", "hardware", p.hw_threads,
                     in.threads_per_eu);
  return out.str();
}

}  // namespace oaprof::bench
