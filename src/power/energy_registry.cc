#include "power/energy_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <utility>
#include <vector>

#include "power/hwmon.h"
#include "power/msr.h"
#include "power/papi_source.h"
#include "power/powercap.h"
#include "power/sim_hwmon.h"
#include "power/sim_power.h"

namespace oaprof::power {
namespace {

constexpr auto kCpu = EnergyScope::kCpuPackage;
constexpr auto kCard = EnergyScope::kGpuCard;

constexpr EnergyBackendInfo kBackends[] = {
    {"hwmon",
     "a discrete GPU's own energy sensors (i915's or xe's hwmon energy*_input: the GPU package, "
     "and the card with xe; readable by every user; integrated GPUs have none)",
     true, false, kCard},
    {"powercap", "RAPL through /sys/class/powercap (energy_uj is root-only since Linux 5.10)", true,
     false, kCpu},
    {"perf", "the perf power PMU (needs root, CAP_PERFMON or perf_event_paranoid <= 0)", true,
     false, kCpu},
    {"msr", "RAPL MSRs through /dev/cpu/N/msr (needs root and the msr module)", true, false, kCpu},
    {"papi", "PAPI's rapl or powercap component (when PAPI has one)", true, false, kCpu},
    {"sim",
     "a simulated RAPL tree driven by the simulated GPU (a model, not a measurement; only with "
     "--device sim and an integrated simulated part)",
     false, true, kCpu},
    {"sim-hwmon",
     "a simulated discrete card's hwmon driven by the simulated GPU (a model, not a measurement; "
     "only with --device sim and a discrete simulated part)",
     false, true, kCard},
    {"none", "no energy: power columns stay empty", false, false, EnergyScope::kNothing},
};

// Former names, still accepted.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {{"xe-hwmon", "hwmon"}};

const EnergyBackendInfo* find_backend(std::string_view name) {
  const std::string_view canonical = canonical_energy_backend(name);
  for (const auto& b : kBackends) {
    if (b.name == canonical) return &b;
  }
  return nullptr;
}

// A PCI address only: it becomes a path component under sysfs, never a way out of
// bus/pci/devices.
void check_pci_address(const std::string& address) {
  if (address.empty()) {
    throw std::runtime_error("no GPU named to read the sensors of (give its PCI address)");
  }
  const bool address_chars =
      address.find_first_not_of("0123456789abcdefABCDEF:.") == std::string::npos;
  if (!address_chars || address.find("..") != std::string::npos) {
    throw std::runtime_error(fmt::format("'{}' is not a PCI address like 0000:03:00.0", address));
  }
}

std::unique_ptr<EnergySource> open_backend(std::string_view name, const EnergyRoots& roots) {
  if (name == "hwmon") {
    check_pci_address(roots.gpu_pci_address);
    return std::make_unique<HwmonSource>(roots.gpu_device_dir());
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
  if (name == "sim") {
    SimPowerModel model;
    model.gpu_energy_j = roots.sim_gpu_energy_j;
    return std::make_unique<SimEnergySource>(roots.sim_dir, model);
  }
  if (name == "sim-hwmon") {
    SimHwmonModel model;
    model.driver = roots.sim_gpu_driver;
    model.gpu_energy_j = roots.sim_gpu_energy_j;
    return std::make_unique<SimHwmonSource>(roots.sim_dir, model);
  }
  return nullptr;  // none
}

const EnergyBackendInfo& require_backend(std::string_view name) {
  if (const EnergyBackendInfo* b = find_backend(name)) return *b;
  std::vector<std::string_view> valid{"auto"};
  for (const auto& b : kBackends) valid.push_back(b.name);
  throw std::invalid_argument(
      fmt::format("unknown energy source '{}': use one of {}", name, fmt::join(valid, ", ")));
}

std::string no_source_message(GpuPlacement placement, const std::vector<std::string>& reasons) {
  if (placement == GpuPlacement::kDiscrete) {
    return fmt::format(
        "no energy source for the discrete card could be opened, so power figures stay empty "
        "({}). RAPL (powercap, perf, msr, papi) is not tried: its planes are the CPU package's "
        "and never include a discrete card",
        fmt::join(reasons, "; "));
  }
  return fmt::format(
      "no energy source could be opened, so power figures stay empty ({}). On a machine with "
      "RAPL run oaprof as root (sudo) or through oaprofd; in a virtual machine there is none: "
      "use --energy none",
      fmt::join(reasons, "; "));
}

std::unique_ptr<EnergySource> open_automatic(const EnergyRoots& roots) {
  std::vector<std::string> reasons;
  for (const EnergyBackendInfo* b : automatic_energy_backends(roots)) {
    try {
      return open_backend(b->name, roots);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      const std::string label = fmt::format("{}: ", b->name);
      reasons.push_back(what.rfind(label, 0) == 0 ? what : label + what);
    }
  }
  throw std::runtime_error(no_source_message(roots.gpu_placement, reasons));
}

}  // namespace

std::span<const EnergyBackendInfo> energy_backends() { return kBackends; }

std::vector<const EnergyBackendInfo*> automatic_energy_backends(const EnergyRoots& roots) {
  std::vector<const EnergyBackendInfo*> out;
  for (const auto& b : kBackends) {
    const bool fits = roots.gpu_placement == GpuPlacement::kUnknown ||
                      b.measures == (roots.gpu_placement == GpuPlacement::kDiscrete ? kCard : kCpu);
    if (b.automatic && fits) out.push_back(&b);
  }
  return out;
}

std::string_view canonical_energy_backend(std::string_view name) {
  if (name == "auto") return name;
  for (const auto& [alias, canonical] : kAliases) {
    if (alias == name) return canonical;
  }
  for (const auto& b : kBackends) {
    if (b.name == name) return b.name;
  }
  return {};
}

bool is_simulated_energy_backend(std::string_view name) {
  const EnergyBackendInfo* b = find_backend(name);
  return b != nullptr && b->simulated;
}

void check_energy_backend_for_device(std::string_view name, const EnergyDevice& device) {
  const EnergyBackendInfo* b = find_backend(name);
  if (b == nullptr) return;  // auto, or unknown: said where the name is checked
  if (b->simulated && !device.simulated) {
    throw std::invalid_argument(fmt::format(
        "--energy {} is a simulated {}, a model: beside a real GPU ({}) its figures would read "
        "as that GPU's measured power; use --energy auto (or hwmon, powercap, perf, msr, papi, "
        "none), or --device sim to run on the simulator",
        name, b->measures == kCard ? "card's hwmon" : "RAPL tree", device.label));
  }
  const std::string_view card = device.simulated ? "sim-hwmon" : "hwmon";
  if (b->measures == kCpu && device.placement == GpuPlacement::kDiscrete) {
    throw std::invalid_argument(fmt::format(
        "--energy {} reads the CPU package's RAPL planes, which never include a discrete card: "
        "beside {} (a discrete card) its figures would read as the card's power; use --energy "
        "auto or {} (the card's own sensors), or --energy none",
        name, device.label, card));
  }
  if (b->measures == kCard && device.placement == GpuPlacement::kIntegrated) {
    throw std::invalid_argument(fmt::format(
        "--energy {} reads a discrete card's own sensors, and {} is an integrated GPU, for which "
        "i915 and xe register none: its power is in the CPU's RAPL planes; use --energy auto (or "
        "{})",
        name, device.label, device.simulated ? "sim" : "powercap, perf, msr, papi"));
  }
}

std::unique_ptr<EnergySource> make_energy_source(std::string_view name, const EnergyRoots& roots) {
  if (name == "auto") return open_automatic(roots);
  const EnergyBackendInfo& backend = require_backend(name);
  // Whether the device is simulated is the caller's to check (it knows the device); here only
  // the placement, which the roots carry.
  check_energy_backend_for_device(backend.name,
                                  {backend.simulated, roots.gpu_placement, roots.gpu_pci_address});
  try {
    return open_backend(backend.name, roots);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("--energy {}: {}", name, e.what()));
  }
}

EnergyChoice choose_energy_source(std::string_view name, const EnergyRoots& roots) {
  if (name != "auto") (void)require_backend(name);
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
