// The user's files opened from the root side (session/user_file.h): as root, with the user's
// credentials, against every place a hostile user could point an output or an input.
#include "session/user_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/security/hostile.h"

namespace oaprof::session {
namespace {

namespace fs = std::filesystem;
using security::HostileTree;
using ::testing::HasSubstr;

const Credentials kNobody{security::kUser, security::kUserGroup, ""};

// The refusal of opening `path` for writing as the user, or "opened" when it was opened.
std::string write_refusal(const fs::path& path) {
  try {
    ::close(open_user_file(path.string(), UserFileAccess::kWrite, kNobody));
    return "opened";
  } catch (const UserFileError& e) {
    return e.what();
  }
}

class UserFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "opening as another user needs root";
    old_mask_ = ::umask(022);
  }
  void TearDown() override {
    if (::geteuid() == 0) ::umask(old_mask_);
  }
  HostileTree tree_;
  mode_t old_mask_ = 0;
};

TEST_F(UserFileTest, ARootOwnedFileIsNeitherTruncatedNorChowned) {
  const auto before = security::file_state(tree_.target());
  const std::string e = write_refusal(tree_.target());
  EXPECT_THAT(e, HasSubstr("cannot write " + tree_.target().string() + ": Permission denied"));
  EXPECT_THAT(e, HasSubstr("opened as uid 65534, the user who ran sudo"));
  security::expect_untouched(tree_.target(), before);
}

TEST_F(UserFileTest, ALinkPlantedAtTheOutputIsNotFollowed) {
  const auto before = security::file_state(tree_.target());
  const auto link = tree_.plant_link("out.csv", tree_.target());
  EXPECT_THAT(write_refusal(link), HasSubstr("it is a symbolic link, and oaprof does not follow"));
  security::expect_untouched(tree_.target(), before);
  // A dangling link into root's directory creates nothing there.
  const auto fresh = tree_.rootonly() / "created-by-root.csv";
  const auto dangling = tree_.plant_link("new.csv", fresh);
  EXPECT_THAT(write_refusal(dangling), HasSubstr("symbolic link"));
  EXPECT_FALSE(fs::exists(fresh));
  EXPECT_EQ(::geteuid(), 0u) << "the open went through a helper: this process is still root";
}

TEST_F(UserFileTest, NothingIsCreatedWhereOnlyRootMayWrite) {
  const auto fresh = tree_.rootonly() / "new.json";
  EXPECT_THAT(write_refusal(fresh), HasSubstr("Permission denied"));
  EXPECT_FALSE(fs::exists(fresh));
  // A root-only path through a directory the user may not search either.
  ::chmod(tree_.rootonly().c_str(), 0700);
  EXPECT_THAT(write_refusal(tree_.rootonly() / "x.csv"), HasSubstr("Permission denied"));
  EXPECT_FALSE(fs::exists(tree_.rootonly() / "x.csv"));
}

TEST_F(UserFileTest, TheUsersOwnFilesAreCreatedAndTruncatedAsTheUsers) {
  const auto out = tree_.work() / "rows.csv";
  const int fd = open_user_file(out.string(), UserFileAccess::kWrite, kNobody);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "abc", 3), 3);
  ::close(fd);
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, security::kUser) << "created by the user, not chowned afterwards";
  EXPECT_EQ(st.st_gid, security::kUserGroup);
  EXPECT_EQ(st.st_mode & 07777, 0644u) << "0666 less the umask, as any program";
  ::close(open_user_file(out.string(), UserFileAccess::kWrite, kNobody));
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0) << "an existing file of the user's is truncated, as any tool would";
}

TEST_F(UserFileTest, ReadingIsAsTheUserToo) {
  try {
    ::close(open_user_file(tree_.target().string(), UserFileAccess::kRead, kNobody));
    ADD_FAILURE() << "root's 0600 file was opened for the user";
  } catch (const UserFileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot read " + tree_.target().string()));
    EXPECT_EQ(e.errno_value(), EACCES);
  }
  // Reads follow links as the user could: to what the user may read, and nothing else.
  std::ofstream(tree_.rootonly() / "public") << "hello";
  ::chmod((tree_.rootonly() / "public").c_str(), 0644);
  const auto link = tree_.plant_link("public", tree_.rootonly() / "public");
  const int fd = open_user_file(link.string(), UserFileAccess::kRead, kNobody);
  char buf[8] = {};
  EXPECT_EQ(::read(fd, buf, sizeof buf), 5);
  ::close(fd);
  const auto secret = tree_.plant_link("secret", tree_.target());
  EXPECT_THROW(::close(open_user_file(secret.string(), UserFileAccess::kRead, kNobody)),
               UserFileError);
}

TEST(UserFileWithoutSudoTest, LinksAreRefusedForWritesHereToo) {
  HostileTree tree;
  const auto link = tree.work() / "link.csv";
  fs::create_symlink(tree.target(), link);
  const auto before = security::file_state(tree.target());
  try {
    ::close(open_user_file(link.string(), UserFileAccess::kWrite, std::nullopt));
    ADD_FAILURE() << "followed";
  } catch (const UserFileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("symbolic link"));
    EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("opened as uid")));
  }
  security::expect_untouched(tree.target(), before);
}

}  // namespace
}  // namespace oaprof::session
