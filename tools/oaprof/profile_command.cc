// The default action of oaprof: profile a program or the whole GPU. Its options, parsed into
// run::ProfileOptions; src/run/profile_run.cc checks them into a plan and runs it.
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "base/cli.h"
#include "gpu/counter_source.h"
#include "power/energy_registry.h"
#include "run/profile_plan.h"
#include "run/profile_run.h"
#include "session/daemon_paths.h"
#include "tools/oaprof/commands.h"

namespace oaprof::tools {

namespace {

// Fake roots and the simulator's knobs: for tests and machines without an Intel GPU.
void add_profile_testing_options(CLI::App& app, run::ProfileOptions& opt) {
  using base::cli::testing;
  testing(app.add_option("--debugfs-root", opt.debugfs_root, "debugfs root, for forcewake"))
      ->capture_default_str();
  base::cli::deprecated(app.add_option("--debugfs", opt.debugfs_root), "oaprof", "--debugfs-root");
  testing(app.add_option("--sysfs-root", opt.sysfs_root, "where sysfs is (RAPL, DRM, lockdown)"))
      ->capture_default_str();
  testing(app.add_option("--drm-card", opt.drm_card, "the card's sysfs directory (--access perf)"))
      ->capture_default_str();
  testing(app.add_option("--sim-eus", opt.sim_eus, "--device sim: enabled EUs"))
      ->check(CLI::PositiveNumber);
  testing(app.add_option("--sim-platform", opt.sim_platform, "--device sim: the simulated part"))
      ->check(CLI::IsMember(std::vector<std::string>(mmio::sim_platform_names().begin(),
                                                     mmio::sim_platform_names().end())))
      ->capture_default_str();
  testing(app.add_flag("--sim-no-i915", opt.sim_no_i915, "--device sim: no i915 DRM node"));
}

}  // namespace

// One line each: the explanations are in docs/cli.md (Profile options in detail), so --help stays
// within 100 columns and test-only options wait for --help-all.
Action add_profile_options(CLI::App& app) {
  auto opt = std::make_shared<run::ProfileOptions>();
  auto* dev = app.add_option_group("Device", "which GPU, and how its counters are read");
  dev->add_option("--device", opt->device_spec, "GPU to measure: auto, sim or a PCI address")
      ->capture_default_str();
  dev->add_option("--pci", opt->pci, "PCI address of the GPU, e.g. 0000:00:02.0 (as --device)");
  dev->add_option("--daemon", opt->daemon, "reach the GPU through oaprofd (docs/daemon.md)")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  std::string access_help = "counter read-out:";
  for (const auto& s : gpu::counter_sources()) access_help += fmt::format(" {}", s.name);
  dev->add_option("--access", opt->access, access_help)->capture_default_str();
  dev->add_option("--format", opt->format_text, "OA report format: auto, a code or a name")
      ->capture_default_str();
  dev->add_option("--metric-set", opt->metric_set, "metric set(s), comma-separated: one pass each")
      ->capture_default_str();
  dev->add_option("--metrics", opt->metrics, "counters by IGT symbol, comma-separated (EuActive)");
  dev->add_option("--metrics-xml", opt->metrics_xml, "IGT metric file to take the set from");
  dev->add_option("--forcewake", opt->forcewake,
                  "keep the GPU awake: auto, debugfs, registers, none")
      ->capture_default_str();
  dev->add_option("--render-node", opt->render_node, "i915 render node for --access rpc and perf")
      ->capture_default_str();
  dev->add_option("--oa-exponent", opt->oa_exponent, "--access perf: period (2 << N) ticks")
      ->check(CLI::Range(0, 31));
  add_profile_testing_options(app, *opt);

  auto* what = app.add_option_group("What to measure");
  what->add_option("--mode", opt->mode, "kernel: a row per launch; app: a row for the run")
      ->check(CLI::IsMember({"kernel", "app"}))
      ->capture_default_str();
  what->add_option("-k,--kernel-name", opt->kernel_name, "only this kernel (NAME or regex:RE)");
  what->add_option("--launch-skip", opt->launch_skip, "skip this many matching launches first");
  what->add_option("--launch-count", opt->launch_count, "measure at most this many launches");
  what->add_flag("--system-wide", opt->system_wide, "sample the whole GPU for --duration");
  what->add_option("--duration", opt->duration, "with --system-wide: how long (10s, 500ms)");
  what->add_option("--interval", opt->interval, "with --system-wide: a row per interval (100ms)");
  what->add_option("--min-window", opt->min_window, "least window a power figure needs (50ms)")
      ->capture_default_str();
  what->add_option("--replay", opt->replay, "kernel replay: N passes (2-10000), auto or off")
      ->capture_default_str();
  what->add_option("--replay-mode", opt->replay_mode, "several metric sets: kernel or application")
      ->capture_default_str();
  what->add_option("--attribution", opt->attribution, "a launch's counters: bracketed or sampled")
      ->check(CLI::IsMember({"bracketed", "sampled"}))
      ->capture_default_str();
  what->add_option("--sample-period", opt->sample_period, "sampled: read period (100us-100ms)")
      ->capture_default_str();
  what->add_option("--inject", opt->inject,
                   "interception: layer (OpenCL, Level Zero tracing), preload, auto")
      ->check(CLI::IsMember({"auto", "layer", "preload"}))
      ->capture_default_str();

  auto* energy = app.add_option_group("Energy", "RAPL energy and iGPU power");
  energy->add_option("--energy", opt->energy, "energy backend: auto or a name (`oaprof power`)")
      ->capture_default_str();
  energy->add_option("--igpu-power", opt->igpu_power, "headline GPU power formula (docs/energy.md)")
      ->capture_default_str();
  energy
      ->add_option("--idle-baseline", opt->idle_baseline, "measure idle power first: DURATION|off")
      ->capture_default_str();
  energy->add_option("--energy-model", opt->energy_model,
                     "model.json of `oaprof model fit`: every row's modelled energy");

  auto* out = app.add_option_group("Output");
  out->add_option("-o,--output", opt->csv_path, "CSV file, a row per launch (- for stdout)")
      ->check(base::cli::output_file());
  base::cli::deprecated(out->add_option("--csv", opt->csv_path), "oaprof", "-o/--output")
      ->check(base::cli::output_file());
  // A required FILE: an optional one would take the `--` before the program as its value.
  out->add_option("--json", opt->json_path, "also write JSON to FILE (- for stdout)")
      ->check(base::cli::output_file());
  out->add_option("--trace", opt->trace_path, "also write a Perfetto trace (FILE.pftrace)")
      ->check(base::cli::output_file());
  out->add_flag("-q,--quiet", opt->quiet, "no summary table or progress");
  out->add_flag("--share-kernel-names", opt->share_kernel_names,
                "through oaprofd: name this run's kernels on its Prometheus page");
  app.add_option("command", opt->command, "the program to profile and its arguments, after --");
  return [opt] { return run::run_profile(*opt); };
}

}  // namespace oaprof::tools
