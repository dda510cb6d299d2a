// `oaprof selftest`: a fixed list of checks that measure, through oaprof's own code paths, whether
// each assumption oaprof makes about the hardware holds on this device, so that owners of a real
// Intel GPU can settle what the simulator can only repeat. Each check says what it assumes, what
// it measured, the tolerance and its verdict; the simulator's fault knobs (SimFault) show that
// each check can fail. The subcommand (tools/oaprof/selftest_command.cc) only parses and prints.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/device.h"
#include "model/energy_model.h"
#include "power/energy_registry.h"
#include "run/selftest_firmware.h"

namespace oaprof::run::selftest {

// The version of the JSON report's layout (docs/selftest.md); raised when a field changes meaning
// or goes away, not when one is added.
inline constexpr int kSchemaVersion = 1;

enum class Verdict { kPass, kFail, kSkip };

std::string_view verdict_name(Verdict verdict);  // "pass", "fail", "skip"

// One number a check measured, for the report.
struct Figure {
  std::string name;  // "ratio_min"
  double value = 0;
  std::string unit;  // "Hz", "", "uJ"
};

struct CheckResult {
  std::string name;       // "clocks"
  std::string group;      // "identity", "clocks", …: the groups (docs/selftest.md)
  std::string assumes;    // one sentence: what oaprof takes for granted
  std::string tolerance;  // how far the measurement may be off and still pass
  Verdict verdict = Verdict::kSkip;
  std::string measurement = {};  // what was found, one line
  std::string reason = {};       // why it failed or was skipped; empty when it passed
  std::vector<Figure> figures = {};
};

// The simulator's faults: each makes the simulated hardware unlike one assumption, and so fails
// exactly the check named beside it.
enum class SimFault {
  kOaTimestampShift,
  kFlexMisrouted,
  kForcewakeNeverAcks,
  kRegisterNotRestored,
  kRaplStuck,
  kFusedEus,
  kGpuTicksClock,
  kConfigRejected,
  kNoaSlowSettle,
  kCtxImageStale,
  kPeriodicCountsDoubled,
  kActFreqMismatch,
  kHwmonStuck,
  kFpuCountHalved,
  kEuActiveUndercount,
  kGtiBytesLost,
  kRenderCounterLeak,
  kEnergyModelDrift,
};

struct SimFaultInfo {
  SimFault fault;
  std::string_view name;   // "oa-timestamp-shift", as --sim-fault takes it
  std::string_view check;  // the check it fails
  std::string_view what;   // what the simulated hardware then does
};

std::span<const SimFaultInfo> sim_faults();
// The checks' names, in the order they run ("topology", ..., "energy-model").
std::vector<std::string_view> check_names();
// Throws std::invalid_argument listing the valid names.
SimFault parse_sim_fault(std::string_view name);
const SimFaultInfo& sim_fault_info(SimFault fault);

// Where the simulator's busy windows get their work (tests): from the model alone, as on every
// run (kModel); also from kernel_runner started as on real hardware (kModelAndProcess); or from
// that process alone, which the simulated GPU does not see (kProcessOnly: a load the counters
// miss).
enum class SimLoad { kModel, kModelAndProcess, kProcessOnly };

struct SelftestOptions {
  // The device (spec sim or a PCI address) and how to open it; for the simulator its SimConfig.
  gpu::DeviceOptions device;
  // The read-outs to measure through ("mmio", "rpc", "perf"); empty: every one the device has.
  std::vector<std::string> accesses;
  // Fewer and shorter windows: a first answer in seconds.
  bool quick = false;
  std::vector<SimFault> faults;  // simulator only
  // The metric set read-outs are programmed with where one is found (perf needs one with a guid);
  // --metrics-xml names its file, else the platform's own file on the search path.
  std::string metric_set = "ComputeBasic";
  std::string metrics_xml;
  // The energy backend ("auto" on hardware; the simulator uses its own RAPL tree).
  std::string energy = "auto";
  power::EnergyRoots energy_roots;
  // Where the driver's debugfs is mounted, for the GuC and HuC versions (run/selftest_firmware.h).
  std::filesystem::path debugfs_root = "/sys/kernel/debug";
  // --energy-model: the model the energy-model check judges (run/energy_model_file.h reads it as
  // the invoking user); null: that check skips.
  std::shared_ptr<const model::EnergyModel> energy_model;
  // Windows per measurement and their length; 0: the quick or full run's (3 of 20 ms, 8 of
  // 100 ms). Tests shorten them: every bound a check applies holds for any window.
  int windows = 0;
  std::uint64_t window_ns = 0;
  // The directory of the kernel_runner the selftest starts: the counters checks' known work, on
  // every device (run/selftest_known_work.h), and the GPU load of busy windows on real hardware
  // (run/selftest_load.h); empty: beside oaprof (run/kernel_runner_path.h).
  std::filesystem::path kernel_runner_dir;
  SimLoad sim_load = SimLoad::kModel;
  // Set where no GPU load may be started at all, with the reason a check then gives (oaprofd's
  // selftest for a client: it starts no program for one).
  std::optional<std::string> no_load;
  // Told a line before each check starts, for progress on stderr. What it throws ends the run
  // there (oaprofd cancels a selftest whose client went so), as a failed open does.
  std::function<void(std::string_view)> progress;
  // How the device is opened from the options run_selftest made (its own wrap_mmio included);
  // unset: gpu::open_device. oaprofd opens it under its session lock with every register write
  // journaled (session::open_journaled).
  std::function<gpu::Device(gpu::DeviceOptions)> open_device;
  // Checks not run, each with the reason its skip gives: oaprofd's selftest for a group member
  // skips those that need more than its sessions grant (docs/selftest.md, "Through oaprofd").
  std::map<std::string, std::string, std::less<>> skip_checks;
};

struct SelftestReport {
  std::string device;    // "simulated KBL GT2 (24 EUs, 1150 MHz)" or the PCI label
  std::string platform;  // "KBL GT2 (Gen9)"
  // The device the result is kept for (run/selftest_result.h): its PCI address, or
  // sim-<PCI id>-<driver> for the simulator.
  std::string device_key;
  std::uint16_t pci_id = 0;
  bool simulated = false;
  std::string kernel;    // uname's release, "" where unreadable
  std::string driver;    // "i915", "xe" and its module version where sysfs says
  std::string firmware;  // "GuC 70.29.2, HuC 8.5.4" (or "unknown") in one line
  FirmwareVersion guc;   // each with its path and status, or why it is unknown
  FirmwareVersion huc;
  std::vector<std::string> accesses;  // the read-outs measured
  std::vector<std::string> faults;    // the simulator's faults given
  bool quick = false;
  std::vector<CheckResult> checks;
};

// Runs kernel_runner's known work for the counters checks (each run opening the GPU as a profile
// does), then opens the device and runs every check in order. Throws std::runtime_error (set-up)
// when the device cannot be opened, and std::invalid_argument for a fault on a real device or a
// bad SUDO_UID.
SelftestReport run_selftest(const SelftestOptions& options);

bool any_failed(const SelftestReport& report);

// The report as docs/selftest.md documents it.
nlohmann::json report_json(const SelftestReport& report, std::string_view oaprof_version);

// The terminal table: one line per check, the reason under failures and skips.
std::string report_table(const SelftestReport& report);

}  // namespace oaprof::run::selftest
