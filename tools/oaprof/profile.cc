// The default action of oaprof: profile a program (`--mode kernel`, per launch; `--mode app`, one
// delta over the whole run) or the whole GPU (`--system-wide`). Wiring only: the device (gpu) or,
// without root, oaprofd's session (daemon/remote_source.h), the Session, its socket and samplers
// (daemon), the child with the interceptor (launch), and the reporters (report).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "daemon/child.h"
#include "daemon/daemon_paths.h"
#include "daemon/remote_source.h"
#include "daemon/row_writer.h"
#include "daemon/sampler.h"
#include "daemon/server.h"
#include "daemon/session.h"
#include "daemon/register_journal.h"
#include "daemon/root_paths.h"
#include "daemon/session_lock.h"
#include "daemon/state_dir.h"
#include "daemon/trusted_metrics.h"
#include "daemon/user_file.h"
#include "gpu/counter_source.h"
#include "gpu/device.h"
#include "launch/launch_filter.h"
#include "launch/loader.h"
#include "launch/replay_config.h"
#include "mmio/forcewake.h"
#include "mmio/signal_restore.h"
#include "mmio/sim_gpu.h"
#include "oa/accumulator.h"
#include "oa/builtin_metric_set.h"
#include "oa/topology.h"
#include "oa/report_format.h"
#include "power/energy_registry.h"
#include "power/energy_sampler.h"
#include "power/idle_baseline.h"
#include "power/sim_power.h"
#include "report/fd_ostream.h"
#include "report/reporter.h"
#include "report/row.h"
#include "tools/oaprof/commands.h"
#include "tools/oaprof/metric_files.h"

namespace oaprof::tools {
namespace {
namespace fs = std::filesystem;

std::atomic<pid_t> g_child{0};
std::atomic<bool> g_interrupted{false};

// Signals reach oaprof on its signal thread (mmio/signal_restore.h), never in the middle of
// writing a row. The first one sent to oaprof (kill, systemd, a batch system) goes on to the
// program, which decides how to end; a Ctrl-C from the terminal already reached the program
// through the process group, so it is not sent twice. A second signal ends the program with
// SIGKILL, for a program that ignores the first. Either way oaprof itself goes on: it writes
// everything measured and restores the GPU, so the outputs are complete. Without a program
// (--system-wide), a signal ends the sampling early.
void on_profile_signal(const siginfo_t& info, int count) {
  g_interrupted = true;
  const pid_t child = g_child.load();
  if (child <= 0) return;
  if (count == 1) {
    if (info.si_code != SI_KERNEL) ::kill(child, info.si_signo);
    return;
  }
  std::cerr << "oaprof: interrupted again: ending the program with SIGKILL; the rows measured "
               "so far are written and the GPU restored\n";
  ::kill(child, SIGKILL);
}

// Durations as the energy options read them (power::parse_duration_ns), with the option named.
std::chrono::milliseconds parse_duration(const std::string& option, const std::string& text) {
  try {
    return std::chrono::milliseconds(power::parse_duration_ns(text) / 1'000'000);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", option, e.what()));
  }
}

fs::path installed_library(const char* env, const char* file) {
  if (const char* p = std::getenv(env); p && *p) return p;
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path() / OAPROF_LIB_DIR_FROM_BIN / file;
}

struct ProfileOptions {
  std::string device_spec = "auto";
  std::string pci;  // --pci BDF: the same as --device BDF
  std::string daemon = "auto";
  std::string access = "mmio";
  std::string format_text = "101";
  std::string metric_set = std::string(oa::kBuiltinMetricSetSymbol);
  std::string metrics_xml;
  std::string forcewake = "auto";
  std::string debugfs_root = "/sys/kernel/debug";
  std::string render_node = "auto";
  std::string drm_card = "auto";
  int oa_exponent = 16;
  int sim_eus = 0;           // --sim-eus: the simulated part's EUs, some fused off
  bool sim_no_i915 = false;  // --sim-no-i915: the simulated device has no i915 to ask
  std::string sim_platform = "kblgt2";  // --sim-platform: which part --device sim simulates
  std::string csv_path;
  std::string json_path;
  std::string trace_path;  // --trace: a Perfetto trace
  std::string min_window = "50ms";
  std::string mode = "kernel";
  std::string inject = "auto";
  std::string replay = "off";
  std::string kernel_name;
  std::uint64_t launch_skip = 0;
  std::optional<std::uint64_t> launch_count;
  bool system_wide = false;
  std::string duration;
  std::string interval;
  std::string energy = "auto";
  std::string igpu_power = "pkg-pp0-dram";
  std::string idle_baseline = "250ms";
  std::string sysfs_root = "/sys";
  bool quiet = false;
  std::vector<std::string> command;
};

// The output files and reporters of one run.
struct Outputs {
  std::unique_ptr<report::FdOstream> csv;
  std::unique_ptr<report::FdOstream> json;
  std::unique_ptr<report::FdOstream> trace;
  std::unique_ptr<report::Reporter> files;  // CSV and JSON, written as rows arrive
  std::unique_ptr<report::Reporter> table;  // printed at the end
  std::atomic<std::uint64_t> rows{0};
};

// "-" and /dev/stdout name oaprof's standard output. /dev/stdout is a link (to
// /proc/self/fd/1), which the user files' O_NOFOLLOW would refuse; the descriptor behind it is the
// one the user gave oaprof, so it is used directly and no path is opened.
bool names_stdout(const std::string& path) { return path == "-" || path == "/dev/stdout"; }

// The files are opened as the user who ran sudo (daemon/user_file.h): root never creates,
// truncates or chowns a path the user names. Standard output (names_stdout) is a copy of
// descriptor 1; the summary table then goes to stderr, so that stdout carries the file alone.
int open_outputs(const ProfileOptions& o, const std::string& csv_path,
                 const std::optional<daemon::Credentials>& creds, Outputs& out) {
  const int on_stdout = int(names_stdout(csv_path)) + int(names_stdout(o.json_path)) +
                        int(names_stdout(o.trace_path));
  if (on_stdout > 1) {
    std::cerr << "oaprof: more than one of -o, --json and --trace names standard output, where "
                 "they would mix; send all but one to files\n";
    return kExitUsage;
  }
  std::vector<std::unique_ptr<report::Reporter>> files;
  auto open = [&](const std::string& path) -> std::unique_ptr<report::FdOstream> {
    if (names_stdout(path)) {
      const int fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
      if (fd >= 0) return std::make_unique<report::FdOstream>(fd);
      std::cerr << fmt::format("oaprof: cannot write {}: standard output: {}\n", path,
                               std::strerror(errno));
      return nullptr;
    }
    try {
      return std::make_unique<report::FdOstream>(
          daemon::open_user_file(path, daemon::UserFileAccess::kWrite, creds));
    } catch (const daemon::UserFileError& e) {
      std::cerr << "oaprof: " << e.what() << "\n";
      return nullptr;
    }
  };
  if (!(out.csv = open(csv_path))) return kExitOutput;
  files.push_back(report::make_csv_reporter(*out.csv));
  if (!o.json_path.empty()) {
    if (!(out.json = open(o.json_path))) return kExitOutput;
    files.push_back(report::make_json_reporter(*out.json));
  }
  if (!o.trace_path.empty()) {
    if (!(out.trace = open(o.trace_path))) return kExitOutput;
    files.push_back(report::make_perfetto_trace_reporter(*out.trace));
  }
  out.files = report::make_tee_reporter(std::move(files));
  out.table = report::make_table_reporter(on_stdout > 0 ? std::cerr : std::cout);
  return 0;
}

// Waits for the child, showing progress on a terminal; returns its wait status.
int wait_for_child(pid_t pid, bool progress, const std::atomic<std::uint64_t>& rows) {
  auto last_progress = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, progress ? WNOHANG : 0);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    if (progress) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(1)) {
        last_progress = std::chrono::steady_clock::now();
        std::cerr << fmt::format("\roaprof: {} launches measured", rows.load());
      }
    }
  }
  if (progress) std::cerr << "\r\033[K";
  return status;
}

int run_profile(const ProfileOptions& options);

// Says why a stopped sampler ended early; false when it did not.
bool sampling_failed(const daemon::Sampler& sampler) {
  if (sampler.failure().empty()) return false;
  std::cerr << fmt::format("oaprof: sampling ended early: {}; the last row covers what was read "
                           "until then and is flagged sampling_failed\n",
                           sampler.failure());
  return true;
}

// Samplers read well within the longest gap whose deltas stay exact on this device.
daemon::SamplerOptions sampler_options(const report::RunInfo& info) {
  daemon::SamplerOptions so;
  so.timestamp_hz = info.timestamp_hz;
  so.max_interval_ns = oa::max_safe_read_interval_ns(info.max_freq_mhz, info.eus, info.timestamp_hz);
  so.read_period = std::min(
      so.read_period, std::chrono::milliseconds(static_cast<std::int64_t>(so.max_interval_ns / 2e6)));
  return so;
}

// Under sudo the options that point root at files keep their defaults (daemon/root_paths.h).
void require_root_paths(const ProfileOptions& o, const std::string& device_spec,
                        const std::optional<daemon::Credentials>& creds) {
  const daemon::RootPathOption paths[] = {
      {"--sysfs-root", o.sysfs_root, "/sys"},
      {"--debugfs", o.debugfs_root, "/sys/kernel/debug"},
      {"--render-node", o.render_node, "auto", "/dev/dri/renderD"},
      {"--drm-card", o.drm_card, "auto", "/sys/class/drm/card"},
  };
  daemon::require_root_paths_under_sudo(paths, creds);
  daemon::require_no_register_file_under_sudo(device_spec, creds);
}

// Whether this run reaches the OA unit through oaprofd rather than opening the device itself.
bool through_daemon(const std::string& mode, const std::string& device_spec) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  return ::geteuid() != 0 && device_spec != "sim";
}

}  // namespace

Action add_profile_options(CLI::App& app) {
  auto opt = std::make_shared<ProfileOptions>();
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
                      std::string(daemon::kDefaultDaemonSocket))
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
                  "OA report format: counter-select code in binary (101) or decimal (5), or a "
                  "name (A32u40_A4u32_B8_C8); read for the device's generation")
      ->capture_default_str();
  dev->add_option("--metric-set", opt->metric_set,
                  "metric set to program and evaluate: Builtin (no mux programming, Gen8-11) or a "
                  "set of the platform's IGT file, e.g. ComputeBasic (`oaprof metrics list`)")
      ->capture_default_str();
  dev->add_option("--metrics-xml", opt->metrics_xml,
                  "IGT metric file to take the set from (default: searched, see `oaprof metrics`)");
  dev->add_option("--forcewake", opt->forcewake,
                  "keep the GPU awake: auto (debugfs, else registers), debugfs, registers, none")
      ->capture_default_str();
  dev->add_option("--debugfs", opt->debugfs_root, "debugfs root, for forcewake")->capture_default_str();
  dev->add_option("--render-node", opt->render_node,
                  "i915 render node for --access rpc and perf (auto: the device's own, "
                  "<sysfs>/bus/pci/devices/BDF/drm/renderDN)")
      ->capture_default_str();
  dev->add_option("--drm-card", opt->drm_card,
                  "the card's sysfs directory for --access perf (auto: the device's own, "
                  "<sysfs>/bus/pci/devices/BDF/drm/cardN)")
      ->capture_default_str();
  dev->add_option("--oa-exponent", opt->oa_exponent,
                  "i915 perf sampling period exponent for --access perf")
      ->check(CLI::Range(0, 31))
      ->capture_default_str();
  dev->add_option("--sim-eus", opt->sim_eus,
                  "with --device sim: the simulated part's enabled EUs, fewer than its platform's "
                  "when some are fused off (23 for a UHD 630 missing one); its i915 reports them "
                  "and its counters count them")
      ->check(CLI::PositiveNumber);
  dev->add_option("--sim-platform", opt->sim_platform,
                  "with --device sim: the simulated part: kblgt2 (Kaby Lake GT2, Gen9, the "
                  "default), tglgt2 (Tiger Lake GT2, Gen12, 96 EUs) or mtlgt2 (Meteor Lake, "
                  "Xe-LPG); each with its generation's OA registers, report formats and "
                  "batch commands")
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
                   "restore traffic (docs/attach.md). off: one pass")
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
  energy_help += " (sim is a model, refused beside a real GPU: only with --device sim; its rows "
                 "are flagged energy_simulated)";
  energy->add_option("--energy", opt->energy, energy_help)->capture_default_str();
  energy->add_option("--igpu-power", opt->igpu_power,
                     "headline iGPU power formula: pkg-pp0-dram (P_PKG - P_PP0 - P_DRAM, DRAM 0 "
                     "where the part has none), pp1, pkg-pp0; JSON carries all of them")
      ->capture_default_str();
  energy->add_option("--idle-baseline", opt->idle_baseline,
                     "measure idle power this long before the run (DURATION or off), to report "
                     "dynamic power = total - idle")
      ->capture_default_str();
  energy->add_option("--sysfs-root", opt->sysfs_root,
                     "where sysfs is: RAPL, the GPU's DRM nodes, kernel lockdown (for tests)")
      ->capture_default_str();

  auto* out = app.add_option_group("Output");
  out->add_option("-o,--csv", opt->csv_path,
                  "CSV file, one row per launch, written as the run goes (default: "
                  "oaprof-<program>.csv); each row's validity is in its flags column "
                  "(interval_too_long, freq_changed, drain_failed, layer_error, energy_simulated, "
                  "metric_div_zero:SYMBOL, ...: docs/attach.md). Under sudo it is opened as the "
                  "user who ran sudo; a symbolic link is not followed. - or /dev/stdout: standard "
                  "output (the summary table then goes to stderr)");
  out->add_option("--json", opt->json_path,
                  "also write a JSON document (run metadata + the same rows), opened as -o is: in "
                  "a file, valid after every row; to a pipe, FIFO or terminal (/dev/stdout), one "
                  "valid document when the run ends; - or /dev/stdout as for -o");
  out->add_option("--trace", opt->trace_path,
                  "also write a Perfetto trace (FILE.pftrace: a track per OpenCL queue, a slice per "
                  "kernel, counter tracks), written as the run goes; opened as -o is "
                  "(docs/report.md)");
  out->add_flag("-q,--quiet", opt->quiet, "no summary table or progress");
  app.add_option("command", opt->command, "the program to profile and its arguments, after --");
  return [opt] { return run_profile(*opt); };
}

namespace {

int run_profile(const ProfileOptions& options) {
  // Before any thread: SIGINT, SIGTERM, SIGHUP and SIGQUIT are taken by the signal thread, so
  // that what a signal does (forward it, finish the outputs, restore the GPU) is ordinary code.
  // Only the commands that may hold registers start it; those that drop to the sudo user
  // (become_sudo_user) must drop while the process still has one thread.
  mmio::SignalThread::start();
  const auto& command = options.command;
  std::chrono::milliseconds min_window{}, duration{};
  std::optional<std::chrono::milliseconds> interval;
  launch::LaunchFilter filter;
  std::string device_spec;
  try {
    device_spec = gpu::device_spec_with_pci(options.device_spec, options.pci);
    min_window = parse_duration("--min-window", options.min_window);
    if (options.system_wide) {
      if (!command.empty()) {
        throw std::invalid_argument("--system-wide samples the whole GPU: give no program");
      }
      if (options.duration.empty()) {
        throw std::invalid_argument("--system-wide needs --duration, e.g. --duration 10s");
      }
      duration = parse_duration("--duration", options.duration);
      if (!options.interval.empty()) interval = parse_duration("--interval", options.interval);
      if (interval && interval->count() <= 0) throw std::invalid_argument("--interval must be > 0");
    } else {
      if (command.empty()) {
        throw std::invalid_argument(
            "name the program to profile after --, e.g. oaprof -- kernel_runner mad_vect4 "
            "(or use --system-wide --duration 10s)");
      }
      if (!options.duration.empty() || !options.interval.empty()) {
        throw std::invalid_argument("--duration and --interval go with --system-wide");
      }
    }
    if (options.replay != "off") {
      std::string warning;
      (void)launch::parse_replay_config(options.replay.c_str(), nullptr, warning);
      if (!warning.empty()) throw std::invalid_argument("--replay: " + warning);
      if (options.mode != "kernel" || options.system_wide) {
        throw std::invalid_argument("--replay goes with --mode kernel");
      }
    }
    filter = launch::LaunchFilter(options.kernel_name, options.launch_skip, options.launch_count);
    (void)power::parse_igpu_formula(options.igpu_power);
    (void)power::parse_idle_baseline(options.idle_baseline);
  } catch (const std::invalid_argument& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return kExitUsage;
  }
  const std::string mode = options.system_wide ? "system-wide" : options.mode;
  const std::string csv_path =
      !options.csv_path.empty() ? options.csv_path
      : options.system_wide     ? std::string("oaprof-system.csv")
                                : fmt::format("oaprof-{}.csv", fs::path(command[0]).filename().string());

  const auto env = daemon::process_environment();
  std::optional<daemon::Credentials> creds;
  // A local run's hold on the OA unit, declared before the device so that they outlive it: the
  // device closes (forcewake let go), then the state file goes, then the lock.
  std::optional<daemon::SessionLock> local_lock;
  std::unique_ptr<daemon::SessionJournal> local_journal;
  gpu::Device device;  // opened here only without the daemon
  std::shared_ptr<daemon::DaemonClient> client;
  std::optional<oa::wire::Opened> opened;
  oa::Platform platform;  // with the device's own topology and timestamp frequency
  oa::DeviceFacts facts;  // and where they came from
  std::string device_label, device_detail;
  bool simulated = false;
  std::unique_ptr<gpu::CounterSource> source;
  std::unique_ptr<oa::MetricSet> metrics;
  oa::ReportFormat format{};
  // Before the session starts only the device has written registers (forcewake), and it puts
  // them back as it closes: the journal's state file may go with it.
  const auto device_only_touched = [&](int exit_code) {
    if (local_journal) local_journal->mark_restored();
    return exit_code;
  };

  try {
    creds = daemon::credentials_from_sudo(env, ::geteuid());
    require_root_paths(options, device_spec, creds);
    // Read from the environment once, here, whatever the device: under sudo it is the user's.
    const fs::path state_dir = daemon::state_dir_from(env, creds);
    if (through_daemon(options.daemon, device_spec)) {
      client = std::make_shared<daemon::DaemonClient>(daemon::daemon_socket_path());
      oa::wire::Open request;
      request.pid = static_cast<std::uint32_t>(::getpid());
      request.device = device_spec;
      request.access = options.access;
      request.format = options.format_text;
      request.metric_set = options.metric_set;
      // The daemon resolves paths from its own working directory, not ours.
      request.metrics_xml =
          options.metrics_xml.empty() ? std::string() : fs::absolute(options.metrics_xml).string();
      request.energy = options.energy;
      opened = client->open(request);
      facts = opened->facts;
      platform = oa::apply_facts(opened->simulated
                                     ? oa::simulated_platform()
                                     : oa::require_platform_for_pci_id(opened->pci_id),
                                 facts);
      format = oa::parse_format(opened->format, platform.gen);
      source = daemon::make_remote_counter_source(client, format, opened->simulated);
      // The daemon programmed the set; the same file gives its equations here.
      metrics = std::make_unique<oa::MetricSet>(
          load_metric_set(platform, opened->metric_set, opened->metrics_file));
      device_label = opened->label;
      device_detail = opened->detail + " via oaprofd";
      simulated = opened->simulated;
    } else {
      // Refused before the device is touched (oaprofd asks the same of its own device).
      power::check_energy_backend_for_device(options.energy, gpu::spec_is_simulated(device_spec),
                                             "--device " + device_spec);
      gpu::DeviceOptions dopt;
      dopt.spec = device_spec;
      dopt.forcewake.mode = mmio::parse_forcewake_mode(options.forcewake);
      dopt.forcewake.debugfs_root = options.debugfs_root;
      dopt.sysfs_root = options.sysfs_root;
      dopt.map_registers = gpu::access_maps_registers(options.access);  // perf: no BAR
      dopt.render_node = options.render_node;
      dopt.drm_card_sysfs = options.drm_card;
      dopt.perf_period_exponent = options.oa_exponent;
      dopt.sim.eus = options.sim_eus;
      dopt.sim.i915 = !options.sim_no_i915;
      dopt.sim.platform = mmio::sim_platform_by_name(options.sim_platform);
      // Everything but the in-process simulator is shared with other runs and oaprofd: take the
      // unit as oaprofd does, under its lock and with its journal, so that two runs never
      // program it at once and a run killed with SIGKILL leaves what the next one restores.
      if (device_spec != "sim") {
        daemon::prepare_state_dir(state_dir);
        const std::string holder =
            daemon::holder_text(creds ? creds->uid : ::getuid(), ::getpid());
        std::string busy;
        local_lock = daemon::SessionLock::try_acquire(state_dir / "session.lock", holder, &busy);
        if (!local_lock) {
          throw std::runtime_error(fmt::format(
              "busy: the OA unit is held by {}; wait for that run to end", busy));
        }
        if (auto done = daemon::restore_state_file(state_dir / "state", dopt)) {
          std::cerr << "oaprof: " << *done << "\n";
        }
        local_journal = std::make_unique<daemon::SessionJournal>(
            state_dir / "state", daemon::StateContents{device_spec, {}, holder, {}});
        dopt.wrap_mmio = [journal = local_journal.get()](std::unique_ptr<mmio::Mmio> inner) {
          return journal->wrap(std::move(inner));
        };
      }
      device = gpu::open_device(dopt);
      platform = device.platform;
      facts = device.facts;
      device_label = device.label();
      device_detail = device.mmio->describe();
      simulated = device.simulated();
      format = oa::parse_format(options.format_text, platform.gen);
      source = gpu::make_counter_source(options.access, device);
      // A file the user names is read as the user (daemon/user_file.h).
      metrics = std::make_unique<oa::MetricSet>(
          load_metric_set(platform, options.metric_set, options.metrics_xml, creds));
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return device_only_touched(kExitUsage);
  } catch (const std::exception& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return device_only_touched(kExitSetup);
  }

  // Energy: a missing source is not fatal; rows then carry the reason instead of figures.
  std::unique_ptr<power::EnergySource> energy;
  std::string energy_reason;
  power::SimEnergySource* sim_energy = nullptr;
  if (client) {
    energy = daemon::make_remote_energy_source(client, *opened);
    energy_reason = opened->energy_reason;
  } else try {
    power::EnergyRoots roots;
    roots.sysfs = options.sysfs_root;
    const std::string name =
        options.energy == "auto" && simulated ? std::string("sim") : options.energy;
    power::EnergyChoice choice = power::choose_energy_source(name, roots);
    energy_reason = choice.reason;
    if (choice.source) {
      sim_energy = dynamic_cast<power::SimEnergySource*>(choice.source.get());
      // Read often enough in the background that no RAPL counter wraps twice unseen.
      energy = std::make_unique<power::EnergySampler>(std::move(choice.source));
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return device_only_touched(kExitUsage);
  }
  if (!energy && !options.quiet) std::cerr << "oaprof: no energy figures: " << energy_reason << "\n";

  Outputs out;
  if (int rc = open_outputs(options, csv_path, creds, out); rc != 0) {
    return device_only_touched(rc);
  }
  report::RunInfo info;
  info.oaprof_version = OAPROF_VERSION;
  info.mode = mode;
  info.device = device_label;
  info.device_detail = device_detail;
  info.platform = std::string(platform.metrics_file);
  info.format = std::string(oa::layout_of(format).name);
  info.access = options.access;
  info.eus = platform.eus;
  info.facts = facts;
  info.max_freq_mhz = platform.max_freq_mhz;
  info.min_freq_mhz = platform.min_freq_mhz;
  if (!client) {
    try {
      info.start_freq_mhz = gpu::read_gpu_freq_mhz(device);
    } catch (const std::exception&) {
      // Unknown, as the JSON then says; the counters do not depend on it.
    }
  }
  info.timestamp_hz = platform.timestamp_hz;
  info.command = command;
  info.energy_backend = energy ? std::string(energy->name()) : std::string();
  info.energy_simulated = energy && power::is_simulated_energy_backend(energy->name());
  info.metric_set = metrics->symbol();
  info.metrics = metrics.get();
  info.device_variables = oa::device_variables(platform, facts);
  info.energy_options.min_window_ns = static_cast<std::uint64_t>(min_window.count()) * 1'000'000;
  info.energy_options.formula = power::parse_igpu_formula(options.igpu_power);
  if (energy) {
    if (const auto idle_ns = power::parse_idle_baseline(options.idle_baseline)) {
      if (!options.quiet) {
        std::cerr << fmt::format("oaprof: measuring idle power for {} ms\n", *idle_ns / 1'000'000);
      }
      try {
        info.energy_options.idle = power::measure_idle_baseline(*energy, *idle_ns);
      } catch (const std::exception& e) {
        std::cerr << "oaprof: no idle baseline: " << e.what() << "\n";
      }
    }
  }
  out.files->begin(info);
  out.table->begin(info);
  // Rows are formatted and written on a thread of their own (RowWriter): the thread answering the
  // program's snapshots never waits for a file.
  const std::string no_energy_reason =
      energy ? "the energy could not be read for this window" : energy_reason;
  auto write_row = [&](const oa::LaunchRecord& r, const power::EnergyReading* begin,
                       const power::EnergyReading* end) {
    const report::RowEnergy e = report::row_energy(r, begin, end, info, no_energy_reason);
    out.files->add(r, e);
    out.table->add(r, e);
    out.rows.fetch_add(1, std::memory_order_relaxed);
  };
  daemon::RowWriter rows(write_row, [&] { out.files->flush(); });
  daemon::Session session(*source, format, rows.sink(),
                          daemon::oa_config_for(*metrics, platform, facts));
  session.set_energy_source(energy.get());
  // Long launches stay exact: the session reads the counters while a pass is open.
  session.set_launch_reads(
      daemon::launch_read_options(info.timestamp_hz, info.max_freq_mhz, info.eus));
  if (sim_energy != nullptr) {
    // The simulated RAPL tree draws GPU power while the simulated GPU is busy.
    session.set_busy_listener([sim_energy](bool busy) { sim_energy->simulator().set_gpu_active(busy); });
  }
  try {
    session.start();
  } catch (const std::exception& e) {
    std::cerr << "oaprof: cannot program the OA unit: " << e.what() << "\n";
    // Programming puts back what it wrote before it throws; the device does the rest as it closes.
    return device_only_touched(kExitSetup);
  }

  // From here to the last output written, a signal never ends oaprof (on_profile_signal).
  const mmio::ScopedSignalHandler signals(&on_profile_signal);

  // A session that could not be ended cleanly (oaprofd gone, a failed restore) does not cost the
  // rows: they are on disk already, the summary is still printed, and the exit status says so.
  bool session_broken = false;
  auto finish = [&](int exit_code) {
    bool restored = true;
    try {
      session.stop();  // restores every register the session touched
    } catch (const std::exception& e) {
      session_broken = true;
      restored = false;
      if (client) {
        std::cerr << fmt::format(
            "oaprof: warning: the session with oaprofd could not be closed: {}; oaprofd puts the "
            "registers back itself when a client disconnects, or when it starts again after a "
            "crash\n",
            e.what());
      } else {
        std::cerr << fmt::format("oaprof: warning: restoring the OA unit failed: {}; writing "
                                 "the journal back\n",
                                 e.what());
        try {
          if (local_journal) {
            local_journal->write_back();
            restored = true;
          }
        } catch (const std::exception& again) {
          std::cerr << fmt::format("oaprof: writing the journal back failed too: {}\n",
                                   again.what());
        }
      }
    }
    if (local_journal) {
      if (restored) {
        local_journal->mark_restored();
      } else if (local_journal->has_state_file()) {
        std::cerr << fmt::format("oaprof: {} is kept: the next oaprof or oaprofd start restores "
                                 "the registers it lists\n",
                                 local_journal->state_file().string());
      }
    }
    if (session_broken && exit_code == 0) exit_code = kExitSession;
    try {
      rows.drain();
    } catch (const std::exception& e) {
      std::cerr << "oaprof: " << e.what() << "\n";
      if (exit_code == 0) exit_code = kExitOutput;
    }
    if (const std::string lost = gpu::perf_stream_loss_warning(session.perf_stream_counts());
        !lost.empty()) {
      std::cerr << "oaprof: warning: " << lost << "\n";  // even with -q: it is about the data
    }
    out.files->end();
    if (!options.quiet) {
      out.table->end();
      std::cerr << fmt::format(
          "oaprof: {} rows written to {}{}{}\n", out.rows.load(), csv_path,
          options.json_path.empty() ? "" : " and " + options.json_path,
          session.launches_dropped()
              ? fmt::format(" ({} incomplete launches dropped)", session.launches_dropped())
              : "");
    }
    return exit_code;
  };

  if (options.system_wide) {
    if (!options.quiet) {
      std::cerr << fmt::format("oaprof: sampling {} for {} ms{}, writing {}\n", info.device_detail,
                               duration.count(),
                               interval ? fmt::format(", a row every {} ms", interval->count()) : "",
                               csv_path);
    }
    daemon::SamplerOptions so = sampler_options(info);
    so.row_interval = interval;
    so.label = interval ? "(interval)" : "(system)";
    daemon::Sampler sampler(session, so);
    try {
      sampler.start();
      const auto end = std::chrono::steady_clock::now() + duration;
      while (!g_interrupted && std::chrono::steady_clock::now() < end) {
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
            std::chrono::milliseconds(50), end - std::chrono::steady_clock::now()));
      }
      sampler.stop();
    } catch (const std::exception& e) {
      std::cerr << "oaprof: sampling failed: " << e.what() << "\n";
      return finish(kExitSetup);
    }
    if (sampling_failed(sampler)) return finish(kExitSession);
    return finish(0);
  }

  // The program's processes reach this run at an abstract address: no file, so no directory in
  // the user's $TMPDIR for root to create, bind in or chown. Who may connect is SO_PEERCRED's.
  std::vector<uid_t> allowed{::getuid()};
  if (creds) allowed.push_back(creds->uid);

  daemon::ChildSpec child;
  child.argv = command;
  child.credentials = creds;
  child.set_env["OAPROF_MIN_TIME_MS"] = std::to_string(min_window.count());
  // Always set, so a value inherited from the user's environment cannot replay behind --replay.
  child.set_env["OAPROF_REPLAY"] = options.replay;
  std::unique_ptr<daemon::Server> server;
  std::optional<daemon::Sampler> app_sampler;
  if (mode == "kernel") {
    try {
      server = std::make_unique<daemon::Server>(daemon::private_socket_address(), session, allowed);
      server->start();
    } catch (const std::exception& e) {
      std::cerr << "oaprof: " << e.what() << "\n";
      return finish(kExitSetup);
    }
    child.set_env["OAPROF_SOCKET"] = server->path();
    for (const auto& [k, v] : filter.to_env()) child.set_env[k] = v;
    std::string inject = options.inject;
    if (inject == "auto") {
      const launch::LoaderInfo loader = launch::detect_loader();
      inject = loader.supports_layers ? "layer" : "preload";
      if (!options.quiet) std::cerr << fmt::format("oaprof: OpenCL loader: {}\n", loader.note);
    }
    const bool layer = inject == "layer";
    const fs::path lib = layer ? installed_library("OAPROF_LAYER", "liboaprof_layer.so")
                               : installed_library("OAPROF_PRELOAD", "liboaprof_preload.so");
    if (!fs::exists(lib)) {
      std::cerr << fmt::format("oaprof: {} is missing; reinstall oaprof\n", lib.string());
      server.reset();
      return finish(kExitSetup);
    }
    // Ours goes first, so it sees the program's calls before any other layer or preload the
    // user has.
    const char* var = layer ? "OPENCL_LAYERS" : "LD_PRELOAD";
    auto existing = env.find(var);
    child.set_env[var] = lib.string() + (existing != env.end() && !existing->second.empty()
                                             ? ":" + existing->second
                                             : "");
  } else {
    daemon::SamplerOptions so = sampler_options(info);
    so.label = "(application)";
    app_sampler.emplace(session, so);
  }

  int exit_code = 0;
  try {
    if (app_sampler) {
      session.set_busy(true);
      app_sampler->start();
    }
    const pid_t pid = daemon::spawn_child(child);
    g_child = pid;
    if (!options.quiet) {
      std::cerr << fmt::format("oaprof: profiling '{}' ({} mode) on {} ({}), writing {}\n",
                               command[0], mode, info.device, info.device_detail, csv_path);
    }
    const int status =
        wait_for_child(pid, !options.quiet && ::isatty(STDERR_FILENO) && mode == "kernel", out.rows);
    g_child = 0;
    exit_code = daemon::shell_status(status);
  } catch (const std::exception& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    exit_code = kExitCannotRun;
  }
  const int program_status = exit_code;
  if (app_sampler) {
    app_sampler->stop();
    if (sampling_failed(*app_sampler) && exit_code == 0) exit_code = kExitSession;
    try {
      session.set_busy(false);
    } catch (const std::exception&) {
      // The same broken session; finish() reports it.
    }
  }
  if (server) server->stop();
  server.reset();
  exit_code = finish(exit_code);
  if (!options.quiet && program_status != 0 && program_status != kExitCannotRun) {
    std::cerr << fmt::format("oaprof: '{}' exited with status {}\n", command[0], program_status);
  }
  return exit_code;
}

}  // namespace
}  // namespace oaprof::tools
