// oaprofd: the privileged daemon that lends the OA unit to unprivileged `oaprof` runs. Wiring
// only: options, the state directory, recovery of a crashed run, signals, systemd readiness;
// the work is src/daemon's DaemonService and Oaprofd.
#include <grp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "base/cli.h"
#include "base/errors.h"
#include "daemon/daemon_log.h"
#include "daemon/daemon_service.h"
#include "daemon/exporter.h"
#include "daemon/oaprofd.h"
#include "daemon/systemd.h"
#include "mmio/sim_gpu.h"
#include "run/selftest_daemon.h"
#include "session/daemon_paths.h"
#include "session/privilege_drop.h"
#include "session/state_dir.h"

namespace {
namespace fs = std::filesystem;
using oaprof::daemon::log_line;

std::atomic<oaprof::daemon::Oaprofd*> g_daemon{nullptr};

void on_signal(int) {
  if (auto* d = g_daemon.load()) d->request_stop();
}

// A group name, or a number for a group without a name (tests, containers).
std::optional<gid_t> resolve_group(const std::string& name) {
  unsigned long gid = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), gid);
  if (ec == std::errc() && end == name.data() + name.size()) return static_cast<gid_t>(gid);
  if (const group* g = ::getgrnam(name.c_str())) return g->gr_gid;
  return std::nullopt;
}

std::string metrics_dir_default() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/usr/share/oaprof/metrics")
            : (exe.parent_path().parent_path() / "share" / "oaprof" / "metrics").string();
}

namespace base = oaprof::base;
namespace daemon = oaprof::daemon;

// Everything the command line says, as CLI11 fills it in.
struct CommandLine {
  std::string socket_path = oaprof::session::kDefaultDaemonSocket;
  std::string state_dir = oaprof::session::kDefaultStateDir;
  std::string group_name = oaprof::session::kDefaultDaemonGroup;
  std::string device = "auto";
  std::vector<std::string> metrics_dirs;
  std::string sysfs_root = "/sys";
  std::string proc_root = "/proc";
  std::string energy = "session";
  std::size_t max_clients = 64;
  bool foreground = false;
  std::string metrics_listen;
  bool exporting = false;  // --metrics-listen given, with or without a value
  int metrics_period_ms = 1000;
  std::string kernel_names = "opt-in";
  std::string kubelet_pods;
  int kubelet_pods_interval_ms = 10'000;
  bool sim_busy = false;
  std::string sim_platform = "kblgt2";
};

// The command line validated: what the service, the socket loop and the exporter are built from.
struct Plan {
  daemon::ServiceOptions service;
  daemon::OaprofdOptions socket;
  std::optional<daemon::ExporterOptions> exporter;
};

void add_service_options(CLI::App& app, CommandLine& cl) {
  app.add_option("--socket", cl.socket_path,
                 "Unix socket to listen on (ignored when systemd passes one)")
      ->capture_default_str();
  app.add_option("--state-dir", cl.state_dir,
                 "where the state file and the session lock live (a tmpfs)")
      ->capture_default_str();
  app.add_option("--group", cl.group_name,
                 "group whose members may use the daemon: a name or a gid")
      ->capture_default_str();
  app.add_option("--device", cl.device, "GPU to serve: auto, sim, sim:FILE or a PCI address")
      ->capture_default_str();
  app.add_option("--metrics-dir", cl.metrics_dirs,
                 "directory of IGT metric files clients may name sets from; repeatable");
  app.add_option("--energy", cl.energy, "RAPL energy for clients: session or off (docs/daemon.md)")
      ->check(CLI::IsMember({"session", "off"}))
      ->capture_default_str();
  app.add_option("--max-clients", cl.max_clients,
                 "connections served at once (a quarter at most for one uid)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}))
      ->capture_default_str();
  app.add_flag("--foreground", cl.foreground, "accepted for init scripts: oaprofd never forks");
}

void add_exporter_and_testing_options(CLI::App& app, CommandLine& cl) {
  using base::cli::testing;
  app.add_option("--metrics-listen", cl.metrics_listen,
                 "Prometheus metrics at http://ADDR:PORT/metrics (docs/exporter.md)")
      ->expected(0, 1)
      ->default_str(std::string(daemon::kDefaultMetricsListen));
  app.add_option("--metrics-period", cl.metrics_period_ms,
                 "with --metrics-listen: time between samples (DURATION, 10ms-60s)")
      ->transform(base::cli::as_milliseconds())
      ->check(CLI::Range(10, 60'000))
      ->capture_default_str();
  app.add_option("--kernel-names", cl.kernel_names,
                 "exporter's kernel names: opt-in (oaprof --share-kernel-names) or off")
      ->check(CLI::IsMember({"opt-in", "off"}))
      ->capture_default_str();
  app.add_option("--kubelet-pods", cl.kubelet_pods,
                 "namespace/pod labels from http://IP:10255/pods or a file (exporter.md)");
  app.add_option("--kubelet-pods-interval", cl.kubelet_pods_interval_ms,
                 "least time between two fetches of that list (DURATION, 0-1h)")
      ->transform(base::cli::as_milliseconds())
      ->check(CLI::Range(0, 3'600'000))
      ->capture_default_str();
  testing(app.add_option("--sysfs-root", cl.sysfs_root, "where sysfs is, for the energy backends"))
      ->capture_default_str();
  testing(app.add_option("--proc-root", cl.proc_root,
                         "where /proc is, for clients' cgroups (their pods)"))
      ->capture_default_str();
  testing(
      app.add_option("--sim-platform", cl.sim_platform, "with --device sim: the simulated part"))
      ->check(CLI::IsMember(std::vector<std::string>(oaprof::mmio::sim_platform_names().begin(),
                                                     oaprof::mmio::sim_platform_names().end())))
      ->capture_default_str();
  testing(app.add_flag("--sim-busy", cl.sim_busy, "with --device sim: the GPU runs while sampled"));
}

std::optional<daemon::ExporterOptions> exporter_options(const CommandLine& cl) {
  if (cl.sim_busy && (!cl.exporting || !cl.device.starts_with("sim"))) {
    throw base::UsageError("--sim-busy goes with --device sim and --metrics-listen");
  }
  if (!cl.kubelet_pods.empty() && !cl.exporting) {
    throw base::UsageError("--kubelet-pods goes with --metrics-listen");
  }
  if (!cl.exporting) return std::nullopt;
  daemon::ExporterOptions eo;
  if (!cl.kubelet_pods.empty()) {
    if (auto error = daemon::kubelet_pods_source_error(cl.kubelet_pods)) {
      throw base::UsageError("--kubelet-pods: " + *error);
    }
    eo.kubelet_pods = daemon::KubeletPodsOptions{
        cl.kubelet_pods, std::chrono::milliseconds(cl.kubelet_pods_interval_ms),
        std::chrono::milliseconds(2'000),
        [](int level, const std::string& line) { log_line(level, line); }};
  }
  eo.listen = daemon::parse_listen_address(
      cl.metrics_listen.empty() ? std::string(daemon::kDefaultMetricsListen) : cl.metrics_listen);
  eo.period = std::chrono::milliseconds(cl.metrics_period_ms);
  eo.sim_busy = cl.sim_busy;
  eo.kernel_names = cl.kernel_names == "opt-in";
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) eo.hostname = host;
  return eo;
}

daemon::ServiceOptions service_options(const CommandLine& cl, bool sim_platform_given) {
  if (sim_platform_given && !cl.device.starts_with("sim")) {
    throw base::UsageError("--sim-platform goes with --device sim");
  }
  daemon::ServiceOptions so;
  so.device.spec = oaprof::gpu::DeviceSpec::parse(cl.device);
  so.device.sim.platform = oaprof::mmio::sim_platform_by_name(cl.sim_platform);
  // A simulated xe part has no i915 to ask, as a real one has none.
  so.device.sim.i915 = so.device.sim.platform.driver != oaprof::oa::KernelDriver::kXe;
  so.state_dir = cl.state_dir;
  for (const auto& d : cl.metrics_dirs) so.metrics_dirs.emplace_back(d);
  if (so.metrics_dirs.empty()) so.metrics_dirs.emplace_back(metrics_dir_default());
  so.energy_roots.sysfs = cl.sysfs_root;
  so.proc_root = cl.proc_root;
  so.lend_energy = cl.energy == "session";
  so.log = [](int level, const std::string& line) { log_line(level, line); };
  so.selftest = oaprof::run::selftest::serve_selftest;  // `oaprof selftest` for group members
  return so;
}

daemon::OaprofdOptions socket_options(const CommandLine& cl,
                                      const std::map<std::string, std::string>& env) {
  daemon::OaprofdOptions o;
  o.socket_path = cl.socket_path;
  o.group_name = cl.group_name;
  o.group = resolve_group(cl.group_name);
  o.max_clients = cl.max_clients;
  o.max_clients_per_uid = std::max<std::size_t>(1, cl.max_clients / 4);
  o.log = [](int level, const std::string& line) { log_line(level, line); };
  if (!o.group) {
    log_line(4, fmt::format("group '{}' does not exist: only root may use oaprofd (create it with "
                            "systemd-sysusers or `groupadd --system {}`)",
                            cl.group_name, cl.group_name));
  }
  if (auto fd = daemon::activated_socket(env, static_cast<int>(::getpid()))) o.listen_fd = *fd;
  return o;
}

// Restores what a crashed oaprofd left programmed. Only with the socket ours (a live oaprofd on
// it was refused) and under the session lock inside recover(): a state file another process's
// live session is writing must keep its registers.
void recover(daemon::DaemonService& service) {
  try {
    if (auto done = service.recover()) log_line(4, *done);
  } catch (const std::exception& e) {
    throw base::SetupError(fmt::format(
        "a previous session left registers programmed and they could not be restored: {}",
        e.what()));
  }
}

std::unique_ptr<daemon::Exporter> start_exporter(daemon::DaemonService& service,
                                                 daemon::Oaprofd& server,
                                                 const daemon::ExporterOptions& eo) {
  auto exporter = std::make_unique<daemon::Exporter>(service, eo);
  if (!eo.listen.loopback) {
    log_line(4, fmt::format("metrics are served on {}, beyond this machine: anyone who reaches "
                            "it learns the GPU's load and power (docs/exporter.md)",
                            eo.listen.civetweb()));
  }
  log_line(6, fmt::format("serving Prometheus metrics on http://{}:{}/metrics", eo.listen.host,
                          exporter->port()));
  daemon::Exporter* e = exporter.get();
  server.set_tick([e] { e->tick(); }, [e] { return e->period(); });
  return exporter;
}

void handle_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = &on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM}) ::sigaction(sig, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

// Serves until SIGINT or SIGTERM; throws base::SetupError (or what the service throws) when the
// state directory, the socket, the recovery or the exporter cannot be set up.
int serve(const Plan& plan, const CommandLine& cl, const std::map<std::string, std::string>& env) {
  oaprof::session::prepare_state_dir(cl.state_dir);
  daemon::DaemonService service(plan.service);
  daemon::Oaprofd server(service, plan.socket);
  recover(service);
  std::unique_ptr<daemon::Exporter> exporter;
  if (plan.exporter) exporter = start_exporter(service, server, *plan.exporter);
  g_daemon = &server;
  handle_stop_signals();
  const auto notify = env.find("NOTIFY_SOCKET");
  const std::string notify_socket = notify != env.end() ? notify->second : "";
  log_line(6, fmt::format("serving --device {} on {} for root and group '{}'",
                          plan.service.device.spec.str(),
                          plan.socket.listen_fd >= 0 ? "the socket systemd passed" : cl.socket_path,
                          cl.group_name));
  (void)daemon::notify_systemd(notify_socket, "READY=1");
  server.run();  // returns after SIGINT/SIGTERM, with the session restored
  (void)daemon::notify_systemd(notify_socket, "STOPPING=1");
  g_daemon = nullptr;
  exporter.reset();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "oaprofd: lends the Intel GPU's OA unit to `oaprof` runs of users who are not root,\n"
      "one client at a time, and puts every register back after each (docs/daemon.md).\n"
      "Runs in the foreground (systemd Type=notify); logs go to stderr.",
      "oaprofd"};
  base::cli::add_help_all(app, argc, argv);
  CommandLine cl;
  add_service_options(app, cl);
  add_exporter_and_testing_options(app, cl);
  app.footer(
      "Exit status:\n"
      "  0  stopped by SIGINT or SIGTERM, every register restored\n"
      "  2  bad options\n"
      "  3  the device, the socket, the state directory or the exporter could not be set up");
  if (const auto status = base::cli::parse(app, argc, argv)) return *status;
  cl.exporting = app.count("--metrics-listen") > 0;
  // Errors go to the log (journald reads its priority prefixes), with the status base/errors.h
  // gives their type.
  try {
    const auto env = oaprof::session::process_environment();
    const Plan plan{service_options(cl, app.count("--sim-platform") > 0), socket_options(cl, env),
                    exporter_options(cl)};
    const int status = serve(plan, cl, env);
    log_line(6, "stopped; the OA unit is as it was");
    return status;
  } catch (const std::exception& e) {
    log_line(3, e.what());
    return base::exit_status_for(e);
  }
}
