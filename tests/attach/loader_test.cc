#include "attach/loader.h"

#include <gtest/gtest.h>

namespace oaprof::attach {
namespace {

TEST(LoaderTest, VersionComparison) {
  EXPECT_TRUE(version_at_least("2.3.1", 2, 3));
  EXPECT_TRUE(version_at_least("2.3", 2, 3));
  EXPECT_TRUE(version_at_least("3.0.6", 2, 3));
  EXPECT_FALSE(version_at_least("2.2.14", 2, 3));
  EXPECT_FALSE(version_at_least("1.9", 2, 3));
  EXPECT_FALSE(version_at_least("", 2, 3));
}

TEST(LoaderTest, AMissingLoaderIsReportedNotFatal) {
  const LoaderInfo info = detect_loader("libno-such-opencl.so.9");
  EXPECT_FALSE(info.found);
  EXPECT_FALSE(info.supports_layers);
  EXPECT_NE(info.note.find("libno-such-opencl.so.9"), std::string::npos);
}

TEST(LoaderTest, TheInstalledLoaderIsIdentified) {
  const LoaderInfo info = detect_loader();
  if (!info.found) GTEST_SKIP() << info.note;
  EXPECT_FALSE(info.name.empty());
  EXPECT_NE(info.note.find("libOpenCL"), std::string::npos) << info.note;
  // Debian 12 and Ubuntu 24.04 ship ocl-icd 2.3.x, which loads layers.
  if (info.name == "ocl-icd") {
    EXPECT_TRUE(info.supports_layers) << info.note;
  }
}

}  // namespace
}  // namespace oaprof::attach
