#include "daemon/daemon_service.h"

#include <unistd.h>

#include <chrono>
#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "gpu/counter_source.h"
#include "oa/report_format.h"
#include "power/energy_registry.h"
#include "power/energy_sampler.h"
#include "power/sim_power.h"
#include "session/register_journal.h"
#include "session/session_lock.h"
#include "session/trusted_metrics.h"
#include "session/unit.h"

namespace oaprof::daemon {
namespace wire = ipc::wire;
using wire::ErrorCode;

namespace {
constexpr const char* kNoEnergyLent =
    "oaprofd lends no energy readings: its administrator started it with --energy off (RAPL "
    "energy is a side channel, CVE-2020-8694); `sudo oaprof` reads energy itself";

std::uint64_t monotonic_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

}  // namespace

// One client's hold on the OA unit. Members are declared in the order they must be torn down in
// reverse: the lock last, the state file after the device, the source before the device.
struct DaemonService::Active {
  std::uint64_t client = 0;
  Peer peer;
  PodIdentity pod;  // of the client's process when it opened; none for the exporter's own
  std::string holder;
  session::Unit unit;  // the lock, the journal and the device, released in that reverse order
  std::unique_ptr<power::EnergySource> energy;
  std::optional<EnergyGate> energy_gate;  // what of `energy` this client may see, and how often
  power::SimulatedEnergy* sim_energy = nullptr;
  std::unique_ptr<gpu::CounterSource> source;
  bool kernel_running = false;
  // What a set switch needs: the format, and where the open found its set (the client's file,
  // or empty for the daemon's directory). Each set's programming, once read, is kept.
  oa::ReportFormat format{};
  std::string metrics_xml;
  std::map<std::string, mmio::OaConfig, std::less<>> set_configs;
};

DaemonService::DaemonService(ServiceOptions options) : options_(std::move(options)) {}

DaemonService::~DaemonService() { close_session(); }

void DaemonService::log(int level, const std::string& line) const {
  if (options_.log) options_.log(level, line);
}

std::vector<std::uint8_t> DaemonService::handle(std::uint64_t client, const Peer& peer,
                                                std::span<const std::uint8_t> bytes) {
  auto decoded = wire::decode(bytes);
  if (auto* err = std::get_if<wire::DecodeError>(&decoded)) {
    return wire::encode({err->request_id, wire::Error{err->code, err->reason}});
  }
  const auto& msg = std::get<wire::Message>(decoded);
  wire::Body reply = handle(client, peer, msg.body);
  try {
    return wire::encode({msg.request_id, reply});
  } catch (const std::length_error& e) {
    // An opened session whose reply cannot be sent would be held by a client that believes it
    // failed: end it.
    if (std::holds_alternative<wire::Opened>(reply)) end_session("its reply could not be sent");
    return wire::encode(
        {msg.request_id,
         wire::Error{ErrorCode::kDeviceError, fmt::format("oaprofd cannot send its reply: {}; the "
                                                          "administrator can shorten oaprofd's "
                                                          "--metrics-dir",
                                                          e.what())}});
  }
}

wire::Body DaemonService::handle(std::uint64_t client, const Peer& peer,
                                 const wire::Body& request) {
  try {
    reap_selftests();  // a selftest whose client went and whose check has ended
    if (const auto* o = std::get_if<wire::Open>(&request)) return open(client, peer, *o);
    if (std::holds_alternative<wire::Hello>(request)) return wire::Ok{};
    if (const auto* t = std::get_if<wire::Selftest>(&request)) {
      return start_selftest(client, peer, *t);
    }
    if (const auto* f = std::get_if<wire::SelftestFetch>(&request)) {
      return fetch_selftest(client, *f);
    }
    if (std::holds_alternative<wire::Snapshot>(request) ||
        std::holds_alternative<wire::Launch>(request)) {
      return wire::Error{ErrorCode::kBadRequest,
                         "oaprofd serves oaprof, not the OpenCL layer: launches go to the "
                         "oaprof that started the program"};
    }
    const bool session_request = std::holds_alternative<wire::Sample>(request) ||
                                 std::holds_alternative<wire::Kernel>(request) ||
                                 std::holds_alternative<wire::Close>(request) ||
                                 std::holds_alternative<wire::Summary>(request) ||
                                 std::holds_alternative<wire::SwitchSet>(request);
    if (!session_request) {
      return wire::Error{ErrorCode::kBadRequest,
                         "that is a reply, not a request; oaprofd takes hello, open, sample, "
                         "kernel, switch set, summary, close, selftest and selftest fetch"};
    }
    if (!active_ || active_->client != client) {
      return wire::Error{ErrorCode::kNoSession,
                         "no session is open on this connection: send open first"};
    }
    if (const auto* s = std::get_if<wire::Sample>(&request)) return sample(*s);
    if (const auto* s = std::get_if<wire::SwitchSet>(&request)) return switch_set(*s);
    if (const auto* summary = std::get_if<wire::Summary>(&request)) {
      // Only a session's holder, and a bounded number kept until the exporter takes them.
      if (summaries_.size() == kMaxKeptSummaries) summaries_.erase(summaries_.begin());
      summaries_.push_back({peer.uid, active_->pod, *summary});
      return wire::Ok{};
    }
    if (const auto* k = std::get_if<wire::Kernel>(&request)) {
      // Bounded by the decoder; it changes only this session's simulated counters and energy.
      active_->source->kernel_running(k->running, k->work ? &*k->work : nullptr);
      if (active_->sim_energy != nullptr) {
        active_->sim_energy->set_gpu_active(k->running);
      }
      active_->kernel_running = k->running;
      return wire::Ok{};
    }
    end_session("closed by the client");
    return wire::Ok{};
  } catch (const std::invalid_argument& e) {
    return wire::Error{ErrorCode::kBadRequest, e.what()};
  } catch (const std::exception& e) {
    return wire::Error{ErrorCode::kDeviceError, e.what()};
  }
}

std::optional<oa::Platform> DaemonService::served_platform() const {
  try {
    return gpu::platform_of_spec(options_.device);
  } catch (const std::exception&) {
    return std::nullopt;  // a spec open refuses with its reason
  }
}

std::optional<wire::Error> DaemonService::refuse_other_device(const std::string& asked) const {
  const gpu::DeviceSpec& served = options_.device.spec;
  gpu::DeviceSpec spec;
  try {
    spec = gpu::DeviceSpec::parse(asked);
  } catch (const std::invalid_argument& e) {
    return wire::Error{ErrorCode::kBadRequest, e.what()};
  }
  // `auto` takes whatever is served; a plain `sim` any simulator; otherwise the very device.
  const bool ok = spec.is_auto() || spec.resolved() == served.resolved() ||
                  (spec.kind() == gpu::DeviceSpec::Kind::kSim && served.simulated());
  if (ok) return std::nullopt;
  return wire::Error{ErrorCode::kBadRequest,
                     fmt::format("this oaprofd serves --device {}, not {}; ask for that device "
                                 "(or auto), or run oaprof with sudo",
                                 served.str(), spec.str())};
}

std::optional<wire::Error> DaemonService::refuse_open(std::uint64_t client,
                                                      const std::string& device) {
  if (active_ && background_client_ == active_->client && client != active_->client) {
    end_session("a profiling session takes the OA unit from the exporter");
  }
  if (active_) {
    if (active_->client == client) {
      return wire::Error{ErrorCode::kBadRequest,
                         "this connection already holds the OA unit; close before opening again"};
    }
    return wire::Error{ErrorCode::kBusy, "busy: held by " + active_->holder};
  }
  if (const SelftestRun* run = running_selftest()) {
    return wire::Error{ErrorCode::kBusy, "busy: held by " + run->holder()};
  }
  return refuse_other_device(device);
}

DaemonService::Active& DaemonService::begin_session(std::uint64_t client, const Peer& peer) {
  auto active = std::make_unique<Active>();
  active->client = client;
  active->peer = peer;
  active->holder = session::holder_text(peer.uid, peer.pid);
  if (background_client_ != client) {
    // Once a session, at its open: the pid is SO_PEERCRED's at connect, the file the kernel's,
    // and the process the one that connected (or none, if it has exited since).
    active->pod = read_pod_identity(options_.proc_root, peer.pid, peer.process.get());
  } else {
    // What a local `sudo oaprof` is told when the lock is the exporter's: it cannot take the unit
    // from a lock, but a session through oaprofd can.
    active->holder +=
        " (oaprofd's Prometheus exporter, which gives the unit to any session "
        "through oaprofd: run oaprof without sudo, or with --daemon always)";
  }
  active_ = std::move(active);
  return *active_;
}

void DaemonService::lend_energy(Active& a, const std::string& requested, wire::Opened& opened) {
  const gpu::Device& device = a.unit.device;
  const std::string energy_name =
      options_.lend_energy
          ? session::energy_backend_for(requested, device.simulated(), device.platform.discrete)
          : std::string("none");
  power::check_energy_backend_for_device(energy_name, session::energy_device(device));
  power::EnergyRoots energy_roots = options_.energy_roots;
  session::aim_energy_roots(energy_roots, device);  // a discrete card's own sensors, or RAPL
  power::EnergyChoice choice = power::choose_energy_source(energy_name, energy_roots);
  opened.energy_reason = options_.lend_energy ? choice.reason : std::string(kNoEnergyLent);
  if (!choice.source) return;
  a.energy_gate.emplace(options_.energy_min_interval_ns);
  a.sim_energy = dynamic_cast<power::SimulatedEnergy*>(choice.source.get());
  a.energy = std::make_unique<power::EnergySampler>(std::move(choice.source));
  opened.energy_backend = std::string(a.energy->name());
  for (power::Domain d : a.energy->domains()) {
    opened.energy_domains.push_back(static_cast<std::uint8_t>(d));
  }
}

wire::Opened DaemonService::program_unit(Active& a, const wire::Open& request) {
  gpu::DeviceOptions dopt = options_.device;
  dopt.map_registers = gpu::access_maps_registers(request.access);  // perf: no BAR
  a.unit = session::take_unit(session::UnitFiles{lock_file(), state_file()}, a.holder,
                              std::move(dopt), [this](const std::string& done) { log(5, done); });
  const gpu::Device& device = a.unit.device;
  const oa::ReportFormat format = oa::parse_format(request.format, device.platform.gen);
  session::MetricChoice metrics =
      session::choose_metric_set(device.platform, request.metric_set, request.metrics_xml,
                                 options_.metrics_dirs, options_.metrics_owner);
  a.source = gpu::make_counter_source(request.access, a.unit.device);
  wire::Opened opened;
  lend_energy(a, request.energy, opened);
  const mmio::OaConfig config = session::oa_config_for(metrics.set, device.platform, device.facts);
  a.source->start(format, config);
  a.format = format;
  a.metrics_xml = request.metrics_xml;
  a.set_configs.emplace(metrics.set.symbol(), config);  // a replay switches back to it

  opened.label = device.label();
  opened.detail = device.mmio->describe();
  opened.pci_id = device.pci_id;
  opened.simulated = device.simulated();
  opened.xe = device.platform.driver == oa::KernelDriver::kXe;
  opened.format = std::string(oa::layout_of(format).name);
  opened.metric_set = metrics.set.symbol();
  opened.metrics_file = metrics.file.string();
  opened.facts = device.facts;
  return opened;
}

wire::Body DaemonService::open(std::uint64_t client, const Peer& peer, const wire::Open& request) {
  if (auto refused = refuse_open(client, request.device)) return *refused;
  Active& a = begin_session(client, peer);
  try {
    wire::Opened opened = program_unit(a, request);
    if (client != background_client_) ++client_sessions_;
    log(6, fmt::format("session opened for {}: {} on {}, format {}, metric set {}, energy {}",
                       a.holder, request.access, opened.detail, opened.format, opened.metric_set,
                       opened.energy_backend.empty() ? "none" : opened.energy_backend));
    return opened;
  } catch (const session::UnitBusy& e) {
    active_.reset();  // it took nothing: the lock is another process's
    return wire::Error{ErrorCode::kBusy, e.what()};
  } catch (const std::exception& e) {
    if (const auto* import = dynamic_cast<const session::MetricImportError*>(&e)) {
      log(4, fmt::format("{} asked for a metric file that does not import: {}", a.holder,
                         import->detail()));  // the content it quotes stays here
    }
    const bool bad_request = dynamic_cast<const std::invalid_argument*>(&e) != nullptr;
    const std::string why = e.what();
    // The exporter retries every period and logs its own failure once; a client's is news.
    end_session("open failed: " + why, client != background_client_);
    return wire::Error{bad_request ? ErrorCode::kBadRequest : ErrorCode::kDeviceError, why};
  }
}

// Kernel replay across sets: another set of the file the session opened (the client's, checked
// again as open checks it, or the daemon's own), by name; the client never sends registers.
wire::Body DaemonService::switch_set(const wire::SwitchSet& request) {
  Active& a = *active_;
  auto it = a.set_configs.find(request.metric_set);
  if (it == a.set_configs.end()) {
    if (a.set_configs.size() >= kMaxSessionSets) {
      return wire::Error{
          ErrorCode::kBadRequest,
          fmt::format("a session switches among at most {} metric sets", kMaxSessionSets)};
    }
    const session::MetricChoice metrics =
        session::choose_metric_set(a.unit.device.platform, request.metric_set, a.metrics_xml,
                                   options_.metrics_dirs, options_.metrics_owner);
    it = a.set_configs
             .emplace(
                 request.metric_set,
                 session::oa_config_for(metrics.set, a.unit.device.platform, a.unit.device.facts))
             .first;
    // Once per set, not per switch: a kernel replay switches twice a launch.
    log(6, fmt::format("session of {} switches among metric sets, now also {}", a.holder,
                       request.metric_set));
  }
  a.source->switch_set(a.format, it->second, request.metric_set);
  return wire::Ok{};
}

wire::Body DaemonService::sample(const wire::Sample& request) {
  Active& a = *active_;
  wire::Sampled out;
  if (request.what & wire::kSampleReport) {
    const oa::RawReport r = a.source->snapshot(request.report_id);
    out.report.emplace(r.bytes.begin(), r.bytes.begin() + r.size);
    out.config_lost = a.source->config_lost();
    out.readout_interrupted = a.source->readout_interrupted();
    const gpu::PerfStreamCounts counts = a.source->perf_stream_counts();
    if (counts.reports_lost > 0 || counts.buffer_lost > 0) {
      out.stream_losses = wire::StreamLosses{static_cast<std::uint32_t>(counts.reports_lost),
                                             static_cast<std::uint32_t>(counts.buffer_lost)};
    }
  }
  if (request.what & wire::kSampleEnergy) {
    if (!a.energy) {
      return wire::Error{ErrorCode::kBadRequest, "this session has no energy source"};
    }
    const power::EnergyReading reading = a.energy_gate->reading(*a.energy, monotonic_ns());
    wire::EnergyValues values{reading.time_ns, {}};
    for (const auto& [domain, uj] : reading.energy_uj) {
      values.energy_uj.emplace_back(static_cast<std::uint8_t>(domain), uj);
    }
    out.energy = std::move(values);
  }
  return out;
}

bool DaemonService::session_held_by(std::uint64_t client) const {
  return active_ != nullptr && active_->client == client;
}

void DaemonService::client_gone(std::uint64_t client) {
  if (active_ && active_->client == client) end_session("the client disconnected");
  if (auto it = selftests_.find(client); it != selftests_.end()) {
    // Not waited for here: the loop goes on while the check it runs ends.
    it->second->cancel();
    orphaned_selftests_.push_back(std::move(it->second));
    selftests_.erase(it);
    reap_selftests();
  }
}

void DaemonService::close_session() {
  if (active_) end_session("oaprofd is stopping");
  for (auto& [client, run] : selftests_) run->cancel();
  for (auto& run : orphaned_selftests_) run->cancel();
  selftests_.clear();  // each waits for its check to end
  orphaned_selftests_.clear();
}

void DaemonService::end_session(const std::string& why, bool log_if_untouched) {
  if (!active_) return;
  Active& a = *active_;
  if (a.source) {  // not carried to the client: the daemon's log says it for xe's snapshots
    const std::string waited = gpu::snapshot_placement_warning(a.source->perf_stream_counts());
    if (!waited.empty()) log(4, fmt::format("the session of {}: {}", a.holder, waited));
  }
  bool restored = true;
  try {
    if (a.kernel_running && a.source) a.source->kernel_running(false);
    if (a.source) a.source->stop();
  } catch (const std::exception& e) {
    log(3, fmt::format("restoring the OA unit after {} failed: {}; writing the journal back",
                       a.holder, e.what()));
    try {
      if (a.unit.journal) a.unit.journal->write_back();
    } catch (const std::exception& again) {
      restored = false;
      log(3, fmt::format("writing the journal back failed too: {}", again.what()));
    }
  }
  a.source.reset();
  a.energy.reset();
  try {
    a.unit.device = gpu::Device{};  // releases forcewake, restoring its request registers
  } catch (const std::exception& e) {
    restored = false;
    log(3, fmt::format("closing the device failed: {}", e.what()));
  }
  const std::size_t registers = a.unit.journal ? a.unit.journal->registers() : 0;
  if (a.unit.journal && restored) {
    a.unit.journal->mark_restored();  // the state file goes with the journal, before the lock
  } else if (a.unit.journal && a.unit.journal->has_state_file()) {
    log(3, fmt::format("state file {} kept: the next oaprofd start restores it",
                       a.unit.journal->state_file().string()));
  }
  if (registers > 0 || log_if_untouched) {
    log(6,
        fmt::format("session of {} ended ({}); {} registers restored", a.holder, why, registers));
  }
  active_.reset();
}

std::optional<std::string> DaemonService::recover() {
  // Only a journal nobody holds the lock for is a dead session's: a live one (this state
  // directory shared by another oaprofd, or a local `sudo oaprof`) must keep its registers.
  std::string holder;
  const std::optional<session::SessionLock> lock = session::SessionLock::try_acquire(
      lock_file(), session::holder_text(::geteuid(), ::getpid()) + " (recovering)", &holder);
  if (!lock) {
    std::error_code ec;
    if (!std::filesystem::exists(state_file(), ec)) return std::nullopt;
    return fmt::format(
        "{} left alone: the OA unit is held by {}, whose live session it "
        "journals; that session restores its own registers",
        state_file().string(), holder);
  }
  return session::restore_state_file(state_file(), options_.device);
}

}  // namespace oaprof::daemon
