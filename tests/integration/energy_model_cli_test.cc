// The energy model end to end: `oaprof model fit --device sim` writes model.json, and a sampled
// run with --energy-model gives every row an energy with an error bar; a file that is no model
// ends the run with exit 2 before anything runs.
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/common/run_util.h"

namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using oaprof::testing::CommandResult;
using oaprof::testing::CsvRow;
using oaprof::testing::read_csv;
using oaprof::testing::run;

class EnergyModelCliTest : public ::testing::Test {
 protected:
  EnergyModelCliTest() {
    dir_ = fs::temp_directory_path() / fmt::format("oaprof-em-{}-{}", ::getpid(), counter_++);
    fs::create_directories(dir_);
  }
  ~EnergyModelCliTest() override { fs::remove_all(dir_); }
  static inline int counter_ = 0;
  fs::path dir_;
};

TEST_F(EnergyModelCliTest, ASampledRunGivesEveryRowAModelledEnergyWithAnErrorBar) {
  const fs::path model = dir_ / "model.json";
  // Few bootstrap replicates: the intervals are coarser, the test faster; what is checked holds.
  const CommandResult fit = run(
      fmt::format("{} model fit --device sim --replicates 40 -o {}", OAPROF_BIN, model.string()));
  ASSERT_EQ(fit.status, 0) << fit.output;
  ASSERT_TRUE(fs::exists(model)) << fit.output;

  const fs::path csv = dir_ / "sampled.csv";
  const fs::path json = dir_ / "sampled.json";
  const CommandResult r = run(fmt::format(
      "{} --device sim --attribution sampled --energy-model {} -o {} --json {} -- {} mad_vect4 "
      "--min-time 0 --max-repeats 3",
      OAPROF_BIN, model.string(), csv.string(), json.string(), KERNEL_RUNNER_BIN));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(csv);
  ASSERT_FALSE(rows.empty()) << r.output;
  for (const CsvRow& row : rows) {
    SCOPED_TRACE(row.at("launch"));
    EXPECT_EQ(row.at("igpu_power_w"), "");  // sampled: no measured window of its own
    EXPECT_GT(std::stod(row.at("energy_model_j")), 0);
    EXPECT_GT(std::stod(row.at("energy_model_err_j")), 0);
    // An extrapolated figure says why; one that is not says nothing.
    EXPECT_EQ(row.at("flags").find("energy_model_extrapolated") != std::string::npos,
              !row.at("energy_model_extrapolated_why").empty());
  }
  // The table's power is the model's, marked, with the legend line that says so.
  EXPECT_THAT(r.output, HasSubstr("~ iGPU_W modelled, not measured"));
  const nlohmann::json doc = nlohmann::json::parse(oaprof::testing::read_file(json));
  EXPECT_EQ(doc.at("energy_model").at("platform"), "KBL GT2");
  EXPECT_GT(doc.at("launches").at(0).back().at("model").at("error_j").get<double>(), 0);
}

// Issue 35: the run's measured iGPU energy (--igpu-power pkg-pp0-dram, the formula the simulated
// model was fitted on) against the model, where a bracketed row has both: on held-back kernels of
// the sweep (a compute one and a memory one), under the model's metric set, with windows that
// auto replay makes at least --min-window long, the model's energy is within its own error bar of
// the measurement, and the row is neither extrapolated nor flagged as disagreeing. The relation
// docs/energy.md states ("--igpu-power against the model").
TEST_F(EnergyModelCliTest, OnHeldBackKernelsTheMeasuredIgpuEnergyIsWithinTheModelsError) {
  const fs::path model = dir_ / "model.json";
  const CommandResult fit = run(
      fmt::format("{} model fit --device sim --replicates 40 -o {}", OAPROF_BIN, model.string()));
  ASSERT_EQ(fit.status, 0) << fit.output;
  const fs::path json = dir_ / "bracketed.json";
  const CommandResult r = run(fmt::format(
      "{} --device sim --metric-set ComputeBasic --metrics-xml {}/oa-kblgt2.xml --igpu-power "
      "pkg-pp0-dram --replay auto --energy-model {} -q -o {} --json {} -- {} mad_vect8 "
      "load_store_dp_vect4 --min-time 0 --max-repeats 1 --no-warmup",
      OAPROF_BIN, OAPROF_IGT_METRICS_DIR, model.string(), (dir_ / "bracketed.csv").string(),
      json.string(), KERNEL_RUNNER_BIN));
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json doc = nlohmann::json::parse(oaprof::testing::read_file(json));
  int compared = 0;
  for (const nlohmann::json& row : doc.at("launches")) {
    const nlohmann::json& energy = row.back();
    SCOPED_TRACE(energy.dump());
    EXPECT_EQ(energy.at("igpu_formula"), "pkg-pp0-dram");
    const nlohmann::json& m = energy.at("model");
    ASSERT_TRUE(m.contains("measured_j")) << "a window shorter than --min-window";
    const double measured = m.at("measured_j").get<double>();
    EXPECT_LE(std::abs(measured - m.at("energy_j").get<double>()), m.at("error_j").get<double>());
    EXPECT_FALSE(m.at("disagrees").get<bool>());
    EXPECT_TRUE(m.at("extrapolated").empty());
    ++compared;
  }
  EXPECT_EQ(compared, 2) << r.output;
}

TEST_F(EnergyModelCliTest, AFileThatIsNoModelIsAUsageErrorBeforeAnythingRuns) {
  const fs::path bad = dir_ / "bad.json";
  oaprof::testing::write_file(bad, "{\"schema\": \"something else\"}");
  const fs::path csv = dir_ / "never.csv";
  const fs::path marker = dir_ / "ran";
  for (const fs::path& model : {bad, dir_ / "missing.json"}) {
    SCOPED_TRACE(model.string());
    const CommandResult r =
        run(fmt::format("{} --device sim --energy-model {} -q -o {} -- touch {}", OAPROF_BIN,
                        model.string(), csv.string(), marker.string()));
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("--energy-model"));
    EXPECT_THAT(r.output, HasSubstr(model.string()));
    EXPECT_FALSE(fs::exists(csv));
    EXPECT_FALSE(fs::exists(marker));
  }
}

}  // namespace
