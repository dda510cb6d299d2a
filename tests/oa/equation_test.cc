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
  // F-operators on two integers compute in uint64, as `double t = a - b;` with uint64_t a, b
  // does in Mesa's and IGT's generated C.
  EXPECT_DOUBLE_EQ(eval("1 2 FSUB").f, 18446744073709551615.0);
  EXPECT_DOUBLE_EQ(eval("1.0 2 FSUB").f, -1.0);
  EXPECT_DOUBLE_EQ(eval("1 2 FADD").f, 3.0);
  EXPECT_DOUBLE_EQ(eval("1 2 FMAX").f, 2.0);
  EXPECT_DOUBLE_EQ(eval("1 2 FMIN").f, 1.0);
  EXPECT_TRUE(eval("7 2 FDIV").is_float);
  // A U-operator with a double operand computes in double and truncates the result, as
  // `uint64_t t = a * b;` does: 3.5 × 2 = 7 (IGT's VMEBusy-style "... 2 FDIV 100 UMUL").
  EXPECT_EQ(eval("7 2 FDIV 2 UMUL").u, 7u);
  EXPECT_EQ(eval("7 2 FDIV 2 UDIV").u, 1u);  // UDIV converts its operands first: 3 / 2
  // Out of uint64's range: 2^64 + 5 converts to 0, as on x86-64; negative gives 0 too.
  EXPECT_EQ(eval("1 2 FSUB 5 UADD").u, 0u);
  EXPECT_EQ(eval("1.0 2 FSUB 5 UADD").u, 4u);  // -1.0 + 5 = 4.0 in double
  EXPECT_EQ(eval("1.0 2 FSUB 1 UMUL").u, 0u);  // -1.0 converts to 0
  EXPECT_EQ(eval("2.5 2 UGT").u, 1u);          // comparisons in double when either is
  EXPECT_EQ(eval("2 2.5 UMIN").u, 2u);
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

TEST(EquationTest, XeLpgVariablesAndSliceTests) {
  // Mesa gen_perf.py hw_vars (bminor/mesa-mesa 036ec0bb89c9): the Xe-LPG names alias the older
  // variables, $XeCoreMask is the subslice mask; $GtSlice<N> tests a slice, and
  // $GtSlice<N>XeCore<M> bit 8N + M of the subslice mask.
  DeviceVariables v;
  v.eu_cores_total = 128;
  v.eu_threads_count = 8;
  v.eu_subslices_total = 8;
  v.slice_mask = 0b11;
  v.subslice_mask = 0x0F0D;  // slice 0: Xe-cores 0, 2, 3; slice 1: 0-3
  EXPECT_EQ(eval("$VectorEngineTotalCount", {}, v).u, 128u);
  EXPECT_EQ(eval("$VectorEngineThreadsCount", {}, v).u, 8u);
  EXPECT_EQ(eval("$XeCoreTotalCount", {}, v).u, 8u);
  EXPECT_EQ(eval("$XeCoreMask 1 AND", {}, v).u, 1u);
  EXPECT_EQ(eval("$GtSlice1", {}, v).u, 1u);
  EXPECT_EQ(eval("$GtSlice2", {}, v).u, 0u);
  EXPECT_EQ(eval("$GtSlice0XeCore1", {}, v).u, 0u);
  EXPECT_EQ(eval("$GtSlice0XeCore2", {}, v).u, 1u);
  EXPECT_EQ(eval("$GtSlice1XeCore3", {}, v).u, 1u);
  EXPECT_EQ(eval("$GtSlice1DualSubslice3", {}, v).u, 1u);
  v.subslice_mask = 0x0F;
  EXPECT_EQ(eval("$GtSlice1XeCore0", {}, v).u, 0u);
  for (const char* bad : {"$GtSlice", "$GtSlice8", "$GtSlice0XeCore", "$GtSlice0XeCore8",
                          "$GtSlice0Core1", "$GtSlice123"}) {
    EXPECT_THROW(Equation::compile(bad), std::invalid_argument) << bad;
  }
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
  EXPECT_THAT(error_of("A 64 READ"), HasSubstr("A 64 does not exist"));
  EXPECT_THAT(error_of("PEC 64 READ"), HasSubstr("PEC 64 does not exist"));
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
