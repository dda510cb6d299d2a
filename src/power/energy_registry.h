// Choosing the energy backend: one table of backends, one lookup by name, and the automatic order
// (xe-hwmon, powercap, perf, msr, papi: a discrete GPU's own sensors first, then the CPU's RAPL).
// Every root path is a parameter so tests and `--sysfs-root` point the backends at another tree.
// The profiler and `oaprof power` come through here.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "power/energy_source.h"
#include "power/perf_power.h"

namespace oaprof::power {

struct EnergyRoots {
  std::filesystem::path sysfs = "/sys";
  std::filesystem::path dev = "/dev";
  // Where procfs is: the msr backend reads the CPU model from its cpuinfo.
  std::filesystem::path proc = "/proc";
  // Where the sim backend keeps its powercap tree; empty: a private temporary directory.
  std::filesystem::path sim_dir;
  // The perf_event_open seam; empty: the real system calls.
  std::function<std::unique_ptr<PerfEventSyscalls>()> perf_syscalls;
  // The profiled GPU's PCI address ("0000:03:00.0"), where the xe-hwmon backend looks for its
  // sensors; empty: no GPU named (the simulator), and xe-hwmon says so.
  std::string gpu_pci_address;

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
  bool simulated;  // a model (the simulated RAPL tree), never a measurement
};

// xe-hwmon, powercap, perf, msr, papi, sim, none, in that order.
std::span<const EnergyBackendInfo> energy_backends();

// Whether the backend of that name is a model rather than a reading of hardware (false for an
// unknown name).
bool is_simulated_energy_backend(std::string_view name);

// Simulated energy beside a real GPU would read as that GPU's measured power: throws
// std::invalid_argument, saying what to use instead, when `name` is a simulated backend and the
// device is not simulated. The profiler and oaprofd both ask before they open the backend.
void check_energy_backend_for_device(std::string_view name, bool device_simulated,
                                     std::string_view device_label);

// `name`: auto | xe-hwmon | powercap | perf | msr | papi | sim | none. Returns nullptr for "none".
// Throws std::invalid_argument for an unknown name (listing the valid ones), std::runtime_error
// when the named backend — for "auto", every automatic one — cannot be used, with each one's
// reason.
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
