// The profile run: a program (`--mode kernel`, per launch; `--mode app`, one delta over the whole
// run) or the whole GPU (`--system-wide`). The options become a ProfilePlan (profile_plan.h),
// checked before anything is opened; then the run is set up (the device or, without root,
// oaprofd's session; energy; outputs), run (the program with the interceptor, or the samplers),
// and finished (restore, rows drained, summary), each a step here.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "attach/layer_config.h"
#include "attach/loader.h"
#include "base/errors.h"
#include "bench/known_work.h"
#include "gpu/counter_source.h"
#include "gpu/device.h"
#include "ipc/wire.h"
#include "mmio/signal_restore.h"
#include "mmio/sim_gpu.h"
#include "oa/accumulator.h"
#include "oa/delta.h"
#include "oa/metric_cover.h"
#include "oa/report_format.h"
#include "power/energy_registry.h"
#include "power/energy_sampler.h"
#include "power/idle_baseline.h"
#include "power/sim_power.h"
#include "report/csv.h"
#include "report/fd_ostream.h"
#include "report/pass_merge.h"
#include "report/reporter.h"
#include "report/row.h"
#include "run/energy_model_file.h"
#include "run/opencl_loader.h"
#include "run/profile_plan.h"
#include "run/profile_run.h"
#include "run/selftest_result.h"
#include "session/child.h"
#include "session/daemon_paths.h"
#include "session/gpu_access.h"
#include "session/metric_source.h"
#include "session/register_journal.h"
#include "session/remote_source.h"
#include "session/row_writer.h"
#include "session/sampler.h"
#include "session/server.h"
#include "session/session.h"
#include "session/session_lock.h"
#include "session/state_dir.h"
#include "session/trusted_metrics.h"
#include "session/user_file.h"

namespace oaprof::run {
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

fs::path installed_library(const char* env, const char* file) {
  if (const char* p = std::getenv(env); p && *p) return p;
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path() / OAPROF_LIB_DIR_FROM_BIN / file;
}

// oaprof's library, which the program will load, checked as the user the program runs as: the
// path may come from the user's environment (OAPROF_LAYER, OAPROF_PRELOAD, where sudoers keeps
// them), and root must tell no more about it than the user could learn. Throws
// std::runtime_error saying why it cannot be read.
void require_readable(const fs::path& lib, const std::optional<session::Credentials>& as) {
  try {
    ::close(session::open_user_file(lib.string(), session::UserFileAccess::kRead, as));
  } catch (const session::UserFileError& e) {
    throw std::runtime_error(fmt::format("oaprof's library: {}; reinstall oaprof", e.what()));
  }
}

}  // namespace

namespace {

// The run ends before its session started: `exit_code`, after the access let go of what it took.
int untouched(session::GpuAccess& gpu, int exit_code) {
  gpu.untouched();
  return exit_code;
}

// What the run asks of the GPU, from the plan.
session::GpuRequest gpu_request(const ProfilePlan& plan) {
  session::GpuRequest request;
  request.device = plan.device;
  request.access = plan.access;
  request.format = plan.format_text;
  request.metric_set = plan.metric_set;
  request.metrics_xml = plan.metrics_xml;
  if (kernel_replay_across_sets(plan)) request.pass_sets = plan.pass_sets;
  request.energy = plan.energy;
  request.creds = plan.creds;
  request.state_dir = plan.state_dir;
  request.holder_uid = plan.creds ? plan.creds->uid : ::getuid();
  return request;
}

// The GPU, taken here or through oaprofd (decided once, in the plan): 0, or the exit status
// after saying why on stderr.
int open_gpu(const ProfilePlan& plan, std::unique_ptr<session::GpuAccess>& gpu) {
  try {
    gpu = session::open_gpu_access(gpu_request(plan), plan.through_daemon);
    return 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return base::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return base::kExitSetup;
  }
}

// --energy-model of another generation than the device: 0, or kExitUsage after saying why.
int check_energy_model(const ProfilePlan& plan, const session::GpuAccess& gpu) {
  if (!plan.energy_model) return 0;
  try {
    require_model_fits(*plan.energy_model, gpu.platform, plan.energy_model_path);
    return 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return base::kExitUsage;
  }
}

// 0, or the exit status after saying why on stderr.
int open_energy(const ProfilePlan& plan, session::GpuAccess& gpu, session::EnergySetup& energy) {
  try {
    energy = gpu.open_energy();
  } catch (const std::invalid_argument& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return base::kExitUsage;
  }
  if (!energy.source && !plan.quiet) {
    std::cerr << "oaprof: no energy figures: " << energy.reason << "\n";
  }
  return 0;
}

// The output files and reporters of one run.
struct Outputs {
  std::unique_ptr<report::FdOstream> csv;
  std::unique_ptr<report::FdOstream> json;
  std::unique_ptr<report::FdOstream> trace;
  std::unique_ptr<report::Reporter> files;  // CSV, JSON and trace, written as rows arrive
  std::unique_ptr<report::Reporter> table;  // printed at the end
  std::atomic<std::uint64_t> rows{0};
};

// One output: standard output (names_stdout) is a copy of descriptor 1; a file is opened as the
// user who ran sudo (session/user_file.h), so root never creates, truncates or chowns a path the
// user names. Null after saying why.
std::unique_ptr<report::FdOstream> open_output(const std::string& path,
                                               const std::optional<session::Credentials>& creds) {
  if (names_stdout(path)) {
    const int fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd >= 0) return std::make_unique<report::FdOstream>(fd);
    std::cerr << fmt::format("oaprof: cannot write {}: standard output: {}\n", path,
                             std::strerror(errno));
    return nullptr;
  }
  try {
    return std::make_unique<report::FdOstream>(
        session::open_user_file(path, session::UserFileAccess::kWrite, creds));
  } catch (const session::UserFileError& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return nullptr;
  }
}

// 0, or base::kExitOutput after saying why.
int open_outputs(const ProfilePlan& plan, Outputs& out) {
  const OutputPlan& o = plan.outputs;
  std::vector<std::unique_ptr<report::Reporter>> files;
  if (!o.csv.empty()) {
    if (!(out.csv = open_output(o.csv, plan.creds))) return base::kExitOutput;
    files.push_back(report::make_csv_reporter(*out.csv));
  }
  if (!o.json.empty()) {
    if (!(out.json = open_output(o.json, plan.creds))) return base::kExitOutput;
    files.push_back(report::make_json_reporter(*out.json));
  }
  if (!o.trace.empty()) {
    if (!(out.trace = open_output(o.trace, plan.creds))) return base::kExitOutput;
    files.push_back(report::make_perfetto_trace_reporter(*out.trace));
  }
  out.files = report::make_tee_reporter(std::move(files));
  // stderr: the program's standard output must read as it would without oaprof (`-f md5 -`).
  out.table = report::make_table_reporter(std::cerr);
  return 0;
}

// The run's metadata, as the outputs' headers carry it.
report::RunInfo make_run_info(const ProfilePlan& plan, session::GpuAccess& gpu,
                              const session::EnergySetup& energy) {
  report::RunInfo info;
  info.oaprof_version = OAPROF_VERSION;
  info.mode = run_mode_name(plan.mode);
  info.attribution = attribution_name(plan);
  info.device = gpu.label;
  info.device_detail = gpu.detail;
  info.platform = std::string(gpu.platform.metrics_file);
  info.format = std::string(oa::layout_of(gpu.format).name);
  info.access = plan.access;
  info.driver = std::string(oa::kernel_driver_name(gpu.platform.driver));
  info.eus = gpu.platform.eus;
  info.facts = gpu.facts;
  info.max_freq_mhz = gpu.platform.max_freq_mhz;
  info.min_freq_mhz = gpu.platform.min_freq_mhz;
  if (const auto mhz = gpu.start_freq_mhz()) info.start_freq_mhz = *mhz;
  info.timestamp_hz = gpu.platform.timestamp_hz;
  info.command = plan.command;
  info.host = plan.who.host;
  info.rank = plan.who.rank.value_or("");
  info.energy_backend = energy.source ? std::string(energy.source->name()) : std::string();
  info.energy_simulated =
      energy.source && power::is_simulated_energy_backend(energy.source->name());
  info.metric_set = gpu.metrics->symbol();
  info.metrics = gpu.metrics.get();
  info.device_variables = oa::device_variables(gpu.platform, gpu.facts);
  info.energy_options.min_window_ns =
      static_cast<std::uint64_t>(plan.min_window.count()) * 1'000'000;
  info.energy_options.formula = plan.igpu_formula.value_or(power::default_igpu_formula(
      energy.source ? energy.source->domains() : std::vector<power::Domain>{}));
  return info;
}

// The device's last `oaprof selftest`, kept in the state directory: the failed checks its rows
// are flagged by (report/selftest_flags.h), and why a result was ignored, on stderr.
void read_selftest_result(const ProfilePlan& plan, const session::GpuAccess& gpu,
                          report::RunInfo& info) {
  namespace st = selftest;
  const std::string address = gpu.simulated ? "" : plan.device.spec.resolved().str();
  const st::ResultIdentity identity{
      st::device_key(gpu.simulated, gpu.platform, address), st::platform_label(gpu.platform),
      st::driver_description(gpu.simulated, gpu.platform, plan.device.sysfs_root, address),
      st::kernel_release(), OAPROF_VERSION};
  st::KeptResult kept = st::read_kept_result(plan.state_dir, identity);
  info.selftest_failed = std::move(kept.failed);
  if (plan.quiet) return;
  for (const std::string& note : kept.notes) std::cerr << "oaprof: " << note << "\n";
}

void measure_idle(const ProfilePlan& plan, power::EnergySource& energy, report::RunInfo& info) {
  if (!plan.idle_baseline_ns) return;
  if (!plan.quiet) {
    std::cerr << fmt::format("oaprof: measuring idle power for {} ms\n",
                             *plan.idle_baseline_ns / 1'000'000);
  }
  try {
    info.energy_options.idle = power::measure_idle_baseline(energy, *plan.idle_baseline_ns);
  } catch (const std::exception& e) {
    std::cerr << "oaprof: no idle baseline: " << e.what() << "\n";
  }
}

// Samplers read well within the longest gap whose deltas stay exact on this device.
session::SamplerOptions sampler_options(const report::RunInfo& info) {
  session::SamplerOptions so;
  so.timestamp_hz = info.timestamp_hz;
  so.max_interval_ns =
      oa::max_safe_read_interval_ns(info.max_freq_mhz, info.eus, info.timestamp_hz);
  so.read_period =
      std::min(so.read_period,
               std::chrono::milliseconds(static_cast<std::int64_t>(so.max_interval_ns / 2e6)));
  return so;
}

// Says why a stopped sampler ended early; false when it did not.
bool sampling_failed(const session::Sampler& sampler) {
  if (sampler.failure().empty()) return false;
  std::cerr << fmt::format(
      "oaprof: sampling ended early: {}; the last row covers what was read "
      "until then and is flagged sampling_failed\n",
      sampler.failure());
  return true;
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

// "X", "X and Y", "X, Y and Z": the files a run wrote.
std::string output_names(const OutputPlan& o) {
  std::vector<std::string> names{o.csv};
  if (!o.json.empty()) names.push_back(o.json);
  if (!o.trace.empty()) names.push_back(o.trace);
  std::string text = names[0];
  for (std::size_t i = 1; i < names.size(); ++i) {
    text += (i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return text;
}

// What oaprof tells its layer in the program: the run's window, replay and attribution always
// (so values inherited from the user's environment cannot replay behind --replay), and the
// session's address and launch selection in kernel mode, and on a simulated device that the
// 'before' snapshots name their kernel (the simulator counts its known work). The one place the
// contract is written.
attach::LayerConfig layer_config(const ProfilePlan& plan, const session::Server* server,
                                 bool simulated) {
  attach::LayerConfig config;
  config.min_window = plan.min_window;
  std::string unused;  // the plan has checked --replay
  config.replay = attach::parse_replay_config(replay_variable(plan).c_str(), unused);
  config.attribution = layer_attribution(plan);
  if (server == nullptr) return config;
  config.socket = server->path();
  config.kernel_name = plan.filter.name();
  config.launch_skip = plan.filter.skip();
  config.launch_count = plan.filter.count();
  config.work_hints = simulated;
  return config;
}

// Puts `lib` first in the colon-separated list `var` of the program's environment: ours goes
// first, so it sees the program's calls before any other layer or preload the user has.
void prepend_library(session::ChildSpec& child, const char* var, const std::string& lib) {
  std::string rest;
  if (auto set = child.set_env.find(var); set != child.set_env.end()) {
    rest = set->second;
  } else {
    const auto env = session::process_environment();
    if (auto it = env.find(var); it != env.end()) rest = it->second;
  }
  child.set_env[var] = lib + (rest.empty() ? "" : ":" + rest);
}

// Level Zero's way in (docs/level-zero.md): "layer" (the loader's tracing layer, which oaprof
// turns on with ZE_ENABLE_TRACING_LAYER) or "preload". auto: the tracing layer where the dynamic
// linker finds it as the loader loads it (by name, libze_tracing_layer.so.1).
std::string level_zero_way(const ProfilePlan& plan, const std::string& search) {
  if (plan.inject != "auto") return plan.inject;
  const std::optional<std::string> tracing =
      find_library_file("libze_tracing_layer.so.1", search, plan.creds);
  if (!plan.quiet) {
    std::cerr << (tracing ? fmt::format("oaprof: Level Zero: the loader's tracing layer ({})\n",
                                        *tracing)
                          : std::string("oaprof: Level Zero: no tracing layer "
                                        "(libze_tracing_layer.so.1); preloading instead\n"));
  }
  return tracing ? "layer" : "preload";
}

// The Level Zero library (always preloaded: both ways in start at the program's zeInit) and,
// under --device sim, the simulated driver for the loader (ZE_ENABLE_ALT_DRIVERS) unless the
// user named drivers.
void add_level_zero(const ProfilePlan& plan, session::ChildSpec& child, const std::string& search) {
  const std::string way = level_zero_way(plan, search);
  const fs::path lib = way == "layer"
                           ? installed_library("OAPROF_ZE_LAYER", "liboaprof_ze_layer.so")
                           : installed_library("OAPROF_ZE_PRELOAD", "liboaprof_ze_preload.so");
  std::error_code ec;
  if (!fs::exists(lib, ec)) {
    if (!plan.quiet) std::cerr << "oaprof: this oaprof was built without Level Zero support\n";
    return;
  }
  require_readable(lib, plan.creds);
  prepend_library(child, "LD_PRELOAD", lib.string());
  if (way == "layer") child.set_env["ZE_ENABLE_TRACING_LAYER"] = "1";
  const auto env = session::process_environment();
  if (!plan.device.spec.simulated() || env.count("ZE_ENABLE_ALT_DRIVERS") > 0) return;
  const fs::path driver = installed_library("OAPROF_ZE_SIM", "liboaprof_ze_sim.so");
  if (fs::exists(driver, ec)) child.set_env["ZE_ENABLE_ALT_DRIVERS"] = driver.string();
}

// The program's environment: the interceptors (OpenCL: layer or preload; Level Zero: its
// library) and the layer's configuration; `way_in` gets OpenCL's way in ("layer" or
// "preload"). Throws std::runtime_error when oaprof's own library is missing.
session::ChildSpec program_spec(const ProfilePlan& plan, const session::Server* server,
                                bool simulated, std::string& way_in) {
  session::ChildSpec child;
  child.argv = plan.command;
  child.credentials = plan.creds;
  child.stdout_fd = child.stderr_fd = plan.program_output_fd;
  for (const auto& [k, v] : layer_config(plan, server, simulated).to_env()) child.set_env[k] = v;
  if (server == nullptr) return child;
  const char* search_env = std::getenv("LD_LIBRARY_PATH");  // the program inherits it
  const std::string search = search_env != nullptr ? search_env : "";
  std::string inject = plan.inject;
  if (inject == "auto") {
    const attach::LoaderInfo loader = find_opencl_loader("libOpenCL.so.1", search, plan.creds);
    inject = loader.supports_layers ? "layer" : "preload";
    if (!plan.quiet) std::cerr << fmt::format("oaprof: OpenCL loader: {}\n", loader.note);
  }
  const bool layer = inject == "layer";
  way_in = inject;
  const fs::path lib = layer ? installed_library("OAPROF_LAYER", "liboaprof_layer.so")
                             : installed_library("OAPROF_PRELOAD", "liboaprof_preload.so");
  require_readable(lib, plan.creds);
  prepend_library(child, layer ? "OPENCL_LAYERS" : "LD_PRELOAD", lib.string());
  add_level_zero(plan, child, search);
  return child;
}

// Where one metric set's rows go: its outputs (named in `names`), the run's metadata with the
// set's equations, and, for a replay's join, the rows' fields (`capture`, when given).
struct SetOutput {
  Outputs* out = nullptr;
  OutputPlan names;
  report::RunInfo info;
  report::Pass* capture = nullptr;
};

// The session's whole configuration, from the plan and what the set-up opened.
session::SessionOptions session_options(const ProfilePlan& plan, const session::GpuAccess& gpu,
                                        const session::EnergySetup& energy,
                                        const std::vector<SetOutput>& sets) {
  session::SessionOptions o;
  o.config = session::oa_config_for(*gpu.metrics, gpu.platform, gpu.facts);
  if (sets.size() > 1) {
    for (const SetOutput& s : sets) {
      o.pass_sets.push_back(
          {s.info.metric_set, session::oa_config_for(*s.info.metrics, gpu.platform, gpu.facts)});
    }
    o.passes_per_set = passes_per_set(plan);
  }
  o.energy = energy.source.get();
  // Long launches stay exact: the session reads the counters while a pass is open.
  const report::RunInfo& info = sets.front().info;
  o.launch_reads = session::launch_read_options(info.timestamp_hz, info.max_freq_mhz, info.eus);
  if (plan.sample_period) {
    o.sampled.emplace();
    o.sampled->period = *plan.sample_period;
  }
  if (power::SimulatedEnergy* sim = energy.sim) {
    // The simulated energy (a RAPL tree, or a card's hwmon) draws GPU power while it is busy.
    o.busy_listener = [sim](bool busy) { sim->set_gpu_active(busy); };
  }
  // The simulator counts a catalogue kernel's known work (the layer names the kernel and its
  // work-items, not the program's other arguments: those are the plan's, kernel_runner's
  // defaults unless its maker knows them).
  if (gpu.simulated) {
    o.work_resolver = [params = plan.work_params](const ipc::wire::WorkHint& hint) {
      return bench::known_work(hint.kernel_name, hint.global_size, params);
    };
  }
  return o;
}

// A run whose GPU, energy and outputs are open: the session on the counter source, the rows
// written on a thread of their own, and the three ways it can run. One SetOutput per metric set:
// several make a kernel replay across sets, whose records go to their set's outputs.
class ProfileRun {
 public:
  ProfileRun(const ProfilePlan& plan, session::GpuAccess& gpu, session::EnergySetup& energy,
             std::vector<SetOutput> sets);
  // How long programming the OA unit took (session start, mux settle included).
  std::chrono::nanoseconds programming_time() const { return programming_time_; }
  // Kernel replay across sets: how often the unit was reprogrammed between passes, and what a
  // switch cost on average (a line for stderr).
  std::string switch_summary() const;
  // Starts the session: 0, or the exit status after saying why.
  int start();
  int run_system_wide();
  int run_program();

 private:
  void write_row(const oa::LaunchRecord& r, const power::EnergyReading* begin,
                 const power::EnergyReading* end);
  std::optional<std::string> drain_rows();
  void send_summary();
  int finish(int exit_code);

  // The first set's metadata: what all sets share (device, clocks, mode).
  const report::RunInfo& info() const { return sets_.front().info; }
  std::string csv_names() const {
    std::string names;
    for (const SetOutput& s : sets_) names += (names.empty() ? "" : ", ") + s.names.csv;
    return names;
  }

  std::vector<SetOutput> sets_;
  std::mutex capture_mu_;
  std::chrono::nanoseconds programming_time_{0};
  const ProfilePlan& plan_;
  session::GpuAccess& gpu_;
  std::string no_energy_reason_;
  std::string way_in_;  // "layer" or "preload" once the program is started in kernel mode
  // Rows are formatted and written on a thread of their own: the thread answering the program's
  // snapshots never waits for a file.
  // Per kernel name, for the summary oaprofd's exporter publishes (wire::Summary).
  std::mutex totals_mu_;
  std::map<std::string, ipc::wire::KernelSummary> kernel_totals_;
  session::RowWriter rows_;
  session::Session session_;
};

ProfileRun::ProfileRun(const ProfilePlan& plan, session::GpuAccess& gpu,
                       session::EnergySetup& energy, std::vector<SetOutput> sets)
    : sets_(std::move(sets)),
      plan_(plan),
      gpu_(gpu),
      no_energy_reason_(plan.sample_period ? "sampled attribution: a launch has no energy "
                                             "window of its own (docs/attach.md)"
                        : energy.source    ? "the energy could not be read for this window"
                                           : energy.reason),
      rows_([this](const oa::LaunchRecord& r, const power::EnergyReading* b,
                   const power::EnergyReading* e) { write_row(r, b, e); },
            [this] {
              for (const SetOutput& s : sets_) s.out->files->flush();
            }),
      session_(*gpu.source, gpu.format, rows_.sink(), session_options(plan, gpu, energy, sets_)) {}

void ProfileRun::write_row(const oa::LaunchRecord& r, const power::EnergyReading* begin,
                           const power::EnergyReading* end) {
  const SetOutput& set = sets_.at(r.pass_set);
  const report::RowEnergy e = report::row_energy(r, begin, end, set.info, no_energy_reason_);
  if (set.capture != nullptr) {
    std::lock_guard lock(capture_mu_);
    set.capture->rows.push_back(report::launch_fields(r, e, set.info));
  }
  set.out->files->add(r, e);
  set.out->table->add(r, e);
  set.out->rows.fetch_add(1, std::memory_order_relaxed);
  if (!gpu_.rows_before_stop() || r.pass_set != 0) return;  // a launch counts once in the summary
  std::lock_guard lock(totals_mu_);
  ipc::wire::KernelSummary& k = kernel_totals_[r.launch.kernel_name];
  k.kernel = r.launch.kernel_name;
  k.launches += 1;
  k.gpu_ns += oa::gpu_busy_ns(r.deltas, set.info.timestamp_hz);
  if (const auto w = e.window.igpu.watts(e.window.formula)) {
    k.energy_uj += static_cast<std::uint64_t>(std::max(0.0, *w) *
                                              static_cast<double>(e.window.duration_ns) / 1e3);
  }
}

std::string ProfileRun::switch_summary() const {
  const session::Session::SwitchCost c = session_.switch_cost();
  const double ms = std::chrono::duration<double, std::milli>(c.total).count();
  return fmt::format(
      "oaprof: kernel replay across {} sets: the OA unit was reprogrammed {} times between "
      "passes, {:.3f} ms a switch (mux settle included), each before a pass's first snapshot, "
      "outside every kernel's window\n",
      sets_.size(), c.switches, c.switches ? ms / static_cast<double>(c.switches) : 0.0);
}

// Every row written, or the first error writing them.
std::optional<std::string> ProfileRun::drain_rows() {
  try {
    rows_.drain();
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
}

// Through oaprofd: what this run measured per kernel (the most GPU time first, the rest folded
// into "other"), for the daemon's Prometheus exporter. Best effort: a daemon that refuses it
// costs the run nothing.
void ProfileRun::send_summary() {
  std::vector<ipc::wire::KernelSummary> kernels;
  {
    std::lock_guard lock(totals_mu_);
    for (const auto& [name, k] : kernel_totals_) kernels.push_back(k);
  }
  if (kernels.empty()) return;
  std::sort(kernels.begin(), kernels.end(),
            [](const auto& a, const auto& b) { return a.gpu_ns > b.gpu_ns; });
  if (kernels.size() > ipc::wire::kMaxSummaryKernels) {
    ipc::wire::KernelSummary other{"other", 0, 0, 0};
    for (auto it = kernels.begin() + ipc::wire::kMaxSummaryKernels - 1; it != kernels.end(); ++it) {
      other.launches += it->launches;
      other.gpu_ns += it->gpu_ns;
      other.energy_uj += it->energy_uj;
    }
    kernels.resize(ipc::wire::kMaxSummaryKernels - 1);
    kernels.push_back(other);
  }
  gpu_.send_summary({std::move(kernels), plan_.share_kernel_names});
}

int ProfileRun::start() {
  for (const SetOutput& s : sets_) {
    s.out->files->begin(s.info);
    s.out->table->begin(s.info);
    if (s.capture != nullptr) s.capture->metric_columns = report::metric_field_names(s.info);
  }
  try {
    const auto begin = std::chrono::steady_clock::now();
    session_.start();
    programming_time_ = std::chrono::steady_clock::now() - begin;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "oaprof: cannot program the OA unit: " << e.what() << "\n";
    // Programming puts back what it wrote before it throws; the device does the rest as it
    // closes.
    return untouched(gpu_, base::kExitSetup);
  }
}

// A session that could not be ended cleanly (oaprofd gone, a failed restore) does not cost the
// rows: they are on disk already, the summary is still printed, and the exit status says so.
int ProfileRun::finish(int exit_code) {
  // Locally the registers go back first; through oaprofd the rows are written first, so that
  // the summary sent before the session closes counts them all.
  std::optional<std::string> drain_error;
  if (gpu_.rows_before_stop()) {
    drain_error = drain_rows();
    send_summary();
  }
  if (!gpu_.stop(session_) && exit_code == 0) exit_code = base::kExitSession;
  if (!gpu_.rows_before_stop()) drain_error = drain_rows();
  if (drain_error) {
    std::cerr << "oaprof: " << *drain_error << "\n";
    if (exit_code == 0) exit_code = base::kExitOutput;
  }
  if (const std::string lost = gpu::perf_stream_loss_warning(session_.perf_stream_counts());
      !lost.empty()) {
    std::cerr << "oaprof: warning: " << lost << "\n";  // even with -q: it is about the data
  }
  if (const std::string waited = gpu::snapshot_placement_warning(session_.perf_stream_counts());
      !waited.empty()) {
    std::cerr << "oaprof: warning: " << waited << "\n";
  }
  if (const auto skew = session_.readout_skew(); skew && !plan_.quiet) {
    if (const std::string note = gpu::readout_skew_note(*skew); !note.empty()) {
      std::cerr << "oaprof: " << note << "\n";
    }
  }
  for (const SetOutput& s : sets_) s.out->files->end();
  std::uint64_t rows = 0;
  for (const SetOutput& s : sets_) rows += s.out->rows.load();
  if (rows == 0 && way_in_ == "preload") {
    // Even with -q: an empty file is not what the user asked for.
    std::cerr << "oaprof: warning: no launch was seen through LD_PRELOAD; the program may load "
                 "OpenCL itself (dlopen and dlsym): try --inject layer (docs/attach.md)\n";
  }
  if (!plan_.quiet) {
    std::string names;
    for (const SetOutput& s : sets_) {
      s.out->table->end();
      names += (names.empty() ? "" : ", ") + output_names(s.names);
    }
    std::cerr << fmt::format(
        "oaprof: {} rows written to {}{}\n", rows, names,
        session_.launches_dropped()
            ? fmt::format(" ({} incomplete launches dropped)", session_.launches_dropped())
            : "");
  }
  return exit_code;
}

int ProfileRun::run_system_wide() {
  if (!plan_.quiet) {
    std::cerr << fmt::format(
        "oaprof: sampling {} for {} ms{}, writing {}\n", info().device_detail,
        plan_.duration.count(),
        plan_.interval ? fmt::format(", a row every {} ms", plan_.interval->count()) : "",
        plan_.outputs.csv);
  }
  session::SamplerOptions so = sampler_options(info());
  so.row_interval = plan_.interval;
  so.label = plan_.interval ? "(interval)" : "(system)";
  session::Sampler sampler(session_, so);
  try {
    sampler.start();
    const auto end = std::chrono::steady_clock::now() + plan_.duration;
    while (!g_interrupted && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(50), end - std::chrono::steady_clock::now()));
    }
    sampler.stop();
  } catch (const std::exception& e) {
    std::cerr << "oaprof: sampling failed: " << e.what() << "\n";
    return finish(base::kExitSetup);
  }
  return finish(sampling_failed(sampler) ? base::kExitSession : 0);
}

int ProfileRun::run_program() {
  // The program's processes reach this run at an abstract address: no file, so no directory in
  // the user's $TMPDIR for root to create, bind in or chown. Who may connect is SO_PEERCRED's.
  std::vector<uid_t> allowed{::getuid()};
  if (plan_.creds) allowed.push_back(plan_.creds->uid);
  const bool kernel_mode = plan_.mode == RunMode::kKernel;
  std::unique_ptr<session::Server> server;
  std::optional<session::Sampler> app_sampler;
  session::ChildSpec child;
  try {
    if (kernel_mode) {
      server =
          std::make_unique<session::Server>(session::private_socket_address(), session_, allowed);
      server->start();
    } else {
      session::SamplerOptions so = sampler_options(info());
      so.label = "(application)";
      app_sampler.emplace(session_, so);
    }
    child = program_spec(plan_, server.get(), gpu_.simulated, way_in_);
  } catch (const std::exception& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    server.reset();
    return finish(base::kExitSetup);
  }

  // Without launches bracketed there is no kernel signal: the simulated GPU is busy for the
  // whole program (app mode, sampled attribution).
  const bool busy_throughout = app_sampler.has_value() || plan_.sample_period.has_value();
  int exit_code = 0;
  try {
    if (busy_throughout) session_.set_busy(true);
    if (app_sampler) app_sampler->start();
    const pid_t pid = session::spawn_child(child);
    g_child = pid;
    if (!plan_.quiet) {
      std::cerr << fmt::format("oaprof: profiling '{}' ({} mode) on {} ({}), writing {}\n",
                               plan_.command[0], info().mode, info().device, info().device_detail,
                               csv_names());
    }
    const int status = wait_for_child(pid, !plan_.quiet && ::isatty(STDERR_FILENO) && kernel_mode,
                                      sets_.front().out->rows);
    g_child = 0;
    exit_code = session::shell_status(status);
  } catch (const std::exception& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    exit_code = base::kExitCannotRun;
  }
  const int program_status = exit_code;
  if (app_sampler) {
    app_sampler->stop();
    if (sampling_failed(*app_sampler) && exit_code == 0) exit_code = base::kExitSession;
  }
  if (busy_throughout) {
    try {
      session_.set_busy(false);
    } catch (const std::exception&) {
      // The same broken session; finish() reports it.
    }
  }
  if (server) server->stop();
  server.reset();
  exit_code = finish(exit_code);
  if (!plan_.quiet && program_status != 0 && program_status != base::kExitCannotRun) {
    std::cerr << fmt::format("oaprof: '{}' exited with status {}\n", plan_.command[0],
                             program_status);
  }
  return exit_code;
}

// What a pass cost before its program ran: all its set-up (device, energy, outputs, idle
// baseline, session), and within it programming the OA unit (locally; oaprofd programs it while
// the session opens, inside the set-up).
struct PassCost {
  std::chrono::nanoseconds setup{0};
  std::optional<std::chrono::nanoseconds> programming;
};

// `path` with ".<set>" before its extension: a pass's own file beside the joined one.
std::string with_set(const std::string& path, const std::string& set) {
  const fs::path p(path);
  return (p.parent_path() / (p.stem().string() + "." + set + p.extension().string())).string();
}

// A pass's outputs: each of the run's with the set in its name. Standard output holds the joined
// CSV alone, so a pass's CSV then goes beside the default name, and its JSON or trace nowhere.
OutputPlan pass_outputs(const ProfilePlan& plan, const std::string& set) {
  OutputPlan o = plan.outputs;
  const std::string program_default =
      "oaprof-" + fs::path(plan.command.front()).filename().string() + ".csv";
  o.csv = with_set(names_stdout(o.csv) ? program_default : o.csv, set);
  for (std::string* path : {&o.json, &o.trace}) {
    *path = path->empty() || names_stdout(*path) ? std::string() : with_set(*path, set);
  }
  return o;
}

// The outputs of a run: the plan's, or for a kernel replay across sets each set's (-o's name, and
// --json's and --trace's, with the set in it, as application replay's passes), with one summary
// table, the first set's. 0, or the exit status after saying why.
int open_run_outputs(const ProfilePlan& plan, std::vector<std::unique_ptr<Outputs>>& outs,
                     std::vector<OutputPlan>& names) {
  if (!kernel_replay_across_sets(plan)) {
    names.push_back(plan.outputs);
    return open_outputs(plan, *outs.emplace_back(std::make_unique<Outputs>()));
  }
  for (const std::string& set : plan.pass_sets) {
    ProfilePlan set_plan = plan;
    set_plan.outputs = pass_outputs(plan, set);
    auto& out = outs.emplace_back(std::make_unique<Outputs>());
    names.push_back(set_plan.outputs);
    if (int rc = open_outputs(set_plan, *out); rc != 0) return rc;
    // The others' rows are in their files and the join.
    if (outs.size() > 1) out->table = report::make_tee_reporter({});
  }
  return 0;
}

// One run of the program (or of --system-wide) with the plan's set, or with every set of a kernel
// replay across sets. `captures`, when not empty, receive the rows: one Pass for an application
// replay's pass, one per set for a kernel replay. `cost` receives what the run cost before the
// program ran.
int run_once(const ProfilePlan& plan, std::span<report::Pass> captures = {},
             PassCost* cost = nullptr) {
  const auto begin = std::chrono::steady_clock::now();
  std::unique_ptr<session::GpuAccess> access;
  if (int rc = open_gpu(plan, access); rc != 0) return rc;
  session::GpuAccess& gpu = *access;
  if (int rc = check_energy_model(plan, gpu); rc != 0) return untouched(gpu, rc);
  session::EnergySetup energy;
  if (int rc = open_energy(plan, gpu, energy); rc != 0) return untouched(gpu, rc);
  std::vector<std::unique_ptr<Outputs>> outs;
  std::vector<OutputPlan> names;
  if (int rc = open_run_outputs(plan, outs, names); rc != 0) return untouched(gpu, rc);
  report::RunInfo info = make_run_info(plan, gpu, energy);
  info.energy_model = plan.energy_model;
  read_selftest_result(plan, gpu, info);
  if (energy.source) measure_idle(plan, *energy.source, info);
  std::vector<SetOutput> sets;
  for (std::size_t k = 0; k < outs.size(); ++k) {
    SetOutput& set = sets.emplace_back(SetOutput{outs[k].get(), names[k], info, nullptr});
    if (!gpu.pass_metrics.empty()) {
      set.info.metric_set = gpu.pass_metrics[k]->symbol();
      set.info.metrics = gpu.pass_metrics[k].get();
    }
    if (k < captures.size()) set.capture = &captures[k];
  }

  ProfileRun run(plan, gpu, energy, std::move(sets));
  if (int rc = run.start(); rc != 0) return rc;
  if (cost != nullptr) {
    cost->setup = std::chrono::steady_clock::now() - begin;
    if (gpu.programs_here()) cost->programming = run.programming_time();
  }
  // From here to the last output written, a signal never ends oaprof (on_profile_signal).
  const mmio::ScopedSignalHandler signals(&on_profile_signal);
  const int status = plan.mode == RunMode::kSystemWide ? run.run_system_wide() : run.run_program();
  if (outs.size() > 1 && !plan.quiet) std::cerr << run.switch_summary();
  return status;
}

// --metrics: the fewest sets of the platform's file that hold every named counter become the
// run's set or its passes. 0, or the exit status after saying why.
int choose_sets_for_metrics(ProfilePlan& plan) {
  try {
    // The PCI id in sysfs is world-readable, so this is the same through oaprofd.
    const std::optional<oa::Platform> platform = gpu::platform_of_spec(plan.device);
    if (!platform) {
      throw std::invalid_argument(
          "--metrics: the device is not an Intel GPU oaprof knows, so it has no metric file to "
          "choose from; give --metric-set");
    }
    const auto path = session::find_metric_file(*platform, plan.metrics_xml);
    if (!path) {
      throw std::invalid_argument(fmt::format(
          "--metrics: no metric file for {} was found (`oaprof metrics` says where oaprof "
          "looks); give --metrics-xml FILE",
          platform->codename));
    }
    const oa::MetricFile file = load_metric_file(*path, plan.creds);
    const oa::MetricCover cover = oa::choose_metric_sets(file.sets, plan.metric_names);
    std::vector<std::string> sets;
    for (const oa::MetricSet* set : cover.sets) sets.push_back(set->symbol());
    if (!plan.quiet) {
      std::string given;
      for (const auto& [name, set] : cover.given_by) {
        given += fmt::format("{}{} from {}", given.empty() ? "" : ", ", name, set);
      }
      std::cerr << fmt::format("oaprof: --metrics: {} ({} set{} of {})\n", given, sets.size(),
                               sets.size() == 1 ? "" : "s", path->filename().string());
    }
    require_pass_sets(plan, sets);  // the file is the user's: its symbols are checked too
    plan.metric_set = sets.front();
    if (sets.size() > 1) plan.pass_sets = sets;
    return 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return base::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "oaprof: --metrics: " << e.what() << "\n";
    return base::kExitSetup;
  }
}

// The joined rows to -o's file, opened as the invoking user. 0, or base::kExitOutput after saying
// why.
int write_joined(const ProfilePlan& plan, const report::MergedPasses& joined) {
  const auto out = open_output(plan.outputs.csv, plan.creds);
  if (!out) return base::kExitOutput;
  *out << report::csv_text_line(joined.columns) << '\n';
  for (const auto& row : joined.rows) *out << report::csv_line(row) << '\n';
  try {
    report::flush_or_throw(*out, "CSV");
  } catch (const std::exception& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return base::kExitOutput;
  }
  return 0;
}

// The joined rows as a JSON document to --json's file, opened as -o's is. 0, or base::kExitOutput
// after saying why.
int write_joined_json(const ProfilePlan& plan, const report::MergedPasses& joined,
                      const std::vector<std::string>& sets) {
  const auto out = open_output(plan.outputs.json, plan.creds);
  if (!out) return base::kExitOutput;
  try {
    report::write_joined_json(*out, joined, sets,
                              plan.application_replay ? "application" : "kernel");
    report::flush_or_throw(*out, "JSON");
  } catch (const std::exception& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return base::kExitOutput;
  }
  return 0;
}

// The passes' rows joined per launch into -o's file (and --json's). 0, or the exit status after
// saying why.
int write_joined_passes(const ProfilePlan& plan, std::span<const report::Pass> passes) {
  report::MergedPasses joined;
  try {
    joined = report::merge_passes(passes);
  } catch (const report::PassMismatch& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return base::kExitPassesDiffer;
  }
  if (const int rc = write_joined(plan, joined); rc != 0) return rc;
  if (!plan.outputs.json.empty()) {
    std::vector<std::string> sets;
    for (const report::Pass& p : passes) sets.push_back(p.set);
    if (const int rc = write_joined_json(plan, joined, sets); rc != 0) return rc;
  }
  if (!plan.quiet) {
    std::cerr << fmt::format(
        "oaprof: {} launches joined from {} sets into {}\n", joined.rows.size(), passes.size(),
        plan.outputs.csv +
            (plan.outputs.json.empty() ? std::string() : " and " + plan.outputs.json));
  }
  return 0;
}

// Application replay: the program once per set, each pass a whole run with its own files, then
// each launch's rows joined into -o's file. A pass that fails, or a signal, ends the replay with
// the passes so far kept; runs that launched different sequences are not joined.
int run_application_replay(const ProfilePlan& plan) {
  const std::size_t n = plan.pass_sets.size();
  std::vector<report::Pass> passes;
  for (std::size_t i = 0; i < n; ++i) {
    ProfilePlan pass = plan;
    pass.metric_set = plan.pass_sets[i];
    pass.outputs = pass_outputs(plan, pass.metric_set);
    report::Pass& rows = passes.emplace_back();
    rows.set = pass.metric_set;
    PassCost cost;
    const auto begin = std::chrono::steady_clock::now();
    const int status = run_once(pass, {&rows, 1}, &cost);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - begin;
    if (!plan.quiet) {
      const auto ms = [](std::chrono::nanoseconds t) {
        return std::chrono::duration<double, std::milli>(t).count();
      };
      std::cerr << fmt::format(
          "oaprof: pass {}/{} ({}): {} rows; set-up before the program ran {:.1f} ms ({}); the "
          "pass took {:.2f} s\n",
          i + 1, n, rows.set, rows.rows.size(), ms(cost.setup),
          cost.programming
              ? fmt::format("programming the OA unit {:.3f} ms of it", ms(*cost.programming))
              : std::string("oaprofd programmed the OA unit within it"),
          took.count());
    }
    if (status != 0 || g_interrupted) {
      std::cerr << fmt::format(
          "oaprof: application replay ends at pass {} of {}{}: no joined file; the passes' own "
          "files are kept\n",
          i + 1, n, g_interrupted ? " (interrupted)" : fmt::format(" (status {})", status));
      return status != 0 ? status : base::kExitSession;
    }
  }
  return write_joined_passes(plan, passes);
}

// Kernel replay across sets: one run of the program, each measured launch once per set (passes
// per set with --replay N) with the OA unit reprogrammed between passes, each set's rows in its
// own files, then the launches' rows joined into -o's file.
int run_kernel_replay(const ProfilePlan& plan) {
  std::vector<report::Pass> passes(plan.pass_sets.size());
  for (std::size_t k = 0; k < passes.size(); ++k) passes[k].set = plan.pass_sets[k];
  const int status = run_once(plan, passes);
  if (status != 0 || g_interrupted) {
    std::cerr << fmt::format(
        "oaprof: no joined file ({}): each set's rows are in its own file\n",
        g_interrupted ? std::string("interrupted") : fmt::format("status {}", status));
    return status != 0 ? status : base::kExitSession;
  }
  return write_joined_passes(plan, passes);
}

}  // namespace

int run_profile_captured(const ProfilePlan& plan, report::Pass& rows) {
  return run_once(plan, {&rows, 1});
}

int run_profile(const ProfileOptions& options) {
  // A bad option throws base::UsageError: exit 2 through base::run_command, nothing opened.
  const auto env = session::process_environment();
  ProfilePlan plan = make_profile_plan(options, env, ::geteuid(), run_identity(env));
  // Read as the user who ran sudo, now that the plan knows who that is; a bad file ends the run
  // here (exit 2), before any device or program.
  if (!options.energy_model.empty()) {
    plan.energy_model = read_energy_model(options.energy_model, plan.creds);
    plan.energy_model_path = options.energy_model;
  }
  // Before any thread: SIGINT, SIGTERM, SIGHUP and SIGQUIT are taken by the signal thread, so
  // that what a signal does (forward it, finish the outputs, restore the GPU) is ordinary code.
  // Only the commands that may hold registers start it; those that drop to the sudo user
  // (become_sudo_user) must drop while the process still has one thread.
  mmio::SignalThread::start();
  if (!plan.metric_names.empty()) {
    if (int rc = choose_sets_for_metrics(plan); rc != 0) return rc;
  }
  if (kernel_replay_across_sets(plan)) return run_kernel_replay(plan);
  if (plan.pass_sets.size() > 1) return run_application_replay(plan);
  return run_once(plan);
}

}  // namespace oaprof::run
