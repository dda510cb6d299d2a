// kernel_runner: the OpenCL micro-benchmarks of the bench::catalogue, as an ordinary OpenCL
// program. Under oaprof every launch it makes is measured through the layer.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "attach/layer_config.h"
#include "base/errors.h"
#include "bench/catalogue.h"
#include "bench/peaks.h"
#include "bench/result_writer.h"
#include "bench/runner.h"
#include "bench/sweep.h"
#include "gpu/i915/i915_query.h"
#include "mmio/pci_sysfs.h"
#include "report/json_text.h"

namespace {

using namespace oaprof::bench;
namespace bench = oaprof::bench;
namespace oa = oaprof::oa;
namespace base = oaprof::base;

constexpr int kExitWrongResult = 1;
constexpr int kExitOpenCl = 3;

double default_min_time_ms() {
  // oaprof passes its --min-window down so the runner's repeats cover the energy window. Read
  // through the layer's contract, whose errors the layer itself logs once.
  const auto config = oaprof::attach::LayerConfig::from_env(&oaprof::attach::process_env);
  return static_cast<double>(config.min_window.count());
}

struct PeakOptions {
  std::optional<int> eus, subslices;
  std::optional<double> freq_mhz;
  std::string sysfs_root = "/sys";
  std::string dev_root = "/dev";
};

// The part's own topology from i915 on its render node (fused-off EUs excluded); throws
// std::runtime_error saying why it could not be asked.
oaprof::oa::Topology device_topology(const DetectedGpu& gpu, const PeakOptions& o) {
  const auto addr = oaprof::mmio::parse_pci_address(gpu.dir.filename().string());
  const auto minor = oaprof::mmio::find_drm_nodes(o.sysfs_root, addr).render_minor;
  if (!minor) {
    throw std::runtime_error(
        fmt::format("{} has no DRM render node (is i915 bound to it?)", addr.str()));
  }
  const std::string node = fmt::format("{}/dri/renderD{}", o.dev_root, *minor);
  return oaprof::gpu::query_topology(*oaprof::gpu::open_i915_query(node));
}

// The device's own EUs and subslices (from i915), else the platform table's, overridden one by
// one by the options; `source` says which was used.
PeakInputs resolve_peak_inputs(const PeakOptions& o, std::string& source) {
  PeakInputs in;
  if (const auto gpu = detect_intel_gpu(o.sysfs_root)) {
    const oaprof::oa::Platform& platform = gpu->platform;
    in = peak_inputs(platform);
    source = fmt::format("platform table: {} {} ({})", platform.codename,
                         oaprof::oa::gt_label(platform), platform.metrics_file);
    try {
      const oaprof::oa::Topology t = device_topology(*gpu, o);
      in.eus = t.eus;
      in.subslices = t.subslices;
      source = fmt::format("i915 topology query: {} {} ({}) with {} EUs", platform.codename,
                           oaprof::oa::gt_label(platform), platform.metrics_file, t.eus);
    } catch (const std::exception& e) {
      source += fmt::format(
          "; its own topology could not be read ({}), so fused-off EUs are "
          "counted",
          e.what());
    }
  } else {
    source = "options (no Intel GPU from the platform table found)";
  }
  if (o.eus) in.eus = *o.eus;
  if (o.subslices) in.subslices = *o.subslices;
  if (o.freq_mhz) in.freq_mhz = *o.freq_mhz;
  if (o.eus || o.subslices || o.freq_mhz) source += ", overridden by options";
  return in;
}

void print_peaks(const PeakInputs& in, const Peaks& p, const std::string& source, bool json) {
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
    std::cout << oaprof::report::json_text(doc) << '\n';
    return;
  }
  std::cout << fmt::format("theoretical peaks: {} EUs, {} subslices, {} MHz ({})\n", in.eus,
                           in.subslices, in.freq_mhz, source);
  const auto line = [](const char* what, double v, const char* unit) {
    std::cout << fmt::format("  {:<10} {:>12.1f} {}\n", what, v, unit);
  };
  line("add sp", p.add_sp_flops / 1e9, "GFLOP/s  (EUs x 2 FPUs x 4 lanes x f)");
  line("mad sp", p.mad_sp_flops / 1e9, "GFLOP/s  (x2 for multiply-add)");
  if (p.has_fp64) {
    line("add dp", p.add_dp_flops / 1e9, "GFLOP/s  (1/4 of sp)");
    line("mad dp", p.mad_dp_flops / 1e9, "GFLOP/s");
  } else {
    std::cout << fmt::format("  {:<10} {:>12} (no FP64 hardware on this platform)\n", "add/mad dp",
                             "no FP64");
  }
  line("add int", p.add_int_ops / 1e9, "Gop/s    (as float add)");
  line("mad int", p.mad_int_ops / 1e9, "Gop/s    (mul+add pairs, as float mad)");
  line("L3", p.l3_bytes_per_s / 1e9, "GB/s     (64 B/cycle x subslices x f)");
  std::cout << fmt::format("  {:<10} {:>12} threads  (EUs x {} per EU)\n", "hardware", p.hw_threads,
                           in.threads_per_eu);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "kernel_runner: OpenCL micro-benchmarks for characterising a GPU's compute, memory "
      "and power roofs.\n"
      "Kernels: <op>[_<type>]_<width> (op add|sub|mul|div|mad, type sp (default)|dp|int, "
      "width scalar|vect2|vect4|vect8|vect16, e.g. mad_vect4), load_store[_dp]_<width>, "
      "pchase_bw, pchase_lat, empty, power_<compute kernel>. --list shows them all.\n"
      "Profile it with: oaprof -- kernel_runner mad_vect4",
      "kernel_runner"};
  std::vector<std::string> names;
  bool list = false, list_devices_flag = false, peaks = false, csv = false, json = false;
  bool quiet = false, no_warmup = false;
  std::string size_text, sweep_text, variant_text = "private";
  PeakOptions peak_opt;
  bench::RunnerOptions opt;
  opt.min_time_ms = default_min_time_ms();
  app.add_option("kernels", names, "kernels to run, in order");
  app.add_flag("--list", list, "print every kernel with a one-line description and exit");
  app.add_flag("--devices", list_devices_flag, "list OpenCL platforms and devices and exit");
  app.add_option("--platform", opt.platform,
                 "OpenCL platform: index or name substring (default: first)");
  app.add_option("--device", opt.device, "OpenCL device: index or name substring (default: first)");
  app.add_option("--wg", opt.work_groups, "number of work-groups")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--wi", opt.work_items, "work-items per work-group")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--iterations", opt.iterations,
                 "compute: loop iterations per work-item (default 2048 / width); pointer chase: "
                 "hops per work-item (default: walk the data once)")
      ->check(CLI::PositiveNumber);
  app.add_option("--size", size_text,
                 "memory kernels: bytes per buffer, K/M/G suffixes (default 16M)");
  app.add_option("--stride", opt.stride,
                 "pointer chase stride in 4-byte elements (16 = one 64-byte line)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--sweep", sweep_text,
                 "run each kernel over wg=FROM:TO[:STEP], wi=… or size=… (step 1 by default; "
                 "xN for geometric), one row per step");
  app.add_option("--variant", variant_text,
                 "compute kernel form: private (default), loop (result in __global), unrolled "
                 "(x64), single (one operation)");
  app.add_option("--power-ms", opt.power_ms, "power_* kernels: target duration of one launch")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--min-time", opt.min_time_ms,
                 "repeat until the summed kernel time reaches this many ms (default 50, or "
                 "$OAPROF_MIN_TIME_MS as oaprof sets it), and until the standard error is below "
                 "2% of the mean")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-repeats", opt.max_repeats, "upper bound on measured launches")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-warmup", no_warmup, "skip the unmeasured warm-up launch");
  auto* csv_flag = app.add_flag("--csv", csv, "write CSV instead of a table");
  app.add_flag("--json", json, "write JSON (every raw sample included) instead of a table")
      ->excludes(csv_flag);
  app.add_flag("--quiet", quiet, "no progress bar during sweeps");
  app.add_flag("--peaks", peaks,
               "print theoretical peaks (method.md formulas) and exit; the EUs and subslices "
               "of the Intel GPU as i915 reports them (its render node), else the platform "
               "table's");
  app.add_option("--eus", peak_opt.eus, "peaks and sweep marks: usable EUs")
      ->check(CLI::PositiveNumber);
  app.add_option("--subslices", peak_opt.subslices, "peaks: subslices")->check(CLI::PositiveNumber);
  app.add_option("--freq-mhz", peak_opt.freq_mhz, "peaks: GPU frequency in MHz")
      ->check(CLI::PositiveNumber);
  app.add_option("--sysfs-root", peak_opt.sysfs_root, "where to look for the Intel GPU (tests)")
      ->group("");
  app.add_option("--dev-root", peak_opt.dev_root, "where its render node is (tests)")->group("");
  app.footer(
      "Exit status: 0 success (skipped kernels included), 1 wrong result, 2 usage error, "
      "3 OpenCL set-up failure.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : base::kExitUsage;
  }
  opt.warmup = !no_warmup;
  const OutputFormat format = csv    ? OutputFormat::kCsv
                              : json ? OutputFormat::kJson
                                     : OutputFormat::kTable;

  if (list) {
    for (const auto& e : bench::catalogue())
      std::cout << fmt::format("{:<22} {}\n", e.name, e.description);
    return 0;
  }
  std::optional<bench::Sweep> sweep;
  try {
    if (peaks) {
      std::string source;
      const PeakInputs in = resolve_peak_inputs(peak_opt, source);
      print_peaks(in, bench::compute_peaks(in), source, json);
      return 0;
    }
    if (!size_text.empty()) opt.size_bytes = bench::parse_byte_size(size_text);
    if (!sweep_text.empty()) sweep = bench::parse_sweep(sweep_text);
    const auto variant = bench::parse_variant(variant_text);
    if (!variant) {
      throw std::invalid_argument(fmt::format(
          "--variant '{}' is unknown; use private, loop, unrolled or single", variant_text));
    }
    opt.variant = *variant;
  } catch (const std::invalid_argument& e) {
    std::cerr << "kernel_runner: " << e.what() << "\n";
    return base::kExitUsage;
  }
  if (list_devices_flag) {
    try {
      for (const auto& d : bench::list_devices()) {
        std::cout << fmt::format(
            "platform {} ({}) device {}: {}, {} compute units, {} MHz, fp64 {}\n", d.platform_index,
            d.platform_name, d.device_index, d.device_name, d.compute_units, d.max_clock_mhz,
            d.fp64 ? "yes" : "no");
      }
    } catch (const std::exception& e) {
      std::cerr << "kernel_runner: " << e.what() << "\n";
      return kExitOpenCl;
    }
    return 0;
  }
  if (names.empty()) {
    std::cerr
        << "kernel_runner: name at least one kernel (see --list), e.g. kernel_runner mad_vect4\n";
    return base::kExitUsage;
  }
  std::vector<bench::KernelSpec> specs;
  for (const auto& n : names) {
    auto spec = bench::parse_kernel_name(n);
    if (!spec) {
      std::string hint;
      for (const auto& s : bench::nearest_names(n)) hint += (hint.empty() ? "" : ", ") + s;
      std::cerr << fmt::format(
          "kernel_runner: unknown kernel '{}'; did you mean {}? (--list shows all)\n", n, hint);
      return base::kExitUsage;
    }
    specs.push_back(*spec);
  }

  // bench::Sweep rows are marked where the launch fills every hardware thread; that needs the EU
  // count.
  int hw_threads = 0;
  if (sweep) {
    std::string source;
    const PeakInputs in = resolve_peak_inputs(peak_opt, source);
    if (in.eus > 0) hw_threads = in.eus * in.threads_per_eu;
  }

  try {
    bench::Runner runner(opt);
    bench::ResultWriter writer(std::cout, format, runner.device_name());
    for (const auto& spec : specs) {
      try {
        if (!sweep) {
          writer.row(runner.run(spec));
          continue;
        }
        bench::ProgressBar bar(std::cerr, sweep->values.size(), !quiet && isatty(STDERR_FILENO));
        for (std::size_t i = 0; i < sweep->values.size(); ++i) {
          const std::size_t v = sweep->values[i];
          bench::RunnerOptions& o = runner.options();
          switch (sweep->param) {
            case SweepParam::kWorkGroups:
              o.work_groups = v;
              break;
            case SweepParam::kWorkItems:
              o.work_items = v;
              break;
            case SweepParam::kSize:
              o.size_bytes = v;
              break;
          }
          bar.update(i,
                     fmt::format("{} {}={}", spec.name, bench::sweep_param_name(sweep->param), v));
          const RunResult r = runner.run(spec);
          bar.finish();
          writer.row(
              r, bench::fills_hw_threads(r.global_size / r.local_size, r.local_size, hw_threads));
        }
      } catch (const Unsupported& e) {
        writer.skipped(spec.name, e.what());
        if (format == OutputFormat::kCsv) std::cerr << e.what() << "\n";
      }
    }
    writer.finish();
  } catch (const VerificationError& e) {
    std::cerr << "kernel_runner: " << e.what() << "\n";
    return kExitWrongResult;
  } catch (const std::invalid_argument& e) {
    std::cerr << "kernel_runner: " << e.what() << "\n";
    return base::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "kernel_runner: " << e.what() << "\n";
    return kExitOpenCl;
  }
  return 0;
}
