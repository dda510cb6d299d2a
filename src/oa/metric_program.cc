#include "oa/metric_program.h"

#include <array>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "oa/metric_set.h"

namespace oaprof::oa {

enum class MetricProgram::Code : std::uint8_t {
  kPushConstant,
  kPushDelta,         // the u64 at byte offset `index` of the deltas
  kPushCounterUint,   // a counter of the set computed before, as an integer
  kPushCounterFloat,  // … as a double
  kToDouble,          // the value `index` below the top, converted as C converts it
  kToUint,            // likewise, as EquationValue::as_uint
  kTruncate32,        // the top, as a uint32 counter keeps it
  kNonZero,           // the top (a double), as a bool counter keeps it
  kStoreUint,         // the top is counter `index`'s value: stored, popped
  kStoreFloat,
  // Binary operators from here: `b` popped (or the constant), the result in place of `a`.
  // Integer operands, integer result.
  kUAdd,
  kUSub,
  kUMul,
  kUDiv,
  kUMin,
  kUMax,
  kAnd,
  kOr,
  kShl,
  kShr,
  kUGt,
  kUGte,
  kULt,
  kULte,
  kEq,
  kNeq,
  // Double operands, integer result.
  kUAddD,
  kUSubD,
  kUMulD,
  kUMinD,
  kUMaxD,
  kUGtD,
  kUGteD,
  kULtD,
  kULteD,
  kEqD,
  kNeqD,
  kLogicalAnd,
  kLogicalOr,
  // Double result from here: integer operands, then double operands.
  kFAddU,
  kFSubU,
  kFMulU,
  kFAdd,
  kFSub,
  kFMul,
  kFDiv,
  kFMin,
  kFMax,
  kNone,  // no such form of an operator
};

namespace {

using Code = MetricProgram::Code;
using Op = Equation::OpCode;

constexpr std::size_t kMaxStack = 64;  // Equation's own limit on depth

// Each RPN operator's instruction on integer operands and on double operands, as the C types
// decide (Operands in equation.cc): kNone where the operator always converts to the other.
struct TypedOperator {
  Op op;
  Code on_uint;
  Code on_double;
};
constexpr std::array kTypedOperators{
    TypedOperator{Op::kUAdd, Code::kUAdd, Code::kUAddD},
    TypedOperator{Op::kUSub, Code::kUSub, Code::kUSubD},
    TypedOperator{Op::kUMul, Code::kUMul, Code::kUMulD},
    TypedOperator{Op::kUDiv, Code::kUDiv, Code::kNone},
    TypedOperator{Op::kUMin, Code::kUMin, Code::kUMinD},
    TypedOperator{Op::kUMax, Code::kUMax, Code::kUMaxD},
    TypedOperator{Op::kFAdd, Code::kFAddU, Code::kFAdd},
    TypedOperator{Op::kFSub, Code::kFSubU, Code::kFSub},
    TypedOperator{Op::kFMul, Code::kFMulU, Code::kFMul},
    TypedOperator{Op::kFDiv, Code::kNone, Code::kFDiv},
    TypedOperator{Op::kFMin, Code::kNone, Code::kFMin},
    TypedOperator{Op::kFMax, Code::kNone, Code::kFMax},
    TypedOperator{Op::kAnd, Code::kAnd, Code::kNone},
    TypedOperator{Op::kOr, Code::kOr, Code::kNone},
    TypedOperator{Op::kShl, Code::kShl, Code::kNone},
    TypedOperator{Op::kShr, Code::kShr, Code::kNone},
    TypedOperator{Op::kUGt, Code::kUGt, Code::kUGtD},
    TypedOperator{Op::kUGte, Code::kUGte, Code::kUGteD},
    TypedOperator{Op::kULt, Code::kULt, Code::kULtD},
    TypedOperator{Op::kULte, Code::kULte, Code::kULteD},
    TypedOperator{Op::kEq, Code::kEq, Code::kEqD},
    TypedOperator{Op::kNeq, Code::kNeq, Code::kNeqD},
    TypedOperator{Op::kLogicalAnd, Code::kNone, Code::kLogicalAnd},
    TypedOperator{Op::kLogicalOr, Code::kNone, Code::kLogicalOr},
};

const TypedOperator& typed(Op op) {
  for (const TypedOperator& t : kTypedOperators) {
    if (t.op == op) return t;
  }
  throw std::logic_error("MetricProgram: an equation operator without a typed form");
}

bool is_float_type(MetricCounter::DataType type) {
  return type == MetricCounter::DataType::kFloat || type == MetricCounter::DataType::kDouble;
}

// Where a READ's register lies in the deltas.
std::uint32_t delta_offset(Op read, std::uint32_t index) {
  constexpr std::size_t kWord = sizeof(std::uint64_t);
  switch (read) {
    case Op::kReadA:
      return static_cast<std::uint32_t>(offsetof(CounterDeltas, a) + kWord * index);
    case Op::kReadB:
      return static_cast<std::uint32_t>(offsetof(CounterDeltas, b) + kWord * index);
    case Op::kReadC:
      return static_cast<std::uint32_t>(offsetof(CounterDeltas, c) + kWord * index);
    case Op::kReadGpuTime:
      return offsetof(CounterDeltas, timestamp);
    case Op::kReadGpuClock:
      return offsetof(CounterDeltas, gpu_ticks);
    default:
      return static_cast<std::uint32_t>(offsetof(CounterDeltas, perfcnt) + kWord * index);
  }
}

}  // namespace

// Compiles counter after counter, tracking the type of each stack value and whether it is a
// constant still open to folding (then the last instructions push it).
class MetricProgram::Builder {
 public:
  Builder(MetricProgram& program, const MetricSet& set, const DeviceVariables& vars)
      : program_(program), set_(set), vars_(vars) {}

  void counter(int index);

 private:
  struct Value {
    bool is_float = false;
    int constant_at = -1;  // the instruction that pushes it, when it is a constant
  };

  void operand(const Equation::Instruction& op);
  void push_constant(const EquationValue& v);
  void binary(Op op);
  bool fold(Op op, const Value& a, const Value& b);
  void convert(Value& v, bool to_float, std::uint32_t depth);
  void emit(Code code, std::uint32_t index = 0) { program_.code_.push_back({code, false, index}); }
  EquationValue constant(const Value& v) const;

  MetricProgram& program_;
  const MetricSet& set_;
  const DeviceVariables& vars_;
  std::vector<Value> stack_;
};

void MetricProgram::Builder::counter(int index) {
  const MetricCounter& c = set_.counters()[static_cast<std::size_t>(index)];
  // An empty equation is 0, as Equation::evaluate gives it.
  if (c.equation.ops_.empty()) push_constant(EquationValue::of_uint(0));
  for (const Equation::Instruction& op : c.equation.ops_) {
    if (op.code <= Op::kReadPerfCnt) {
      operand(op);
    } else {
      binary(op.code);
    }
    if (stack_.size() > kMaxStack) throw std::logic_error("MetricProgram: stack too deep");
  }
  // The counter's data type, as MetricSet::evaluate_into converts the result.
  Value& v = stack_.back();
  const bool to_float = is_float_type(c.data_type) || c.data_type == MetricCounter::DataType::kBool;
  convert(v, to_float, 0);
  if (c.data_type == MetricCounter::DataType::kUint32) emit(Code::kTruncate32);
  if (c.data_type == MetricCounter::DataType::kBool) emit(Code::kNonZero);
  emit(is_float_type(c.data_type) ? Code::kStoreFloat : Code::kStoreUint,
       static_cast<std::uint32_t>(index));
  stack_.clear();
}

void MetricProgram::Builder::operand(const Equation::Instruction& op) {
  if (op.code >= Op::kReadA) {
    emit(Code::kPushDelta, delta_offset(op.code, op.index));
    stack_.push_back({false, -1});
  } else if (op.code == Op::kCounter) {
    const bool f = is_float_type(set_.counters()[op.index].data_type);
    emit(f ? Code::kPushCounterFloat : Code::kPushCounterUint, op.index);
    stack_.push_back({f, -1});
  } else {
    // Constants, device variables and slice tests: fixed for the run.
    const CounterDeltas none;
    EquationValue v;
    Equation::load_operand(op, {none, vars_}, v);
    push_constant(v);
  }
}

void MetricProgram::Builder::push_constant(const EquationValue& v) {
  Instruction ins{Code::kPushConstant};
  if (v.is_float) {
    ins.constant.f = v.f;
  } else {
    ins.constant.u = v.u;
  }
  stack_.push_back({v.is_float, static_cast<int>(program_.code_.size())});
  program_.code_.push_back(ins);
}

EquationValue MetricProgram::Builder::constant(const Value& v) const {
  const Slot s = program_.code_[static_cast<std::size_t>(v.constant_at)].constant;
  return v.is_float ? EquationValue::of_float(s.f) : EquationValue::of_uint(s.u);
}

// Both operands constant: the result is one too, unless it divided by zero (that mark belongs
// to every row's value, so the division stays).
bool MetricProgram::Builder::fold(Op op, const Value& a, const Value& b) {
  if (a.constant_at < 0 || b.constant_at < 0) return false;
  const EquationValue r = Equation::apply(op, constant(a), constant(b));
  if (r.div_by_zero) return false;
  program_.code_.resize(program_.code_.size() - 2);
  stack_.resize(stack_.size() - 2);
  push_constant(r);
  return true;
}

// The value `depth` below the top as the type the operator reads: a constant converted in place.
void MetricProgram::Builder::convert(Value& v, bool to_float, std::uint32_t depth) {
  if (v.is_float == to_float) return;
  if (v.constant_at >= 0) {
    Slot& s = program_.code_[static_cast<std::size_t>(v.constant_at)].constant;
    if (to_float) {
      s.f = static_cast<double>(s.u);
    } else {
      s.u = EquationValue::of_float(s.f).as_uint();
    }
  } else {
    emit(to_float ? Code::kToDouble : Code::kToUint, depth);
  }
  v.is_float = to_float;
}

void MetricProgram::Builder::binary(Op op) {
  const Value b = stack_.back();
  const Value a = stack_[stack_.size() - 2];
  if (fold(op, a, b)) return;
  const TypedOperator& t = typed(op);
  const bool on_double =
      t.on_uint == Code::kNone || (t.on_double != Code::kNone && (a.is_float || b.is_float));
  const Code code = on_double ? t.on_double : t.on_uint;
  stack_.pop_back();
  Value& left = stack_.back();
  if (b.constant_at >= 0) {
    // The constant rides in the operator: its push goes, and `a` is the top again.
    Value right = b;
    convert(right, on_double, 0);
    const Slot value = program_.code_.back().constant;
    program_.code_.pop_back();
    convert(left, on_double, 0);
    program_.code_.push_back({code, true, 0, value});
  } else {
    Value right = b;
    convert(left, on_double, 1);
    convert(right, on_double, 0);
    emit(code);
  }
  left = {code >= Code::kFAddU, -1};
}

MetricProgram::MetricProgram(const MetricSet& set, const DeviceVariables& vars,
                             std::span<const int> order)
    : counters_(set.counters().size()) {
  Builder builder(*this, set, vars);
  for (int index : order.empty() ? std::span<const int>(set.evaluation_order()) : order) {
    builder.counter(index);
  }
}

namespace {

std::uint64_t to_uint(double f) { return EquationValue::of_float(f).as_uint(); }

}  // namespace

namespace {

using Slot = MetricProgram::Slot;

// kUAdd to kNeq: integer operands, integer result (unsigned arithmetic wraps, as in C).
void integer_operator(Code code, Slot& a, Slot b, bool& div_by_zero) {
  switch (code) {
    case Code::kUAdd:
      a.u += b.u;
      return;
    case Code::kUSub:
      a.u -= b.u;
      return;
    case Code::kUMul:
      a.u *= b.u;
      return;
    case Code::kUDiv:
      // IGT's x/0 is 0 (equation.cc), and the value says so.
      div_by_zero |= b.u == 0;
      a.u = b.u == 0 ? 0 : a.u / b.u;
      return;
    case Code::kUMin:
      a.u = a.u < b.u ? a.u : b.u;
      return;
    case Code::kUMax:
      a.u = a.u > b.u ? a.u : b.u;
      return;
    case Code::kAnd:
      a.u &= b.u;
      return;
    case Code::kOr:
      a.u |= b.u;
      return;
    case Code::kShl:
      a.u = b.u >= 64 ? 0 : a.u << b.u;
      return;
    case Code::kShr:
      a.u = b.u >= 64 ? 0 : a.u >> b.u;
      return;
    case Code::kUGt:
      a.u = a.u > b.u;
      return;
    case Code::kUGte:
      a.u = a.u >= b.u;
      return;
    case Code::kULt:
      a.u = a.u < b.u;
      return;
    case Code::kULte:
      a.u = a.u <= b.u;
      return;
    case Code::kEq:
      a.u = a.u == b.u;
      return;
    default:
      a.u = a.u != b.u;
      return;  // kNeq
  }
}

// kUAddD to kLogicalOr: double operands, integer result (an assignment to uint64_t in C).
void integer_of_doubles(Code code, Slot& a, Slot b) {
  switch (code) {
    case Code::kUAddD:
      a.u = to_uint(a.f + b.f);
      return;
    case Code::kUSubD:
      a.u = to_uint(a.f - b.f);
      return;
    case Code::kUMulD:
      a.u = to_uint(a.f * b.f);
      return;
    case Code::kUMinD:
      a.u = to_uint(a.f < b.f ? a.f : b.f);
      return;
    case Code::kUMaxD:
      a.u = to_uint(a.f > b.f ? a.f : b.f);
      return;
    case Code::kUGtD:
      a.u = a.f > b.f;
      return;
    case Code::kUGteD:
      a.u = a.f >= b.f;
      return;
    case Code::kULtD:
      a.u = a.f < b.f;
      return;
    case Code::kULteD:
      a.u = a.f <= b.f;
      return;
    case Code::kEqD:
      a.u = a.f == b.f;
      return;
    case Code::kNeqD:
      a.u = a.f != b.f;
      return;
    case Code::kLogicalAnd:
      a.u = a.f != 0.0 && b.f != 0.0;
      return;
    default:
      a.u = a.f != 0.0 || b.f != 0.0;
      return;  // kLogicalOr
  }
}

// kFAddU to kFMax: a double result, of integer operands (an assignment to double) or doubles.
void double_operator(Code code, Slot& a, Slot b, bool& div_by_zero) {
  switch (code) {
    case Code::kFAddU:
      a.f = static_cast<double>(a.u + b.u);
      return;
    case Code::kFSubU:
      a.f = static_cast<double>(a.u - b.u);
      return;
    case Code::kFMulU:
      a.f = static_cast<double>(a.u * b.u);
      return;
    case Code::kFAdd:
      a.f += b.f;
      return;
    case Code::kFSub:
      a.f -= b.f;
      return;
    case Code::kFMul:
      a.f *= b.f;
      return;
    case Code::kFDiv:
      div_by_zero |= b.f == 0.0;
      a.f = b.f == 0.0 ? 0.0 : a.f / b.f;
      return;
    case Code::kFMin:
      a.f = a.f < b.f ? a.f : b.f;
      return;
    default:
      a.f = a.f > b.f ? a.f : b.f;
      return;  // kFMax
  }
}

}  // namespace

void MetricProgram::apply_binary(Code code, Slot& a, Slot b, bool& div_by_zero) {
  if (code < Code::kUAddD) {
    integer_operator(code, a, b, div_by_zero);
  } else if (code < Code::kFAddU) {
    integer_of_doubles(code, a, b);
  } else {
    double_operator(code, a, b, div_by_zero);
  }
}

void MetricProgram::evaluate_into(const CounterDeltas& deltas,
                                  std::vector<EquationValue>& values) const {
  values.resize(counters_);
  std::array<Slot, kMaxStack + 1> stack;  // left uninitialised: every slot is pushed before read
  Slot* top = stack.data();               // stack[0] is never used: top points at the top value
  bool div_by_zero = false;
  const auto* raw = reinterpret_cast<const unsigned char*>(&deltas);
  for (const Instruction& ins : code_) {
    if (ins.code >= Code::kUAdd) {
      const Slot b = ins.b_constant ? ins.constant : *top--;
      apply_binary(ins.code, *top, b, div_by_zero);
      continue;
    }
    switch (ins.code) {
      case Code::kPushConstant:
        *++top = ins.constant;
        break;
      case Code::kPushDelta:
        std::memcpy(&(++top)->u, raw + ins.index, sizeof(std::uint64_t));
        break;
      case Code::kPushCounterUint:
      case Code::kPushCounterFloat: {
        const EquationValue& v = values[ins.index];
        if (ins.code == Code::kPushCounterUint) {
          (++top)->u = v.u;
        } else {
          (++top)->f = v.f;
        }
        div_by_zero |= v.div_by_zero;
        break;
      }
      case Code::kToDouble:
        top[-static_cast<std::ptrdiff_t>(ins.index)].f =
            static_cast<double>(top[-static_cast<std::ptrdiff_t>(ins.index)].u);
        break;
      case Code::kToUint:
        top[-static_cast<std::ptrdiff_t>(ins.index)].u =
            to_uint(top[-static_cast<std::ptrdiff_t>(ins.index)].f);
        break;
      case Code::kTruncate32:
        top->u = static_cast<std::uint32_t>(top->u);
        break;
      case Code::kNonZero:
        top->u = top->f != 0.0;
        break;
      case Code::kStoreUint:
        values[ins.index] = {false, top->u, 0, div_by_zero};
        --top;
        div_by_zero = false;
        break;
      default:  // kStoreFloat
        values[ins.index] = {true, 0, top->f, div_by_zero};
        --top;
        div_by_zero = false;
        break;
    }
  }
}

}  // namespace oaprof::oa
