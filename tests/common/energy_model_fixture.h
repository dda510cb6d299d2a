// A Gen9 energy model with round figures, for tests that predict or report with one: 1 W static
// (interval 0.9-1.1 W), 1 nJ per busy cycle (0.9-1.1 nJ), 10 pJ per GTI byte, every other event 0;
// calibrated at 1100-1200 MHz for busy rates up to 1.2e9/s and GTI rates up to 1e10 B/s; SLM never
// moved; 5 % leave-one-kernel-out error. And a model fitted to the simulator's own calibration
// sweep, as `oaprof model fit --device sim` fits it, once per platform and process.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "mmio/sim_gpu.h"
#include "model/energy_model.h"
#include "oa/energy_events.h"
#include "run/energy_calibration.h"

namespace oaprof::testing {

inline model::EnergyModel gen9_energy_model() {
  model::EnergyModel m;
  m.generation = oa::Generation::kGen9;
  m.platform = "KBL GT2";
  m.metric_set = "ComputeBasic";
  m.freq_min_mhz = 1100;
  m.freq_max_mhz = 1200;
  m.static_power = {"static_power", "W", 1.0, 0.9, 1.1, true, 1, 1};
  for (const oa::EnergyEvent& e : oa::energy_events(oa::Generation::kGen9)->events) {
    m.events.push_back({std::string(e.name), std::string(e.unit), 0, 0, 0, true, 0, 1e12});
  }
  m.events[0] = {"gpu_busy_cycles", "cycle", 1e-9, 0.9e-9, 1.1e-9, true, 0, 1.2e9};
  m.events[5].calibrated = false;  // slm_bytes
  m.events[7] = {"gti_bytes", "byte", 1e-11, 1e-11, 1e-11, true, 0, 1e10};
  m.loo_rms_relative = 0.05;
  return m;
}

// The fit of `platform`'s simulated calibration sweep (about 0.1 s the first time), or null where
// the simulator has no per-event energy table for the part (all but Gen9 and Gen12).
inline std::shared_ptr<const model::EnergyModel> fitted_sim_energy_model(
    const std::string& platform) {
  static std::map<std::string, std::shared_ptr<const model::EnergyModel>> fitted;
  auto& m = fitted[platform];
  if (!m && mmio::sim_energy_model(mmio::sim_platform_by_name(platform).gen)) {
    run::SimCalibrationOptions o;
    o.platform = platform;
    m = std::make_shared<const model::EnergyModel>(model::fit_energy_model(
        run::simulate_sweep(run::calibration_sweep(), o), run::simulated_identity(platform)));
  }
  return m;
}

}  // namespace oaprof::testing
