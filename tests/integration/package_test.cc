// The Debian package (deploy/debian, CPack's DEB generator) made from this build tree by the
// fixture package_build, unpacked into a scratch root with dpkg-deb and installed into another
// with `dpkg --root`: it holds everything a machine needs, its units name the packaged
// /usr/bin/oaprofd, its Depends were computed, its maintainer scripts create group oaprof and
// /run/oaprof, enable nothing and clean up on purge, and the installed oaprof profiles the
// installed kernel_runner with the installed layer and kernels, and every program and library in
// it was built with Debian's hardening flags. Skipped, saying why, without dpkg-deb.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

// What the headers of an ELF file say of its hardening, as readelf (binutils) prints them.
struct ElfHardening {
  bool program = false;           // has a program interpreter (PT_INTERP); a library has none
  bool pie = false;               // ET_DYN with DF_1_PIE in DT_FLAGS_1
  bool relro = false;             // a PT_GNU_RELRO segment
  bool bind_now = false;          // DT_BIND_NOW, DF_BIND_NOW or DF_1_NOW
  std::set<std::string> imports;  // undefined dynamic symbols, without their versions
  std::set<std::string> exports;  // defined dynamic symbols, without their versions
  std::string error;              // readelf's output where it failed
};

// One line of `readelf --dyn-syms`: "N: value size type bind visibility index name[@version]".
struct DynamicSymbol {
  std::string type, index, name;
};

std::optional<DynamicSymbol> parse_dynamic_symbol(const std::string& line) {
  std::istringstream fields(line);
  std::string number, value, size, bind, visibility;
  DynamicSymbol symbol;
  if (!(fields >> number >> value >> size >> symbol.type >> bind >> visibility >> symbol.index >>
        symbol.name) ||
      number.back() != ':') {
    return std::nullopt;
  }
  symbol.name = symbol.name.substr(0, symbol.name.find('@'));
  return symbol;
}

ElfHardening read_elf_hardening(const fs::path& file) {
  ElfHardening elf;
  const auto r =
      run("LC_ALL=C readelf --file-header --program-headers --dynamic --dyn-syms -W " + q(file));
  if (r.status != 0) elf.error = r.output;
  const std::regex flag_now(R"(\((FLAGS|FLAGS_1)\).*\b(BIND_NOW|NOW)\b)");
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string first, second;
    words >> first >> second;
    if (first == "INTERP") elf.program = true;
    if (first == "GNU_RELRO") elf.relro = true;
    if (second == "(BIND_NOW)" ||
        ((second == "(FLAGS)" || second == "(FLAGS_1)") && std::regex_search(line, flag_now))) {
      elf.bind_now = true;
    }
    if (second == "(FLAGS_1)" && line.find(" PIE") != std::string::npos) elf.pie = true;
    const auto symbol = parse_dynamic_symbol(line);
    if (symbol && symbol->index == "UND") elf.imports.insert(symbol->name);
    if (symbol && symbol->index != "UND") elf.exports.insert(symbol->name);
  }
  return elf;
}

// The functions glibc has a fortified __NAME_chk variant of, from the libc this test runs with:
// a program that calls one of them unchecked and none checked was not built with FORTIFY (the
// rule of lintian's hardening-no-fortify-functions). Like lintian, it leaves out the mem* family:
// a file whose every memcpy has a size the compiler cannot know calls none checked, FORTIFY or
// not.
std::set<std::string> fortifiable_functions() {
  Dl_info libc{};
  if (::dladdr(reinterpret_cast<void*>(&::getpid), &libc) == 0 || !libc.dli_fname) return {};
  const auto r = run("LC_ALL=C readelf --dyn-syms -W " + q(libc.dli_fname));
  const std::regex checked_variant("__(\\w+)_chk");
  std::set<std::string> functions;
  std::istringstream lines(r.output);
  std::smatch m;
  for (std::string line; std::getline(lines, line);) {
    const auto symbol = parse_dynamic_symbol(line);
    if (!symbol || symbol->index == "UND" || symbol->type.find("FUNC") == std::string::npos) {
      continue;  // FUNC or IFUNC (memcpy's is chosen by the CPU) that libc defines
    }
    if (std::regex_match(symbol->name, m, checked_variant)) functions.insert(m[1].str());
  }
  for (const char* unknowable : {"memcpy", "memmove", "memset", "wmemcpy", "wmemmove", "wmemset"}) {
    functions.erase(unknowable);
  }
  return functions;
}

// Every ELF file under `root`, relative to it.
std::vector<fs::path> elf_files(const fs::path& root) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.is_symlink()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    char magic[4] = {};
    if (in.read(magic, sizeof magic) && std::string(magic, sizeof magic) == "\177ELF") {
      files.push_back(fs::relative(entry.path(), root));
    }
  }
  return files;
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

// oaprof and oaprofd run as root: every program and library the package ships is built as
// Debian's dpkg-buildflags with hardening=+all builds its own (cmake/hardening.cmake). Programs
// are position-independent (ASLR for their code); all of them resolve every symbol at load and
// then make their relocations read-only (-z relro -z now: no GOT to overwrite).
TEST_F(PackageTest, EveryProgramIsPositionIndependentAndEveryElfFileBindsNowWithRelro) {
  if (!on_path("readelf")) GTEST_SKIP() << "no readelf (binutils) on PATH";
  const auto files = elf_files(root());
  EXPECT_THAT(files,
              ::testing::IsSupersetOf({fs::path("usr/bin/oaprof"), fs::path("usr/bin/oaprofd"),
                                       fs::path("usr/bin/kernel_runner"),
                                       fs::path("usr/lib/oaprof/liboaprof_layer.so"),
                                       fs::path("usr/lib/oaprof/liboaprof_preload.so")}));
  for (const auto& file : files) {
    const ElfHardening elf = read_elf_hardening(root() / file);
    ASSERT_EQ(elf.error, "") << file;
    if (file.parent_path() == "usr/bin") {
      EXPECT_TRUE(elf.program) << file;
    }
    if (elf.program) {
      EXPECT_TRUE(elf.pie) << file << " is not a PIE";
    }
    EXPECT_TRUE(elf.relro) << file << " has no GNU_RELRO segment (-Wl,-z,relro)";
    EXPECT_TRUE(elf.bind_now) << file << " is not BIND_NOW (-Wl,-z,now)";
  }
}

// Stack buffers are guarded by a canary (-fstack-protector-strong: __stack_chk_fail), and calls
// whose buffer sizes the compiler knows go through glibc's checked variants (-D_FORTIFY_SOURCE=2:
// __memcpy_chk, __snprintf_chk, ...) wherever the code calls a function that has one.
TEST_F(PackageTest, EveryElfFileIsStackProtectedAndFortified) {
  if (!on_path("readelf")) GTEST_SKIP() << "no readelf (binutils) on PATH";
  const std::set<std::string> fortifiable = fortifiable_functions();
  ASSERT_THAT(fortifiable, ::testing::IsSupersetOf({"snprintf", "fprintf", "read"}))
      << "glibc's __*_chk functions were not found";
  const std::regex checked_name("__(\\w+)_chk");
  const auto files = elf_files(root());
  ASSERT_FALSE(files.empty());
  std::size_t fortified = 0;
  for (const auto& file : files) {
    const ElfHardening elf = read_elf_hardening(root() / file);
    ASSERT_EQ(elf.error, "") << file;
    EXPECT_TRUE(elf.imports.count("__stack_chk_fail")) << file << " has no stack protector";
    std::string unchecked, checked;
    std::smatch m;
    for (const auto& symbol : elf.imports) {
      if (fortifiable.count(symbol)) unchecked += " " + symbol;
      if (std::regex_match(symbol, m, checked_name) && fortifiable.count(m[1].str())) {
        checked += " " + symbol;
      }
    }
    EXPECT_TRUE(unchecked.empty() || !checked.empty())
        << file << " calls" << unchecked << " and none of their checked variants: not fortified";
    if (!checked.empty()) ++fortified;
  }
  EXPECT_GT(fortified, 0u) << "no file calls a checked variant";
}

// A library oaprof loads into the profiled program exports its entry points and nothing of
// oaprof's own code: with both an OpenCL and a Level Zero library in one program, exported
// copies of the static libraries they share bound one library's calls to the other's.
TEST_F(PackageTest, InjectedLibrariesExportTheirEntryPointsOnly) {
  if (!on_path("readelf")) GTEST_SKIP() << "no readelf (binutils) on PATH";
  const std::map<std::string, std::string> entry_points = {
      {"liboaprof_layer.so", "clInitLayer"},
      {"liboaprof_preload.so", "clEnqueueNDRangeKernel"},
      {"liboaprof_ze_layer.so", "zeInit"},
      {"liboaprof_ze_preload.so", "zeCommandListAppendLaunchKernel"}};
  int seen = 0;
  for (const auto& file : elf_files(root())) {
    const auto entry = entry_points.find(file.filename().string());
    if (entry == entry_points.end()) continue;
    ++seen;
    const ElfHardening elf = read_elf_hardening(root() / file);
    ASSERT_EQ(elf.error, "") << file;
    EXPECT_TRUE(elf.exports.count(entry->second)) << file << " does not export " << entry->second;
    for (const auto& symbol : elf.exports) {
      EXPECT_EQ(symbol.find("6oaprof"), std::string::npos) << file << " exports " << symbol;
    }
  }
  EXPECT_GE(seen, 2) << "the OpenCL layer and preload library are always packaged";
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
