// The last selftest result per device: kept, read back by a profile run of the same device with
// what each failure covers, replaced by a later run, and ignored with a note when stale.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "mmio/sim_gpu.h"
#include "run/selftest_result.h"

namespace oaprof::run::selftest {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class SelftestResultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "oaprof-st-result-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  const ResultIdentity identity_{"sim-5916-i915", "KBL GT2 (Gen9)", "i915 (simulated)", "6.8.0",
                                 "0.9.0"};
};

SelftestReport report_with(std::vector<std::pair<std::string, Verdict>> verdicts) {
  SelftestReport report;
  for (auto& [name, verdict] : verdicts) {
    report.checks.push_back(
        {.name = name, .group = "g", .assumes = "a", .tolerance = "t", .verdict = verdict});
  }
  return report;
}

// A model the selftest found off puts only modelled energy in doubt, not every row of every run.
TEST_F(SelftestResultTest, AFailedEnergyModelCheckCoversTheRowsModelledEnergy) {
  keep_result(dir_, report_with({{"energy-model", Verdict::kFail}}), identity_);
  const KeptResult kept = read_kept_result(dir_, identity_);
  ASSERT_THAT(kept.failed, SizeIs(1));
  EXPECT_EQ(kept.failed[0].covers, report::SelftestCovers::kEnergyModel);
}

TEST_F(SelftestResultTest, FailedChecksComeBackWithWhatEachCovers) {
  keep_result(dir_,
              report_with({{"clocks", Verdict::kPass},
                           {"energy", Verdict::kFail},
                           {"restore", Verdict::kFail},
                           {"noa-settle", Verdict::kFail}}),
              identity_);
  const KeptResult kept = read_kept_result(dir_, identity_);
  ASSERT_THAT(kept.failed, SizeIs(3));
  EXPECT_EQ(kept.failed[0].check, "energy");
  EXPECT_EQ(kept.failed[0].covers, report::SelftestCovers::kEnergy);
  EXPECT_EQ(kept.failed[1].covers, report::SelftestCovers::kNoRow);
  // A check this build does not know (another's, newer) puts every row in doubt.
  EXPECT_EQ(kept.failed[2].covers, report::SelftestCovers::kEveryRow);
  ASSERT_THAT(kept.notes, SizeIs(2));
  EXPECT_THAT(kept.notes[0], HasSubstr("failed energy, restore, noa-settle"));
  EXPECT_THAT(kept.notes[1], HasSubstr("warning: restore"));
}

TEST_F(SelftestResultTest, ALaterResultReplacesTheEarlierOne) {
  keep_result(dir_, report_with({{"energy", Verdict::kFail}}), identity_);
  keep_result(dir_, report_with({{"energy", Verdict::kPass}}), identity_);
  const KeptResult kept = read_kept_result(dir_, identity_);
  EXPECT_THAT(kept.failed, IsEmpty());
  EXPECT_THAT(kept.notes, IsEmpty());
  // Only the result itself is left: the file it was written as before the rename is gone.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(SelftestResultTest, NoResultNoFlagsNoNote) {
  const KeptResult kept = read_kept_result(dir_, identity_);
  EXPECT_THAT(kept.failed, IsEmpty());
  EXPECT_THAT(kept.notes, IsEmpty());
}

TEST_F(SelftestResultTest, AResultOfAnotherVersionPlatformDriverOrKernelIsIgnoredWithANote) {
  keep_result(dir_, report_with({{"clocks", Verdict::kFail}}), identity_);
  const std::pair<std::string ResultIdentity::*, const char*> fields[] = {
      {&ResultIdentity::oaprof_version, "oaprof_version"},
      {&ResultIdentity::platform, "platform"},
      {&ResultIdentity::driver, "driver"},
      {&ResultIdentity::kernel, "kernel"}};
  for (const auto& [field, name] : fields) {
    ResultIdentity now = identity_;
    now.*field += "-other";
    const KeptResult kept = read_kept_result(dir_, now);
    EXPECT_THAT(kept.failed, IsEmpty()) << name;
    ASSERT_THAT(kept.notes, SizeIs(1)) << name;
    EXPECT_THAT(kept.notes[0], HasSubstr(std::string("made with ") + name)) << kept.notes[0];
  }
}

TEST_F(SelftestResultTest, ADamagedResultIsIgnoredWithANote) {
  { std::ofstream(result_path(dir_, identity_.device)) << "{\"result_version\": 1, \"checks\""; }
  fs::permissions(result_path(dir_, identity_.device), fs::perms(0644));
  const KeptResult kept = read_kept_result(dir_, identity_);
  EXPECT_THAT(kept.failed, IsEmpty());
  ASSERT_THAT(kept.notes, SizeIs(1));
  EXPECT_THAT(kept.notes[0], HasSubstr("not a result oaprof wrote"));
}

TEST(SelftestResultKeyTest, EachSimulatedPartAndDriverHasItsOwnResult) {
  const oa::Platform kbl = mmio::sim_platform_by_name("kblgt2");
  const oa::Platform tgl = mmio::sim_platform_by_name("tglgt2");
  const oa::Platform tgl_xe = mmio::sim_platform_by_name("tglgt2-xe");
  EXPECT_EQ(device_key(true, kbl, ""), "sim-5916-i915");
  EXPECT_NE(device_key(true, tgl, ""), device_key(true, tgl_xe, ""));
  EXPECT_EQ(device_key(false, kbl, "0000:00:02.0"), "0000:00:02.0");
}

}  // namespace
}  // namespace oaprof::run::selftest
