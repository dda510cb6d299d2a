// Rows under --energy-model: every row's modelled energy and error bar, why it is extrapolated,
// and the comparison with a measured window long enough to be trusted.
#include <cmath>
#include <memory>
#include <optional>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/energy_model.h"
#include "report/reporter.h"
#include "report/row.h"
#include "tests/common/energy_model_fixture.h"

namespace oaprof::report {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kTimestampHz = 12e6;

// 1 W static, 1 nJ per busy cycle, calibrated at 1100-1200 MHz (tests/common).
std::shared_ptr<const model::EnergyModel> gen9_model() {
  return std::make_shared<model::EnergyModel>(oaprof::testing::gen9_energy_model());
}

RunInfo model_info() {
  RunInfo i;
  i.timestamp_hz = kTimestampHz;
  i.metric_set = "ComputeBasic";
  i.energy_model = gen9_model();
  return i;
}

// 10 ms at 1150 MHz, the GPU busy for `busy` cycles.
oa::LaunchRecord busy_record(std::uint64_t busy = 10'000'000) {
  oa::LaunchRecord r;
  r.launch.kernel_name = "k";
  r.deltas.timestamp = 120'000;
  r.deltas.gpu_ticks = 11'500'000;
  r.deltas.has_gpu_ticks = true;
  r.deltas.a[0] = busy;
  return r;
}

const Field& field(const std::vector<Field>& fields, const std::string& name) {
  for (const Field& f : fields) {
    if (f.name == name) return f;
  }
  throw std::out_of_range(name);
}

double number(const std::vector<Field>& fields, const std::string& name) {
  return std::get<double>(field(fields, name).value);
}

std::string text(const std::vector<Field>& fields, const std::string& name) {
  const auto* s = std::get_if<std::string>(&field(fields, name).value);
  return s ? *s : std::string();
}

// Window readings `ms` apart in which the iGPU (package − cores) drew `joules`.
RowEnergy measured(const oa::LaunchRecord& r, const RunInfo& info, double ms, double joules) {
  power::EnergyReading b, e;
  b.time_ns = 1'000'000'000;
  e.time_ns = b.time_ns + static_cast<std::uint64_t>(ms * 1e6);
  b.energy_uj = {{power::Domain::kPackage, 0}, {power::Domain::kCores, 0}};
  e.energy_uj = {{power::Domain::kPackage, static_cast<std::uint64_t>(joules * 1e6)},
                 {power::Domain::kCores, 0}};
  return row_energy(r, &b, &e, info, "");
}

// A run whose timestamp frequency is not known has no busy time to put in a window: the share
// stays 0, not 2^63 ns over 10 ms (an undefined cast of 0/0).
TEST(EnergyModelRowTest, WithoutATimestampFrequencyAWindowHasNoBusyShare) {
  RunInfo info = model_info();
  info.timestamp_hz = 0;
  oa::LaunchRecord r = busy_record();
  r.deltas.timestamp = 0;
  EXPECT_EQ(measured(r, info, 10, 0.01).window.busy_fraction, std::optional<double>(0.0));
}

TEST(EnergyModelRowTest, EveryRowGetsTheModelsEnergyAndErrorBar) {
  const RunInfo info = model_info();
  const oa::LaunchRecord r = busy_record();
  const RowEnergy e = row_energy(r, nullptr, nullptr, info, "sampled attribution");
  const auto fields = launch_fields(r, e, info);
  const model::Prediction p =
      model::predict(*info.energy_model, r.deltas, 0.01, 1150, "ComputeBasic");
  // 1 W × 10 ms + 1 nJ × 1e7 cycles, over the counters' window (no measured one).
  EXPECT_NEAR(number(fields, "energy_model_j"), 0.02, 1e-12);
  EXPECT_DOUBLE_EQ(number(fields, "energy_model_j"), p.energy_j);
  EXPECT_DOUBLE_EQ(number(fields, "energy_model_err_j"), p.error_j);
  EXPECT_GT(p.error_j, 0);
  EXPECT_EQ(text(fields, "energy_model_extrapolated_why"), "");
  EXPECT_THAT(text(fields, "flags"), Not(HasSubstr("energy_model")));
}

TEST(EnergyModelRowTest, NoModelNoColumns) {
  RunInfo info = model_info();
  info.energy_model = nullptr;
  EXPECT_THAT(launch_field_names(info), Not(Contains("energy_model_j")));
  EXPECT_THAT(launch_field_names(model_info()), Contains("energy_model_err_j"));
}

TEST(EnergyModelRowTest, AnExtrapolatedRowIsFlaggedWithItsReasons) {
  RunInfo info = model_info();
  info.metric_set = "RenderBasic";
  oa::LaunchRecord r = busy_record();
  r.deltas.gpu_ticks = 6'000'000;  // 600 MHz
  const auto fields = launch_fields(r, row_energy(r, nullptr, nullptr, info, ""), info);
  EXPECT_THAT(text(fields, "flags"), HasSubstr("energy_model_extrapolated"));
  EXPECT_THAT(text(fields, "energy_model_extrapolated_why"),
              HasSubstr("metric set RenderBasic does not count gti_bytes as the model's "
                        "ComputeBasic does (its B/C counters): profile with --metric-set "
                        "ComputeBasic; frequency 600"));
}

TEST(EnergyModelRowTest, ARowWithoutAClockIsExtrapolated) {
  const RunInfo info = model_info();
  oa::LaunchRecord r = busy_record();
  r.deltas.has_gpu_ticks = false;
  const RowEnergy e = row_energy(r, nullptr, nullptr, info, "");
  ASSERT_TRUE(e.modelled);
  EXPECT_THAT(e.modelled->extrapolated, Contains(HasSubstr("GPU clock is unknown")));
}

TEST(EnergyModelRowTest, AMeasuredWindowIsComparedOverTheSameTime) {
  const RunInfo info = model_info();
  // 100 ms window, busy 1e8 cycles: modelled 0.1 J static + 0.1 J events = 0.2 J.
  const oa::LaunchRecord r = busy_record(100'000'000);
  const RowEnergy agree = measured(r, info, 100, 0.2);
  ASSERT_TRUE(agree.modelled && agree.modelled->measured_j);
  EXPECT_NEAR(agree.modelled->energy_j, 0.2, 1e-9);
  EXPECT_NEAR(*agree.modelled->measured_j, 0.2, 1e-9);
  EXPECT_FALSE(agree.modelled->disagrees);
  EXPECT_THAT(text(launch_fields(r, agree, info), "flags"), Not(HasSubstr("disagrees")));

  const RowEnergy apart = measured(r, info, 100, 0.4);  // twice the model's figure
  EXPECT_TRUE(apart.modelled->disagrees);
  EXPECT_THAT(text(launch_fields(r, apart, info), "flags"), HasSubstr("energy_model_disagrees"));
}

TEST(EnergyModelRowTest, AShortWindowIsNotCompared) {
  const RunInfo info = model_info();  // --min-window 50 ms
  const RowEnergy e = measured(busy_record(), info, 10, 1.0);
  ASSERT_TRUE(e.modelled);
  EXPECT_FALSE(e.modelled->measured_j);
  EXPECT_FALSE(e.modelled->disagrees);
}

TEST(EnergyModelRowTest, JsonRowsCarryTheModelAndTheRunNamesIt) {
  std::ostringstream out;
  auto json = make_json_reporter(out);
  const RunInfo info = model_info();
  json->begin(info);
  const oa::LaunchRecord r = busy_record(100'000'000);
  json->add(r, measured(r, info, 100, 0.4));
  json->end();
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc.at("energy_model").at("platform"), "KBL GT2");
  EXPECT_EQ(doc.at("energy_model").at("leave_one_kernel_out_rms_relative"), 0.05);
  const nlohmann::json& model = doc.at("launches").at(0).back().at("model");
  EXPECT_TRUE(model.at("disagrees").get<bool>());
  EXPECT_NEAR(model.at("energy_j").get<double>(), 0.2, 1e-9);
  EXPECT_NEAR(model.at("measured_j").get<double>(), 0.4, 1e-9);
  EXPECT_GT(model.at("error_j").get<double>(), 0);
}

// The terminal table: a kernel without a measured window shows the model's power, marked `~`,
// and a legend line says what that is; a measured kernel keeps its measurement.
TEST(EnergyModelRowTest, TheTableShowsModelledPowerWhereNothingWasMeasuredAndSaysSo) {
  const RunInfo info = model_info();
  std::ostringstream out;
  auto table = make_table_reporter(out);
  table->begin(info);
  oa::LaunchRecord unmeasured = busy_record();
  unmeasured.launch.kernel_name = "sampled_k";
  table->add(unmeasured, row_energy(unmeasured, nullptr, nullptr, info, "sampled attribution"));
  oa::LaunchRecord bracketed = busy_record(100'000'000);
  bracketed.launch.kernel_name = "measured_k";
  table->add(bracketed, measured(bracketed, info, 100, 0.4));
  table->end();
  // 0.02 J over 10 ms: 2 W, modelled; 0.4 J over 100 ms: 4 W, measured.
  EXPECT_THAT(out.str(), ::testing::ContainsRegex("sampled_k .* 2\\.00~ "));
  EXPECT_THAT(out.str(), ::testing::ContainsRegex("measured_k .* 4\\.00 "));
  EXPECT_THAT(out.str(),
              HasSubstr("(~ iGPU_W modelled, not measured: the energy model of KBL GT2"));
}

TEST(EnergyModelRowTest, WithoutModelledFiguresTheTableHasNoLegend) {
  RunInfo info = model_info();
  std::ostringstream out;
  auto table = make_table_reporter(out);
  table->begin(info);
  const oa::LaunchRecord r = busy_record(100'000'000);
  table->add(r, measured(r, info, 100, 0.4));
  table->end();
  EXPECT_THAT(out.str(), Not(HasSubstr("~")));
}

// A discrete card's power (gpu-pkg: its own package sensor) is headed GPU_W, not iGPU_W, in the
// header and both legends; an integrated GPU's keeps iGPU_W.
TEST(EnergyModelRowTest, TheTablesPowerColumnIsACardsGpuWhereTheFormulaIsGpuPkg) {
  for (const power::IgpuFormula formula : {power::IgpuFormula::kGpuPkg, power::IgpuFormula::kPp1}) {
    RunInfo info = model_info();
    info.energy_options.formula = formula;
    std::ostringstream out;
    auto table = make_table_reporter(out);
    table->begin(info);
    const oa::LaunchRecord r = busy_record();
    table->add(r, row_energy(r, nullptr, nullptr, info, "sampled attribution"));
    table->end();
    const bool card = formula == power::IgpuFormula::kGpuPkg;
    EXPECT_THAT(out.str(), ::testing::ContainsRegex(card ? " GPU_W " : " iGPU_W "));
    EXPECT_THAT(out.str(), HasSubstr(card ? "(GPU_W: P_GPU_PKG over" : "(iGPU_W: P_PP1 over"));
    EXPECT_THAT(out.str(), HasSubstr(card ? "(~ GPU_W modelled" : "(~ iGPU_W modelled"));
    if (card) {
      EXPECT_THAT(out.str(), Not(HasSubstr("iGPU_W")));
    }
  }
}

}  // namespace
}  // namespace oaprof::report
