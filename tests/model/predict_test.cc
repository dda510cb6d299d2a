#include "model/energy_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oa/energy_events.h"
#include "tests/common/energy_model_fixture.h"

namespace oaprof::model {
namespace {
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using oaprof::testing::gen9_energy_model;

EnergyModel gen9_model() { return gen9_energy_model(); }

TEST(EnergyPredictTest, EnergyIsStaticPowerPlusEachEventsEnergyWithItsError) {
  oa::CounterDeltas d;
  d.a[0] = 1'000'000;  // busy cycles
  d.c[4] = 1000;       // GTI: 64 000 bytes
  const Prediction p = predict(gen9_model(), d, 0.01, 1150, "ComputeBasic");
  EXPECT_NEAR(p.energy_j, 0.01 + 1e-3 + 64e3 * 1e-11, 1e-12);
  // Intervals: 0.1 W × 0.01 s + 0.1 nJ × 1e6; in quadrature with 5 % of the energy.
  EXPECT_NEAR(p.error_j, std::hypot(1e-3 + 1e-4, 0.05 * p.energy_j), 1e-12);
  EXPECT_THAT(p.extrapolated, IsEmpty());
}

TEST(EnergyPredictTest, SaysWhyAFigureIsExtrapolated) {
  oa::CounterDeltas d;
  d.a[0] = 100'000'000;  // 1e10 busy cycles a second over 10 ms: beyond the calibration
  d.a[30] = 10;          // SLM, never calibrated
  const Prediction p = predict(gen9_model(), d, 0.01, 600, "RenderBasic");
  EXPECT_THAT(p.extrapolated,
              ElementsAre(HasSubstr("metric set RenderBasic"), HasSubstr("frequency 600 MHz"),
                          HasSubstr("gpu_busy_cycles at 1e+10/s"),
                          HasSubstr("slm_bytes was never calibrated")));
}

// Issue 35: the calibration's windows hold launches with gaps, so its busiest saw the GPU busy
// for less than its clock (here 1.1e9 of 1.2e9 cycles a second); a kernel busy throughout at a
// calibrated clock is inside the model, not beyond it. Past the clock it still is not.
TEST(EnergyPredictTest, ARowBusyThroughoutAtACalibratedClockIsNotExtrapolated) {
  EnergyModel m = gen9_model();
  m.events[0].rate_max = 1.1e9;
  oa::CounterDeltas d;
  d.a[0] = 11'500'000;  // 1.15e9 busy cycles a second over 10 ms: busy throughout at 1150 MHz
  EXPECT_THAT(predict(m, d, 0.01, 1150, "ComputeBasic").extrapolated, IsEmpty());
  d.a[0] = 13'000'000;  // 1.3e9 a second: faster than any calibrated clock
  EXPECT_THAT(predict(m, d, 0.01, 1150, "ComputeBasic").extrapolated,
              ElementsAre(HasSubstr("gpu_busy_cycles at 1.3e+09/s (calibrated 0-1.2e+09/s)")));
}

// Issue 35: the built-in set reads the same A counters as ComputeBasic but programs no C counter,
// so the model's GTI bytes are not counted: the one line says so and what to do.
TEST(EnergyPredictTest, ARowOfAnotherSetSaysWhichEventsItDoesNotCountAndWhatToDo) {
  oa::CounterDeltas d;
  d.a[0] = 10'000'000;
  const Prediction p = predict(gen9_model(), d, 0.01, 1150, "Builtin");
  ASSERT_EQ(p.extrapolated.size(), 1u);
  EXPECT_EQ(p.extrapolated[0],
            "metric set Builtin does not count gti_bytes as the model's ComputeBasic does (its "
            "B/C counters): profile with --metric-set ComputeBasic");
}

TEST(EnergyPredictTest, AModelOfAnotherGenerationsEventsIsRefused) {
  EnergyModel m = gen9_model();
  m.generation = oa::Generation::kGen12;  // 5 events, the model has 8
  EXPECT_THROW(predict(m, {}, 0.01, 1150, "ComputeBasic"), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::model
