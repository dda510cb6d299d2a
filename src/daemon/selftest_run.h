// oaprofd's selftest for one client (`oaprof selftest --daemon`): the checks run on a thread of
// their own, so that the poll loop, other clients, the exporter and SIGTERM go on while they take
// their seconds. The run holds the OA unit (the session lock, and a journal of every register
// write) from the request until the checks end, then keeps the report until its client has
// fetched it. The checks themselves are src/run's, which this floor cannot call: oaprofd's main
// hands the service a SelftestRunner.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gpu/device.h"
#include "ipc/wire.h"
#include "power/energy_registry.h"
#include "session/unit.h"

namespace oaprof::daemon {

// What oaprofd lets a client's selftest do: the device it serves, the read-outs its sessions
// use, its own metric file and energy policy, and the device opened under its lock and journal.
struct SelftestJob {
  gpu::DeviceOptions device;          // the served device, as sessions open it
  bool quick = false;                 // the client's --quick
  std::vector<std::string> accesses;  // empty: every read-out the device has
  // The part's metric file in oaprofd's --metrics-dir, checked as a session's is; empty: none
  // (the read-outs then count the bare counters, and perf is not measured).
  std::filesystem::path metrics_xml;
  power::EnergyRoots energy_roots;
  bool lend_energy = true;  // false: oaprofd --energy off, and the energy check skips
  // Where the result is kept as selftest-<device>.json (oaprofd's --state-dir).
  std::filesystem::path state_dir;
  // Opens the device under the run's lock, every register write journaled.
  std::function<gpu::Device(gpu::DeviceOptions)> open_device;
  // Told each check as it starts; throws once the run is cancelled (its client went, oaprofd
  // stops), which ends the run between two checks.
  std::function<void(std::string_view check)> progress;
};

struct SelftestOutcome {
  std::string report_json;  // docs/selftest.md's report
  std::string kept;         // where the result was kept, or why it was not (the daemon's log)
  std::size_t checks = 0;
  std::size_t failed = 0;
};

using SelftestRunner = std::function<SelftestOutcome(const SelftestJob&)>;

class SelftestRun {
 public:
  // Starts `runner` on `job` on a thread, with `unit` (lock and journal, no device yet) held for
  // it until the checks end.
  SelftestRun(std::string holder, session::Unit unit, SelftestJob job,
              const SelftestRunner& runner);
  // Cancels and waits: at most the check that runs ends first.
  ~SelftestRun();
  SelftestRun(const SelftestRun&) = delete;
  SelftestRun& operator=(const SelftestRun&) = delete;

  void cancel() { cancelled_ = true; }
  // Whether the checks ended (the unit is free again), and the check running while not.
  bool done() const;
  std::string check() const;
  // Once done(): the report, or why there is none.
  const std::optional<SelftestOutcome>& outcome() const { return outcome_; }
  const std::optional<ipc::wire::Error>& error() const { return error_; }
  const std::string& holder() const { return holder_; }

 private:
  void run(SelftestJob job, const SelftestRunner& runner);

  std::string holder_;
  session::Unit unit_;  // the thread's until done
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mu_;
  bool done_ = false;
  std::string check_;
  std::optional<SelftestOutcome> outcome_;  // written by the thread before done_
  std::optional<ipc::wire::Error> error_;
  std::thread thread_;
};

}  // namespace oaprof::daemon
