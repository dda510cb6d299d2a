// The simulated card's hwmon: a tree laid out as xe or i915 registers it, advanced by a model of
// idle and busy power, read through the real hwmon reader, and chosen only for a simulated
// discrete part.
#include "power/sim_hwmon.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <string>

#include "power/energy_registry.h"
#include "tests/power/fake_tree.h"

namespace oaprof::power {
namespace {
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::uint64_t kSecondNs = 1'000'000'000;

struct VirtualClock {
  std::atomic<std::uint64_t> now_ns{1000};
  SimHwmon::Clock fn() {
    return [this] { return now_ns.load(); };
  }
};

double joules(const EnergyReading& a, const EnergyReading& b, Domain d) {
  return static_cast<double>(b.energy_uj.at(d) - a.energy_uj.at(d)) / 1e6;
}

// As SimPowerTest.AReadingIsTimedAtTheInstantItsFilesWereBroughtTo: a clock that moves on
// between the simulator's look and the reader's does not change the window's power.
TEST(SimHwmonTest, AReadingIsTimedAtTheInstantItsFilesWereBroughtTo) {
  std::atomic<std::uint64_t> now_ns{1000};
  std::atomic<std::uint64_t> step_ns{0};
  const SimHwmonModel model;
  SimHwmonSource src({}, model, [&] { return now_ns.fetch_add(step_ns += 1'000'000); });
  const EnergyReading a = src.read();
  const EnergyReading b = src.read();
  const double seconds = static_cast<double>(b.time_ns - a.time_ns) / 1e9;
  EXPECT_NEAR(joules(a, b, Domain::kGpuPackage) / seconds, model.package_idle_w, 1e-3);
}

TEST(SimHwmonTest, AGpuEnergyModelIsThePackageAndInTheCard) {
  VirtualClock clock;
  std::atomic<double> gpu_j{0};
  SimHwmonModel model;
  model.gpu_energy_j = [&] { return std::optional<double>(gpu_j.load()); };
  SimHwmonSource src({}, model, clock.fn());
  src.set_gpu_active(true);  // the activity no longer matters
  const EnergyReading a = src.read();
  clock.now_ns += kSecondNs;
  gpu_j = 4.0;
  const EnergyReading b = src.read();
  EXPECT_NEAR(joules(a, b, Domain::kGpuPackage), 4.0, 1e-5);
  EXPECT_NEAR(joules(a, b, Domain::kGpuCard), model.card_idle_w - model.package_idle_w + 4.0, 1e-5);
}

// A start just below 2^63 µJ: the files print the driver's `long` turning negative, as a real
// one would, and the reader counts across it; a stuck channel never moves.
TEST(SimHwmonTest, CountersStartWhereTheModelSaysAndCrossTheDriversLongTop) {
  VirtualClock clock;
  SimHwmonModel model;
  model.start_uj = (std::uint64_t{1} << 63) - 1'000'000;  // 1 J below
  model.stuck_domain = Domain::kGpuCard;
  SimHwmonSource src({}, model, clock.fn());
  const EnergyReading a = src.read();
  clock.now_ns += kSecondNs;  // 8 J of idle package: across the top
  const EnergyReading b = src.read();
  EXPECT_NEAR(joules(a, b, Domain::kGpuPackage), model.package_idle_w, 1e-5);
  EXPECT_EQ(joules(a, b, Domain::kGpuCard), 0.0);
  std::ifstream file(src.simulator().device_dir() / "hwmon/hwmon0/energy2_input");
  std::string text;
  std::getline(file, text);
  EXPECT_EQ(text.front(), '-') << text;
}

TEST(SimHwmonTest, XesLayoutAdvancesTheCardAndPackageByTheGpusActivity) {
  VirtualClock clock;
  SimHwmonModel model;
  SimHwmonSource src({}, model, clock.fn());
  EXPECT_EQ(src.name(), "sim-hwmon");
  EXPECT_TRUE(is_simulated_energy_backend(src.name()));
  EXPECT_EQ(src.reader().describe(),
            "xe hwmon0: energy1_input (the card), energy2_input (the GPU package)");
  EXPECT_THAT(src.domains(), ElementsAre(Domain::kGpuCard, Domain::kGpuPackage));
  const EnergyReading a = src.read();
  clock.now_ns += kSecondNs;  // idle
  src.set_gpu_active(true);
  clock.now_ns += kSecondNs;  // busy
  src.set_gpu_activity(0.5);
  clock.now_ns += kSecondNs;  // half
  const EnergyReading b = src.read();
  const double gpu_j = model.gpu_active_w * 1.5;
  EXPECT_NEAR(joules(a, b, Domain::kGpuPackage), 3 * model.package_idle_w + gpu_j, 1e-5);
  EXPECT_NEAR(joules(a, b, Domain::kGpuCard), 3 * model.card_idle_w + gpu_j, 1e-5);
  EXPECT_THROW(src.set_gpu_activity(1.5), std::invalid_argument);
}

TEST(SimHwmonTest, I915sLayoutHasTheUnlabelledPackageOnly) {
  VirtualClock clock;
  SimHwmonModel model;
  model.driver = "i915";
  SimHwmonSource src({}, model, clock.fn());
  EXPECT_EQ(src.reader().driver(), "i915");
  EXPECT_THAT(src.domains(), ElementsAre(Domain::kGpuPackage));
  const EnergyReading a = src.read();
  src.set_gpu_active(true);
  clock.now_ns += 2 * kSecondNs;
  const EnergyReading b = src.read();
  EXPECT_NEAR(joules(a, b, Domain::kGpuPackage), 2 * (model.package_idle_w + model.gpu_active_w),
              1e-5);
  model.driver = "amdgpu";
  EXPECT_THROW(SimHwmonSource({}, model, clock.fn()), std::invalid_argument);
}

// The simulator's energy follows the simulated part's placement: a card's hwmon for a discrete
// one, the RAPL tree for an integrated one, and the other refused by name.
TEST(SimHwmonTest, TheSimulatedSourceFollowsThePlacement) {
  EnergyRoots discrete;
  discrete.gpu_placement = GpuPlacement::kDiscrete;
  discrete.sim_gpu_driver = "i915";
  const auto card = make_energy_source("sim-hwmon", discrete);
  EXPECT_EQ(card->name(), "sim-hwmon");
  EXPECT_EQ(dynamic_cast<const SimHwmonSource&>(*card).reader().driver(), "i915");
  const EnergyDevice sim_card{true, GpuPlacement::kDiscrete, "--device sim"};
  EXPECT_NO_THROW(check_energy_backend_for_device("sim-hwmon", sim_card));
  try {
    check_energy_backend_for_device("sim", sim_card);
    ADD_FAILURE() << "the simulated RAPL tree was taken for a discrete card's power";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("use --energy auto or sim-hwmon"));
  }
  const EnergyDevice sim_igpu{true, GpuPlacement::kIntegrated, "--device sim"};
  EXPECT_NO_THROW(check_energy_backend_for_device("sim", sim_igpu));
  EXPECT_THROW(check_energy_backend_for_device("sim-hwmon", sim_igpu), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::power
