#include "session/remote_source.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#include <fmt/format.h>

#include "ipc/seqpacket.h"
#include "session/daemon_paths.h"
#include "session/privilege_drop.h"

namespace oaprof::session {
namespace wire = ipc::wire;

namespace {

// A snapshot takes microseconds; a daemon silent this long is stuck.
constexpr int kReplyTimeoutS = 20;

class RemoteCounterSource final : public gpu::CounterSource {
 public:
  RemoteCounterSource(std::shared_ptr<DaemonClient> client, oa::ReportFormat format, bool simulated)
      : client_(std::move(client)), format_(format), simulated_(simulated) {}
  ~RemoteCounterSource() override {
    try {
      client_->close();
    } catch (const std::exception&) {
      // The daemon restores on disconnect as well.
    }
  }

  std::string_view name() const override { return "via oaprofd"; }
  void start(oa::ReportFormat format) override { check(format); }
  void start(oa::ReportFormat format, const mmio::OaConfig&) override { check(format); }
  oa::RawReport snapshot(std::uint32_t report_id) override {
    const wire::Body reply = client_->call(wire::Sample{report_id, wire::kSampleReport});
    throw_if_error(reply, "snapshot");
    const auto* s = std::get_if<wire::Sampled>(&reply);
    if (s == nullptr || !s->report ||
        s->report->size() > static_cast<std::size_t>(oa::kMaxReportBytes)) {
      throw std::runtime_error("oaprofd answered a snapshot without a report");
    }
    oa::RawReport r;
    std::copy(s->report->begin(), s->report->end(), r.bytes.begin());
    r.size = static_cast<int>(s->report->size());
    config_lost_ = s->config_lost;
    readout_interrupted_ = s->readout_interrupted;
    // Counted since the daemon's stream opened; absent while nothing was lost.
    const wire::StreamLosses losses = s->stream_losses.value_or(wire::StreamLosses{});
    stream_counts_.reports_lost = static_cast<int>(losses.reports_lost);
    stream_counts_.buffer_lost = static_cast<int>(losses.buffer_lost);
    return r;
  }
  void stop() override { client_->close(); }
  void signal_kernel(bool running, const oa::KernelWork* work) override {
    if (!simulated_) return;
    if (work != nullptr && daemon_takes_work_) {
      const wire::Body reply = client_->call(wire::Kernel{running, *work});
      const auto* e = std::get_if<wire::Error>(&reply);
      if (e == nullptr || e->code != wire::ErrorCode::kBadMessage) {
        throw_if_error(reply, "kernel signal");
        return;
      }
      // An oaprofd that predates the work refuses it as malformed: it keeps its workload
      // fractions, and is sent the plain signal from now on.
      daemon_takes_work_ = false;
    }
    throw_if_error(client_->call(wire::Kernel{running}), "kernel signal");
  }
  // oaprofd programs the set it finds under that name in the file the session opened.
  void switch_set(oa::ReportFormat format, const mmio::OaConfig&,
                  std::string_view symbol) override {
    check(format);
    throw_if_error(client_->call(wire::SwitchSet{std::string(symbol)}), "set switch");
  }
  bool config_lost() const override { return config_lost_; }
  bool readout_interrupted() const override { return readout_interrupted_; }
  // The daemon sends the losses, not the samples.
  gpu::PerfStreamCounts perf_stream_counts() const override { return stream_counts_; }

 private:
  void check(oa::ReportFormat format) const {
    if (format != format_) {
      throw std::invalid_argument(fmt::format("the session was opened for format {}, not {}",
                                              oa::layout_of(format_).name,
                                              oa::layout_of(format).name));
    }
  }
  std::shared_ptr<DaemonClient> client_;
  oa::ReportFormat format_;
  bool simulated_;
  bool daemon_takes_work_ = true;  // until it refuses a kernel's work
  bool config_lost_ = false;
  bool readout_interrupted_ = false;
  gpu::PerfStreamCounts stream_counts_;
};

class RemoteEnergySource final : public power::EnergySource {
 public:
  RemoteEnergySource(std::shared_ptr<DaemonClient> client, const wire::Opened& opened)
      : client_(std::move(client)), name_(opened.energy_backend + " via oaprofd") {
    for (std::uint8_t d : opened.energy_domains) {
      if (d < std::size(power::kAllDomains)) domains_.push_back(static_cast<power::Domain>(d));
    }
  }
  std::string_view name() const override { return name_; }
  std::vector<power::Domain> domains() const override { return domains_; }
  power::EnergyReading read() override {
    const wire::Body reply = client_->call(wire::Sample{0, wire::kSampleEnergy});
    throw_if_error(reply, "energy read");
    const auto* s = std::get_if<wire::Sampled>(&reply);
    if (s == nullptr || !s->energy) {
      throw std::runtime_error("oaprofd answered an energy read without energy");
    }
    power::EnergyReading r;
    r.time_ns = s->energy->time_ns;
    for (const auto& [d, uj] : s->energy->energy_uj) {
      if (d < std::size(power::kAllDomains)) r.energy_uj[static_cast<power::Domain>(d)] = uj;
    }
    return r;
  }

 private:
  std::shared_ptr<DaemonClient> client_;
  std::string name_;
  std::vector<power::Domain> domains_;
};

}  // namespace

std::string daemon_socket_path() {
  const char* env = std::getenv(kDaemonSocketEnv);
  if (env == nullptr || *env == '\0') return kDefaultDaemonSocket;
  const auto sudo_user = credentials_from_sudo(process_environment(), ::geteuid());
  if (!sudo_user) return env;
  // Under sudo the variable is the invoking user's (where sudoers keeps it): root would connect
  // to a socket they name and take its server's word for the counters.
  static std::once_flag said;
  std::call_once(said, [&] {
    std::cerr << fmt::format(
        "oaprof: {} is ignored under sudo (root does not connect where uid {} "
        "says); using {}\n",
        kDaemonSocketEnv, sudo_user->uid, kDefaultDaemonSocket);
  });
  return kDefaultDaemonSocket;
}

void throw_if_error(const wire::Body& reply, const char* what) {
  if (const auto* e = std::get_if<wire::Error>(&reply)) {
    throw std::runtime_error(fmt::format("oaprofd refused the {}: {}", what, e->message));
  }
}

DaemonClient::DaemonClient(std::string socket_path) : path_(std::move(socket_path)) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof addr.sun_path) {
    throw DaemonUnavailable(fmt::format("daemon socket path {} is too long", path_));
  }
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) throw DaemonUnavailable(fmt::format("socket: {}", std::strerror(errno)));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EACCES || err == EPERM) {
      throw DaemonUnavailable(fmt::format(
          "oaprofd at {} does not let you in ({}): join the group 'oaprof' (`sudo usermod -aG "
          "oaprof $USER`, then log in again) or run `sudo oaprof ...`; see `oaprof doctor`",
          path_, std::strerror(err)));
    }
    throw DaemonUnavailable(fmt::format(
        "oaprofd is not running at {}: start it with `systemctl start oaprofd.socket` or run "
        "`sudo oaprof ...`; see `oaprof doctor`",
        path_));
  }
  if (const std::string why = ipc::untrusted_server(fd); !why.empty()) {
    ::close(fd);
    throw DaemonUnavailable(fmt::format("will not talk to {}: {}", path_, why));
  }
  // oaprof's own end to oaprofd polls the channel as the run's server does (session/server.cc):
  // for the user's OAPROF_SPIN_US.
  client_ = ipc::Client::adopt(fd, kReplyTimeoutS * 1000,  // it owns the socket from here
                               ipc::channel::wait_policy_from_env());
}

DaemonClient::~DaemonClient() = default;

namespace {
std::runtime_error daemon_failed(const std::string& path, const std::string& error) {
  const bool hung_up = error.find("closed the connection") != std::string::npos;
  return std::runtime_error(
      fmt::format("oaprofd at {} {}", path,
                  hung_up ? std::string("hung up; its log (journalctl -u oaprofd) says why")
                          : fmt::format("did not answer: {}", error)));
}
}  // namespace

void DaemonClient::greet_locked() {
  greeted_ = true;
  const bool want = ipc::channel::channel_wanted_from_env();
  std::string error;
  wire::Error refusal;
  refusal.code = wire::ErrorCode::kBadMessage;
  if (client_->hello(static_cast<std::uint32_t>(::getpid()), want, error, &refusal)) return;
  // Refused at accept (not authorised, busy): the first request gets that reply, as it would
  // have without the hello.
  if (refusal.code != wire::ErrorCode::kBadMessage) {
    refused_ = refusal;
    return;
  }
  throw daemon_failed(path_, error);
}

bool DaemonClient::has_channel() {
  std::lock_guard lock(mu_);
  return client_->has_channel();
}

wire::Body DaemonClient::call(const wire::Body& request) {
  std::lock_guard lock(mu_);
  if (!greeted_) greet_locked();
  if (refused_) return *refused_;
  wire::Body reply;
  std::string error;
  try {
    if (client_->exchange(request, reply, error)) return reply;
  } catch (const std::length_error& e) {
    throw std::invalid_argument(fmt::format("cannot send the request to oaprofd: {}", e.what()));
  }
  throw daemon_failed(path_, error);
}

wire::Opened DaemonClient::open(const wire::Open& request) {
  wire::Body reply = call(request);
  if (auto* opened = std::get_if<wire::Opened>(&reply)) {
    open_ = true;
    return std::move(*opened);
  }
  if (const auto* e = std::get_if<wire::Error>(&reply)) {
    if (e->code == wire::ErrorCode::kBadRequest) throw std::invalid_argument(e->message);
    throw std::runtime_error("oaprofd: " + e->message);
  }
  throw std::runtime_error("oaprofd answered open with something else than opened");
}

void DaemonClient::close() {
  if (!open_) return;
  open_ = false;
  throw_if_error(call(wire::Close{}), "close");
}

std::unique_ptr<gpu::CounterSource> make_remote_counter_source(std::shared_ptr<DaemonClient> client,
                                                               oa::ReportFormat opened_format,
                                                               bool simulated) {
  return std::make_unique<RemoteCounterSource>(std::move(client), opened_format, simulated);
}

std::unique_ptr<power::EnergySource> make_remote_energy_source(std::shared_ptr<DaemonClient> client,
                                                               const wire::Opened& opened) {
  if (opened.energy_backend.empty()) return nullptr;
  return std::make_unique<RemoteEnergySource>(std::move(client), opened);
}

}  // namespace oaprof::session
