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

#include "daemon/daemon_log.h"
#include "daemon/daemon_service.h"
#include "daemon/exporter.h"
#include "daemon/oaprofd.h"
#include "daemon/systemd.h"
#include "mmio/sim_gpu.h"
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

}  // namespace

int main(int argc, char** argv) {
  std::string socket_path = oaprof::session::kDefaultDaemonSocket;
  std::string state_dir = oaprof::session::kDefaultStateDir;
  std::string group_name = oaprof::session::kDefaultDaemonGroup;
  std::string device = "auto";
  std::vector<std::string> metrics_dirs;
  std::string sysfs_root = "/sys";
  std::string energy = "session";
  std::size_t max_clients = 64;
  bool foreground = false;
  std::string metrics_listen;
  int metrics_period_ms = 1000;
  bool sim_busy = false;
  std::string sim_platform = "kblgt2";

  CLI::App app{
      "oaprofd: lends the Intel GPU's OA unit to `oaprof` runs of users who are not root. It "
      "owns the unit for one client at a time (others are told who holds it), programs only "
      "named metric sets from root-owned files, and puts every register back when the client "
      "closes, disconnects or dies, when oaprofd is stopped, and at start if a crashed oaprofd "
      "left a state file. Runs in the foreground (systemd Type=notify; socket activation "
      "supported); logs go to stderr.",
      "oaprofd"};
  app.add_option("--socket", socket_path,
                 "Unix socket to listen on (mode 0660, group --group); ignored when systemd "
                 "passes the socket")
      ->capture_default_str();
  app.add_option("--state-dir", state_dir,
                 "where the state file and the session lock live (a tmpfs such as /run)")
      ->capture_default_str();
  app.add_option("--group", group_name,
                 "group whose members may use the daemon (root always may); a name or a gid")
      ->capture_default_str();
  app.add_option("--device", device,
                 "GPU to serve: auto (0000:00:02.0), sim (the simulator), sim:FILE (the "
                 "simulator with its registers in FILE), or a PCI address")
      ->capture_default_str();
  app.add_option("--metrics-dir", metrics_dirs,
                 "directory of IGT metric files (oa-<platform>.xml) clients may name sets from; "
                 "repeatable (default: <prefix>/share/oaprof/metrics)");
  app.add_option("--sysfs-root", sysfs_root, "where sysfs is, for the energy backends (tests)")
      ->capture_default_str();
  app.add_option("--energy", energy,
                 "RAPL energy for clients: session (only to the client whose session holds the OA "
                 "unit, no two readings closer than 1 ms; docs/daemon.md, Security model) or off "
                 "(none: RAPL is a side channel, CVE-2020-8694)")
      ->check(CLI::IsMember({"session", "off"}))
      ->capture_default_str();
  app.add_option("--max-clients", max_clients,
                 "connections served at once (a quarter of them at most for one uid); more are "
                 "refused with a busy reply")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}))
      ->capture_default_str();
  app.add_option("--metrics-listen", metrics_listen,
                 "serve Prometheus metrics on http://ADDR:PORT/metrics (off by default; " +
                     std::string(oaprof::daemon::kDefaultMetricsListen) +
                     " when given without a value): while no client profiles, oaprofd samples "
                     "the GPU itself and exports busy, frequency, EU ratios, the built-in set's "
                     "counters, energy and iGPU power (docs/exporter.md, with what a scrape can "
                     "learn); a client's session takes the OA unit from it at once")
      ->expected(0, 1)
      ->default_str(std::string(oaprof::daemon::kDefaultMetricsListen));
  app.add_option("--metrics-period", metrics_period_ms,
                 "with --metrics-listen: milliseconds between the exporter's samples (shorter "
                 "where a counter of the device could wrap twice in that time)")
      ->check(CLI::Range(10, 60'000))
      ->capture_default_str();
  app.add_option("--sim-platform", sim_platform,
                 "with --device sim: the part the simulator models (lnl, tglgt2-xe and mtlgt2-xe "
                 "are driven by xe and read through its simulated observation stream: clients "
                 "use --access perf and an IGT set)")
      ->check(CLI::IsMember(std::vector<std::string>(oaprof::mmio::sim_platform_names().begin(),
                                                     oaprof::mmio::sim_platform_names().end())))
      ->capture_default_str();
  app.add_flag("--sim-busy", sim_busy,
               "with --device sim and --metrics-listen: the simulated GPU runs a kernel while "
               "the exporter samples, so that its figures move (tests)");
  app.add_flag("--foreground", foreground,
               "stay in the foreground; oaprofd always does (it never forks), the flag is "
               "accepted for init scripts that pass it");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (metrics_dirs.empty()) metrics_dirs.push_back(metrics_dir_default());
  const bool exporting = app.count("--metrics-listen") > 0;
  if (exporting && metrics_listen.empty()) {
    metrics_listen = std::string(oaprof::daemon::kDefaultMetricsListen);
  }
  if (sim_busy && (!exporting || !device.starts_with("sim"))) {
    log_line(3, "--sim-busy goes with --device sim and --metrics-listen");
    return 2;
  }
  if (app.count("--sim-platform") > 0 && !device.starts_with("sim")) {
    log_line(3, "--sim-platform goes with --device sim");
    return 2;
  }
  oaprof::daemon::ExporterOptions eo;
  if (exporting) {
    try {
      eo.listen = oaprof::daemon::parse_listen_address(metrics_listen);
    } catch (const std::invalid_argument& e) {
      log_line(3, e.what());
      return 2;
    }
    eo.period = std::chrono::milliseconds(metrics_period_ms);
    eo.sim_busy = sim_busy;
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) eo.hostname = host;
  }

  const auto env = oaprof::session::process_environment();
  oaprof::daemon::ServiceOptions so;
  so.device.spec = device;
  so.device.sim.platform = oaprof::mmio::sim_platform_by_name(sim_platform);
  // A simulated xe part has no i915 to ask, as a real one has none.
  so.device.sim.i915 = so.device.sim.platform.driver != oaprof::oa::KernelDriver::kXe;
  so.state_dir = state_dir;
  for (const auto& d : metrics_dirs) so.metrics_dirs.emplace_back(d);
  so.energy_roots.sysfs = sysfs_root;
  so.lend_energy = energy == "session";
  so.log = [](int level, const std::string& line) { log_line(level, line); };

  try {
    oaprof::session::prepare_state_dir(state_dir);
  } catch (const std::exception& e) {
    log_line(3, e.what());
    return 1;
  }

  oaprof::daemon::DaemonService service(so);
  oaprof::daemon::OaprofdOptions o;
  o.socket_path = socket_path;
  o.group_name = group_name;
  o.group = resolve_group(group_name);
  o.max_clients = max_clients;
  o.max_clients_per_uid = std::max<std::size_t>(1, max_clients / 4);
  o.log = so.log;
  if (!o.group) {
    log_line(4, fmt::format("group '{}' does not exist: only root may use oaprofd (create it with "
                            "systemd-sysusers or `groupadd --system {}`)",
                            group_name, group_name));
  }
  if (auto fd = oaprof::daemon::activated_socket(env, static_cast<int>(::getpid()))) {
    o.listen_fd = *fd;
  }
  std::optional<oaprof::daemon::Oaprofd> daemon;
  try {
    daemon.emplace(service, o);
  } catch (const std::exception& e) {
    log_line(3, e.what());
    return 1;
  }
  // Only now, with the socket ours (a live oaprofd on it was refused above) and under the
  // session lock inside recover(): a state file another process's live session is writing must
  // keep its registers.
  try {
    if (auto done = service.recover()) log_line(4, *done);
  } catch (const std::exception& e) {
    log_line(3, fmt::format("a previous session left registers programmed and they could not be "
                            "restored: {}",
                            e.what()));
    return 1;
  }
  std::unique_ptr<oaprof::daemon::Exporter> exporter;
  if (exporting) {
    try {
      exporter = std::make_unique<oaprof::daemon::Exporter>(service, eo);
    } catch (const std::exception& e) {
      log_line(3, e.what());
      return 1;
    }
    if (!eo.listen.loopback) {
      log_line(4, fmt::format("metrics are served on {}, beyond this machine: anyone who reaches "
                              "it learns the GPU's load and power (docs/exporter.md)",
                              eo.listen.civetweb()));
    }
    log_line(6, fmt::format("serving Prometheus metrics on http://{}:{}/metrics", eo.listen.host,
                            exporter->port()));
    daemon->set_tick([&exporter] { exporter->tick(); }, [&exporter] { return exporter->period(); });
  }
  g_daemon = &*daemon;
  struct sigaction sa {};
  sa.sa_handler = &on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM}) ::sigaction(sig, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  const auto notify = env.find("NOTIFY_SOCKET");
  const std::string notify_socket = notify != env.end() ? notify->second : "";
  log_line(6,
           fmt::format("serving --device {} on {} for root and group '{}'", device,
                       o.listen_fd >= 0 ? "the socket systemd passed" : socket_path, group_name));
  (void)oaprof::daemon::notify_systemd(notify_socket, "READY=1");
  daemon->run();  // returns after SIGINT/SIGTERM, with the session restored
  (void)oaprof::daemon::notify_systemd(notify_socket, "STOPPING=1");
  g_daemon = nullptr;
  exporter.reset();
  daemon.reset();
  log_line(6, "stopped; the OA unit is as it was");
  return 0;
}
