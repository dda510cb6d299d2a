// Choosing and opening the device: --device and --pci together; a device opened for --access
// perf, from sysfs alone, with the render node and card of its own.
#include "gpu/device.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpu/counter_source.h"
#include "mmio/registers.h"

namespace oaprof::gpu {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string with_pci(const std::string& device, const std::string& pci) {
  return device_spec_with_pci(DeviceSpec::parse(device), pci).str();
}

TEST(DeviceSpecTest, PciChoosesTheDeviceUnlessDeviceNamesAnotherOne) {
  EXPECT_EQ(with_pci("auto", ""), "auto");
  EXPECT_EQ(with_pci("sim", ""), "sim");
  EXPECT_EQ(with_pci("auto", "00:02.0"), "0000:00:02.0");
  EXPECT_EQ(with_pci("auto", "0000:03:00.0"), "0000:03:00.0");
  EXPECT_EQ(with_pci("0000:00:02.0", "00:02.0"), "0000:00:02.0");  // the same one
  EXPECT_EQ(with_pci("00:02.0", "0000:00:02.0"), "0000:00:02.0");  // both short and long forms
  for (const char* other : {"sim", "sim:/tmp/regs", "0000:03:00.0"}) {
    try {
      with_pci(other, "0000:00:02.0");
      FAIL() << other;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("--pci 0000:00:02.0 and --device " + std::string(other) +
                                      " name different devices"));
    }
  }
  try {
    with_pci("auto", "sim");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("--pci: 'sim' is not a PCI address"));
  }
}

TEST(DeviceSpecTest, ParsesEachFormAndReadsBackWhatItWrites) {
  EXPECT_TRUE(DeviceSpec::parse("auto").is_auto());
  EXPECT_EQ(DeviceSpec::parse("auto").address().str(), "0000:00:02.0");
  EXPECT_EQ(DeviceSpec::parse("sim").kind(), DeviceSpec::Kind::kSim);
  EXPECT_TRUE(DeviceSpec::parse("sim").simulated());
  const DeviceSpec file = DeviceSpec::parse("sim:/run/x/regs");
  EXPECT_EQ(file.kind(), DeviceSpec::Kind::kSimFile);
  EXPECT_TRUE(file.simulated());
  EXPECT_EQ(file.file(), fs::path("/run/x/regs"));
  const DeviceSpec pci = DeviceSpec::parse("3:00.0");
  EXPECT_EQ(pci.kind(), DeviceSpec::Kind::kPci);
  EXPECT_FALSE(pci.simulated());
  EXPECT_EQ(pci.str(), "0000:03:00.0");
  for (const char* text : {"auto", "sim", "sim:/run/x/regs", "0000:03:00.0"}) {
    EXPECT_EQ(DeviceSpec::parse(DeviceSpec::parse(text).str()).str(), text);
  }
  EXPECT_THROW((void)DeviceSpec::sim().address(), std::logic_error);
}

TEST(DeviceSpecTest, AutoResolvesToTheIntegratedGpusAddress) {
  EXPECT_EQ(DeviceSpec().resolved(), DeviceSpec::parse("0000:00:02.0"));
  EXPECT_FALSE(DeviceSpec().resolved() == DeviceSpec::parse("0000:03:00.0"));
  EXPECT_EQ(DeviceSpec::sim().resolved(), DeviceSpec::sim());
}

TEST(DeviceSpecTest, RefusesWhatIsNoDevice) {
  for (const char* text : {"", "Sim", "simulator", "sim:", "not-a-device", "00:20.0", "auto "}) {
    try {
      (void)DeviceSpec::parse(text);
      FAIL() << "'" << text << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("--device")) << text;
    }
  }
}

// A fake sysfs with an Intel GPU at an address no real machine has, so libpciaccess (which reads
// the real /sys) cannot find it: whatever opens works from the fake tree alone.
class PerfDeviceTest : public ::testing::Test {
 protected:
  static constexpr const char* kBdf = "0000:7f:02.0";
  void SetUp() override {
    root_ = fs::temp_directory_path() / fmt::format("oaprof-device-{}", ::getpid());
    fs::remove_all(root_);
    write("vendor", "0x8086");
    write("device", "0x5916");  // Kaby Lake GT2
    write("class", "0x030000");
    fs::create_directories(dir() / "drm/card1");  // another GPU took card0 and renderD128
    fs::create_directories(dir() / "drm/renderD129");
    // Lockdown forbids mapping any BAR: perf must not need one.
    fs::create_directories(root_ / "kernel/security");
    std::ofstream(root_ / "kernel/security/lockdown") << "none [integrity] confidentiality\n";
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path dir() const { return root_ / "bus/pci/devices" / kBdf; }
  void write(const std::string& file, const std::string& text) const {
    fs::create_directories(dir());
    std::ofstream(dir() / file) << text << "\n";
  }
  // Binds xe to a device of PCI id `id` and maps its BAR: the refusal's text.
  std::string refusal_to_map_under_xe(const std::string& id) {
    write("device", id);
    fs::create_directories(root_ / "bus/pci/drivers/xe");
    fs::create_symlink(root_ / "bus/pci/drivers/xe", dir() / "driver");
    DeviceOptions mapped = perf_options();
    mapped.map_registers = true;
    try {
      (void)open_device(mapped);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "mapped the BAR of a part xe drives";
    return "";
  }
  DeviceOptions perf_options() const {
    DeviceOptions o;
    o.spec = oaprof::gpu::DeviceSpec::parse(kBdf);
    o.sysfs_root = root_;
    o.map_registers = access_maps_registers("perf");
    return o;
  }
  fs::path root_;
};

// xe has OA from Gen12 on: a part before that bound to xe (which xe never binds) is refused for
// every read-out before anything is opened.
TEST_F(PerfDeviceTest, APartXeHasNoOaForIsRefusedForEveryReadOut) {
  fs::create_directories(root_ / "bus/pci/drivers/xe");
  fs::create_symlink(root_ / "bus/pci/drivers/xe", dir() / "driver");
  for (bool map_registers : {true, false}) {
    DeviceOptions o = perf_options();
    o.map_registers = map_registers;
    try {
      (void)open_device(o);
      FAIL() << "opened a device xe drives";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("is driven by xe"));
      EXPECT_THAT(e.what(), HasSubstr("Gen12 and later"));
    }
  }
  fs::remove(dir() / "driver");
  fs::create_directories(root_ / "bus/pci/drivers/i915");
  fs::create_symlink(root_ / "bus/pci/drivers/i915", dir() / "driver");
  EXPECT_NO_THROW((void)open_device(perf_options()));  // i915's is opened as before
}

// An id oaprof knows it does not support says so with the reason, under either driver, and
// never that xe lacks OA (xe runs OA on Wildcat Lake); an id no table has says oaprof does not
// know it.
TEST_F(PerfDeviceTest, AKnownUnsupportedIdIsNamedWithItsReasonUnderEitherDriver) {
  write("device", "0xFD80");  // Wildcat Lake, no driver bound: the perf path reads sysfs alone
  try {
    (void)open_device(perf_options());
    FAIL() << "opened an unsupported id";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("Wildcat Lake (WCL), which oaprof knows but does not"));
    EXPECT_THAT(e.what(), Not(HasSubstr("which oaprof does not know")));
  }
  const std::string under_xe = refusal_to_map_under_xe("0xFD80");
  EXPECT_THAT(under_xe, HasSubstr("Wildcat Lake (WCL), which oaprof knows but does not"));
  EXPECT_THAT(under_xe, Not(HasSubstr("has OA for")));
  try {
    (void)open_device(perf_options());
    FAIL() << "opened an unsupported id under xe";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("knows but does not support"));
  }
  write("device", "0x0001");  // in no table
  try {
    (void)open_device(perf_options());
    FAIL() << "opened an unknown id under xe";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("PCI id 0x0001, which oaprof does not know"));
  }
}

// An Arc A770 under i915 opens for --access perf as the DG2-G10 die, discrete, Xe-HPG.
TEST_F(PerfDeviceTest, AnArcA770UnderI915OpensAsDg2G10) {
  write("device", "0x56A0");
  const Device d = open_device(perf_options());
  EXPECT_EQ(d.platform.gen, oa::Generation::kXeHpg);
  EXPECT_EQ(d.platform.metrics_file, "acmgt3");
  EXPECT_TRUE(d.platform.discrete);
  EXPECT_EQ(d.platform.driver, oa::KernelDriver::kI915);
}

// A Tiger Lake bound to xe (xe.force_probe) opens for --access perf as an xe part: driver xe,
// xe's period exponent; mapping its BAR is refused.
TEST_F(PerfDeviceTest, ATigerLakeBoundToXeOpensForPerfThroughXe) {
  EXPECT_THAT(refusal_to_map_under_xe("0x9A49"), HasSubstr("TGL part driven by xe"));
  Device d = open_device(perf_options());
  EXPECT_EQ(d.platform.gen, oa::Generation::kGen12);
  EXPECT_EQ(d.platform.driver, oa::KernelDriver::kXe);
  EXPECT_EQ(d.perf_period_exponent, 10);
  EXPECT_THROW(make_counter_source("mmio", d), std::invalid_argument);
}

// A Lunar Lake bound to xe opens for --access perf (xe's observation stream, no BAR), with the
// xe default period exponent and its own render node; the register read-outs are refused.
TEST_F(PerfDeviceTest, AnXe2PartDrivenByXeOpensForPerfOnly) {
  const std::string refused = refusal_to_map_under_xe("0x64A0");
  EXPECT_THAT(refused, HasSubstr("LNL part driven by xe"));
  EXPECT_THAT(refused, HasSubstr("use --access perf"));
  Device d = open_device(perf_options());
  EXPECT_EQ(d.platform.gen, oa::Generation::kXe2);
  EXPECT_EQ(d.perf_period_exponent, 10);
  EXPECT_EQ(resolve_render_node(d), "/dev/dri/renderD129");
  DeviceOptions asked = perf_options();
  asked.perf_period_exponent = 14;
  EXPECT_EQ(open_device(asked).perf_period_exponent, 14);
}

TEST_F(PerfDeviceTest, OnlyPerfDoesWithoutTheBar) {
  EXPECT_FALSE(access_maps_registers("perf"));
  for (const char* access : {"mmio", "rpc", "sim", "no-such-access"}) {
    EXPECT_TRUE(access_maps_registers(access)) << access;
  }
}

TEST_F(PerfDeviceTest, PerfOpensADeviceWhoseBarCannotBeMappedAndUsesItsOwnNodes) {
  DeviceOptions mapped = perf_options();
  mapped.map_registers = true;
  EXPECT_THROW(open_device(mapped), std::runtime_error);  // the BAR path cannot open it

  Device d = open_device(perf_options());
  EXPECT_FALSE(d.simulated());
  EXPECT_EQ(d.platform.codename, "KBL");
  EXPECT_EQ(d.pci_id, 0x5916);
  EXPECT_EQ(d.label(), "0000:7f:02.0 [8086:5916]");
  EXPECT_EQ(d.forcewake->method(), "none");  // i915 holds forcewake for its own stream
  try {
    d.mmio->read32(mmio::reg::kOaControl);
    FAIL() << "a register was read without a BAR";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("maps no BAR"));
  }
  EXPECT_EQ(resolve_render_node(d), "/dev/dri/renderD129");
  EXPECT_EQ(resolve_card_sysfs(d), (dir() / "drm/card1").string());

  // The perf read-out gets as far as the device's own render node, which this machine lacks.
  auto src = make_counter_source("perf", d);
  mmio::OaConfig config;
  config.guid = "db41edd4-d8e7-4730-ad11-b9a2d6833503";
  config.flex = {{0xE458, 0x5}};
  try {
    src->start(oa::ReportFormat::kA32u40_A4u32_B8_C8, config);
    FAIL() << "a stream opened on a GPU this machine does not have";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/dev/dri/renderD129"));
  }
}

TEST_F(PerfDeviceTest, NodesGivenOnTheCommandLineWinAndAMissingOneIsNamed) {
  fs::remove_all(dir() / "drm");  // no i915 bound
  DeviceOptions o = perf_options();
  Device d = open_device(o);
  try {
    resolve_render_node(d);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("0000:7f:02.0 has no DRM render node"));
    EXPECT_THAT(e.what(), HasSubstr("--render-node"));
  }
  EXPECT_THROW(resolve_card_sysfs(d), std::runtime_error);
  o.render_node = "/dev/dri/renderD130";
  o.drm_card_sysfs = "/sys/class/drm/card2";
  d = open_device(o);
  EXPECT_EQ(resolve_render_node(d), "/dev/dri/renderD130");
  EXPECT_EQ(resolve_card_sysfs(d), "/sys/class/drm/card2");
}

TEST_F(PerfDeviceTest, PerfStillRefusesWhatIsNotAnIntelGpu) {
  write("vendor", "0x1af4");  // a virtio device at the address
  write("class", "0x010000");
  EXPECT_THROW(open_device(perf_options()), std::runtime_error);
  fs::remove_all(dir());
  try {
    open_device(perf_options());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no PCI device at 0000:7f:02.0"));
  }
}

}  // namespace
}  // namespace oaprof::gpu
