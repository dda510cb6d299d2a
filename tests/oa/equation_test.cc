#include "oa/equation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace oaprof::oa {
namespace {

using ::testing::HasSubstr;

EquationValue eval(const std::string& text, const CounterDeltas& d = {},
                   const DeviceVariables& v = {}) {
  return Equation::compile(text).evaluate({d, v});
}

TEST(EquationTest, UnsignedOperatorsFollowCArithmetic) {
  EXPECT_EQ(eval("2 3 UADD").u, 5u);
  EXPECT_EQ(eval("7 2 USUB").u, 5u);
  EXPECT_EQ(eval("2 3 USUB").u, ~std::uint64_t{0});  // uint64 wraps as in Mesa's C
  EXPECT_EQ(eval("6 7 UMUL").u, 42u);
  EXPECT_EQ(eval("7 2 UDIV").u, 3u);  // truncating
  EXPECT_EQ(eval("7 2 UMIN").u, 2u);
  EXPECT_EQ(eval("7 2 UMAX").u, 7u);
  EXPECT_EQ(eval("0x0F 0x3C AND").u, 0x0Cu);
  EXPECT_EQ(eval("0x0F 0x30 OR").u, 0x3Fu);
  EXPECT_EQ(eval("1 4 <<").u, 16u);
  EXPECT_EQ(eval("256 4 >>").u, 16u);
  EXPECT_EQ(eval("1 64 <<").u, 0u);  // no undefined shift
  EXPECT_FALSE(eval("2 3 UADD").is_float);
}

TEST(EquationTest, FloatOperatorsAndMixedOperands) {
  EXPECT_DOUBLE_EQ(eval("7 2 FDIV").f, 3.5);
  EXPECT_DOUBLE_EQ(eval("1.5 2 FMUL").f, 3.0);
  EXPECT_DOUBLE_EQ(eval("1 2 FSUB").f, -1.0);
  EXPECT_DOUBLE_EQ(eval("1 2 FADD").f, 3.0);
  EXPECT_DOUBLE_EQ(eval("1 2 FMAX").f, 2.0);
  EXPECT_DOUBLE_EQ(eval("1 2 FMIN").f, 1.0);
  EXPECT_TRUE(eval("7 2 FDIV").is_float);
  // A float consumed by a U-operator is truncated, as a double assigned to uint64_t.
  EXPECT_EQ(eval("7 2 FDIV 2 UMUL").u, 6u);
  EXPECT_EQ(eval("1 2 FSUB 5 UADD").u, 5u);  // negative saturates at 0 first
}

TEST(EquationTest, DivisionByZeroGivesZero) {
  EXPECT_EQ(eval("7 0 UDIV").u, 0u);
  EXPECT_DOUBLE_EQ(eval("7 0 FDIV").f, 0.0);
  EXPECT_DOUBLE_EQ(eval("A 0 READ 100 UMUL GPU_CLOCK 0 READ FDIV").f, 0.0);
}

// IGT's value (0) is kept for parity, and the value says a division by zero made it, through
// every operation it goes into afterwards; a division by a non-zero value is not marked.
TEST(EquationTest, DivisionByZeroMarksTheValueAndWhatIsComputedFromIt) {
  EXPECT_TRUE(eval("7 0 UDIV").div_by_zero);
  EXPECT_TRUE(eval("7 0 FDIV").div_by_zero);
  EXPECT_TRUE(eval("7 0 UDIV 5 UADD").div_by_zero);
  EXPECT_TRUE(eval("100 7 0 FDIV FMIN").div_by_zero);
  EXPECT_TRUE(eval("A 0 READ 100 UMUL GPU_CLOCK 0 READ FDIV").div_by_zero);
  EXPECT_FALSE(eval("7 2 UDIV").div_by_zero);
  EXPECT_FALSE(eval("0 7 FDIV").div_by_zero);
  EXPECT_FALSE(eval("7 0 UMUL").div_by_zero);
}

TEST(EquationTest, ComparisonsAndLogic) {
  EXPECT_EQ(eval("3 2 UGTE").u, 1u);
  EXPECT_EQ(eval("2 3 UGTE").u, 0u);
  EXPECT_EQ(eval("2 3 ULT").u, 1u);
  EXPECT_EQ(eval("3 2 UGT").u, 1u);
  EXPECT_EQ(eval("3 3 ULTE").u, 1u);
  EXPECT_EQ(eval("3 3 EQ").u, 1u);
  EXPECT_EQ(eval("3 4 NEQ").u, 1u);
  EXPECT_EQ(eval("true 0 &&").u, 0u);
  EXPECT_EQ(eval("true 5 &&").u, 1u);
  EXPECT_EQ(eval("false 5 ||").u, 1u);
}

TEST(EquationTest, ReadsEveryRegisterFile) {
  CounterDeltas d;
  d.a[7] = 700;
  d.a[44] = 4400;
  d.b[3] = 30;
  d.c[7] = 70;
  d.timestamp = 12'000'000;
  d.gpu_ticks = 1'150'000;
  d.perfcnt[1] = 9;
  EXPECT_EQ(eval("A 7 READ", d).u, 700u);
  EXPECT_EQ(eval("A 44 READ", d).u, 4400u);
  EXPECT_EQ(eval("B 3 READ", d).u, 30u);
  EXPECT_EQ(eval("C 7 READ", d).u, 70u);
  EXPECT_EQ(eval("GPU_TIME 0 READ", d).u, 12'000'000u);
  EXPECT_EQ(eval("GPU_CLOCK 0 READ", d).u, 1'150'000u);
  EXPECT_EQ(eval("PERFCNT 1 READ", d).u, 9u);
}

TEST(EquationTest, DeviceVariables) {
  DeviceVariables v;
  v.eu_cores_total = 24;
  v.timestamp_frequency_hz = 12'000'000;
  v.sku_revision_id = 3;
  v.subslice_mask = 0b101;
  CounterDeltas d;
  d.timestamp = 12'000'000;
  EXPECT_EQ(eval("GPU_TIME 0 READ 1000000000 UMUL $GpuTimestampFrequency UDIV", d, v).u,
            1'000'000'000u);
  EXPECT_EQ(eval("$SkuRevisionId 0x02 UGTE", d, v).u, 1u);
  EXPECT_EQ(eval("$SubsliceMask 0x2 AND", d, v).u, 0u);
  EXPECT_EQ(eval("$SubsliceMask 0x4 AND", d, v).u, 4u);
  EXPECT_EQ(eval("true $QueryMode &&", d, v).u, 1u);
  for (const std::string_view name : device_variable_names()) {
    EXPECT_TRUE(device_variable(v, name).has_value()) << name;
  }
  EXPECT_FALSE(device_variable(v, "NoSuchVariable").has_value());
}

TEST(EquationTest, CounterReferencesResolveThroughTheSet) {
  const std::vector<std::string> symbols{"GpuCoreClocks", "GpuBusy"};
  auto resolve = [&](std::string_view name) -> std::optional<int> {
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      if (symbols[i] == name) return static_cast<int>(i);
    }
    return std::nullopt;
  };
  const Equation eq = Equation::compile("A 0 READ 100 UMUL $GpuCoreClocks FDIV", resolve);
  ASSERT_EQ(eq.counter_references().size(), 1u);
  EXPECT_EQ(eq.counter_references()[0], 0);
  CounterDeltas d;
  d.a[0] = 500;
  const std::vector<EquationValue> counters{EquationValue::of_uint(1000),
                                            EquationValue::of_uint(0)};
  EXPECT_DOUBLE_EQ(eq.evaluate({d, DeviceVariables{}, counters}).f, 50.0);
}

TEST(EquationTest, BadEquationsAreImportTimeErrors) {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      Equation::compile(text);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_THAT(error_of("1 2 FROB"), HasSubstr("unknown token"));
  EXPECT_THAT(error_of("$NoSuchCounter"), HasSubstr("neither a device variable nor a counter"));
  EXPECT_THAT(error_of("A 45 READ"), HasSubstr("A 45 does not exist"));
  EXPECT_THAT(error_of("B 8 READ"), HasSubstr("B 8 does not exist"));
  EXPECT_THAT(error_of("1 UADD"), HasSubstr("needs two values"));
  EXPECT_THAT(error_of("1 2"), HasSubstr("leaves 2 values"));
  EXPECT_THAT(error_of(""), HasSubstr("leaves 0 values"));
  EXPECT_THAT(error_of("A"), HasSubstr("register file without READ"));
  EXPECT_THAT(error_of("7 READ"), HasSubstr("READ needs"));
  EXPECT_THAT(error_of("A $EuCoresTotalCount READ"), HasSubstr("READ needs"));
  EXPECT_THAT(error_of("A 1 UADD"), HasSubstr("needs two values"));
  EXPECT_THAT(error_of("0xZZ"), HasSubstr("unknown token"));
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "1 ";
  EXPECT_THAT(error_of(deep), HasSubstr("deeper than"));
}

}  // namespace
}  // namespace oaprof::oa
