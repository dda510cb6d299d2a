// Choosing the energy backend: one table of backends, one lookup by name, and the automatic order
// (hwmon, powercap, perf, msr, papi: a discrete GPU's own sensors, then the CPU's RAPL), narrowed
// by where the GPU sits: a discrete card is measured by its own sensors only, since RAPL's planes
// are the CPU package's and never include it; an integrated GPU by RAPL only, since it has no
// hwmon. Every root path is a parameter so tests and `--sysfs-root` point the backends at
// another tree. The profiler, oaprofd, `oaprof power` and `oaprof doctor` come through here.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "power/energy_source.h"
#include "power/perf_power.h"
#include "power/sim_power.h"

namespace oaprof::power {

// Where the profiled GPU sits, as far as the caller knows (oa::Platform::discrete, from its PCI
// id): a card of its own, part of the CPU's package, or not known (no GPU named).
enum class GpuPlacement { kUnknown, kIntegrated, kDiscrete };

// What a backend's figures are the energy of.
enum class EnergyScope {
  kCpuPackage,  // the CPU package's RAPL planes (real or simulated): an integrated GPU's power
  kGpuCard,     // a discrete card's own sensors (real or simulated hwmon)
  kNothing,     // none
};

struct EnergyRoots {
  std::filesystem::path sysfs = "/sys";
  std::filesystem::path dev = "/dev";
  // Where procfs is: the msr backend reads the CPU model from its cpuinfo.
  std::filesystem::path proc = "/proc";
  // Where the sim backend keeps its powercap tree; empty: a private temporary directory.
  std::filesystem::path sim_dir;
  // The perf_event_open seam; empty: the real system calls.
  std::function<std::unique_ptr<PerfEventSyscalls>()> perf_syscalls;
  // The profiled GPU's PCI address ("0000:03:00.0"), where the hwmon backend looks for its
  // sensors; empty: no GPU named (the simulator), and hwmon says so.
  std::string gpu_pci_address;
  // Narrows "auto" and refuses a backend that does not measure such a GPU (make_energy_source).
  GpuPlacement gpu_placement = GpuPlacement::kUnknown;
  // The simulated card's driver, "i915" or "xe", whose hwmon layout sim-hwmon models.
  std::string sim_gpu_driver = "xe";
  // The simulated GPU's per-event energy model, which sim and sim-hwmon then draw the GPU's
  // power from (SimPowerModel::gpu_energy_j); empty: they follow its activity.
  GpuEnergyJ sim_gpu_energy_j;

  std::filesystem::path powercap_dir() const { return sysfs / "class" / "powercap"; }
  std::filesystem::path perf_pmu_dir() const {
    return sysfs / "bus" / "event_source" / "devices" / "power";
  }
  std::filesystem::path cpu_dir() const { return sysfs / "devices" / "system" / "cpu"; }
  std::filesystem::path dev_cpu_dir() const { return dev / "cpu"; }
  std::filesystem::path cpuinfo() const { return proc / "cpuinfo"; }
  std::filesystem::path gpu_device_dir() const {
    return sysfs / "bus" / "pci" / "devices" / gpu_pci_address;
  }
};

struct EnergyBackendInfo {
  std::string_view name;
  std::string_view description;
  bool automatic;  // tried by "auto", in table order
  bool simulated;  // a model (a simulated RAPL tree or hwmon), never a measurement
  EnergyScope measures;
};

// hwmon, powercap, perf, msr, papi, sim, sim-hwmon, none, in that order.
std::span<const EnergyBackendInfo> energy_backends();

// The backends "auto" tries, in order, for a GPU placed as `roots.gpu_placement` says: a
// discrete card's own sensors only (hwmon), an integrated GPU's RAPL only (powercap, perf, msr,
// papi), and all of them, hwmon first, when the placement is not known.
std::vector<const EnergyBackendInfo*> automatic_energy_backends(const EnergyRoots& roots);

// The table's name for a backend name a user may give: itself, or for a former name the new one
// ("xe-hwmon" is "hwmon", so scripts written for it keep working); empty for an unknown name.
std::string_view canonical_energy_backend(std::string_view name);

// Whether the backend of that name is a model rather than a reading of hardware (false for an
// unknown name).
bool is_simulated_energy_backend(std::string_view name);

// The device whose energy a backend is asked for.
struct EnergyDevice {
  bool simulated = false;
  GpuPlacement placement = GpuPlacement::kUnknown;
  std::string label;  // how messages name it: "--device sim", "0000:03:00.0"
};

// Throws std::invalid_argument, saying what to use instead, for a backend whose figures would be
// taken for the device's power and are not: a simulated backend beside a real GPU; the CPU's RAPL
// (powercap, perf, msr, papi, sim) for a discrete card, whose power RAPL never includes; a card's
// sensors (hwmon, sim-hwmon) for an integrated GPU, which has none. "auto", "none" and an
// unknown placement pass. The profiler and oaprofd ask before they open the backend.
void check_energy_backend_for_device(std::string_view name, const EnergyDevice& device);

// `name`: auto | hwmon (or xe-hwmon) | powercap | perf | msr | papi | sim | sim-hwmon | none.
// Returns nullptr for "none". "auto" tries the automatic backends that measure a GPU placed as
// `roots.gpu_placement` says (all of them when unknown). Throws std::invalid_argument for an
// unknown name (listing the valid ones) and for a backend check_energy_backend_for_device refuses
// for that placement, std::runtime_error when the named backend — for "auto", every one it tries
// — cannot be used, with each one's reason.
std::unique_ptr<EnergySource> make_energy_source(std::string_view name,
                                                 const EnergyRoots& roots = {});

// The profiler's form: a missing energy source is not fatal. `source` is null when none could be
// opened (or "none" was asked for), and `reason` then says why and what to do. Still throws
// std::invalid_argument for an unknown name.
struct EnergyChoice {
  std::unique_ptr<EnergySource> source;
  std::string reason;
};
EnergyChoice choose_energy_source(std::string_view name, const EnergyRoots& roots = {});

}  // namespace oaprof::power
