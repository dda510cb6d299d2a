// The fit of a per-event energy model (model/energy_model.h) to a calibration sweep: energy of each
// window against its length and its events, by non-negative least squares (ALGLIB's box-
// constrained QP, a kept library: Debian's Eigen 3.4.0 has no unsupported/Eigen/NNLS, which came
// after that release), with a residual bootstrap for each coefficient's interval and a
// leave-one-kernel-out prediction error.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/energy_model.h"

namespace oaprof::model {

// One measured window of a calibration kernel (or of the idle GPU).
struct Sample {
  std::string kernel;  // calibration kernels are left out of the fit one at a time by this name
  oa::CounterDeltas deltas;
  double window_s = 0;
  double energy_j = 0;  // the GPU's, by the run's formula
  double freq_mhz = 0;
};

// What the model is of: copied into it.
struct ModelIdentity {
  std::string device;
  std::string platform;
  oa::Generation generation = oa::Generation::kGen9;
  std::string driver;
  std::string metric_set;
  std::string energy;
};

struct FitOptions {
  int replicates = 400;  // bootstrap replicates
  double confidence = 0.95;
  std::uint64_t seed = 1;
};

// A sweep the model cannot be fitted from: too few kernels, events that move together, no
// events. The message says which and what to add.
class FitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

EnergyModel fit_energy_model(const std::vector<Sample>& samples, const ModelIdentity& identity,
                             const FitOptions& options = {});

}  // namespace oaprof::model
