#include "attach/launch_filter.h"

#include <gtest/gtest.h>

#include <optional>
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

TEST(LaunchFilterTest, KeepsTheSelectionItWasGiven) {
  const LaunchFilter f("regex:k[0-9]", 1, 2);
  EXPECT_EQ(f.name(), "regex:k[0-9]");
  EXPECT_EQ(f.skip(), 1u);
  EXPECT_EQ(f.count(), std::optional<std::uint64_t>(2));
  EXPECT_EQ(LaunchFilter().count(), std::nullopt);
}

}  // namespace
}  // namespace oaprof::attach
