#include "oa/equation.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <stdexcept>

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

std::uint64_t EquationValue::as_uint() const {
  if (!is_float) return u;
  if (!(f >= 0.0) || f >= 18446744073709551616.0) return 0;  // NaN, negative, 2^64 and above
  return static_cast<std::uint64_t>(f);
}

Equation Equation::compile(std::string_view text, const CounterResolver& resolve) {
  Equation eq;
  eq.text_ = std::string(text);
  // What each stack slot holds at compile time: a value, or a register file awaiting its index.
  struct Slot {
    const FileName* file = nullptr;
  };
  std::vector<Slot> stack;
  auto fail = [&](std::size_t pos, std::string_view token, std::string_view why) {
    throw std::invalid_argument(
        fmt::format("equation '{}': token '{}' at offset {}: {}", text, token, pos, why));
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = text.find_first_not_of(" \t\r\n", pos);
    if (start == std::string_view::npos) break;
    std::size_t stop = text.find_first_of(" \t\r\n", start);
    if (stop == std::string_view::npos) stop = text.size();
    const std::string_view token = text.substr(start, stop - start);
    pos = stop;

    std::uint64_t u = 0;
    double f = 0;
    bool is_float = false;
    if (token == "READ") {
      if (stack.size() < 2 || stack.back().file != nullptr ||
          stack[stack.size() - 2].file == nullptr || eq.ops_.empty() ||
          eq.ops_.back().code != Op::kConst) {
        fail(start, token,
             "READ needs a register file and a constant index before it ('A 7 READ')");
      }
      const FileName* file = stack[stack.size() - 2].file;
      const std::uint64_t index = eq.ops_.back().u;
      if (index >= file->count) {
        fail(start, token,
             fmt::format("{} {} does not exist ({} has {} counters)", file->token, index,
                         file->token, file->count));
      }
      eq.ops_.back() = Instruction{file->read, static_cast<std::uint32_t>(index)};
      stack.pop_back();
      stack.back().file = nullptr;
      continue;
    }
    if (token == "true" || token == "false") {
      eq.ops_.push_back(Instruction{Op::kConst, 0, token == "true" ? 1u : 0u});
      stack.push_back({});
    } else if (parse_number(token, u, f, is_float)) {
      eq.ops_.push_back(is_float ? Instruction{Op::kConstFloat, 0, 0, f}
                                 : Instruction{Op::kConst, 0, u});
      stack.push_back({});
    } else if (token.size() > 1 && token[0] == '$') {
      const std::string_view name = token.substr(1);
      bool found = false;
      for (std::size_t i = 0; i < kVariables.size(); ++i) {
        if (kVariables[i].name == name) {
          eq.ops_.push_back(Instruction{Op::kVariable, static_cast<std::uint32_t>(i)});
          found = true;
          break;
        }
      }
      const std::optional<int> xe_core = found ? std::nullopt : parse_xe_core_test(name);
      if (xe_core) {
        found = true;
        eq.ops_.push_back(Instruction{Op::kXeCoreAvailable, static_cast<std::uint32_t>(*xe_core)});
      }
      const std::optional<SliceTest> slice_test = found ? std::nullopt : parse_slice_test(name);
      if (slice_test) {
        found = true;
        eq.ops_.push_back(
            slice_test->subslice < 0
                ? Instruction{Op::kSliceAvailable, static_cast<std::uint32_t>(slice_test->slice)}
                : Instruction{
                      Op::kSubsliceAvailable,
                      static_cast<std::uint32_t>(8 * slice_test->slice + slice_test->subslice)});
      }
      if (!found) {
        const std::optional<int> index = resolve ? resolve(name) : std::nullopt;
        if (!index || *index < 0) {
          fail(start, token, "neither a device variable nor a counter of this metric set");
        }
        eq.ops_.push_back(Instruction{Op::kCounter, static_cast<std::uint32_t>(*index)});
        eq.references_.push_back(*index);
      }
      stack.push_back({});
    } else {
      const FileName* file = nullptr;
      for (const FileName& candidate : kFiles) {
        if (candidate.token == token) file = &candidate;
      }
      if (file != nullptr) {
        stack.push_back({file});
      } else {
        const OperatorName* op = nullptr;
        for (const OperatorName& candidate : kOperators) {
          if (candidate.token == token) op = &candidate;
        }
        if (op == nullptr) fail(start, token, "unknown token");
        if (stack.size() < 2 || stack.back().file != nullptr ||
            stack[stack.size() - 2].file != nullptr) {
          fail(start, token, "needs two values before it");
        }
        eq.ops_.push_back(Instruction{op->code});
        stack.pop_back();
      }
    }
    if (static_cast<int>(stack.size()) > kMaxDepth) {
      fail(start, token, fmt::format("the equation is deeper than {} values", kMaxDepth));
    }
    eq.max_depth_ = std::max(eq.max_depth_, static_cast<int>(stack.size()));
  }
  if (stack.size() != 1 || stack.back().file != nullptr) {
    throw std::invalid_argument(fmt::format(
        "equation '{}' leaves {} values instead of one{}", text, stack.size(),
        !stack.empty() && stack.back().file != nullptr ? " (a register file without READ)" : ""));
  }
  return eq;
}

std::string_view Equation::unknown_variable(const DeviceVariables& vars) const {
  for (const Instruction& op : ops_) {
    if (op.code != Op::kVariable || op.index < kFirstDeviceQueryVariable) continue;
    const std::string_view name = kVariables[op.index].name;
    if (!vars.known(name)) return name;
  }
  return {};
}

EquationValue Equation::evaluate(const EquationInputs& in) const {
  std::array<EquationValue, kMaxDepth> stack;
  int top = 0;  // number of values on the stack
  auto u = [](std::uint64_t v) { return EquationValue::of_uint(v); };
  auto fl = [](double v) { return EquationValue::of_float(v); };
  for (const Instruction& op : ops_) {
    if (op.code <= Op::kReadPerfCnt) {
      EquationValue v;
      switch (op.code) {
        case Op::kConst:
          v = u(op.u);
          break;
        case Op::kConstFloat:
          v = fl(op.f);
          break;
        case Op::kVariable:
          v = u(in.vars.*(kVariables[op.index].member));
          break;
        case Op::kCounter:
          v = op.index < in.counters.size() ? in.counters[op.index] : u(0);
          break;
        case Op::kSliceAvailable:
          v = u((in.vars.slice_mask >> op.index) & 1u);
          break;
        case Op::kSubsliceAvailable:
          v = u((in.vars.subslice_mask >> op.index) & 1u);
          break;
        case Op::kXeCoreAvailable:
          v = u((in.vars.xe_core_mask >> op.index) & 1u);
          break;
        case Op::kReadA:
          v = u(in.deltas.a[op.index]);
          break;
        case Op::kReadB:
          v = u(in.deltas.b[op.index]);
          break;
        case Op::kReadC:
          v = u(in.deltas.c[op.index]);
          break;
        case Op::kReadGpuTime:
          v = u(in.deltas.timestamp);
          break;
        case Op::kReadGpuClock:
          v = u(in.deltas.gpu_ticks);
          break;
        case Op::kReadPerfCnt:
          v = u(in.deltas.perfcnt[op.index]);
          break;
        default:
          break;
      }
      stack[top++] = v;
      continue;
    }
    const EquationValue b = stack[--top];
    const EquationValue a = stack[top - 1];
    const std::uint64_t au = a.as_uint(), bu = b.as_uint();
    const double af = a.as_double(), bf = b.as_double();
    // Mesa's and IGT's generators turn each operator into one C statement on typed temporaries
    // ("uint64_t t = a * b;", "double t = a + b;"), so the C type of the operands decides the
    // arithmetic: +, -, *, min and comparisons happen in double when either operand is a double
    // and in uint64 (wrapping) when both are integers, and only the assignment converts. UDIV and
    // the F-divisions and FMAX convert their operands first. The shifts and bitwise operators only
    // exist on integers.
    const bool in_double = a.is_float || b.is_float;
    auto uint_of = [&](double integer_result_in_double, std::uint64_t integer_result) {
      return u(in_double ? EquationValue::of_float(integer_result_in_double).as_uint()
                         : integer_result);
    };
    auto float_of = [&](double double_result, std::uint64_t integer_result) {
      return fl(in_double ? double_result : static_cast<double>(integer_result));
    };
    EquationValue r;
    switch (op.code) {
      case Op::kUAdd:
        r = uint_of(af + bf, au + bu);
        break;
      case Op::kUSub:
        r = uint_of(af - bf, au - bu);
        break;
      case Op::kUMul:
        r = uint_of(af * bf, au * bu);
        break;
      case Op::kUDiv:
        r = u(bu == 0 ? 0 : au / bu);
        break;
      case Op::kUMin:
        r = uint_of(af < bf ? af : bf, au < bu ? au : bu);
        break;
      case Op::kUMax:
        r = uint_of(af > bf ? af : bf, au > bu ? au : bu);
        break;
      case Op::kFAdd:
        r = float_of(af + bf, au + bu);
        break;
      case Op::kFSub:
        r = float_of(af - bf, au - bu);
        break;
      case Op::kFMul:
        r = float_of(af * bf, au * bu);
        break;
      case Op::kFDiv:
        r = fl(bf == 0.0 ? 0.0 : af / bf);
        break;
      case Op::kFMin:
        r = fl(af < bf ? af : bf);
        break;
      case Op::kFMax:
        r = fl(af > bf ? af : bf);
        break;
      case Op::kAnd:
        r = u(au & bu);
        break;
      case Op::kOr:
        r = u(au | bu);
        break;
      case Op::kShl:
        r = u(bu >= 64 ? 0 : au << bu);
        break;
      case Op::kShr:
        r = u(bu >= 64 ? 0 : au >> bu);
        break;
      case Op::kUGt:
        r = u(in_double ? af > bf : au > bu);
        break;
      case Op::kUGte:
        r = u(in_double ? af >= bf : au >= bu);
        break;
      case Op::kULt:
        r = u(in_double ? af < bf : au < bu);
        break;
      case Op::kULte:
        r = u(in_double ? af <= bf : au <= bu);
        break;
      case Op::kEq:
        r = u(in_double ? af == bf : au == bu);
        break;
      case Op::kNeq:
        r = u(in_double ? af != bf : au != bu);
        break;
      case Op::kLogicalAnd:
        r = u(af != 0.0 && bf != 0.0);
        break;
      case Op::kLogicalOr:
        r = u(af != 0.0 || bf != 0.0);
        break;
      default:
        break;
    }
    // IGT's generated code gives x/0 as 0 (igt-gpu-tools lib/i915/perf-configs/codegen.py,
    // emit_udiv and emit_fdiv); the value stays that, and says so.
    const bool divides_by_zero =
        (op.code == Op::kUDiv && bu == 0) || (op.code == Op::kFDiv && bf == 0.0);
    r.div_by_zero = a.div_by_zero || b.div_by_zero || divides_by_zero;
    stack[top - 1] = r;
  }
  return top == 1 ? stack[0] : u(0);
}

}  // namespace oaprof::oa
