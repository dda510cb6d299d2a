// The shared command-line vocabulary (docs/cli.md), checked on the built binaries: --help short
// and without the testing options, --help-all with them, deprecated spellings that still work
// and warn, durations in one syntax, --json with and without FILE.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/common/run_util.h"

namespace {

using oaprof::testing::run;
using ::testing::HasSubstr;
using ::testing::Not;

struct Tool {
  std::string command;              // the binary and subcommand
  std::vector<std::string> hidden;  // options only --help-all shows
};

std::vector<Tool> tools() {
  const std::string oaprof = OAPROF_BIN;
  return {
      {oaprof,
       {"--sim-platform", "--sim-eus", "--sim-no-i915", "--sysfs-root", "--drm-card",
        "--debugfs-root"}},
      {oaprof + " decode", {}},
      {oaprof + " doctor",
       {"--sysfs-root", "--debugfs-root", "--proc-root", "--dev-root", "--sim-platform",
        "--systemd-dropins"}},
      {oaprof + " merge", {}},
      {oaprof + " metrics", {}},
      {oaprof + " metrics list", {}},
      {oaprof + " platforms", {}},
      {oaprof + " power", {"--sysfs-root", "--dev-root", "--proc-root", "--sim-gpu-activity"}},
      {oaprof + " report", {}},
      {oaprof + " selftest", {"--sim-platform", "--sim-fault"}},
      {OAPROFD_BIN, {"--sysfs-root", "--sim-platform", "--sim-busy"}},
      {KERNEL_RUNNER_BIN, {"--sysfs-root", "--dev-root"}},
  };
}

TEST(CliTest, HelpLinesFitIn100ColumnsAndHideTestingOptions) {
  for (const Tool& tool : tools()) {
    const auto help = run(tool.command + " --help 2>&1");
    ASSERT_EQ(help.status, 0) << tool.command << "\n" << help.output;
    std::istringstream lines(help.output);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_LE(line.size(), 100u) << tool.command << ": " << line;
    }
    EXPECT_THAT(help.output, HasSubstr("Exit status:")) << tool.command;
    EXPECT_THAT(help.output, Not(HasSubstr("deprecated"))) << tool.command;
    for (const auto& option : tool.hidden) {
      EXPECT_THAT(help.output, Not(HasSubstr(option))) << tool.command << " shows " << option;
    }
  }
}

TEST(CliTest, HelpAllShowsTestingOptions) {
  for (const Tool& tool : tools()) {
    const auto help = run(tool.command + " --help-all 2>&1");
    ASSERT_EQ(help.status, 0) << tool.command << "\n" << help.output;
    for (const auto& option : tool.hidden) {
      EXPECT_THAT(help.output, HasSubstr(option)) << tool.command << " hides " << option;
    }
    if (!tool.hidden.empty()) {
      EXPECT_THAT(help.output, HasSubstr("Testing and simulator")) << tool.command;
    }
  }
}

TEST(CliTest, KernelRunnerOldOpenClSpellingsWorkAndWarn) {
  const auto old = run(fmt::format("{} --platform 0 --device 0 --list 2>&1", KERNEL_RUNNER_BIN));
  EXPECT_EQ(old.status, 0) << old.output;
  EXPECT_THAT(old.output, HasSubstr("kernel_runner: --platform is deprecated; use --cl-platform"));
  EXPECT_THAT(old.output, HasSubstr("kernel_runner: --device is deprecated; use --cl-device"));
  EXPECT_THAT(old.output, HasSubstr("mad_vect4"));
  const auto now =
      run(fmt::format("{} --cl-platform 0 --cl-device 0 --list 2>&1", KERNEL_RUNNER_BIN));
  EXPECT_EQ(now.status, 0) << now.output;
  EXPECT_THAT(now.output, Not(HasSubstr("deprecated")));
}

TEST(CliTest, DoctorOldDebugfsSpellingWarns) {
  const auto old =
      run(fmt::format("{} doctor --debugfs /nonexistent --device sim "
                      "--no-opencl-devices 2>&1",
                      OAPROF_BIN));
  EXPECT_THAT(old.output, HasSubstr("oaprof doctor: --debugfs is deprecated; use --debugfs-root"));
  EXPECT_NE(old.status, 2) << old.output;  // accepted, whatever the checks find
}

TEST(CliTest, DurationsTakeOneSyntaxAndBareMilliseconds) {
  for (const char* value : {"1s", "250ms", "500us", "50"}) {
    const auto r = run(fmt::format("{} --min-time {} --list 2>&1", KERNEL_RUNNER_BIN, value));
    EXPECT_EQ(r.status, 0) << value << ": " << r.output;
  }
  const auto bad = run(fmt::format("{} --min-time 5parsecs --list 2>&1", KERNEL_RUNNER_BIN));
  EXPECT_EQ(bad.status, 2) << bad.output;
  const auto period = run(fmt::format("{} --metrics-period 500ms --help", OAPROFD_BIN));
  EXPECT_EQ(period.status, 0) << period.output;
  const auto short_period = run(fmt::format("{} --metrics-period 5ms --help", OAPROFD_BIN));
  EXPECT_EQ(short_period.status, 2) << short_period.output;  // 5 ms is below the 10 ms floor
  EXPECT_THAT(short_period.output, HasSubstr("--metrics-period"));
}

// --kubelet-pods is checked before anything starts: it needs the exporter, and a name to look
// up (as root) or an https URL is refused with what it takes.
TEST(CliTest, OaprofdRefusesAKubeletPodListItCannotUse) {
  const auto alone = run(fmt::format("{} --kubelet-pods /tmp/pods.json", OAPROFD_BIN));
  EXPECT_EQ(alone.status, 2) << alone.output;
  EXPECT_THAT(alone.output, HasSubstr("--kubelet-pods goes with --metrics-listen"));
  for (const char* bad : {"http://kubelet:10255/pods", "https://10.0.0.1:10250/pods"}) {
    const auto r =
        run(fmt::format("{} --metrics-listen 127.0.0.1:0 --kubelet-pods {}", OAPROFD_BIN, bad));
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("neither http://IP:PORT/PATH")) << bad;
  }
}

// --json takes a FILE: an optional value once swallowed the `--`, so the program's own options
// were parsed as oaprof's and the program never ran.
TEST(CliTest, ProfileJsonFileLeavesTheProgramsCommandLineAlone) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("cli_test_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const auto r = run(fmt::format(
      "{} --device sim --daemon never --energy none -q -o {}/rows.csv --json {}/run.json -- "
      "/bin/echo -n x 2>/dev/null",
      OAPROF_BIN, dir.string(), dir.string()));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output, "x");  // echo got its -n: nothing of oaprof's on stdout
  std::ifstream in(dir / "run.json");
  EXPECT_NO_THROW(EXPECT_TRUE(nlohmann::json::parse(in).contains("launches")));
  const auto bare =
      run(fmt::format("{} --device sim --daemon never --json -- /bin/echo x 2>&1", OAPROF_BIN));
  EXPECT_EQ(bare.status, 2) << bare.output;  // refused, not run
  std::filesystem::remove_all(dir);
}

TEST(CliTest, ProfileOldCsvSpellingWritesTheSameFileAndWarns) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("cli_csv_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string common =
      fmt::format("{} --device sim --daemon never --energy none -q", OAPROF_BIN);
  const auto old =
      run(fmt::format("{} --csv {}/old.csv -- {} mad_vect4 --max-repeats 2 --min-time 0", common,
                      dir.string(), KERNEL_RUNNER_BIN));
  EXPECT_EQ(old.status, 0) << old.output;
  EXPECT_THAT(old.output, HasSubstr("oaprof: --csv is deprecated; use -o/--output"));
  const auto now =
      run(fmt::format("{} --output {}/new.csv -- {} mad_vect4 --max-repeats 2 --min-time 0", common,
                      dir.string(), KERNEL_RUNNER_BIN));
  EXPECT_EQ(now.status, 0) << now.output;
  EXPECT_THAT(now.output, Not(HasSubstr("deprecated")));
  std::ifstream old_csv(dir / "old.csv"), new_csv(dir / "new.csv");
  std::string old_header, new_header;
  std::getline(old_csv, old_header);
  std::getline(new_csv, new_header);
  EXPECT_THAT(old_header, HasSubstr("kernel"));
  EXPECT_EQ(old_header, new_header);
  std::filesystem::remove_all(dir);
}

}  // namespace
