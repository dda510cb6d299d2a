// The real binaries as root under sudo, driven by a hostile invoking user (uid 65534): links
// planted at every output, root's 0600 file named as an output or an input, forged SUDO_UID and
// SUDO_GID, a $TMPDIR of the user's, capabilities and securebits left to root by its parent, the
// state directory moved or booby-trapped, and oaprofd flooded. Each case asserts what it must
// not touch is untouched, and the exit status and message.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "ipc/wire.h"
#include "tests/common/daemon_test_util.h"
#include "tests/common/run_util.h"
#include "tests/security/hostile.h"

namespace oaprof::security {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kSudo = "SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody";

// `oaprof --device sim` as root with `env` (assignments, quoted as needed) and `args`.
CommandResult oaprof(const std::string& env, const std::string& args) {
  return testing::run(
      fmt::format("cd /tmp && env {} {} --device sim --energy none "
                  "--idle-baseline off -q {}",
                  env, OAPROF_BIN, args));
}

class HostileUserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "playing root under sudo needs root";
    before_ = file_state(tree_.target());
  }
  void TearDown() override {
    if (::geteuid() == 0) expect_untouched(tree_.target(), before_);
  }
  HostileTree tree_;
  FileState before_;
};

TEST_F(HostileUserTest, RootsFileNamedAsAnOutputIsNeitherTruncatedNorChowned) {
  const auto r = oaprof(kSudo, fmt::format("-o {} -- /bin/true", tree_.target().string()));
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_THAT(r.output, HasSubstr(fmt::format("oaprof: cannot write {}: Permission denied "
                                              "(opened as uid 65534, the user who ran sudo)",
                                              tree_.target().string())));
  const auto json = oaprof(kSudo, fmt::format("-o {}/ok.csv --json {} -- /bin/true",
                                              tree_.work().string(), tree_.target().string()));
  EXPECT_EQ(json.status, 4) << json.output;
}

TEST_F(HostileUserTest, LinksPlantedAtTheOutputsAreNotFollowed) {
  const auto csv = tree_.plant_link("rows.csv", tree_.target());
  const auto r = oaprof(kSudo, fmt::format("-o {} -- /bin/true", csv.string()));
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_THAT(r.output, HasSubstr("it is a symbolic link, and oaprof does not follow a link"));
  const auto json = tree_.plant_link("rows.json", tree_.target());
  const auto j = oaprof(kSudo, fmt::format("-o {}/ok.csv --json {} -- /bin/true",
                                           tree_.work().string(), json.string()));
  EXPECT_EQ(j.status, 4) << j.output;
  // Dangling, into root's directory: nothing is created there.
  const auto fresh = tree_.rootonly() / "made-by-root.csv";
  const auto dangling = tree_.plant_link("new.csv", fresh);
  EXPECT_EQ(oaprof(kSudo, fmt::format("-o {} -- /bin/true", dangling.string())).status, 4);
  EXPECT_EQ(oaprof(kSudo, fmt::format("-o {} -- /bin/true", fresh.string())).status, 4);
  EXPECT_FALSE(fs::exists(fresh));
}

TEST_F(HostileUserTest, TheUsersOutputsAreTheUsersFromTheStart) {
  const auto csv = tree_.work() / "out.csv";
  const auto json = tree_.work() / "out.json";
  const auto r =
      oaprof(kSudo, fmt::format("-o {} --json {} -- /bin/true", csv.string(), json.string()));
  ASSERT_EQ(r.status, 0) << r.output;
  for (const auto& p : {csv, json}) {
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, kUser) << p;
    EXPECT_EQ(st.st_gid, kUserGroup) << p;
    EXPECT_EQ(st.st_mode & 0022, 0u) << p << ": writable by others";
  }
}

TEST_F(HostileUserTest, ForgedSudoIdsAreRefusedAndNothingRuns) {
  const auto ran = tree_.work() / "ran";
  const auto csv = tree_.work() / "x.csv";
  const std::string program =
      fmt::format("-o {} -- /bin/sh -c 'touch {}'", csv.string(), ran.string());
  for (const char* uid : {"4294967296", "4294967295", "-1", "65534x", "", " 1000", "0x10"}) {
    SCOPED_TRACE(std::string("SUDO_UID='") + uid + "'");
    const auto r = oaprof(fmt::format("'SUDO_UID={}' SUDO_GID=65534", uid), program);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr(fmt::format("oaprof: SUDO_UID='{}' is not an id", uid)));
    EXPECT_FALSE(fs::exists(ran)) << "the program ran";
    EXPECT_FALSE(fs::exists(csv)) << "an output was created";
  }
  for (const char* gid : {"4294967296", "-1", "", " 1", "0"}) {
    SCOPED_TRACE(std::string("SUDO_GID='") + gid + "'");
    const auto r = oaprof(fmt::format("SUDO_UID=65534 'SUDO_GID={}'", gid), program);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_FALSE(fs::exists(ran)) << "the program ran";
  }
}

TEST_F(HostileUserTest, NothingOfTheRunIsPutInTheUsersTmpdir) {
  const auto tmp = tree_.work() / "tmp";
  fs::create_directory(tmp);
  ASSERT_EQ(::chown(tmp.c_str(), kUser, kUserGroup), 0);
  // The program looks while the run is live: the socket is an abstract name, not a file here.
  const auto r = oaprof(fmt::format("{} TMPDIR={}", kSudo, tmp.string()),
                        fmt::format("-o {}/k.csv -- /bin/sh -c 'echo \"socket=$OAPROF_SOCKET\"; "
                                    "echo \"tmp=[$(ls -A \"$TMPDIR\")]\"'",
                                    tree_.work().string()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("socket=@oaprof-"));
  EXPECT_THAT(r.output, HasSubstr("tmp=[]"));
  EXPECT_TRUE(fs::is_empty(tmp));
}

// Root's parent leaves it inheritable capabilities and SECBIT_NO_SETUID_FIXUP, under which
// setuid keeps every capability: the program must still run with none.
TEST_F(HostileUserTest, TheProgramGetsNoCapabilityWhateverRootInherited) {
  const auto out = tree_.work() / "caps.txt";
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (const int failed = keep_capabilities_across_setuid(); failed != 0) ::_exit(failed);
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::setenv("SUDO_UID", "65534", 1);
    ::setenv("SUDO_GID", "65534", 1);
    const std::string csv = (tree_.work() / "c.csv").string();
    ::execl(OAPROF_BIN, OAPROF_BIN, "--device", "sim", "--mode", "app", "--energy", "none",
            "--idle-baseline", "off", "-q", "-o", csv.c_str(), "--", "/bin/grep", "^Cap",
            "/proc/self/status", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 92) GTEST_SKIP() << "no securebits here";
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text.str();
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapAmb"}) {
    EXPECT_THAT(text.str(), HasSubstr(std::string(set) + ":\t0000000000000000")) << text.str();
  }
}

TEST_F(HostileUserTest, UnderSudoTheStateDirectoryIsRootsNotTheUsers) {
  const auto state = tree_.work() / "state";
  const auto r = oaprof(fmt::format("{} OAPROF_STATE_DIR={}", kSudo, state.string()),
                        fmt::format("-o {}/s.csv -- /bin/true", tree_.work().string()));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("OAPROF_STATE_DIR=" + state.string() +
                                  " comes from the environment of the user who ran sudo"));
  EXPECT_FALSE(fs::exists(state));
}

TEST_F(HostileUserTest, ALinkAtTheSessionLockIsNotFollowed) {
  const auto regs = tree_.root() / "regs";
  test_support::create_sim_file(regs);
  const auto state = tree_.root() / "state";
  fs::create_directory(state);
  ::chmod(state.c_str(), 0755);
  fs::create_symlink(tree_.target(), state / "session.lock");
  const auto r = testing::run(
      fmt::format("env OAPROF_STATE_DIR={} {} --device sim:{} --daemon never --energy none "
                  "--idle-baseline off -q -o {}/s.csv -- /bin/true",
                  state.string(), OAPROF_BIN, regs.string(), tree_.work().string()));
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cannot open the session lock " +
                                  (state / "session.lock").string() + ": it is a symbolic link"));
}

TEST_F(HostileUserTest, AMetricFileTheUserNamesIsReadAsTheUser) {
  const auto secret = tree_.rootonly() / "secret.xml";
  std::ofstream(secret) << "<secret-token-4242/>\n";
  ::chmod(secret.c_str(), 0600);
  const auto r = oaprof(kSudo, fmt::format("--metric-set ComputeBasic --metrics-xml {} -o {}/m.csv "
                                           "-- /bin/true",
                                           secret.string(), tree_.work().string()));
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cannot read " + secret.string() + ": Permission denied"));
  EXPECT_THAT(r.output, Not(HasSubstr("secret-token")));
}

// `sudo oaprof model fit --from RUN.json -o MODEL.json` reads and writes as the user: a run file
// only root may read is not read (its contents never echoed in the parser's errors), and a model
// is not written where only root may write.
TEST_F(HostileUserTest, ModelFitReadsTheRunAndWritesTheModelAsTheUser) {
  const auto secret = tree_.rootonly() / "run.json";
  std::ofstream(secret) << "{\"secret-token-4242\": 1}\n";
  ::chmod(secret.c_str(), 0600);
  const auto read =
      testing::run(fmt::format("cd /tmp && env {} {} model fit --from {} -o {}/m.json", kSudo,
                               OAPROF_BIN, secret.string(), tree_.work().string()));
  EXPECT_EQ(read.status, 2) << read.output;
  EXPECT_THAT(read.output, HasSubstr("--from " + secret.string() + ": cannot open it"));
  EXPECT_THAT(read.output, Not(HasSubstr("secret-token")));
  EXPECT_FALSE(fs::exists(tree_.work() / "m.json"));
  const auto written = tree_.rootonly() / "model.json";
  const auto write = testing::run(fmt::format("cd /tmp && env {} {} model fit --device sim -o {}",
                                              kSudo, OAPROF_BIN, written.string()));
  EXPECT_NE(write.status, 0) << write.output;
  EXPECT_FALSE(fs::exists(written));
}

TEST_F(HostileUserTest, SubcommandsThatNeedNoRootRunAsTheUser) {
  // The user's import directory leads into root's: as root, the import would write there.
  fs::create_directories(tree_.work() / "xdg");
  ASSERT_EQ(::chown((tree_.work() / "xdg").c_str(), kUser, kUserGroup), 0);
  const auto link = tree_.work() / "xdg" / "oaprof";
  fs::create_directory_symlink(tree_.rootonly(), link);
  ASSERT_EQ(::lchown(link.c_str(), kUser, kUserGroup), 0);
  const auto r =
      testing::run(fmt::format("env {} XDG_DATA_HOME={}/xdg {} metrics import {}/oa-kblgt2.xml",
                               kSudo, tree_.work().string(), OAPROF_BIN, OAPROF_IGT_METRICS_DIR));
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Permission denied"));
  EXPECT_FALSE(fs::exists(tree_.rootonly() / "metrics"));
  const auto bad = testing::run(fmt::format("env SUDO_UID=4294967296 {} metrics list", OAPROF_BIN));
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("oaprof metrics: SUDO_UID='4294967296' is not an id"));
}

// Test hooks that point root at files (a register file, a sysfs or debugfs tree, an OpenCL loader)
// keep their defaults under sudo: root would create, map, write or load what they name.
TEST_F(HostileUserTest, OptionsThatPointRootAtFilesKeepTheirDefaultsUnderSudo) {
  const auto made = tree_.rootonly() / "regs";
  const auto r = testing::run(fmt::format(
      "env {} {} --device sim:{} --energy none --idle-baseline off -q -o {}/r.csv -- /bin/true",
      kSudo, OAPROF_BIN, made.string(), tree_.work().string()));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("under sudo the simulator keeps its registers in memory"));
  EXPECT_FALSE(fs::exists(made)) << "root created the register file the user named";
  // A fake sysfs whose RAPL counter is root's secret: its first line would be quoted back.
  const auto rapl = tree_.work() / "sys" / "class" / "powercap" / "intel-rapl:0";
  fs::create_directories(rapl);
  fs::create_symlink(tree_.target(), rapl / "energy_uj");
  for (const std::string& args :
       {fmt::format("--sysfs-root {}/sys --energy powercap", tree_.work().string()),
        fmt::format("--debugfs-root {}", tree_.work().string()),
        fmt::format("--render-node {}/node", tree_.work().string())}) {
    SCOPED_TRACE(args);
    const auto p =
        testing::run(fmt::format("env {} {} --device sim {} --idle-baseline off -q "
                                 "-o {}/r.csv -- /bin/true",
                                 kSudo, OAPROF_BIN, args, tree_.work().string()));
    EXPECT_EQ(p.status, 2) << p.output;
    EXPECT_THAT(p.output, HasSubstr("under sudo this option keeps its default"));
    EXPECT_THAT(p.output, Not(HasSubstr("secret")));
  }
  const auto power =
      testing::run(fmt::format("env {} {} power --energy powercap --sysfs-root "
                               "{}/sys --duration 10ms",
                               kSudo, OAPROF_BIN, tree_.work().string()));
  EXPECT_EQ(power.status, 2) << power.output;
  EXPECT_THAT(power.output, Not(HasSubstr("secret")));
  const auto doctor = testing::run(fmt::format("env {} {} doctor --opencl-library {}/evil.so",
                                               kSudo, OAPROF_BIN, tree_.work().string()));
  EXPECT_EQ(doctor.status, 2) << doctor.output;
  EXPECT_THAT(doctor.output, HasSubstr("oaprof doctor: --opencl-library"));
}

// OAPROF_LAYER and OAPROF_PRELOAD name oaprof's library for the program; where sudoers keeps
// them, they come from the user. Root checks the file as the user, so it answers alike for a file
// that exists in a directory only root may enter and for one that does not.
TEST_F(HostileUserTest, TheLibraryVariablesTellRootsFilesFromNothing) {
  const auto closed = tree_.root() / "closed";
  fs::create_directory(closed);
  ::chmod(closed.c_str(), 0700);
  std::ofstream(closed / "present.so") << "not a library\n";
  for (const char* variable : {"OAPROF_LAYER", "OAPROF_PRELOAD"}) {
    const std::string inject = std::string(variable) == "OAPROF_LAYER" ? "layer" : "preload";
    std::string answers[2];
    for (int i = 0; i < 2; ++i) {
      const auto lib = closed / (i == 0 ? "present.so" : "absent.so");
      const auto r = oaprof(
          fmt::format("{} {}={}", kSudo, variable, lib.string()),
          fmt::format("--inject {} -o {}/r.csv -- /bin/true", inject, tree_.work().string()));
      SCOPED_TRACE(r.output);
      EXPECT_NE(r.status, 0) << "root used " << lib << " for uid 65534";
      answers[i] = r.output;
      const auto at = answers[i].find(lib.filename().string());
      if (at != std::string::npos) answers[i].erase(at, lib.filename().string().size());
    }
    EXPECT_EQ(answers[0], answers[1]) << variable;
    EXPECT_THAT(answers[0], HasSubstr("Permission denied"));
  }
}

// OAPROF_DAEMON_SOCKET would make root connect where the user says and trust its answers.
TEST_F(HostileUserTest, TheDaemonSocketVariableIsIgnoredUnderSudo) {
  const auto socket = tree_.work() / "fake.sock";
  const auto r =
      oaprof(fmt::format("{} OAPROF_DAEMON_SOCKET={}", kSudo, socket.string()),
             fmt::format("--daemon always -o {}/r.csv -- /bin/true", tree_.work().string()));
  EXPECT_THAT(r.output, HasSubstr("OAPROF_DAEMON_SOCKET is ignored under sudo"));
  EXPECT_THAT(r.output, Not(HasSubstr("at " + socket.string())));
}

// oaprofd as a process: a flood of one user's connections past --max-clients' share.
TEST(OaprofdProcessSecurityTest, AFloodOfConnectionsIsRefusedPastTheBound) {
  test_support::ScratchDir dir;
  const std::string socket = (dir.path() / "d.sock").string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open((dir.path() / "log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, STDERR_FILENO);
    ::execl(OAPROFD_BIN, OAPROFD_BIN, "--socket", socket.c_str(), "--state-dir", dir.path().c_str(),
            "--device", "sim", "--group", std::to_string(::getgid()).c_str(), "--max-clients", "8",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // A refusal comes unasked, at once; a connection let in answers a hello. (Asking before the
  // refusal is read can lose it: the daemon hangs up with the hello unread, which the kernel
  // reports as ECONNRESET.)
  const auto connect_and_hello = [&]() -> std::pair<int, std::string> {
    const int fd = test_support::connect_unix(socket);
    if (fd < 0) return {-1, "no connection"};
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 300) == 0) {
      const auto hello = ipc::wire::encode({1, ipc::wire::Hello{}});
      (void)::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL);
    }
    std::uint8_t buf[ipc::wire::kMaxMessageBytes];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    auto decoded = ipc::wire::decode({buf, n > 0 ? static_cast<std::size_t>(n) : 0});
    const auto* m = std::get_if<ipc::wire::Message>(&decoded);
    if (m == nullptr) return {fd, "garbled"};
    if (const auto* e = std::get_if<ipc::wire::Error>(&m->body)) return {fd, e->message};
    return {fd, "ok"};
  };
  std::vector<int> held;
  for (int i = 0; i < 300 && held.empty(); ++i) {  // until the daemon is up
    auto [fd, what] = connect_and_hello();
    if (what == "ok")
      held.push_back(fd);
    else if (fd >= 0)
      ::close(fd);
    if (held.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(held.size(), 1u) << "oaprofd did not come up";
  auto [second, ok] = connect_and_hello();
  EXPECT_EQ(ok, "ok");
  held.push_back(second);
  // --max-clients 8 gives one uid a quarter: the test's third connection is one too many.
  for (int i = 0; i < 20; ++i) {
    auto [fd, what] = connect_and_hello();
    EXPECT_THAT(what, HasSubstr(fmt::format("busy: uid {} already has 2 connections to oaprofd",
                                            ::getuid())));
    if (fd >= 0) ::close(fd);
  }
  for (const int fd : held) ::close(fd);
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace oaprof::security
