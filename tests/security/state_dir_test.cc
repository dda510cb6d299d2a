// The state directory (/run/oaprof) as a hostile user would prepare it: links at every component
// and at the lock and state files, a directory above it the user can change, a hard link to a
// file of root's, a variable naming another directory under sudo, and a directory sync that
// fails (fsync is interposed below: a test of ours decides when it fails).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include "session/daemon_paths.h"
#include "session/register_journal.h"
#include "session/session_lock.h"
#include "session/state_dir.h"
#include "tests/security/hostile.h"

namespace {
std::atomic<bool> g_fail_directory_fsync{false};
}  // namespace

// Every fsync of this test binary, the library's included, comes here.
extern "C" int fsync(int fd) {
  struct stat st {};
  if (g_fail_directory_fsync && ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    errno = EIO;
    return -1;
  }
  return static_cast<int>(::syscall(SYS_fsync, fd));
}

namespace oaprof::session {
namespace {

namespace fs = std::filesystem;
using security::HostileTree;
using ::testing::HasSubstr;

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "accepted";
}

TEST(StateDirSecurityTest, EveryComponentIsCheckedNotJustTheLast) {
  HostileTree tree;
  // A state directory of root's, closed, but reached through a link the user planted.
  const auto real = tree.root() / "real";
  fs::create_directories(real / "oaprof");
  ::chmod((real / "oaprof").c_str(), 0755);
  const auto link = tree.root() / "run";
  fs::create_directory_symlink(real, link);
  EXPECT_THAT(refusal([&] { prepare_state_dir(link / "oaprof"); }),
              HasSubstr(link.string() + " is a symbolic link"));
  // Below a directory the user owns (and could rename away and replace).
  if (::geteuid() == 0) {
    fs::create_directory(tree.work() / "oaprof");
    EXPECT_THAT(refusal([&] { prepare_state_dir(tree.work() / "oaprof"); }),
                HasSubstr(tree.work().string() + " is owned by uid 65534, neither root nor 0"));
  }
  // Below a directory others may write (not sticky, unlike /tmp).
  const auto open_dir = tree.root() / "open";
  fs::create_directories(open_dir);
  ::chmod(open_dir.c_str(), 0777);
  EXPECT_THAT(refusal([&] { prepare_state_dir(open_dir / "oaprof"); }),
              HasSubstr(open_dir.string() + " is writable by group or others"));
  // A sticky /tmp above is fine: no one else can rename what is ours in it.
  EXPECT_EQ(refusal([&] { prepare_state_dir(tree.root() / "fine" / "oaprof"); }), "accepted");
}

TEST(StateDirSecurityTest, UnderSudoTheUserCannotMoveTheStateDirectory) {
  const Credentials user{security::kUser, security::kUserGroup, ""};
  EXPECT_THAT(refusal([&] {
                (void)state_dir_from({{kStateDirEnv, "/etc"}}, user);
              }),
              HasSubstr("OAPROF_STATE_DIR=/etc comes from the environment of the user who ran "
                        "sudo (uid 65534)"));
  EXPECT_EQ(state_dir_from({{kStateDirEnv, kDefaultStateDir}}, user), fs::path(kDefaultStateDir));
  EXPECT_EQ(state_dir_from({}, user), fs::path(kDefaultStateDir));
  EXPECT_EQ(state_dir_from({{kStateDirEnv, "/elsewhere"}}), fs::path("/elsewhere"));
}

TEST(StateDirSecurityTest, TheLockIsNeverALinkOrASecondNameOfAnotherFile) {
  HostileTree tree;
  const auto dir = tree.root() / "state";
  prepare_state_dir(dir);
  const auto before = security::file_state(tree.target());
  std::string holder;
  fs::create_symlink(tree.target(), dir / "session.lock");
  EXPECT_THAT(refusal([&] { (void)SessionLock::try_acquire(dir / "session.lock", "me", &holder); }),
              HasSubstr("it is a symbolic link"));
  security::expect_untouched(tree.target(), before);
  fs::remove(dir / "session.lock");
  // A hard link to root's file (same file system): truncating the lock would truncate it.
  ASSERT_EQ(::link(tree.target().c_str(), (dir / "session.lock").c_str()), 0);
  const auto linked = security::file_state(tree.target());
  EXPECT_THAT(refusal([&] { (void)SessionLock::try_acquire(dir / "session.lock", "me", &holder); }),
              HasSubstr("is not a plain file of uid"));
  security::expect_untouched(tree.target(), linked);
  fs::remove(dir / "session.lock");
  ASSERT_EQ(::mkfifo((dir / "session.lock").c_str(), 0600), 0);
  EXPECT_THAT(refusal([&] { (void)SessionLock::try_acquire(dir / "session.lock", "me", &holder); }),
              HasSubstr("is not a plain file of uid"));
  fs::remove(dir / "session.lock");
  EXPECT_TRUE(SessionLock::try_acquire(dir / "session.lock", "me", &holder).has_value());
  // Its directory is checked at every acquisition, not only when oaprofd started.
  ::chmod(dir.c_str(), 0777);
  EXPECT_THAT(refusal([&] { (void)SessionLock::try_acquire(dir / "session.lock", "me", &holder); }),
              HasSubstr("is writable by group or others"));
}

TEST(StateDirSecurityTest, TheStateFileIsNeverALink) {
  HostileTree tree;
  const auto dir = tree.root() / "state";
  prepare_state_dir(dir);
  const auto before = security::file_state(tree.target());
  fs::create_symlink(tree.target(), dir / "state");
  EXPECT_THAT(refusal([&] {
                StateFile f(dir / "state", {"sim", "x", "uid 1", {}});
              }),
              HasSubstr("cannot create the state file"));
  EXPECT_THAT(refusal([&] { (void)read_state_file(dir / "state"); }),
              HasSubstr("it is a symbolic link"));
  security::expect_untouched(tree.target(), before);
}

TEST(StateDirSecurityTest, AFailedDirectorySyncStopsTheJournalAndSoTheWrite) {
  HostileTree tree;
  const auto dir = tree.root() / "state";
  prepare_state_dir(dir);
  g_fail_directory_fsync = true;
  const std::string e = refusal([&] { StateFile f(dir / "state", {"sim", "x", "uid 1", {}}); });
  g_fail_directory_fsync = false;
  EXPECT_THAT(e,
              HasSubstr("cannot make the state file " + (dir / "state").string() +
                        " durable: fsync of " + dir.string() + " failed: " + std::strerror(EIO)));
  // A journal whose file cannot be made durable lets no register write through.
  struct Window final : mmio::Mmio {
    std::uint32_t read32(std::uint32_t) override { return 0; }
    void write32(std::uint32_t, std::uint32_t) override { ++writes; }
    std::string describe() const override { return "test window"; }
    int writes = 0;
  };
  SessionJournal journal(dir / "state2", {"sim", {}, "uid 1", {}});
  auto owned = std::make_unique<Window>();
  Window* window = owned.get();
  auto wrapped = journal.wrap(std::move(owned));
  g_fail_directory_fsync = true;
  EXPECT_THROW(wrapped->write32(0x2b00, 1), std::runtime_error);
  g_fail_directory_fsync = false;
  EXPECT_EQ(window->writes, 0);
}

}  // namespace
}  // namespace oaprof::session
