// kernel_runner: the OpenCL micro-benchmarks of the bench::catalogue, as an ordinary OpenCL
// program. Under oaprof every launch it makes is measured through the layer.
#include <unistd.h>

#include <csignal>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "attach/layer_config.h"
#include "base/cli.h"
#include "base/errors.h"
#include "bench/catalogue.h"
#include "bench/peaks.h"
#include "bench/result_writer.h"
#include "bench/runner.h"
#include "bench/sweep.h"
#include "bench/sweep_run.h"
#include "gpu/i915/i915_query.h"
#include "mmio/pci_sysfs.h"

namespace {

using namespace oaprof::bench;
namespace bench = oaprof::bench;
namespace oa = oaprof::oa;
namespace base = oaprof::base;

constexpr int kExitWrongResult = 1;
static_assert(base::kExitSetup == 3, "kernel_runner documents 3 as OpenCL set-up failure");

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
  const auto& addr = gpu.address;
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

// Everything the command line says, as CLI11 fills it in.
struct CommandLine {
  std::vector<std::string> names;
  bool list = false, list_devices = false, peaks = false, csv = false, json = false;
  bool quiet = false, no_warmup = false;
  std::string size_text, sweep_text, variant_text = "private";
  PeakOptions peak;
  bench::RunnerOptions runner;
};

// What to run, validated: the rest of the program trusts it.
struct Plan {
  std::vector<bench::KernelSpec> specs;
  std::optional<bench::Sweep> sweep;
  OutputFormat format = OutputFormat::kTable;
};

void add_kernel_options(CLI::App& app, CommandLine& cl) {
  bench::RunnerOptions& opt = cl.runner;
  app.add_option("kernels", cl.names, "kernels to run, in order");
  app.add_flag("--list", cl.list, "print every kernel with a one-line description and exit");
  app.add_flag("--devices", cl.list_devices, "list OpenCL platforms and devices and exit");
  // --cl-*: oaprof's --device and decode's --platform name other things (docs/cli.md).
  app.add_option("--cl-platform", opt.platform, "OpenCL platform: index or name substring");
  app.add_option("--cl-device", opt.device,
                 "OpenCL device: index or name substring, or pci:BDF on any platform");
  base::cli::deprecated(app.add_option("--platform", opt.platform), "kernel_runner",
                        "--cl-platform");
  base::cli::deprecated(app.add_option("--device", opt.device), "kernel_runner", "--cl-device");
  app.add_option("--wg", opt.work_groups, "number of work-groups")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--wi", opt.work_items, "work-items per work-group")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--iterations", opt.iterations, "iterations per work-item (docs/kernel_runner.md)")
      ->check(CLI::PositiveNumber);
  app.add_option("--size", cl.size_text,
                 "memory kernels: bytes per buffer, K/M/G suffixes (default 16M)");
  app.add_option("--stride", opt.stride,
                 "pointer chase stride in 4-byte elements (16 = one 64-byte line)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--sweep", cl.sweep_text,
                 "a row per step: wg=FROM:TO[:STEP], wi=… or size=… (xN: geometric)");
  app.add_option("--variant", cl.variant_text,
                 "compute kernel form: private, loop, unrolled or single");
}

void add_repeat_and_output_options(CLI::App& app, CommandLine& cl) {
  bench::RunnerOptions& opt = cl.runner;
  // Durations in base::parse_duration's syntax; a bare number stays milliseconds.
  app.add_option("--power-ms", opt.power_ms, "power_* kernels: one launch's length (DURATION)")
      ->capture_default_str()
      ->transform(base::cli::as_milliseconds())
      ->check(CLI::PositiveNumber);
  app.add_option("--min-time", opt.min_time_ms,
                 "repeat until the kernel time reaches this (DURATION, default 50ms)")
      ->transform(base::cli::as_milliseconds())
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-repeats", opt.max_repeats, "upper bound on measured launches")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-warmup", cl.no_warmup, "skip the unmeasured warm-up launch");
  app.add_option("--busy", opt.busy_ms,
                 "a load: one kernel back to back for DURATION or until SIGTERM")
      ->transform(base::cli::as_milliseconds())
      ->check(CLI::PositiveNumber);
  // Bounded: a rest is a launch's length times R, which must fit a sleep's nanoseconds.
  app.add_option("--rest", opt.busy_rest,
                 "with --busy: idle R (0..1000) times each launch's length after it")
      ->check(CLI::Range(0.0, 1000.0));
  // Flags, not files: kernel_runner writes only to stdout, and an optional FILE would swallow
  // the kernel names that follow (docs/cli.md).
  auto* csv_flag = app.add_flag("--csv", cl.csv, "write CSV instead of a table");
  app.add_flag("--json", cl.json, "write JSON (every raw sample included) instead of a table")
      ->excludes(csv_flag);
  app.add_flag("--quiet", cl.quiet, "no progress bar during sweeps");
}

void add_peak_options(CLI::App& app, CommandLine& cl) {
  app.add_flag("--peaks", cl.peaks,
               "print theoretical peaks (method.md) of the Intel GPU and exit");
  app.add_option("--eus", cl.peak.eus, "peaks and sweep marks: usable EUs")
      ->check(CLI::PositiveNumber);
  app.add_option("--subslices", cl.peak.subslices, "peaks: subslices")->check(CLI::PositiveNumber);
  app.add_option("--freq-mhz", cl.peak.freq_mhz, "peaks: GPU frequency in MHz")
      ->check(CLI::PositiveNumber);
  base::cli::testing(
      app.add_option("--sysfs-root", cl.peak.sysfs_root, "where to look for the Intel GPU"));
  base::cli::testing(app.add_option("--dev-root", cl.peak.dev_root, "where its render node is"));
}

bench::KernelSpec kernel_spec(const std::string& name) {
  if (auto spec = bench::parse_kernel_name(name)) return *spec;
  std::string hint;
  for (const auto& s : bench::nearest_names(name)) hint += (hint.empty() ? "" : ", ") + s;
  throw base::UsageError(
      fmt::format("unknown kernel '{}'; did you mean {}? (--list shows all)", name, hint));
}

// --cl-device pci:BDF: the address, parsed once here; the platform is then whichever lists it.
void choose_device_by_pci(bench::RunnerOptions& runner) {
  runner.device_pci = bench::parse_pci_choice(runner.device);
  if (!runner.device_pci) return;
  if (!runner.platform.empty()) {
    throw base::UsageError(
        fmt::format("--cl-device {} looks on every platform; drop --cl-platform {}", runner.device,
                    runner.platform));
  }
  runner.device.clear();
}

// Validates the command line's text into a plan; throws base::UsageError.
Plan make_plan(CommandLine& cl) {
  Plan plan;
  plan.format = cl.csv ? OutputFormat::kCsv : cl.json ? OutputFormat::kJson : OutputFormat::kTable;
  cl.runner.warmup = !cl.no_warmup;
  choose_device_by_pci(cl.runner);
  if (!cl.size_text.empty()) cl.runner.size_bytes = bench::parse_byte_size(cl.size_text);
  if (!cl.sweep_text.empty()) plan.sweep = bench::parse_sweep(cl.sweep_text);
  const auto variant = bench::parse_variant(cl.variant_text);
  if (!variant) {
    throw base::UsageError(fmt::format(
        "--variant '{}' is unknown; use private, loop, unrolled or single", cl.variant_text));
  }
  cl.runner.variant = *variant;
  if (cl.names.empty()) {
    throw base::UsageError("name at least one kernel (see --list), e.g. kernel_runner mad_vect4");
  }
  for (const auto& n : cl.names) plan.specs.push_back(kernel_spec(n));
  if (cl.runner.busy_ms > 0 && (plan.specs.size() != 1 || plan.sweep)) {
    throw base::UsageError("--busy runs one kernel without --sweep, e.g. --busy 60s mad_vect8");
  }
  if (cl.runner.busy_rest > 0 && cl.runner.busy_ms <= 0) {
    throw base::UsageError("--rest spaces a load's launches: give --busy DURATION too");
  }
  return plan;
}

int list_devices() {
  for (const auto& d : bench::list_devices()) {
    std::cout << fmt::format(
        "platform {} ({}) device {}: {}, {} compute units, {} MHz, fp64 {}, PCI {}\n",
        d.platform_index, d.platform_name, d.device_index, d.device_name, d.compute_units,
        d.max_clock_mhz, d.fp64 ? "yes" : "no", bench::pci_text(d));
  }
  return 0;
}

volatile std::sig_atomic_t busy_stop = 0;

extern "C" void request_busy_stop(int) { busy_stop = 1; }

// --busy: SIGTERM and SIGINT end the load after the launch in flight, and stderr says when it
// has started, for the tool that waits on it (oaprof selftest, docs/kernel_runner.md).
void prepare_busy(bench::Runner& runner, const std::string& kernel) {
  bench::RunnerOptions& options = runner.options();
  struct sigaction action {};
  action.sa_handler = request_busy_stop;
  action.sa_flags = SA_RESTART;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  options.busy_stop = &busy_stop;
  const std::string rest =
      options.busy_rest > 0
          ? fmt::format(", resting {:.3g} times each launch's length after it", options.busy_rest)
          : "";
  options.busy_started = [kernel, ms = options.busy_ms, device = runner.device_name(), rest] {
    std::cerr << fmt::format("kernel_runner: busy: {} launching on {} for {:.3g} s{}\n", kernel,
                             device, ms / 1e3, rest)
              << std::flush;
  };
}

int run_kernels(const CommandLine& cl, const Plan& plan) {
  int hw_threads = 0;  // sweep rows are marked where a launch fills the EUs' threads
  if (plan.sweep) {
    std::string source;
    const PeakInputs in = resolve_peak_inputs(cl.peak, source);
    if (in.eus > 0) hw_threads = in.eus * in.threads_per_eu;
  }
  bench::Runner runner(cl.runner);
  if (cl.runner.busy_ms > 0) prepare_busy(runner, plan.specs.front().name);
  bench::ResultWriter writer(std::cout, plan.format, runner.device_name());
  for (const auto& spec : plan.specs) {
    try {
      if (plan.sweep) {
        bench::run_sweep(runner, writer, spec, *plan.sweep, hw_threads,
                         !cl.quiet && isatty(STDERR_FILENO));
      } else {
        writer.row(runner.run(spec));
      }
    } catch (const Stopped& e) {
      std::cerr << "kernel_runner: busy: " << e.what() << "\n";
      return 0;
    } catch (const Unsupported& e) {
      writer.skipped(spec.name, e.what());
      if (plan.format == OutputFormat::kCsv) std::cerr << e.what() << "\n";
    }
  }
  writer.finish();
  return 0;
}

// The command's body: usage errors exit 2 and OpenCL failures 3 through base::run_command; a
// kernel's wrong result is status 1.
int run(CommandLine& cl) {
  if (cl.list) {
    for (const auto& e : bench::catalogue()) {
      std::cout << fmt::format("{:<22} {}\n", e.name, e.description);
    }
    return 0;
  }
  if (cl.peaks) {
    std::string source;
    const PeakInputs in = resolve_peak_inputs(cl.peak, source);
    std::cout << bench::peaks_text(in, bench::compute_peaks(in), source, cl.json);
    return 0;
  }
  if (cl.list_devices) return list_devices();
  const Plan plan = make_plan(cl);
  try {
    return run_kernels(cl, plan);
  } catch (const VerificationError& e) {
    std::cerr << "kernel_runner: " << e.what() << "\n";
    return kExitWrongResult;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "kernel_runner: OpenCL micro-benchmarks for characterising a GPU's compute, memory\n"
      "and power roofs.\n"
      "Kernels: <op>[_<type>]_<width> (op add|sub|mul|div|mad, type sp (default)|dp|int,\n"
      "width scalar|vect2|vect4|vect8|vect16, e.g. mad_vect4), load_store[_dp]_<width>,\n"
      "pchase_bw, pchase_lat, empty, power_<compute kernel>. --list shows them all.\n"
      "Profile it with: oaprof -- kernel_runner mad_vect4",
      "kernel_runner"};
  base::cli::add_help_all(app, argc, argv);
  CommandLine cl;
  cl.runner.min_time_ms = default_min_time_ms();
  add_kernel_options(app, cl);
  add_repeat_and_output_options(app, cl);
  add_peak_options(app, cl);
  app.footer(
      "Exit status:\n"
      "  0  success (skipped kernels included)\n"
      "  1  a kernel gave a wrong result\n"
      "  2  bad options\n"
      "  3  OpenCL could not be set up");
  if (const auto status = base::cli::parse(app, argc, argv)) return *status;
  return base::run_command("kernel_runner", [&cl] { return run(cl); });
}
