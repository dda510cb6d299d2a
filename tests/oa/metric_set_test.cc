#include "oa/metric_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "oa/device_facts.h"
#include "oa/metric_xml.h"
#include "oa/platform.h"
#include "tests/oa/igt_files.h"

namespace oaprof::oa {
namespace {

using ::testing::HasSubstr;

MetricCounter counter(const std::string& symbol, const std::string& equation,
                      const std::vector<std::string>& symbols,
                      MetricCounter::DataType type = MetricCounter::DataType::kUint64) {
  MetricCounter c;
  c.symbol = symbol;
  c.name = symbol;
  c.data_type = type;
  c.equation = Equation::compile(equation, MetricSet::resolver_for(symbols));
  return c;
}

TEST(MetricSetTest, EvaluationFollowsReferencesWhateverTheOrder) {
  const std::vector<std::string> s{"Per", "Total", "Clocks"};
  MetricSet set(
      "n", "S", "g",
      {counter("Per", "$Total $Clocks FDIV", s, MetricCounter::DataType::kFloat),
       counter("Total", "A 1 READ A 2 READ UADD", s), counter("Clocks", "GPU_CLOCK 0 READ", s)},
      {});
  const auto& order = set.evaluation_order();
  auto pos = [&](int i) { return std::find(order.begin(), order.end(), i) - order.begin(); };
  EXPECT_LT(pos(1), pos(0));
  EXPECT_LT(pos(2), pos(0));
  CounterDeltas d;
  d.a[1] = 30;
  d.a[2] = 10;
  d.gpu_ticks = 8;
  const auto v = set.evaluate(d, {});
  EXPECT_EQ(v[1].u, 40u);
  EXPECT_DOUBLE_EQ(v[0].f, 5.0);
}

// A counter computed from a counter that divided by zero is marked too, whatever its data type.
TEST(MetricSetTest, DivisionByZeroIsMarkedThroughReferencesAndDataTypes) {
  const std::vector<std::string> s{"Per", "Pct", "Clocks", "Fine"};
  MetricSet set("n", "S", "g",
                {counter("Per", "A 1 READ $Clocks UDIV", s),
                 counter("Pct", "$Per 100 UMUL", s, MetricCounter::DataType::kFloat),
                 counter("Clocks", "GPU_CLOCK 0 READ", s), counter("Fine", "A 1 READ 2 UDIV", s)},
                {});
  CounterDeltas d;
  d.a[1] = 30;
  const auto zero = set.evaluate(d, {});
  EXPECT_EQ(zero[0].u, 0u);  // IGT's value
  EXPECT_TRUE(zero[0].div_by_zero);
  EXPECT_TRUE(zero[1].div_by_zero);
  EXPECT_FALSE(zero[2].div_by_zero);
  EXPECT_FALSE(zero[3].div_by_zero);
  d.gpu_ticks = 3;
  const auto fine = set.evaluate(d, {});
  EXPECT_EQ(fine[0].u, 10u);
  EXPECT_FALSE(fine[0].div_by_zero);
  EXPECT_FALSE(fine[1].div_by_zero);
}

TEST(MetricSetTest, DataTypeShapesTheResult) {
  const std::vector<std::string> s{"U", "F", "U32", "B"};
  MetricSet set(
      "n", "S", "g",
      {counter("U", "7 2 FDIV", s), counter("F", "7 2 FDIV", s, MetricCounter::DataType::kFloat),
       counter("U32", "1 40 <<", s, MetricCounter::DataType::kUint32),
       counter("B", "5", s, MetricCounter::DataType::kBool)},
      {});
  const auto v = set.evaluate({}, {});
  EXPECT_EQ(v[0].u, 3u);
  EXPECT_FALSE(v[0].is_float);
  EXPECT_DOUBLE_EQ(v[1].f, 3.5);
  EXPECT_EQ(v[2].u, 0u);
  EXPECT_EQ(v[3].u, 1u);
}

// The table evaluates only the counters it shows (order_for): each counter of every set of IGT's
// Gen9, Gen12 and Xe-LPG files, alone with what it references, has the value, bit for bit, that
// evaluating the whole set gives it, and needs no more counters than the set has.
TEST(MetricSetTest, EvaluatingSomeCountersGivesTheValuesTheWholeSetGives) {
  std::mt19937_64 rng(33);
  int compared = 0;
  for (const std::string_view name : {"kblgt2", "tglgt2", "mtlgt2"}) {
    const std::filesystem::path path = testing::igt_file_for(name);
    if (path.empty()) GTEST_SKIP() << "no oa-" << name << ".xml beside the checkout";
    const Platform platform = require_platform_by_name(name);
    const DeviceVariables vars =
        device_variables(platform, table_facts(platform, "metric_set_test"));
    const MetricFile file = import_metrics_xml(testing::read_text(path), std::string(name));
    for (const MetricSet& set : file.sets) {
      CounterDeltas d;
      d.timestamp = rng() % 100'000;
      d.gpu_ticks = rng() % 3 ? rng() % 1'000'000 : 0;  // now and then a division by zero
      for (auto& a : d.a) a = rng() % 5'000'000;
      for (auto& b : d.b) b = static_cast<std::uint32_t>(rng());
      const std::vector<EquationValue> all = set.evaluate(d, vars);
      std::vector<EquationValue> some;
      for (int i = 0; i < static_cast<int>(set.counters().size()); ++i) {
        const int wanted[] = {i};
        const std::vector<int> order = set.order_for(wanted);
        EXPECT_LE(order.size(), set.evaluation_order().size());
        EXPECT_EQ(order.back(), i);  // what it references comes first
        // Nothing left from an earlier evaluation: a counter it skipped would read this.
        some.assign(set.counters().size(), EquationValue::of_uint(0xdead));
        set.evaluate_into(d, vars, some, order);
        const EquationValue& a = all[static_cast<std::size_t>(i)];
        const EquationValue& b = some[static_cast<std::size_t>(i)];
        EXPECT_EQ(std::tie(a.is_float, a.u, a.div_by_zero),
                  std::tie(b.is_float, b.u, b.div_by_zero))
            << set.symbol() << "." << set.counters()[static_cast<std::size_t>(i)].symbol;
        EXPECT_EQ(std::bit_cast<std::uint64_t>(a.f), std::bit_cast<std::uint64_t>(b.f));
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

TEST(MetricSetTest, AttributeGivesTheXmlValueOrEmpty) {
  const MetricSet set("n", "S", "g", {}, {},
                      {{"symbol_name", "S"}, {"oa_format", "128B_MPEC8_NOA16"}});
  EXPECT_EQ(set.attribute("oa_format"), "128B_MPEC8_NOA16");
  EXPECT_EQ(set.attribute("symbol_name"), "S");
  EXPECT_TRUE(set.attribute("mdapi_supported_apis").empty());
}

TEST(MetricSetTest, InvalidSetsAreRefused) {
  const std::vector<std::string> s{"A", "B"};
  try {
    MetricSet("n", "S", "g", {counter("A", "$B", s), counter("B", "$A 1 UADD", s)}, {});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("cycle"));
  }
  try {
    MetricSet("n", "S", "g", {counter("A", "$A", s)}, {});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("cycle"));
  }
  // A reference index beyond the set (the resolver knew more counters than the set holds).
  EXPECT_THROW(MetricSet("n", "S", "g", {counter("A", "$B", s)}, {}), std::invalid_argument);
  EXPECT_THROW(MetricSet("n", "", "g", {}, {}), std::invalid_argument);
  EXPECT_THROW(MetricSet("n", "S", "g", {counter("A", "1", s), counter("A", "2", s)}, {}),
               std::invalid_argument);
}

TEST(MetricSetTest, RegisterConfigsByKindAndAvailability) {
  RegisterConfig always{RegisterConfig::Kind::kNoa, std::nullopt, 0, {{0x9888, 1}, {0x9888, 2}}};
  RegisterConfig slice1{
      RegisterConfig::Kind::kNoa, Equation::compile("$SliceMask 2 AND"), 1, {{0x9888, 3}}};
  RegisterConfig flex{RegisterConfig::Kind::kFlex, std::nullopt, 0, {{0xE458, 5}}};
  MetricSet set("n", "S", "g", {}, {always, slice1, flex});
  DeviceVariables v;
  v.slice_mask = 1;
  EXPECT_EQ(set.writes(RegisterConfig::Kind::kNoa, v).size(), 2u);
  v.slice_mask = 3;
  EXPECT_EQ(set.writes(RegisterConfig::Kind::kNoa, v),
            (std::vector<RegisterWrite>{{0x9888, 1}, {0x9888, 2}, {0x9888, 3}}));
  EXPECT_EQ(set.register_count(RegisterConfig::Kind::kNoa), 3u);
  EXPECT_EQ(set.register_count(RegisterConfig::Kind::kBoolean), 0u);
  EXPECT_TRUE(set.writes(RegisterConfig::Kind::kBoolean, v).empty());
  EXPECT_TRUE(set.needs_programming());
  EXPECT_EQ(register_config_kind_name(RegisterConfig::Kind::kBoolean), "OA");
}

}  // namespace
}  // namespace oaprof::oa
