// SUDO_UID/SUDO_GID as a hostile environment writes them, and the check that a drop took.
#include <linux/capability.h>
#include <pwd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "session/privilege_drop.h"
#include "tests/security/hostile.h"

namespace oaprof::session {
namespace {

using ::testing::HasSubstr;

TEST(SudoIdsTest, OnlyAPlainDecimalBelowTheInvalidIdIsAnId) {
  for (const char* ok : {"0", "1", "1000", "65534", "4294967294"}) {
    EXPECT_TRUE(parse_plain_id(ok).has_value()) << ok;
  }
  EXPECT_EQ(parse_plain_id("4294967294"), 4294967294u);
  // 4294967296 is 2^32: cut to 32 bits it is uid 0. 4294967295 is (uid_t)-1, "no change".
  for (const char* bad : {"", " 1000", "1000 ", "\t1000", "-1", "+1", "4294967295", "4294967296",
                          "18446744073709551616", "99999999999", "65534x", "0x10", "010", "1e3",
                          "1,000", "\xef\xbc\x91"}) {
    EXPECT_FALSE(parse_plain_id(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(SudoIdsTest, AMalformedSudoUidIsRefusedNeverRunAsRoot) {
  for (const char* bad : {"4294967296", "4294967295", "-1", "65534x", "", " 1000", "0x10"}) {
    SCOPED_TRACE(std::string("SUDO_UID='") + bad + "'");
    try {
      const auto c = credentials_from_sudo({{"SUDO_UID", bad}, {"SUDO_GID", "65534"}}, 0);
      ADD_FAILURE() << "accepted as " << (c ? std::to_string(c->uid) : std::string("root"));
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("SUDO_UID='") + bad + "' is not an id"));
    }
  }
}

TEST(SudoIdsTest, TheGroupIsNeverGuessedAsRoots) {
  for (const char* bad : {"4294967296", "-1", "65534x", "", " 1000", "0x10"}) {
    EXPECT_THROW(credentials_from_sudo({{"SUDO_UID", "65534"}, {"SUDO_GID", bad}}, 0),
                 std::invalid_argument)
        << bad;
  }
  try {
    (void)credentials_from_sudo({{"SUDO_UID", "65534"}, {"SUDO_GID", "0"}}, 0);
    ADD_FAILURE() << "gid 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("SUDO_GID=0 would run the program of uid 65534 with root's"));
  }
  uid_t unknown = 4242;
  while (::getpwuid(unknown) != nullptr) ++unknown;
  try {
    (void)credentials_from_sudo({{"SUDO_UID", std::to_string(unknown)}}, 0);
    ADD_FAILURE() << "no SUDO_GID and no account: a gid was made up";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("SUDO_GID is not set and uid " + std::to_string(unknown) +
                                    " has no account"));
  }
  // The well-formed cases still work, and without root there is nothing to drop.
  const auto c = credentials_from_sudo({{"SUDO_UID", "65534"}, {"SUDO_GID", "65534"}}, 0);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->uid, 65534u);
  EXPECT_EQ(c->gid, 65534u);
  EXPECT_FALSE(credentials_from_sudo({{"SUDO_UID", "4294967296"}}, 1000).has_value());
  EXPECT_FALSE(credentials_from_sudo({{"SUDO_UID", "0"}, {"SUDO_GID", "0"}}, 0).has_value());
}

DropPlan nobody_plan() {
  DropPlan plan;
  plan.uid = 65534;
  plan.gid = 65534;
  plan.groups = {100, 65534};
  return plan;
}

ObservedCredentials as_planned(const DropPlan& plan) {
  ObservedCredentials seen;
  for (auto& u : seen.uids) u = plan.uid;
  for (auto& g : seen.gids) g = plan.gid;
  seen.groups = plan.groups;
  seen.groups_read = true;
  seen.capabilities_read = true;
  seen.ambient_empty = true;
  return seen;
}

TEST(DropCheckTest, EveryLeftoverOfRootIsARefusal) {
  const DropPlan plan = nobody_plan();
  EXPECT_EQ(check_drop(plan, as_planned(plan)), DropStage::kDone);
  const std::vector<gid_t> with_root{0, 100, 65534};
  const std::vector<gid_t> fewer{65534};
  struct Case {
    const char* what;
    std::function<void(ObservedCredentials&)> spoil;
    DropStage expected;
  };
  const Case cases[] = {
      {"saved uid 0", [](auto& s) { s.uids[2] = 0; }, DropStage::kCheckUids},
      {"real uid 0", [](auto& s) { s.uids[0] = 0; }, DropStage::kCheckUids},
      {"effective gid 0", [](auto& s) { s.gids[1] = 0; }, DropStage::kCheckGids},
      {"saved gid 0", [](auto& s) { s.gids[2] = 0; }, DropStage::kCheckGids},
      {"root's group kept", [&](auto& s) { s.groups = with_root; }, DropStage::kCheckGroups},
      {"a group missing", [&](auto& s) { s.groups = fewer; }, DropStage::kCheckGroups},
      {"groups unread", [](auto& s) { s.groups_read = false; }, DropStage::kCheckGroups},
      {"effective caps", [](auto& s) { s.effective = 1; }, DropStage::kCheckCapabilities},
      {"permitted caps", [](auto& s) { s.permitted = 1ull << 40; }, DropStage::kCheckCapabilities},
      {"inheritable caps", [](auto& s) { s.inheritable = 4; }, DropStage::kCheckCapabilities},
      {"ambient caps", [](auto& s) { s.ambient_empty = false; }, DropStage::kCheckCapabilities},
      {"caps unread", [](auto& s) { s.capabilities_read = false; }, DropStage::kCheckCapabilities},
  };
  for (const Case& c : cases) {
    ObservedCredentials seen = as_planned(plan);
    c.spoil(seen);
    EXPECT_EQ(check_drop(plan, seen), c.expected) << c.what;
  }
  EXPECT_THAT(describe({DropStage::kCheckCapabilities, 0}),
              HasSubstr("a capability set (effective, permitted, inheritable or ambient) is not "
                        "empty"));
}

// What a hostile parent can leave a root process: inheritable capabilities, and a securebit that
// keeps every capability across setuid. The drop must still end with none.
TEST(DropCheckTest, ADropClearsCapabilitiesASecurebitOrTheInheritableSetWouldKeep) {
  if (::geteuid() != 0) GTEST_SKIP() << "dropping to another uid needs root";
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (const int failed = security::keep_capabilities_across_setuid(); failed != 0) {
      ::_exit(failed);
    }
    const DropPlan plan = make_drop_plan({security::kUser, security::kUserGroup, ""});
    const DropFailure f = apply_drop(plan);
    if (f.failed()) ::_exit(10 + static_cast<int>(f.stage));
    __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct after[2] = {};
    if (::syscall(SYS_capget, &h, after) != 0) ::_exit(93);
    const bool none = after[0].effective == 0 && after[0].permitted == 0 &&
                      after[0].inheritable == 0 && after[1].effective == 0 &&
                      after[1].permitted == 0 && after[1].inheritable == 0;
    ::_exit(none && ::getuid() == security::kUser ? 0 : 94);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 92) GTEST_SKIP() << "securebits cannot be set here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "exit 1x: the drop failed at stage x; 94: caps kept";
}

}  // namespace
}  // namespace oaprof::session
