#include "mmio/pci_sysfs.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mmio/pci_bar.h"

namespace oaprof::mmio {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class PciSysfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fmt::format("oaprof-sysfs-{}", ::getpid());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const fs::path& relative, const std::string& text) const {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  fs::path root_;
};

TEST_F(PciSysfsTest, DrmNodesAreTheChosenDevicesOwnNotTheFirstCard) {
  const PciAddress igpu = parse_pci_address("0000:00:02.0");
  const PciAddress dgpu = parse_pci_address("0000:03:00.0");
  EXPECT_EQ(find_drm_nodes(root_, igpu).card_minor, std::nullopt);  // no such device
  // A discrete GPU probed first took card0 and renderD128; the iGPU has card1 and renderD129.
  for (const char* node : {"card0", "renderD128"}) {
    fs::create_directories(root_ / "bus/pci/devices/0000:03:00.0/drm" / node);
  }
  for (const char* node : {"card1", "renderD129", "controlD65", "card1-eDP-1"}) {
    fs::create_directories(root_ / "bus/pci/devices/0000:00:02.0/drm" / node);
  }
  fs::create_directories(root_ / "bus/pci/devices/0000:00:1f.3");  // bound to no DRM driver
  const DrmNodes nodes = find_drm_nodes(root_, igpu);
  EXPECT_EQ(nodes.card_minor, 1);
  EXPECT_EQ(nodes.render_minor, 129);
  EXPECT_EQ(find_drm_nodes(root_, dgpu).card_minor, 0);
  EXPECT_EQ(find_drm_nodes(root_, dgpu).render_minor, 128);
  const DrmNodes none = find_drm_nodes(root_, parse_pci_address("00:1f.3"));
  EXPECT_EQ(none.card_minor, std::nullopt);
  EXPECT_EQ(none.render_minor, std::nullopt);
  EXPECT_EQ(pci_device_dir(root_, igpu), root_ / "bus/pci/devices/0000:00:02.0");
}

// kernel_runner's GPU detection and the device's own identity read sysfs the same way: files
// first, else the configuration space; a directory that is no address, or a device that tells
// nothing, is left out.
TEST_F(PciSysfsTest, ListsEveryReadableDeviceWithItsIdentity) {
  EXPECT_TRUE(list_pci_devices(root_).empty());  // no directory at all
  write("bus/pci/devices/0000:00:02.0/vendor", "0x8086\n");
  write("bus/pci/devices/0000:00:02.0/device", "0x5916\n");
  write("bus/pci/devices/0000:00:02.0/class", "0x030000\n");
  // Only the configuration space: vendor 0x1af4, device 0x1050, class 0x030000.
  const std::string config{'\xf4', '\x1a', '\x50', '\x10', 0, 0, 0, 0, 0, 0, 0, '\x03'};
  write("bus/pci/devices/0000:00:01.0/config", config);
  fs::create_directories(root_ / "bus/pci/devices/0000:00:1f.3");  // tells nothing
  fs::create_directories(root_ / "bus/pci/devices/not-a-device");
  auto devices = list_pci_devices(root_);
  std::sort(devices.begin(), devices.end(), [](const PciDevice& a, const PciDevice& b) {
    return a.address.str() < b.address.str();
  });
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].address.str(), "0000:00:01.0");
  EXPECT_EQ(devices[0].identity.vendor, 0x1af4);
  EXPECT_EQ(devices[0].identity.device, 0x1050);
  EXPECT_EQ(devices[0].identity.device_class, 0x030000u);
  EXPECT_EQ(devices[1].address.str(), "0000:00:02.0");
  EXPECT_EQ(devices[1].identity.device, 0x5916);
}

TEST_F(PciSysfsTest, TheBracketedLockdownModeIsTheSelectedOne) {
  EXPECT_EQ(kernel_lockdown_mode(root_), std::nullopt);  // a kernel without lockdown
  EXPECT_FALSE(lockdown_forbids_bar(kernel_lockdown_mode(root_)));
  write("kernel/security/lockdown", "[none] integrity confidentiality\n");
  EXPECT_EQ(kernel_lockdown_mode(root_), "none");
  EXPECT_FALSE(lockdown_forbids_bar(kernel_lockdown_mode(root_)));
  write("kernel/security/lockdown", "none [integrity] confidentiality\n");
  EXPECT_EQ(kernel_lockdown_mode(root_), "integrity");
  EXPECT_TRUE(lockdown_forbids_bar(kernel_lockdown_mode(root_)));
  write("kernel/security/lockdown", "none integrity [confidentiality]\n");
  EXPECT_EQ(kernel_lockdown_mode(root_), "confidentiality");
  EXPECT_TRUE(lockdown_forbids_bar(kernel_lockdown_mode(root_)));
}

TEST_F(PciSysfsTest, ARefusedMappingTellsLockdownFromNotBeingRoot) {
  const PciAddress gpu = parse_pci_address("0000:00:02.0");
  write("kernel/security/lockdown", "none [integrity] confidentiality\n");
  for (bool root : {false, true}) {
    const std::string locked = bar_map_advice(gpu, EPERM, root, kernel_lockdown_mode(root_));
    EXPECT_THAT(locked, HasSubstr("lockdown is 'integrity'"));
    EXPECT_THAT(locked, HasSubstr("--access perf"));
    EXPECT_THAT(locked, Not(HasSubstr("sudo")));  // root would not help
  }
  write("kernel/security/lockdown", "[none] integrity confidentiality\n");
  const std::string user = bar_map_advice(gpu, EACCES, false, kernel_lockdown_mode(root_));
  EXPECT_THAT(user, HasSubstr("needs root"));
  EXPECT_THAT(user, HasSubstr("sudo oaprof"));
  EXPECT_THAT(user, Not(HasSubstr("lockdown is")));
  const std::string refused_root = bar_map_advice(gpu, EPERM, true, kernel_lockdown_mode(root_));
  EXPECT_THAT(refused_root, HasSubstr("without kernel lockdown"));
  const std::string other = bar_map_advice(gpu, ENOMEM, false, kernel_lockdown_mode(root_));
  EXPECT_THAT(other, HasSubstr("lspci -v -s 0000:00:02.0"));
}

}  // namespace
}  // namespace oaprof::mmio
