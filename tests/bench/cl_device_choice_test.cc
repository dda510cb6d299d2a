// kernel_runner's --cl-device pci:BDF (bench/cl_device_choice.h): the address parsed once at the
// edge, a rule per test (prefix, forms, hex fields, each field's range, nothing around it), and
// the device at that address chosen across platforms, one without cl_khr_pci_bus_info never, the
// failure naming every device seen on one line with OpenCL's set-up status.
#include "bench/cl_device_choice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/errors.h"

namespace oaprof::bench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void expect_rejected(const std::string& text) {
  try {
    parse_pci_choice(text);
    ADD_FAILURE() << text << " was accepted";
  } catch (const base::UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--cl-device '" + text + "' names no PCI address")) << text;
    EXPECT_THAT(e.what(), HasSubstr("DDDD:BB:DD.F or BB:DD.F in hex")) << text;
  }
}

mmio::PciAddress address(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
  return {.domain = domain, .bus = bus, .dev = dev, .func = func};
}

TEST(PciChoiceTest, WithoutThePrefixItIsAnIndexOrANameAsBefore) {
  for (const char* text : {"", "1", "Intel", "Arc A770", "0000:03:00.0", "PCI:03:00.0"}) {
    EXPECT_FALSE(parse_pci_choice(text)) << text;
  }
}

TEST(PciChoiceTest, TheFullFormGivesEveryField) {
  EXPECT_EQ(parse_pci_choice("pci:0000:03:00.0"), address(0, 3, 0, 0));
  EXPECT_EQ(parse_pci_choice("pci:0001:00:02.0"), address(1, 0, 2, 0));
}

TEST(PciChoiceTest, TheShortFormIsDomainZero) {
  EXPECT_EQ(parse_pci_choice("pci:03:00.0"), address(0, 3, 0, 0));
  EXPECT_EQ(parse_pci_choice("pci:0:2.0"), address(0, 0, 2, 0));
}

TEST(PciChoiceTest, FieldsAreHexInEitherCase) {
  EXPECT_EQ(parse_pci_choice("pci:ffff:AB:1f.7"), address(0xffff, 0xab, 0x1f, 7));
  EXPECT_EQ(parse_pci_choice("pci:00:1F.0"), address(0, 0, 0x1f, 0));
}

TEST(PciChoiceTest, ANonHexFieldIsRejected) {
  for (const char* text : {"pci:zz:00.0", "pci:00:0g.0", "pci:000x:00:02.0", "pci:00:02.a"}) {
    expect_rejected(text);
  }
}

TEST(PciChoiceTest, ADomainPastFourHexDigitsIsRejected) { expect_rejected("pci:10000:00:02.0"); }

TEST(PciChoiceTest, ABusPastTwoHexDigitsIsRejected) { expect_rejected("pci:100:00.0"); }

TEST(PciChoiceTest, ADevicePast1fIsRejected) {
  expect_rejected("pci:00:20.0");
  expect_rejected("pci:00:ff.0");
}

TEST(PciChoiceTest, AFunctionPast7IsRejected) {
  expect_rejected("pci:00:02.8");
  expect_rejected("pci:00:02.10");
}

TEST(PciChoiceTest, AMissingFieldIsRejected) {
  for (const char* text : {"pci:", "pci:00:02", "pci:02.0", "pci:00:.0", "pci:00:02."}) {
    expect_rejected(text);
  }
}

TEST(PciChoiceTest, AnythingAroundTheAddressIsRejected) {
  for (const char* text : {"pci: 00:02.0", "pci:00:02.0 ", "pci:00:02.0x", "pci:pci:00:02.0"}) {
    expect_rejected(text);
  }
}

DeviceInfo device(std::size_t platform, std::size_t index, std::string name,
                  std::optional<mmio::PciAddress> pci) {
  DeviceInfo d;
  d.platform_index = platform;
  d.device_index = index;
  d.device_name = std::move(name);
  d.pci_address = pci;
  return d;
}

// An iGPU, a CPU runtime without the extension, and a discrete card on a second platform.
const std::vector<DeviceInfo> kSeen = {
    device(0, 0, "Intel(R) UHD Graphics 770", address(0, 0, 2, 0)),
    device(1, 0, "pthread-cpu", std::nullopt),
    device(1, 1, "Intel(R) Arc(TM) A770 Graphics", address(0, 3, 0, 0)),
};

TEST(PickByPciTest, TheDeviceAtTheAddressIsChosenOnWhicheverPlatform) {
  EXPECT_EQ(pick_by_pci(kSeen, address(0, 3, 0, 0)), 2u);
  EXPECT_EQ(pick_by_pci(kSeen, address(0, 0, 2, 0)), 0u);
}

TEST(PickByPciTest, EveryFieldMustMatch) {
  for (const mmio::PciAddress& near :
       {address(1, 3, 0, 0), address(0, 4, 0, 0), address(0, 3, 1, 0), address(0, 3, 0, 1)}) {
    EXPECT_THROW(pick_by_pci(kSeen, near), base::SetupError) << near.str();
  }
}

// A device without cl_khr_pci_bus_info cannot match, not even the address a default
// PciAddress holds (0000:00:02.0, the usual iGPU's).
TEST(PickByPciTest, ADeviceWithoutTheExtensionNeverMatches) {
  const std::vector<DeviceInfo> cpu_only = {device(0, 0, "pthread-cpu", std::nullopt)};
  EXPECT_THROW(pick_by_pci(cpu_only, mmio::PciAddress{}), base::SetupError);
}

TEST(PickByPciTest, NoneThereFailsAsSetUpNamingEveryDeviceSeenOnOneLine) {
  try {
    pick_by_pci(kSeen, address(0, 0x80, 0, 0));
    ADD_FAILURE() << "chosen";
  } catch (const base::SetupError& e) {
    EXPECT_EQ(base::exit_status_for(e), base::kExitSetup);
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("no OpenCL device is at PCI address 0000:80:00.0; seen: "
                                "platform 0 device 0 (Intel(R) UHD Graphics 770): 0000:00:02.0; "
                                "platform 1 device 0 (pthread-cpu): no cl_khr_pci_bus_info; "
                                "platform 1 device 1 (Intel(R) Arc(TM) A770 Graphics): "
                                "0000:03:00.0; install"));
    EXPECT_THAT(what, Not(HasSubstr("\n")));
  }
  try {
    pick_by_pci({}, address(0, 3, 0, 0));
    ADD_FAILURE() << "chosen";
  } catch (const base::SetupError& e) {
    EXPECT_THAT(e.what(), HasSubstr("seen: none;"));
  }
}

}  // namespace
}  // namespace oaprof::bench
