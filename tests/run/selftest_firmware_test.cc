// The GuC/HuC versions of the selftest's report: each driver's debugfs text (formats in
// run/selftest_firmware.h), garbled text left out rather than passed on, and "unknown" with the
// reason where debugfs cannot be read.
#include "run/selftest_firmware.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "run/selftest.h"
#include "selftest_test_util.h"

namespace oaprof::run::selftest {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// Each driver's dump: the version found, not the one wanted (xe: the release version, not the
// compatibility one).
TEST(UcInfoTest, EachDriversDumpGivesPathStatusAndTheVersionFound) {
  struct Case {
    std::string_view text, path, status, version;
  };
  const Case cases[] = {
      {"GuC firmware: i915/tgl_guc_70.bin\n\tstatus: RUNNING\n\tversion: wanted 70.5, found "
       "70.20\n\tuCode: 327680 bytes\n",
       "i915/tgl_guc_70.bin", "RUNNING", "70.20"},
      {"GuC firmware: xe/bmg_guc_70.bin\n\tstatus: running\n\twanted release version 70.29.2\n"
       "\tfound release version 70.36.0\n\tfound compatibility version 1.13.0\n",
       "xe/bmg_guc_70.bin", "running", "70.36.0"},
  };
  for (const Case& c : cases) {
    const UcInfo info = parse_uc_info(c.text);
    EXPECT_EQ(info.path, c.path);
    EXPECT_EQ(info.status, c.status);
    EXPECT_EQ(info.version, c.version);
  }
}

TEST(UcInfoTest, GarbledOrHostileTextIsLeftOutNotPassedOn) {
  const UcInfo info =
      parse_uc_info("GuC firmware: \x1b[31mevil\x1b[0m\n\tstatus: " + std::string(300, 'x') +
                    "\n\tversion: wanted 1.2, found 1234567890.1\n");
  EXPECT_EQ(info.path, "");                         // a control character
  EXPECT_EQ(info.status, "");                       // too long
  EXPECT_EQ(info.version, "");                      // a component of ten digits
  EXPECT_EQ(parse_uc_info("found 7").version, "");  // one component is not a version
  EXPECT_EQ(parse_uc_info("").path, "");
}

TEST(FirmwareTest, AnUnreadableDebugfsSaysUnknownAndWhy) {
  const fs::path none =
      fs::temp_directory_path() / ("oaprof-no-debugfs-" + std::to_string(::getpid()));
  const FirmwareVersion f = read_firmware(none / "dri" / "0", oa::KernelDriver::kXe, "guc_info");
  EXPECT_EQ(f.version, "unknown");
  EXPECT_THAT(f.reason, HasSubstr("gt0/uc/guc_info"));
  EXPECT_THAT(f.reason, HasSubstr("no debugfs"));
}

TEST(FirmwareTest, I915sPreMultiGtDirectoryIsReadToo) {
  const fs::path dri = fs::temp_directory_path() / ("oaprof-dri-" + std::to_string(::getpid()));
  fs::create_directories(dri / "gt/uc");
  std::ofstream(dri / "gt/uc/huc_info") << "HuC firmware: i915/tgl_huc.bin\n\tstatus: RUNNING\n"
                                           "\tversion: wanted 7.9, found 7.9\n";
  const FirmwareVersion f = read_firmware(dri, oa::KernelDriver::kI915, "huc_info");
  fs::remove_all(dri);
  EXPECT_EQ(f.version, "7.9");
  EXPECT_EQ(f.path, "i915/tgl_huc.bin");
  EXPECT_EQ(f.reason, "");
}

// The simulator's fake debugfs goes through the same reader, in each driver's format, into the
// report's JSON.
TEST(FirmwareTest, TheJsonReportCarriesTheSimulatorsFirmwareVersions) {
  use_shared_metrics_path();
  for (const char* platform : {"tglgt2", "bmg"}) {
    SCOPED_TRACE(platform);
    const nlohmann::json j = report_json(run_selftest(sim_options(platform)), "9.9.9");
    const nlohmann::json& guc = j["system"]["firmware_versions"]["guc"];
    EXPECT_EQ(guc["version"], std::string(platform) == "bmg" ? "0.0.1" : "0.0");
    EXPECT_EQ(guc["path"], "sim/guc_info.bin");
    EXPECT_EQ(guc["reason"], "");
    EXPECT_THAT(j["system"]["firmware"].get<std::string>(), HasSubstr("GuC 0.0"));
  }
}

}  // namespace
}  // namespace oaprof::run::selftest
