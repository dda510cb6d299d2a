// `oaprof selftest` end to end on the simulator: the table on stdout, progress on stderr, the JSON
// report as docs/selftest.md documents it, and the exit status (0 all pass or skip, 1 a check
// failed). The fault matrix itself is tested in-process (tests/run/selftest_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/common/run_util.h"

namespace {

namespace fs = std::filesystem;
using oaprof::testing::run;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kSim = std::string(OAPROF_BIN) + " selftest --device sim --quick";

TEST(SelftestCliTest, QuickRunPassesAndWritesTheDocumentedReport) {
  const fs::path json =
      fs::temp_directory_path() / ("oaprof-selftest-" + std::to_string(::getpid()) + ".json");
  // stdout alone: the table; progress goes to stderr.
  const auto r = run("{ " + kSim + " --json " + json.string() + " 2>/dev/null; }");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("pass  clocks"));
  EXPECT_THAT(r.output, HasSubstr("device: simulated"));
  EXPECT_THAT(r.output, Not(HasSubstr("oaprof selftest: clocks…")));
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  fs::remove(json);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["device"]["simulated"], true);
  EXPECT_EQ(j["failed"], false);
  EXPECT_EQ(j["checks"].size(), 10u);
  for (const auto& c : j["checks"]) {
    for (const char* key :
         {"name", "group", "assumes", "tolerance", "verdict", "measurement", "reason", "figures"}) {
      EXPECT_TRUE(c.contains(key)) << c["name"] << " lacks " << key;
    }
  }
}

TEST(SelftestCliTest, AFaultFailsItsCheckWithExitStatusOneAndProgressOnStderr) {
  const auto r = run(kSim + " --sim-fault rapl-stuck");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fail  energy"));
  EXPECT_THAT(r.output, HasSubstr("oaprof selftest: energy…"));
  EXPECT_THAT(r.output, HasSubstr("1 failed"));
}

// --help and --help-all are the shared vocabulary's (cli_test.cc); an unknown fault is a usage
// error.
TEST(SelftestCliTest, AnUnknownFaultIsABadOption) {
  EXPECT_EQ(run(kSim + " --sim-fault gremlins").status, 2);
}

}  // namespace
