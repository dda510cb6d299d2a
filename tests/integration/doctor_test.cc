// `oaprof doctor` against fake sysfs, procfs and debugfs trees: each machine state gives the
// verdict line and the fix a user needs, and the exit status says whether a check failed.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "oa/platform.h"
#include "tests/common/run_util.h"

namespace {

namespace fs = std::filesystem;
using oaprof::testing::run;
using ::testing::HasSubstr;
using ::testing::Not;

std::uint16_t pci_id_of(oaprof::oa::Generation gen) {
  for (const auto& id : oaprof::oa::known_pci_ids()) {
    if (id.platform->gen == gen) return id.device;
  }
  ADD_FAILURE() << "no platform of that generation in the table";
  return 0;
}

// A machine in a temporary directory: sys/, proc/, debug/ and dev/, and a socket path.
class FakeMachine {
 public:
  FakeMachine() {
    static std::atomic<int> serial{0};
    root_ = fs::temp_directory_path() / ("oaprof-doctor-test-" + std::to_string(::getpid()) + "-" +
                                         std::to_string(serial.fetch_add(1)));
    fs::remove_all(root_);
    for (const char* d : {"sys", "proc", "debug", "dev"}) fs::create_directories(root_ / d);
  }
  ~FakeMachine() {
    if (listener_ >= 0) ::close(listener_);
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeMachine(const FakeMachine&) = delete;
  FakeMachine& operator=(const FakeMachine&) = delete;

  void write(const std::string& rel, const std::string& text) const {
    const fs::path file = root_ / rel;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::trunc) << text << "\n";
  }

  // A PCI device as sysfs shows it, bound to `driver` (none when empty), with DRM minor 0.
  void pci(const std::string& bdf, const std::string& vendor, std::uint16_t device,
           const std::string& cls, const std::string& driver) const {
    const std::string dir = "sys/bus/pci/devices/" + bdf;
    write(dir + "/vendor", vendor);
    char id[8];
    std::snprintf(id, sizeof id, "0x%04x", device);
    write(dir + "/device", id);
    write(dir + "/class", cls);
    if (!driver.empty()) {
      fs::create_symlink("../../../bus/pci/drivers/" + driver, root_ / dir / "driver");
      fs::create_directories(root_ / dir / "drm" / "card0");
    }
  }

  // Everything right: a Gen9 GPU bound to i915, debugfs, no lockdown, paranoid 0, RAPL through
  // powercap, bare metal.
  void healthy(std::uint16_t device) const {
    pci("0000:00:02.0", "0x8086", device, "0x030000", "i915");
    write("debug/dri/0/i915_forcewake_user", "");
    write("sys/kernel/security/lockdown", "[none] integrity confidentiality");
    write("proc/sys/dev/i915/perf_stream_paranoid", "0");
    write("sys/class/powercap/intel-rapl:0/name", "package-0");
    write("sys/class/powercap/intel-rapl:0/energy_uj", "123456");
    write("sys/class/powercap/intel-rapl:0/max_energy_range_uj", "262143328850");
    write("sys/class/dmi/id/sys_vendor", "LENOVO");
    write("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme de pse tsc msr pae\n");
  }

  // A listening SOCK_SEQPACKET socket where oaprofd's would be.
  void listen_daemon() {
    listener_ = bound_socket(socket());
    ASSERT_EQ(::listen(listener_, 4), 0);
  }

  // A socket file at `path` that nobody listens on: what a daemon killed with SIGKILL leaves.
  static void stale_socket(const std::string& path) { ::close(bound_socket(path)); }

  static int bound_socket(const std::string& path) {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << path;
    return fd;
  }

  std::string socket() const { return (root_ / "oaprofd.sock").string(); }
  const fs::path& root() const { return root_; }

  // `oaprof doctor` on this machine; `extra` adds options (or replaces --daemon-socket).
  oaprof::testing::CommandResult doctor(const std::string& extra = "",
                                        const std::string& env = "") const {
    std::string cmd = env + " " + std::string(OAPROF_BIN) + " doctor --sysfs-root " +
                      (root_ / "sys").string() + " --debugfs-root " + (root_ / "debug").string() +
                      " --proc-root " + (root_ / "proc").string() + " --dev-root " +
                      (root_ / "dev").string() + " --systemd-dropins " +
                      (root_ / "systemd").string() + " --no-opencl-devices";
    if (extra.find("--daemon-socket") == std::string::npos && env.empty()) {
      cmd += " --daemon-socket " + socket();
    }
    return run(cmd + " " + extra);
  }

 private:
  fs::path root_;
  int listener_ = -1;
};

// The verdict line of check `name`, and the fix line under it when there is one.
struct Line {
  std::string verdict, detail, fix;
};

Line line_of(const std::string& output, const std::string& name) {
  std::istringstream in(output);
  std::string line;
  const std::regex head("^(ok|info|warn|fail|skip) +" + name + " +(.*)$");
  const std::regex fix("^ +fix: (.*)$");
  Line found;
  bool in_check = false;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, head)) {
      found = {m[1], m[2], ""};
      in_check = true;
    } else if (in_check && std::regex_match(line, m, fix)) {
      found.fix = m[1];
      in_check = false;
    } else {
      in_check = false;
    }
  }
  return found;
}

const std::string kRootOrFail = ::geteuid() == 0 ? "warn" : "fail";

TEST(DoctorTest, HealthyIntelMachineGivesOkLines) {
  FakeMachine m;
  const std::uint16_t gen9 = pci_id_of(oaprof::oa::Generation::kGen9);
  m.healthy(gen9);
  m.listen_daemon();
  const auto r = m.doctor();
  for (const char* name : {"device", "driver", "forcewake", "lockdown", "perf-paranoid", "energy",
                           "virtualisation", "oaprofd"}) {
    EXPECT_EQ(line_of(r.output, name).verdict, "ok") << name << "\n" << r.output;
  }
  EXPECT_THAT(line_of(r.output, "device").detail,
              HasSubstr(std::string(oaprof::oa::platform_for_pci_id(gen9)->codename)));
  EXPECT_THAT(line_of(r.output, "energy").detail, HasSubstr("powercap (package)"));
  EXPECT_THAT(line_of(r.output, "forcewake").detail, HasSubstr("dri/0/i915_forcewake_user"));
  // Gen9 keeps OA configuration in the context image: the note says what that means.
  EXPECT_EQ(line_of(r.output, "context").verdict, "info");
  EXPECT_THAT(line_of(r.output, "context").detail, HasSubstr("config_lost"));
  // Exit 1 exactly when some check failed (a non-root user outside group oaprof fails "group").
  const bool failed = std::regex_search(r.output, std::regex("(^|\n)fail "));
  EXPECT_EQ(r.status, failed ? 1 : 0) << r.output;
  if (::geteuid() == 0) {
    EXPECT_EQ(r.status, 0) << r.output;
  }
}

// A loopback TCP listener on a port the kernel picks; returns the port, the socket in `fd`.
int tcp_listener(int& fd) {
  fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 4) != 0) return -1;
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

// Issue 31: doctor names the Level Zero way in, found where the dynamic linker finds the loader
// and its tracing layer (here: the first directory of LD_LIBRARY_PATH).
TEST(DoctorTest, LevelZeroReportsTheTracingLayerItWouldUse) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  const fs::path libs = m.root() / "libs";
  fs::create_directories(libs);
  for (const char* name : {"libze_loader.so.1", "libze_tracing_layer.so.1"}) {
    std::ofstream(libs / name) << "not loaded, only found";
  }
  const auto r = m.doctor("", "LD_LIBRARY_PATH=" + libs.string());
  const Line l = line_of(r.output, "level-zero");
  EXPECT_EQ(l.verdict, "ok") << r.output;
  EXPECT_THAT(l.detail, HasSubstr((libs / "libze_tracing_layer.so.1").string()));
  EXPECT_THAT(l.detail, HasSubstr("tracing layer (--inject auto)"));
}

TEST(DoctorTest, TheExporterDropInIsCheckedForItsAddressAndWhetherItAnswers) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  EXPECT_EQ(line_of(m.doctor().output, "exporter").verdict, "info");  // no drop-in: off
  const auto dropin = [&](const std::string& exec) {
    m.write("systemd/exporter.conf", "[Service]\nExecStart=\nExecStart=/usr/bin/oaprofd " + exec);
  };
  int fd = -1;
  const int port = tcp_listener(fd);
  ASSERT_GT(port, 0);
  dropin(fmt::format("--group oaprof --metrics-listen 127.0.0.1:{}", port));
  Line l = line_of(m.doctor().output, "exporter");
  EXPECT_EQ(l.verdict, "ok");
  EXPECT_THAT(l.detail, HasSubstr(fmt::format("http://127.0.0.1:{}/metrics", port)));
  ::close(fd);  // nothing answers now
  l = line_of(m.doctor().output, "exporter");
  EXPECT_EQ(l.verdict, "warn");
  EXPECT_THAT(l.fix, HasSubstr("systemctl"));
  dropin("--metrics-listen=0.0.0.0:9464");
  l = line_of(m.doctor().output, "exporter");
  EXPECT_EQ(l.verdict, "warn");
  EXPECT_THAT(l.detail, HasSubstr("beyond this machine"));
  dropin("--metrics-listen gpu-node:9464");
  const auto bad = m.doctor();
  EXPECT_EQ(line_of(bad.output, "exporter").verdict, "fail") << bad.output;
  EXPECT_EQ(bad.status, 1);
}

TEST(DoctorTest, Gen12HasNoContextNote) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen12));
  const auto r = m.doctor();
  EXPECT_EQ(line_of(r.output, "device").verdict, "ok") << r.output;
  EXPECT_EQ(line_of(r.output, "context").verdict, "") << r.output;
}

TEST(DoctorTest, VirtioDiskAtTheGpuAddressFailsWithTheFix) {
  FakeMachine m;
  m.pci("0000:00:02.0", "0x1af4", 0x1042, "0x018000", "virtio-pci");
  m.write("proc/cpuinfo", "flags\t\t: fpu vme hypervisor lahf_lm\n");
  const auto r = m.doctor();
  const Line device = line_of(r.output, "device");
  EXPECT_EQ(device.verdict, "fail") << r.output;
  EXPECT_THAT(device.detail, HasSubstr("not an Intel display device (vendor 0x1af4, class "
                                       "0x018000)"));
  EXPECT_THAT(device.fix, HasSubstr("use --pci BDF or --device sim"));
  EXPECT_EQ(line_of(r.output, "driver").verdict, "skip");
  EXPECT_EQ(line_of(r.output, "forcewake").verdict, "skip");
  const Line vm = line_of(r.output, "virtualisation");
  EXPECT_EQ(vm.verdict, "warn") << r.output;
  EXPECT_THAT(vm.detail, HasSubstr("without an Intel GPU"));
  EXPECT_THAT(vm.fix, HasSubstr("--device sim"));
  EXPECT_EQ(r.status, 1);
}

TEST(DoctorTest, PciOptionChoosesTheDevice) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  fs::remove_all(m.root() / "sys/bus/pci/devices");
  m.pci("0000:00:02.0", "0x1af4", 0x1042, "0x018000", "virtio-pci");
  m.pci("0000:00:03.0", "0x8086", pci_id_of(oaprof::oa::Generation::kGen9), "0x030000", "i915");
  EXPECT_EQ(line_of(m.doctor().output, "device").verdict, "fail");
  const auto r = m.doctor("--pci 00:03.0");
  EXPECT_EQ(line_of(r.output, "device").verdict, "ok") << r.output;
  EXPECT_THAT(line_of(r.output, "device").detail, HasSubstr("0000:00:03.0"));
  EXPECT_EQ(line_of(r.output, "driver").verdict, "ok");
}

TEST(DoctorTest, MissingDeviceAndBadAddress) {
  FakeMachine m;
  const auto r = m.doctor();
  EXPECT_EQ(line_of(r.output, "device").verdict, "fail");
  EXPECT_THAT(line_of(r.output, "device").detail, HasSubstr("no PCI device at 0000:00:02.0"));
  const auto bad = m.doctor("--pci not-an-address");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("oaprof doctor:"));
}

// Without vendor, device and class files, the identity comes from configuration space.
TEST(DoctorTest, IdentityFromConfigSpaceWhenAttributesAreMissing) {
  const std::uint16_t id = pci_id_of(oaprof::oa::Generation::kGen9);
  FakeMachine m;
  m.pci("0000:00:02.0", "0x8086", id, "0x030000", "i915");
  const fs::path dir = m.root() / "sys/bus/pci/devices/0000:00:02.0";
  for (const char* f : {"vendor", "device", "class"}) fs::remove(dir / f);
  std::string config(64, '\0');
  config[0] = '\x86', config[1] = '\x80';  // vendor 0x8086, little-endian
  config[2] = static_cast<char>(id & 0xff), config[3] = static_cast<char>(id >> 8);
  config[11] = '\x03';  // class code: display controller
  std::ofstream(dir / "config", std::ios::binary) << config;
  const Line l = line_of(m.doctor().output, "device");
  EXPECT_EQ(l.verdict, "ok") << l.detail;
  char hex[8];
  std::snprintf(hex, sizeof hex, "%04x", id);
  EXPECT_THAT(l.detail, HasSubstr(std::string("8086:") + hex));
  // A virtio disk's configuration space says so too.
  config[0] = '\xf4', config[1] = '\x1a', config[10] = '\x80', config[11] = '\x01';
  std::ofstream(dir / "config", std::ios::binary | std::ios::trunc) << config;
  EXPECT_THAT(line_of(m.doctor().output, "device").detail,
              HasSubstr("vendor 0x1af4, class 0x018000"));
}

TEST(DoctorTest, DriverProblems) {
  const std::uint16_t id = pci_id_of(oaprof::oa::Generation::kGen9);
  {
    FakeMachine m;
    m.pci("0000:00:02.0", "0x8086", id, "0x030000", "");
    const Line l = line_of(m.doctor().output, "driver");
    EXPECT_EQ(l.verdict, "fail");
    EXPECT_THAT(l.fix, HasSubstr("modprobe i915"));
  }
  {
    // xe never binds a Gen9 part; were it bound, oaprof would read none of it.
    FakeMachine m;
    m.pci("0000:00:02.0", "0x8086", id, "0x030000", "xe");
    const Line l = line_of(m.doctor().output, "driver");
    EXPECT_EQ(l.verdict, "fail");
    EXPECT_THAT(l.detail, HasSubstr("docs/xe.md"));
    EXPECT_THAT(l.fix, HasSubstr("bind i915"));
    m.write("proc/sys/dev/xe/observation_paranoid", "1");
    const Line x = line_of(m.doctor().output, "xe-observation");
    EXPECT_EQ(x.verdict, "info");
    EXPECT_THAT(x.detail, HasSubstr("observation_paranoid is 1"));
    EXPECT_THAT(x.detail, HasSubstr("CAP_PERFMON"));
  }
  {
    // A Tiger Lake bound to xe (xe.force_probe) is read through xe's stream; the line says what
    // i915 would give instead, and the read-outs are judged as xe's.
    const std::uint16_t tgl = 0x9A49;
    FakeMachine m;
    m.pci("0000:00:02.0", "0x8086", tgl, "0x030000", "xe");
    m.write("proc/sys/dev/xe/observation_paranoid", "1");
    const std::string out = m.doctor().output;
    const Line l = line_of(out, "driver");
    EXPECT_EQ(l.verdict, "ok") << l.detail;
    EXPECT_THAT(l.detail, HasSubstr("xe's observation stream"));
    EXPECT_THAT(l.detail, HasSubstr("xe.force_probe=!9a49"));
    EXPECT_EQ(line_of(out, "access-mmio").verdict, "warn");
    EXPECT_THAT(line_of(out, "access-perf").detail, HasSubstr("xe's observation stream"));
  }
  {
    FakeMachine m;
    m.pci("0000:00:02.0", "0x8086", id, "0x030000", "vfio-pci");
    const Line l = line_of(m.doctor().output, "driver");
    EXPECT_EQ(l.verdict, "fail");
    EXPECT_THAT(l.fix, HasSubstr("/sys/bus/pci/drivers/vfio-pci/unbind"));
  }
}

TEST(DoctorTest, DebugfsNotMountedWarnsWithMountCommand) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  fs::remove_all(m.root() / "debug/dri");
  const Line l = line_of(m.doctor().output, "forcewake");
  EXPECT_EQ(l.verdict, "warn");
  EXPECT_THAT(l.fix, HasSubstr("sudo mount -t debugfs none " + (m.root() / "debug").string()));
  EXPECT_THAT(l.fix, HasSubstr("--forcewake registers"));
}

TEST(DoctorTest, LockdownConfidentialityFails) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  m.write("sys/kernel/security/lockdown", "none integrity [confidentiality]");
  const auto r = m.doctor();
  const Line l = line_of(r.output, "lockdown");
  EXPECT_EQ(l.verdict, "fail") << r.output;
  EXPECT_THAT(l.detail, HasSubstr("'confidentiality'"));
  EXPECT_THAT(l.fix, HasSubstr("--access perf"));
  EXPECT_EQ(r.status, 1);
  m.write("sys/kernel/security/lockdown", "none [integrity] confidentiality");
  EXPECT_EQ(line_of(m.doctor().output, "lockdown").verdict, "fail");
}

TEST(DoctorTest, PerfStreamParanoidOneWarnsWithTheSysctl) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  m.write("proc/sys/dev/i915/perf_stream_paranoid", "1");
  const Line l = line_of(m.doctor().output, "perf-paranoid");
  EXPECT_EQ(l.verdict, "warn");
  EXPECT_THAT(l.fix, HasSubstr("sudo sysctl dev.i915.perf_stream_paranoid=0"));
  fs::remove(m.root() / "proc/sys/dev/i915/perf_stream_paranoid");
  EXPECT_EQ(line_of(m.doctor().output, "perf-paranoid").verdict, "skip");
}

TEST(DoctorTest, NoRaplWarnsWithEachBackendsReason) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  fs::remove_all(m.root() / "sys/class/powercap");
  const Line l = line_of(m.doctor().output, "energy");
  EXPECT_EQ(l.verdict, "warn");
  EXPECT_THAT(l.detail, HasSubstr("powercap: "));
  EXPECT_THAT(l.detail, HasSubstr("msr: "));
  // An integrated GPU has no hwmon of its own: it is neither tried nor mentioned.
  EXPECT_THAT(l.detail, ::testing::Not(HasSubstr("hwmon")));
  EXPECT_THAT(l.fix, HasSubstr("modprobe msr"));
}

TEST(DoctorTest, VirtualMachineWithPassthroughWarnsAboutRapl) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  m.write("sys/class/dmi/id/sys_vendor", "QEMU");
  const Line l = line_of(m.doctor().output, "virtualisation");
  EXPECT_EQ(l.verdict, "warn");
  EXPECT_THAT(l.detail, HasSubstr("QEMU"));
  EXPECT_THAT(l.detail, HasSubstr("passed through"));
}

TEST(DoctorTest, NoDaemonSocketGivesTheSystemctlFix) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  const Line l = line_of(m.doctor().output, "oaprofd");
  // Root profiles with sudo oaprof, so there the missing daemon is a warning.
  EXPECT_EQ(l.verdict, kRootOrFail);
  EXPECT_THAT(l.detail, HasSubstr("no socket at " + m.socket()));
  EXPECT_THAT(l.fix, HasSubstr("not running: sudo systemctl enable --now oaprofd.socket"));
}

TEST(DoctorTest, DaemonSocketComesFromTheEnvironment) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  m.listen_daemon();
  const auto r = m.doctor("", "OAPROF_DAEMON_SOCKET=" + m.socket());
  EXPECT_EQ(line_of(r.output, "oaprofd").verdict, "ok") << r.output;
  EXPECT_THAT(line_of(r.output, "oaprofd").detail, HasSubstr(m.socket()));
  // A socket file nobody listens on any more: the socket unit needs a restart.
  const std::string stale = (m.root() / "stale.sock").string();
  FakeMachine::stale_socket(stale);
  const Line l = line_of(m.doctor("--daemon-socket " + stale).output, "oaprofd");
  EXPECT_EQ(l.verdict, kRootOrFail);
  EXPECT_THAT(l.fix, HasSubstr("sudo systemctl restart oaprofd.socket"));
}

// The checks a user outside group oaprof trips over; root plays such a user with setpriv.
TEST(DoctorTest, UserOutsideGroupOaprofIsToldToJoinIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run oaprof doctor as nobody";
  if (run("command -v setpriv").status != 0) GTEST_SKIP() << "no setpriv (util-linux)";
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  m.listen_daemon();
  fs::permissions(m.socket(), fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(m.root() / "debug", fs::perms::owner_all);  // debugfs is root's alone
  const std::string as_nobody = "setpriv --reuid=nobody --regid=nogroup --clear-groups";
  const auto r = m.doctor("--daemon-socket " + m.socket(), as_nobody);
  const Line daemon = line_of(r.output, "oaprofd");
  EXPECT_EQ(daemon.verdict, "fail") << r.output;
  EXPECT_THAT(daemon.detail, HasSubstr("refuses you"));
  EXPECT_EQ(daemon.fix,
            "add yourself to group oaprof: sudo usermod -aG oaprof $USER, then log in again");
  const Line group = line_of(r.output, "group");
  EXPECT_EQ(group.verdict, "fail") << r.output;
  EXPECT_THAT(group.fix, ::testing::AnyOf(HasSubstr("systemd-sysusers"),
                                          HasSubstr("sudo usermod -aG oaprof $USER")));
  const Line forcewake = line_of(r.output, "forcewake");
  EXPECT_EQ(forcewake.verdict, "skip") << r.output;
  EXPECT_THAT(forcewake.fix, HasSubstr("sudo oaprof doctor"));
  EXPECT_EQ(r.status, 1);
  // Without a daemon, a user who is not root has no way in: a failure, not a warning.
  const auto none = m.doctor("--daemon-socket " + m.socket() + ".absent", as_nobody);
  EXPECT_EQ(line_of(none.output, "oaprofd").verdict, "fail") << none.output;
}

TEST(DoctorTest, OpenClLoaderAndPlatforms) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  const auto missing = m.doctor("--opencl-library liboaprof-no-such-opencl.so.1");
  EXPECT_EQ(line_of(missing.output, "opencl-loader").verdict, "fail") << missing.output;
  EXPECT_THAT(line_of(missing.output, "opencl-loader").fix, HasSubstr("ocl-icd-libopencl1"));

  // The real loader with an empty vendors directory finds no platform.
  fs::create_directories(m.root() / "vendors");
  const std::string base = std::string(OAPROF_BIN) + " doctor --sysfs-root " +
                           (m.root() / "sys").string() + " --proc-root " +
                           (m.root() / "proc").string() + " --daemon-socket " + m.socket();
  const auto none = run("OCL_ICD_VENDORS=" + (m.root() / "vendors").string() + " " + base);
  const Line l = line_of(none.output, "opencl-devices");
  if (line_of(none.output, "opencl-loader").verdict == "fail") {
    GTEST_SKIP() << "no OpenCL loader on this machine";
  }
  EXPECT_EQ(l.verdict, "fail") << none.output;
  EXPECT_THAT(l.fix, HasSubstr("intel-opencl-icd"));
}

TEST(DoctorTest, JsonListsEveryCheck) {
  FakeMachine m;
  m.pci("0000:00:02.0", "0x1af4", 0x1042, "0x018000", "virtio-pci");
  const auto r = m.doctor("--json");
  EXPECT_EQ(r.status, 1);
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_TRUE(j["failed"].get<bool>());
  std::vector<std::string> names;
  for (const auto& c : j["checks"]) names.push_back(c["check"].get<std::string>());
  EXPECT_THAT(
      names, ::testing::IsSupersetOf({"device", "driver", "forcewake", "lockdown", "perf-paranoid",
                                      "energy", "virtualisation", "opencl-loader", "opencl-devices",
                                      "oaprofd", "group"}));
  EXPECT_EQ(j["checks"][0]["verdict"], "fail");
  EXPECT_THAT(j["checks"][0]["fix"].get<std::string>(), HasSubstr("--device sim"));
}

// The topology and timestamp frequency oaprof would read at open: here no i915 answers (no
// render node; a render node that is not i915's), so doctor says it falls back to the table and
// that rows will be flagged, with how to let oaprof ask.
TEST(DoctorTopologyTest, WithoutAnI915ToAskItSaysItFallsBackToTheTable) {
  FakeMachine m;
  m.healthy(0x5916);  // Kaby Lake GT2: 24 EUs in the table
  Line topology = line_of(m.doctor().output, "topology");
  EXPECT_EQ(topology.verdict, "warn");
  EXPECT_THAT(topology.detail, HasSubstr("no DRM render node"));
  EXPECT_THAT(topology.detail, HasSubstr("platform table's 24 EUs"));
  EXPECT_THAT(topology.detail, HasSubstr("topology_from_table"));
  EXPECT_THAT(topology.fix, HasSubstr("render"));
  const Line timestamp = line_of(m.doctor().output, "timestamp");
  EXPECT_EQ(timestamp.verdict, "warn");
  EXPECT_THAT(timestamp.detail, HasSubstr("platform table's 12 MHz"));
  // A render node that is not i915's (a plain file here) is not asked either.
  std::filesystem::create_directories(m.root() / "sys/bus/pci/devices/0000:00:02.0/drm/renderD128");
  m.write("dev/dri/renderD128", "");
  topology = line_of(m.doctor().output, "topology");
  EXPECT_EQ(topology.verdict, "warn");
  EXPECT_THAT(topology.detail, HasSubstr("renderD128 is not driven by i915"));
}

// Through the simulator's i915, the same queries as on a real device: a fused part's 23 EUs, and
// the timestamp frequency from GETPARAM; without its i915, the table and the clock registers.
TEST(DoctorTopologyTest, ReportsWhatTheSimulatedI915Answers) {
  FakeMachine m;
  auto r = m.doctor("--device sim --sim-eus 23");
  Line topology = line_of(r.output, "topology");
  EXPECT_EQ(topology.verdict, "ok") << r.output;
  EXPECT_THAT(topology.detail, HasSubstr("23 EUs, 3 subslices in 1 slice"));
  EXPECT_THAT(topology.detail, HasSubstr("read from the i915 query (DRM_I915_QUERY_TOPOLOGY_INFO"));
  EXPECT_THAT(topology.detail, HasSubstr("KBL has 24: the rest are fused off"));
  Line timestamp = line_of(r.output, "timestamp");
  EXPECT_EQ(timestamp.verdict, "ok");
  EXPECT_THAT(timestamp.detail,
              HasSubstr("12 MHz, read from i915 (I915_PARAM_OA_TIMESTAMP_FREQUENCY"));
  r = m.doctor("--device sim --sim-no-i915");
  topology = line_of(r.output, "topology");
  EXPECT_EQ(topology.verdict, "warn") << r.output;
  EXPECT_THAT(topology.detail, HasSubstr("platform table's 24 EUs"));
  timestamp = line_of(r.output, "timestamp");
  EXPECT_EQ(timestamp.verdict, "ok");
  EXPECT_THAT(timestamp.detail, HasSubstr("12 MHz, read from the clock registers"));
  EXPECT_EQ(m.doctor("--device sim --sim-eus 99").status, 2);
}

// The read-outs a Gen12 or Xe-LPG part allows, and why not: lockdown (and root) for the BAR that
// mmio and rpc map, perf_stream_paranoid and root/CAP_PERFMON for perf; what rpc reports on
// Gen12+ (the OAG registers, B and C included); MTL's engine properties; GuC submission.
TEST(DoctorAccessTest, SaysWhichReadOutsAGen12OrXeLpgPartAllowsAndWhyNot) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));  // the simulated part replaces it
  m.write("sys/module/i915/parameters/enable_guc", "3");
  auto r = m.doctor("--device sim --sim-platform tglgt2");
  const bool root = ::geteuid() == 0;
  Line mmio = line_of(r.output, "access-mmio");
  Line rpc = line_of(r.output, "access-rpc");
  Line perf = line_of(r.output, "access-perf");
  EXPECT_EQ(mmio.verdict, root ? "ok" : "warn") << r.output;
  EXPECT_THAT(mmio.detail, HasSubstr("OAG_OACONTROL 0xDAF4"));
  EXPECT_THAT(rpc.detail, HasSubstr("MI_STORE_REGISTER_MEM"));
  EXPECT_THAT(rpc.detail, HasSubstr("A, B and C counters are all reported"));
  EXPECT_EQ(perf.verdict, "ok") << r.output;  // paranoid 0
  EXPECT_THAT(perf.detail, HasSubstr("GuC submission is on"));
  EXPECT_THAT(perf.detail, Not(HasSubstr("OA_ENGINE_CLASS")));

  m.write("sys/kernel/security/lockdown", "none [integrity] confidentiality");
  m.write("proc/sys/dev/i915/perf_stream_paranoid", "1");
  r = m.doctor("--device sim --sim-platform mtlgt2");
  mmio = line_of(r.output, "access-mmio");
  perf = line_of(r.output, "access-perf");
  EXPECT_EQ(mmio.verdict, "warn") << r.output;
  EXPECT_THAT(mmio.detail, HasSubstr("kernel lockdown 'integrity'"));
  EXPECT_THAT(mmio.fix, HasSubstr("--access perf"));
  EXPECT_THAT(perf.detail, HasSubstr("OA_ENGINE_CLASS/INSTANCE render 0"));
  if (!root) {  // the fake proc has no self/status: no CAP_PERFMON
    EXPECT_EQ(perf.verdict, "warn") << r.output;
    EXPECT_THAT(perf.detail, HasSubstr("perf_stream_paranoid is 1"));
    EXPECT_THAT(perf.fix, HasSubstr("dev.i915.perf_stream_paranoid=0"));
  }
  // Haswell: perf only.
  FakeMachine hsw;
  hsw.healthy(pci_id_of(oaprof::oa::Generation::kGen7_5));
  EXPECT_THAT(line_of(hsw.doctor().output, "access-rpc").fix, HasSubstr("--access perf"));
}

// DG2: doctor says what profiling does (issue 30): rpc's batch is softpinned there, as DG2's i915
// requires, so it is no longer refused whatever the machine; mmio is judged as on the iGPUs.
TEST(DoctorAccessTest, DoesNotRefuseRpcOnDg2) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));  // the simulated part replaces it
  const auto r = m.doctor("--device sim --sim-platform acmgt1");
  const Line rpc = line_of(r.output, "access-rpc");
  EXPECT_THAT(rpc.detail, ::testing::Not(HasSubstr("not on this part"))) << r.output;
  EXPECT_EQ(line_of(r.output, "access-mmio").verdict, ::geteuid() == 0 ? "ok" : "warn") << r.output;
}

// Lunar Lake (xe): the register read-outs are refused with the reason; perf is xe's stream,
// judged by dev.xe.observation_paranoid, not i915's sysctl.
TEST(DoctorAccessTest, AnXe2PartIsReadOnlyThroughXesStream) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  auto r = m.doctor("--device sim --sim-platform lnl");
  for (const char* access : {"access-mmio", "access-rpc"}) {
    const Line l = line_of(r.output, access);
    EXPECT_EQ(l.verdict, "warn") << r.output;
    EXPECT_THAT(l.detail, HasSubstr("xe drives it and owns its OA unit"));
    EXPECT_THAT(l.fix, HasSubstr("--access perf"));
  }
  // Its topology and clock come from xe's own queries, not the table.
  EXPECT_THAT(line_of(r.output, "topology").detail,
              HasSubstr("read from the xe query (simulated xe: GT 0)"));
  EXPECT_THAT(line_of(r.output, "timestamp").detail, HasSubstr("19.2 MHz, read from xe's OA unit"));
  // The engine timestamp xe snapshots are placed by answers.
  const Line clock = line_of(r.output, "engine-clock");
  EXPECT_EQ(clock.verdict, "ok") << r.output;
  EXPECT_THAT(clock.detail, HasSubstr("engine class 0 instance 0's 64-bit timestamp"));
  Line perf = line_of(r.output, "access-perf");
  EXPECT_EQ(perf.verdict, "warn") << r.output;
  EXPECT_THAT(perf.detail, HasSubstr("/proc/sys/dev/xe/observation_paranoid is absent"));
  m.write("proc/sys/dev/xe/observation_paranoid", "0");
  perf = line_of(m.doctor("--device sim --sim-platform lnl").output, "access-perf");
  EXPECT_EQ(perf.verdict, "ok");
  EXPECT_THAT(perf.detail, HasSubstr("xe_periodic"));
  // Tiger Lake under xe: a 36-bit engine clock places its snapshots; Meteor Lake's cannot.
  const auto clock_of = [&m](const char* part) {
    return line_of(m.doctor(std::string("--device sim --sim-platform ") + part).output,
                   "engine-clock");
  };
  const Line tgl = clock_of("tglgt2-xe");
  EXPECT_EQ(tgl.verdict, "ok");
  EXPECT_THAT(tgl.detail, HasSubstr("36-bit timestamp"));
  const Line mtl = clock_of("mtlgt2-xe");
  EXPECT_EQ(mtl.verdict, "warn");
  EXPECT_THAT(mtl.detail, HasSubstr("on Xe-LPG the OA unit's timestamp counts at a rate scaled"));
  EXPECT_THAT(mtl.fix, HasSubstr("have i915 drive it"));
}

// A discrete Battlemage under xe, profiled at its own address: the driver line says how oaprof
// reads it, and energy comes from the card's own sensors (xe's hwmon), not the CPU's RAPL.
TEST(DoctorTest, ADiscreteBattlemageIsReadThroughXeAndItsOwnSensors) {
  FakeMachine m;
  m.healthy(pci_id_of(oaprof::oa::Generation::kGen9));
  const std::string bmg = "0000:03:00.0";
  const auto platform = oaprof::oa::platform_by_name("bmg");
  ASSERT_TRUE(platform.has_value());
  std::uint16_t id = 0;
  for (const auto& known : oaprof::oa::known_pci_ids()) {
    if (known.platform->metrics_file == "bmg") id = known.device;
  }
  m.pci(bmg, "0x8086", id, "0x030000", "xe");
  const std::string hwmon = "sys/bus/pci/devices/" + bmg + "/hwmon/hwmon3/";
  m.write(hwmon + "name", "xe");
  m.write(hwmon + "energy1_label", "card");
  m.write(hwmon + "energy1_input", "1000");
  m.write(hwmon + "energy2_label", "pkg");
  m.write(hwmon + "energy2_input", "500");
  const auto r = m.doctor("--pci " + bmg);
  const Line driver = line_of(r.output, "driver");
  EXPECT_EQ(driver.verdict, "ok") << r.output;
  EXPECT_THAT(driver.detail, HasSubstr("--access perf"));
  const Line energy = line_of(r.output, "energy");
  EXPECT_EQ(energy.verdict, "ok") << r.output;
  EXPECT_THAT(energy.detail,
              HasSubstr("0000:03:00.0 is a discrete card: its own energy sensors are readable "
                        "through hwmon (gpu_card, gpu_pkg: xe hwmon3: energy1_input (the card)"));
  EXPECT_THAT(energy.detail, HasSubstr("RAPL is not used: its planes are the CPU package's"));
  // No render node here: the engine timestamp cannot be asked, and the line says what it costs.
  const Line clock = line_of(r.output, "engine-clock");
  EXPECT_EQ(clock.verdict, "warn") << r.output;
  EXPECT_THAT(clock.detail, HasSubstr("has no DRM render node"));
  EXPECT_THAT(clock.detail, HasSubstr("up to 5 ms of idle"));
  EXPECT_THAT(clock.fix, HasSubstr("render group"));
  // The integrated GPU of the same machine has no such sensors: RAPL, and no word of hwmon;
  // i915 drives it, so there is no engine-clock line either.
  const std::string igpu_output = m.doctor().output;
  const Line igpu = line_of(igpu_output, "energy");
  EXPECT_THAT(igpu.detail, HasSubstr("powercap (package)"));
  EXPECT_THAT(igpu.detail, ::testing::Not(HasSubstr("hwmon")));
  EXPECT_EQ(line_of(igpu_output, "engine-clock").verdict, "");
  // Without its sensors the card has no energy at all, however readable RAPL is: RAPL's planes
  // never include it.
  fs::remove_all(m.root() / hwmon);
  const Line none = line_of(m.doctor("--pci " + bmg).output, "energy");
  EXPECT_EQ(none.verdict, "warn");
  EXPECT_THAT(none.detail,
              HasSubstr("is a discrete card and its own energy sensors cannot be read"));
  EXPECT_THAT(none.detail, HasSubstr("no i915 or xe hwmon"));
  EXPECT_THAT(none.detail, ::testing::Not(HasSubstr("powercap")));
  EXPECT_THAT(none.fix, HasSubstr("--energy none"));
  // The simulator says which model its part's placement gets.
  EXPECT_THAT(line_of(m.doctor("--device sim --sim-platform bmg").output, "energy").detail,
              HasSubstr("a discrete card: --energy auto uses sim-hwmon"));
  EXPECT_THAT(line_of(m.doctor("--device sim").output, "energy").detail,
              HasSubstr("an integrated GPU: --energy auto uses sim (a simulated RAPL tree)"));
}

}  // namespace
