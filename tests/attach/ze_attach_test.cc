// oaprof attached to Level Zero programs (issue 31): the test programs of the simulated driver
// (tests/gpu/sim/level_zero/ze_sim_app.cc) run under `oaprof --device sim`, through both ways in
// (the loader's tracing layer and LD_PRELOAD), and their rows are checked launch by launch
// against what the program itself printed: names, group counts and sizes, order, threads.
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/common/known_work_rows.h"
#include "tests/common/run_util.h"

namespace {
namespace fs = std::filesystem;
using oaprof::testing::CsvRow;
using oaprof::testing::read_csv;
using oaprof::testing::run;
using ::testing::HasSubstr;

// One `launch NAME groups=X,Y,Z … [call=C] [pid=P] [held=1]` line of the program: a kernel
// execution as it saw it (the call defaults to zeCommandListAppendLaunchKernel's; held: it
// waited on an event the host signalled after the call).
struct AppLaunch {
  std::string name;
  std::uint64_t groups[3] = {0, 0, 0};
  std::string call = "launch";
  std::string pid;
  bool held = false;
};

// The value of ` key=VALUE` in `line`, or "".
std::string field(const std::string& line, const std::string& key) {
  const auto at = line.find(" " + key + "=");
  if (at == std::string::npos) return "";
  const auto start = at + key.size() + 2;
  return line.substr(start, line.find(' ', start) - start);
}

std::vector<AppLaunch> app_launches(const std::string& output) {
  std::vector<AppLaunch> out;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    AppLaunch l;
    unsigned x = 0, y = 0, z = 0;
    char name[64] = {};
    if (std::sscanf(line.c_str(), "launch %63s groups=%u,%u,%u", name, &x, &y, &z) != 4) continue;
    l.name = name;
    l.groups[0] = x;
    l.groups[1] = y;
    l.groups[2] = z;
    if (const std::string call = field(line, "call"); !call.empty()) l.call = call;
    l.pid = field(line, "pid");
    l.held = field(line, "held") == "1";
    out.push_back(l);
  }
  return out;
}

// "AxBxC" as three numbers.
std::vector<std::uint64_t> dims(const std::string& text) {
  std::vector<std::uint64_t> v;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, 'x');) v.push_back(std::stoull(part));
  return v;
}

// The row's group counts: its global size over its group size, in each dimension.
std::vector<std::uint64_t> group_counts(const CsvRow& row) {
  const auto global = dims(row.at("global_size")), local = dims(row.at("local_size"));
  std::vector<std::uint64_t> counts;
  for (std::size_t i = 0; i < global.size() && i < local.size(); ++i) {
    counts.push_back(local[i] == 0 ? 0 : global[i] / local[i]);
  }
  return counts;
}

// The rows in the program's order of launches (the `launch` column).
std::vector<CsvRow> in_launch_order(std::vector<CsvRow> rows) {
  std::sort(rows.begin(), rows.end(), [](const CsvRow& a, const CsvRow& b) {
    return std::stoull(a.at("launch")) < std::stoull(b.at("launch"));
  });
  return rows;
}

class ZeAttachTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (std::string(ZE_SIM_APP).empty() || std::string(ZE_SIM_SPIRV).empty()) {
      GTEST_SKIP() << "no Level Zero test program here (libze-dev, clang-15 or llvm-spirv-15)";
    }
    dir_ = fs::temp_directory_path() / fmt::format("oaprof-ze-{}-{}", ::getpid(), counter_++);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // `ze_sim_app scenario` under oaprof with this test's way in; `env`: variables before it.
  oaprof::testing::CommandResult profile(const std::string& scenario, const std::string& extra = "",
                                         const std::string& env = "") {
    return run(fmt::format("{} {} --device sim --energy none -q --inject {} -o {} {} -- {} {} {}",
                           env, OAPROF_BIN, GetParam(), csv().string(), extra, ZE_SIM_APP, scenario,
                           ZE_SIM_SPIRV));
  }
  fs::path csv() const { return dir_ / "out.csv"; }

  // Every row is a Level Zero launch whose name, group counts and order are the program's own.
  static void expect_rows_are_the_programs(const std::vector<CsvRow>& rows,
                                           const std::vector<AppLaunch>& app) {
    ASSERT_FALSE(app.empty());
    ASSERT_EQ(rows.size(), app.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      SCOPED_TRACE(fmt::format("launch {}", i));
      EXPECT_EQ(rows[i].at("kernel"), app[i].name);
      EXPECT_EQ(group_counts(rows[i]),
                (std::vector<std::uint64_t>{app[i].groups[0], app[i].groups[1], app[i].groups[2]}));
      EXPECT_EQ(rows[i].at("api"), "level-zero");
      EXPECT_EQ(rows[i].at("call"), app[i].call);
      EXPECT_EQ(rows[i].at("work_dim"), "3");
      EXPECT_FALSE(rows[i].at("kernel_ns").empty());
      EXPECT_GT(std::stod(rows[i].at("gpu_time_ns")), 0);
    }
  }

  static inline int counter_ = 0;
  fs::path dir_;
};

TEST_P(ZeAttachTest, ImmediateListLaunchesAreRowsInTheProgramsOrder) {
  const auto r = profile("immediate");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("check copy-and-fill ok"));
  const auto rows = in_launch_order(read_csv(csv()));
  expect_rows_are_the_programs(rows, app_launches(r.output));
  ASSERT_EQ(rows.size(), 3u) << r.output;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].at("launch"), std::to_string(i));
    EXPECT_EQ(rows[i].at("local_size"), "32x1x1");  // the program's zeKernelSetGroupSize
    EXPECT_EQ(rows[i].at("queue"), rows[0].at("queue"));
  }
}

// A regular list executed three times, reset and recorded anew: each execution of each kernel
// is one row, on the program's thread, and nothing of the list before its reset runs again.
TEST_P(ZeAttachTest, RegularListGivesARowPerKernelPerExecutionAndForgetsItsResetLaunches) {
  const auto r = profile("regular");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = in_launch_order(read_csv(csv()));
  expect_rows_are_the_programs(rows, app_launches(r.output));
  ASSERT_EQ(rows.size(), 7u) << r.output;
  for (const CsvRow& row : rows) {
    EXPECT_EQ(row.at("tid"), row.at("pid"));  // the thread that executed the list
    EXPECT_EQ(row.at("queue"), rows[0].at("queue"));
    EXPECT_THAT(row.at("flags"), ::testing::Not(HasSubstr("drain_failed")));
  }
}

// Four threads, two with queues and regular lists, two with immediate lists, all at once.
TEST_P(ZeAttachTest, QueuesAndListsOnFourThreadsGiveEveryLaunchOnItsThread) {
  const auto r = profile("threads");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(csv());
  const auto app = app_launches(r.output);
  ASSERT_EQ(rows.size(), 20u) << r.output;
  std::multiset<std::string> got, want;
  std::set<std::string> tids, queues;
  for (const CsvRow& row : rows) {
    const auto c = group_counts(row);
    got.insert(fmt::format("{} {}", row.at("kernel"), c.empty() ? 0 : c[0]));
    tids.insert(row.at("tid"));
    queues.insert(row.at("queue"));
  }
  for (const AppLaunch& l : app) want.insert(fmt::format("{} {}", l.name, l.groups[0]));
  EXPECT_EQ(got, want);
  EXPECT_EQ(tids.size(), 4u);
  EXPECT_EQ(queues.size(), 4u);
}

// Launches without events of the program's, on a synchronous immediate list and a regular list
// on a synchronous queue: measured, with kernel times from events of oaprof's.
TEST_P(ZeAttachTest, LaunchesWithoutEventsAndSynchronousQueuesAreMeasured) {
  const auto r = profile("no-events");
  ASSERT_EQ(r.status, 0) << r.output;
  expect_rows_are_the_programs(in_launch_order(read_csv(csv())), app_launches(r.output));
}

// Kernels destroyed mid-run: a regular list recorded with one keeps its name and required
// group size.
TEST_P(ZeAttachTest, AKernelDestroyedAfterItsAppendKeepsItsNameAndSize) {
  const auto r = profile("churn");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = in_launch_order(read_csv(csv()));
  expect_rows_are_the_programs(rows, app_launches(r.output));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[3].at("local_size"), "16x1x1");  // reqd_work_group_size(16, 1, 1)
}

// What the program itself said: its launches (names, counts, held or not) and its checks,
// without times, which differ from run to run.
std::vector<std::string> program_said(const std::string& output) {
  std::vector<std::string> said;
  for (const AppLaunch& l : app_launches(output)) {
    said.push_back(fmt::format("launch {} {} {}", l.name, l.groups[0], l.held));
  }
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("check ")) said.push_back(line);
  }
  return said;
}

bool has_flag(const CsvRow& row, const std::string& flag) {
  std::istringstream in(row.at("flags"));
  for (std::string f; std::getline(in, f, ';');) {
    if (f == flag) return true;
  }
  return false;
}

// The wait the layer allows a launch's waits before it gives up bracketing it, shortened from
// its 2 s for the test (a testing knob), and still far above what the simulator's events take.
constexpr const char* kShortHostWait = "OAPROF_ZE_HOST_WAIT_MS=1000";

// A launch held by an event the host signals after the call cannot be bracketed alone (the
// layer would wait for ever). On an immediate list and on a regular list (`barriers`), it still
// has exactly one row, named as the program's, with its kernel time, measured from when the
// layer gave up waiting to when it was seen complete and flagged not_bracketed; every launch
// bracketed alone keeps its row unflagged; one warning says so; the program sees its launches
// held as without oaprof, with the same output and exit status.
TEST_P(ZeAttachTest, ALaunchHeldByTheHostIsMeasuredOverAWiderWindowAndFlagged) {
  const auto alone = run(fmt::format("ZE_ENABLE_ALT_DRIVERS={} {} barriers {}", ZE_SIM_DRIVER,
                                     ZE_SIM_APP, ZE_SIM_SPIRV));
  ASSERT_EQ(alone.status, 0) << alone.output;
  const auto r = profile("barriers", "", kShortHostWait);
  ASSERT_EQ(r.status, alone.status) << r.output;
  EXPECT_EQ(program_said(r.output), program_said(alone.output)) << r.output;
  EXPECT_THAT(r.output, HasSubstr("check held-until-signalled ok"));
  EXPECT_THAT(r.output, HasSubstr("check regular-held-until-signalled ok"));
  EXPECT_THAT(r.output, HasSubstr("flagged not_bracketed"));
  const auto rows = in_launch_order(read_csv(csv()));
  const auto app = app_launches(r.output);
  expect_rows_are_the_programs(rows, app);
  ASSERT_EQ(rows.size(), app.size());
  int held = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(fmt::format("launch {}: {}", i, rows[i].at("flags")));
    EXPECT_EQ(has_flag(rows[i], "not_bracketed"), app[i].held);
    if (!app[i].held) continue;
    ++held;
    EXPECT_GT(std::stod(rows[i].at("gpu_ticks")), 0);
  }
  EXPECT_EQ(held, 3) << "two held launches on an immediate list (one behind the other), one on a "
                        "regular list";
}

// Kernels far longer than the slices the layer waits in (`long`: 20 ms each, two on an
// immediate list, one behind the other, and one on a regular list) are bracketed whole: the
// layer waits for the list's earlier work and for the kernel as long as they take, so no row is
// flagged, and each row's GPU time holds its kernel's.
TEST_P(ZeAttachTest, LongKernelsAreBracketedWhole) {
  const auto r = profile("long");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = in_launch_order(read_csv(csv()));
  expect_rows_are_the_programs(rows, app_launches(r.output));
  ASSERT_EQ(rows.size(), 3u) << r.output;
  for (const CsvRow& row : rows) {
    SCOPED_TRACE(fmt::format("launch {}: {}", row.at("launch"), row.at("flags")));
    EXPECT_FALSE(has_flag(row, "drain_failed"));
    EXPECT_FALSE(has_flag(row, "not_bracketed"));
    const double kernel = std::stod(row.at("kernel_ns")), gpu = std::stod(row.at("gpu_time_ns"));
    EXPECT_GE(kernel, 19e6);
    EXPECT_GT(gpu, 0.9 * kernel);
  }
}

// -k, --launch-skip: counted over every execution of every kernel, in the program's order.
TEST_P(ZeAttachTest, TheLaunchSelectionCountsEveryExecution) {
  const auto r = profile("regular", "-k add_one --launch-skip 1");
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::string> launches;
  for (const CsvRow& row : in_launch_order(read_csv(csv()))) {
    EXPECT_EQ(row.at("kernel"), "add_one");
    launches.push_back(row.at("launch"));
  }
  EXPECT_EQ(launches, (std::vector<std::string>{"3", "5", "6"}));
}

// The selection under sampled attribution: the same launch numbers as bracketed, on immediate
// and regular lists.
TEST_P(ZeAttachTest, TheLaunchSelectionIsTheSameUnderSampledAttribution) {
  struct Case {
    std::string scenario, kernel;
    std::vector<std::string> want;
  };
  for (const Case& c :
       {Case{"regular", "add_one", {"3", "5", "6"}}, Case{"immediate", "scale", {"2"}}}) {
    const auto r = profile(c.scenario, "-k " + c.kernel + " --launch-skip 1 --attribution sampled");
    ASSERT_EQ(r.status, 0) << r.output;
    std::vector<std::string> launches;
    for (const CsvRow& row : in_launch_order(read_csv(csv()))) launches.push_back(row.at("launch"));
    EXPECT_EQ(launches, c.want) << c.scenario;
  }
}

// Kernel replay is not built for Level Zero: said once, and every launch still runs once.
TEST_P(ZeAttachTest, KernelReplayIsRefusedWithAWarningAndLaunchesRunOnce) {
  const auto r = profile("immediate", "--replay 3");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("kernel replay (--replay) is not built for Level Zero"));
  const auto rows = read_csv(csv());
  ASSERT_EQ(rows.size(), 3u) << r.output;
  for (const CsvRow& row : rows) EXPECT_EQ(row.at("replay_passes"), "1");
}

// The rows of a run, in launch order, as the fields both attributions must agree on.
std::vector<std::string> row_keys(const std::vector<CsvRow>& rows) {
  std::vector<std::string> keys;
  for (const CsvRow& row : in_launch_order(rows)) {
    keys.push_back(fmt::format("{} {} {} {} {} {}", row.at("launch"), row.at("kernel"),
                               row.at("global_size"), row.at("local_size"), row.at("api"),
                               row.at("call")));
  }
  return keys;
}

// Sampled attribution times Level Zero launches by kernel-timestamp events read at the
// program's sync points: the same programs give the same rows as bracketed (names, counts,
// order, sizes), each a sampled row with its error bound, inside the run, whose window is the
// kernel's (its GPU time is its kernel time) and shares it with no other launch, as the one
// engine of the simulated GPU runs them one at a time.
TEST_P(ZeAttachTest, SampledAttributionGivesTheRowsOfBracketedWithKernelWindows) {
  for (const std::string scenario : {"immediate", "regular", "no-events", "churn", "threads"}) {
    SCOPED_TRACE(scenario);
    const auto bracketed = profile(scenario);
    ASSERT_EQ(bracketed.status, 0) << bracketed.output;
    auto want = row_keys(read_csv(csv()));
    const auto sampled = profile(scenario, "--attribution sampled");
    ASSERT_EQ(sampled.status, 0) << sampled.output;
    const auto rows = read_csv(csv());
    auto got = row_keys(rows);
    if (scenario == "threads") {  // four threads: the launch numbers' order is the scheduler's
      for (auto* keys : {&want, &got}) {
        for (std::string& k : *keys) k = k.substr(k.find(' ') + 1);
        std::sort(keys->begin(), keys->end());
      }
    }
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(got, want) << sampled.output;
    for (const CsvRow& row : rows) {
      SCOPED_TRACE(row.at("launch"));
      EXPECT_FALSE(row.at("attribution_error").empty());
      // Its window lies inside the run, where the counters were read.
      EXPECT_THAT(row.at("flags"), ::testing::Not(HasSubstr("not_attributed")));
      EXPECT_EQ(std::stod(row.at("overlap_share")), 0.0);
      const double kernel = std::stod(row.at("kernel_ns")), gpu = std::stod(row.at("gpu_time_ns"));
      EXPECT_NEAR(gpu, kernel, 0.02 * kernel + 100e3);
    }
  }
}

// Sampled attribution waits for nothing the program does not: a launch held until the host
// signals its event runs measured, and the program's own events (kernel-timestamp pools in
// `barriers`, a pool without them in `plain-events`) keep their meaning.
TEST_P(ZeAttachTest, SampledAttributionKeepsTheProgramsEventsAndHoldsNothing) {
  const auto held = profile("barriers", "--attribution sampled");
  ASSERT_EQ(held.status, 0) << held.output;
  EXPECT_THAT(held.output, HasSubstr("check held-until-signalled ok"));
  EXPECT_THAT(held.output, ::testing::Not(HasSubstr("not_bracketed")));
  for (const CsvRow& row : read_csv(csv())) EXPECT_FALSE(has_flag(row, "not_bracketed"));
  expect_rows_are_the_programs(in_launch_order(read_csv(csv())), app_launches(held.output));
  const auto plain = profile("plain-events", "--attribution sampled");
  ASSERT_EQ(plain.status, 0) << plain.output;
  EXPECT_THAT(plain.output, HasSubstr("check plain-event-status ok"));
  const auto rows = in_launch_order(read_csv(csv()));
  expect_rows_are_the_programs(rows, app_launches(plain.output));
  ASSERT_EQ(rows.size(), 3u) << plain.output;
}

// A program that never synchronises and launches slowly still gets its rows during the run
// (AskPolicy: a launch that waited 50 ms is asked at the next launch): the program sees the
// first launch's row in the file before it ends. Waiting for its exit instead held every row,
// and those older than the counter timeline's history came out not_attributed.
TEST_P(ZeAttachTest, ASlowProgramThatNeverSynchronisesGetsItsRowsDuringTheRun) {
  const auto r = profile("unsynced", "--attribution sampled",
                         fmt::format("ZE_SIM_APP_ROWS={}", csv().string()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("check row-before-sync ok"));
  const auto rows = in_launch_order(read_csv(csv()));
  expect_rows_are_the_programs(rows, app_launches(r.output));
  for (const CsvRow& row : rows) EXPECT_FALSE(has_flag(row, "not_attributed"));
}

// A program that misuses Level Zero (bad and null handles, null pointers, in the calls the layer
// reads) gets the same result codes with and without oaprof, in both attributions.
TEST_P(ZeAttachTest, MisuseGetsTheSameResultCodesAsWithoutOaprof) {
  const auto alone = run(fmt::format("ZE_ENABLE_ALT_DRIVERS={} {} misuse {}", ZE_SIM_DRIVER,
                                     ZE_SIM_APP, ZE_SIM_SPIRV));
  ASSERT_EQ(alone.status, 0) << alone.output;
  auto results = [](const std::string& output) {
    std::string lines;
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("result ", 0) == 0) lines += line + "\n";
    }
    return lines;
  };
  ASSERT_THAT(results(alone.output), HasSubstr("result zeContextDestroy(null)"));
  for (const std::string attribution : {"bracketed", "sampled"}) {
    SCOPED_TRACE(attribution);
    const auto profiled = profile("misuse", "--attribution " + attribution);
    EXPECT_EQ(profiled.status, alone.status) << profiled.output;
    EXPECT_EQ(results(profiled.output), results(alone.output));
  }
}

// A GPU hang (`device-lost`: add_one on an immediate list; add_one, the simulated driver's
// sim_hang and scale in a regular list; add_one appended after the loss). The program gets the
// same results and exit status as without oaprof. Bracketed: what ran before the hang is a
// row; the hung kernel's row is flagged drain_failed (its 'after' came when the wait failed,
// not when it ended); the launches behind it run unmeasured, with one warning naming the lost
// device, and none is held and flagged not_bracketed as if the host had not signalled yet.
// Sampled: the launches that completed are rows (the regular list's add_one too, though it
// completed beside launches that never will), those that never did are none, and one warning
// says so.
TEST_P(ZeAttachTest, AfterTheDeviceIsLostLaunchesRunUnmeasuredAndOneWarningSaysWhy) {
  const auto alone = run(fmt::format("ZE_ENABLE_ALT_DRIVERS={} {} device-lost {}", ZE_SIM_DRIVER,
                                     ZE_SIM_APP, ZE_SIM_SPIRV));
  ASSERT_EQ(alone.status, 0) << alone.output;
  auto said = [](const std::string& output) {
    std::vector<std::string> lines = program_said(output);
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("result ")) lines.push_back(line);
    }
    return lines;
  };
  ASSERT_EQ(said(alone.output).size(), 7u) << alone.output;  // two launches, five results
  auto kernels = [&] {
    std::vector<std::string> names;
    for (const CsvRow& row : in_launch_order(read_csv(csv()))) {
      names.push_back(row.at("kernel") + (has_flag(row, "drain_failed") ? " drain_failed" : ""));
      EXPECT_FALSE(has_flag(row, "not_bracketed")) << row.at("kernel");
    }
    return names;
  };
  const auto bracketed = profile("device-lost");
  ASSERT_EQ(bracketed.status, alone.status) << bracketed.output;
  EXPECT_EQ(said(bracketed.output), said(alone.output)) << bracketed.output;
  EXPECT_EQ(kernels(), (std::vector<std::string>{"add_one", "add_one", "sim_hang drain_failed"}));
  EXPECT_THAT(bracketed.output, HasSubstr("(device lost) to oaprof's wait"));
  EXPECT_THAT(bracketed.output, ::testing::Not(HasSubstr("not signalled within")));
  const auto sampled = profile("device-lost", "--attribution sampled");
  ASSERT_EQ(sampled.status, alone.status) << sampled.output;
  EXPECT_EQ(said(sampled.output), said(alone.output)) << sampled.output;
  EXPECT_EQ(kernels(), (std::vector<std::string>{"add_one", "add_one"}));
  EXPECT_THAT(sampled.output, HasSubstr("reported the device lost (ZE_RESULT_ERROR_DEVICE_LOST)"));
}

// Cooperative, indirect and multiple-indirect launches, on an immediate list and in a regular
// list executed twice, in both attributions: each is a row with its call, and the group counts
// (and kernel count) a copy in the list wrote just before it, read once it ran.
TEST_P(ZeAttachTest, EveryLaunchCallIsARowWithTheCountsItRanWith) {
  for (const std::string attribution : {"bracketed", "sampled"}) {
    SCOPED_TRACE(attribution);
    const auto r = profile("launch-kinds", "--attribution " + attribution);
    ASSERT_EQ(r.status, 0) << r.output;
    const auto rows = in_launch_order(read_csv(csv()));
    expect_rows_are_the_programs(rows, app_launches(r.output));
    ASSERT_EQ(rows.size(), 9u) << r.output;
    EXPECT_EQ(rows[8].at("kernel"), "scale+add_one+scale");  // its count was 3 that time
  }
}

// Sampled attribution waits for nothing, so an indirect launch's counts are read once its event
// says it ran: here a copy that the host holds until after the launch calls and the execution
// returned writes them.
TEST_P(ZeAttachTest, SampledIndirectLaunchesGetTheCountsWrittenAfterTheirCall) {
  const auto r = profile("launch-kinds-held", "--attribution sampled");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = in_launch_order(read_csv(csv()));
  expect_rows_are_the_programs(rows, app_launches(r.output));
  ASSERT_EQ(rows.size(), 9u) << r.output;
}

// A child forked after the parent's launches, launching in a context of its own: its rows are
// its own (its pid, its launches in its order), and the parent's before and after the fork are
// the parent's, in both attributions.
TEST_P(ZeAttachTest, AForkedChildsLaunchesAreRowsOfItsOwn) {
  for (const std::string attribution : {"bracketed", "sampled"}) {
    SCOPED_TRACE(attribution);
    const auto r = profile("fork", "--attribution " + attribution);
    ASSERT_EQ(r.status, 0) << r.output;
    std::map<std::string, std::vector<CsvRow>> rows_of;
    for (const CsvRow& row : in_launch_order(read_csv(csv())))
      rows_of[row.at("pid")].push_back(row);
    std::map<std::string, std::vector<AppLaunch>> app_of;
    for (const AppLaunch& l : app_launches(r.output)) app_of[l.pid].push_back(l);
    ASSERT_EQ(app_of.size(), 2u) << r.output;
    ASSERT_EQ(rows_of.size(), 2u) << r.output;
    for (const auto& [pid, launches] : app_of) {
      SCOPED_TRACE("pid " + pid);
      expect_rows_are_the_programs(rows_of[pid], launches);
    }
  }
}

// OpenCL (PoCL) and Level Zero launches in one process, in turn: both recorded, in both
// attributions, the `api` column saying which, each API's launches numbered in its order.
TEST_P(ZeAttachTest, OpenClAndLevelZeroInOneProcessAreBothRecorded) {
  for (const std::string attribution : {"bracketed", "sampled"}) {
    SCOPED_TRACE(attribution);
    const auto r = profile("with-opencl", "--attribution " + attribution);
    ASSERT_EQ(r.status, 0) << r.output;
    std::vector<CsvRow> ze_rows;
    std::vector<std::string> cl_rows;
    for (const CsvRow& row : in_launch_order(read_csv(csv()))) {
      if (row.at("api") == "level-zero") {
        ze_rows.push_back(row);
        continue;
      }
      EXPECT_EQ(row.at("api"), "opencl");
      EXPECT_EQ(row.at("call"), "ndrange");
      cl_rows.push_back(
          fmt::format("{} {} {}", row.at("launch"), row.at("kernel"), row.at("global_size")));
    }
    expect_rows_are_the_programs(ze_rows, app_launches(r.output));
    EXPECT_EQ(ze_rows.size(), 2u);
    EXPECT_EQ(cl_rows, (std::vector<std::string>{"0 tick 64", "1 tick 128"})) << r.output;
  }
}

// Issue 35: Level Zero rows with an energy model, as OpenCL's: every row, bracketed or sampled,
// has a modelled energy with an error bar. And a bracketed launch names its kernel and
// work-items to the simulator as the OpenCL layer does (OAPROF_WORK_HINTS), so the rows of
// mad_vect4 (a catalogue kernel's name) count that kernel's known work, on an immediate list and
// in a regular list alike; scale, no catalogue kernel, keeps the simulator's workload fractions.
TEST_P(ZeAttachTest, WithAnEnergyModelEveryRowHasAModelledEnergyAndCountsItsKnownWork) {
  const fs::path model = dir_ / "model.json";
  const auto fit = run(
      fmt::format("{} model fit --device sim --replicates 40 -o {}", OAPROF_BIN, model.string()));
  ASSERT_EQ(fit.status, 0) << fit.output;
  for (const std::string attribution : {"bracketed", "sampled"}) {
    SCOPED_TRACE(attribution);
    const auto r = run(fmt::format(
        "{} --device sim --format 101 -q --inject {} --attribution {} --energy-model {} -o {} -- "
        "{} catalogue {}",
        OAPROF_BIN, GetParam(), attribution, model.string(), csv().string(), ZE_SIM_APP,
        ZE_SIM_SPIRV));
    ASSERT_EQ(r.status, 0) << r.output;
    const auto rows = in_launch_order(read_csv(csv()));
    expect_rows_are_the_programs(rows, app_launches(r.output));
    ASSERT_EQ(rows.size(), 6u) << r.output;
    for (const CsvRow& row : rows) {
      SCOPED_TRACE(row.at("launch") + " " + row.at("kernel"));
      EXPECT_GT(std::stod(row.at("energy_model_j")), 0);
      EXPECT_GT(std::stod(row.at("energy_model_err_j")), 0);
      if (attribution == "bracketed" && row.at("kernel") == "mad_vect4") {
        oaprof::testing::expect_counts_match_known_work(row);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(WaysIn, ZeAttachTest, ::testing::Values("layer", "preload"));

}  // namespace
