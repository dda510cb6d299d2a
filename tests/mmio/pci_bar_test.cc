#include "mmio/pci_bar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace oaprof::mmio {
namespace {

using ::testing::HasSubstr;

TEST(PciAddressTest, ParsesFullAndShortForms) {
  const PciAddress a = parse_pci_address("0000:00:02.0");
  EXPECT_EQ(a.bus, 0u);
  EXPECT_EQ(a.dev, 2u);
  EXPECT_EQ(a.func, 0u);
  EXPECT_EQ(parse_pci_address("01:1f.7").str(), "0000:01:1f.7");
  EXPECT_EQ(parse_pci_address("0001:02:03.4").domain, 1u);
}

TEST(PciAddressTest, RejectsMalformedAddresses) {
  for (const char* bad : {"", "sim", "00:02", "00:20.0", "00:02.8", "00:02.0x", "zz:02.0"}) {
    EXPECT_THROW(parse_pci_address(bad), std::invalid_argument) << bad;
  }
}

TEST(PciIdentityTest, OnlyIntelDisplayDevicesPass) {
  const PciAddress addr = parse_pci_address("0000:00:02.0");
  EXPECT_NO_THROW(check_intel_display(addr, {0x8086, 0x5916, 0x030000}));
  EXPECT_NO_THROW(check_intel_display(addr, {0x8086, 0x9A49, 0x038000}));
  try {
    check_intel_display(addr, {0x1af4, 0x1001, 0x010000});  // a virtio disk at 00:02.0
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("0000:00:02.0 is not an Intel display device"));
    EXPECT_THAT(e.what(), HasSubstr("vendor 0x1af4"));
    EXPECT_THAT(e.what(), HasSubstr("--device sim"));
  }
  EXPECT_THROW(check_intel_display(addr, {0x8086, 0x1237, 0x060000}),
               std::runtime_error);  // host bridge
}

TEST(PciBarBoundsTest, TheLastRegisterFitsAndNothingPastItWrapsIn) {
  constexpr std::uint64_t k16MiB = 16u << 20;
  EXPECT_TRUE(register_in_bar(0, k16MiB));
  EXPECT_TRUE(register_in_bar(k16MiB - 4, k16MiB));
  EXPECT_FALSE(register_in_bar(k16MiB, k16MiB));
  EXPECT_FALSE(register_in_bar(k16MiB - 2, k16MiB));  // unaligned, and would cross the end
  EXPECT_FALSE(register_in_bar(0x2B02, k16MiB));
  // offset + 4 in 32 bits is 0 here, which a 32-bit check would let through.
  EXPECT_FALSE(register_in_bar(0xFFFFFFFCu, k16MiB));
  EXPECT_FALSE(register_in_bar(0xFFFFFFFCu, 0xFFFFFFFFull));
  EXPECT_TRUE(register_in_bar(0xFFFFFFFCu, 1ull << 32));  // a 4 GiB BAR does hold it
  EXPECT_FALSE(register_in_bar(0, 0));                    // no BAR at all
}

}  // namespace
}  // namespace oaprof::mmio
