#include "session/gpu_access.h"

#include <unistd.h>

#include <iostream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "gpu/counter_source.h"
#include "power/energy_registry.h"
#include "power/energy_sampler.h"
#include "session/metric_source.h"
#include "session/remote_source.h"
#include "session/session_lock.h"
#include "session/state_dir.h"
#include "session/unit.h"

namespace oaprof::session {
namespace {

namespace fs = std::filesystem;

// The metric sets' equations: the run's set, and for a kernel replay across sets every set's.
void load_metrics(GpuAccess& access, const GpuRequest& request, const std::string& first,
                  const std::string& file, const std::optional<Credentials>& as) {
  access.metrics =
      std::make_unique<oa::MetricSet>(load_metric_set(access.platform, first, file, as));
  for (const std::string& set : request.pass_sets) {
    access.pass_metrics.push_back(
        std::make_unique<oa::MetricSet>(load_metric_set(access.platform, set, file, as)));
  }
}

// The unit taken here: the device, under oaprofd's lock and with its journal unless it is the
// in-process simulator, which no other process can reach.
class LocalAccess final : public GpuAccess {
 public:
  explicit LocalAccess(const GpuRequest& request)
      : energy_(request.energy), sysfs_root_(request.device.sysfs_root) {
    const bool in_process = request.device.spec.kind() == gpu::DeviceSpec::Kind::kSim;
    unit_ = in_process ? open_private_unit(request.device) : take(request);
    try {
      describe_device(request);
    } catch (...) {
      untouched();
      throw;
    }
  }

  EnergySetup open_energy() override {
    power::EnergyRoots roots;
    roots.sysfs = sysfs_root_;
    aim_energy_roots(roots, unit_.device);  // a discrete card's own sensors, or RAPL
    const std::string backend =
        energy_backend_for(energy_, simulated, unit_.device.platform.discrete);
    // Only now is a real device's placement known: refused before the run starts (exit 2).
    power::check_energy_backend_for_device(backend, energy_device(unit_.device));
    power::EnergyChoice choice = power::choose_energy_source(backend, roots);
    EnergySetup energy;
    energy.reason = choice.reason;
    if (choice.source) {
      energy.sim = dynamic_cast<power::SimulatedEnergy*>(choice.source.get());
      // Read often enough in the background that no RAPL counter wraps twice unseen.
      energy.source = std::make_unique<power::EnergySampler>(std::move(choice.source));
    }
    return energy;
  }

  std::optional<std::uint32_t> start_freq_mhz() override {
    try {
      return gpu::read_gpu_freq_mhz(unit_.device);
    } catch (const std::exception&) {
      return std::nullopt;  // unknown, as the JSON then says; the counters do not depend on it
    }
  }

  bool rows_before_stop() const override { return false; }
  void send_summary(ipc::wire::Summary) override {}
  bool stop(Session& session) override;
  void untouched() override { unit_.mark_restored(); }
  bool programs_here() const override { return true; }

 private:
  static Unit take(const GpuRequest& request) {
    prepare_state_dir(request.state_dir);
    try {
      return take_unit(UnitFiles::in(request.state_dir),
                       holder_text(request.holder_uid, ::getpid()), request.device,
                       [](const std::string& done) { std::cerr << "oaprof: " << done << "\n"; });
    } catch (const UnitBusy& busy) {
      throw std::runtime_error(
          fmt::format("busy: the OA unit is held by {}; wait for that run to end", busy.holder()));
    }
  }

  void describe_device(const GpuRequest& request) {
    const gpu::Device& device = unit_.device;
    platform = device.platform;
    facts = device.facts;
    label = device.label();
    detail = device.mmio->describe();
    simulated = device.simulated();
    format = oa::parse_format(request.format, platform.gen);
    source = gpu::make_counter_source(request.access, unit_.device);
    // A file the user names is read as the user (session/user_file.h).
    load_metrics(*this, request, request.metric_set, request.metrics_xml, request.creds);
  }

  std::string energy_;                // the backend asked for, or auto
  std::filesystem::path sysfs_root_;  // where the energy backends read
  Unit unit_;
};

// Ends the session; locally the journal is the fallback when the restore fails.
bool LocalAccess::stop(Session& session) {
  try {
    session.stop();
    unit_.mark_restored();
    return true;
  } catch (const std::exception& e) {
    std::cerr << fmt::format(
        "oaprof: warning: restoring the OA unit failed: {}; writing the journal back\n", e.what());
  }
  if (!unit_.journal) return false;
  try {
    unit_.journal->write_back();
    unit_.journal->mark_restored();
  } catch (const std::exception& again) {
    std::cerr << fmt::format("oaprof: writing the journal back failed too: {}\n", again.what());
    if (unit_.journal->has_state_file()) {
      std::cerr << fmt::format(
          "oaprof: {} is kept: the next oaprof or oaprofd start restores "
          "the registers it lists\n",
          unit_.journal->state_file().string());
    }
  }
  return false;
}

// The unit lent by oaprofd: it opened the device, programmed the set and reads the energy; the
// run reads both through the session.
class DaemonAccess final : public GpuAccess {
 public:
  explicit DaemonAccess(const GpuRequest& request)
      : client_(std::make_shared<DaemonClient>(daemon_socket_path())),
        opened_(client_->open(open_request(request))) {
    facts = opened_.facts;
    platform = oa::apply_facts(oa::require_platform_for_pci_id(opened_.pci_id), facts);
    if (opened_.xe) platform.driver = oa::KernelDriver::kXe;  // TGL to MTL may be xe's too
    format = oa::parse_format(opened_.format, platform.gen);
    source = make_remote_counter_source(client_, format, opened_.simulated);
    // The daemon programmed the set; the same file gives its equations here, and the other
    // sets of a kernel replay, which oaprofd switches among.
    load_metrics(*this, request, opened_.metric_set, opened_.metrics_file, std::nullopt);
    label = opened_.label;
    detail = opened_.detail + " via oaprofd";
    simulated = opened_.simulated;
  }

  EnergySetup open_energy() override {
    return EnergySetup{make_remote_energy_source(client_, opened_), opened_.energy_reason, nullptr};
  }
  std::optional<std::uint32_t> start_freq_mhz() override { return std::nullopt; }
  bool rows_before_stop() const override { return true; }
  void send_summary(ipc::wire::Summary summary) override {
    try {
      (void)client_->call(std::move(summary));
    } catch (const std::exception&) {
      // The session's end says what broke; the rows are on disk either way.
    }
  }
  bool stop(Session& session) override {
    try {
      session.stop();
      return true;
    } catch (const std::exception& e) {
      std::cerr << fmt::format(
          "oaprof: warning: the session with oaprofd could not be closed: {}; oaprofd puts the "
          "registers back itself when a client disconnects, or when it starts again after a "
          "crash\n",
          e.what());
      return false;
    }
  }
  void untouched() override {}
  bool programs_here() const override { return false; }

 private:
  static ipc::wire::Open open_request(const GpuRequest& request) {
    ipc::wire::Open open;
    open.pid = static_cast<std::uint32_t>(::getpid());
    open.device = request.device.spec.str();
    open.access = request.access;
    open.format = request.format;
    open.metric_set = request.metric_set;
    // The daemon resolves paths from its own working directory, not ours.
    open.metrics_xml =
        request.metrics_xml.empty() ? std::string() : fs::absolute(request.metrics_xml).string();
    open.energy = request.energy;
    return open;
  }

  std::shared_ptr<DaemonClient> client_;
  ipc::wire::Opened opened_;
};

}  // namespace

std::unique_ptr<GpuAccess> open_gpu_access(const GpuRequest& request, bool through_daemon) {
  if (through_daemon) return std::make_unique<DaemonAccess>(request);
  return std::make_unique<LocalAccess>(request);
}

}  // namespace oaprof::session
