#include "attach/replay_config.h"

#include <gtest/gtest.h>

namespace oaprof::attach {
namespace {

using Mode = ReplayConfig::Mode;

ReplayConfig parse(const char* replay, const char* min_ms, std::string* warning = nullptr) {
  std::string w;
  ReplayConfig c = parse_replay_config(replay, min_ms, w);
  if (warning) *warning = w;
  return c;
}

TEST(ReplayConfigTest, AbsentZeroOneAndOffMeanNoReplay) {
  for (const char* v : {static_cast<const char*>(nullptr), "", "0", "1", "off"}) {
    std::string w;
    EXPECT_EQ(parse(v, "50", &w).mode, Mode::kOff) << (v ? v : "(null)");
    EXPECT_TRUE(w.empty());
  }
}

TEST(ReplayConfigTest, ACountGivesExactlyThatManyPasses) {
  const auto c = parse("5", nullptr);
  EXPECT_EQ(c.mode, Mode::kFixed);
  EXPECT_EQ(c.passes, 5u);
  EXPECT_EQ(parse(std::to_string(kMaxReplayPasses).c_str(), nullptr).passes, kMaxReplayPasses);
}

TEST(ReplayConfigTest, AutoCoversTheMinimumWindow) {
  const auto c = parse("auto", "120");
  EXPECT_EQ(c.mode, Mode::kAuto);
  EXPECT_EQ(c.min_time_ns, 120'000'000u);
  EXPECT_EQ(parse("auto", nullptr).min_time_ns, kDefaultMinTimeNs);
}

TEST(ReplayConfigTest, BadValuesWarnAndTurnReplayOff) {
  for (const char* v : {"bogus", "-3", "5x", " 5", "2.5", "99999999999999999999"}) {
    std::string w;
    EXPECT_EQ(parse(v, "50", &w).mode, Mode::kOff) << v;
    EXPECT_NE(w.find("OAPROF_REPLAY"), std::string::npos) << v;
  }
  std::string w;
  EXPECT_EQ(parse(std::to_string(kMaxReplayPasses + 1).c_str(), nullptr, &w).mode, Mode::kOff);
  EXPECT_FALSE(w.empty());
  for (const char* ms : {"soon", "0", "-1"}) {
    EXPECT_EQ(parse("auto", ms, &w).mode, Mode::kOff) << ms;
    EXPECT_NE(w.find("OAPROF_MIN_TIME_MS"), std::string::npos);
  }
  // The window only matters in auto mode.
  EXPECT_EQ(parse("3", "soon", &w).mode, Mode::kFixed);
}

}  // namespace
}  // namespace oaprof::attach
