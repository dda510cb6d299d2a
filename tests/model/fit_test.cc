// The energy model's fit against the simulator, whose per-event energy model is known
// (mmio/sim_energy.h): the fit must recover it within its intervals, and its leave-one-out and
// held-back errors must rise when the simulator's energy per event changes under it.
#include "model/fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "mmio/sim_energy.h"
#include "mmio/sim_gpu.h"
#include "oa/energy_events.h"
#include "run/energy_calibration.h"

namespace oaprof::model {
namespace {
using ::testing::HasSubstr;

struct Fitted {
  EnergyModel model;
  mmio::SimEnergyModel truth;
};

Fitted calibrate(const std::string& platform) {
  run::SimCalibrationOptions o;
  o.platform = platform;
  const auto samples = run::simulate_sweep(run::calibration_sweep(), o);
  const oa::Platform p = mmio::sim_platform_by_name(platform);
  return {fit_energy_model(samples, run::simulated_identity(platform)),
          *mmio::sim_energy_model(p.gen)};
}

// Relative error of each held-back kernel's energy predicted by `model`, on a simulator with
// `truth`: their root mean square.
double held_back_error(const EnergyModel& model, const mmio::SimEnergyModel& truth,
                       const std::string& platform) {
  run::SimCalibrationOptions o;
  o.platform = platform;
  o.energy_model = truth;
  o.windows_per_kernel = 1;
  double sum = 0;
  const auto samples = run::simulate_sweep(run::held_back_kernels(), o);
  for (const Sample& s : samples) {
    const Prediction p = predict(model, s.deltas, s.window_s, s.freq_mhz, "ComputeBasic");
    const double rel = (p.energy_j - s.energy_j) / s.energy_j;
    sum += rel * rel;
  }
  return std::sqrt(sum / static_cast<double>(samples.size()));
}

void expect_recovered(const Fitted& f) {
  const EnergyModel& m = f.model;
  EXPECT_LE(m.static_power.low, f.truth.static_w) << m.platform;
  EXPECT_GE(m.static_power.high, f.truth.static_w) << m.platform;
  ASSERT_EQ(m.events.size(), f.truth.joules_per_event.size());
  int calibrated = 0;
  for (std::size_t k = 0; k < m.events.size(); ++k) {
    const Coefficient& c = m.events[k];
    if (!c.calibrated) {
      EXPECT_EQ(c.name, "slm_bytes");  // the one class no catalogue kernel exercises
      continue;
    }
    ++calibrated;
    EXPECT_LE(c.low, f.truth.joules_per_event[k]) << m.platform << " " << c.name;
    EXPECT_GE(c.high, f.truth.joules_per_event[k]) << m.platform << " " << c.name;
    EXPECT_LT(c.low, c.high) << c.name;  // an interval, not a point
  }
  EXPECT_EQ(calibrated, static_cast<int>(m.events.size()) - 1);
  EXPECT_LT(m.loo_rms_relative, 0.1);
}

TEST(EnergyFitTest, RecoversTheSimulatorsCoefficientsOnKabyLakeGt2) {
  expect_recovered(calibrate("kblgt2"));
}

TEST(EnergyFitTest, RecoversTheSimulatorsCoefficientsOnTigerLakeGt2) {
  expect_recovered(calibrate("tglgt2"));
}

TEST(EnergyFitTest, PredictionErrorRisesWhenTheHardwareNoLongerMatchesTheCalibration) {
  const Fitted f = calibrate("kblgt2");
  const double same = held_back_error(f.model, f.truth, "kblgt2");
  mmio::SimEnergyModel changed = f.truth;
  changed.joules_per_event[2] *= 3;  // FPU0's energy per EU-cycle triples after calibration
  const double after = held_back_error(f.model, changed, "kblgt2");
  EXPECT_LT(same, 0.1);
  EXPECT_GT(after, 2 * same);
  EXPECT_GT(after, 0.1);
}

TEST(EnergyFitTest, LeaveOneOutErrorRisesWhenOneKernelSawOtherCoefficients) {
  run::SimCalibrationOptions o;
  auto sweep = run::calibration_sweep();
  const auto clean = run::simulate_sweep(sweep, o);
  // The same sweep, but the FP32 kernel measured on a part whose FPU energy differs: no single
  // set of coefficients explains every kernel, and leaving kernels out shows it.
  run::SimCalibrationOptions other = o;
  other.energy_model = *mmio::sim_energy_model(oa::Generation::kGen9);
  other.energy_model->joules_per_event[2] *= 3;
  other.energy_model->joules_per_event[3] *= 3;
  std::vector<Sample> mixed;
  for (const auto& k : sweep) {
    const auto part =
        run::simulate_sweep({k}, k.name == "add_scalar" && k.global_size == 4096 ? other : o);
    mixed.insert(mixed.end(), part.begin(), part.end());
  }
  const auto id = run::simulated_identity("kblgt2");
  const double clean_loo = fit_energy_model(clean, id).loo_rms_relative;
  const double mixed_loo = fit_energy_model(mixed, id).loo_rms_relative;
  EXPECT_GT(mixed_loo, 2 * clean_loo);
}

TEST(EnergyFitTest, TooFewKernelsIsAClearError) {
  run::SimCalibrationOptions o;
  auto sweep = run::calibration_sweep();
  sweep.resize(3);
  const auto samples = run::simulate_sweep(sweep, o);
  try {
    fit_energy_model(samples, run::simulated_identity("kblgt2"));
    FAIL() << "a fit from 3 kernels";
  } catch (const FitError& e) {
    EXPECT_THAT(e.what(), HasSubstr("3 kernels"));
    EXPECT_THAT(e.what(), HasSubstr("run the whole calibration sweep"));
  }
}

TEST(EnergyFitTest, CollinearEventsAreAClearErrorNamingThem) {
  // Windows where L3 and GTI bytes always move together (64 bytes each per C4 and A32 count).
  std::vector<Sample> samples;
  for (int k = 0; k < 12; ++k) {
    Sample s;
    s.kernel = "k" + std::to_string(k);
    s.window_s = 0.05 + 0.001 * k;
    s.deltas.a[0] = 1000u * static_cast<unsigned>(k + 1);
    s.deltas.a[7] = 7000u * static_cast<unsigned>((k * 7) % 5 + 1);
    s.deltas.a[10] = 300u * static_cast<unsigned>((k * 3) % 7 + 1);
    s.deltas.a[11] = 200u * static_cast<unsigned>((k * 5) % 4 + 1);
    s.deltas.a[12] = 50u * static_cast<unsigned>((k * 2) % 9 + 1);
    s.deltas.a[32] = 100u * static_cast<unsigned>(k + 3);
    s.deltas.c[4] = 2 * s.deltas.a[32];
    s.energy_j = 1.0 + 0.01 * k;
    s.freq_mhz = 1150;
    samples.push_back(s);
  }
  try {
    fit_energy_model(samples, run::simulated_identity("kblgt2"));
    FAIL() << "a fit of collinear events";
  } catch (const FitError& e) {
    EXPECT_THAT(e.what(), HasSubstr("l3_bytes and gti_bytes"));
    EXPECT_THAT(e.what(), HasSubstr("collinear"));
  }
}

TEST(EnergyFitTest, TheModelSurvivesItsJson) {
  const EnergyModel m = calibrate("tglgt2").model;
  const nlohmann::json j = to_json(m);
  EXPECT_EQ(j["schema"], "oaprof-energy-model/1");
  const EnergyModel back = model_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(to_json(back), j);
  nlohmann::json broken = j;
  broken.erase("features");
  EXPECT_THROW(model_from_json(broken), std::invalid_argument);
}

// A model fitted from a run names the --igpu-power formula its rows measured by, and a run whose
// energy rows used several is refused; rows without an energy figure do not count.
TEST(EnergyFitTest, AModelFromARunNamesTheFormulaItsEnergyRowsUsed) {
  auto run_of = [](const std::vector<std::pair<double, std::string>>& rows) {
    nlohmann::json run{{"platform", "kblgt2"},
                       {"device", "0000:00:02.0"},
                       {"driver", "i915"},
                       {"metric_set", "ComputeBasic"},
                       {"launches", nlohmann::json::array()}};
    run["columns"] = {"kernel", "global_size", "window_ns", "igpu_power_w", "igpu_formula"};
    for (const auto& [watts, formula] : rows) {
      run["launches"].push_back({"k", 64, 1e6, watts, formula});
    }
    return run;
  };
  EXPECT_EQ(run::identity_of_run(run_of({{2.0, "pkg-pp0"}, {0.0, "pp1"}})).energy, "igpu pkg-pp0");
  EXPECT_EQ(run::identity_of_run(run_of({{1.5, "gpu-pkg"}})).energy, "igpu gpu-pkg");
  try {
    run::identity_of_run(run_of({{2.0, "pkg-pp0"}, {1.0, "pkg-pp0-dram"}}));
    FAIL() << "rows of two formulas";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("pkg-pp0, pkg-pp0-dram"));
    EXPECT_THAT(e.what(), HasSubstr("one --igpu-power"));
  }
  nlohmann::json old_run = run_of({{2.0, "pkg-pp0"}});
  old_run["columns"][4] = "something_else";  // a run from before the column
  EXPECT_EQ(run::identity_of_run(old_run).energy, "igpu (the run's formula)");
}

// A run's JSON is the user's file: a counter cell that is no count of events (negative, past
// 2^64, a string) and a shape unlike oaprof --json's are refused as std::invalid_argument naming
// what is wrong, never converted (a negative double cast to a count is undefined behaviour).
TEST(EnergyFitTest, ARunWithCellsThatAreNoCountsIsRefusedNamingThem) {
  auto run_with = [](nlohmann::json a7) {
    nlohmann::json run{{"platform", "kblgt2"}, {"launches", nlohmann::json::array()}};
    run["columns"] = {"kernel", "global_size", "window_ns", "igpu_power_w", "avg_freq_mhz", "A7"};
    for (int i = 0; i < 8; ++i) run["columns"].push_back(fmt::format("B{}", i));
    for (int i = 0; i < 8; ++i) run["columns"].push_back(fmt::format("C{}", i));
    nlohmann::json row = {"k", 64, 1e6, 2.0, 1150, a7};
    for (int i = 0; i < 16; ++i) row.push_back(i == 3 ? nlohmann::json() : nlohmann::json(7));
    run["launches"].push_back(row);
    return run;
  };
  const std::vector<model::Sample> ok = run::samples_from_run(run_with(123456789));
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].deltas.a[7], 123456789u);
  EXPECT_EQ(ok[0].deltas.b[3], 0u);  // null: a counter the row lacks
  EXPECT_EQ(ok[0].deltas.c[0], 7u);
  EXPECT_EQ(run::samples_from_run(run_with(1e19))[0].deltas.a[7], 10000000000000000000u);
  // Its refusal's words; "" when it was accepted, or refused as another exception than
  // std::invalid_argument (which would escape as the gtest failure it is).
  auto refusal = [](const nlohmann::json& run) {
    try {
      run::samples_from_run(run);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (const nlohmann::json& bad : {nlohmann::json(-1), nlohmann::json(-0.5), nlohmann::json(2e19),
                                    nlohmann::json("12"), nlohmann::json::array()}) {
    EXPECT_THAT(refusal(run_with(bad)),
                HasSubstr("launch 0: A7 is " + bad.dump() + ", not a count of events"));
  }
  nlohmann::json no_list = run_with(1);
  no_list["launches"] = {{"a", 1}};
  EXPECT_THAT(refusal(no_list), HasSubstr("the run's launches are not a list"));
  nlohmann::json row_no_list = run_with(1);
  row_no_list["launches"][0] = {{"kernel", "k"}};
  EXPECT_THAT(refusal(row_no_list), HasSubstr("not the JSON of an oaprof run (oaprof --json)"));
  nlohmann::json no_size = run_with(1);
  no_size["columns"][1] = "gloabl_size";  // the fuzzer's first find: std::map::at's out_of_range
  EXPECT_THAT(refusal(no_size), HasSubstr("the run has no global_size column"));
  nlohmann::json no_columns = run_with(1);
  no_columns.erase("columns");
  EXPECT_THROW(run::identity_of_run(no_columns), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::model
