// The Debian package (deploy/debian, CPack's DEB generator) made from this build tree by the
// fixture package_build, unpacked into a scratch root with dpkg-deb and installed into another
// with `dpkg --root`: it holds everything a machine needs, its units name the packaged
// /usr/bin/oaprofd, its Depends were computed, its maintainer scripts create group oaprof and
// /run/oaprof, enable nothing and clean up on purge, and the installed oaprof profiles the
// installed kernel_runner with the installed layer and kernels. Skipped, saying why, without
// dpkg-deb.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>

#include "tests/common/run_util.h"

namespace {

namespace fs = std::filesystem;
using oaprof::testing::CommandResult;
using oaprof::testing::on_path;
using oaprof::testing::read_file;
using oaprof::testing::run;
using oaprof::testing::shell_quote;
using oaprof::testing::write_file;
using ::testing::HasSubstr;
using ::testing::Not;

std::string q(const fs::path& p) { return shell_quote(p.string()); }

// The value of field `key` in a DEBIAN/control file.
std::string control_field(const std::string& control, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(control, m, std::regex("(^|\n)" + key + ": ([^\n]*)"))) return {};
  return m[2].str();
}

class PackageTest : public ::testing::Test {
 protected:
  // The package the fixture package_build made (tests/integration/package_build.cmake),
  // unpacked into a directory of this process.
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("oaprof-package-test-" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    if (!on_path("dpkg-deb")) return;  // every test skips, saying why
    for (const auto& entry : fs::directory_iterator(OAPROF_PACKAGE_TEST_DIR, ec_)) {
      if (entry.path().extension() == ".deb") deb_ = new fs::path(entry.path());
    }
    if (deb_) {
      unpack_ = new CommandResult(run("dpkg-deb -x " + q(*deb_) + " " + q(*dir_ / "root") +
                                      " && dpkg-deb -e " + q(*deb_) + " " + q(*dir_ / "control")));
    }
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_, ec_);
    delete dir_;
    delete deb_;
    delete unpack_;
    dir_ = deb_ = nullptr;
    unpack_ = nullptr;
  }
  void SetUp() override {
    if (!on_path("dpkg-deb")) GTEST_SKIP() << "no dpkg-deb (Debian's dpkg) on PATH";
    ASSERT_TRUE(deb_) << "no .deb in " << OAPROF_PACKAGE_TEST_DIR
                      << ": the fixture package_build makes it (ctest -R 'package')";
    ASSERT_EQ(unpack_->status, 0) << unpack_->output;
  }

  static fs::path root() { return *dir_ / "root"; }
  static fs::path control(const std::string& file) { return *dir_ / "control" / file; }

  // Logging stand-ins for the tools a maintainer script may call, in a directory put first on
  // PATH; each appends its name and arguments to calls.log.
  static fs::path stub_tools(const std::string& name, std::initializer_list<const char*> tools) {
    const fs::path bin = *dir_ / name;
    for (const char* tool : tools) {
      write_file(bin / tool, "#!/bin/sh\necho \"" + std::string(tool) + " $*\" >> " +
                                 q(bin / "calls.log") + "\n");
      fs::permissions(bin / tool, fs::perms::owner_all);
    }
    write_file(bin / "calls.log", "");
    return bin;
  }

  static fs::path* dir_;
  static fs::path* deb_;
  static CommandResult* unpack_;
  static std::error_code ec_;
};

fs::path* PackageTest::dir_ = nullptr;
fs::path* PackageTest::deb_ = nullptr;
CommandResult* PackageTest::unpack_ = nullptr;
std::error_code PackageTest::ec_;

TEST_F(PackageTest, IsNamedByVersionAndArchitecture) {
  const auto arch = run("dpkg --print-architecture");
  ASSERT_EQ(arch.status, 0) << arch.output;
  EXPECT_EQ(deb_->filename().string(),
            "oaprof_" OAPROF_VERSION "_" + arch.output.substr(0, arch.output.find('\n')) + ".deb");
}

TEST_F(PackageTest, HoldsTheProgramsLayerKernelsUnitsAndDocs) {
  for (const char* file :
       {"usr/bin/oaprof", "usr/bin/oaprofd", "usr/bin/kernel_runner",
        "usr/lib/oaprof/liboaprof_layer.so", "usr/lib/oaprof/liboaprof_preload.so",
        "usr/lib/systemd/system/oaprofd.service", "usr/lib/systemd/system/oaprofd.socket",
        "usr/lib/udev/rules.d/70-oaprof.rules", "usr/lib/sysusers.d/oaprof.conf",
        "usr/lib/tmpfiles.d/oaprof.conf",
        "usr/share/oaprof/systemd/oaprofd.service.d/exporter.conf",
        "usr/share/man/man1/oaprof.1.gz", "usr/share/man/man1/kernel_runner.1.gz",
        "usr/share/man/man8/oaprofd.8.gz", "usr/share/doc/oaprof/copyright",
        "usr/share/doc/oaprof/changelog.gz"}) {
    EXPECT_TRUE(fs::is_regular_file(root() / file)) << file;
  }
  int kernels = 0;
  for (const auto& entry : fs::directory_iterator(OAPROF_KERNEL_SOURCE_DIR)) {
    if (entry.path().extension() != ".cl") continue;
    ++kernels;
    EXPECT_TRUE(fs::is_regular_file(root() / "usr/share/oaprof/kernels" / entry.path().filename()))
        << entry.path();
  }
  EXPECT_GT(kernels, 0);
  // Every file belongs to root, whoever built the package.
  const auto listing = run("dpkg-deb -c " + q(*deb_));
  ASSERT_EQ(listing.status, 0) << listing.output;
  std::istringstream lines(listing.output);
  int entries = 0;
  for (std::string mode, owner, rest; lines >> mode >> owner && std::getline(lines, rest);) {
    ++entries;
    EXPECT_EQ(owner, "root/root") << mode << " " << owner << rest;
  }
  EXPECT_GT(entries, 0) << listing.output;
}

// The units are configured at install time with the package's prefix: a build configured for
// /usr/local still packages units that start /usr/bin/oaprofd.
TEST_F(PackageTest, UnitsStartThePackagedOaprofd) {
  EXPECT_THAT(read_file(root() / "usr/lib/systemd/system/oaprofd.service"),
              HasSubstr("\nExecStart=/usr/bin/oaprofd "));
  EXPECT_THAT(read_file(root() / "usr/share/oaprof/systemd/oaprofd.service.d/exporter.conf"),
              HasSubstr("\nExecStart=/usr/bin/oaprofd "));
}

TEST_F(PackageTest, DependsAreComputedAndDriversRecommended) {
  const std::string fields = read_file(control("control"));
  // dpkg-shlibdeps gives each library's package with the least version the binaries need.
  EXPECT_TRUE(std::regex_search(control_field(fields, "Depends"), std::regex("libc6 \\(>= ")))
      << fields;
  EXPECT_THAT(control_field(fields, "Depends"), HasSubstr("ocl-icd-libopencl1"));
  EXPECT_THAT(control_field(fields, "Recommends"), HasSubstr("pocl-opencl-icd"));
  EXPECT_THAT(control_field(fields, "Suggests"), HasSubstr("libze1"));
  EXPECT_EQ(control_field(fields, "Version"), OAPROF_VERSION);
}

// `dpkg --root` installs the package into an empty root of its own and purges it again, running
// the maintainer scripts as it does for another root: not chrooted (the root has no shell) and
// with DPKG_ROOT set, so that the real systemd-sysusers and systemd-tmpfiles create group oaprof
// and /run/oaprof there, and nothing on this system is called. Depends are forced: the libraries
// are this system's, not the empty root's.
TEST_F(PackageTest, DpkgRootInstallCreatesGroupAndStateDirectoryAndPurgeRemovesThem) {
  for (const char* tool : {"dpkg", "systemd-sysusers", "systemd-tmpfiles"}) {
    if (!on_path(tool)) GTEST_SKIP() << "no " << tool << " on PATH";
  }
  // Files and /run/oaprof go to root, which only root (or a user namespace) may do.
  const std::string as_root = ::geteuid() == 0 ? "" : "unshare -Ur ";
  if (!as_root.empty() && run("unshare -Ur true").status != 0) {
    GTEST_SKIP() << "not root, and user namespaces are not available here (unshare -Ur)";
  }
  const fs::path target = *dir_ / "dpkg-root";
  fs::create_directories(target / "var/lib/dpkg/info");
  fs::create_directories(target / "var/lib/dpkg/updates");
  fs::create_directories(target / "etc");
  write_file(target / "var/lib/dpkg/status", "");
  const fs::path stubs = stub_tools(
      "stubs-root", {"systemctl", "deb-systemd-helper", "deb-systemd-invoke", "udevadm"});
  const std::string dpkg = as_root + "env PATH=" + q(stubs) +
                           ":\"$PATH\" dpkg --root=" + q(target) +
                           " --force-not-root --force-script-chrootless --force-depends"
                           " --log=/dev/null ";
  const auto installed = run(dpkg + "-i " + q(*deb_));
  ASSERT_EQ(installed.status, 0) << installed.output;
  EXPECT_TRUE(fs::is_regular_file(target / "usr/bin/oaprof"));
  EXPECT_TRUE(
      std::regex_search(read_file(target / "etc/group"), std::regex("(^|\n)oaprof:x:[0-9]+:")))
      << read_file(target / "etc/group");
  struct stat st {};
  ASSERT_EQ(::stat((target / "run/oaprof").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0755u);

  const auto purged = run(dpkg + "--purge oaprof");
  ASSERT_EQ(purged.status, 0) << purged.output;
  EXPECT_FALSE(fs::exists(target / "usr/bin/oaprof"));
  EXPECT_FALSE(fs::exists(target / "run/oaprof"));
  EXPECT_EQ(read_file(stubs / "calls.log"), "") << "a script for another root touched this system";
}

// The maintainer scripts on a running system, in a user and mount namespace whose /run is a
// tmpfs that says systemd and udev run; every tool they call is a logging stand-in.
TEST_F(PackageTest, ScriptsReloadStopAndPurgeButEnableNothing) {
  if (run("unshare -Urm true").status != 0) {
    GTEST_SKIP() << "user namespaces are not available here (unshare -Urm)";
  }
  const fs::path stubs =
      stub_tools("stubs-system", {"systemctl", "deb-systemd-helper", "deb-systemd-invoke",
                                  "udevadm", "systemd-sysusers", "systemd-tmpfiles"});
  const std::string script =
      "set -e; mount -t tmpfs none /run; mkdir -p /run/systemd/system /run/udev /run/oaprof; "
      "touch /run/oaprof/state; export PATH=" +
      q(stubs) + ":\"$PATH\"; sh " + q(control("postinst")) + " configure; sh " +
      q(control("prerm")) + " remove; sh " + q(control("postrm")) + " remove; sh " +
      q(control("postrm")) + " purge; if [ -e /run/oaprof ]; then echo /run/oaprof is left; fi";
  const auto r = run("unshare -Urm sh -c " + shell_quote(script));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("is left")));
  const std::string calls = read_file(stubs / "calls.log");
  EXPECT_EQ(calls,
            "systemd-sysusers oaprof.conf\n"
            "systemd-tmpfiles --create oaprof.conf\n"
            "udevadm control --reload\n"
            "systemctl --system daemon-reload\n"
            "deb-systemd-invoke stop oaprofd.socket oaprofd.service\n"
            "systemctl --system daemon-reload\n"
            "udevadm control --reload\n"
            "deb-systemd-helper purge oaprofd.socket oaprofd.service\n"
            "systemctl --system daemon-reload\n"
            "udevadm control --reload\n");
  EXPECT_THAT(calls, Not(HasSubstr("enable")));
  EXPECT_THAT(calls, Not(HasSubstr(" start")));
}

// Where systemd is missing (the Debian 12 image of deploy/kubernetes), postinst creates the group
// as its sysusers.d entry says, with groupadd, once: getent finds no group oaprof here. Only the
// stand-ins are on PATH, in a namespace whose /run is empty.
TEST_F(PackageTest, PostinstWithoutSystemdCreatesTheGroupWithGroupadd) {
  if (run("unshare -Urm true").status != 0) {
    GTEST_SKIP() << "user namespaces are not available here (unshare -Urm)";
  }
  const fs::path stubs = stub_tools("stubs-no-systemd", {"groupadd", "udevadm", "systemctl"});
  write_file(stubs / "getent", "#!/bin/sh\nexit 2\n");
  fs::permissions(stubs / "getent", fs::perms::owner_all);
  const std::string script = "mount -t tmpfs none /run && env -i PATH=" + q(stubs) + " /bin/sh " +
                             q(control("postinst")) + " configure";
  const auto r = run("unshare -Urm /bin/sh -c " + shell_quote(script));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_file(stubs / "calls.log"), "groupadd --system oaprof\n");
}

// The installed tools find the installed layer and kernels by their paths relative to
// /usr/bin, as they do in the build tree: the package's oaprof profiles the package's
// kernel_runner on the simulated GPU.
TEST_F(PackageTest, InstalledOaprofProfilesInstalledKernelRunner) {
  const fs::path work = *dir_ / "run";
  fs::create_directories(work);
  const auto r =
      run("cd " + q(work) +
          " && env -u OAPROF_LAYER -u OAPROF_KERNEL_DIR -u OAPROF_METRICS_PATH timeout 120 " +
          q(root() / "usr/bin/oaprof") + " --device sim -o rows.csv -- " +
          q(root() / "usr/bin/kernel_runner") + " mad_vect4");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = oaprof::testing::read_csv(work / "rows.csv");
  ASSERT_FALSE(rows.empty()) << r.output;
  EXPECT_EQ(rows.front().at("kernel"), "mad_vect4");
}

}  // namespace
