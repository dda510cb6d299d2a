#include "power/powercap.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <vector>

#include "power/sysfs_file.h"
#include "tests/power/fake_tree.h"

namespace oaprof::power {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Each test owns its tree; FakePowercap writes the zones into it.
struct Fake : test_support::FakeTree, test_support::FakePowercap {
  Fake() : test_support::FakePowercap(static_cast<const test_support::FakeTree&>(*this)) {}
  using test_support::FakePowercap::root;
};

TEST(PowercapTest, LaptopLayoutFindsZonesByName) {
  Fake fake;
  fake.zone("intel-rapl:0", "package-0", 1000);
  fake.zone("intel-rapl:0:0", "core", 100);
  fake.zone("intel-rapl:0:1", "uncore", 50);
  fake.zone("intel-rapl:1", "psys", 5000);
  PowercapSource src(fake.root());
  EXPECT_THAT(src.domains(), ::testing::UnorderedElementsAre(Domain::kPackage, Domain::kCores,
                                                             Domain::kUncore, Domain::kPsys));
  const EnergyReading a = src.read();
  fake.set("intel-rapl:0", 3000);
  fake.set("intel-rapl:0:0", 600);
  const EnergyReading b = src.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kPackage) - a.energy_uj.at(Domain::kPackage), 2000u);
  EXPECT_EQ(b.energy_uj.at(Domain::kCores) - a.energy_uj.at(Domain::kCores), 500u);
}

// A reader descheduled for 5 ms between the clock and the files (the package drew 2 J meanwhile)
// reads again: its reading is timed where the files it keeps were read, not 5 ms off them.
TEST(PowercapTest, AReadDescheduledBetweenClockAndFilesIsMadeAgain) {
  Fake fake;
  fake.zone("intel-rapl:0", "package-0", 1000);
  const std::vector<std::uint64_t> looks{0, 5'000'000, 5'010'000, 5'030'000};
  std::size_t look = 0;
  PowercapSource src(fake.root(), [&] {
    if (look == 1) fake.set("intel-rapl:0", 2'001'000);
    return looks.at(look++);
  });
  const EnergyReading r = src.read();
  EXPECT_EQ(look, 4u);
  EXPECT_EQ(r.time_ns, 5'020'000u);
  EXPECT_EQ(r.energy_uj.at(Domain::kPackage), 2'000'000u);
}

TEST(PowercapTest, WrapInTheMiddleOfAWindowIsUnwrapped) {
  Fake fake;
  fake.zone("intel-rapl:0", "package-0", 990, 1000);
  PowercapSource src(fake.root());
  const auto a = src.read();
  fake.set("intel-rapl:0", 10);  // wrapped at max_energy_range_uj = 1000
  const auto b = src.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kPackage) - a.energy_uj.at(Domain::kPackage), 20u);
}

TEST(PowercapTest, SeveralPackagesAreSummed) {
  Fake fake;
  fake.zone("intel-rapl:0", "package-0", 0);
  fake.zone("intel-rapl:1", "package-1", 0);
  fake.zone("intel-rapl:0:0", "dram", 0);
  fake.zone("intel-rapl:1:0", "dram", 0);
  PowercapSource src(fake.root());
  const auto a = src.read();
  fake.set("intel-rapl:0", 100);
  fake.set("intel-rapl:1", 250);
  fake.set("intel-rapl:1:0", 40);
  const auto b = src.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kPackage) - a.energy_uj.at(Domain::kPackage), 350u);
  EXPECT_EQ(b.energy_uj.at(Domain::kDram) - a.energy_uj.at(Domain::kDram), 40u);
}

TEST(PowercapTest, NoRaplSaysSoAndWhy) {
  Fake fake;
  try {
    PowercapSource src(fake.root());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no RAPL zone"));
    EXPECT_THAT(e.what(), HasSubstr("virtual machine"));
  }
}

TEST(PowercapTest, UnreadableEnergyNamesTheFixWhenNotRoot) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root reads any file; permission errors need a non-root user";
  Fake fake;
  fake.zone("intel-rapl:0", "package-0", 1);
  fs::permissions(fake.root() / "intel-rapl:0/energy_uj", fs::perms::none);
  try {
    PowercapSource src(fake.root());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("root-only since Linux 5.10"));
  }
}

TEST(PowercapTest, ServerLayoutTwoPackagesWithDram) {
  Fake fake;
  fake.zone("intel-rapl:0", "package-0", 0);
  fake.zone("intel-rapl:0:0", "dram", 0);
  fake.zone("intel-rapl:1", "package-1", 0);
  fake.zone("intel-rapl:1:0", "dram", 0);
  fake.zone("intel-rapl-mmio:0", "package-0", 0);  // the same plane through MMIO: not counted
  PowercapSource src(fake.root());
  EXPECT_THAT(src.domains(), ::testing::ElementsAre(Domain::kPackage, Domain::kDram));
  const auto a = src.read();
  fake.set("intel-rapl:0", 1000);
  fake.set("intel-rapl:1", 3000);
  fake.set("intel-rapl-mmio:0", 99999);
  fake.set("intel-rapl:0:0", 70);
  fake.set("intel-rapl:1:0", 30);
  const auto b = src.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kPackage) - a.energy_uj.at(Domain::kPackage), 4000u);
  EXPECT_EQ(b.energy_uj.at(Domain::kDram) - a.energy_uj.at(Domain::kDram), 100u);
}

TEST(PowercapTest, MissingPlaneIsAbsentNotZero) {
  Fake fake;
  fake.zone("intel-rapl:0", "package-0", 0);
  fake.zone("intel-rapl:0:0", "core", 0);
  PowercapSource src(fake.root());
  const auto a = src.read();
  fake.set("intel-rapl:0", 4'000'000);
  fake.set("intel-rapl:0:0", 1'000'000);
  auto b = src.read();
  b.time_ns = a.time_ns + 1'000'000'000;
  EXPECT_FALSE(b.energy_uj.contains(Domain::kUncore));
  EXPECT_FALSE(b.energy_uj.contains(Domain::kDram));
  const IgpuPower p = igpu_power(a, b);
  EXPECT_FALSE(p.pp1_w.has_value());
  EXPECT_TRUE(p.dram_missing);
  EXPECT_DOUBLE_EQ(*p.pkg_pp0_dram_w, 3.0);
}

TEST(PowercapTest, SeveralWrapsAcrossReadsAccumulateInto64Bits) {
  Fake fake;
  fake.zone("intel-rapl:0", "package-0", 0, 1000);
  PowercapSource src(fake.root());
  EXPECT_EQ(src.wrap_range_uj(), 1000u);
  const auto a = src.read();
  std::uint64_t raw = 0;
  for (int i = 0; i < 10; ++i) {  // 10 × 700 µJ: seven wraps, each seen by one read
    raw = (raw + 700) % 1000;
    fake.set("intel-rapl:0", raw);
    src.read();
  }
  EXPECT_EQ(src.read().energy_uj.at(Domain::kPackage) - a.energy_uj.at(Domain::kPackage), 7000u);
}

TEST(PowercapTest, ACounterThatNeverMovesReadsTheSame) {
  Fake fake;
  fake.zone("intel-rapl:0", "package-0", 123);
  PowercapSource src(fake.root());
  const auto a = src.read();
  const auto b = src.read();
  EXPECT_EQ(a.energy_uj, b.energy_uj);
}

TEST(PowercapTest, GarbageInEnergyUjNamesTheFile) {
  Fake fake;
  fake.zone("intel-rapl:0", "package-0", 1);
  fake.write("class/powercap/intel-rapl:0/energy_uj", "twelve");
  try {
    PowercapSource src(fake.root());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("intel-rapl:0/energy_uj"));
    EXPECT_THAT(e.what(), HasSubstr("twelve"));
  }
}

TEST(PowercapTest, ZoneNamesMapToDomains) {
  EXPECT_EQ(powercap_zone_domain("package-1"), Domain::kPackage);
  EXPECT_EQ(powercap_zone_domain("uncore"), Domain::kUncore);
  EXPECT_EQ(powercap_zone_domain("psys"), Domain::kPsys);
  EXPECT_FALSE(powercap_zone_domain("mmio").has_value());
}

TEST(CounterDeltaTest, WrapsOnceAtTheRange) {
  EXPECT_EQ(counter_delta(10, 30, 100), 20u);
  EXPECT_EQ(counter_delta(90, 5, 100), 15u);
  EXPECT_EQ(counter_delta(90, 5, 0), 5u);  // unknown range: a reset
  EXPECT_EQ(counter_delta(0xFFFFFFF0u, 0x10u, 1ull << 32), 0x20u);
}

TEST(IgpuFormulaTest, NamesAndLabelsRoundTrip) {
  for (IgpuFormula f : kAllIgpuFormulas) EXPECT_EQ(parse_igpu_formula(formula_name(f)), f);
  EXPECT_EQ(formula_label(IgpuFormula::kPkgPp0Dram), "P_PKG - P_PP0 - P_DRAM");
  try {
    parse_igpu_formula("gpu");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("pkg-pp0-dram"));
  }
}

TEST(PowercapTest, PermissionErrorTextNamesTheFixEvenWhenRunAsRoot) {
  const std::string text = detail::open_error_message("/sys/class/powercap/intel-rapl:0/energy_uj",
                                                      EACCES, "energy_uj is root-only");
  EXPECT_THAT(text, HasSubstr("Permission denied"));
  EXPECT_THAT(text, HasSubstr("(energy_uj is root-only)"));
  EXPECT_THAT(detail::open_error_message("/x", ENOENT, "fix"), ::testing::Not(HasSubstr("fix")));
}

TEST(IgpuPowerTest, FormulasOnKnownInputs) {
  EnergyReading a, b;
  a.time_ns = 0;
  b.time_ns = 500'000'000;  // 0.5 s
  a.energy_uj = {
      {Domain::kPackage, 0}, {Domain::kCores, 0}, {Domain::kUncore, 0}, {Domain::kDram, 0}};
  b.energy_uj = {{Domain::kPackage, 5'000'000},
                 {Domain::kCores, 2'000'000},
                 {Domain::kUncore, 1'500'000},
                 {Domain::kDram, 500'000}};
  const IgpuPower p = igpu_power(a, b);
  EXPECT_DOUBLE_EQ(*p.pkg_pp0_dram_w, 10.0 - 4.0 - 1.0);
  EXPECT_DOUBLE_EQ(*p.pkg_pp0_w, 6.0);
  EXPECT_DOUBLE_EQ(*p.pp1_w, 3.0);
  EXPECT_FALSE(p.dram_missing);
}

TEST(IgpuPowerTest, MissingDramCountsAsZeroAndSaysSo) {
  EnergyReading a, b;
  b.time_ns = 1'000'000'000;
  a.energy_uj = {{Domain::kPackage, 0}, {Domain::kCores, 0}};
  b.energy_uj = {{Domain::kPackage, 8'000'000}, {Domain::kCores, 3'000'000}};
  const IgpuPower p = igpu_power(a, b);
  EXPECT_DOUBLE_EQ(*p.pkg_pp0_dram_w, 5.0);
  EXPECT_TRUE(p.dram_missing);
  EXPECT_FALSE(p.pp1_w.has_value());
  EXPECT_FALSE(igpu_power(b, a).pkg_pp0_w.has_value());  // no time elapsed: no figure
}

}  // namespace
}  // namespace oaprof::power
