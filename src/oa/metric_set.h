// The metric-set model: what one IGT `<set>` describes (counters with RPN equations and the
// register programming that makes the A/B/C counters count the right events) and oaprof's built-in
// sets. The hardware layers program `noa`, `boolean` and `flex` writes; reporters evaluate
// counters from deltas. Equations are compiled at construction, so a set that exists is valid.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oa/delta.h"
#include "oa/equation.h"
#include "oa/register_write.h"

namespace oaprof::oa {

using Attributes = std::vector<std::pair<std::string, std::string>>;

struct MetricCounter {
  enum class DataType { kUint64, kUint32, kFloat, kDouble, kBool };

  std::string symbol;  // symbol_name, unique in its set: "EuActive"
  std::string name;    // "EU Active"
  std::string description;
  std::string units;  // "percent", "cycles", "bytes", "ns", …
  DataType data_type = DataType::kUint64;
  std::string semantic_type;  // "duration", "event", "ratio", "throughput"
  Equation equation;
  std::optional<Equation> max_equation;
  std::optional<Equation> availability;  // evaluated on device variables; absent = always
  Attributes attributes;                 // every XML attribute as written, the ones above included
};

struct RegisterConfig {
  enum class Kind { kNoa, kBoolean, kFlex };  // XML types NOA, OA, FLEX
  Kind kind = Kind::kNoa;
  std::optional<Equation> availability;  // absent = always programmed
  int priority = 0;
  std::vector<RegisterWrite> writes;
};

std::string_view register_config_kind_name(RegisterConfig::Kind kind);  // "NOA", "OA", "FLEX"
std::string_view data_type_name(MetricCounter::DataType type);

class MetricSet {
 public:
  MetricSet() = default;
  // Validates the set: unique non-empty counter symbols, equations that reference only counters
  // of this set, and no reference cycle; computes the evaluation order. Throws
  // std::invalid_argument naming the set and counter.
  MetricSet(std::string name, std::string symbol, std::string guid,
            std::vector<MetricCounter> counters, std::vector<RegisterConfig> configs,
            Attributes attributes = {});

  const std::string& name() const { return name_; }
  const std::string& symbol() const { return symbol_; }
  const std::string& guid() const { return guid_; }
  const std::vector<MetricCounter>& counters() const { return counters_; }
  const std::vector<RegisterConfig>& register_configs() const { return configs_; }
  const Attributes& attributes() const { return attributes_; }
  // The value of the set's XML attribute `key` (e.g. "oa_format"); empty when absent.
  std::string_view attribute(std::string_view key) const;
  // Counter indexes in an order where every counter comes after those it references.
  const std::vector<int>& evaluation_order() const { return order_; }

  std::optional<int> counter_index(std::string_view symbol) const;

  // Writes to program for a device, in the order of the file: configs whose availability is
  // false on `vars` are left out.
  std::vector<RegisterWrite> writes(RegisterConfig::Kind kind, const DeviceVariables& vars) const;
  std::size_t register_count(RegisterConfig::Kind kind) const;  // over all configs
  bool needs_programming() const;                               // any register write at all

  // Every counter's value, by counter index, as its data type gives it; a value marked
  // div_by_zero had a division by zero in its equation or in a counter it references.
  std::vector<EquationValue> evaluate(const CounterDeltas& deltas,
                                      const DeviceVariables& vars) const;
  // The same into `values` (resized to the set), for callers that evaluate row after row and
  // keep one vector rather than allocate one per row; with `order` (from order_for), only the
  // counters it lists are computed, the other values are left as they were.
  void evaluate_into(const CounterDeltas& deltas, const DeviceVariables& vars,
                     std::vector<EquationValue>& values) const;
  void evaluate_into(const CounterDeltas& deltas, const DeviceVariables& vars,
                     std::vector<EquationValue>& values, std::span<const int> order) const;
  // The part of evaluation_order() that `counters` need: they and the counters their equations
  // reference, each after those it references. A reader of a few counters (the table's EU
  // shares) evaluates these alone instead of the whole set on every row.
  std::vector<int> order_for(std::span<const int> counters) const;
  // Whether a counter exists on the device (its availability equation, or true), and can be
  // computed there: false when it reads, itself or through a counter it references, a device
  // variable the device did not give (unknown_input).
  bool available(int counter_index, const DeviceVariables& vars) const;
  // The first such variable ("$L3BankTotalCount"); empty when the counter has every input.
  std::string unknown_input(int counter_index, const DeviceVariables& vars) const;
  // available() and unknown_input() of every counter, by index, in time linear in the set (each
  // single call costs as much: callers that ask of every counter ask once).
  std::vector<bool> available_counters(const DeviceVariables& vars) const;
  std::vector<std::string> unknown_inputs(const DeviceVariables& vars) const;

  // Counters' symbol of every equation: `CounterResolver` for building sets by hand.
  static Equation::CounterResolver resolver_for(const std::vector<std::string>& symbols);

 private:
  // Counter index by symbol, looked up with a string_view (no copy per lookup).
  struct SymbolHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using SymbolIndex = std::unordered_map<std::string, int, SymbolHash, std::equal_to<>>;
  // The first index of each symbol.
  static SymbolIndex index_symbols(const std::vector<std::string>& symbols);
  static std::optional<int> index_lookup(const SymbolIndex& index, std::string_view symbol);

  std::string name_, symbol_, guid_;
  std::vector<MetricCounter> counters_;
  std::vector<RegisterConfig> configs_;
  Attributes attributes_;
  std::vector<int> order_;
  SymbolIndex index_;
};

}  // namespace oaprof::oa
