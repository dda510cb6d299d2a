// The last selftest result, kept by root in the state directory, as a hostile user would meet it:
// a state directory they can change, links planted at the result's name and at the name it is
// written as first, and a forged result (a link, a file others can write) a profile run must not
// flag rows by.
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "run/selftest_result.h"
#include "tests/security/hostile.h"

namespace oaprof::run::selftest {
namespace {

namespace fs = std::filesystem;
using security::HostileTree;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

const ResultIdentity kIdentity{"sim-5916-i915", "KBL GT2 (Gen9)", "i915 (simulated)", "6.8.0",
                               "0.9.0"};

SelftestReport failed_energy() {
  SelftestReport report;
  report.checks.push_back({.name = "energy",
                           .group = "energy",
                           .assumes = "a",
                           .tolerance = "t",
                           .verdict = Verdict::kFail});
  return report;
}

std::string refusal(const fs::path& state_dir) {
  try {
    keep_result(state_dir, failed_energy(), kIdentity);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "kept";
}

TEST(SelftestResultAttackTest, AStateDirectoryOthersCanChangeIsRefusedAndNothingWritten) {
  const HostileTree tree;
  ::chmod(tree.work().c_str(), 0777);  // the user's, or open to all: either lets them swap it
  const fs::path state = tree.work() / "state";
  EXPECT_THAT(refusal(state), HasSubstr("cannot be trusted"));
  EXPECT_FALSE(fs::exists(result_path(state, kIdentity.device)));
}

TEST(SelftestResultAttackTest, ALinkAtTheResultNameIsReplacedNeverWrittenThrough) {
  const HostileTree tree;
  const fs::path state = tree.rootonly() / "state";
  fs::create_directory(state);
  const security::FileState before = security::file_state(tree.target());
  fs::create_symlink(tree.target(), result_path(state, kIdentity.device));
  EXPECT_EQ(refusal(state), "kept");
  security::expect_untouched(tree.target(), before);
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(result_path(state, kIdentity.device))));
}

TEST(SelftestResultAttackTest, ALinkAtTheNameWrittenFirstStopsTheWrite) {
  const HostileTree tree;
  const fs::path state = tree.rootonly() / "state";
  fs::create_directory(state);
  const security::FileState before = security::file_state(tree.target());
  const std::string first = ".selftest-" + kIdentity.device + ".json." + std::to_string(::getpid());
  fs::create_symlink(tree.target(), state / first);
  EXPECT_THAT(refusal(state), HasSubstr("cannot create"));
  security::expect_untouched(tree.target(), before);
}

TEST(SelftestResultAttackTest, AForgedResultIsIgnoredWithANote) {
  const HostileTree tree;
  const fs::path state = tree.rootonly() / "state";
  fs::create_directory(state);
  keep_result(state, failed_energy(), kIdentity);
  const fs::path kept = result_path(state, kIdentity.device);
  // A link to a result: not followed.
  fs::rename(kept, state / "elsewhere.json");
  fs::create_symlink(state / "elsewhere.json", kept);
  KeptResult r = read_kept_result(state, kIdentity);
  EXPECT_THAT(r.failed, IsEmpty());
  ASSERT_THAT(r.notes, SizeIs(1));
  EXPECT_THAT(r.notes[0], HasSubstr("is ignored: cannot open it"));
  // A result anyone could have written.
  fs::remove(kept);
  fs::rename(state / "elsewhere.json", kept);
  ::chmod(kept.c_str(), 0666);
  r = read_kept_result(state, kIdentity);
  EXPECT_THAT(r.failed, IsEmpty());
  ASSERT_THAT(r.notes, SizeIs(1));
  EXPECT_THAT(r.notes[0], HasSubstr("writable by group or others"));
}

}  // namespace
}  // namespace oaprof::run::selftest
