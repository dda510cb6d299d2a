// `cmake --install` into a staging tree (DESTDIR) holds everything a machine needs: the binaries,
// the layer and preload libraries, the kernels, oaprofd's units, the udev rule and the sysusers
// entry; the units pass `systemd-analyze verify`, the sysusers entry creates group oaprof, and
// the udev rule parses and tags an Intel display device, and only that, under `udevadm test`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <sstream>
#include <string>

#include "session/daemon_paths.h"
#include "tests/common/run_util.h"

namespace {

namespace fs = std::filesystem;
using oaprof::testing::on_path;
using oaprof::testing::read_file;
using oaprof::testing::run;
using oaprof::testing::shell_quote;
using oaprof::testing::write_file;
using ::testing::HasSubstr;
using ::testing::Not;

// A relative install directory is relative to the prefix (this tree's, or another given to
// `cmake --install`), as install(DESTINATION) has it.
fs::path full_dir(const std::string& dir, const fs::path& prefix = OAPROF_INSTALL_PREFIX) {
  const fs::path p(dir);
  return p.is_absolute() ? p : prefix / p;
}

// Where `installed` (an absolute path on the target machine) lies in the staging tree.
fs::path staged(const fs::path& destdir, const fs::path& installed) {
  return destdir / installed.relative_path();
}

bool executable(const fs::path& p) {
  return fs::is_regular_file(p) && ::access(p.c_str(), X_OK) == 0;
}

// The value of the first `key=` line of a unit file.
std::string unit_value(const std::string& unit, const std::string& key) {
  std::istringstream in(unit);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  }
  return {};
}

class InstallTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    destdir_ = new fs::path(fs::temp_directory_path() /
                            ("oaprof-install-test-" + std::to_string(::getpid())));
    fs::remove_all(*destdir_);
    // Every install() of the project is in the default component, "Unspecified". Naming it
    // makes cmake write install_manifest_Unspecified.txt, and leaves alone the
    // install_manifest.txt of a real `sudo cmake --install`, which uninstalling reads.
    install_ = new oaprof::testing::CommandResult(
        run("DESTDIR=" + shell_quote(destdir_->string()) + " " + shell_quote(CMAKE_COMMAND_PATH) +
            " --install " + shell_quote(OAPROF_BUILD_DIR) + " --component Unspecified"));
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*destdir_, ec);
    delete destdir_;
    delete install_;
    destdir_ = nullptr;
    install_ = nullptr;
  }
  void SetUp() override { ASSERT_EQ(install_->status, 0) << install_->output; }

  static fs::path bin(const std::string& name) {
    return staged(*destdir_, fs::path(OAPROF_INSTALL_FULL_BINDIR) / name);
  }
  static fs::path unit(const std::string& name) {
    return staged(*destdir_, full_dir(OAPROF_SYSTEMD_UNIT_DIR) / name);
  }
  static fs::path udev_rule() {
    return staged(*destdir_, full_dir(OAPROF_UDEV_RULES_DIR) / "70-oaprof.rules");
  }
  static fs::path sysusers() {
    return staged(*destdir_, full_dir(OAPROF_SYSUSERS_DIR) / "oaprof.conf");
  }

  static fs::path* destdir_;
  static oaprof::testing::CommandResult* install_;
};

fs::path* InstallTest::destdir_ = nullptr;
oaprof::testing::CommandResult* InstallTest::install_ = nullptr;

TEST_F(InstallTest, StagesProgramsLayerAndKernels) {
  EXPECT_TRUE(executable(bin("oaprof"))) << bin("oaprof");
  EXPECT_TRUE(executable(bin("kernel_runner"))) << bin("kernel_runner");
  const fs::path lib = staged(*destdir_, full_dir(OAPROF_INSTALL_LIBDIR) / "oaprof");
  EXPECT_TRUE(fs::is_regular_file(lib / "liboaprof_layer.so")) << lib;
  EXPECT_TRUE(fs::is_regular_file(lib / "liboaprof_preload.so")) << lib;
  // Every kernel source of the tree, whatever the list in kernels/CMakeLists.txt says.
  const fs::path kernels = staged(*destdir_, full_dir(OAPROF_INSTALL_DATADIR) / "oaprof/kernels");
  int sources = 0;
  for (const auto& entry : fs::directory_iterator(OAPROF_KERNEL_SOURCE_DIR)) {
    if (entry.path().extension() != ".cl") continue;
    ++sources;
    EXPECT_TRUE(fs::is_regular_file(kernels / entry.path().filename())) << entry.path();
  }
  EXPECT_GT(sources, 0);
}

TEST_F(InstallTest, StagesOaprofd) {
  if (!OAPROF_HAS_OAPROFD) GTEST_SKIP() << "this tree has no oaprofd target yet";
  EXPECT_TRUE(executable(bin("oaprofd"))) << bin("oaprofd");
}

TEST_F(InstallTest, StagesUnitsRuleAndSysusersEntry) {
  EXPECT_TRUE(fs::is_regular_file(unit("oaprofd.service"))) << unit("oaprofd.service");
  EXPECT_TRUE(fs::is_regular_file(unit("oaprofd.socket"))) << unit("oaprofd.socket");
  EXPECT_TRUE(fs::is_regular_file(udev_rule())) << udev_rule();
  EXPECT_TRUE(fs::is_regular_file(sysusers())) << sysusers();
}

TEST_F(InstallTest, ServiceStartsTheInstalledOaprofd) {
  const std::string service = read_file(unit("oaprofd.service"));
  const std::string exec = unit_value(service, "ExecStart");
  const std::string program = exec.substr(0, exec.find(' '));
  EXPECT_EQ(program, (fs::path(OAPROF_INSTALL_FULL_BINDIR) / "oaprofd").string());
  EXPECT_THAT(service, Not(HasSubstr("@CMAKE_"))) << "an unconfigured variable is left";
  if (OAPROF_HAS_OAPROFD) {
    EXPECT_TRUE(executable(staged(*destdir_, program))) << program;
  }
}

// The units are written when installed: another prefix given to `cmake --install` (as CPack's
// /usr for the Debian package) is the one their ExecStart names.
TEST_F(InstallTest, UnitsNameTheOaprofdOfTheInstallsPrefix) {
  const fs::path prefix = *destdir_ / "other-prefix";
  const auto r =
      run(shell_quote(CMAKE_COMMAND_PATH) + " --install " + shell_quote(OAPROF_BUILD_DIR) +
          " --component Unspecified --prefix " + shell_quote(prefix.string()));
  ASSERT_EQ(r.status, 0) << r.output;
  const fs::path unit_dir = full_dir(OAPROF_SYSTEMD_UNIT_DIR, prefix);
  const std::string exec = unit_value(read_file(unit_dir / "oaprofd.service"), "ExecStart");
  EXPECT_EQ(exec.substr(0, exec.find(' ')), (prefix / "bin/oaprofd").string());
}

// Installs side by side into different trees (these tests under `ctest -j`, CPack beside them)
// each get their own units. The units script configured them in one directory of the build tree,
// and eight at a time for six rounds, a sixth of them failed in configure_file (its temporary
// file taken away by another install), as one did in CI.
TEST_F(InstallTest, UnitsInstalledSideBySideIntoDifferentTreesAllSucceed) {
  const fs::path root = *destdir_ / "side-by-side";
  fs::create_directories(root);
  const char* script = R"(cmake=$1 units=$2 root=$3 failed=0
for round in 1 2 3 4 5 6; do
  pids=
  for i in 1 2 3 4 5 6 7 8; do
    DESTDIR="$root/$round-$i" "$cmake" -DCMAKE_INSTALL_PREFIX=/usr -P "$units" \
      >"$root/$round-$i.log" 2>&1 &
    pids="$pids $!"
  done
  for pid in $pids; do wait "$pid" || failed=$((failed + 1)); done
done
echo "failed: $failed"
for log in "$root"/*.log; do grep -q 'CMake Error' "$log" && cat "$log"; done
exit 0)";
  const auto r = run("sh -c " + shell_quote(script) + " sh " + shell_quote(CMAKE_COMMAND_PATH) +
                     " " + shell_quote(OAPROF_UNITS_SCRIPT) + " " + shell_quote(root.string()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("failed: 0\n")) << r.output;
  const fs::path unit_dir = full_dir(OAPROF_SYSTEMD_UNIT_DIR, "/usr");
  for (int round = 1; round <= 6; ++round) {
    for (int i = 1; i <= 8; ++i) {
      const fs::path tree = root / (std::to_string(round) + "-" + std::to_string(i));
      const std::string service = read_file(staged(tree, unit_dir / "oaprofd.service"));
      const std::string exec = unit_value(service, "ExecStart");
      EXPECT_EQ(exec.substr(0, exec.find(' ')), "/usr/bin/oaprofd") << tree;
    }
  }
}

TEST_F(InstallTest, SocketIsForGroupOaprofOnly) {
  const std::string socket = read_file(unit("oaprofd.socket"));
  // Where clients look by default, and the group oaprofd admits by default.
  EXPECT_EQ(unit_value(socket, "ListenSequentialPacket"), oaprof::session::kDefaultDaemonSocket);
  EXPECT_EQ(unit_value(socket, "SocketGroup"), oaprof::session::kDefaultDaemonGroup);
  EXPECT_EQ(unit_value(socket, "SocketMode"), "0660");
}

// systemd-analyze checks that ExecStart's program exists, and the staged one is not at its
// installed path yet: the checks read a copy of the service that names the staged program and is
// otherwise unchanged. Returns the copy's directory, which also holds the socket.
fs::path verifiable_units(const fs::path& destdir, const fs::path& service_file,
                          const fs::path& socket_file, const fs::path& program,
                          const std::string& extra = "") {
  const fs::path dir = destdir / "verify";
  const std::string installed = (fs::path(OAPROF_INSTALL_FULL_BINDIR) / "oaprofd").string();
  std::string copy = read_file(service_file);
  const auto at = copy.find("ExecStart=" + installed);
  EXPECT_NE(at, std::string::npos) << copy;
  if (at != std::string::npos) copy.replace(at + 10, installed.size(), program.string());
  write_file(dir / "oaprofd.service", copy + extra);
  fs::copy_file(socket_file, dir / "oaprofd.socket", fs::copy_options::overwrite_existing);
  return dir;
}

TEST_F(InstallTest, SystemdAnalyzeVerifiesTheUnits) {
  if (!on_path("systemd-analyze")) {
    GTEST_SKIP() << "no systemd-analyze (Debian's systemd package) on PATH";
  }
  // Before oaprofd exists in this tree, any staged program stands in for it.
  const fs::path program = OAPROF_HAS_OAPROFD ? bin("oaprofd") : bin("oaprof");
  const auto verify = [&](const std::string& extra) {
    const fs::path dir = verifiable_units(*destdir_, unit("oaprofd.service"),
                                          unit("oaprofd.socket"), program, extra);
    return run("systemd-analyze verify --man=no " +
               shell_quote((dir / "oaprofd.service").string()) + " " +
               shell_quote((dir / "oaprofd.socket").string()));
  };
  const auto good = verify("");
  EXPECT_EQ(good.status, 0) << good.output;
  EXPECT_EQ(good.output, "") << "systemd-analyze warns about the units";
  // The same check notices a mistake: a misspelt key is reported (and ignored by systemd).
  EXPECT_THAT(verify("ProtectSytem=strict\n").output, HasSubstr("ProtectSytem"));
}

// systemd-analyze's overall exposure level of the oaprofd.service in `dir`; nullopt (after saying
// why) when it gives none.
std::optional<double> exposure_level(const fs::path& dir) {
  const auto r = run("systemd-analyze security --offline=true --no-pager " +
                     shell_quote((dir / "oaprofd.service").string()));
  std::smatch m;
  if (!std::regex_search(r.output, m,
                         std::regex("Overall exposure level for oaprofd.service: ([0-9.]+)"))) {
    ADD_FAILURE() << r.output;
    return std::nullopt;
  }
  return std::stod(m[1].str());
}

// The exporter's opt-in drop-in, appended to the service as systemd would merge it: still a
// valid unit, and its network (TCP on loopback) keeps the exposure low.
TEST_F(InstallTest, TheExportersDropInIsInstalledAndKeepsTheServiceConfined) {
  const fs::path dropin = staged(*destdir_, full_dir(OAPROF_INSTALL_DATADIR) /
                                                "oaprof/systemd/oaprofd.service.d/exporter.conf");
  ASSERT_TRUE(fs::is_regular_file(dropin)) << dropin;
  std::string text = read_file(dropin);
  EXPECT_THAT(text, HasSubstr("--metrics-listen 127.0.0.1:9464"));
  if (!on_path("systemd-analyze")) {
    GTEST_SKIP() << "no systemd-analyze (Debian's systemd package) on PATH";
  }
  const fs::path program = OAPROF_HAS_OAPROFD ? bin("oaprofd") : bin("oaprof");
  const std::string installed = (fs::path(OAPROF_INSTALL_FULL_BINDIR) / "oaprofd").string();
  for (auto at = text.find(installed); at != std::string::npos;
       at = text.find(installed, at + program.string().size())) {
    text.replace(at, installed.size(), program.string());
  }
  const fs::path dir =
      verifiable_units(*destdir_, unit("oaprofd.service"), unit("oaprofd.socket"), program, text);
  const auto verified =
      run("systemd-analyze verify --man=no " + shell_quote((dir / "oaprofd.service").string()) +
          " " + shell_quote((dir / "oaprofd.socket").string()));
  EXPECT_EQ(verified.status, 0) << verified.output;
  const auto exposure = exposure_level(dir);
  ASSERT_TRUE(exposure);
  EXPECT_LT(*exposure, 2.5);
}

TEST_F(InstallTest, SystemdRatesTheServiceExposureLow) {
  if (!on_path("systemd-analyze")) {
    GTEST_SKIP() << "no systemd-analyze (Debian's systemd package) on PATH";
  }
  const fs::path program = OAPROF_HAS_OAPROFD ? bin("oaprofd") : bin("oaprof");
  const fs::path dir =
      verifiable_units(*destdir_, unit("oaprofd.service"), unit("oaprofd.socket"), program);
  const auto exposure = exposure_level(dir);
  ASSERT_TRUE(exposure);
  // systemd's scale runs from 0 (confined) to 10 (unconfined); losing one of the unit's
  // protections pushes this root daemon with raw I/O past 2, where systemd stops calling it OK.
  EXPECT_LT(*exposure, 2.0);
}

// The staged oaprofd, started the way oaprofd.socket starts it (the listening socket passed as
// fd 3) and confined to the unit's capability bounding set with no new privileges, serves a whole
// profile of the staged kernel_runner by the staged oaprof on the simulated device.
TEST_F(InstallTest, StagedOaprofdServesAProfileWithTheUnitsCapabilities) {
  if (!OAPROF_HAS_OAPROFD) GTEST_SKIP() << "this tree has no oaprofd target yet";
  if (::geteuid() != 0) GTEST_SKIP() << "shrinking the capability bounding set needs root";
  for (const char* tool : {"systemd-socket-activate", "setpriv"}) {
    if (!on_path(tool)) GTEST_SKIP() << "no " << tool << " on PATH";
  }
  // "CAP_SYS_RAWIO CAP_PERFMON" → "-all,+sys_rawio,+perfmon", as setpriv spells it.
  std::istringstream caps(unit_value(read_file(unit("oaprofd.service")), "CapabilityBoundingSet"));
  std::string bounding = "-all", cap;
  while (caps >> cap) {
    std::transform(cap.begin(), cap.end(), cap.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    bounding += ",+" + cap.substr(4);
  }
  const fs::path dir = *destdir_ / "activated";
  fs::create_directories(dir);
  const std::string socket = (dir / "oaprofd.sock").string();
  const std::string daemon =
      "systemd-socket-activate --seqpacket -l " + shell_quote(socket) +
      " setpriv --bounding-set=" + bounding + " --inh-caps=-all --no-new-privs " +
      shell_quote(bin("oaprofd").string()) + " --device sim --group oaprof --state-dir " +
      shell_quote((dir / "state").string()) + " > " + shell_quote((dir / "daemon.log").string()) +
      " 2>&1 & echo $!";
  const auto started = run(daemon);
  ASSERT_EQ(started.status, 0) << started.output;
  const std::string pid = started.output.substr(0, started.output.find('\n'));
  for (int i = 0; i < 100 && !fs::exists(socket); ++i) ::usleep(20000);
  const auto r = run("cd " + shell_quote(dir.string()) + " && POCL_CACHE_DIR=" +
                     shell_quote(std::string(OAPROF_BUILD_DIR) + "/pocl-cache") +
                     " OAPROF_DAEMON_SOCKET=" + shell_quote(socket) + " timeout 120 " +
                     shell_quote(bin("oaprof").string()) + " --daemon always -o rows.csv -- " +
                     shell_quote(bin("kernel_runner").string()) + " mad_vect4");
  run("kill " + pid);
  const std::string log = read_file(dir / "daemon.log");
  EXPECT_EQ(r.status, 0) << r.output << "\ndaemon:\n" << log;
  EXPECT_THAT(log, HasSubstr("Execing setpriv")) << "the socket never started oaprofd";
  std::ifstream csv(dir / "rows.csv");
  int lines = 0;
  for (std::string line; std::getline(csv, line);) ++lines;
  EXPECT_GE(lines, 2) << "no launch rows: " << r.output;
}

TEST_F(InstallTest, SysusersEntryCreatesGroupOaprof) {
  if (!on_path("systemd-sysusers")) GTEST_SKIP() << "no systemd-sysusers on PATH";
  const fs::path root = *destdir_ / "sysusers-root";
  fs::create_directories(root / "etc");
  const auto r = run("systemd-sysusers --root=" + shell_quote(root.string()) + " " +
                     shell_quote(sysusers().string()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(
      std::regex_search(read_file(root / "etc/group"), std::regex("(^|\n)oaprof:x:[0-9]+:")))
      << read_file(root / "etc/group");
}

// Runs `udevadm test` on a real PCI device whose vendor and class files are replaced, inside a
// private user and mount namespace: the staged rule is the only rule file udev sees, and /run is
// a private tmpfs, so the udev database of the machine is never written.
class UdevRuleTest : public InstallTest {
 protected:
  void SetUp() override {
    InstallTest::SetUp();
    if (!on_path("udevadm")) GTEST_SKIP() << "no udevadm (Debian's udev package) on PATH";
    if (run("unshare -Urm true").status != 0) {
      GTEST_SKIP() << "user namespaces are not available here (unshare -Urm)";
    }
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/sys/bus/pci/devices", ec)) {
      device_ = fs::canonical(entry.path());
      break;
    }
    if (device_.empty()) GTEST_SKIP() << "no PCI device in /sys to stand in for a GPU";
    dir_ = *destdir_ / "udev";
    fs::create_directories(dir_ / "rules");
    fs::create_directories(dir_ / "empty");
    fs::copy_file(udev_rule(), dir_ / "rules/70-oaprof.rules",
                  fs::copy_options::overwrite_existing);
    write_file(dir_ / "test.sh", R"(set -e
dir=$1 dev=$2
mount -t tmpfs none /run
for d in /etc/udev/rules.d /usr/local/lib/udev/rules.d /lib/udev/rules.d; do
  if [ -d "$d" ]; then mount --bind "$dir/empty" "$d"; fi
done
mount --bind "$dir/rules" /usr/lib/udev/rules.d
echo "$3" > "$dir/vendor"; echo "$4" > "$dir/class"
mount --bind "$dir/vendor" "$dev/vendor"
mount --bind "$dir/class" "$dev/class"
exec udevadm test --action=add "$dev"
)");
    // Some sandboxes refuse mounts over sysfs even in a namespace of one's own.
    write_file(dir_ / "probe", "0x8086\n");
    const auto probe = run("unshare -Urm mount --bind " + shell_quote((dir_ / "probe").string()) +
                           " " + shell_quote((device_ / "vendor").string()));
    if (probe.status != 0) {
      GTEST_SKIP() << "cannot bind-mount over " << device_
                   << " in a user namespace: " << probe.output;
    }
  }

  // udevadm test's output for the device posing as vendor:class.
  oaprof::testing::CommandResult udev_test(const std::string& vendor, const std::string& cls) {
    return run("unshare -Urm sh " + shell_quote((dir_ / "test.sh").string()) + " " +
               shell_quote(dir_.string()) + " " + shell_quote(device_.string()) + " " + vendor +
               " " + cls);
  }

  fs::path device_;
  fs::path dir_;
};

TEST_F(UdevRuleTest, ParsesWithoutDiagnostics) {
  const auto r = udev_test("0x8086", "0x030000");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Reading rules file: /usr/lib/udev/rules.d/70-oaprof.rules"));
  // udev prefixes every complaint about a rule with "FILE:LINE ".
  EXPECT_THAT(r.output, Not(HasSubstr("70-oaprof.rules:"))) << r.output;

  // A rule udev does not understand is reported that way, so the check above can fail.
  write_file(
      dir_ / "rules/70-oaprof.rules",
      read_file(udev_rule()) + "SUBSYSTEM==\"pci\", ATTR{vendor}=\"0x8086\", BADKEY==\"1\"\n");
  EXPECT_THAT(udev_test("0x8086", "0x030000").output, HasSubstr("70-oaprof.rules:"));
}

TEST_F(UdevRuleTest, TagsAnIntelDisplayDeviceAndWantsOaprofd) {
  for (const char* cls : {"0x030000", "0x038000"}) {
    const auto r = udev_test("0x8086", cls);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(std::regex_search(r.output, std::regex("\nTAGS=.*:systemd:"))) << cls << r.output;
    EXPECT_TRUE(std::regex_search(r.output, std::regex("\nTAGS=.*:oaprof-gpu:"))) << cls;
    EXPECT_THAT(r.output, HasSubstr("\nSYSTEMD_WANTS=oaprofd.service\n")) << cls;
    EXPECT_THAT(r.output, HasSubstr("\nOAPROF_GPU=1\n")) << cls;
  }
}

TEST_F(UdevRuleTest, LeavesOtherDevicesAlone) {
  // A virtio disk where the iGPU usually is, and an Intel device that is not a display.
  for (const auto& [vendor, cls] :
       {std::pair{"0x1af4", "0x018000"}, {"0x8086", "0x060000"}, {"0x10de", "0x030000"}}) {
    const auto r = udev_test(vendor, cls);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, Not(HasSubstr("oaprof-gpu"))) << vendor << " " << cls;
    EXPECT_THAT(r.output, Not(HasSubstr("SYSTEMD_WANTS"))) << vendor << " " << cls;
    EXPECT_THAT(r.output, Not(HasSubstr("OAPROF_GPU"))) << vendor << " " << cls;
  }
}

}  // namespace
