// Choosing and opening the device: --device and --pci together.
#include "gpu/device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace oaprof::gpu {
namespace {

using ::testing::HasSubstr;

TEST(DeviceSpecTest, PciChoosesTheDeviceUnlessDeviceNamesAnotherOne) {
  EXPECT_EQ(device_spec_with_pci("auto", ""), "auto");
  EXPECT_EQ(device_spec_with_pci("sim", ""), "sim");
  EXPECT_EQ(device_spec_with_pci("auto", "00:02.0"), "0000:00:02.0");
  EXPECT_EQ(device_spec_with_pci("auto", "0000:03:00.0"), "0000:03:00.0");
  EXPECT_EQ(device_spec_with_pci("0000:00:02.0", "00:02.0"), "0000:00:02.0");  // the same one
  for (const char* other : {"sim", "sim:/tmp/regs", "0000:03:00.0"}) {
    try {
      device_spec_with_pci(other, "0000:00:02.0");
      FAIL() << other;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("--pci 0000:00:02.0 and --device " + std::string(other) +
                                      " name different devices"));
    }
  }
  try {
    device_spec_with_pci("auto", "sim");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("--pci: 'sim' is not a PCI address"));
  }
}

}  // namespace
}  // namespace oaprof::gpu
