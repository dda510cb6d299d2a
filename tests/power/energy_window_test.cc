#include "power/energy_window.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "power/idle_baseline.h"
#include "power/sim_power.h"

namespace oaprof::power {
namespace {
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::uint64_t kMs = 1'000'000;

EnergyReading reading(std::uint64_t time_ns, std::uint64_t pkg, std::uint64_t pp0,
                      std::optional<std::uint64_t> dram = std::nullopt) {
  EnergyReading r;
  r.time_ns = time_ns;
  r.energy_uj = {{Domain::kPackage, pkg}, {Domain::kCores, pp0}};
  if (dram) r.energy_uj[Domain::kDram] = *dram;
  return r;
}

TEST(EnergyWindowTest, PowerPerPlaneAndIgpuByEveryFormula) {
  WindowOptions opt;
  opt.busy_ns = 150 * kMs;
  opt.gpu_freq_mhz = 1150;
  const EnergyWindow w =
      make_energy_window(reading(0, 0, 0, 0), reading(200 * kMs, 2'000'000, 400'000, 200'000), opt);
  EXPECT_TRUE(w.measured());
  EXPECT_EQ(w.duration_ns, 200 * kMs);
  EXPECT_DOUBLE_EQ(w.power_w.at(Domain::kPackage), 10.0);
  EXPECT_DOUBLE_EQ(*w.igpu_w(), 10.0 - 2.0 - 1.0);
  EXPECT_DOUBLE_EQ(*w.igpu.watts(IgpuFormula::kPkgPp0), 8.0);
  EXPECT_FALSE(w.igpu.watts(IgpuFormula::kPp1).has_value());
  EXPECT_DOUBLE_EQ(*w.busy_fraction, 0.75);
  EXPECT_DOUBLE_EQ(*w.gpu_freq_mhz, 1150);
  EXPECT_TRUE(w.flags().empty());
}

TEST(EnergyWindowTest, AShortWindowIsFlaggedNotHidden) {
  const EnergyWindow w = make_energy_window(reading(0, 0, 0), reading(20 * kMs, 100'000, 0));
  EXPECT_TRUE(w.shorter_than_min_window);
  EXPECT_EQ(w.min_window_ns, kDefaultMinWindowNs);
  EXPECT_DOUBLE_EQ(w.power_w.at(Domain::kPackage), 5.0);
  EXPECT_THAT(w.flags(), Contains("energy-window-short"));
  EXPECT_THAT(w.flags(), Contains("no-dram-plane"));  // no DRAM: counted as zero, and said
  WindowOptions pp1;
  pp1.formula = IgpuFormula::kPp1;
  EXPECT_THAT(make_energy_window(reading(0, 0, 0), reading(60 * kMs, 1, 0), pp1).flags(),
              Not(Contains("no-dram-plane")));
}

TEST(EnergyWindowTest, CountersThatDidNotMoveGiveNoFigures) {
  const EnergyWindow w = make_energy_window(reading(0, 500, 70), reading(100 * kMs, 500, 70));
  EXPECT_FALSE(w.measured());
  EXPECT_TRUE(w.counters_did_not_move);
  EXPECT_TRUE(w.power_w.empty());
  EXPECT_FALSE(w.igpu_w().has_value());
  EXPECT_THAT(w.flags(), Contains("energy-counters-stuck"));
  const nlohmann::json j = to_json(w);
  EXPECT_TRUE(j["igpu_power_w"].is_null());
  EXPECT_FALSE(j["measured"].get<bool>());
  // Too short to tell a stuck counter from one between two updates.
  EXPECT_FALSE(make_energy_window(reading(0, 5, 0), reading(kMs, 5, 0)).counters_did_not_move);
}

TEST(EnergyWindowTest, DynamicPowerIsTotalMinusIdle) {
  const IdleBaseline idle =
      idle_baseline_from(reading(0, 0, 0, 0), reading(250 * kMs, 1'000'000, 250'000, 125'000));
  EXPECT_TRUE(idle.counters_moved);
  EXPECT_DOUBLE_EQ(idle.power_w.at(Domain::kPackage), 4.0);
  EXPECT_DOUBLE_EQ(*idle.igpu.pkg_pp0_dram_w, 4.0 - 1.0 - 0.5);
  WindowOptions opt;
  opt.idle = idle;
  const EnergyWindow w = make_energy_window(reading(kMs, 0, 0, 0),
                                            reading(101 * kMs, 1'000'000, 150'000, 60'000), opt);
  EXPECT_DOUBLE_EQ(w.dynamic_power_w.at(Domain::kPackage), 10.0 - 4.0);
  EXPECT_DOUBLE_EQ(w.dynamic_power_w.at(Domain::kCores), 1.5 - 1.0);
  EXPECT_DOUBLE_EQ(*w.igpu_dynamic_w(), (10.0 - 1.5 - 0.6) - 2.5);
  EXPECT_EQ(*w.idle_duration_ns, 250 * kMs);
}

TEST(EnergyWindowTest, AStuckIdleBaselineGivesNoDynamicPower) {
  WindowOptions opt;
  opt.idle = idle_baseline_from(reading(0, 9, 9), reading(250 * kMs, 9, 9));
  const EnergyWindow w = make_energy_window(reading(0, 0, 0), reading(100 * kMs, 900, 0), opt);
  EXPECT_TRUE(w.dynamic_power_w.empty());
  EXPECT_FALSE(w.igpu_dynamic_w().has_value());
  EXPECT_THAT(w.flags(), Contains("idle-baseline-stuck"));
}

TEST(EnergyWindowTest, UnavailableEnergyCarriesTheReason) {
  const EnergyWindow w = unavailable_energy_window("energy_uj is root-only", 80 * kMs);
  EXPECT_FALSE(w.measured());
  EXPECT_THAT(w.flags(), Contains("no-energy"));
  const nlohmann::json j = to_json(w);
  EXPECT_EQ(j["unavailable_reason"], "energy_uj is root-only");
  EXPECT_TRUE(j["domains"].empty());
  EXPECT_TRUE(j["igpu_power_w"].is_null());
}

TEST(EnergyWindowTest, JsonLabelsEachIgpuFigureWithItsFormula) {
  EnergyReading a = reading(0, 0, 0);
  EnergyReading b = reading(100 * kMs, 1'000'000, 200'000);
  a.energy_uj[Domain::kUncore] = 0;
  b.energy_uj[Domain::kUncore] = 500'000;
  const nlohmann::json j = to_json(make_energy_window(a, b));
  ASSERT_EQ(j["igpu"].size(), 4u);
  EXPECT_EQ(j["igpu"][0]["formula"], "pkg-pp0-dram");
  EXPECT_EQ(j["igpu"][3]["formula"], "gpu-pkg");  // no GPU sensor among RAPL's planes: null
  EXPECT_TRUE(j["igpu"][3]["power_w"].is_null());
  EXPECT_EQ(j["igpu"][0]["label"], "P_PKG - P_PP0 - P_DRAM");
  EXPECT_TRUE(j["igpu"][0]["dram_counted_as_zero"].get<bool>());
  EXPECT_DOUBLE_EQ(j["igpu"][1]["power_w"].get<double>(), 5.0);
  EXPECT_EQ(j["domains"]["uncore"]["plane"], "PP1");
  EXPECT_DOUBLE_EQ(j["domains"]["package"]["power_w"].get<double>(), 10.0);
  EXPECT_TRUE(j["gpu_freq_mhz"].is_null());
}

// One bad pair of readings costs its own window, flagged, and never an exception that would stop
// the rows after it.
TEST(EnergyWindowTest, ReadingsThatGoBackwardsGiveAFlaggedWindowWithoutFigures) {
  for (const auto& [begin, end] : {std::pair{reading(10, 0, 0), reading(5, 0, 0)},
                                   std::pair{reading(0, 10, 0), reading(5, 9, 0)}}) {
    EnergyWindow w;
    ASSERT_NO_THROW(w = make_energy_window(begin, end));
    EXPECT_TRUE(w.went_backwards);
    EXPECT_FALSE(w.measured());
    EXPECT_TRUE(w.energy_uj.empty());
    EXPECT_FALSE(w.igpu_w().has_value());
    EXPECT_THAT(w.flags(), Contains("energy-went-backwards"));
    EXPECT_THAT(w.unavailable_reason, HasSubstr("different"));
  }
}

TEST(IdleBaselineTest, MeasuredOnTheSimulatorWithAVirtualSleep) {
  std::atomic<std::uint64_t> now{0};
  SimPowerModel model;
  SimEnergySource src({}, model, [&] { return now.load(); });
  std::uint64_t slept = 0;
  const IdleBaseline idle =
      measure_idle_baseline(src, kDefaultIdleBaselineNs, [&](std::uint64_t ns) {
        slept += ns;
        now += ns;
      });
  EXPECT_EQ(slept, kDefaultIdleBaselineNs);
  EXPECT_EQ(idle.duration_ns, kDefaultIdleBaselineNs);
  EXPECT_NEAR(idle.power_w.at(Domain::kPackage), model.package_idle_w, 1e-5);
  EXPECT_NEAR(*idle.igpu.pp1_w, model.uncore_idle_w, 1e-5);

  // A busy window after it: dynamic PP1 power is the GPU term alone.
  WindowOptions opt;
  opt.idle = idle;
  opt.formula = IgpuFormula::kPp1;
  const EnergyReading a = src.read();
  src.simulator().set_gpu_active(true);
  now += 100 * kMs;
  const EnergyWindow w = make_energy_window(a, src.read(), opt);
  EXPECT_NEAR(*w.igpu_dynamic_w(), model.gpu_active_w, 1e-3);
  EXPECT_NEAR(*w.igpu_w(), model.gpu_active_w + model.uncore_idle_w, 1e-3);
}

TEST(IdleBaselineTest, ParsesDurationOrOff) {
  EXPECT_FALSE(parse_idle_baseline("off").has_value());
  EXPECT_EQ(parse_idle_baseline("250ms"), 250 * kMs);
  EXPECT_THROW(parse_idle_baseline("0ms"), std::invalid_argument);
  EXPECT_THROW(parse_idle_baseline("never"), std::invalid_argument);
  EXPECT_THROW(idle_baseline_from(reading(5, 0, 0), reading(5, 0, 0)), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::power
