#include "model/energy_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "oa/energy_events.h"

namespace oaprof::model {
namespace {

using json = nlohmann::json;

constexpr std::string_view kSchema = "oaprof-energy-model/1";
// A frequency this close to the calibration's range counts as inside it (the average clock of a
// window wobbles by a few MHz).
constexpr double kFrequencySlack = 0.02;

json coefficient_json(const Coefficient& c) {
  return {{"name", c.name},
          {"unit", c.unit},
          {"value", c.value},
          {"interval", {c.low, c.high}},
          {"calibrated", c.calibrated},
          {"calibration_rate_per_s", {c.rate_min, c.rate_max}}};
}

Coefficient coefficient_from(const json& j) {
  Coefficient c;
  c.name = j.at("name").get<std::string>();
  c.unit = j.at("unit").get<std::string>();
  c.value = j.at("value").get<double>();
  c.low = j.at("interval").at(0).get<double>();
  c.high = j.at("interval").at(1).get<double>();
  c.calibrated = j.at("calibrated").get<bool>();
  c.rate_min = j.at("calibration_rate_per_s").at(0).get<double>();
  c.rate_max = j.at("calibration_rate_per_s").at(1).get<double>();
  return c;
}

json kernel_errors_json(const std::vector<KernelError>& errors) {
  json out = json::array();
  for (const KernelError& e : errors) {
    out.push_back({{"kernel", e.kernel},
                   {"measured_j", e.measured_j},
                   {"modelled_j", e.modelled_j ? json(*e.modelled_j) : json(nullptr)}});
  }
  return out;
}

std::vector<KernelError> kernel_errors_from(const json& j) {
  std::vector<KernelError> out;
  for (const json& e : j) {
    KernelError k{e.at("kernel").get<std::string>(), e.at("measured_j").get<double>(), {}};
    if (!e.at("modelled_j").is_null()) k.modelled_j = e.at("modelled_j").get<double>();
    out.push_back(std::move(k));
  }
  return out;
}

oa::Generation generation_named(const std::string& name) {
  for (oa::Generation g : {oa::Generation::kGen9, oa::Generation::kGen12}) {
    if (oa::generation_name(g) == name) return g;
  }
  throw std::invalid_argument(
      fmt::format("generation '{}': the energy model is defined for Gen9 and Gen12 only", name));
}

// Why a row read with another metric set than the model's is extrapolated, in one line: the
// events of the model that read B or C counters, which every set programs its own way (the A
// counters count the same in every set; the built-in set programs no B or C counter at all).
std::string other_set_reason(const EnergyModel& model, const oa::EnergyEventSet& set,
                             std::string_view metric_set) {
  std::string programmed;
  for (const oa::EnergyEvent& e : set.events) {
    const bool a_only = std::all_of(e.terms.begin(), e.terms.end(), [](const oa::CounterTerm& t) {
      return t.kind == oa::CounterKind::kA;
    });
    if (!a_only) programmed += (programmed.empty() ? "" : ", ") + std::string(e.name);
  }
  if (programmed.empty()) {
    return fmt::format("metric set {} (the model reads {})", metric_set, model.metric_set);
  }
  return fmt::format(
      "metric set {} does not count {} as the model's {} does (its B/C counters): profile with "
      "--metric-set {}",
      metric_set, programmed, model.metric_set, model.metric_set);
}

// The highest rate of an event the calibration covers. GPU clock cycles (busy cycles) cannot
// outrun the clock, and a row busy throughout counts at its clock, which the calibration's windows
// (launches with gaps between them) never quite reach: up to the calibrated clock they are inside
// it (the frequency check says whether the row's clock is).
double rate_ceiling(const EnergyModel& model, const oa::EnergyEvent& event, const Coefficient& c) {
  if (event.unit == "cycle") return std::max(c.rate_max, model.freq_max_mhz * 1e6);
  return c.rate_max;
}

}  // namespace

json to_json(const EnergyModel& m) {
  json events = json::array();
  for (const Coefficient& c : m.events) events.push_back(coefficient_json(c));
  return {
      {"schema", kSchema},
      {"device", m.device},
      {"platform", m.platform},
      {"generation", oa::generation_name(m.generation)},
      {"driver", m.driver},
      {"metric_set", m.metric_set},
      {"energy", m.energy},
      {"frequency_mhz", {{"min", m.freq_min_mhz}, {"max", m.freq_max_mhz}}},
      {"static_power", coefficient_json(m.static_power)},
      {"features", std::move(events)},
      {"interval", {{"method", m.interval_method}, {"confidence", m.confidence}}},
      {"residuals", kernel_errors_json(m.residuals)},
      {"leave_one_kernel_out",
       {{"rms_relative", m.loo_rms_relative}, {"kernels", kernel_errors_json(m.leave_one_out)}}}};
}

EnergyModel model_from_json(const json& doc) {
  try {
    if (doc.at("schema").get<std::string>() != kSchema) {
      throw std::invalid_argument(fmt::format("schema is not {}", kSchema));
    }
    EnergyModel m;
    m.device = doc.at("device").get<std::string>();
    m.platform = doc.at("platform").get<std::string>();
    m.generation = generation_named(doc.at("generation").get<std::string>());
    m.driver = doc.at("driver").get<std::string>();
    m.metric_set = doc.at("metric_set").get<std::string>();
    m.energy = doc.at("energy").get<std::string>();
    m.freq_min_mhz = doc.at("frequency_mhz").at("min").get<double>();
    m.freq_max_mhz = doc.at("frequency_mhz").at("max").get<double>();
    m.static_power = coefficient_from(doc.at("static_power"));
    for (const json& e : doc.at("features")) m.events.push_back(coefficient_from(e));
    m.interval_method = doc.at("interval").at("method").get<std::string>();
    m.confidence = doc.at("interval").at("confidence").get<double>();
    m.residuals = kernel_errors_from(doc.at("residuals"));
    m.leave_one_out = kernel_errors_from(doc.at("leave_one_kernel_out").at("kernels"));
    m.loo_rms_relative = doc.at("leave_one_kernel_out").at("rms_relative").get<double>();
    const oa::EnergyEventSet* set = oa::energy_events(m.generation);
    if (set == nullptr || set->events.size() != m.events.size()) {
      throw std::invalid_argument("its features are not this generation's events");
    }
    return m;
  } catch (const json::exception& e) {
    throw std::invalid_argument(fmt::format("not an oaprof energy model: {}", e.what()));
  }
}

Prediction predict(const EnergyModel& model, const oa::CounterDeltas& deltas, double duration_s,
                   double freq_mhz, std::string_view metric_set) {
  Prediction p;
  const oa::EnergyEventSet* set = oa::energy_events(model.generation);
  if (set == nullptr || set->events.size() != model.events.size()) {
    throw std::invalid_argument("the model's events are not its generation's");
  }
  if (metric_set != model.metric_set) {
    p.extrapolated.push_back(other_set_reason(model, *set, metric_set));
  }
  if (freq_mhz < model.freq_min_mhz * (1 - kFrequencySlack) ||
      freq_mhz > model.freq_max_mhz * (1 + kFrequencySlack)) {
    p.extrapolated.push_back(fmt::format("frequency {:.0f} MHz (calibrated {:.0f}-{:.0f} MHz)",
                                         freq_mhz, model.freq_min_mhz, model.freq_max_mhz));
  }
  p.energy_j = model.static_power.value * duration_s;
  double interval_j = (model.static_power.high - model.static_power.low) / 2 * duration_s;
  for (std::size_t k = 0; k < model.events.size(); ++k) {
    const Coefficient& c = model.events[k];
    const double events = oa::event_value(set->events[k], deltas);
    const double rate = duration_s > 0 ? events / duration_s : 0;
    const double ceiling = rate_ceiling(model, set->events[k], c);
    if (!c.calibrated && events > 0) {
      p.extrapolated.push_back(fmt::format("{} was never calibrated", c.name));
    } else if (c.calibrated && (rate < c.rate_min * (1 - kFrequencySlack) ||
                                rate > ceiling * (1 + kFrequencySlack))) {
      p.extrapolated.push_back(fmt::format("{} at {:.3g}/s (calibrated {:.3g}-{:.3g}/s)", c.name,
                                           rate, c.rate_min, ceiling));
    }
    p.energy_j += c.value * events;
    interval_j += (c.high - c.low) / 2 * events;
  }
  p.error_j = std::hypot(interval_j, model.loo_rms_relative * p.energy_j);
  return p;
}

}  // namespace oaprof::model
