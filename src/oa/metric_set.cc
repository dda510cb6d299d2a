#include "oa/metric_set.h"

#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

namespace oaprof::oa {

std::string_view register_config_kind_name(RegisterConfig::Kind kind) {
  switch (kind) {
    case RegisterConfig::Kind::kNoa:
      return "NOA";
    case RegisterConfig::Kind::kBoolean:
      return "OA";
    case RegisterConfig::Kind::kFlex:
      return "FLEX";
  }
  return "unknown";
}

std::string_view data_type_name(MetricCounter::DataType type) {
  switch (type) {
    case MetricCounter::DataType::kUint64:
      return "uint64";
    case MetricCounter::DataType::kUint32:
      return "uint32";
    case MetricCounter::DataType::kFloat:
      return "float";
    case MetricCounter::DataType::kDouble:
      return "double";
    case MetricCounter::DataType::kBool:
      return "bool32";
  }
  return "unknown";
}

MetricSet::MetricSet(std::string name, std::string symbol, std::string guid,
                     std::vector<MetricCounter> counters, std::vector<RegisterConfig> configs,
                     Attributes attributes)
    : name_(std::move(name)),
      symbol_(std::move(symbol)),
      guid_(std::move(guid)),
      counters_(std::move(counters)),
      configs_(std::move(configs)),
      attributes_(std::move(attributes)) {
  if (symbol_.empty()) {
    throw std::invalid_argument(fmt::format("metric set '{}' has no symbol name", name_));
  }
  std::unordered_map<std::string_view, int> seen;
  for (std::size_t i = 0; i < counters_.size(); ++i) {
    const std::string& s = counters_[i].symbol;
    if (s.empty()) {
      throw std::invalid_argument(fmt::format("metric set {}: counter {} ('{}') has no symbol name",
                                              symbol_, i, counters_[i].name));
    }
    if (!seen.emplace(s, static_cast<int>(i)).second) {
      throw std::invalid_argument(
          fmt::format("metric set {}: counter symbol {} appears twice", symbol_, s));
    }
  }
  const int n = static_cast<int>(counters_.size());
  for (int i = 0; i < n; ++i) {
    auto check = [&](const Equation& eq, std::string_view what) {
      for (int ref : eq.counter_references()) {
        if (ref < 0 || ref >= n) {
          throw std::invalid_argument(
              fmt::format("metric set {}: counter {} {} references counter #{} of {}", symbol_,
                          counters_[i].symbol, what, ref, n));
        }
      }
    };
    check(counters_[i].equation, "equation");
    if (counters_[i].max_equation) check(*counters_[i].max_equation, "max_equation");
    if (counters_[i].availability) check(*counters_[i].availability, "availability");
  }
  // Depth-first topological order over equation references; a cycle is an error because the
  // values it links could never be computed.
  enum class Mark : std::uint8_t { kNone, kActive, kDone };
  std::vector<Mark> mark(counters_.size(), Mark::kNone);
  std::vector<std::pair<int, std::size_t>> path;  // counter, next reference to visit
  for (int root = 0; root < n; ++root) {
    if (mark[root] != Mark::kNone) continue;
    path.emplace_back(root, 0);
    mark[root] = Mark::kActive;
    while (!path.empty()) {
      auto& [c, next] = path.back();
      const auto& refs = counters_[c].equation.counter_references();
      if (next < refs.size()) {
        const int r = refs[next++];
        if (mark[r] == Mark::kActive) {
          throw std::invalid_argument(fmt::format(
              "metric set {}: counter {} depends on itself through {}; the equations form a cycle",
              symbol_, counters_[r].symbol, counters_[c].symbol));
        }
        if (mark[r] == Mark::kNone) {
          mark[r] = Mark::kActive;
          path.emplace_back(r, 0);
        }
        continue;
      }
      mark[c] = Mark::kDone;
      order_.push_back(c);
      path.pop_back();
    }
  }
}

std::string_view MetricSet::attribute(std::string_view key) const {
  for (const auto& [name, value] : attributes_) {
    if (name == key) return value;
  }
  return {};
}

std::optional<int> MetricSet::counter_index(std::string_view symbol) const {
  for (std::size_t i = 0; i < counters_.size(); ++i) {
    if (counters_[i].symbol == symbol) return static_cast<int>(i);
  }
  return std::nullopt;
}

std::vector<RegisterWrite> MetricSet::writes(RegisterConfig::Kind kind,
                                             const DeviceVariables& vars) const {
  std::vector<RegisterWrite> out;
  const CounterDeltas none;
  for (const RegisterConfig& config : configs_) {
    if (config.kind != kind) continue;
    if (config.availability && config.availability->evaluate({none, vars}).as_double() == 0.0) {
      continue;
    }
    out.insert(out.end(), config.writes.begin(), config.writes.end());
  }
  return out;
}

std::size_t MetricSet::register_count(RegisterConfig::Kind kind) const {
  std::size_t n = 0;
  for (const RegisterConfig& config : configs_) {
    if (config.kind == kind) n += config.writes.size();
  }
  return n;
}

bool MetricSet::needs_programming() const {
  for (const RegisterConfig& config : configs_) {
    if (!config.writes.empty()) return true;
  }
  return false;
}

std::vector<EquationValue> MetricSet::evaluate(const CounterDeltas& deltas,
                                               const DeviceVariables& vars) const {
  std::vector<EquationValue> values(counters_.size());
  for (int i : order_) {
    const MetricCounter& c = counters_[i];
    EquationValue v = c.equation.evaluate({deltas, vars, values});
    const bool div_by_zero = v.div_by_zero;
    switch (c.data_type) {
      case MetricCounter::DataType::kUint64:
        v = EquationValue::of_uint(v.as_uint());
        break;
      case MetricCounter::DataType::kUint32:
        v = EquationValue::of_uint(static_cast<std::uint32_t>(v.as_uint()));
        break;
      case MetricCounter::DataType::kBool:
        v = EquationValue::of_uint(v.as_double() != 0.0);
        break;
      case MetricCounter::DataType::kFloat:
      case MetricCounter::DataType::kDouble:
        v = EquationValue::of_float(v.as_double());
        break;
    }
    v.div_by_zero = div_by_zero;
    values[i] = v;
  }
  return values;
}

bool MetricSet::available(int counter_index, const DeviceVariables& vars) const {
  const MetricCounter& c = counters_.at(static_cast<std::size_t>(counter_index));
  if (!unknown_input(counter_index, vars).empty()) return false;
  if (!c.availability) return true;
  return c.availability->evaluate({CounterDeltas{}, vars}).as_double() != 0.0;
}

std::string MetricSet::unknown_input(int counter_index, const DeviceVariables& vars) const {
  const MetricCounter& c = counters_.at(static_cast<std::size_t>(counter_index));
  for (const Equation* eq : {&c.equation, c.availability ? &*c.availability : nullptr}) {
    if (eq == nullptr) continue;
    if (const std::string_view name = eq->unknown_variable(vars); !name.empty()) {
      return "$" + std::string(name);
    }
    // The reference graph has no cycle (checked at construction), so this ends.
    for (int ref : eq->counter_references()) {
      if (std::string via = unknown_input(ref, vars); !via.empty()) return via;
    }
  }
  return {};
}

Equation::CounterResolver MetricSet::resolver_for(const std::vector<std::string>& symbols) {
  return [symbols](std::string_view name) -> std::optional<int> {
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      if (symbols[i] == name) return static_cast<int>(i);
    }
    return std::nullopt;
  };
}

}  // namespace oaprof::oa
