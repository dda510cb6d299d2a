// oaprofd's Prometheus exporter in process, for the tests that scrape it: a service on a simulated
// register file with an exporter on a free loopback port, the sessions clients run through it,
// and the page parsed into series.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <variant>

#include "daemon/exporter.h"
#include "ipc/wire.h"
#include "tests/common/daemon_test_util.h"
#include "tests/common/http_get.h"

namespace oaprof::test_support {

// "name{labels}" -> value, from Prometheus text. A label with an empty value is left out, as
// Prometheus itself treats it as absent (the per-kernel series' pod_uid="" outside a pod).
inline std::map<std::string, double> parse_metrics(const std::string& text) {
  static const std::regex empty_label(R"(([{,])[a-zA-Z_][a-zA-Z0-9_]*=""(,?))");
  static const std::regex empty_braces(R"(\{\}|,(\}))");
  std::map<std::string, double> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    std::string series = line.substr(0, space);
    // Twice: the regex cannot match two adjacent empty labels that share a comma in one pass.
    for (int pass = 0; pass < 2; ++pass) series = std::regex_replace(series, empty_label, "$1");
    series = std::regex_replace(series, empty_braces, "$1");
    out[series] = std::stod(line.substr(space + 1));
  }
  return out;
}

class SimulatedExporter {
 public:
  explicit SimulatedExporter(daemon::ExporterOptions options = {}) {
    create_sim_file(dir_.path() / "regs");
    daemon::ServiceOptions o;
    o.device.spec = gpu::DeviceSpec::sim_file(dir_.path() / "regs");
    o.state_dir = dir_.path();
    o.proc_root = dir_.path() / "proc";  // no client is in a pod until put_in_cgroup
    service_ = std::make_unique<daemon::DaemonService>(o);
    options.listen = daemon::parse_listen_address("127.0.0.1:0");
    exporter_ = std::make_unique<daemon::Exporter>(*service_, options);
  }
  daemon::Exporter& exporter() { return *exporter_; }
  int port() const { return exporter_->port(); }

  // What `oaprof --daemon always` does for a user `uid` on connection `client`: opens a session,
  // sends the run's summary as it ends and closes. False when the daemon refused a step.
  bool run_session(std::uint64_t client, uid_t uid, const ipc::wire::Summary& summary,
                   pid_t pid = 4242) {
    const daemon::Peer peer{uid, uid, pid};
    ipc::wire::Open open;
    open.energy = "none";
    if (!std::holds_alternative<ipc::wire::Opened>(service_->handle(client, peer, open))) {
      return false;
    }
    const bool sent =
        std::holds_alternative<ipc::wire::Ok>(service_->handle(client, peer, summary));
    service_->client_gone(client);
    return sent;
  }
  // Process `pid` is in the cgroup /proc/PID/cgroup's text names.
  void put_in_cgroup(pid_t pid, const std::string& cgroup_text) {
    const std::filesystem::path dir = dir_.path() / "proc" / std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "cgroup") << cgroup_text;
  }
  // The page after one sampling step (which publishes the summaries sent since the last).
  std::string page() {
    exporter_->tick();
    return oaprof::testing::http_get(port(), "/metrics");
  }

 private:
  ScratchDir dir_;
  std::unique_ptr<daemon::DaemonService> service_;
  std::unique_ptr<daemon::Exporter> exporter_;
};

}  // namespace oaprof::test_support
