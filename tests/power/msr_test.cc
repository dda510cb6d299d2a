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

// /proc/cpuinfo's first lines on a Kaby Lake laptop (family 6, model 142: INTEL_FAM6_KABYLAKE_L,
// rapl_defaults_core) and on an Atom x5 of Cherry Trail (model 76: INTEL_FAM6_ATOM_AIRMONT,
// rapl_defaults_cht), the fields as the kernel's show_cpuinfo() writes them.
constexpr char kKabyLakeCpuinfo[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 142\n"
    "model name\t: Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz\nstepping\t: 10\n\n"
    "processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 142\n";
constexpr char kAirmontCpuinfo[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 76\n"
    "model name\t: Intel(R) Atom(TM) x5-Z8350  CPU @ 1.44GHz\nstepping\t: 4\n";

MsrSource open_source(const test_support::FakeTree& tree) {
  return MsrSource(tree.root() / "dev/cpu", tree.root() / "sys/devices/system/cpu",
                   tree.root() / "proc/cpuinfo");
}

// A CPU's topology and its msr device with every RAPL register but PSYS (the file ends before
// 0x64D, as the driver's EIO ends a read of a register the part lacks).
void add_cpu(const test_support::FakeTree& tree, int cpu, int package) {
  tree.write("proc/cpuinfo", kKabyLakeCpuinfo);
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
  EXPECT_DOUBLE_EQ(rapl_energy_unit_uj(kSkylakeUnit, RaplEnergyUnit::kCore), kUnitUj);
  EXPECT_DOUBLE_EQ(rapl_energy_unit_uj(0x1000, RaplEnergyUnit::kCore), 1e6 / 65536.0);  // ESU 16
  EXPECT_DOUBLE_EQ(rapl_energy_unit_uj(0, RaplEnergyUnit::kCore), 1e6);
}

// rapl_check_unit_atom(): energy_unit = ENERGY_UNIT_SCALE * 1 << ESU, and rapl_unit_xlate()
// turns counts into µJ as counts * energy_unit / ENERGY_UNIT_SCALE, i.e. 2^ESU µJ a count.
TEST(MsrTest, AtomEnergyUnitIsTwoToTheEsuMicrojoules) {
  constexpr unsigned kEnergyUnitScale = 1000;
  for (unsigned esu : {0u, 5u, 14u, 31u}) {
    const std::uint64_t power_unit = (static_cast<std::uint64_t>(esu) << 8) | 0x5;
    const double kernel_uj =
        static_cast<double>((kEnergyUnitScale * 1ull) << esu) / kEnergyUnitScale;
    EXPECT_DOUBLE_EQ(rapl_energy_unit_uj(power_unit, RaplEnergyUnit::kAtom), kernel_uj) << esu;
  }
  EXPECT_DOUBLE_EQ(rapl_energy_unit_uj(0x505, RaplEnergyUnit::kAtom), 32.0);  // ESU 5: 32 µJ
}

// The four models intel_rapl_common.c gives an Atom rapl_defaults (byt, tng, cht, ann), and
// neighbours it gives rapl_defaults_core.
TEST(MsrTest, OnlySilvermontAndAirmontAtomsGetTheAtomUnit) {
  for (unsigned model : {0x37u, 0x4Au, 0x4Cu, 0x5Au}) {
    EXPECT_EQ(rapl_energy_unit_of({"GenuineIntel", 6, model}), RaplEnergyUnit::kAtom) << model;
  }
  for (unsigned model : {0x4Du, 0x5Cu, 0x7Au, 0x8Eu, 0x9Eu, 0xBAu}) {  // Avoton, Goldmont, …
    EXPECT_EQ(rapl_energy_unit_of({"GenuineIntel", 6, model}), RaplEnergyUnit::kCore) << model;
  }
  EXPECT_EQ(rapl_energy_unit_of({"AuthenticAMD", 6, 0x4C}), RaplEnergyUnit::kCore);
  EXPECT_EQ(rapl_energy_unit_of({"GenuineIntel", 15, 0x4C}), RaplEnergyUnit::kCore);
}

TEST(MsrTest, CpuModelIsTheFirstProcessorsOfCpuinfo) {
  const CpuModel kbl = parse_cpu_model(kKabyLakeCpuinfo);
  EXPECT_EQ(kbl.vendor, "GenuineIntel");
  EXPECT_EQ(kbl.family, 6u);
  EXPECT_EQ(kbl.model, 142u);
  EXPECT_EQ(parse_cpu_model(kAirmontCpuinfo).model, 76u);
  // An arm64 kernel's cpuinfo has none of the x86 fields.
  EXPECT_THROW(parse_cpu_model("processor\t: 0\nBogoMIPS\t: 48.00\nCPU part\t: 0xd08\n"),
               std::runtime_error);
  EXPECT_THROW(parse_cpu_model("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: x\n"),
               std::runtime_error);
}

// The package energy a source reads for 1000 counts of MSR_PKG_ENERGY_STATUS on one CPU whose
// MSR_RAPL_POWER_UNIT has ESU 5, playing the part `cpuinfo` names.
struct ThousandCounts {
  RaplEnergyUnit unit;
  std::uint64_t package_uj;
};
ThousandCounts thousand_counts_at_esu_5(const char* cpuinfo) {
  test_support::FakeTree tree;
  add_cpu(tree, 0, 0);
  tree.write("proc/cpuinfo", cpuinfo);
  tree.write_u64_at("dev/cpu/0/msr", kMsrRaplPowerUnit, 0x505);
  MsrSource src = open_source(tree);
  const EnergyReading a = src.read();
  tree.write_u64_at("dev/cpu/0/msr", kMsrPkgEnergyStatus, 1000);
  const EnergyReading b = src.read();
  return {src.energy_unit(), b.energy_uj.at(Domain::kPackage) - a.energy_uj.at(Domain::kPackage)};
}

// A Cherry Trail tablet: 2^5 µJ a count, where the core rule would read 1/2^5 J (976× more).
TEST(MsrTest, AnAirmontCountsTwoToTheEsuMicrojoules) {
  const ThousandCounts airmont = thousand_counts_at_esu_5(kAirmontCpuinfo);
  EXPECT_EQ(airmont.unit, RaplEnergyUnit::kAtom);
  EXPECT_EQ(airmont.package_uj, 32'000u);
}

TEST(MsrTest, AKabyLakeKeepsTheCoreUnit) {
  const ThousandCounts kbl = thousand_counts_at_esu_5(kKabyLakeCpuinfo);
  EXPECT_EQ(kbl.unit, RaplEnergyUnit::kCore);
  EXPECT_EQ(kbl.package_uj, 31'250'000u);
}

TEST(MsrTest, AnAtomUnitWidensTheWrapRange) {
  test_support::FakeTree tree;
  add_cpu(tree, 0, 0);
  tree.write("proc/cpuinfo", kAirmontCpuinfo);
  tree.write_u64_at("dev/cpu/0/msr", kMsrRaplPowerUnit, 0x505);
  EXPECT_EQ(open_source(tree).wrap_range_uj(), 4294967296ull * 32);
}

TEST(MsrTest, NoCpuinfoMeansNoFigureAndNamesTheFix) {
  test_support::FakeTree tree;
  add_cpu(tree, 0, 0);
  std::filesystem::remove(tree.root() / "proc/cpuinfo");
  try {
    open_source(tree);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("proc/cpuinfo"));
    EXPECT_THAT(e.what(), HasSubstr("--proc-root"));
    EXPECT_THAT(e.what(), HasSubstr("--energy powercap"));
  }
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
  MsrSource src = open_source(tree);
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
    open_source(tree);
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
    open_source(tree);
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
    open_source(tree);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("root"));
  }
}

}  // namespace
}  // namespace oaprof::power
