#include "session/child.h"

#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

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
