// Application replay's join (issue 20): each launch's rows of the passes become one row with
// every set's metrics, found by kernel, ordinal and sizes whatever order a pass wrote them in;
// runs that launched different sequences are refused with the difference named.
#include "report/pass_merge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

namespace oaprof::report {
namespace {
using ::testing::HasSubstr;

std::vector<Field> row(std::uint64_t launch, const std::string& kernel, const std::string& global,
                       std::uint64_t gpu_ns, const std::string& metric, double value) {
  return {{"launch", launch},      {"kernel", kernel},      {"global_size", global},
          {"local_size", "64"},    {"gpu_time_ns", gpu_ns}, {metric, value, 2},
          {"flags", std::string()}};
}

const Field& at(const MergedPasses& m, std::size_t r, const std::string& column) {
  for (std::size_t i = 0; i < m.columns.size(); ++i) {
    if (m.columns[i] == column) return m.rows[r][i];
  }
  throw std::out_of_range(column);
}

// Pass 2 (a program with two threads) wrote b's launch before a's second: the join goes by
// kernel, ordinal and sizes, not by position.
TEST(PassMergeTest, EachLaunchGetsEveryPassesMetricsWhateverTheirOrder) {
  const Pass first{"ComputeBasic",
                   {row(0, "a", "4096", 100, "EuActive_percent", 80.0),
                    row(1, "a", "4096", 110, "EuActive_percent", 81.0),
                    row(2, "b", "1024", 50, "EuActive_percent", 40.0)},
                   {"EuActive_percent"}};
  const Pass second{
      "L3_1",
      {row(0, "a", "4096", 101, "L3Misses", 7.0), row(1, "b", "1024", 52, "L3Misses", 3.0),
       row(2, "a", "4096", 112, "L3Misses", 9.0)},
      {"L3Misses"}};
  const Pass passes[] = {first, second};
  const MergedPasses m = merge_passes(passes);
  ASSERT_EQ(m.rows.size(), 3u);
  EXPECT_EQ(m.columns, (std::vector<std::string>{
                           "launch", "kernel", "global_size", "local_size", "replay_passes",
                           "ComputeBasic.gpu_time_ns", "ComputeBasic.flags", "L3_1.gpu_time_ns",
                           "L3_1.flags", "ComputeBasic.EuActive_percent", "L3_1.L3Misses"}));
  // The second launch of a: 81 % from pass 1, 9 misses from pass 2's third row.
  EXPECT_EQ(std::get<double>(at(m, 1, "ComputeBasic.EuActive_percent").value), 81.0);
  EXPECT_EQ(std::get<double>(at(m, 1, "L3_1.L3Misses").value), 9.0);
  EXPECT_EQ(std::get<std::uint64_t>(at(m, 1, "L3_1.gpu_time_ns").value), 112u);
  EXPECT_EQ(std::get<double>(at(m, 2, "L3_1.L3Misses").value), 3.0);
  EXPECT_EQ(std::get<std::string>(at(m, 2, "kernel").value), "b");
}

// --json beside the joined CSV: one document, the sets it came from, numbers as numbers and a
// cell a pass did not fill as null.
TEST(PassMergeTest, TheJoinedJsonKeepsNumbersAndLeavesMissingCellsNull) {
  const Pass first{
      "ComputeBasic", {row(0, "a", "4096", 100, "EuActive_percent", 80.5)}, {"EuActive_percent"}};
  Pass second{"L3_1", {row(0, "a", "4096", 101, "L3Misses", 7.0)}, {"L3Misses", "Absent"}};
  const Pass passes[] = {first, second};
  const MergedPasses m = merge_passes(passes);
  std::ostringstream out;
  const std::string sets[] = {"ComputeBasic", "L3_1"};
  write_joined_json(out, m, sets, "kernel");
  const auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["joined_from"]["replay"], "kernel");
  EXPECT_EQ(doc["joined_from"]["sets"], nlohmann::json::array({"ComputeBasic", "L3_1"}));
  ASSERT_EQ(doc["launches"].size(), 1u);
  const auto& launch = doc["launches"][0];
  EXPECT_EQ(launch["kernel"], "a");
  EXPECT_EQ(launch["L3_1.gpu_time_ns"], 101);
  EXPECT_DOUBLE_EQ(launch["ComputeBasic.EuActive_percent"].get<double>(), 80.5);
  EXPECT_TRUE(launch["L3_1.Absent"].is_null());
}

TEST(PassMergeTest, RunsThatLaunchedDifferentSequencesAreRefusedWithTheDifference) {
  const Pass first{"ComputeBasic",
                   {row(0, "a", "4096", 100, "X", 1.0), row(1, "a", "4096", 100, "X", 1.0)},
                   {"X"}};
  const Pass fewer{"L3_1", {row(0, "a", "4096", 100, "Y", 1.0)}, {"Y"}};
  const Pass other_size{
      "L3_1", {row(0, "a", "4096", 100, "Y", 1.0), row(1, "a", "8192", 100, "Y", 1.0)}, {"Y"}};
  for (const Pass& second : {fewer, other_size}) {
    const Pass passes[] = {first, second};
    try {
      (void)merge_passes(passes);
      FAIL() << "joined runs that launched differently";
    } catch (const PassMismatch& e) {
      EXPECT_THAT(e.what(), HasSubstr("launch 2 of 'a' (global size 4096"));
      EXPECT_THAT(e.what(), HasSubstr("pass 1 (ComputeBasic) has"));
      EXPECT_THAT(e.what(), HasSubstr("pass 2 (L3_1) has not"));
    }
  }
  const Pass more{"L3_1",
                  {row(0, "a", "4096", 100, "Y", 1.0), row(1, "a", "4096", 100, "Y", 1.0),
                   row(2, "c", "16", 100, "Y", 1.0)},
                  {"Y"}};
  const Pass passes[] = {first, more};
  EXPECT_THROW((void)merge_passes(passes), PassMismatch);
  const Pass one[] = {first};
  EXPECT_THROW((void)merge_passes(one), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::report
