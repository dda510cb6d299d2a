#include "run/kernel_runner_path.h"

#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/common/daemon_test_util.h"

namespace oaprof::run {
namespace {

using ::testing::HasSubstr;

TEST(KernelRunnerPathTest, AnExecutableBesideTheBinaryIsFound) {
  test_support::ScratchDir dir;
  const auto path = dir.path() / "kernel_runner";
  std::ofstream(path) << "#!/bin/sh\n";
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
  std::string looked;
  EXPECT_EQ(kernel_runner_in(dir.path(), &looked), path);
}

TEST(KernelRunnerPathTest, AMissingOrUnusableOneSaysWhereItLookedAndWhatItFound) {
  test_support::ScratchDir dir;
  std::string looked;
  EXPECT_FALSE(kernel_runner_in(dir.path(), &looked));
  EXPECT_THAT(looked, HasSubstr((dir.path() / "kernel_runner").string()));
  EXPECT_THAT(looked, HasSubstr("No such file"));
  const auto path = dir.path() / "kernel_runner";
  std::ofstream(path) << "x";
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  EXPECT_FALSE(kernel_runner_in(dir.path(), &looked));
  EXPECT_THAT(looked, HasSubstr("not executable"));
  std::filesystem::remove(path);
  std::filesystem::create_directory(path);
  EXPECT_FALSE(kernel_runner_in(dir.path(), &looked));
  EXPECT_THAT(looked, HasSubstr("not a regular file"));
}

}  // namespace
}  // namespace oaprof::run
