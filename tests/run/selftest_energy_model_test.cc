// The selftest's quick calibration check of an energy model, on the simulator: a model fitted to
// the simulated part's calibration sweep predicts every window of known work within its error;
// after the part's energy per event drifted (energy-model-drift) the check fails, alone, naming
// the worst window; it skips, saying why, without a model, with a model of another part, set or
// frequency, and where a check it stands on failed. Every other fault leaving it alone is part of
// the fault matrix (selftest_test.cc), which gives the model too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "run/selftest.h"
#include "selftest_test_util.h"
#include "tests/common/energy_model_fixture.h"

namespace oaprof::run::selftest {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::string_view kWindows[] = {"idle", "mad_vect8_65536", "mad_vect8_262144",
                                         "load_store_vect4_16MiB", "load_store_vect4_64MiB"};

class SelftestEnergyModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_shared_metrics_path(); }
};

double figure(const CheckResult& r, const std::string& name) {
  for (const Figure& f : r.figures) {
    if (f.name == name) return f.value;
  }
  throw std::logic_error(r.name + " has no figure " + name);
}

SelftestOptions with_model(std::string_view platform, std::vector<SimFault> faults = {}) {
  SelftestOptions o = sim_options(platform, std::move(faults));
  o.energy_model = testing::fitted_sim_energy_model(std::string(platform));
  return o;
}

// The KBL model with one thing of it changed.
template <class Change>
SelftestOptions with_changed_kbl_model(Change change) {
  SelftestOptions o = with_model("kblgt2");
  model::EnergyModel m = *o.energy_model;
  change(m);
  o.energy_model = std::make_shared<const model::EnergyModel>(std::move(m));
  return o;
}

TEST_F(SelftestEnergyModelTest, OnKblAndTglEveryWindowLiesWithinTheFittedModelsError) {
  for (const std::string_view platform : {"kblgt2", "tglgt2"}) {
    SCOPED_TRACE(platform);
    const SelftestReport report = run_selftest(with_model(platform));
    const CheckResult& r = check(report, "energy-model");
    ASSERT_EQ(r.verdict, Verdict::kPass) << report_table(report);
    EXPECT_EQ(r.group, "energy");
    for (const std::string_view window : kWindows) {
      const std::string w(window);
      SCOPED_TRACE(w);
      const double measured = figure(r, w + "_measured_j");
      EXPECT_GT(measured, 0);  // a pass that compared nothing would prove nothing
      EXPECT_LE(std::abs(measured - figure(r, w + "_modelled_j")),
                std::hypot(figure(r, w + "_error_j"), figure(r, w + "_measured_error_j")));
    }
  }
}

TEST_F(SelftestEnergyModelTest, EnergyModelDriftFailsItAloneNamingTheWorstWindow) {
  const SelftestReport report = run_selftest(with_model("kblgt2", {SimFault::kEnergyModelDrift}));
  EXPECT_THAT(failed(report), ElementsAre("energy-model")) << report_table(report);
  const CheckResult& r = check(report, "energy-model");
  std::string worst;
  double worst_deviation = 0;
  for (const std::string_view window : kWindows) {
    const std::string w(window);
    const double deviation =
        std::abs(figure(r, w + "_measured_j") / figure(r, w + "_modelled_j") - 1);
    if (deviation > worst_deviation) std::tie(worst, worst_deviation) = std::tie(w, deviation);
  }
  // Twice the energy per busy cycle: the busy windows draw far more than the model says.
  EXPECT_GT(worst_deviation, 0.1);
  EXPECT_THAT(r.reason, StartsWith(worst + ": measured"));
  EXPECT_THAT(r.reason, HasSubstr("no longer draws the energy per event the model was fitted to"));
}

TEST_F(SelftestEnergyModelTest, WithoutAModelItSkipsNamingTheOption) {
  const SelftestReport report = run_selftest(sim_options("kblgt2"));
  EXPECT_EQ(check(report, "energy-model").verdict, Verdict::kSkip);
  EXPECT_THAT(check(report, "energy-model").reason, HasSubstr("--energy-model FILE"));
}

TEST_F(SelftestEnergyModelTest, AModelOfAnotherPartSetOrFrequencySkipsSayingWhich) {
  SelftestOptions tgl_model = with_model("kblgt2");
  tgl_model.energy_model = testing::fitted_sim_energy_model("tglgt2");
  const SelftestOptions render =
      with_changed_kbl_model([](model::EnergyModel& m) { m.metric_set = "RenderBasic"; });
  const SelftestOptions slow = with_changed_kbl_model([](model::EnergyModel& m) {
    m.freq_min_mhz = 300;
    m.freq_max_mhz = 400;
  });
  const std::pair<const SelftestOptions*, std::string> cases[] = {
      {&tgl_model, "the model is of TGL GT2 (Gen12), the device is KBL GT2 (Gen9)"},
      {&render, "the model reads RenderBasic's counters, the read-outs count ComputeBasic"},
      {&slow, "frequency 1150 MHz (calibrated 300-400 MHz)"}};
  for (const auto& [options, why] : cases) {
    SCOPED_TRACE(why);
    const SelftestReport report = run_selftest(*options);
    EXPECT_EQ(check(report, "energy-model").verdict, Verdict::kSkip) << report_table(report);
    EXPECT_THAT(check(report, "energy-model").reason, HasSubstr(why));
  }
}

// A failed check of a group the model stands on (gpu-ticks: clocks) leaves it unjudged: a
// disagreement could be the clock's, not the model's. (The counters checks' faults would do as
// well, but those checks measure kernel_runner's runs: selftest_work_test.cc.)
TEST_F(SelftestEnergyModelTest, WhereACheckItStandsOnFailedItIsNotJudged) {
  const SelftestReport report = run_selftest(with_model("kblgt2", {SimFault::kGpuTicksClock}));
  EXPECT_THAT(failed(report), ElementsAre("gpu-ticks")) << report_table(report);
  EXPECT_EQ(check(report, "energy-model").verdict, Verdict::kSkip);
  EXPECT_THAT(check(report, "energy-model").reason, HasSubstr("not judged: gpu-ticks failed"));
}

}  // namespace
}  // namespace oaprof::run::selftest
