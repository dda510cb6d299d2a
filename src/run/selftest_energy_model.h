// Private to src/run: the selftest's quick calibration check of an energy model (issue 35). Given
// the model.json `oaprof model fit` wrote (--energy-model), a few windows of known work (catalogue
// kernels at two sizes and an idle window) are measured through the selftest's read-out and energy
// planes, and each window's energy is predicted from its own counters and judged as a profile's
// rows judge theirs (report::row_energy, energy_model_disagrees).
#pragma once

#include <optional>

#include "mmio/sim_energy.h"
#include "run/selftest_checks.h"

namespace oaprof::run::selftest {

Outcome check_energy_model(Context& c);

// The simulator's per-event energy table of `gen` with the energy of a busy GPU cycle doubled, for
// the energy-model-drift fault: the part no longer draws what a model fitted before says. nullopt
// where the simulator has no table for `gen`.
std::optional<mmio::SimEnergyModel> drifted_sim_energy_model(oa::Generation gen);

}  // namespace oaprof::run::selftest
