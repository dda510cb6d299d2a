#include "oa/metric_set.h"

#include <array>
#include <memory>
#include <stdexcept>

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
  index_.reserve(counters_.size());
  for (std::size_t i = 0; i < counters_.size(); ++i) {
    const std::string& s = counters_[i].symbol;
    if (s.empty()) {
      throw std::invalid_argument(fmt::format("metric set {}: counter {} ('{}') has no symbol name",
                                              symbol_, i, counters_[i].name));
    }
    if (!index_.emplace(s, static_cast<int>(i)).second) {
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
  return index_lookup(index_, symbol);
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
  std::vector<EquationValue> values;
  evaluate_into(deltas, vars, values);
  return values;
}

void MetricSet::evaluate_into(const CounterDeltas& deltas, const DeviceVariables& vars,
                              std::vector<EquationValue>& values) const {
  // No clearing: order_ holds every counter once, after those it references, so each value is
  // written before any equation reads it.
  evaluate_into(deltas, vars, values, order_);
}

std::vector<int> MetricSet::order_for(std::span<const int> counters) const {
  std::vector<bool> needed(counters_.size(), false);
  for (int c : counters) needed.at(static_cast<std::size_t>(c)) = true;
  // Backwards through the evaluation order a counter is met before those it references, so one
  // pass marks everything the wanted ones reach.
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    if (!needed[static_cast<std::size_t>(*it)]) continue;
    for (int ref : counters_[static_cast<std::size_t>(*it)].equation.counter_references()) {
      needed[static_cast<std::size_t>(ref)] = true;
    }
  }
  std::vector<int> order;
  for (int c : order_) {
    if (needed[static_cast<std::size_t>(c)]) order.push_back(c);
  }
  return order;
}

void MetricSet::evaluate_into(const CounterDeltas& deltas, const DeviceVariables& vars,
                              std::vector<EquationValue>& values,
                              std::span<const int> order) const {
  values.resize(counters_.size());
  for (int i : order) {
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
}

bool MetricSet::available(int counter_index, const DeviceVariables& vars) const {
  return available_counters(vars).at(static_cast<std::size_t>(counter_index));
}

std::vector<bool> MetricSet::available_counters(const DeviceVariables& vars) const {
  const std::vector<std::string> unknown = unknown_inputs(vars);
  std::vector<bool> out(counters_.size());
  for (std::size_t i = 0; i < counters_.size(); ++i) {
    const MetricCounter& c = counters_[i];
    out[i] =
        unknown[i].empty() &&
        (!c.availability || c.availability->evaluate({CounterDeltas{}, vars}).as_double() != 0.0);
  }
  return out;
}

std::string MetricSet::unknown_input(int counter_index, const DeviceVariables& vars) const {
  return unknown_inputs(vars).at(static_cast<std::size_t>(counter_index));
}

namespace {

// The equations a counter's inputs are looked for in, in that order.
std::array<const Equation*, 2> input_equations(const MetricCounter& c) {
  return {&c.equation, c.availability ? &*c.availability : nullptr};
}

// The k-th counter `c` references over its input equations; -1 past the last.
int reference_at(const MetricCounter& c, std::size_t k) {
  for (const Equation* eq : input_equations(c)) {
    if (eq == nullptr) continue;
    if (k < eq->counter_references().size()) return eq->counter_references()[k];
    k -= eq->counter_references().size();
  }
  return -1;
}

// A counter's first unknown input once those of the counters it references are known: its
// equation's own variables, then the counters that equation reads, then its availability's.
std::string first_unknown_input(const MetricCounter& c, const DeviceVariables& vars,
                                const std::vector<std::string>& unknown) {
  for (const Equation* eq : input_equations(c)) {
    if (eq == nullptr) continue;
    if (const std::string_view name = eq->unknown_variable(vars); !name.empty()) {
      return "$" + std::string(name);
    }
    for (int ref : eq->counter_references()) {
      if (!unknown[static_cast<std::size_t>(ref)].empty())
        return unknown[static_cast<std::size_t>(ref)];
    }
  }
  return {};
}

}  // namespace

std::vector<std::string> MetricSet::unknown_inputs(const DeviceVariables& vars) const {
  // Each counter once, after those it references (depth first from a stack, not by recursion):
  // a hostile file's chain of 10^5 references, or counters that many others share, cost linear
  // time and no call stack. A reference back into the path (only an availability can make one)
  // adds nothing.
  enum class Mark : std::uint8_t { kNone, kActive, kDone };
  std::vector<std::string> unknown(counters_.size());
  std::vector<Mark> mark(counters_.size(), Mark::kNone);
  std::vector<std::pair<int, std::size_t>> path;  // counter, next reference to visit
  for (std::size_t root = 0; root < counters_.size(); ++root) {
    if (mark[root] != Mark::kNone) continue;
    path.emplace_back(static_cast<int>(root), 0);
    mark[root] = Mark::kActive;
    while (!path.empty()) {
      auto& [c, next] = path.back();
      const MetricCounter& counter = counters_[static_cast<std::size_t>(c)];
      if (const int r = reference_at(counter, next++); r >= 0) {
        if (mark[static_cast<std::size_t>(r)] == Mark::kNone) {
          mark[static_cast<std::size_t>(r)] = Mark::kActive;
          path.emplace_back(r, 0);
        }
        continue;
      }
      unknown[static_cast<std::size_t>(c)] = first_unknown_input(counter, vars, unknown);
      mark[static_cast<std::size_t>(c)] = Mark::kDone;
      path.pop_back();
    }
  }
  return unknown;
}

MetricSet::SymbolIndex MetricSet::index_symbols(const std::vector<std::string>& symbols) {
  SymbolIndex index;
  index.reserve(symbols.size());
  for (std::size_t i = 0; i < symbols.size(); ++i) index.emplace(symbols[i], static_cast<int>(i));
  return index;
}

std::optional<int> MetricSet::index_lookup(const SymbolIndex& index, std::string_view symbol) {
  const auto it = index.find(symbol);
  if (it == index.end()) return std::nullopt;
  return it->second;
}

Equation::CounterResolver MetricSet::resolver_for(const std::vector<std::string>& symbols) {
  // By name, not by scanning the list: every `$Name` of every equation is resolved, so a scan
  // would make importing a set of n counters cost n² (an 18 MB hostile file took minutes).
  auto index = std::make_shared<const SymbolIndex>(index_symbols(symbols));
  return [index](std::string_view name) { return index_lookup(*index, name); };
}

}  // namespace oaprof::oa
