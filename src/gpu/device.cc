#include "gpu/device.h"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "mmio/pci_bar.h"

namespace oaprof::gpu {

Device& Device::operator=(Device&& other) noexcept {
  if (this == &other) return *this;
  forcewake.reset();
  mmio.reset();  // before the clock a simulator reads
  clock = std::move(other.clock);
  mmio = std::move(other.mmio);
  sim = std::exchange(other.sim, nullptr);
  platform = other.platform;
  pci_id = other.pci_id;
  forcewake = std::move(other.forcewake);
  render_node = std::move(other.render_node);
  drm_card_sysfs = std::move(other.drm_card_sysfs);
  perf_period_exponent = other.perf_period_exponent;
  return *this;
}

std::string Device::label() const { return simulated() ? "simulated" : mmio->describe(); }

Device make_sim_device(std::unique_ptr<mmio::Clock> clock, const mmio::SimConfig& config) {
  Device d;
  auto sim = std::make_unique<mmio::SimGpu>(config, *clock);
  d.sim = sim.get();
  d.platform = config.platform;
  d.pci_id = oa::kSimulatedPciId;
  d.clock = std::move(clock);
  d.mmio = std::move(sim);
  return d;
}

Device open_device(const DeviceOptions& options) {
  Device d;
  if (options.spec == "sim") {
    d = make_sim_device(std::make_unique<mmio::SteadyClock>(), options.sim);
    mmio::ForcewakeOptions fw = options.forcewake;
    if (fw.mode != mmio::ForcewakeMode::kNone) fw.mode = mmio::ForcewakeMode::kRegisters;
    d.forcewake = mmio::Forcewake::acquire(*d.mmio, fw);
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
  d.forcewake = mmio::Forcewake::acquire(*d.mmio, options.forcewake);
  d.render_node = options.render_node;
  d.drm_card_sysfs = options.drm_card_sysfs;
  d.perf_period_exponent = options.perf_period_exponent;
  return d;
}

}  // namespace oaprof::gpu
