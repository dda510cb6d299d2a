// The hwmon energy backend on fake sysfs trees laid out as i915 (i915_hwmon.c) and xe
// (xe_hwmon.c) register them: found under the GPU's own PCI device, channels by label, wraps of
// the printed `long`, resets, missing and unreadable files, links where sysfs has none, and the
// automatic choice by where the GPU sits.
#include "power/hwmon.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "power/energy_registry.h"
#include "tests/power/fake_tree.h"

namespace oaprof::power {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kDiscrete = "0000:03:00.0";
constexpr const char* kIntegrated = "0000:00:02.0";

std::string hwmon_dir(const std::string& bdf, int n = 2) {
  return "sys/bus/pci/devices/" + bdf + "/hwmon/hwmon" + std::to_string(n);
}

fs::path device_dir(const test_support::FakeTree& tree, const std::string& bdf = kDiscrete) {
  return tree.root() / "sys/bus/pci/devices" / bdf;
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

// A DG2 card as i915 lays it out: one unlabelled energy1_input (PCU_PACKAGE_ENERGY_STATUS), the
// voltage and power-limit files beside it, printed as the hwmon core prints a `long`.
void alchemist(const test_support::FakeTree& tree, const std::string& energy1) {
  const std::string dir = hwmon_dir(kDiscrete, 4);
  tree.write(dir + "/name", "i915");
  tree.write(dir + "/energy1_input", energy1);
  tree.write(dir + "/in0_input", "680");
  tree.write(dir + "/power1_max", "190000000");
  tree.write(dir + "/power1_rated_max", "225000000");
}

EnergyRoots roots_for(const test_support::FakeTree& tree, const std::string& bdf,
                      GpuPlacement placement = GpuPlacement::kUnknown) {
  EnergyRoots r;
  r.sysfs = tree.root() / "sys";
  r.dev = tree.root() / "dev";
  r.proc = tree.root() / "proc";
  r.gpu_pci_address = bdf;
  r.gpu_placement = placement;
  return r;
}

std::string open_error(const fs::path& dir) {
  try {
    HwmonSource src(dir);
    return "opened: " + src.describe();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

TEST(HwmonTest, ReadsXesCardAndPackageChannelsByLabel) {
  test_support::FakeTree tree;
  battlemage(tree, 5'000'000, 2'000'000);
  std::uint64_t now = 1'000'000'000;
  HwmonSource src(device_dir(tree), [&] { return now; });
  EXPECT_EQ(src.name(), "hwmon");
  EXPECT_EQ(src.driver(), "xe");
  EXPECT_THAT(src.domains(), ElementsAre(Domain::kGpuCard, Domain::kGpuPackage));
  EXPECT_EQ(src.describe(), "xe hwmon2: energy1_input (the card), energy2_input (the GPU package)");
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
}

// DG2 under i915: "i915", one unlabelled energy1_input, the GPU package; i915's per-GT
// directories (XeHP SDV's, named i915_gtN) are another driver name and skipped.
TEST(HwmonTest, ReadsI915sUnlabelledEnergy1AsTheGpuPackage) {
  test_support::FakeTree tree;
  tree.write(hwmon_dir(kDiscrete, 3) + "/name", "i915_gt0");
  tree.write(hwmon_dir(kDiscrete, 3) + "/energy1_input", "999999");
  alchemist(tree, "1000");
  std::uint64_t now = 0;
  HwmonSource src(device_dir(tree), [&] { return now; });
  EXPECT_EQ(src.driver(), "i915");
  EXPECT_THAT(src.domains(), ElementsAre(Domain::kGpuPackage));
  EXPECT_EQ(src.describe(), "i915 hwmon4: energy1_input (the GPU package)");
  const EnergyReading a = src.read();
  alchemist(tree, "101000");  // 0.1 J
  now = 1'000'000;            // in 1 ms: 100 W
  const EnergyReading b = src.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kGpuPackage) - a.energy_uj.at(Domain::kGpuPackage), 100'000u);
  EXPECT_DOUBLE_EQ(*igpu_power(a, b).gpu_pkg_w, 100.0);
}

// Both drivers sum into a `long` that the hwmon core prints signed: past LONG_MAX the file reads
// negative, and counting goes on modulo 2^64 instead of failing or jumping.
TEST(HwmonTest, TheDriversLongIsCountedForwardPastItsOverflow) {
  constexpr std::uint64_t kLongMax = INT64_MAX;
  EXPECT_EQ(hwmon_energy_delta(kLongMax - 7, kLongMax + 9), 16u);  // "-9223372036854775800"
  EXPECT_EQ(hwmon_energy_delta(UINT64_MAX - 1, 3), 5u);            // "-2" to "3"
  EXPECT_EQ(hwmon_energy_delta(100, 100), 0u);
  test_support::FakeTree tree;
  alchemist(tree, "9223372036854775800");
  HwmonSource src(device_dir(tree));
  const EnergyReading a = src.read();
  alchemist(tree, "-9223372036854775800");
  const EnergyReading b = src.read();
  alchemist(tree, "-2");
  const EnergyReading c = src.read();
  alchemist(tree, "3");
  const EnergyReading d = src.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kGpuPackage) - a.energy_uj.at(Domain::kGpuPackage), 16u);
  EXPECT_EQ(c.energy_uj.at(Domain::kGpuPackage) - b.energy_uj.at(Domain::kGpuPackage),
            9223372036854775798u);
  EXPECT_EQ(d.energy_uj.at(Domain::kGpuPackage) - c.energy_uj.at(Domain::kGpuPackage), 5u);
  EXPECT_EQ(src.wrap_range_uj(), std::nullopt);  // 292 years at 1000 W: no sampling needed
}

// A value that goes down is the driver reloaded: its new sum starts from the hardware counter's
// value at load, which says nothing of the time since, so that read counts nothing.
TEST(HwmonTest, AValueThatGoesDownIsAResetThatCountsNothing) {
  test_support::FakeTree tree;
  battlemage(tree, 900, 800);
  HwmonSource src(device_dir(tree));
  const EnergyReading a = src.read();
  battlemage(tree, 100, 50);  // xe reloaded
  const EnergyReading b = src.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kGpuPackage), a.energy_uj.at(Domain::kGpuPackage));
  battlemage(tree, 130, 70);
  const EnergyReading c = src.read();
  EXPECT_EQ(c.energy_uj.at(Domain::kGpuPackage) - b.energy_uj.at(Domain::kGpuPackage), 20u);
  EXPECT_EQ(hwmon_energy_delta(900, 50), 0u);
}

TEST(HwmonTest, AnUnlabelledEnergy1IsThePackageAndUnknownLabelsAreLeftOut) {
  EXPECT_EQ(hwmon_channel_domain(1, std::nullopt), Domain::kGpuPackage);
  EXPECT_EQ(hwmon_channel_domain(2, std::nullopt), std::nullopt);
  EXPECT_EQ(hwmon_channel_domain(1, "card"), Domain::kGpuCard);
  EXPECT_EQ(hwmon_channel_domain(2, "pkg"), Domain::kGpuPackage);
  EXPECT_EQ(hwmon_channel_domain(3, "vram"), std::nullopt);
  test_support::FakeTree tree;
  tree.write(hwmon_dir(kDiscrete) + "/name", "xe");
  tree.write(hwmon_dir(kDiscrete) + "/energy1_input", "42");
  tree.write(hwmon_dir(kDiscrete) + "/energy3_label", "vram");
  tree.write(hwmon_dir(kDiscrete) + "/energy3_input", "7");
  EXPECT_THAT(HwmonSource(device_dir(tree)).domains(), ElementsAre(Domain::kGpuPackage));
}

TEST(HwmonTest, RefusesWithTheReasonWhereThereAreNoSensors) {
  test_support::FakeTree tree;
  // An integrated part (no hwmon at all), and another driver's hwmon on the card.
  tree.write("sys/bus/pci/devices/" + std::string(kIntegrated) + "/vendor", "0x8086");
  tree.write(hwmon_dir(kDiscrete, 1) + "/name", "amdgpu");
  tree.write(hwmon_dir(kDiscrete, 1) + "/energy1_input", "1");
  EXPECT_THAT(open_error(device_dir(tree, kIntegrated)), HasSubstr("only for discrete GPUs"));
  EXPECT_THAT(open_error(device_dir(tree)),
              HasSubstr("no i915 or xe hwmon (found hwmon1 (amdgpu))"));
  EXPECT_THAT(open_error(tree.root() / "sys/bus/pci/devices/0000:09:00.0"),
              HasSubstr("no i915 or xe hwmon"));
  // xe's hwmon without an energy channel it knows (a kernel without the sensors).
  tree.write(hwmon_dir(kDiscrete, 3) + "/name", "xe");
  tree.write(hwmon_dir(kDiscrete, 3) + "/energy3_label", "vram");
  tree.write(hwmon_dir(kDiscrete, 3) + "/energy3_input", "1");
  EXPECT_THAT(open_error(device_dir(tree)), HasSubstr("has no energy channel oaprof knows"));
}

TEST(HwmonTest, AFileThatIsNotANumberOrCannotBeReadIsSaid) {
  test_support::FakeTree tree;
  alchemist(tree, "lots");
  EXPECT_THAT(open_error(device_dir(tree)), HasSubstr("does not hold a 64-bit integer"));
  alchemist(tree, "9223372036854775808");  // beyond a long: no hwmon core prints it
  EXPECT_THAT(open_error(device_dir(tree)), HasSubstr("does not hold a 64-bit integer"));
  alchemist(tree, "12");
  const fs::path input = tree.root() / hwmon_dir(kDiscrete, 4) / "energy1_input";
  ::chmod(input.c_str(), 0);
  if (::geteuid() != 0) {  // root reads a mode-0 file: the case exists only for users
    EXPECT_THAT(open_error(device_dir(tree)), HasSubstr("Permission denied (i915 and xe make"));
  }
}

// Nothing beneath the device directory is a link in sysfs: one planted there (pointing at another
// card's sensors, or at a root-only file) is refused, not followed, and nothing of what it
// points at is read.
TEST(HwmonTest, LinksWhereSysfsHasNoneAreRefusedNotFollowed) {
  test_support::FakeTree tree;
  tree.write("elsewhere/hwmon9/name", "i915");
  tree.write("elsewhere/hwmon9/energy1_input", "31337");
  tree.write("secret", "4242");
  fs::create_directories(tree.root() / "sys/bus/pci/devices" / kDiscrete / "hwmon");
  fs::create_directory_symlink(tree.root() / "elsewhere/hwmon9",
                               tree.root() / "sys/bus/pci/devices" / kDiscrete / "hwmon/hwmon9");
  const std::string linked_dir = open_error(device_dir(tree));
  EXPECT_THAT(linked_dir, HasSubstr("hwmon9 (not a directory"));
  EXPECT_THAT(linked_dir, Not(HasSubstr("opened")));

  const fs::path dir = tree.root() / hwmon_dir(kDiscrete, 2);
  fs::create_directories(dir);
  tree.write(hwmon_dir(kDiscrete, 2) + "/name", "i915");
  fs::create_symlink(tree.root() / "secret", dir / "energy1_input");
  const std::string linked_file = open_error(device_dir(tree));
  EXPECT_THAT(linked_file, HasSubstr("energy1_input"));
  EXPECT_THAT(linked_file, HasSubstr("Too many levels of symbolic links"));
  EXPECT_THAT(linked_file, Not(HasSubstr("4242")));

  test_support::FakeTree other;
  fs::create_directories(other.root() / "sys/bus/pci/devices" / kDiscrete);
  fs::create_directory_symlink(tree.root() / "elsewhere",
                               other.root() / "sys/bus/pci/devices" / kDiscrete / "hwmon");
  EXPECT_THAT(open_error(device_dir(other)), HasSubstr("no i915 or xe hwmon"));
}

// A discrete card is measured by its own sensors only: RAPL is never its power, not even when
// the sensors are missing; an integrated GPU by RAPL only; an unknown one hwmon first.
TEST(HwmonTest, AutoChoosesByWhereTheGpuSits) {
  test_support::FakeTree tree;
  battlemage(tree, 1, 1);
  test_support::FakePowercap pc(tree, "sys/class/powercap");
  pc.zone("intel-rapl:0", "package-0", 5);
  EXPECT_EQ(make_energy_source("auto", roots_for(tree, kDiscrete, GpuPlacement::kDiscrete))->name(),
            "hwmon");
  EXPECT_EQ(make_energy_source("auto", roots_for(tree, kDiscrete))->name(), "hwmon");
  // The same tree's hwmon is not even looked at for an integrated GPU.
  EXPECT_EQ(
      make_energy_source("auto", roots_for(tree, kDiscrete, GpuPlacement::kIntegrated))->name(),
      "powercap");
  EXPECT_EQ(make_energy_source("auto", roots_for(tree, kIntegrated))->name(), "powercap");
  const EnergyRoots card_without_sensors = roots_for(tree, "0000:04:00.0", GpuPlacement::kDiscrete);
  try {
    (void)make_energy_source("auto", card_without_sensors);
    ADD_FAILURE() << "RAPL was taken for a discrete card's power";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no energy source for the discrete card"));
    EXPECT_THAT(e.what(), HasSubstr("hwmon: "));
    EXPECT_THAT(e.what(), HasSubstr("RAPL (powercap, perf, msr, papi) is not tried"));
  }
  const EnergyChoice none = choose_energy_source("auto", card_without_sensors);
  EXPECT_EQ(none.source, nullptr);
  EXPECT_THAT(none.reason, HasSubstr("never include a discrete card"));
}

// Named explicitly, a backend that does not measure the GPU is refused (a usage error), rather
// than giving figures that would be read as the GPU's.
TEST(HwmonTest, ABackendThatDoesNotMeasureTheGpuIsRefusedByName) {
  test_support::FakeTree tree;
  battlemage(tree, 1, 1);
  test_support::FakePowercap pc(tree, "sys/class/powercap");
  pc.zone("intel-rapl:0", "package-0", 5);
  for (const char* rapl : {"powercap", "perf", "msr", "papi", "sim"}) {
    try {
      (void)make_energy_source(rapl, roots_for(tree, kDiscrete, GpuPlacement::kDiscrete));
      ADD_FAILURE() << rapl << " opened for a discrete card";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("never include a discrete card")) << rapl;
      EXPECT_THAT(e.what(), HasSubstr("its figures would read as the card's power")) << rapl;
    }
  }
  try {
    (void)make_energy_source("hwmon", roots_for(tree, kIntegrated, GpuPlacement::kIntegrated));
    ADD_FAILURE() << "hwmon opened for an integrated GPU";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("is an integrated GPU, for which i915 and xe register none"));
  }
  // Where the placement is not known (oaprof power without --pci), RAPL is what was asked for.
  EXPECT_EQ(make_energy_source("powercap", roots_for(tree, ""))->name(), "powercap");
}

// Scripts written for the backend's former name keep working.
TEST(HwmonTest, XeHwmonIsStillAcceptedAsTheFormerName) {
  test_support::FakeTree tree;
  battlemage(tree, 1, 1);
  EXPECT_EQ(canonical_energy_backend("xe-hwmon"), "hwmon");
  EXPECT_EQ(canonical_energy_backend("hwmon"), "hwmon");
  EXPECT_EQ(canonical_energy_backend("rapl"), "");
  EXPECT_EQ(make_energy_source("xe-hwmon", roots_for(tree, kDiscrete))->name(), "hwmon");
  try {
    (void)make_energy_source("xe-hwmon", roots_for(tree, ""));
    ADD_FAILURE() << "xe-hwmon opened without a GPU named";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--energy xe-hwmon: no GPU named"));
  }
}

// The address becomes a path component under sysfs: one that climbs out is refused before any
// file is opened, even where the tree it would reach has sensors.
TEST(HwmonTest, AnAddressThatIsNotOneIsRefused) {
  test_support::FakeTree tree;
  battlemage(tree, 1, 1);
  for (const char* hostile :
       {"../devices/0000:03:00.0", "0000:03:00.0/../0000:03:00.0", "..", "0000:03:00.0/"}) {
    try {
      (void)make_energy_source("hwmon", roots_for(tree, hostile));
      ADD_FAILURE() << hostile << " was used as a path";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("is not a PCI address")) << hostile;
    }
  }
}

TEST(HwmonTest, HwmonNumbersAreSignedLongs) {
  using detail::NumberText;
  using detail::parse_number;
  EXPECT_EQ(parse_number("-1", NumberText::kSignedLong), UINT64_MAX);
  EXPECT_EQ(parse_number("-9223372036854775808", NumberText::kSignedLong), std::uint64_t{1} << 63);
  EXPECT_EQ(parse_number("9223372036854775807", NumberText::kSignedLong), INT64_MAX);
  EXPECT_EQ(parse_number("9223372036854775808", NumberText::kSignedLong), std::nullopt);
  EXPECT_EQ(parse_number("-9223372036854775809", NumberText::kSignedLong), std::nullopt);
  EXPECT_EQ(parse_number("0x10", NumberText::kSignedLong), std::nullopt);
  EXPECT_EQ(parse_number("-", NumberText::kSignedLong), std::nullopt);
  EXPECT_EQ(parse_number("-1", NumberText::kUnsigned), std::nullopt);
  EXPECT_EQ(parse_number("0x10", NumberText::kUnsigned), 16u);
}

TEST(HwmonTest, FormulaChoiceAutoWaitsForTheSource) {
  EXPECT_EQ(parse_igpu_formula_choice("auto"), std::nullopt);
  EXPECT_EQ(parse_igpu_formula_choice("gpu-pkg"), IgpuFormula::kGpuPkg);
  EXPECT_THROW((void)parse_igpu_formula_choice("gpu"), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::power
