// The README's demo, run for real on the simulator, against checked-in copies of its CSV header
// and its JSON document's top-level keys: scripts, spreadsheets and notebooks read those by name
// and position, so a change to them must be a decision, not a side effect.
//
// When a column or key is meant to change, update the copies on purpose, in the same commit as
// the change (and bump kJsonSchemaVersion in report/reporter.h when a JSON field changes
// meaning or disappears), from the demo run in an empty directory (B: the build tree's path,
// S: the source tree's):
//   POCL_CACHE_DIR=$B/pocl-cache $B/bin/oaprof --device sim --format 101
//     -o oaprof-mad_vect4.csv --json oaprof-mad_vect4.json --trace oaprof-mad_vect4.pftrace
//     -- $B/bin/kernel_runner mad_vect4
//   head -1 oaprof-mad_vect4.csv > $S/tests/integration/data/demo_csv_header.txt
//   jq -r 'keys[]' oaprof-mad_vect4.json > $S/tests/integration/data/demo_json_keys.txt
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/common/run_util.h"

namespace {
namespace fs = std::filesystem;

using oaprof::testing::CommandResult;
using oaprof::testing::run;

std::vector<std::string> lines_of(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class DemoOutputTest : public ::testing::Test {
 protected:
  // The demo writes into the current directory: it runs in a fresh one, with the README's names.
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / fmt::format("oaprof-demo-{}", ::getpid()));
    fs::create_directories(*dir_);
    result_ = new CommandResult(
        run(fmt::format("cd {} && {} --device sim --format 101 -o oaprof-mad_vect4.csv --json "
                        "oaprof-mad_vect4.json --trace oaprof-mad_vect4.pftrace -- {} mad_vect4",
                        dir_->string(), OAPROF_BIN, KERNEL_RUNNER_BIN)));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete result_;
  }
  static inline fs::path* dir_ = nullptr;
  static inline CommandResult* result_ = nullptr;
};

TEST_F(DemoOutputTest, CsvHeaderIsTheCheckedInOne) {
  ASSERT_EQ(result_->status, 0) << result_->output;
  const auto expected = lines_of(fs::path(OAPROF_TEST_DATA_DIR) / "demo_csv_header.txt");
  ASSERT_EQ(expected.size(), 1u) << "the copy holds the header line alone";
  const auto written = lines_of(*dir_ / "oaprof-mad_vect4.csv");
  ASSERT_GE(written.size(), 2u) << "a header and the launches' rows";
  EXPECT_EQ(written.front(), expected.front())
      << "the demo's CSV columns changed: if that is meant, update "
         "tests/integration/data/demo_csv_header.txt (see this test's first comment)";
}

TEST_F(DemoOutputTest, JsonHasTheCheckedInTopLevelKeys) {
  ASSERT_EQ(result_->status, 0) << result_->output;
  const auto expected = lines_of(fs::path(OAPROF_TEST_DATA_DIR) / "demo_json_keys.txt");
  ASSERT_FALSE(expected.empty());
  std::ifstream in(*dir_ / "oaprof-mad_vect4.json");
  const auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(doc.is_object()) << "the demo's JSON does not parse";
  std::vector<std::string> keys;
  for (const auto& [key, value] : doc.items()) keys.push_back(key);  // sorted: nlohmann::json
  EXPECT_EQ(keys, expected)
      << "the demo's JSON top-level keys changed: if that is meant, update "
         "tests/integration/data/demo_json_keys.txt (see this test's first comment)";
  ASSERT_TRUE(doc["launches"].is_array());
  EXPECT_FALSE(doc["launches"].empty());
}

}  // namespace
