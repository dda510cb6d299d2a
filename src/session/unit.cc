#include "session/unit.h"

#include <utility>

namespace oaprof::session {

Unit reserve_unit(const UnitFiles& files, const std::string& holder,
                  const gpu::DeviceOptions& device,
                  const std::function<void(const std::string&)>& note) {
  Unit unit;
  std::string busy;
  unit.lock = SessionLock::try_acquire(files.lock, holder, &busy);
  if (!unit.lock) throw UnitBusy(busy);
  // A state file found under the lock is a dead holder's (a run killed, or a session whose
  // restore failed): its registers go back before a new journal replaces it.
  if (auto done = restore_state_file(files.state, device)) note(*done);
  unit.journal = std::make_unique<SessionJournal>(files.state,
                                                  StateContents{device.spec.str(), {}, holder, {}});
  return unit;
}

gpu::Device open_journaled(const Unit& unit, gpu::DeviceOptions device) {
  // The journal sits next to the registers: whatever the caller's wrapper writes through it is
  // journaled before it reaches them.
  device.wrap_mmio = [journal = unit.journal.get(),
                      outer = std::move(device.wrap_mmio)](std::unique_ptr<mmio::Mmio> inner) {
    std::unique_ptr<mmio::Mmio> journaled = journal->wrap(std::move(inner));
    return outer ? outer(std::move(journaled)) : std::move(journaled);
  };
  return gpu::open_device(device);
}

Unit take_unit(const UnitFiles& files, const std::string& holder, gpu::DeviceOptions device,
               const std::function<void(const std::string&)>& note) {
  Unit unit = reserve_unit(files, holder, device, note);
  try {
    unit.device = open_journaled(unit, std::move(device));
  } catch (...) {
    // Only the device wrote registers so far (forcewake), and it put them back as it failed.
    unit.mark_restored();
    throw;
  }
  return unit;
}

Unit open_private_unit(const gpu::DeviceOptions& device) {
  Unit unit;
  unit.device = gpu::open_device(device);
  return unit;
}

std::string energy_backend_for(std::string_view requested, bool device_simulated,
                               bool device_discrete) {
  if (requested == "auto" && device_simulated) return device_discrete ? "sim-hwmon" : "sim";
  return std::string(requested);
}

power::EnergyDevice energy_device(const gpu::Device& device) {
  return {
      device.simulated(),
      device.platform.discrete ? power::GpuPlacement::kDiscrete : power::GpuPlacement::kIntegrated,
      device.label()};
}

void aim_energy_roots(power::EnergyRoots& roots, const gpu::Device& device) {
  roots.gpu_pci_address = device.pci_address;  // empty for the simulator
  roots.gpu_placement = energy_device(device).placement;
  roots.sim_gpu_driver = std::string(oa::kernel_driver_name(device.platform.driver));
  if (mmio::SimGpu* sim = device.sim; sim != nullptr && sim->energy_model()) {
    // The simulated GPU's per-event energy model feeds the simulated planes (sim_energy.h), for
    // `sudo oaprof` and oaprofd alike. The source made from `roots` must not outlive `device`.
    roots.sim_gpu_energy_j = [sim] { return sim->gpu_energy_j(); };
  }
}

}  // namespace oaprof::session
