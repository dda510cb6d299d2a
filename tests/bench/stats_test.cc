#include "bench/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace oaprof::bench {
namespace {

TEST(StatsTest, SummaryOfKnownSamples) {
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  const Stats s = summarize(v);
  EXPECT_EQ(s.count, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);  // sample standard deviation
  EXPECT_NEAR(s.stderr_, s.stddev / std::sqrt(8.0), 1e-12);
  EXPECT_DOUBLE_EQ(s.sum, 40.0);
  EXPECT_EQ(summarize(std::vector<double>{3}).median, 3.0);
  EXPECT_EQ(summarize(std::vector<double>{}).count, 0u);
}

TEST(RepeatRuleTest, RepeatsUntilTheWindowIsCovered) {
  const RepeatRule rule{10.0, 1000, 0.02};
  std::vector<double> v;
  int launches = 0;
  do {
    v.push_back(1.0);  // identical samples: standard error 0, so only the window decides
    ++launches;
  } while (rule.more(v));
  EXPECT_EQ(launches, 10);
}

TEST(RepeatRuleTest, KeepsGoingWhileNoisyAndStopsAtTheCap) {
  const RepeatRule rule{0.0, 50, 0.02};
  std::vector<double> noisy;
  int launches = 0;
  do {
    noisy.push_back(launches % 2 ? 1.0 : 3.0);  // relative standard error ~ 0.5 / sqrt(n)
    ++launches;
  } while (rule.more(noisy));
  EXPECT_EQ(launches, 50);

  const RepeatRule loose{0.0, 1000, 0.2};
  std::vector<double> v;
  launches = 0;
  do {
    v.push_back(launches % 2 ? 1.0 : 3.0);
    ++launches;
  } while (loose.more(v));
  // By hand: n = 6 (3,1,3,1,3,1): mean 2, sd √1.2, stderr/mean 0.224 > 0.2; n = 7 adds a 3:
  // mean 15/7, sd 1.069, stderr/mean 0.189 ≤ 0.2, so the rule stops after the 7th launch.
  EXPECT_EQ(launches, 7);
}

}  // namespace
}  // namespace oaprof::bench

namespace oaprof::bench {
namespace {

TEST(RepeatTrackerTest, AgreesWithTheRuleSampleBySample) {
  const RepeatRule rule{12.0, 500, 0.05};
  RepeatTracker t(rule);
  std::vector<double> v;
  for (int i = 0; i < 400; ++i) {
    v.push_back(1.0 + (i % 5) * 0.3 + (i % 3 == 0 ? 2.0 : 0.0));
    t.add(v.back());
    EXPECT_EQ(t.more(), rule.more(v)) << i;
  }
  EXPECT_EQ(t.count(), 400u);
}

}  // namespace
}  // namespace oaprof::bench
