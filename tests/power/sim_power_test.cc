#include "power/sim_power.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "tests/power/fake_tree.h"

namespace oaprof::power {
namespace {

constexpr std::uint64_t kPowercapSecondNs = 1'000'000'000;

struct PowercapClock {
  std::atomic<std::uint64_t> now_ns{1000};
  SimPowercap::Clock fn() {
    return [this] { return now_ns.load(); };
  }
};

TEST(SimPowerTest, IdlePowerAccruesOnTheVirtualClock) {
  PowercapClock clock;
  SimPowerModel model;
  model.update_interval_ns = 0;  // exact at every read: the clock starts between updates
  SimEnergySource src({}, model, clock.fn());
  EXPECT_EQ(src.name(), "sim");
  EXPECT_THAT(src.domains(), ::testing::UnorderedElementsAre(Domain::kPackage, Domain::kCores,
                                                             Domain::kUncore, Domain::kPsys));
  const EnergyReading a = src.read();
  clock.now_ns += 2 * kPowercapSecondNs;
  const EnergyReading b = src.read();
  EXPECT_EQ(b.time_ns - a.time_ns, 2 * kPowercapSecondNs);
  EXPECT_EQ(b.energy_uj.at(Domain::kPackage) - a.energy_uj.at(Domain::kPackage),
            static_cast<std::uint64_t>(2 * model.package_idle_w * 1e6));
  EXPECT_EQ(b.energy_uj.at(Domain::kCores) - a.energy_uj.at(Domain::kCores),
            static_cast<std::uint64_t>(2 * model.cores_idle_w * 1e6));
}

// A clock that moves on at every look, each step a millisecond longer than the last: the reader
// looks at it after the simulator has brought the files up to date, as a reader descheduled in
// between would. The reading's time is the files' instant, so the window's power is the model's.
TEST(SimPowerTest, AReadingIsTimedAtTheInstantItsFilesWereBroughtTo) {
  std::atomic<std::uint64_t> now_ns{1000};
  std::atomic<std::uint64_t> step_ns{0};
  SimPowerModel model;
  model.update_interval_ns = 0;
  SimEnergySource src({}, model, [&] { return now_ns.fetch_add(step_ns += 1'000'000); });
  const EnergyReading a = src.read();
  const EnergyReading b = src.read();
  const double uj =
      static_cast<double>(b.energy_uj.at(Domain::kPackage) - a.energy_uj.at(Domain::kPackage));
  EXPECT_NEAR(uj * 1e3 / static_cast<double>(b.time_ns - a.time_ns), model.package_idle_w, 1e-6);
}

TEST(SimPowerTest, GpuActivityAddsToUncorePackageAndPsysOnly) {
  PowercapClock clock;
  SimPowerModel model;
  SimEnergySource src({}, model, clock.fn());
  const EnergyReading a = src.read();
  src.simulator().set_gpu_active(true);
  clock.now_ns += kPowercapSecondNs;
  src.simulator().set_gpu_activity(0.5);
  clock.now_ns += kPowercapSecondNs;
  src.simulator().set_gpu_active(false);
  clock.now_ns += kPowercapSecondNs;
  const EnergyReading b = src.read();
  auto joules = [&](Domain d) {
    return static_cast<double>(b.energy_uj.at(d) - a.energy_uj.at(d)) / 1e6;
  };
  const double gpu_j = model.gpu_active_w * 1.5;  // 1 s at full, 1 s at half
  EXPECT_NEAR(joules(Domain::kUncore), 3 * model.uncore_idle_w + gpu_j, 1e-5);
  EXPECT_NEAR(joules(Domain::kPackage), 3 * model.package_idle_w + gpu_j, 1e-5);
  EXPECT_NEAR(joules(Domain::kCores), 3 * model.cores_idle_w, 1e-5);
  // The method's formula sees the GPU term: P_PKG − P_PP0 over the 3 s.
  const IgpuPower p = igpu_power(a, b);
  EXPECT_NEAR(*p.pkg_pp0_w, model.package_idle_w - model.cores_idle_w + gpu_j / 3, 1e-5);
  EXPECT_TRUE(p.dram_missing);
}

TEST(SimPowerTest, FilesWrapAtTheRangeAndTheReaderUnwraps) {
  PowercapClock clock;
  SimPowerModel model;
  model.max_energy_range_uj = 1'500'000;  // 1.5 J: the package wraps every 0.75 s at idle
  model.update_interval_ns = 0;
  test_support::FakeTree tree;
  SimEnergySource src(tree.root(), model, clock.fn());
  EXPECT_EQ(src.wrap_range_uj(), 1'500'000u);
  const EnergyReading a = src.read();
  for (int i = 0; i < 8; ++i) {
    clock.now_ns += kPowercapSecondNs / 2;
    src.read();
  }
  const EnergyReading b = src.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kPackage) - a.energy_uj.at(Domain::kPackage),
            static_cast<std::uint64_t>(4 * model.package_idle_w * 1e6));
  EXPECT_TRUE(std::filesystem::exists(tree.root() / "intel-rapl:0:1/energy_uj"));
}

// As RAPL's counters, the files move only at update instants (every 1 ms by default), each time
// to the energy at that instant: reads between two updates see the same value.
TEST(SimPowerTest, TheFilesChangeOnlyAtUpdateInstants) {
  PowercapClock clock;
  clock.now_ns = 0;
  SimPowerModel model;  // package 2 W idle: 2 µJ per ms
  SimEnergySource src({}, model, clock.fn());
  auto package_uj = [&] { return src.read().energy_uj.at(Domain::kPackage); };
  clock.now_ns = 400'000;
  EXPECT_EQ(package_uj(), 0u);
  clock.now_ns = 999'999;
  EXPECT_EQ(package_uj(), 0u);
  clock.now_ns = 1'000'000;
  EXPECT_EQ(package_uj(), 2000u);
  // The GPU's busy spell counts up to the instant of the next update, not beyond.
  src.simulator().set_gpu_active(true);  // +9 W from 1.0 ms
  clock.now_ns = 2'500'000;
  src.simulator().set_gpu_active(false);
  clock.now_ns = 2'900'000;
  EXPECT_EQ(package_uj(), 2000u + 2000u + 9000u);  // at 2.0 ms: 2 ms idle, 1 ms busy
  clock.now_ns = 3'000'000;
  EXPECT_EQ(package_uj(), 6000u + 9000u + 4500u);  // at 3.0 ms: 3 ms idle, 1.5 ms busy
}

TEST(SimPowerTest, RefusesActivityOutsideZeroToOne) {
  PowercapClock clock;
  SimEnergySource src({}, {}, clock.fn());
  EXPECT_THROW(src.simulator().set_gpu_activity(1.5), std::invalid_argument);
  EXPECT_THROW(src.simulator().set_gpu_activity(-0.1), std::invalid_argument);
  EXPECT_DOUBLE_EQ(src.simulator().gpu_activity(), 0.0);
}

TEST(SimPowerTest, APrivateTreeIsRemovedWithTheSource) {
  std::filesystem::path dir;
  {
    SimEnergySource src;
    dir = src.simulator().class_dir();
    EXPECT_TRUE(std::filesystem::exists(dir / "intel-rapl:0/name"));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace oaprof::power

namespace oaprof::power {
namespace {

// A GPU energy model's joules so far, as the simulated GPU reports them.
struct FakeGpuEnergy {
  std::atomic<double> joules{0};
  GpuEnergyJ fn() {
    return [this] { return std::optional<double>(joules.load()); };
  }
};

TEST(SimPowerGpuModelTest, TheGpuModelsEnergyIsTheUncorePlaneAndInPackageAndPsys) {
  PowercapClock clock;
  FakeGpuEnergy gpu;
  SimPowerModel model;
  model.update_interval_ns = 0;
  model.gpu_energy_j = gpu.fn();
  SimEnergySource src({}, model, clock.fn());
  src.simulator().set_gpu_active(true);  // the activity no longer matters
  const EnergyReading a = src.read();
  clock.now_ns += kPowercapSecondNs;
  gpu.joules = 2.5;
  const EnergyReading b = src.read();
  auto joules = [&](Domain d) {
    return static_cast<double>(b.energy_uj.at(d) - a.energy_uj.at(d)) / 1e6;
  };
  EXPECT_NEAR(joules(Domain::kUncore), 2.5, 1e-5);
  EXPECT_NEAR(joules(Domain::kPackage), model.cores_idle_w + 2.5, 1e-5);
  EXPECT_NEAR(joules(Domain::kCores), model.cores_idle_w, 1e-5);
  EXPECT_NEAR(joules(Domain::kPsys),
              model.psys_idle_w - model.package_idle_w + model.cores_idle_w + 2.5, 1e-5);
  // P_PKG − P_PP0 is the GPU's energy alone.
  EXPECT_NEAR(igpu_power(a, b).pkg_pp0_w.value(), 2.5, 1e-5);
}

TEST(SimPowerGpuModelTest, TheGpusEnergyFromBeforeTheTreeWasMadeIsNotInItsPlanes) {
  PowercapClock clock;
  FakeGpuEnergy gpu;
  gpu.joules = 5.0;  // the GPU ran before the tree was made
  SimPowerModel model;
  model.update_interval_ns = 0;
  model.gpu_energy_j = gpu.fn();
  SimEnergySource src({}, model, clock.fn());
  const EnergyReading a = src.read();
  clock.now_ns += kPowercapSecondNs;
  gpu.joules = 5.5;
  const EnergyReading b = src.read();
  // The planes start at 0 with the tree: the uncore plane holds the 0.5 J since, not the 5 J
  // before.
  EXPECT_NEAR(static_cast<double>(a.energy_uj.at(Domain::kUncore)), 0, 1);
  EXPECT_NEAR(static_cast<double>(b.energy_uj.at(Domain::kUncore)), 0.5e6, 1);
}

TEST(SimPowerGpuModelTest, TheGpuModelsEnergyAppearsAtRaplsNextUpdate) {
  PowercapClock clock;
  clock.now_ns = 0;
  FakeGpuEnergy gpu;
  SimPowerModel model;  // updates once a millisecond
  model.gpu_energy_j = gpu.fn();
  SimEnergySource src({}, model, clock.fn());
  const EnergyReading a = src.read();
  clock.now_ns += 1'500'000;
  gpu.joules = 3.0;  // spread over the 1.5 ms: two thirds before the update at 1 ms
  const EnergyReading b = src.read();
  EXPECT_NEAR(
      static_cast<double>(b.energy_uj.at(Domain::kUncore) - a.energy_uj.at(Domain::kUncore)), 2e6,
      1);
  clock.now_ns += 600'000;  // past the next update: all of it
  const EnergyReading c = src.read();
  EXPECT_NEAR(
      static_cast<double>(c.energy_uj.at(Domain::kUncore) - a.energy_uj.at(Domain::kUncore)), 3e6,
      1);
}

}  // namespace
}  // namespace oaprof::power
