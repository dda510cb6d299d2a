#include "attach/launch_filter.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace oaprof::attach {
namespace {

TEST(LaunchFilterTest, NoFilterSelectsEverything) {
  LaunchFilter f;
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(f.select("anything"));
}

TEST(LaunchFilterTest, SkipAndCountApplyToMatchingLaunchesOnly) {
  LaunchFilter f("mad_vect4", 2, 3);
  std::string selected;
  for (const char* k : {"mad_vect4", "other", "mad_vect4", "mad_vect4", "other", "mad_vect4",
                        "mad_vect4", "mad_vect4", "mad_vect4"}) {
    selected += f.select(k) ? '1' : '0';
  }
  // Matches are #0..#6 of mad_vect4: skip #0 and #1, take #2..#4, leave the rest untouched.
  EXPECT_EQ(selected, "000101100");
}

TEST(LaunchFilterTest, RegexMatchesTheWholeName) {
  LaunchFilter f("regex:mad_.*4", 0, std::nullopt);
  EXPECT_TRUE(f.select("mad_vect4"));
  EXPECT_TRUE(f.select("mad_dp_vect4"));
  EXPECT_FALSE(f.select("mad_vect16"));
  EXPECT_FALSE(f.select("xmad_vect4"));
  EXPECT_THROW(LaunchFilter("regex:(", 0, std::nullopt), std::invalid_argument);
}

std::map<std::string, std::string> g_env;
const char* fake_getenv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

TEST(LaunchFilterTest, EnvironmentRoundTrip) {
  g_env = LaunchFilter("regex:k[0-9]", 1, 1).to_env();
  EXPECT_EQ(g_env.at("OAPROF_KERNEL_NAME"), "regex:k[0-9]");
  LaunchFilter f = LaunchFilter::from_env(&fake_getenv);
  EXPECT_FALSE(f.select("k1"));  // skipped
  EXPECT_TRUE(f.select("k2"));
  EXPECT_FALSE(f.select("k3"));  // count reached
  EXPECT_TRUE(LaunchFilter().to_env().empty());
  g_env = {{"OAPROF_LAUNCH_SKIP", "-1"}};
  EXPECT_THROW(LaunchFilter::from_env(&fake_getenv), std::invalid_argument);
  g_env = {{"OAPROF_LAUNCH_COUNT", "3x"}};
  EXPECT_THROW(LaunchFilter::from_env(&fake_getenv), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::attach
