#include "gpu/device.h"

#include <stdexcept>

#include <fmt/format.h>

#include "mmio/pci_bar.h"

namespace oaprof::gpu {

std::string Device::label() const { return simulated() ? "simulated" : mmio->describe(); }

Device open_device(const DeviceOptions& options) {
  Device d;
  if (options.spec == "sim") {
    d.clock = std::make_unique<mmio::SteadyClock>();
    auto sim = std::make_unique<mmio::SimGpu>(options.sim, *d.clock);
    d.sim = sim.get();
    d.platform = options.sim.platform;
    d.pci_id = oa::kSimulatedPciId;
    d.mmio = std::move(sim);
    return d;
  }
  const mmio::PciAddress addr =
      mmio::parse_pci_address(options.spec == "auto" ? "0000:00:02.0" : options.spec);
  auto bar = std::make_unique<mmio::PciBar>(addr);
  const auto platform = oa::platform_for_pci_id(bar->identity().device);
  if (!platform) {
    throw std::runtime_error(fmt::format(
        "{} is an Intel GPU with PCI id 0x{:04x}, which oaprof does not know; please report it, "
        "and use --device sim meanwhile", addr.str(), bar->identity().device));
  }
  d.platform = *platform;
  d.pci_id = bar->identity().device;
  d.mmio = std::move(bar);
  return d;
}

}  // namespace oaprof::gpu
