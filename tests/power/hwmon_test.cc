// The xe hwmon energy backend on fake sysfs trees laid out as xe registers them
// (drivers/gpu/drm/xe/xe_hwmon.c): found under the GPU's own PCI device, channels by label, an
// integrated GPU refused with the reason, and the automatic order taking the GPU's sensors
// before the CPU's RAPL only for the GPU that has them.
#include "power/xe_hwmon.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "power/energy_registry.h"
#include "tests/power/fake_tree.h"

namespace oaprof::power {
namespace {
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kDiscrete = "0000:03:00.0";
constexpr const char* kIntegrated = "0000:00:02.0";

std::string hwmon_dir(const std::string& bdf, int n = 2) {
  return "sys/bus/pci/devices/" + bdf + "/hwmon/hwmon" + std::to_string(n);
}

// A Battlemage card as xe lays it out: energy1 "card", energy2 "pkg", in µJ.
void battlemage(const test_support::FakeTree& tree, std::uint64_t card_uj, std::uint64_t pkg_uj) {
  const std::string dir = hwmon_dir(kDiscrete);
  tree.write(dir + "/name", "xe");
  tree.write(dir + "/energy1_label", "card");
  tree.write(dir + "/energy1_input", std::to_string(card_uj));
  tree.write(dir + "/energy2_label", "pkg");
  tree.write(dir + "/energy2_input", std::to_string(pkg_uj));
  tree.write(dir + "/power1_max", "250000000");  // other channels are left alone
}

EnergyRoots roots_for(const test_support::FakeTree& tree, const std::string& bdf) {
  EnergyRoots r;
  r.sysfs = tree.root() / "sys";
  r.dev = tree.root() / "dev";
  r.gpu_pci_address = bdf;
  return r;
}

TEST(XeHwmonTest, ReadsTheCardAndPackageChannelsByLabel) {
  test_support::FakeTree tree;
  battlemage(tree, 5'000'000, 2'000'000);
  std::uint64_t now = 1'000'000'000;
  XeHwmonSource src(tree.root() / "sys/bus/pci/devices" / kDiscrete, [&] { return now; });
  EXPECT_EQ(src.name(), "xe-hwmon");
  EXPECT_THAT(src.domains(), ElementsAre(Domain::kGpuCard, Domain::kGpuPackage));
  const EnergyReading a = src.read();
  battlemage(tree, 5'000'000 + 30'000'000, 2'000'000 + 24'000'000);
  now += 500'000'000;
  const EnergyReading b = src.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kGpuCard) - a.energy_uj.at(Domain::kGpuCard), 30'000'000u);
  EXPECT_EQ(b.energy_uj.at(Domain::kGpuPackage) - a.energy_uj.at(Domain::kGpuPackage), 24'000'000u);
  // 24 J in 0.5 s is the package's 48 W: the gpu-pkg formula, the default for such a source.
  const IgpuPower p = igpu_power(a, b);
  ASSERT_TRUE(p.gpu_pkg_w.has_value());
  EXPECT_DOUBLE_EQ(*p.gpu_pkg_w, 48.0);
  EXPECT_FALSE(p.pkg_pp0_dram_w.has_value());  // no CPU planes here
  EXPECT_EQ(default_igpu_formula(src.domains()), IgpuFormula::kGpuPkg);
  EXPECT_EQ(p.watts(IgpuFormula::kGpuPkg), p.gpu_pkg_w);
}

TEST(XeHwmonTest, AValueThatGoesDownIsAResetNotAWrap) {
  test_support::FakeTree tree;
  battlemage(tree, 900, 800);
  XeHwmonSource src(tree.root() / "sys/bus/pci/devices" / kDiscrete);
  const EnergyReading a = src.read();
  battlemage(tree, 100, 50);  // xe reloaded: its accumulator starts again
  const EnergyReading b = src.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kGpuPackage) - a.energy_uj.at(Domain::kGpuPackage), 50u);
  EXPECT_EQ(src.wrap_range_uj(), std::nullopt);  // xe's 63-bit sum does not wrap
}

TEST(XeHwmonTest, AnUnlabelledEnergy1IsThePackageAsOlderKernelsHadIt) {
  test_support::FakeTree tree;
  tree.write(hwmon_dir(kDiscrete) + "/name", "xe");
  tree.write(hwmon_dir(kDiscrete) + "/energy1_input", "42");
  XeHwmonSource src(tree.root() / "sys/bus/pci/devices" / kDiscrete);
  EXPECT_THAT(src.domains(), ElementsAre(Domain::kGpuPackage));
}

TEST(XeHwmonTest, RefusesWithTheReasonWhereThereAreNoSensors) {
  test_support::FakeTree tree;
  // An integrated part (xe registers no hwmon for it), and another driver's hwmon.
  tree.write("sys/bus/pci/devices/" + std::string(kIntegrated) + "/vendor", "0x8086");
  tree.write(hwmon_dir(kDiscrete, 1) + "/name", "amdgpu");
  tree.write(hwmon_dir(kDiscrete, 1) + "/energy1_input", "1");
  for (const char* bdf : {kIntegrated, kDiscrete}) {
    try {
      XeHwmonSource src(tree.root() / "sys/bus/pci/devices" / bdf);
      ADD_FAILURE() << bdf << " was taken for an xe GPU with sensors";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("only for discrete GPUs")) << bdf;
    }
  }
  // xe's hwmon without an energy channel it knows (a kernel without the sensors).
  tree.write(hwmon_dir(kDiscrete, 3) + "/name", "xe");
  tree.write(hwmon_dir(kDiscrete, 3) + "/energy3_label", "vram");
  tree.write(hwmon_dir(kDiscrete, 3) + "/energy3_input", "1");
  try {
    XeHwmonSource src(tree.root() / "sys/bus/pci/devices" / kDiscrete);
    ADD_FAILURE() << "a hwmon without card or pkg energy was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no energy channel labelled card or pkg"));
  }
}

TEST(XeHwmonTest, AutoTakesTheDiscreteGpusSensorsAndRaplForTheIntegratedOne) {
  test_support::FakeTree tree;
  battlemage(tree, 1, 1);
  test_support::FakePowercap pc(tree, "sys/class/powercap");
  pc.zone("intel-rapl:0", "package-0", 5);
  auto discrete = make_energy_source("auto", roots_for(tree, kDiscrete));
  ASSERT_NE(discrete, nullptr);
  EXPECT_EQ(discrete->name(), "xe-hwmon");
  auto integrated = make_energy_source("auto", roots_for(tree, kIntegrated));
  ASSERT_NE(integrated, nullptr);
  EXPECT_EQ(integrated->name(), "powercap");
  EXPECT_EQ(default_igpu_formula(integrated->domains()), IgpuFormula::kPkgPp0Dram);
  try {
    (void)make_energy_source("xe-hwmon", roots_for(tree, ""));
    ADD_FAILURE() << "xe-hwmon opened without a GPU named";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--energy xe-hwmon: no GPU named"));
  }
}

// The address becomes a path component under sysfs: one that climbs out is refused before any
// file is opened, even where the tree it would reach has sensors.
TEST(XeHwmonTest, AnAddressThatIsNotOneIsRefused) {
  test_support::FakeTree tree;
  battlemage(tree, 1, 1);
  for (const char* hostile :
       {"../devices/0000:03:00.0", "0000:03:00.0/../0000:03:00.0", "..", "0000:03:00.0/"}) {
    try {
      (void)make_energy_source("xe-hwmon", roots_for(tree, hostile));
      ADD_FAILURE() << hostile << " was used as a path";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("is not a PCI address")) << hostile;
    }
  }
}

TEST(XeHwmonTest, FormulaChoiceAutoWaitsForTheSource) {
  EXPECT_EQ(parse_igpu_formula_choice("auto"), std::nullopt);
  EXPECT_EQ(parse_igpu_formula_choice("gpu-pkg"), IgpuFormula::kGpuPkg);
  EXPECT_THROW((void)parse_igpu_formula_choice("gpu"), std::invalid_argument);
  EXPECT_EQ(xe_hwmon_label_domain("card"), Domain::kGpuCard);
  EXPECT_EQ(xe_hwmon_label_domain("vram"), std::nullopt);
}

}  // namespace
}  // namespace oaprof::power
