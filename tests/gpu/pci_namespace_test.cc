// The real libpciaccess path, end to end, against a fake PCI device. libpciaccess reads the fixed
// path /sys/bus/pci/devices, so each case runs in a child process with a private user and mount
// namespace (what `unshare -Urm` sets up) where a temporary tree is bind-mounted there. The fake
// 0000:00:02.0 has a file as resource0, which SimGpu serves through a shared mapping: discovery,
// the vendor/class check, mapping, programming, snapshots and restore all run the production code.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpu/counter_source.h"
#include "gpu/device.h"
#include "mmio/registers.h"
#include "oa/delta.h"

namespace oaprof::gpu {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kSkip = 77;
constexpr std::uint64_t kBarBase = 0xF0000000;

struct FakeDevice {
  std::uint16_t vendor, device;
  std::uint32_t device_class;
};

// One sysfs device directory: config space, the separate id files and `resource`.
void make_device(const fs::path& dir, const FakeDevice& d) {
  fs::create_directories(dir);
  std::array<std::uint8_t, 256> config{};
  auto byte = [](unsigned v, int shift) { return static_cast<std::uint8_t>(v >> shift); };
  config[0] = byte(d.vendor, 0);
  config[1] = byte(d.vendor, 8);
  config[2] = byte(d.device, 0);
  config[3] = byte(d.device, 8);
  config[9] = byte(d.device_class, 0);
  config[10] = byte(d.device_class, 8);
  config[11] = byte(d.device_class, 16);
  config[0x10] = static_cast<std::uint8_t>(kBarBase | 0x4);  // 64-bit memory BAR
  config[0x13] = static_cast<std::uint8_t>(kBarBase >> 24);
  std::ofstream(dir / "config", std::ios::binary)
      .write(reinterpret_cast<const char*>(config.data()), config.size());
  std::ofstream(dir / "vendor") << fmt::format("0x{:04x}\n", d.vendor);
  std::ofstream(dir / "device") << fmt::format("0x{:04x}\n", d.device);
  std::ofstream(dir / "class") << fmt::format("0x{:06x}\n", d.device_class);
  std::ofstream(dir / "revision") << "0x02\n";
  std::ofstream(dir / "subsystem_vendor") << fmt::format("0x{:04x}\n", d.vendor);
  std::ofstream(dir / "subsystem_device") << "0x0000\n";
  std::ofstream res(dir / "resource");
  res << fmt::format("0x{:016x} 0x{:016x} 0x{:016x}\n", kBarBase,
                     kBarBase + mmio::SimGpu::kRegisterFileBytes - 1, 0x140204);
  for (int i = 1; i < 13; ++i) res << fmt::format("0x{:016x} 0x{:016x} 0x{:016x}\n", 0, 0, 0);
  std::ofstream(dir / "resource0", std::ios::binary).flush();
  fs::resize_file(dir / "resource0", mmio::SimGpu::kRegisterFileBytes);
}

bool write_file(const char* path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  return static_cast<bool>(f.flush());
}

// Runs `body` in a child inside a fresh user + mount namespace with `tree` over
// /sys/bus/pci/devices. Returns the child's failure text ("" when it passed), or nullopt with
// `skip_reason` set when the kernel forbids user namespaces.
std::string in_namespace(const fs::path& tree, const std::function<std::string()>& body,
                         std::string& skip_reason) {
  int out[2];
  if (pipe(out) != 0) return "pipe failed";
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  const pid_t child = fork();
  if (child < 0) return "fork failed";
  if (child == 0) {
    close(out[0]);
    auto finish = [&](const std::string& msg, int code) {
      (void)!write(out[1], msg.data(), msg.size());
      _exit(code);
    };
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
      finish(fmt::format("unshare(CLONE_NEWUSER | CLONE_NEWNS): {}", std::strerror(errno)), kSkip);
    }
    write_file("/proc/self/setgroups", "deny");
    if (!write_file("/proc/self/uid_map", fmt::format("0 {} 1", uid)) ||
        !write_file("/proc/self/gid_map", fmt::format("0 {} 1", gid))) {
      finish("cannot write the user namespace's id maps", kSkip);
    }
    if (mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount(tree.c_str(), "/sys/bus/pci/devices", nullptr, MS_BIND, nullptr) != 0) {
      finish(fmt::format("bind mount over /sys/bus/pci/devices: {}", std::strerror(errno)), kSkip);
    }
    std::string failure;
    try {
      failure = body();
    } catch (const std::exception& e) {
      failure = std::string("unexpected exception: ") + e.what();
    }
    finish(failure, failure.empty() ? 0 : 1);
  }
  close(out[1]);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == kSkip) {
    skip_reason = text;
    return "";
  }
  if (!WIFEXITED(status)) return text + fmt::format(" (child died, status {})", status);
  return text;
}

class PciNamespaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fmt::format("oaprof-pci-{}", getpid());
    fs::create_directories(root_ / "debugfs/dri/0");
    std::ofstream(root_ / "debugfs/dri/0/i915_forcewake_user").put('\n');
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

#define CHECK_OR_RETURN(cond, ...) \
  if (!(cond))                     \
  return fmt::format("{}:{}: {} ", __FILE__, __LINE__, #cond) + fmt::format(__VA_ARGS__)

TEST_F(PciNamespaceTest, ProgramsSnapshotsAndRestoresAnIntelGpuThroughLibpciaccess) {
  const fs::path tree = root_ / "sys/bus/pci/devices";
  make_device(tree / "0000:00:02.0", {0x8086, 0x5916, 0x030000});
  fs::create_directories(tree / "0000:00:02.0/drm/card0");         // i915's card: debugfs dri/0
  make_device(tree / "0000:00:00.0", {0x8086, 0x591F, 0x060000});  // the host bridge
  const fs::path resource0 = tree / "0000:00:02.0/resource0";
  std::string skip;
  const std::string failure = in_namespace(
      tree,
      [&]() -> std::string {
        // The namespace path is really in use: the fake tree is what libpciaccess will see.
        CHECK_OR_RETURN(fs::exists("/sys/bus/pci/devices/0000:00:02.0/resource0"), "not mounted");
        std::ifstream uid_map("/proc/self/uid_map");
        std::string line;
        std::getline(uid_map, line);
        CHECK_OR_RETURN(line.find("4294967295") == std::string::npos, "initial user ns: {}", line);

        const int fd = open(resource0.c_str(), O_RDWR);
        CHECK_OR_RETURN(fd >= 0, "open resource0");
        void* p = mmap(nullptr, mmio::SimGpu::kRegisterFileBytes, PROT_READ | PROT_WRITE,
                       MAP_SHARED, fd, 0);
        CHECK_OR_RETURN(p != MAP_FAILED, "mmap resource0");
        std::span<std::uint32_t> bar(static_cast<std::uint32_t*>(p),
                                     mmio::SimGpu::kRegisterFileBytes / 4);
        mmio::ManualClock clock;
        mmio::SimGpu sim(mmio::SimConfig{}, clock);
        sim.write32(mmio::reg::kOaControl, 0x1E);  // what another user left there, not counting
        sim.write32(0xE458, 0x1234);
        sim.serve(bar);
        const std::vector<std::uint32_t> before(bar.begin(), bar.end());

        DeviceOptions opt;
        opt.spec = oaprof::gpu::DeviceSpec::parse("00:02.0");
        opt.sysfs_root = root_ / "sys";
        opt.forcewake.mode = mmio::ForcewakeMode::kDebugfs;
        opt.forcewake.debugfs_root = (root_ / "debugfs").string();
        Device dev = open_device(opt);
        CHECK_OR_RETURN(!dev.simulated() && dev.label() == "0000:00:02.0 [8086:5916]", "{}",
                        dev.label());
        CHECK_OR_RETURN(dev.platform.codename == "KBL", "{}", dev.platform.codename);
        CHECK_OR_RETURN(dev.forcewake->method().find("debugfs") == 0, "{}",
                        dev.forcewake->method());

        auto src = make_counter_source("mmio", dev);
        mmio::OaConfig config;
        config.mux = {{0x9840, 0x80}, {0x9888, 0x166C01E0}};
        config.boolean = {{0x2710, 0x1}};
        config.flex = {{0xE458, 0x5}};
        src->start(oa::ReportFormat::kA32u40_A4u32_B8_C8, config);
        CHECK_OR_RETURN(bar[mmio::reg::kOaControl / 4] == ((5u << 2) | 1u),
                        "OACONTROL over the BAR");
        sim.serve(bar);  // the device takes the writes
        const auto r0 = src->snapshot(1);
        sim.set_kernel_running(true);
        clock.advance_ns(1'000'000);
        sim.set_kernel_running(false);
        sim.serve(bar);
        const auto r1 = src->snapshot(2);
        const auto fmtv = oa::ReportFormat::kA32u40_A4u32_B8_C8;
        const auto d = oa::compute_deltas(oa::decode(fmtv, r0.bytes), oa::decode(fmtv, r1.bytes));
        CHECK_OR_RETURN(d.gpu_ticks == 1'150'000u && d.a[0] == 1'150'000u && d.timestamp == 12'000u,
                        "deltas {} {} {}", d.gpu_ticks, d.a[0], d.timestamp);
        src->stop();
        dev = Device{};  // unmap the BAR, release forcewake
        sim.serve(bar);
        for (std::uint32_t off = 0; off < mmio::SimGpu::kRegisterFileBytes; off += 4) {
          const bool counter =
              (off >= mmio::reg::kCounterFirst && off <= mmio::reg::kCounterLast) ||
              off == mmio::reg::kRingTimestamp;
          CHECK_OR_RETURN(counter || bar[off / 4] == before[off / 4],
                          "register 0x{:X} is 0x{:X}, was 0x{:X}", off, bar[off / 4],
                          before[off / 4]);
        }
        return "";
      },
      skip);
  if (!skip.empty()) GTEST_SKIP() << "the kernel forbids user namespaces here: " << skip;
  EXPECT_EQ(failure, "");
}

TEST_F(PciNamespaceTest, ForcewakeTakesTheDebugfsFileOfTheChosenDevicesDrmMinor) {
  // A sysfs root whose bus/pci/devices is the tree libpciaccess sees.
  const fs::path sysfs = root_ / "sys";
  const fs::path tree = sysfs / "bus/pci/devices";
  make_device(tree / "0000:00:02.0", {0x8086, 0x5916, 0x030000});
  fs::create_directories(tree / "0000:00:02.0/drm/card1");  // a discrete GPU has card0
  fs::create_directories(root_ / "debugfs/dri/1");
  std::ofstream(root_ / "debugfs/dri/1/i915_forcewake_user").put('\n');
  std::string skip;
  const std::string failure = in_namespace(
      tree,
      [&]() -> std::string {
        DeviceOptions opt;
        opt.spec = oaprof::gpu::DeviceSpec::parse("0000:00:02.0");
        opt.sysfs_root = sysfs;
        opt.forcewake.mode = mmio::ForcewakeMode::kDebugfs;
        opt.forcewake.debugfs_root = (root_ / "debugfs").string();
        const Device dev = open_device(opt);
        CHECK_OR_RETURN(
            dev.forcewake->method().find("dri/1/i915_forcewake_user") != std::string::npos, "{}",
            dev.forcewake->method());
        return "";
      },
      skip);
  if (!skip.empty()) GTEST_SKIP() << "the kernel forbids user namespaces here: " << skip;
  EXPECT_EQ(failure, "");
}

TEST_F(PciNamespaceTest, RefusesAVirtioDeviceAtTheGpusAddress) {
  const fs::path tree = root_ / "devices";
  make_device(tree / "0000:00:02.0", {0x1AF4, 0x1001, 0x010000});
  const fs::path resource0 = tree / "0000:00:02.0/resource0";
  std::string skip;
  const std::string failure = in_namespace(
      tree,
      [&]() -> std::string {
        DeviceOptions opt;
        opt.spec = oaprof::gpu::DeviceSpec();
        opt.forcewake.mode = mmio::ForcewakeMode::kNone;
        try {
          open_device(opt);
          return "a virtio disk was opened as a GPU";
        } catch (const std::runtime_error& e) {
          CHECK_OR_RETURN(
              std::string(e.what()).find("not an Intel display device") != std::string::npos, "{}",
              e.what());
        }
        CHECK_OR_RETURN(fs::file_size(resource0) == mmio::SimGpu::kRegisterFileBytes, "resized");
        std::ifstream f(resource0, std::ios::binary);
        for (char c; f.get(c);) CHECK_OR_RETURN(c == 0, "resource0 of the disk was written");
        opt.spec = oaprof::gpu::DeviceSpec::parse("00:03.0");
        try {
          open_device(opt);
          return "an absent device was opened";
        } catch (const std::runtime_error& e) {
          CHECK_OR_RETURN(
              std::string(e.what()).find("no PCI device at 0000:00:03.0") != std::string::npos,
              "{}", e.what());
        }
        return "";
      },
      skip);
  if (!skip.empty()) GTEST_SKIP() << "the kernel forbids user namespaces here: " << skip;
  EXPECT_EQ(failure, "");
}

}  // namespace
}  // namespace oaprof::gpu
