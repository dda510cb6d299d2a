#include "oa/platform.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace oaprof::oa {
namespace {

TEST(PlatformTest, KnownIdsResolve) {
  const auto kbl = platform_for_pci_id(0x5916);
  ASSERT_TRUE(kbl.has_value());
  EXPECT_EQ(kbl->metrics_file, "kblgt2");
  EXPECT_EQ(kbl->gen, Generation::kGen9);
  EXPECT_EQ(kbl->eus, 24);
  EXPECT_DOUBLE_EQ(kbl->timestamp_hz, 12e6);
  EXPECT_DOUBLE_EQ(platform_for_pci_id(0x1616)->timestamp_hz, 12.5e6);  // Gen8
  EXPECT_DOUBLE_EQ(platform_for_pci_id(0x3185)->timestamp_hz, 19.2e6);  // Gen9 LP
}

TEST(PlatformTest, UnknownIdIsAbsent) {
  EXPECT_FALSE(platform_for_pci_id(0x1af4).has_value());
  EXPECT_FALSE(platform_by_name("nosuch").has_value());
}

TEST(PlatformTest, IdsAreUniqueAndSimulatedPlatformIsInTheTable) {
  std::set<std::uint16_t> seen;
  for (const auto& id : known_pci_ids()) EXPECT_TRUE(seen.insert(id.device).second) << id.device;
  EXPECT_EQ(platform_for_pci_id(kSimulatedPciId)->metrics_file, simulated_platform().metrics_file);
}

TEST(PlatformTest, TableCoversHaswellThroughAlderLake) {
  struct Expect {
    std::uint16_t id;
    std::string_view codename;
    Generation gen;
    int gt;
    std::string_view file;
  };
  for (const Expect& e : {
           Expect{0x0416, "HSW", Generation::kGen7_5, 2, "hsw"},
           Expect{0x1626, "BDW", Generation::kGen8, 3, "bdw"},
           Expect{0x22B0, "CHV", Generation::kGen8, 1, "chv"},
           Expect{0x1906, "SKL", Generation::kGen9, 1, ""},
           Expect{0x193B, "SKL", Generation::kGen9, 4, "sklgt4"},
           Expect{0x5A85, "BXT", Generation::kGen9, 1, "bxt"},
           Expect{0x87C0, "AML", Generation::kGen9, 2, "kblgt2"},
           Expect{0x3EA0, "WHL", Generation::kGen9, 2, "cflgt2"},
           Expect{0x9BC4, "CML", Generation::kGen9, 2, "cflgt2"},
           Expect{0x3184, "GLK", Generation::kGen9, 1, "glk"},
           Expect{0x8A52, "ICL", Generation::kGen11, 2, "icl"},
           Expect{0x4E61, "JSL", Generation::kGen11, 1, "ehl"},
           Expect{0x9A49, "TGL", Generation::kGen12, 2, "tglgt2"},
           Expect{0x4C8A, "RKL", Generation::kGen12, 1, "rkl"},
           Expect{0x46A6, "ADL", Generation::kGen12, 2, "adl"},
       }) {
    const auto p = platform_for_pci_id(e.id);
    ASSERT_TRUE(p.has_value()) << std::hex << e.id;
    EXPECT_EQ(p->codename, e.codename) << std::hex << e.id;
    EXPECT_EQ(p->gen, e.gen) << std::hex << e.id;
    EXPECT_EQ(p->gt, e.gt) << std::hex << e.id;
    EXPECT_EQ(p->metrics_file, e.file) << std::hex << e.id;
  }
  // Gen11+ timestamps come from the crystal; earlier ones are fixed.
  EXPECT_EQ(platform_for_pci_id(0x8A52)->timestamp_rule, TimestampRule::kCrystalCtc);
  EXPECT_EQ(platform_for_pci_id(0x0416)->timestamp_rule, TimestampRule::kFixed);
  EXPECT_DOUBLE_EQ(platform_for_pci_id(0x0416)->timestamp_hz, 12.5e6);
}

TEST(PlatformTest, EveryEntryIsConsistent) {
  for (const PciId& id : known_pci_ids()) {
    const Platform& p = *id.platform;
    EXPECT_GT(p.eus, 0) << std::hex << id.device;
    EXPECT_GE(p.subslices, p.slices) << std::hex << id.device;
    EXPECT_GT(p.timestamp_hz, 0) << std::hex << id.device;
    EXPECT_GT(p.max_freq_mhz, p.min_freq_mhz) << std::hex << id.device;
    if (!p.metrics_file.empty()) {
      EXPECT_TRUE(platform_by_name(p.metrics_file).has_value()) << p.metrics_file;
    }
  }
  for (const std::string_view name : platform_names()) {
    EXPECT_EQ(platform_by_name(name)->metrics_file, name);
  }
}

TEST(PlatformTest, UnknownIdsAndNamesGiveClearMessages) {
  try {
    require_platform_for_pci_id(0x1af4);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("8086:1af4"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("kblgt2"));
  }
  try {
    require_platform_by_name("kbl");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("unknown platform 'kbl'"));
  }
  EXPECT_EQ(require_platform_by_name("icl").codename, "ICL");
  EXPECT_FALSE(platform_by_name("").has_value());
}

}  // namespace
}  // namespace oaprof::oa
