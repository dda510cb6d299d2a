#include "power/msr.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/power/fake_tree.h"

namespace oaprof::power {
namespace {
using ::testing::HasSubstr;

// MSR_RAPL_POWER_UNIT as Skylake reports it: energy status unit 14 (61.035 µJ).
constexpr std::uint64_t kSkylakeUnit = 0x000A0E03;
const double kUnitUj = 1e6 / 16384.0;

// A CPU's topology and its msr device with every RAPL register but PSYS (the file ends before
// 0x64D, as the driver's EIO ends a read of a register the part lacks).
void add_cpu(const test_support::FakeTree& tree, int cpu, int package) {
  tree.write("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/physical_package_id",
             std::to_string(package));
  const std::string dev = "dev/cpu/" + std::to_string(cpu) + "/msr";
  tree.write_u64_at(dev, kMsrRaplPowerUnit, kSkylakeUnit);
  for (std::uint32_t msr :
       {kMsrPkgEnergyStatus, kMsrDramEnergyStatus, kMsrPp0EnergyStatus, kMsrPp1EnergyStatus}) {
    tree.write_u64_at(dev, msr, 0);
  }
}

TEST(MsrTest, EnergyUnitComesFromBits12To8) {
  EXPECT_DOUBLE_EQ(msr_energy_unit_uj(kSkylakeUnit), kUnitUj);
  EXPECT_DOUBLE_EQ(msr_energy_unit_uj(0x1000), 1e6 / 65536.0);  // ESU 16
  EXPECT_DOUBLE_EQ(msr_energy_unit_uj(0), 1e6);
}

TEST(MsrTest, FirstCpuOfEachPackage) {
  test_support::FakeTree tree;
  for (int cpu : {0, 1, 2, 3}) add_cpu(tree, cpu, cpu >= 2 ? 1 : 0);
  tree.write("sys/devices/system/cpu/cpufreq/boost", "1");
  EXPECT_THAT(first_cpu_of_each_package(tree.root() / "sys/devices/system/cpu"),
              ::testing::ElementsAre(0, 2));
}

TEST(MsrTest, ReadsPlanesUnwraps32BitsAndSumsPackages) {
  test_support::FakeTree tree;
  add_cpu(tree, 0, 0);
  add_cpu(tree, 1, 1);
  tree.write_u64_at("dev/cpu/0/msr", kMsrPkgEnergyStatus, 0xFFFFFF00u);
  MsrSource src(tree.root() / "dev/cpu", tree.root() / "sys/devices/system/cpu");
  EXPECT_THAT(src.domains(), ::testing::ElementsAre(Domain::kPackage, Domain::kCores,
                                                    Domain::kUncore, Domain::kDram));
  EXPECT_EQ(src.wrap_range_uj(), static_cast<std::uint64_t>(4294967296.0 * kUnitUj));
  const EnergyReading a = src.read();
  // Package 0 wraps (0xFFFFFF00 → 0x100: 0x200 counts); the upper 32 bits are reserved noise.
  tree.write_u64_at("dev/cpu/0/msr", kMsrPkgEnergyStatus, 0xABCD'0000'0000'0100ull);
  tree.write_u64_at("dev/cpu/1/msr", kMsrPkgEnergyStatus, 0x300);
  tree.write_u64_at("dev/cpu/1/msr", kMsrPp1EnergyStatus, 16384);  // 1 J
  const EnergyReading b = src.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kPackage) - a.energy_uj.at(Domain::kPackage),
            static_cast<std::uint64_t>((0x200 + 0x300) * kUnitUj));
  EXPECT_EQ(b.energy_uj.at(Domain::kUncore) - a.energy_uj.at(Domain::kUncore), 1'000'000u);
  EXPECT_FALSE(b.energy_uj.contains(Domain::kPsys));
}

TEST(MsrTest, NoMsrDeviceNamesTheModule) {
  test_support::FakeTree tree;
  tree.write("sys/devices/system/cpu/cpu0/topology/physical_package_id", "0");
  try {
    MsrSource src(tree.root() / "dev/cpu", tree.root() / "sys/devices/system/cpu");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("modprobe msr"));
  }
}

TEST(MsrTest, NoRaplUnitSaysTheCpuHasNone) {
  test_support::FakeTree tree;
  tree.write("sys/devices/system/cpu/cpu0/topology/physical_package_id", "0");
  tree.write_u64_at("dev/cpu/0/msr", 0x10, 1);  // a file that ends before 0x606
  try {
    MsrSource src(tree.root() / "dev/cpu", tree.root() / "sys/devices/system/cpu");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no RAPL"));
  }
}

TEST(MsrTest, NoTopologySaysWhereItLooked) {
  test_support::FakeTree tree;
  EXPECT_THROW(first_cpu_of_each_package(tree.root() / "nothing"), std::runtime_error);
}

TEST(MsrTest, UnreadableDeviceNamesRoot) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root opens any file; permission errors need a non-root user";
  test_support::FakeTree tree;
  add_cpu(tree, 0, 0);
  std::filesystem::permissions(tree.root() / "dev/cpu/0/msr", std::filesystem::perms::none);
  try {
    MsrSource src(tree.root() / "dev/cpu", tree.root() / "sys/devices/system/cpu");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("root"));
  }
}

}  // namespace
}  // namespace oaprof::power
