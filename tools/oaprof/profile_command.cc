// The default action of oaprof: profile a program or the whole GPU. Its options, parsed into
// run::ProfileOptions; src/run/profile_run.cc checks them into a plan and runs it.
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "gpu/counter_source.h"
#include "power/energy_registry.h"
#include "run/profile_plan.h"
#include "run/profile_run.h"
#include "session/daemon_paths.h"
#include "tools/oaprof/commands.h"

namespace oaprof::tools {

Action add_profile_options(CLI::App& app) {
  auto opt = std::make_shared<run::ProfileOptions>();
  auto* dev = app.add_option_group("Device", "which GPU, and how its counters are read");
  dev->add_option("--device", opt->device_spec,
                  "GPU to measure: auto (0000:00:02.0), sim (the simulator, for machines without "
                  "an Intel GPU; its numbers are a model, labelled 'device: simulated'), or a PCI "
                  "address such as 0000:00:02.0 (as --pci)")
      ->capture_default_str();
  dev->add_option("--pci", opt->pci,
                  "PCI address of the Intel GPU to measure, e.g. 0000:00:02.0 (`lspci -D -d "
                  "8086::0300` lists them); the same as --device BDF, and refused beside a "
                  "--device that names another device");
  dev->add_option("--daemon", opt->daemon,
                  "reach the GPU through oaprofd: auto (when not root, except --device sim, which "
                  "needs no privileges), always, never (open the device here; needs root). The "
                  "daemon's socket is $OAPROF_DAEMON_SOCKET or " +
                      std::string(session::kDefaultDaemonSocket))
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  std::string access_help = "counter read-out:";
  for (const auto& s : gpu::counter_sources()) {
    access_help += fmt::format(" {} ({});", s.name, s.description);
  }
  access_help.back() = '.';
  access_help += fmt::format(" {}", gpu::kContextSavedNote);  // why rows say config_lost
  dev->add_option("--access", opt->access, access_help)->capture_default_str();
  dev->add_option("--format", opt->format_text,
                  "OA report format: auto (the generation's OAG format: 101 on i915 parts, "
                  "PEC64u64 on Xe2), a counter-select code in binary (101) or decimal (5), or a "
                  "name (A32u40_A4u32_B8_C8); read for the device's generation")
      ->capture_default_str();
  dev->add_option("--metric-set", opt->metric_set,
                  "metric set to program and evaluate: Builtin (no mux programming, Gen8-11) or a "
                  "set of the platform's IGT file, e.g. ComputeBasic (`oaprof metrics list`); "
                  "several, comma-separated, are one pass each (see --replay-mode)")
      ->capture_default_str();
  dev->add_option("--metrics", opt->metrics,
                  "counters to collect, comma-separated IGT symbol names (e.g. "
                  "EuActive,L3Misses): oaprof chooses the fewest sets of the platform's file "
                  "that hold them all and says which; two or more are one pass each "
                  "(see --replay-mode). Instead of --metric-set");
  dev->add_option("--metrics-xml", opt->metrics_xml,
                  "IGT metric file to take the set from (default: searched, see `oaprof metrics`)");
  dev->add_option("--forcewake", opt->forcewake,
                  "keep the GPU awake: auto (debugfs, else registers), debugfs, registers, none")
      ->capture_default_str();
  dev->add_option("--debugfs", opt->debugfs_root, "debugfs root, for forcewake")
      ->capture_default_str();
  dev->add_option("--render-node", opt->render_node,
                  "i915 render node for --access rpc and perf (auto: the device's own, "
                  "<sysfs>/bus/pci/devices/BDF/drm/renderDN)")
      ->capture_default_str();
  dev->add_option("--drm-card", opt->drm_card,
                  "the card's sysfs directory for --access perf (auto: the device's own, "
                  "<sysfs>/bus/pci/devices/BDF/drm/cardN)")
      ->capture_default_str();
  dev->add_option("--oa-exponent", opt->oa_exponent,
                  "OA sampling period for --access perf: (2 << N) timestamp ticks. Default: 16 "
                  "on i915 (snapshots are MI_REPORT_PERF_COUNT); 10 on xe, where each snapshot "
                  "waits for the next periodic report")
      ->check(CLI::Range(0, 31));
  dev->add_option("--sim-eus", opt->sim_eus,
                  "with --device sim: the simulated part's enabled EUs, fewer than its platform's "
                  "when some are fused off (23 for a UHD 630 missing one); its i915 reports them "
                  "and its counters count them")
      ->check(CLI::PositiveNumber);
  dev->add_option("--sim-platform", opt->sim_platform,
                  "with --device sim: the simulated part: kblgt2 (Kaby Lake GT2, Gen9, the "
                  "default), tglgt2 (Tiger Lake GT2, Gen12, 96 EUs) or mtlgt2 (Meteor Lake, "
                  "Xe-LPG), each with its generation's OA registers, report formats and batch "
                  "commands; or lnl (Lunar Lake, Xe2), tglgt2-xe or mtlgt2-xe (those parts "
                  "bound to xe), simulated at xe's observation uapi: --access perf and an IGT "
                  "metric set")
      ->check(CLI::IsMember(std::vector<std::string>(mmio::sim_platform_names().begin(),
                                                     mmio::sim_platform_names().end())))
      ->capture_default_str();
  dev->add_flag("--sim-no-i915", opt->sim_no_i915,
                "with --device sim: the simulated device has no i915 DRM node, so its topology "
                "falls back to the platform table (rows flagged topology_from_table) and its "
                "timestamp frequency is read from its clock registers");

  auto* what = app.add_option_group("What to measure");
  what->add_option("--mode", opt->mode,
                   "kernel: one row per launch, launches serialised; app: one row for the whole "
                   "run, nothing serialised")
      ->check(CLI::IsMember({"kernel", "app"}))
      ->capture_default_str();
  what->add_option("-k,--kernel-name", opt->kernel_name,
                   "measure only launches of this kernel (NAME, or regex:RE for the whole name)");
  what->add_option("--launch-skip", opt->launch_skip,
                   "skip this many matching launches before measuring");
  what->add_option("--launch-count", opt->launch_count,
                   "measure at most this many matching launches; the rest run untouched");
  what->add_flag("--system-wide", opt->system_wide,
                 "sample the whole GPU for --duration, whatever runs on it (no program)");
  what->add_option("--duration", opt->duration, "with --system-wide: how long (10s, 500ms)");
  what->add_option("--interval", opt->interval,
                   "with --system-wide: one row per interval (100ms), a timeline");
  what->add_option("--min-window", opt->min_window,
                   "least measurement window a power figure needs (50ms, 1s); kernel_runner "
                   "repeats launches until it is covered")
      ->capture_default_str();
  what->add_option("--replay", opt->replay,
                   "kernel replay: run each measured launch N times (2–10000), or auto (until "
                   "--min-window is covered), restoring the buffers it writes before every further "
                   "pass so the program sees one run; rows are flagged replayed and show the "
                   "restore traffic (docs/attach.md). off: one pass. With several metric sets: "
                   "N passes per set (auto is refused)")
      ->capture_default_str();
  what->add_option("--replay-mode", opt->replay_mode,
                   "how several metric sets are counted: kernel (the default) runs each "
                   "measured launch once per set in one run of the program, restoring its "
                   "buffers and reprogramming the OA unit between passes; application runs the "
                   "program once per set (it must launch the same sequence every run). Both work "
                   "locally and through oaprofd. Either way each set's "
                   "rows go to -o's name with the set before the extension, and each launch's "
                   "rows are joined into -o's file (by kernel, its ordinal and sizes; "
                   "docs/metrics.md)")
      ->capture_default_str();
  what->add_option("--attribution", opt->attribution,
                   "how a launch's counters are taken: bracketed (snapshots around each launch, "
                   "which waits for the queue before and the kernel after it: exact, serialises "
                   "the program) or sampled (the counters read every --sample-period and each "
                   "launch given their growth over its OpenCL start and end: nothing waits, "
                   "overlapping kernels stay overlapped and say so, each row carries its error "
                   "bound). docs/attach.md compares them")
      ->check(CLI::IsMember({"bracketed", "sampled"}))
      ->capture_default_str();
  what->add_option("--sample-period", opt->sample_period,
                   "with --attribution sampled: how often the counters are read (100us to 100ms)")
      ->capture_default_str();
  what->add_option("--inject", opt->inject,
                   "how the program is intercepted: layer (OPENCL_LAYERS), preload (LD_PRELOAD, "
                   "for loaders without layers), or auto (layer where the loader supports it)")
      ->check(CLI::IsMember({"auto", "layer", "preload"}))
      ->capture_default_str();

  auto* energy = app.add_option_group("Energy", "RAPL energy and iGPU power");
  std::string energy_help = "energy backend: auto (sim on the simulated device, else the first of";
  for (const auto& b : power::energy_backends()) {
    if (b.automatic) energy_help += " " + std::string(b.name);
  }
  energy_help += " that works), or one of:";
  for (const auto& b : power::energy_backends()) energy_help += " " + std::string(b.name);
  energy_help +=
      " (sim is a model, refused beside a real GPU: only with --device sim; its rows "
      "are flagged energy_simulated)";
  energy->add_option("--energy", opt->energy, energy_help)->capture_default_str();
  energy
      ->add_option("--igpu-power", opt->igpu_power,
                   "headline GPU power formula: auto (gpu-pkg where the energy source is a "
                   "discrete GPU's own sensor, else pkg-pp0-dram), pkg-pp0-dram (P_PKG - P_PP0 "
                   "- P_DRAM, DRAM 0 where the part has none), pp1, pkg-pp0, gpu-pkg; JSON "
                   "carries all of them")
      ->capture_default_str();
  energy
      ->add_option("--idle-baseline", opt->idle_baseline,
                   "measure idle power this long before the run (DURATION or off), to report "
                   "dynamic power = total - idle")
      ->capture_default_str();
  energy
      ->add_option("--sysfs-root", opt->sysfs_root,
                   "where sysfs is: RAPL, the GPU's DRM nodes, kernel lockdown (for tests)")
      ->capture_default_str();

  auto* out = app.add_option_group("Output");
  out->add_option("-o,--csv", opt->csv_path,
                  "CSV file, one row per launch, written as the run goes (default: "
                  "oaprof-<program>.csv, oaprof-<program>-<host>-<rank>.csv in an MPI or Slurm "
                  "job). -o, --json and --trace expand %h (host), %p (pid), %r (the job's rank) "
                  "and %% (docs/cluster.md). Each row's validity is in its flags column "
                  "(interval_too_long, freq_changed, drain_failed, layer_error, energy_simulated, "
                  "metric_div_zero:SYMBOL, ...: docs/attach.md). Under sudo it is opened as the "
                  "user who ran sudo; a symbolic link is not followed. - or /dev/stdout: standard "
                  "output (the summary table then goes to stderr)");
  out->add_option("--json", opt->json_path,
                  "also write a JSON document (run metadata + the same rows), opened as -o is: in "
                  "a file, valid after every row; to a pipe, FIFO or terminal (/dev/stdout), one "
                  "valid document when the run ends; - or /dev/stdout as for -o");
  out->add_option(
      "--trace", opt->trace_path,
      "also write a Perfetto trace (FILE.pftrace: a track per OpenCL queue, a slice per "
      "kernel, counter tracks), written as the run goes; opened as -o is "
      "(docs/report.md)");
  out->add_flag("-q,--quiet", opt->quiet, "no summary table or progress");
  app.add_option("command", opt->command, "the program to profile and its arguments, after --");
  return [opt] { return run::run_profile(*opt); };
}

}  // namespace oaprof::tools
