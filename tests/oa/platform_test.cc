#include "oa/platform.h"

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

}  // namespace
}  // namespace oaprof::oa
