// A metric set's equations compiled once more, for one device, into one flat typed program
// (issue 33): evaluating a set row after row was some eighty interpreted operations a row, each
// dispatched on its operator, both operands converted both ways and their C types tested. Here
// the types are settled when the program is built (a counter's type is its data type, a READ is
// an integer, device variables are constants of the run), so each instruction does one thing:
// conversions are instructions of their own where the types call for them, operators whose
// operands are both constants are folded, a constant right operand rides in its operator, and
// each counter's value is stored by the instruction that ends its equation.
//
// The values are MetricSet::evaluate_into's, field for field (metric_program_test.cc holds them
// to it over every set of IGT's files); that interpreter stays the reference.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "oa/delta.h"
#include "oa/equation.h"

namespace oaprof::oa {

class MetricSet;

class MetricProgram {
 public:
  MetricProgram() = default;
  // The counters of `order` (every counter when empty: the set's evaluation order) on a device
  // with `vars`, in that order.
  MetricProgram(const MetricSet& set, const DeviceVariables& vars, std::span<const int> order = {});

  // What MetricSet::evaluate_into(deltas, vars, values, order) writes: `values` resized to the
  // set, the counters of the order computed, the others left as they were.
  void evaluate_into(const CounterDeltas& deltas, std::vector<EquationValue>& values) const;

  enum class Code : std::uint8_t;
  // One stack value: which member holds it is known when the program is built.
  union Slot {
    std::uint64_t u;
    double f;
  };

 private:
  struct Instruction {
    Code code;
    bool b_constant = false;  // an operator's right operand is `constant`, not on the stack
    std::uint32_t index = 0;  // counter index, byte offset into CounterDeltas, or stack depth
    Slot constant{0};
  };
  class Builder;

  static void apply_binary(Code code, Slot& a, Slot b, bool& div_by_zero);

  std::vector<Instruction> code_;
  std::size_t counters_ = 0;
};

}  // namespace oaprof::oa
