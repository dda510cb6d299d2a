#include "attach/replay_config.h"

#include <gtest/gtest.h>

namespace oaprof::attach {
namespace {

using Mode = ReplayConfig::Mode;

ReplayConfig parse(const char* replay, std::string* warning = nullptr) {
  std::string w;
  ReplayConfig c = parse_replay_config(replay, w);
  if (warning) *warning = w;
  return c;
}

TEST(ReplayConfigTest, AbsentZeroOneAndOffMeanNoReplay) {
  for (const char* v : {static_cast<const char*>(nullptr), "", "0", "1", "off"}) {
    std::string w;
    EXPECT_EQ(parse(v, &w).mode, Mode::kOff) << (v ? v : "(null)");
    EXPECT_TRUE(w.empty());
  }
}

TEST(ReplayConfigTest, ACountGivesExactlyThatManyPasses) {
  const auto c = parse("5");
  EXPECT_EQ(c.mode, Mode::kFixed);
  EXPECT_EQ(c.passes, 5u);
  EXPECT_EQ(parse(std::to_string(kMaxReplayPasses).c_str()).passes, kMaxReplayPasses);
}

// The window auto mode covers is OAPROF_MIN_TIME_MS's (layer_config_test.cc).
TEST(ReplayConfigTest, AutoIsItsOwnMode) { EXPECT_EQ(parse("auto").mode, Mode::kAuto); }

TEST(ReplayConfigTest, BadValuesWarnAndTurnReplayOff) {
  for (const char* v : {"bogus", "-3", "5x", " 5", "2.5", "99999999999999999999"}) {
    std::string w;
    EXPECT_EQ(parse(v, &w).mode, Mode::kOff) << v;
    EXPECT_NE(w.find("OAPROF_REPLAY"), std::string::npos) << v;
  }
  std::string w;
  EXPECT_EQ(parse(std::to_string(kMaxReplayPasses + 1).c_str(), &w).mode, Mode::kOff);
  EXPECT_FALSE(w.empty());
}

}  // namespace
}  // namespace oaprof::attach
