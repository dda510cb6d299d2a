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

TEST(EnergyPredictTest, AModelOfAnotherGenerationsEventsIsRefused) {
  EnergyModel m = gen9_model();
  m.generation = oa::Generation::kGen12;  // 5 events, the model has 8
  EXPECT_THROW(predict(m, {}, 0.01, 1150, "ComputeBasic"), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::model
