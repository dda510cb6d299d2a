#include "power/powercap.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace oaprof::power {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

class FakePowercap {
 public:
  FakePowercap() {
    root_ = fs::temp_directory_path() / ("oaprof-powercap-" + std::to_string(::getpid()) + "-" +
                                         std::to_string(counter_++));
    fs::create_directories(root_);
  }
  ~FakePowercap() { fs::remove_all(root_); }
  void zone(const std::string& id, const std::string& name, std::uint64_t energy,
            std::uint64_t range = 262143328850) {
    fs::create_directories(root_ / id);
    write(id + "/name", name);
    write(id + "/max_energy_range_uj", std::to_string(range));
    set(id, energy);
  }
  void set(const std::string& id, std::uint64_t energy) {
    write(id + "/energy_uj", std::to_string(energy));
  }
  const fs::path& root() const { return root_; }

 private:
  void write(const std::string& rel, const std::string& text) { std::ofstream(root_ / rel) << text << "\n"; }
  static inline int counter_ = 0;
  fs::path root_;
};

TEST(PowercapTest, LaptopLayoutFindsZonesByName) {
  FakePowercap fake;
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

TEST(PowercapTest, WrapInTheMiddleOfAWindowIsUnwrapped) {
  FakePowercap fake;
  fake.zone("intel-rapl:0", "package-0", 990, 1000);
  PowercapSource src(fake.root());
  const auto a = src.read();
  fake.set("intel-rapl:0", 10);  // wrapped at max_energy_range_uj = 1000
  const auto b = src.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kPackage) - a.energy_uj.at(Domain::kPackage), 20u);
}

TEST(PowercapTest, SeveralPackagesAreSummed) {
  FakePowercap fake;
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
  FakePowercap fake;
  try {
    PowercapSource src(fake.root());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no RAPL zone"));
    EXPECT_THAT(e.what(), HasSubstr("virtual machine"));
  }
}

TEST(PowercapTest, UnreadableEnergyNamesTheFixWhenNotRoot) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file; permission errors need a non-root user";
  FakePowercap fake;
  fake.zone("intel-rapl:0", "package-0", 1);
  fs::permissions(fake.root() / "intel-rapl:0/energy_uj", fs::perms::none);
  try {
    PowercapSource src(fake.root());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("root-only since Linux 5.10"));
  }
}

TEST(IgpuPowerTest, FormulasOnKnownInputs) {
  EnergyReading a, b;
  a.time_ns = 0;
  b.time_ns = 500'000'000;  // 0.5 s
  a.energy_uj = {{Domain::kPackage, 0}, {Domain::kCores, 0}, {Domain::kUncore, 0}, {Domain::kDram, 0}};
  b.energy_uj = {{Domain::kPackage, 5'000'000}, {Domain::kCores, 2'000'000},
                 {Domain::kUncore, 1'500'000}, {Domain::kDram, 500'000}};
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
