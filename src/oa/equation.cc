#include "oa/equation.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "oa/report_format.h"

namespace oaprof::oa {
namespace {

using VarMember = std::uint64_t DeviceVariables::*;
struct VarName {
  std::string_view name;
  VarMember member;
};
constexpr std::array kVariables{
    VarName{"EuCoresTotalCount", &DeviceVariables::eu_cores_total},
    VarName{"EuSlicesTotalCount", &DeviceVariables::eu_slices_total},
    VarName{"EuSubslicesTotalCount", &DeviceVariables::eu_subslices_total},
    VarName{"EuDualSubslicesTotalCount", &DeviceVariables::eu_dual_subslices_total},
    VarName{"EuThreadsCount", &DeviceVariables::eu_threads_count},
    VarName{"SliceMask", &DeviceVariables::slice_mask},
    VarName{"SubsliceMask", &DeviceVariables::subslice_mask},
    VarName{"DualSubsliceMask", &DeviceVariables::dual_subslice_mask},
    VarName{"GpuTimestampFrequency", &DeviceVariables::timestamp_frequency_hz},
    VarName{"GpuMinFrequency", &DeviceVariables::gpu_min_freq_hz},
    VarName{"GpuMaxFrequency", &DeviceVariables::gpu_max_freq_hz},
    VarName{"SkuRevisionId", &DeviceVariables::sku_revision_id},
    VarName{"QueryMode", &DeviceVariables::query_mode},
    // Xe-LPG files name the same quantities anew; mesa src/intel/perf/gen_perf.py hw_vars
    // (bminor/mesa-mesa 036ec0bb89c9) maps them onto the variables above.
    VarName{"VectorEngineTotalCount", &DeviceVariables::eu_cores_total},
    VarName{"VectorEngineThreadsCount", &DeviceVariables::eu_threads_count},
    VarName{"XeCoreTotalCount", &DeviceVariables::eu_subslices_total},
    VarName{"XeCoreMask", &DeviceVariables::subslice_mask},
    VarName{"SliceTotalCount", &DeviceVariables::eu_slices_total},
    // Xe2/Xe3 (IGT lib/xe/oa-configs/codegen.py hw_vars_mapping and Mesa gen_perf.py hw_vars
    // @ bminor/mesa-mesa 03fc7d6a6d76 name them; see DeviceVariables for where each comes from).
    VarName{"L3BankTotalCount", &DeviceVariables::l3_bank_total},
    VarName{"L3NodeTotalCount", &DeviceVariables::l3_node_total},
    VarName{"SqidiTotalCount", &DeviceVariables::sqidi_total},
    VarName{"GeometryPipeTotalCount", &DeviceVariables::geometry_pipe_total},
    VarName{"DepthPipeTotalCount", &DeviceVariables::depth_pipe_total},
    VarName{"ColorPipeTotalCount", &DeviceVariables::color_pipe_total},
    VarName{"ComputeEngineTotalCount", &DeviceVariables::compute_engine_total},
    VarName{"CopyEngineTotalCount", &DeviceVariables::copy_engine_total},
};
// The ones above that only the device's queries give (the tail of kVariables).
constexpr std::size_t kFirstDeviceQueryVariable = kVariables.size() - 8;
constexpr std::array<std::string_view, kVariables.size()> kVariableNames = [] {
  std::array<std::string_view, kVariables.size()> names{};
  for (std::size_t i = 0; i < kVariables.size(); ++i) names[i] = kVariables[i].name;
  return names;
}();

using Op = Equation::OpCode;
struct OperatorName {
  std::string_view token;
  Op code;
};
constexpr std::array kOperators{
    OperatorName{"UADD", Op::kUAdd},     OperatorName{"USUB", Op::kUSub},
    OperatorName{"UMUL", Op::kUMul},     OperatorName{"UDIV", Op::kUDiv},
    OperatorName{"UMIN", Op::kUMin},     OperatorName{"UMAX", Op::kUMax},
    OperatorName{"FADD", Op::kFAdd},     OperatorName{"FSUB", Op::kFSub},
    OperatorName{"FMUL", Op::kFMul},     OperatorName{"FDIV", Op::kFDiv},
    OperatorName{"FMIN", Op::kFMin},     OperatorName{"FMAX", Op::kFMax},
    OperatorName{"AND", Op::kAnd},       OperatorName{"OR", Op::kOr},
    OperatorName{"<<", Op::kShl},        OperatorName{">>", Op::kShr},
    OperatorName{"UGT", Op::kUGt},       OperatorName{"UGTE", Op::kUGte},
    OperatorName{"ULT", Op::kULt},       OperatorName{"ULTE", Op::kULte},
    OperatorName{"EQ", Op::kEq},         OperatorName{"NEQ", Op::kNeq},
    OperatorName{"&&", Op::kLogicalAnd}, OperatorName{"||", Op::kLogicalOr},
};

// Register files an equation can READ, with how many counters each has.
struct FileName {
  std::string_view token;
  Op read;
  std::uint64_t count;
};
constexpr std::array kFiles{
    FileName{"A", Op::kReadA, kMaxNumA},
    FileName{"B", Op::kReadB, kNumB},
    FileName{"C", Op::kReadC, kNumC},
    FileName{"GPU_TIME", Op::kReadGpuTime, 1},
    FileName{"GPU_CLOCK", Op::kReadGpuClock, 1},
    FileName{"PERFCNT", Op::kReadPerfCnt, 2},
    // Xe2's PEC counters, which the PEC64u64 layout holds as A0..A63.
    FileName{"PEC", Op::kReadA, kMaxNumA},
};

constexpr int kMaxDepth = 64;

bool parse_number(std::string_view token, std::uint64_t& u, double& f, bool& is_float) {
  is_float = false;
  const char* begin = token.data();
  const char* end = begin + token.size();
  if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X')) {
    auto [ptr, ec] = std::from_chars(begin + 2, end, u, 16);
    return ec == std::errc() && ptr == end;
  }
  if (token.empty() || token[0] < '0' || token[0] > '9') return false;
  auto [ptr, ec] = std::from_chars(begin, end, u, 10);
  if (ec == std::errc() && ptr == end) return true;
  auto [fptr, fec] = std::from_chars(begin, end, f);
  is_float = true;
  return fec == std::errc() && fptr == end;
}

// "$GtSlice1" -> slice 1; "$GtSlice0XeCore3" and "$GtSlice0DualSubslice3" -> subslice bit 3
// of slice 0. `subslice` is -1 for a slice test. nullopt when the name is neither.
struct SliceTest {
  int slice;
  int subslice;
};

bool parse_small_index(std::string_view digits, int& out) {
  if (digits.empty() || digits.size() > 2) return false;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  return ec == std::errc() && ptr == digits.data() + digits.size();
}

std::optional<SliceTest> parse_slice_test(std::string_view name) {
  constexpr std::string_view kSlice = "GtSlice";
  if (!name.starts_with(kSlice)) return std::nullopt;
  name.remove_prefix(kSlice.size());
  const std::size_t digits = name.find_first_not_of("0123456789");
  SliceTest t{0, -1};
  if (!parse_small_index(name.substr(0, digits), t.slice) || t.slice >= 8) return std::nullopt;
  if (digits == std::string_view::npos) return t;
  name.remove_prefix(digits);
  for (const std::string_view unit : {"XeCore", "DualSubslice"}) {
    if (!name.starts_with(unit)) continue;
    if (!parse_small_index(name.substr(unit.size()), t.subslice) || t.subslice >= 8) break;
    return t;
  }
  return std::nullopt;
}

// "$GtXeCore7" -> Xe-core 7 (numbered flat, as xe's topology query numbers its DSS mask); nullopt
// for any other name.
std::optional<int> parse_xe_core_test(std::string_view name) {
  constexpr std::string_view kXeCore = "GtXeCore";
  if (!name.starts_with(kXeCore)) return std::nullopt;
  int core = 0;
  if (!parse_small_index(name.substr(kXeCore.size()), core) || core >= 64) return std::nullopt;
  return core;
}

// One whitespace-separated token of an equation, with its offset for error messages.
struct Token {
  std::string_view text;
  std::size_t start;
};

// The next token at or after `pos`, which moves past it; nullopt when only whitespace is left.
std::optional<Token> next_token(std::string_view text, std::size_t& pos) {
  constexpr std::string_view kSpace = " \t\r\n";
  if (pos >= text.size()) return std::nullopt;
  const std::size_t start = text.find_first_not_of(kSpace, pos);
  if (start == std::string_view::npos) return std::nullopt;
  std::size_t stop = text.find_first_of(kSpace, start);
  if (stop == std::string_view::npos) stop = text.size();
  pos = stop;
  return Token{text.substr(start, stop - start), start};
}

// The register file or operator a token names; nullptr when it names none (the names are unique).
const FileName* find_file(std::string_view token) {
  for (const FileName& file : kFiles) {
    if (file.token == token) return &file;
  }
  return nullptr;
}

const OperatorName* find_operator(std::string_view token) {
  for (const OperatorName& op : kOperators) {
    if (op.token == token) return &op;
  }
  return nullptr;
}

// A binary operator's operands as the C that Mesa's and IGT's generators emit reads them. Those
// generators turn each operator into one C statement on typed temporaries ("uint64_t t = a * b;",
// "double t = a + b;"), so the C type of the operands decides the arithmetic: +, -, *, min and
// comparisons happen in double when either operand is a double and in uint64 (wrapping) when both
// are integers, and only the assignment converts. UDIV and the F-divisions and FMAX convert their
// operands first. The shifts and bitwise operators only exist on integers.
struct Operands {
  Operands(const EquationValue& a, const EquationValue& b)
      : au(a.as_uint()),
        bu(b.as_uint()),
        af(a.as_double()),
        bf(b.as_double()),
        in_double(a.is_float || b.is_float) {}

  // A U operator's result: its double form converted by the assignment when in_double.
  EquationValue uint_of(double integer_result_in_double, std::uint64_t integer_result) const {
    return EquationValue::of_uint(
        in_double ? EquationValue::of_float(integer_result_in_double).as_uint() : integer_result);
  }
  // An F operator's result: its uint64 form converted by the assignment unless in_double.
  EquationValue float_of(double double_result, std::uint64_t integer_result) const {
    return EquationValue::of_float(in_double ? double_result : static_cast<double>(integer_result));
  }

  std::uint64_t au;
  std::uint64_t bu;
  double af;
  double bf;
  bool in_double;
};

// UADD to FMAX.
EquationValue arithmetic(Op code, const Operands& o) {
  using V = EquationValue;
  switch (code) {
    case Op::kUAdd:
      return o.uint_of(o.af + o.bf, o.au + o.bu);
    case Op::kUSub:
      return o.uint_of(o.af - o.bf, o.au - o.bu);
    case Op::kUMul:
      return o.uint_of(o.af * o.bf, o.au * o.bu);
    case Op::kUDiv:
      return V::of_uint(o.bu == 0 ? 0 : o.au / o.bu);
    case Op::kUMin:
      return o.uint_of(o.af < o.bf ? o.af : o.bf, o.au < o.bu ? o.au : o.bu);
    case Op::kUMax:
      return o.uint_of(o.af > o.bf ? o.af : o.bf, o.au > o.bu ? o.au : o.bu);
    case Op::kFAdd:
      return o.float_of(o.af + o.bf, o.au + o.bu);
    case Op::kFSub:
      return o.float_of(o.af - o.bf, o.au - o.bu);
    case Op::kFMul:
      return o.float_of(o.af * o.bf, o.au * o.bu);
    case Op::kFDiv:
      return V::of_float(o.bf == 0.0 ? 0.0 : o.af / o.bf);
    case Op::kFMin:
      return V::of_float(o.af < o.bf ? o.af : o.bf);
    case Op::kFMax:
      return V::of_float(o.af > o.bf ? o.af : o.bf);
    default:
      return {};
  }
}

// AND to LOGICAL_OR: bitwise operators, shifts and comparisons, all with an integer result.
EquationValue bits_and_comparisons(Op code, const Operands& o) {
  using V = EquationValue;
  switch (code) {
    case Op::kAnd:
      return V::of_uint(o.au & o.bu);
    case Op::kOr:
      return V::of_uint(o.au | o.bu);
    case Op::kShl:
      return V::of_uint(o.bu >= 64 ? 0 : o.au << o.bu);
    case Op::kShr:
      return V::of_uint(o.bu >= 64 ? 0 : o.au >> o.bu);
    case Op::kUGt:
      return V::of_uint(o.in_double ? o.af > o.bf : o.au > o.bu);
    case Op::kUGte:
      return V::of_uint(o.in_double ? o.af >= o.bf : o.au >= o.bu);
    case Op::kULt:
      return V::of_uint(o.in_double ? o.af < o.bf : o.au < o.bu);
    case Op::kULte:
      return V::of_uint(o.in_double ? o.af <= o.bf : o.au <= o.bu);
    case Op::kEq:
      return V::of_uint(o.in_double ? o.af == o.bf : o.au == o.bu);
    case Op::kNeq:
      return V::of_uint(o.in_double ? o.af != o.bf : o.au != o.bu);
    case Op::kLogicalAnd:
      return V::of_uint(o.af != 0.0 && o.bf != 0.0);
    case Op::kLogicalOr:
      return V::of_uint(o.af != 0.0 || o.bf != 0.0);
    default:
      return {};
  }
}

// What a binary operator leaves on the stack in place of `a` and `b`.
EquationValue apply_operator(Op code, const EquationValue& a, const EquationValue& b) {
  const Operands o(a, b);
  EquationValue r = code <= Op::kFMax ? arithmetic(code, o) : bits_and_comparisons(code, o);
  // IGT's generated code gives x/0 as 0 (igt-gpu-tools lib/i915/perf-configs/codegen.py,
  // emit_udiv and emit_fdiv); the value stays that, and says so.
  const bool divides_by_zero =
      (code == Op::kUDiv && o.bu == 0) || (code == Op::kFDiv && o.bf == 0.0);
  r.div_by_zero = a.div_by_zero || b.div_by_zero || divides_by_zero;
  return r;
}

}  // namespace

std::vector<std::string> device_query_variables() {
  std::vector<std::string> names;
  for (std::size_t i = kFirstDeviceQueryVariable; i < kVariables.size(); ++i) {
    names.emplace_back(kVariables[i].name);
  }
  return names;
}

bool DeviceVariables::known(std::string_view name) const {
  return std::find(unknown.begin(), unknown.end(), name) == unknown.end();
}

void DeviceVariables::set_known(std::string_view name, std::uint64_t value) {
  for (std::size_t i = kFirstDeviceQueryVariable; i < kVariables.size(); ++i) {
    if (kVariables[i].name != name) continue;
    this->*(kVariables[i].member) = value;
    std::erase(unknown, name);
    return;
  }
  throw std::logic_error(fmt::format("set_known: ${} is not a device-query variable", name));
}

std::span<const std::string_view> device_variable_names() { return kVariableNames; }

std::optional<std::uint64_t> device_variable(const DeviceVariables& vars, std::string_view name) {
  for (const VarName& v : kVariables) {
    if (v.name == name) return vars.*(v.member);
  }
  return std::nullopt;
}

// Compiles one equation token by token, tracking what each stack slot will hold.
class Equation::Compiler {
 public:
  Compiler(std::string_view text, const CounterResolver& resolve) : text_(text), resolve_(resolve) {
    eq_.text_ = std::string(text);
  }

  void add(const Token& token);
  // Throws unless exactly one value is left.
  Equation finish();

 private:
  // What each stack slot holds at compile time: a value, or a register file awaiting its index.
  struct Slot {
    const FileName* file = nullptr;
  };

  [[noreturn]] void fail(const Token& token, std::string_view why) const;
  void push(const Instruction& op);
  void read(const Token& token);
  Instruction variable(const Token& token);
  void push_operator(const Token& token);
  static std::optional<Instruction> device_operand(std::string_view name);

  std::string_view text_;
  const CounterResolver& resolve_;
  Equation eq_;
  std::vector<Slot> stack_;
};

void Equation::Compiler::add(const Token& token) {
  if (token.text == "READ") {
    read(token);
    return;  // READ only shrinks the stack, so the depth needs no check
  }
  const std::string_view text = token.text;
  std::uint64_t u = 0;
  double f = 0;
  bool is_float = false;
  if (text == "true" || text == "false") {
    push(Instruction{Op::kConst, 0, text == "true" ? 1u : 0u});
  } else if (parse_number(text, u, f, is_float)) {
    push(is_float ? Instruction{Op::kConstFloat, 0, 0, f} : Instruction{Op::kConst, 0, u});
  } else if (text.size() > 1 && text[0] == '$') {
    push(variable(token));
  } else if (const FileName* file = find_file(text)) {
    stack_.push_back({file});
  } else {
    push_operator(token);
  }
  const int depth = static_cast<int>(stack_.size());
  if (depth > kMaxDepth) {
    fail(token, fmt::format("the equation is deeper than {} values", kMaxDepth));
  }
  eq_.max_depth_ = std::max(eq_.max_depth_, depth);
}

Equation Equation::Compiler::finish() {
  if (stack_.size() != 1 || stack_.back().file != nullptr) {
    throw std::invalid_argument(fmt::format(
        "equation '{}' leaves {} values instead of one{}", text_, stack_.size(),
        !stack_.empty() && stack_.back().file != nullptr ? " (a register file without READ)" : ""));
  }
  return std::move(eq_);
}

void Equation::Compiler::fail(const Token& token, std::string_view why) const {
  throw std::invalid_argument(fmt::format("equation '{}': token '{}' at offset {}: {}", text_,
                                          token.text, token.start, why));
}

// An instruction that pushes one value.
void Equation::Compiler::push(const Instruction& op) {
  eq_.ops_.push_back(op);
  stack_.push_back({});
}

// `FILE INDEX READ`: the constant index just compiled becomes a read of that register.
void Equation::Compiler::read(const Token& token) {
  const std::size_t n = stack_.size();
  if (n < 2 || stack_.back().file != nullptr || stack_[n - 2].file == nullptr || eq_.ops_.empty() ||
      eq_.ops_.back().code != Op::kConst) {
    fail(token, "READ needs a register file and a constant index before it ('A 7 READ')");
  }
  const FileName* file = stack_[n - 2].file;
  const std::uint64_t index = eq_.ops_.back().u;
  if (index >= file->count) {
    fail(token, fmt::format("{} {} does not exist ({} has {} counters)", file->token, index,
                            file->token, file->count));
  }
  eq_.ops_.back() = Instruction{file->read, static_cast<std::uint32_t>(index)};
  stack_.pop_back();
  stack_.back().file = nullptr;
}

// `$Name`: a device variable or test, else a counter of the same set, which is then referenced.
Equation::Instruction Equation::Compiler::variable(const Token& token) {
  const std::string_view name = token.text.substr(1);
  if (const std::optional<Instruction> device = device_operand(name)) return *device;
  const std::optional<int> index = resolve_ ? resolve_(name) : std::nullopt;
  if (!index || *index < 0) {
    fail(token, "neither a device variable nor a counter of this metric set");
  }
  eq_.references_.push_back(*index);
  return Instruction{Op::kCounter, static_cast<std::uint32_t>(*index)};
}

// A device variable, or a test of one slice, subslice or Xe-core; nullopt for any other name.
std::optional<Equation::Instruction> Equation::Compiler::device_operand(std::string_view name) {
  for (std::size_t i = 0; i < kVariables.size(); ++i) {
    if (kVariables[i].name == name) {
      return Instruction{Op::kVariable, static_cast<std::uint32_t>(i)};
    }
  }
  if (const std::optional<int> xe_core = parse_xe_core_test(name)) {
    return Instruction{Op::kXeCoreAvailable, static_cast<std::uint32_t>(*xe_core)};
  }
  const std::optional<SliceTest> test = parse_slice_test(name);
  if (!test) return std::nullopt;
  if (test->subslice < 0) {
    return Instruction{Op::kSliceAvailable, static_cast<std::uint32_t>(test->slice)};
  }
  return Instruction{Op::kSubsliceAvailable,
                     static_cast<std::uint32_t>(8 * test->slice + test->subslice)};
}

// An operator: replaces the two values before it with its result.
void Equation::Compiler::push_operator(const Token& token) {
  const OperatorName* op = find_operator(token.text);
  if (op == nullptr) fail(token, "unknown token");
  const std::size_t n = stack_.size();
  if (n < 2 || stack_.back().file != nullptr || stack_[n - 2].file != nullptr) {
    fail(token, "needs two values before it");
  }
  eq_.ops_.push_back(Instruction{op->code});
  stack_.pop_back();
}

Equation Equation::compile(std::string_view text, const CounterResolver& resolve) {
  Compiler compiler(text, resolve);
  std::size_t pos = 0;
  while (const std::optional<Token> token = next_token(text, pos)) compiler.add(*token);
  return compiler.finish();
}

EquationValue Equation::apply(OpCode code, const EquationValue& a, const EquationValue& b) {
  return apply_operator(code, a, b);
}

std::string_view Equation::unknown_variable(const DeviceVariables& vars) const {
  for (const Instruction& op : ops_) {
    if (op.code != Op::kVariable || op.index < kFirstDeviceQueryVariable) continue;
    const std::string_view name = kVariables[op.index].name;
    if (!vars.known(name)) return name;
  }
  return {};
}

void Equation::load_operand(const Instruction& op, const EquationInputs& in, EquationValue& out) {
  using V = EquationValue;
  switch (op.code) {
    case Op::kConst:
      out = V::of_uint(op.u);
      return;
    case Op::kConstFloat:
      out = V::of_float(op.f);
      return;
    case Op::kVariable:
      out = V::of_uint(in.vars.*(kVariables[op.index].member));
      return;
    case Op::kCounter:
      out = op.index < in.counters.size() ? in.counters[op.index] : V::of_uint(0);
      return;
    case Op::kSliceAvailable:
      out = V::of_uint((in.vars.slice_mask >> op.index) & 1u);
      return;
    case Op::kSubsliceAvailable:
      out = V::of_uint((in.vars.subslice_mask >> op.index) & 1u);
      return;
    case Op::kXeCoreAvailable:
      out = V::of_uint((in.vars.xe_core_mask >> op.index) & 1u);
      return;
    case Op::kReadA:
      out = V::of_uint(in.deltas.a[op.index]);
      return;
    case Op::kReadB:
      out = V::of_uint(in.deltas.b[op.index]);
      return;
    case Op::kReadC:
      out = V::of_uint(in.deltas.c[op.index]);
      return;
    case Op::kReadGpuTime:
      out = V::of_uint(in.deltas.timestamp);
      return;
    case Op::kReadGpuClock:
      out = V::of_uint(in.deltas.gpu_ticks);
      return;
    case Op::kReadPerfCnt:
      out = V::of_uint(in.deltas.perfcnt[op.index]);
      return;
    default:
      out = {};
      return;
  }
}

namespace {

// One stack slot, left uninitialised: a value is always pushed before it is read, and zeroing
// every slot of an array of EquationValue (kMaxDepth of them, 2 kB) on each evaluation cost more
// than the equation itself. Assigning to `value` begins its life (EquationValue is trivially
// copyable).
union StackSlot {
  StackSlot() {}
  EquationValue value;
};

}  // namespace

EquationValue Equation::evaluate(const EquationInputs& in) const {
  std::array<StackSlot, kMaxDepth> stack;
  int top = 0;  // number of values on the stack
  for (const Instruction& op : ops_) {
    if (op.code <= Op::kReadPerfCnt) {
      load_operand(op, in, stack[top++].value);
      continue;
    }
    const EquationValue& b = stack[--top].value;
    EquationValue& a = stack[top - 1].value;
    a = apply_operator(op.code, a, b);
  }
  if (top != 1) return EquationValue::of_uint(0);
  // Field by field: the slot was written so, and a copy of it whole waited on those writes.
  const EquationValue& result = stack[0].value;
  return EquationValue{result.is_float, result.u, result.f, result.div_by_zero};
}

}  // namespace oaprof::oa
