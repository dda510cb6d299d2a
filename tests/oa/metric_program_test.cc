// MetricProgram (issue 33) against the interpreter it replaces on the row path: every value,
// field for field and bit for bit, over every metric set of IGT's files and over hand-made sets
// that put every operator on every type of operand at the edges of the arithmetic.
#include "oa/metric_program.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "oa/device_facts.h"
#include "oa/metric_set.h"
#include "oa/metric_xml.h"
#include "oa/platform.h"
#include "tests/oa/igt_files.h"

namespace oaprof::oa {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// Whether `got` is `want` in every field, doubles compared by their bits (NaN and -0 included);
// counters outside `order` must be left as they were.
::testing::AssertionResult same_values(const MetricSet& set, const std::vector<EquationValue>& want,
                                       const std::vector<EquationValue>& got) {
  if (want.size() != got.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (std::size_t i = 0; i < want.size(); ++i) {
    const EquationValue& a = want[i];
    const EquationValue& b = got[i];
    if (a.is_float != b.is_float || a.u != b.u || a.div_by_zero != b.div_by_zero ||
        std::bit_cast<std::uint64_t>(a.f) != std::bit_cast<std::uint64_t>(b.f)) {
      return ::testing::AssertionFailure() << fmt::format(
                 "{}.{} ({}): interpreter {{{}, {}, {}, {}}}, program {{{}, {}, {}, {}}}",
                 set.symbol(), set.counters()[i].symbol, set.counters()[i].equation.text(),
                 a.is_float, a.u, a.f, a.div_by_zero, b.is_float, b.u, b.f, b.div_by_zero);
    }
  }
  return ::testing::AssertionSuccess();
}

// Deltas of the `n`th row: ordinary counts, zero clocks and times (divisions by zero) and
// counters near 2^64 (wrapping products, doubles past 2^64) in turn.
CounterDeltas deltas_for(std::mt19937_64& rng, int n) {
  CounterDeltas d;
  const bool extreme = n % 4 == 3;
  auto value = [&] { return extreme ? kMax - rng() % 5 : rng() % 5'000'000; };
  d.timestamp = n % 4 == 1 ? 0 : value();
  d.gpu_ticks = n % 4 == 2 ? 0 : value();
  d.has_gpu_ticks = true;
  for (auto& a : d.a) a = n % 5 == 4 ? 0 : value();
  for (auto& b : d.b) b = value();
  for (auto& c : d.c) c = value();
  for (auto& p : d.perfcnt) p = value();
  return d;
}

// Every row of `set` evaluated both ways, the whole set and each counter alone with what it
// references; returns the number of values compared.
int compare_rows(const MetricSet& set, const DeviceVariables& vars, std::mt19937_64& rng) {
  const MetricProgram whole(set, vars);
  int compared = 0;
  for (int n = 0; n < 8; ++n) {
    const CounterDeltas d = deltas_for(rng, n);
    std::vector<EquationValue> want, got;
    set.evaluate_into(d, vars, want);
    whole.evaluate_into(d, got);
    EXPECT_TRUE(same_values(set, want, got)) << "row " << n;
    compared += static_cast<int>(want.size());
  }
  const CounterDeltas d = deltas_for(rng, 3);
  const int counters = static_cast<int>(set.counters().size());
  for (int i = 0; i < counters; i += std::max(7, counters / 300)) {
    const int wanted[] = {i};
    const std::vector<int> order = set.order_for(wanted);
    std::vector<EquationValue> want(set.counters().size(), EquationValue::of_uint(0xdead));
    std::vector<EquationValue> got = want;
    set.evaluate_into(d, vars, want, order);
    MetricProgram(set, vars, order).evaluate_into(d, got);
    EXPECT_TRUE(same_values(set, want, got)) << "counter " << i << " alone";
  }
  return compared;
}

// IGT's files in igt/, igt-mtl/ and igt-xe/ whose platform oaprof knows, with its variables.
TEST(MetricProgramTest, EveryIgtSetGivesTheInterpretersValues) {
  std::vector<std::filesystem::path> files = testing::igt_files();
  for (const auto& name : {"mtlgt2", "mtlgt3"}) files.push_back(testing::igt_file_for(name));
  files.push_back(std::filesystem::path(OAPROF_IGT_XE_METRICS_DIR) / "oa-lnl.xml");
  std::mt19937_64 rng(33);
  int compared = 0, sets = 0;
  for (const std::filesystem::path& path : files) {
    if (!std::filesystem::is_regular_file(path)) continue;
    const std::string name = path.stem().string().substr(3);  // oa-<name>
    const std::optional<Platform> platform = platform_by_name(name);
    if (!platform) continue;
    const DeviceVariables vars =
        device_variables(*platform, table_facts(*platform, "metric_program_test"));
    for (const MetricSet& set : import_metrics_xml(testing::read_text(path), name).sets) {
      compared += compare_rows(set, vars, rng);
      ++sets;
    }
  }
  if (sets == 0) GTEST_SKIP() << "no IGT metric files beside the checkout";
  EXPECT_GT(compared, 10'000);
}

// Operands of every type a program handles: a READ, integer and double constants (folded when
// both are), device variables (constants of the run, 0 where unknown), integer, double,
// boolean and divided-by-zero counters, and values at the edges (2^64 - 1, 2^64 as a double, a
// negative double, NaN's neighbours: +inf).
const std::vector<std::string> kOperands{"A 3 READ",
                                         "B 1 READ",
                                         "0",
                                         "7",
                                         "2.5",
                                         "0.0",
                                         "18446744073709551615",
                                         "$Uint",
                                         "$Float",
                                         "$Huge",
                                         "$Neg",
                                         "$Inf",
                                         "$Bool",
                                         "$Zero",
                                         "$DivZero",
                                         "$EuCoresTotalCount",
                                         "$L3BankTotalCount",
                                         "$GtSlice0",
                                         "64",
                                         "70"};
const std::vector<std::string> kOperators{
    "UADD", "USUB", "UMUL", "UDIV", "UMIN", "UMAX", "FADD", "FSUB", "FMUL", "FDIV", "FMIN", "FMAX",
    "AND",  "OR",   "<<",   ">>",   "UGT",  "UGTE", "ULT",  "ULTE", "EQ",   "NEQ",  "&&",   "||"};

MetricCounter counter(const std::string& symbol, const std::string& equation,
                      MetricCounter::DataType type, const Equation::CounterResolver& resolve) {
  MetricCounter c;
  c.symbol = symbol;
  c.name = symbol;
  c.data_type = type;
  c.equation = Equation::compile(equation, resolve);
  return c;
}

// The operand counters, then `x y OP` and `x y OP z OP2` for every pair, in every data type.
MetricSet every_operator_set() {
  using T = MetricCounter::DataType;
  std::vector<std::pair<std::string, T>> bases{
      {"Uint", T::kUint64}, {"Float", T::kFloat}, {"Huge", T::kDouble}, {"Neg", T::kDouble},
      {"Inf", T::kDouble},  {"Bool", T::kBool},   {"Zero", T::kUint32}, {"DivZero", T::kFloat}};
  const std::vector<std::string> base_equations{"A 1 READ 3 UDIV",
                                                "A 1 READ 3 FDIV",
                                                "18446744073709551615 2 FMUL",
                                                "0 A 2 READ FSUB",
                                                "1e308 10 FMUL",
                                                "A 4 READ",
                                                "1 40 <<",
                                                "A 5 READ GPU_CLOCK 0 READ FDIV"};
  std::vector<std::string> symbols;
  for (const auto& [symbol, type] : bases) symbols.push_back(symbol);
  const T types[] = {T::kUint64, T::kUint32, T::kFloat, T::kDouble, T::kBool};
  std::vector<std::pair<std::string, std::string>> equations;
  int n = 0;
  for (const std::string& op : kOperators) {
    for (const std::string& x : kOperands) {
      for (const std::string& y : kOperands) {
        const std::string& z = kOperands[static_cast<std::size_t>(n) % kOperands.size()];
        const std::string& op2 = kOperators[static_cast<std::size_t>(n) % kOperators.size()];
        equations.emplace_back(fmt::format("X{}", n++), fmt::format("{} {} {}", x, y, op));
        equations.emplace_back(fmt::format("X{}", n++),
                               fmt::format("{} {} {} {} {}", x, y, op, z, op2));
      }
    }
  }
  for (const auto& [symbol, equation] : equations) symbols.push_back(symbol);
  const Equation::CounterResolver resolve = MetricSet::resolver_for(symbols);
  std::vector<MetricCounter> counters;
  for (std::size_t i = 0; i < bases.size(); ++i) {
    counters.push_back(counter(bases[i].first, base_equations[i], bases[i].second, resolve));
  }
  for (std::size_t i = 0; i < equations.size(); ++i) {
    counters.push_back(
        counter(equations[i].first, equations[i].second, types[i % std::size(types)], resolve));
  }
  return MetricSet("every operator", "EveryOperator", "g", std::move(counters), {});
}

TEST(MetricProgramTest, EveryOperatorOnEveryOperandTypeGivesTheInterpretersValue) {
  const MetricSet set = every_operator_set();
  ASSERT_GT(set.counters().size(), 19'000u);
  const Platform platform = require_platform_by_name("tglgt2");
  DeviceVariables vars = device_variables(platform, table_facts(platform, "metric_program_test"));
  std::mt19937_64 rng(7);
  EXPECT_GT(compare_rows(set, vars, rng), 150'000);
  // The same with other device variables: they are folded into the program.
  vars.eu_cores_total = 0;
  vars.slice_mask = 0;
  EXPECT_GT(compare_rows(set, vars, rng), 150'000);
}

// An empty equation (a counter made by hand) is 0, as the interpreter gives it.
TEST(MetricProgramTest, AnEmptyEquationIsZero) {
  MetricCounter c;
  c.symbol = "Empty";
  const MetricSet set("n", "S", "g", {c}, {});
  const DeviceVariables vars;
  std::vector<EquationValue> want, got;
  set.evaluate_into(CounterDeltas{}, vars, want);
  MetricProgram(set, vars).evaluate_into(CounterDeltas{}, got);
  EXPECT_TRUE(same_values(set, want, got));
  EXPECT_EQ(got.at(0).u, 0u);
}

}  // namespace
}  // namespace oaprof::oa
