#include "session/child.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "mmio/signal_restore.h"

namespace oaprof::session {
namespace {

using ::testing::HasSubstr;

TEST(CredentialsTest, FromSudoOnlyWhenRoot) {
  const std::map<std::string, std::string> env{{"SUDO_UID", "1000"}, {"SUDO_GID", "1001"}};
  EXPECT_FALSE(credentials_from_sudo(env, 1000).has_value());  // not root: nothing to drop
  const auto c = credentials_from_sudo(env, 0);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->uid, 1000u);
  EXPECT_EQ(c->gid, 1001u);
  EXPECT_FALSE(credentials_from_sudo({}, 0).has_value());  // root without sudo
  EXPECT_FALSE(credentials_from_sudo({{"SUDO_UID", "0"}}, 0).has_value());
  EXPECT_THROW(credentials_from_sudo({{"SUDO_UID", "12abc"}}, 0), std::invalid_argument);
}

TEST(SpawnChildTest, RunsWithTheEnvironmentAndReportsItsStatus) {
  const auto out =
      std::filesystem::temp_directory_path() / ("oaprof-child-" + std::to_string(::getpid()));
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo \"$OAPROF_TEST_VAR\" > " + out.string() + "; exit 7"};
  spec.set_env["OAPROF_TEST_VAR"] = "hello";
  const pid_t pid = spawn_child(spec);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(shell_status(status), 7);
  std::string line;
  std::getline(std::ifstream(out), line);
  EXPECT_EQ(line, "hello");
  std::filesystem::remove(out);
}

std::string blocked_signals_line(const std::filesystem::path& status) {
  std::ifstream in(status);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("SigBlk:", 0) == 0) return line;
  }
  return "";
}

// oaprof blocks its signals for the signal thread; the program must not inherit that, or Ctrl-C
// would never reach it.
TEST(SpawnChildTest, TheProgramGetsTheSignalMaskFromBeforeTheSignalThread) {
  const auto out =
      std::filesystem::temp_directory_path() / ("oaprof-child-mask-" + std::to_string(::getpid()));
  const std::string ours = blocked_signals_line("/proc/self/status");
  ASSERT_FALSE(ours.empty());
  const pid_t oaprof = ::fork();
  ASSERT_GE(oaprof, 0);
  if (oaprof == 0) {  // stands for oaprof: the thread first, then the program
    mmio::SignalThread::start();
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c", "grep SigBlk /proc/self/status > " + out.string()};
    int status = 0;
    const pid_t pid = spawn_child(spec);
    ::waitpid(pid, &status, 0);
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 99);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(oaprof, &status, 0), oaprof);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(blocked_signals_line(out), ours);
  std::filesystem::remove(out);
}

TEST(SpawnChildTest, AMissingProgramIsAClearError) {
  ChildSpec spec;
  spec.argv = {"/no/such/program"};
  try {
    spawn_child(spec);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot run '/no/such/program'"));
    EXPECT_THAT(e.what(), HasSubstr("No such file"));
  }
  EXPECT_THROW(spawn_child(ChildSpec{}), std::runtime_error);
}

TEST(SpawnChildTest, DropsToTheGivenUserWhenRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "changing uid needs root";
  const auto out =
      std::filesystem::temp_directory_path() / ("oaprof-uid-" + std::to_string(::getpid()));
  std::filesystem::create_directories(out);
  std::filesystem::permissions(out, std::filesystem::perms::all);
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c",
               "id -u > " + (out / "uid").string() + "; id -G > " + (out / "groups").string() +
                   "; grep CapEff /proc/self/status > " + (out / "caps").string()};
  spec.credentials = Credentials{65534, 65534, ""};
  const pid_t pid = spawn_child(spec);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(shell_status(status), 0);
  std::string uid, groups, caps;
  std::getline(std::ifstream(out / "uid"), uid);
  std::getline(std::ifstream(out / "groups"), groups);
  std::getline(std::ifstream(out / "caps"), caps);
  EXPECT_EQ(uid, "65534");
  EXPECT_EQ(groups, "65534");  // root's supplementary groups are gone
  EXPECT_THAT(caps, HasSubstr("0000000000000000"));
  std::filesystem::remove_all(out);
}

TEST(SpawnChildTest, TheChildGetsTheUsersHomeNotRoots) {
  if (::geteuid() != 0) GTEST_SKIP() << "changing uid needs root";
  const passwd* pw = ::getpwuid(65534);
  if (pw == nullptr) GTEST_SKIP() << "uid 65534 has no account here";
  const std::string home = pw->pw_dir, name = pw->pw_name;
  const auto out =
      std::filesystem::temp_directory_path() / ("oaprof-home-" + std::to_string(::getpid()));
  std::filesystem::create_directories(out);
  std::filesystem::permissions(out, std::filesystem::perms::all);
  // What sudo leaves: root's home in the environment.
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home != nullptr ? old_home : "";
  ::setenv("HOME", "/root", 1);
  ChildSpec spec;
  spec.argv = {
      "sh", "-c",  // found along PATH, as execvp would
      "printf '%s\\n%s\\n%s\\n' \"$HOME\" \"$USER\" \"$LOGNAME\" > " + (out / "env").string()};
  spec.credentials = Credentials{65534, 65534, name};
  const pid_t pid = spawn_child(spec);
  if (old_home != nullptr)
    ::setenv("HOME", saved.c_str(), 1);
  else
    ::unsetenv("HOME");
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(shell_status(status), 0);
  std::ifstream in(out / "env");
  std::string child_home, user, logname;
  std::getline(in, child_home);
  std::getline(in, user);
  std::getline(in, logname);
  EXPECT_EQ(child_home, home);
  EXPECT_EQ(user, name);
  EXPECT_EQ(logname, name);
  std::filesystem::remove_all(out);
}

TEST(SpawnChildTest, AProgramNotOnThePathIsAClearError) {
  ChildSpec spec;
  spec.argv = {"oaprof-no-such-program"};
  spec.set_env["PATH"] = "/nonexistent:/bin";
  try {
    spawn_child(spec);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot run 'oaprof-no-such-program': no executable of that "
                                    "name in PATH (/nonexistent:/bin)"));
  }
}

// As execvp: a script without #! runs under /bin/sh, and a PATH entry the user may not execute
// is passed over for the next one (checked when the test can drop to nobody, i.e. as root).
TEST(SpawnChildTest, PathSearchGoesOnAndAScriptWithoutAShebangRunsUnderSh) {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("oaprof-path-" + std::to_string(::getpid()));
  fs::create_directories(dir / "first");
  fs::create_directories(dir / "second");
  fs::permissions(dir, fs::perms::all);
  std::ofstream(dir / "first" / "tool") << "echo first > \"$1\"\n";  // no #!
  std::ofstream(dir / "second" / "tool") << "echo second > \"$1\"\n";
  fs::permissions(dir / "first" / "tool", fs::perms::owner_all);  // 0700: the owner's only
  fs::permissions(dir / "second" / "tool", fs::perms::all);
  const auto run = [&](std::optional<Credentials> as) {
    const auto out = dir / "out";
    fs::remove(out);
    ChildSpec spec;
    spec.argv = {"tool", out.string()};
    spec.set_env["PATH"] = (dir / "first").string() + ":" + (dir / "second").string();
    spec.credentials = as;
    const pid_t pid = spawn_child(spec);
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_EQ(shell_status(status), 0);
    std::string text;
    std::getline(std::ifstream(out), text);
    return text;
  };
  EXPECT_EQ(run(std::nullopt), "first");
  if (::geteuid() == 0) {
    EXPECT_EQ(run(Credentials{65534, 65534, ""}), "second");
  }
  fs::remove_all(dir);
}

// What a pipe's read end holds once every writer closed it.
std::string read_all(int fd) {
  std::string text;
  char buf[256];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, std::size_t(n));
  ::close(fd);
  return text;
}

// stdout and stderr go to the spec's descriptors, also after a drop to another user.
TEST(SpawnChildTest, StdoutAndStderrGoWhereTheSpecSays) {
  std::vector<std::optional<Credentials>> users = {std::nullopt};
  if (::geteuid() == 0) users.push_back(Credentials{65534, 65534, ""});
  for (const auto& as : users) {
    int out[2], err[2];
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(err, O_CLOEXEC), 0);
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c", "echo to-stdout; echo to-stderr >&2"};
    spec.credentials = as;
    spec.stdout_fd = out[1];
    spec.stderr_fd = err[1];
    const pid_t pid = spawn_child(spec);
    ::close(out[1]);
    ::close(err[1]);
    EXPECT_EQ(read_all(out[0]), "to-stdout\n");
    EXPECT_EQ(read_all(err[0]), "to-stderr\n");
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_EQ(shell_status(status), 0);
  }
}

// In a process of its own that adopts orphans: a middle process spawns `sleep 20` and exits at
// once. 0: the orphan was killed by SIGKILL (dies_with_parent took); 1: it lived on.
int orphan_fate(const std::optional<Credentials>& as) {
  const pid_t outer = ::fork();
  if (outer == 0) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    const pid_t middle = ::fork();
    if (middle == 0) {
      ChildSpec spec;
      spec.argv = {"/bin/sleep", "20"};
      spec.credentials = as;
      spec.dies_with_parent = true;
      try {
        spawn_child(spec);
      } catch (const std::exception&) {
        ::_exit(2);
      }
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(middle, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ::_exit(2);
    const pid_t orphan = ::waitpid(-1, &status, 0);  // ours now; 20 s if it lived on
    ::_exit(orphan > 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : 1);
  }
  int status = 0;
  ::waitpid(outer, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A helper that dies with its parent, also once dropped to another user (the kernel clears the
// parent-death signal on a change of credentials: it must be set after the drop).
TEST(SpawnChildTest, AChildThatDiesWithItsParentDoesNotOutliveIt) {
  EXPECT_EQ(orphan_fate(std::nullopt), 0);
  if (::geteuid() == 0) {
    EXPECT_EQ(orphan_fate(Credentials{65534, 65534, ""}), 0);
  }
}

TEST(ShellStatusTest, SignalsMapTo128PlusN) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::raise(SIGKILL);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(shell_status(status), 128 + SIGKILL);
}

}  // namespace
}  // namespace oaprof::session
