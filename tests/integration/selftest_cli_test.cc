// `oaprof selftest` end to end on the simulator: the table on stdout, progress on stderr, the JSON
// report as docs/selftest.md documents it, and the exit status (0 all pass or skip, 1 a check
// failed). The fault matrix itself is tested in-process (tests/run/selftest_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/common/run_util.h"

namespace {

namespace fs = std::filesystem;
using oaprof::testing::run;
using ::testing::HasSubstr;
using ::testing::Not;

std::string state_env(const fs::path& state) {
  return "env OAPROF_STATE_DIR=" + oaprof::testing::shell_quote(state.string()) + " ";
}

// The state directory a test keeps its results in, its own: a fresh 0700 directory under /tmp.
fs::path fresh_state_dir() {
  std::string pattern = (fs::temp_directory_path() / "oaprof-st-state-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return {};
  return pattern;
}

// Every selftest here keeps its result in a directory of its own, never in /run/oaprof, where
// other runs on the simulator (as root) would flag their rows by it.
class SelftestCliTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(state_.empty()); }
  void TearDown() override { fs::remove_all(state_); }
  std::string sim() const {
    return state_env(state_) + std::string(OAPROF_BIN) + " selftest --device sim --quick";
  }
  const fs::path state_ = fresh_state_dir();
};

// The checks docs/selftest.md's table documents ("| `name` | group | ..." under "## The checks").
std::set<std::string> documented_checks() {
  std::ifstream in(OAPROF_SELFTEST_DOC);
  std::set<std::string> names;
  bool in_table = false;
  const std::regex row(R"(^\| `([a-z0-9-]+)` \| [a-z -]+ \|)");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_table = line == "## The checks";
    std::smatch m;
    if (in_table && std::regex_search(line, m, row)) names.insert(m[1]);
  }
  return names;
}

TEST_F(SelftestCliTest, QuickRunPassesAndWritesTheDocumentedReport) {
  const fs::path json =
      fs::temp_directory_path() / ("oaprof-selftest-" + std::to_string(::getpid()) + ".json");
  // stdout alone: the table; progress goes to stderr.
  const auto r = run("{ " + sim() + " --json " + json.string() + " 2>/dev/null; }");
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
  // Every check runs and every one is documented: the report's names are the docs' table.
  std::set<std::string> reported;
  for (const auto& c : j["checks"]) reported.insert(c["name"].get<std::string>());
  EXPECT_EQ(reported.size(), j["checks"].size());
  EXPECT_GE(reported.size(), 14u);
  EXPECT_EQ(reported, documented_checks());
  for (const auto& c : j["checks"]) {
    for (const char* key :
         {"name", "group", "assumes", "tolerance", "verdict", "measurement", "reason", "figures"}) {
      EXPECT_TRUE(c.contains(key)) << c["name"] << " lacks " << key;
    }
    // The counters checks read kernel_runner's profile runs (the one beside oaprof), whose own
    // table stays off the selftest's stdout; as root without sudo none is started.
    if (c["group"] != "counters") continue;
    if (::geteuid() == 0) {
      EXPECT_THAT(c["reason"].get<std::string>(), HasSubstr("starts no GPU load as root"));
    } else {
      EXPECT_EQ(c["verdict"], "pass") << c["name"] << ": " << c["reason"];
    }
  }
  EXPECT_THAT(r.output, Not(HasSubstr("GFLOP/s")));
}

// --help names every check the selftest runs (its footer is made from the list of checks), each as
// a whole word: "energy" is not found inside "energy-model".
TEST_F(SelftestCliTest, HelpNamesEveryDocumentedCheck) {
  const auto help = run(std::string(OAPROF_BIN) + " selftest --help");
  ASSERT_EQ(help.status, 0) << help.output;
  const std::set<std::string> documented = documented_checks();
  ASSERT_GE(documented.size(), 14u);
  for (const std::string& name : documented) {
    EXPECT_TRUE(std::regex_search(help.output, std::regex(" " + name + "[,.]"))) << name;
  }
}

TEST_F(SelftestCliTest, AFaultFailsItsCheckWithExitStatusOneAndProgressOnStderr) {
  const auto r = run(sim() + " --sim-fault rapl-stuck");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fail  energy"));
  EXPECT_THAT(r.output, HasSubstr("oaprof selftest: energy…"));
  EXPECT_THAT(r.output, HasSubstr("1 failed"));
}

// The flags of the one row a profile run of `sleep` on the simulator writes.
std::string profiled_row_flags(const fs::path& state, const fs::path& csv) {
  const auto r = run(state_env(state) + std::string(OAPROF_BIN) +
                     " --device sim --daemon never --mode app --idle-baseline off -o " +
                     csv.string() + " -- sleep 0.02");
  EXPECT_EQ(r.status, 0) << r.output;
  const auto rows = oaprof::testing::read_csv(csv);
  EXPECT_EQ(rows.size(), 1u) << r.output;
  return rows.empty() ? "" : rows[0].at("flags");
}

// The issue's end to end: a selftest whose energy check failed makes the next profile run of that
// device flag its rows' energy; a later selftest that passed takes the flag away.
TEST_F(SelftestCliTest, AProfileRunFlagsRowsByTheDevicesLastSelftest) {
  const fs::path& state = state_;
  const fs::path csv = state / "rows.csv";
  auto r = run(sim() + " --sim-fault rapl-stuck");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("result kept in " + state.string()));
  EXPECT_THAT(profiled_row_flags(state, csv), HasSubstr("selftest_failed:energy"));

  r = run(sim());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(profiled_row_flags(state, csv), Not(HasSubstr("selftest_failed")));
}

// The issue's quick calibration check end to end: the model `oaprof model fit` writes for the
// simulated part passes; after the part's energy per busy cycle doubled it fails (exit 1); a file
// that is no model is a bad option (exit 2) before the device is opened.
TEST_F(SelftestCliTest, TheEnergyModelCheckJudgesTheModelFileItIsGiven) {
  const fs::path model = state_ / "model.json";
  auto r = run(std::string(OAPROF_BIN) + " model fit --device sim -o " + model.string());
  ASSERT_EQ(r.status, 0) << r.output;
  r = run(sim() + " --energy-model " + model.string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("pass  energy-model"));
  r = run(sim() + " --energy-model " + model.string() + " --sim-fault energy-model-drift");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fail  energy-model"));
  EXPECT_THAT(r.output, HasSubstr("1 failed"));
  const fs::path bad = state_ / "bad.json";
  std::ofstream(bad) << "{\"schema\": \"something else\"}";
  r = run(sim() + " --energy-model " + bad.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--energy-model " + bad.string()));
  EXPECT_THAT(r.output, Not(HasSubstr("oaprof selftest: topology")));  // nothing was measured
}

// --help and --help-all are the shared vocabulary's (cli_test.cc); an unknown fault is a usage
// error.
TEST_F(SelftestCliTest, AnUnknownFaultIsABadOption) {
  EXPECT_EQ(run(sim() + " --sim-fault gremlins").status, 2);
}

}  // namespace
