// The simulator's per-event energy model: a TEST DOUBLE's model, never a measurement. The GPU's
// energy over a window is
//     E = static_w × t + Σ_k joules_per_event[k] × events_k
// where the events are exactly oa::energy_events(gen) (the counter events the model fit reads),
// counted whether or not the OA unit counts, and the dynamic part of each kernel launch is
// multiplied by a seeded factor 1 + noise × N(0, 1) (a launch's energy varies as a real part's
// does with temperature and voltage). The simulated RAPL tree and hwmon draw the GPU's power from
// it (power/sim_power.h: SimPowerModel::gpu_energy_j). One table per simulated platform below.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "oa/platform.h"

namespace oaprof::mmio {

struct SimEnergyModel {
  double static_w =
      0;  // the GPU's static power (the uncore plane's idle; package − cores keeps it)
  std::vector<double> joules_per_event;  // in oa::energy_events(gen) order
  double noise = 0;                      // relative standard deviation of a launch's dynamic energy
  std::uint64_t seed = 1;                // of the noise
};

// The table of the generation (Gen9 for KBL GT2, Gen12 for TGL GT2), or nullopt where the
// simulator has no per-event model (its RAPL tree then follows the GPU's activity).
std::optional<SimEnergyModel> sim_energy_model(oa::Generation gen);

}  // namespace oaprof::mmio
