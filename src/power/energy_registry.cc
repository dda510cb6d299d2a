#include "power/energy_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <vector>

#include "power/msr.h"
#include "power/papi_source.h"
#include "power/powercap.h"
#include "power/sim_power.h"
#include "power/xe_hwmon.h"

namespace oaprof::power {
namespace {

constexpr EnergyBackendInfo kBackends[] = {
    {"xe-hwmon",
     "a discrete xe GPU's own energy sensors (hwmon energy*_input, card and GPU package; "
     "readable by every user; integrated GPUs have none)",
     true, false},
    {"powercap", "RAPL through /sys/class/powercap (energy_uj is root-only since Linux 5.10)", true,
     false},
    {"perf", "the perf power PMU (needs root, CAP_PERFMON or perf_event_paranoid <= 0)", true,
     false},
    {"msr", "RAPL MSRs through /dev/cpu/N/msr (needs root and the msr module)", true, false},
    {"papi", "PAPI's rapl or powercap component (when PAPI has one)", true, false},
    {"sim",
     "a simulated RAPL tree driven by the simulated GPU (a model, not a measurement; only with "
     "--device sim)",
     false, true},
    {"none", "no energy: power columns stay empty", false, false},
};

std::unique_ptr<EnergySource> open_backend(std::string_view name, const EnergyRoots& roots) {
  if (name == "xe-hwmon") {
    if (roots.gpu_pci_address.empty()) {
      throw std::runtime_error("no GPU named to read the sensors of (give its PCI address)");
    }
    // A path component under sysfs: a PCI address only, never a way out of bus/pci/devices.
    const bool address_chars =
        roots.gpu_pci_address.find_first_not_of("0123456789abcdefABCDEF:.") == std::string::npos;
    if (!address_chars || roots.gpu_pci_address.find("..") != std::string::npos) {
      throw std::runtime_error(
          fmt::format("'{}' is not a PCI address like 0000:03:00.0", roots.gpu_pci_address));
    }
    return std::make_unique<XeHwmonSource>(roots.gpu_device_dir());
  }
  if (name == "powercap") return std::make_unique<PowercapSource>(roots.powercap_dir());
  if (name == "perf") {
    return std::make_unique<PerfPowerSource>(
        roots.perf_pmu_dir(),
        roots.perf_syscalls ? roots.perf_syscalls() : make_perf_event_syscalls());
  }
  if (name == "msr") {
    return std::make_unique<MsrSource>(roots.dev_cpu_dir(), roots.cpu_dir(), roots.cpuinfo());
  }
  if (name == "papi") return make_papi_source(roots.powercap_dir());
  if (name == "sim") return std::make_unique<SimEnergySource>(roots.sim_dir);
  return nullptr;  // none
}

void check_name(std::string_view name) {
  if (name == "auto") return;
  std::vector<std::string_view> valid{"auto"};
  for (const auto& b : kBackends) {
    if (b.name == name) return;
    valid.push_back(b.name);
  }
  throw std::invalid_argument(
      fmt::format("unknown energy source '{}': use one of {}", name, fmt::join(valid, ", ")));
}

}  // namespace

std::span<const EnergyBackendInfo> energy_backends() { return kBackends; }

bool is_simulated_energy_backend(std::string_view name) {
  for (const auto& b : kBackends) {
    if (b.name == name) return b.simulated;
  }
  return false;
}

void check_energy_backend_for_device(std::string_view name, bool device_simulated,
                                     std::string_view device_label) {
  if (device_simulated || !is_simulated_energy_backend(name)) return;
  throw std::invalid_argument(fmt::format(
      "--energy {} is a simulated RAPL tree, a model: beside a real GPU ({}) its figures would "
      "read as that GPU's measured power; use --energy auto (or xe-hwmon, powercap, perf, msr, "
      "papi, none), or --device sim to run on the simulator",
      name, device_label));
}

std::unique_ptr<EnergySource> make_energy_source(std::string_view name, const EnergyRoots& roots) {
  check_name(name);
  if (name != "auto") {
    try {
      return open_backend(name, roots);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format("--energy {}: {}", name, e.what()));
    }
  }
  std::vector<std::string> reasons;
  for (const auto& b : kBackends) {
    if (!b.automatic) continue;
    try {
      return open_backend(b.name, roots);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      const std::string label = fmt::format("{}: ", b.name);
      reasons.push_back(what.rfind(label, 0) == 0 ? what : label + what);
    }
  }
  throw std::runtime_error(fmt::format(
      "no energy source could be opened, so power figures stay empty ({}). On a machine with "
      "RAPL run oaprof as root (sudo) or through oaprofd; in a virtual machine there is none: "
      "use --energy none",
      fmt::join(reasons, "; ")));
}

EnergyChoice choose_energy_source(std::string_view name, const EnergyRoots& roots) {
  check_name(name);
  EnergyChoice choice;
  if (name == "none") {
    choice.reason = "energy not measured (--energy none)";
    return choice;
  }
  try {
    choice.source = make_energy_source(name, roots);
  } catch (const std::runtime_error& e) {
    choice.reason = e.what();
  }
  return choice;
}

}  // namespace oaprof::power
