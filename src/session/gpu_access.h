// How a run reaches the GPU it measures, decided once: the OA unit taken in this process
// (session/unit.h) or lent by oaprofd over its socket. Both give the run the same things (the
// platform, a counter source, the metric sets' equations, an energy source), so nothing above
// asks which one it has; the few things that differ (the order of the end, a summary for
// oaprofd's exporter, what a failed restore falls back on) are this interface's to answer.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/counter_source.h"
#include "gpu/device.h"
#include "ipc/wire.h"
#include "oa/device_facts.h"
#include "oa/metric_set.h"
#include "oa/platform.h"
#include "oa/report_format.h"
#include "power/energy_source.h"
#include "power/sim_power.h"
#include "session/privilege_drop.h"
#include "session/session.h"

namespace oaprof::session {

// What a run asks of the GPU: the plan's checked values.
struct GpuRequest {
  gpu::DeviceOptions device;
  std::string access;
  std::string format;
  std::string metric_set;
  std::string metrics_xml;             // empty: the search path (locally) or oaprofd's directories
  std::vector<std::string> pass_sets;  // kernel replay across sets: every set's equations
  std::string energy;                  // a backend name or auto
  std::optional<Credentials> creds;    // the user who ran sudo: files they name are read as them
  std::filesystem::path state_dir;     // the session lock and the register journal (locally)
  uid_t holder_uid = 0;                // who the lock says holds the unit
};

// The energy backend of a run; a missing one is not fatal: rows then carry the reason.
struct EnergySetup {
  std::unique_ptr<power::EnergySource> source;
  std::string reason;
  power::SimulatedEnergy* sim = nullptr;  // simulated energy (RAPL or hwmon), driven by the GPU
};

class GpuAccess {
 public:
  virtual ~GpuAccess() = default;

  // The platform with the device's own topology and timestamp frequency, and their sources.
  oa::Platform platform;
  oa::DeviceFacts facts;
  std::string label;   // "simulated" or the PCI address
  std::string detail;  // the register window or stream, as the device describes it
  bool simulated = false;
  oa::ReportFormat format{};
  std::unique_ptr<gpu::CounterSource> source;
  std::unique_ptr<oa::MetricSet> metrics;
  std::vector<std::unique_ptr<oa::MetricSet>> pass_metrics;  // kernel replay: every set's

  // The energy source the request this access was opened with names. Throws
  // std::invalid_argument for a backend that does not fit the device.
  virtual EnergySetup open_energy() = 0;
  // The GPU's frequency now, where it can be read.
  virtual std::optional<std::uint32_t> start_freq_mhz() = 0;
  // Whether the run's rows are written before the session stops (so that a summary sent then
  // counts them all), and whether it wants that summary at all.
  virtual bool rows_before_stop() const = 0;
  virtual void send_summary(ipc::wire::Summary summary) = 0;
  // Stops the session, restoring every register it touched, with this access's fallback when
  // that fails (said on stderr). False when it could not be ended cleanly.
  virtual bool stop(Session& session) = 0;
  // The run ends before its session started: only the device wrote registers, and put them back.
  virtual void untouched() = 0;
  // Whether programming the OA unit happens in this process (and so can be timed here).
  virtual bool programs_here() const = 0;
};

// Takes the OA unit here (the in-process simulator alone, anything else under oaprofd's lock and
// with its journal) or opens a session in oaprofd. Throws std::invalid_argument for a request
// that cannot be met, std::runtime_error (UnitBusy, DaemonUnavailable among them) else.
std::unique_ptr<GpuAccess> open_gpu_access(const GpuRequest& request, bool through_daemon);

}  // namespace oaprof::session
