#include "mmio/sim_energy.h"

namespace oaprof::mmio {

// Round figures of the size published for such parts (a few W at full load, tens of pJ per byte
// to memory), chosen only so that each term is visible in a calibration sweep. In
// oa::energy_events order.
std::optional<SimEnergyModel> sim_energy_model(oa::Generation gen) {
  switch (gen) {
    case oa::Generation::kGen9:
      // gpu_busy_cycles, eu_active, fpu0, fpu1, send, slm, l3, gti
      return SimEnergyModel{
          1.4, {1.2e-9, 4.0e-11, 7.0e-11, 6.0e-11, 5.0e-11, 2e-12, 6e-12, 3e-11}, 0.03, 0x5eed9};
    case oa::Generation::kGen12:
      // gpu_busy_cycles, eu_active, slm, l3, gti
      return SimEnergyModel{1.8, {1.6e-9, 9.0e-11, 1.5e-12, 5e-12, 2.5e-11}, 0.03, 0x5eed12};
    default:
      return std::nullopt;
  }
}

}  // namespace oaprof::mmio
