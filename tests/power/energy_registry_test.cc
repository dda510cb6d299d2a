#include "power/energy_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "power/msr.h"
#include "power/sim_power.h"
#include "tests/power/fake_tree.h"

namespace oaprof::power {
namespace {
using ::testing::HasSubstr;

EnergyRoots roots_in(const test_support::FakeTree& tree) {
  EnergyRoots r;
  r.sysfs = tree.root() / "sys";
  r.dev = tree.root() / "dev";
  r.proc = tree.root() / "proc";
  return r;
}

class CountingSyscalls final : public PerfEventSyscalls {
 public:
  int open(std::uint32_t, std::uint64_t, int) override { return 7; }
  std::uint64_t read(int) override { return 4294967296ull; }  // 1 J
  void close(int) override {}
};

TEST(EnergyRegistryTest, TableListsTheAutomaticOrder) {
  std::vector<std::string_view> automatic;
  for (const auto& b : energy_backends()) {
    if (b.automatic) automatic.push_back(b.name);
  }
  EXPECT_THAT(automatic, ::testing::ElementsAre("hwmon", "powercap", "perf", "msr", "papi"));
}

// Simulated energy beside a real GPU would read as that GPU's measured power.
TEST(EnergyRegistryTest, SimulatedEnergyIsRefusedBesideARealDevice) {
  EXPECT_TRUE(is_simulated_energy_backend("sim"));
  EXPECT_TRUE(is_simulated_energy_backend("sim-hwmon"));
  const EnergyDevice real_igpu{false, GpuPlacement::kUnknown, "0000:00:02.0"};
  for (const char* real :
       {"hwmon", "xe-hwmon", "powercap", "perf", "msr", "papi", "none", "auto", "bogus"}) {
    EXPECT_FALSE(is_simulated_energy_backend(real)) << real;
    EXPECT_NO_THROW(check_energy_backend_for_device(real, real_igpu)) << real;
  }
  EXPECT_NO_THROW(check_energy_backend_for_device("sim", {true, GpuPlacement::kIntegrated, "sim"}));
  for (const char* sim : {"sim", "sim-hwmon"}) {
    try {
      check_energy_backend_for_device(sim, real_igpu);
      ADD_FAILURE() << "--energy " << sim << " was accepted beside a real GPU";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("0000:00:02.0"));
      EXPECT_THAT(e.what(), HasSubstr("a model"));
      EXPECT_THAT(e.what(), HasSubstr("--device sim"));
    }
  }
}

TEST(EnergyRegistryTest, UnknownNameListsTheValidOnes) {
  try {
    make_energy_source("rapl");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("auto, hwmon, powercap, perf, msr, papi, sim, sim-hwmon, none"));
  }
  EXPECT_THROW(choose_energy_source("rapl"), std::invalid_argument);
}

TEST(EnergyRegistryTest, AutoTakesPowercapFirst) {
  test_support::FakeTree tree;
  test_support::FakePowercap pc(tree, "sys/class/powercap");
  pc.zone("intel-rapl:0", "package-0", 5);
  auto src = make_energy_source("auto", roots_in(tree));
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(src->name(), "powercap");
}

TEST(EnergyRegistryTest, AutoFallsBackToPerfWhenPowercapIsAbsent) {
  test_support::FakeTree tree;
  tree.write("sys/bus/event_source/devices/power/type", "23");
  tree.write("sys/bus/event_source/devices/power/cpumask", "0");
  tree.write("sys/bus/event_source/devices/power/events/energy-pkg", "event=0x02");
  tree.write("sys/bus/event_source/devices/power/events/energy-pkg.scale",
             "2.3283064365386962890625e-10");
  tree.write("sys/bus/event_source/devices/power/events/energy-pkg.unit", "Joules");
  EnergyRoots roots = roots_in(tree);
  roots.perf_syscalls = [] { return std::make_unique<CountingSyscalls>(); };
  auto src = make_energy_source("auto", roots);
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(src->name(), "perf");
  EXPECT_EQ(src->read().energy_uj.at(Domain::kPackage), 1'000'000u);
}

TEST(EnergyRegistryTest, NothingUsableGivesEveryReasonAndTheFix) {
  test_support::FakeTree tree;
  try {
    make_energy_source("auto", roots_in(tree));
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("powercap: no RAPL zone"));
    EXPECT_THAT(e.what(), HasSubstr("perf: perf power PMU"));
    EXPECT_THAT(e.what(), HasSubstr("msr: "));
    EXPECT_THAT(e.what(), HasSubstr("papi: not available"));
    EXPECT_THAT(e.what(), HasSubstr("--energy none"));
  }
  const EnergyChoice choice = choose_energy_source("auto", roots_in(tree));
  EXPECT_EQ(choice.source, nullptr);
  EXPECT_THAT(choice.reason, HasSubstr("no energy source could be opened"));
}

TEST(EnergyRegistryTest, AForcedBackendSaysWhichFailed) {
  test_support::FakeTree tree;
  tree.write("sys/devices/system/cpu/cpu0/topology/physical_package_id", "0");
  try {
    make_energy_source("msr", roots_in(tree));
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--energy msr"));
    EXPECT_THAT(e.what(), HasSubstr("modprobe msr"));
  }
}

// The msr backend reads the CPU model under the proc root it is given, not the test machine's.
TEST(EnergyRegistryTest, MsrTakesTheCpuModelFromTheProcRoot) {
  test_support::FakeTree tree;
  tree.write("sys/devices/system/cpu/cpu0/topology/physical_package_id", "0");
  tree.write_u64_at("dev/cpu/0/msr", 0x606, 0x505);  // MSR_RAPL_POWER_UNIT, ESU 5
  tree.write_u64_at("dev/cpu/0/msr", 0x611, 0);      // MSR_PKG_ENERGY_STATUS
  tree.write("proc/cpuinfo", "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 76\n");
  const auto source = make_energy_source("msr", roots_in(tree));
  const auto* msr = dynamic_cast<const MsrSource*>(source.get());
  ASSERT_NE(msr, nullptr);
  EXPECT_EQ(msr->energy_unit(), RaplEnergyUnit::kAtom);
}

TEST(EnergyRegistryTest, NoneAndSim) {
  EXPECT_EQ(make_energy_source("none"), nullptr);
  EXPECT_THAT(choose_energy_source("none").reason, HasSubstr("--energy none"));
  test_support::FakeTree tree;
  EnergyRoots roots;
  roots.sim_dir = tree.root() / "sim";
  auto src = make_energy_source("sim", roots);
  ASSERT_NE(dynamic_cast<SimEnergySource*>(src.get()), nullptr);
  EXPECT_TRUE(std::filesystem::exists(roots.sim_dir / "intel-rapl:0/energy_uj"));
}

}  // namespace
}  // namespace oaprof::power
