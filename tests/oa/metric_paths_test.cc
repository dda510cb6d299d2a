#include "oa/metric_paths.h"

#include <gtest/gtest.h>

namespace oaprof::oa {
namespace {

TEST(MetricPathsTest, SearchOrderIsEnvThenUserThenPrefix) {
  MetricSearchEnv env{"/a:/b::", "/xdg", "/home/u", "/usr/local"};
  const auto dirs = metric_search_dirs(env);
  ASSERT_EQ(dirs.size(), 4u);
  EXPECT_EQ(dirs[0], "/a");
  EXPECT_EQ(dirs[1], "/b");
  EXPECT_EQ(dirs[2], "/xdg/oaprof/metrics");
  EXPECT_EQ(dirs[3], "/usr/local/share/oaprof/metrics");
}

TEST(MetricPathsTest, UserDirFallsBackToHome) {
  EXPECT_EQ(user_metrics_dir({"", "", "/home/u", ""}), "/home/u/.local/share/oaprof/metrics");
  EXPECT_THROW(user_metrics_dir({}), std::invalid_argument);
  EXPECT_TRUE(metric_search_dirs({}).empty());
  EXPECT_EQ(metric_file_name("kblgt2"), "oa-kblgt2.xml");
}

}  // namespace
}  // namespace oaprof::oa
