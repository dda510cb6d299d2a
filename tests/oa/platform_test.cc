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

// Wildcat Lake is in the kernel's lists but not oaprof's table: refusing it names the platform
// and why, where it once said "not an Intel GPU oaprof knows".
TEST(PlatformTest, KnownUnsupportedIdIsRefusedWithItsReason) {
  EXPECT_FALSE(platform_for_pci_id(0xFD80).has_value());
  try {
    (void)require_platform_for_pci_id(0xFD80);
    FAIL() << "0xFD80 resolved to a platform";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("Wildcat Lake (WCL)"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("does not support"));
    EXPECT_THAT(e.what(), ::testing::Not(::testing::HasSubstr("oaprof knows (")));
  }
  EXPECT_EQ(unsupported_pci_id_message(0x1af4), "");  // unknown: no reason to give
  EXPECT_EQ(unsupported_pci_id_message(0x5916), "");  // supported
}

// 0x7D40's mtlgt2 is oaprof's inference (IGT maps it to no file); 0x7D45's is IGT's.
TEST(PlatformTest, InferredMetricFileIsMarkedAsSuch) {
  const PciId* inferred = find_pci_id(0x7D40);
  ASSERT_NE(inferred, nullptr);
  EXPECT_EQ(inferred->platform->metrics_file, "mtlgt2");
  EXPECT_THAT(inferred->metric_file_inferred, ::testing::HasSubstr("oaprof's inference"));
  EXPECT_TRUE(find_pci_id(0x7D45)->metric_file_inferred.empty());
  int inferred_ids = 0;
  for (const PciId& id : known_pci_ids()) inferred_ids += id.metric_file_inferred.empty() ? 0 : 1;
  EXPECT_EQ(inferred_ids, 1);
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

TEST(PlatformTest, EuCountsFollowMesaPerId) {
  // Mesa intel_device_info.c / iris_pci_ids.h: parts that share a kernel list can differ.
  struct Expect {
    std::uint16_t id;
    int eus;
    int subslices;
  };
  for (const Expect& e : {
           Expect{0x1A85, 12, 2}, Expect{0x5A85, 12, 2}, Expect{0x5A84, 18, 3},  // bxt_2x6, bxt
           Expect{0x8A56, 32, 4}, Expect{0x8A58, 32, 4}, Expect{0x8A5B, 32, 4},  // icl_gt1
           Expect{0x8A5D, 32, 4}, Expect{0x8A54, 48, 6}, Expect{0x8A57, 48, 6},
           Expect{0x8A59, 48, 6},  // icl_gt1_5
           Expect{0x8A5A, 48, 6}, Expect{0x8A5C, 48, 6}, Expect{0x8A52, 64, 8},
           Expect{0x4541, 8, 2},  Expect{0x4551, 16, 4}, Expect{0x4555, 16, 2},  // ehl_NxM
           Expect{0x4557, 20, 4}, Expect{0x4E61, 24, 4}, Expect{0x4E71, 32, 4},
           Expect{0x4C8C, 16, 1}, Expect{0x468B, 16, 1}, Expect{0x46D2, 16, 1},  // GT0.5
           Expect{0x46D0, 32, 2},  // ADL-N: 2 dual subslices
       }) {
    const auto p = platform_for_pci_id(e.id);
    ASSERT_TRUE(p.has_value()) << std::hex << e.id;
    EXPECT_EQ(p->eus, e.eus) << std::hex << e.id;
    EXPECT_EQ(p->subslices, e.subslices) << std::hex << e.id;
  }
}

TEST(PlatformTest, TheKernelsGtDecidesTheIgtMetricFile) {
  // SKL 0x1913/0x1915/0x1917 sit in the kernel's GT1 lists ("GT1.5"): no IGT set, though Mesa
  // gives them GT2's 24 EUs. 0x87CA is INTEL_AML_CFL_GT2_IDS: Coffee Lake, cflgt2.
  for (const int id : {0x1913, 0x1915, 0x1917}) {
    const auto p = platform_for_pci_id(static_cast<std::uint16_t>(id));
    ASSERT_TRUE(p.has_value()) << std::hex << id;
    EXPECT_EQ(p->metrics_file, "") << std::hex << id;
    EXPECT_EQ(gt_label(*p), "GT1.5");
    EXPECT_EQ(p->eus, 24);
    EXPECT_THAT(no_igt_metrics_reason(*p), ::testing::HasSubstr("SKL GT1.5"));
  }
  EXPECT_EQ(platform_for_pci_id(0x87CA)->metrics_file, "cflgt2");
  EXPECT_EQ(platform_for_pci_id(0x87C0)->metrics_file, "kblgt2");
  EXPECT_EQ(no_igt_metrics_reason(*platform_for_pci_id(0x87CA)), "");
}

TEST(PlatformTest, IdsTheKernelListsAndOaprofMissedAreThere) {
  EXPECT_EQ(platform_for_pci_id(0x3E9C)->codename, "CFL");  // INTEL_CFL_H_GT1_IDS
  EXPECT_EQ(platform_for_pci_id(0x3E9C)->gt, 1);
  EXPECT_EQ(platform_for_pci_id(0x8A70)->codename, "ICL");  // INTEL_ICL_PORT_F_IDS
  EXPECT_FALSE(find_pci_id(0x8A70)->counts_from_mesa);      // Mesa has no 0x8A70
  EXPECT_EQ(platform_for_pci_id(0x46D3)->eus, 32);          // INTEL_ADLN_IDS, Mesa adl_gt1
  EXPECT_EQ(platform_for_pci_id(0x46D4)->eus, 32);
  // Comet Lake ids the kernel never listed (Mesa still does) are gone.
  for (const int id : {0x9BA0, 0x9BAB, 0x9BC0, 0x9BCB}) {
    EXPECT_FALSE(platform_for_pci_id(static_cast<std::uint16_t>(id)).has_value()) << std::hex << id;
  }
}

TEST(PlatformTest, PerPlatformFactsFromMesa) {
  EXPECT_EQ(platform_for_pci_id(0x3185)->threads_per_eu, 6);  // GLK
  EXPECT_EQ(platform_for_pci_id(0x0A84)->threads_per_eu, 6);  // BXT
  EXPECT_EQ(platform_for_pci_id(0x5916)->threads_per_eu, 7);
  EXPECT_TRUE(platform_for_pci_id(0x5916)->has_fp64);
  EXPECT_FALSE(platform_for_pci_id(0x8A52)->has_fp64);    // ICL
  EXPECT_FALSE(platform_for_pci_id(0x46A6)->has_fp64);    // ADL
  EXPECT_TRUE(platform_for_pci_id(0x4905)->force_probe);  // DG1: i915.force_probe
  EXPECT_EQ(kernel_driver_name(platform_for_pci_id(0x46A6)->driver), "i915");
}

// The kernel's IS_DGFX (DGFX_FEATURES in i915_pci.c and xe_pci.c): a card's power is its own
// sensors', never RAPL's, so energy is chosen by this flag.
TEST(PlatformTest, DiscreteCardsAreTheKernelsDgfxOnes) {
  std::set<std::string_view> discrete;
  for (const PciId& id : known_pci_ids()) {
    if (id.platform->discrete) discrete.insert(id.platform->codename);
  }
  EXPECT_TRUE(discrete.contains("DG1"));
  EXPECT_TRUE(discrete.contains("BMG"));
  for (std::string_view integrated : {"KBL", "TGL", "ADL", "MTL", "ARL", "LNL", "PTL"}) {
    EXPECT_FALSE(discrete.contains(integrated)) << integrated;
  }
  EXPECT_TRUE(platform_for_pci_id(0xE20B)->discrete);   // Arc B580
  EXPECT_TRUE(platform_for_pci_id(0xE220)->discrete);   // BMG-G31
  EXPECT_FALSE(platform_for_pci_id(0x64A0)->discrete);  // Lunar Lake, also Xe2
}

TEST(PlatformTest, PciDeviceIdsAreReadAsUsersWriteThem) {
  EXPECT_EQ(parse_pci_device_id("0x3E92"), 0x3E92);
  EXPECT_EQ(parse_pci_device_id("3e92"), 0x3E92);
  EXPECT_EQ(parse_pci_device_id("8086:3e92"), 0x3E92);
  EXPECT_EQ(parse_pci_device_id("0x8086:0x3e92"), 0x3E92);
  EXPECT_FALSE(parse_pci_device_id("1002:3e92").has_value());  // not Intel
  EXPECT_FALSE(parse_pci_device_id("12345").has_value());
  EXPECT_FALSE(parse_pci_device_id("").has_value());
  EXPECT_FALSE(parse_pci_device_id("0x").has_value());
  EXPECT_FALSE(parse_pci_device_id("3e9g").has_value());
  EXPECT_FALSE(parse_pci_device_id("-1").has_value());
}

}  // namespace
}  // namespace oaprof::oa
