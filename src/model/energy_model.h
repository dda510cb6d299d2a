// A per-event energy model of a GPU: energy = static W × t + Σ joules per event × events, the
// events being oa::energy_events of the generation, fitted from a calibration sweep (model/fit.h)
// and used to give every row an energy with an error bar (predict). docs/energy.md ("The energy
// model") describes the assumptions and model.json's schema.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "oa/delta.h"
#include "oa/platform.h"

namespace oaprof::model {

// One fitted term: static power (W, per second of window) or one event's energy (J per unit).
struct Coefficient {
  std::string name;  // "static_power" or the event's name
  std::string unit;  // "W", or the event's unit
  double value = 0;  // W, or J per unit
  double low = 0;    // the interval
  double high = 0;
  // False for an event the calibration never moved (e.g. SLM, which no catalogue kernel uses):
  // its value stays 0 and a row that has such events is extrapolated.
  bool calibrated = true;
  // The rates (units per second of window) the calibration saw, min and max.
  double rate_min = 0;
  double rate_max = 0;
};

struct KernelError {
  std::string kernel;
  double measured_j = 0;
  std::optional<double> modelled_j;  // nullopt when the fit without this kernel was impossible
};

struct EnergyModel {
  std::string device;    // "simulated" or the PCI address
  std::string platform;  // e.g. "KBL GT2"
  oa::Generation generation = oa::Generation::kGen9;
  std::string driver;      // "i915", "xe"
  std::string metric_set;  // whose counters the events read
  std::string energy;      // what was fitted: e.g. "igpu pkg-pp0-dram"
  double freq_min_mhz = 0;
  double freq_max_mhz = 0;
  Coefficient static_power;
  std::vector<Coefficient> events;  // in oa::energy_events order
  std::string interval_method;      // "residual bootstrap, 400 replicates, 95 %"
  double confidence = 0.95;
  std::vector<KernelError> residuals;  // the fit's own, per sample (summed per kernel)
  std::vector<KernelError> leave_one_out;
  double loo_rms_relative = 0;  // root mean square of (modelled − measured) / measured
};

nlohmann::json to_json(const EnergyModel& model);
// Throws std::invalid_argument naming the field for a document that is not a model.
EnergyModel model_from_json(const nlohmann::json& doc);

// A row's modelled energy.
struct Prediction {
  double energy_j = 0;
  double error_j = 0;
  // Why the figure is extrapolated (empty: it is not): an event outside the calibration's range,
  // an event the calibration never moved, another frequency, another metric set.
  std::vector<std::string> extrapolated;
};

// The energy of a row with these counter deltas over `duration_s` at `freq_mhz`, read with
// `metric_set`. The error combines each coefficient's interval (its half width times the row's
// events, added linearly: the coefficients are correlated) in quadrature with the model's
// leave-one-kernel-out relative error times the energy.
Prediction predict(const EnergyModel& model, const oa::CounterDeltas& deltas, double duration_s,
                   double freq_mhz, std::string_view metric_set);

}  // namespace oaprof::model
