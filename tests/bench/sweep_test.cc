#include "bench/sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

namespace oaprof::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SweepTest, StepsByOneByDefault) {
  const Sweep s = parse_sweep("wg=1:512");
  EXPECT_EQ(s.param, SweepParam::kWorkGroups);
  ASSERT_EQ(s.values.size(), 512u);
  for (std::size_t i = 0; i < s.values.size(); ++i) EXPECT_EQ(s.values[i], i + 1);
  EXPECT_THAT(parse_sweep("wi=30:34").values, ElementsAre(30, 31, 32, 33, 34));
  EXPECT_EQ(parse_sweep("wi=1:256").param, SweepParam::kWorkItems);
}

TEST(SweepTest, IncrementsGeometricStepsAndSizes) {
  EXPECT_THAT(parse_sweep("wg=8:40:16").values, ElementsAre(8, 24, 40));
  const Sweep size = parse_sweep("size=4K:64K:x2");
  EXPECT_EQ(size.param, SweepParam::kSize);
  EXPECT_THAT(size.values, ElementsAre(4096, 8192, 16384, 32768, 65536));
  EXPECT_THAT(parse_sweep("size=1M:3M:1M").values, ElementsAre(1 << 20, 2 << 20, 3 << 20));
}

TEST(SweepTest, ByteSizes) {
  EXPECT_EQ(parse_byte_size("123"), 123u);
  EXPECT_EQ(parse_byte_size("4k"), 4096u);
  EXPECT_EQ(parse_byte_size("64M"), 64u << 20);
  EXPECT_EQ(parse_byte_size("2G"), std::size_t{2} << 30);
  for (const char* bad : {"", "M", "12Q", "-1", "1.5M", "99999999999999999999"}) {
    EXPECT_THROW(parse_byte_size(bad), std::invalid_argument) << bad;
  }
}

TEST(SweepTest, ClearErrors) {
  const auto message = [](const char* text) {
    try {
      parse_sweep(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message("wg"), HasSubstr("names no parameter"));
  EXPECT_THAT(message("threads=1:4"), HasSubstr("unknown parameter 'threads'"));
  EXPECT_THAT(message("wg=5:1"), HasSubstr("FROM <= TO"));
  EXPECT_THAT(message("wg=0:4"), HasSubstr("FROM <= TO"));
  EXPECT_THAT(message("wg=1"), HasSubstr("wg=FROM:TO"));
  EXPECT_THAT(message("wg=1:4:0"), HasSubstr("step 0"));
  EXPECT_THAT(message("wg=1:4:x1"), HasSubstr("N >= 2"));
  EXPECT_THAT(message("wg=a:4"), HasSubstr("not a whole number"));
  EXPECT_THAT(message("wg=1:99999999"), HasSubstr("larger step"));
}

TEST(ProgressBarTest, DrawsInPlaceAndClears) {
  std::ostringstream out;
  ProgressBar bar(out, 4, true);
  bar.update(2, "wg=3");
  EXPECT_THAT(out.str(), HasSubstr("\r[###############               ] 2/4 wg=3"));
  bar.finish();
  EXPECT_EQ(out.str().back(), 'K');  // the line is erased, leaving the table clean

  std::ostringstream quiet;
  ProgressBar off(quiet, 4, false);
  off.update(1, "x");
  off.finish();
  EXPECT_TRUE(quiet.str().empty());
}

}  // namespace
}  // namespace oaprof::bench
