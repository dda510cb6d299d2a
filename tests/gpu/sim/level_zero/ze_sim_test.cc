// The simulated Level Zero driver under Debian's real loader: the test programs of ze_sim_app.cc
// run with ZE_ENABLE_ALT_DRIVERS naming the driver, and their output is checked launch by launch.
#include <gtest/gtest.h>
#include <level_zero/ze_api.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/run_util.h"

namespace {

using oaprof::testing::run;

std::string skip_reason() {
  if (std::string(ZE_SIM_MISSING).empty() == false) return ZE_SIM_MISSING;
  if (std::string(ZE_SIM_APP).empty()) return "ze_sim_app was not built (no Level Zero loader)";
  return "";
}

// One `launch` line of the program's output.
struct LaunchLine {
  std::string name;
  std::string groups;
  std::uint64_t start = 0, end = 0;
  bool timed = false;
};

struct AppRun {
  int status = -1;
  std::string output;
  std::vector<LaunchLine> launches;
  std::map<std::string, std::string> values;  // key=value fields of other lines, by key
};

std::uint64_t field(const std::string& line, const std::string& key) {
  const auto at = line.find(" " + key + "=");
  if (at == std::string::npos) return 0;
  return std::stoull(line.substr(at + key.size() + 2));
}

AppRun run_app(const std::string& scenario, const std::string& env = "") {
  AppRun r;
  const auto result = run(std::string("ZE_ENABLE_ALT_DRIVERS=") + ZE_SIM_DRIVER + " " + env + " " +
                          ZE_SIM_APP + " " + scenario + " " + ZE_SIM_SPIRV);
  r.status = result.status;
  r.output = result.output;
  std::istringstream in(result.output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string kind, name, groups;
    words >> kind >> name >> groups;
    if (kind == "launch") {
      const bool timed = line.find(" start=") != std::string::npos;
      r.launches.push_back({name, groups, field(line, "start"), field(line, "end"), timed});
    } else if (kind == "check" || kind == "result") {
      r.values[name] = groups;
    } else if (kind == "run") {
      r.values["device_start"] = std::to_string(field(line, "device_start"));
      r.values["device_end"] = std::to_string(field(line, "device_end"));
    }
  }
  return r;
}

class ZeSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  }
};

// Kernel timestamps: each launch's window is ordered, after the previous one's, and inside the
// run's device-timer interval.
void expect_windows_in_run(const AppRun& r) {
  const std::uint64_t run_start = std::stoull(r.values.at("device_start"));
  const std::uint64_t run_end = std::stoull(r.values.at("device_end"));
  std::uint64_t previous_end = run_start;
  for (const LaunchLine& l : r.launches) {
    if (!l.timed) continue;
    EXPECT_LE(previous_end, l.start) << l.name;
    EXPECT_LT(l.start, l.end) << l.name;
    EXPECT_LE(l.end, run_end) << l.name;
    previous_end = l.end;
  }
}

TEST_F(ZeSimTest, ImmediateListRunsKernelsCopiesAndFills) {
  const AppRun r = run_app("immediate");
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_EQ(r.launches.size(), 3u) << r.output;
  EXPECT_EQ(r.launches[0].name, "scale");
  EXPECT_EQ(r.launches[0].groups, "groups=4,1,1");
  EXPECT_EQ(r.launches[1].name, "add_one");
  EXPECT_EQ(r.launches[2].groups, "groups=16,1,1");
  EXPECT_EQ(r.values.at("copy-and-fill"), "ok");
  expect_windows_in_run(r);
  EXPECT_NE(r.output.find("device oaprof simulated Intel GPU"), std::string::npos) << r.output;
}

// The loader's tracing layer, through which oaprof intercepts Level Zero, sits above the driver.
TEST_F(ZeSimTest, ImmediateListRunsUnderTheLoadersTracingLayer) {
  const AppRun r = run_app("immediate", "ZE_ENABLE_TRACING_LAYER=1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.launches.size(), 3u) << r.output;
  EXPECT_EQ(r.values.at("copy-and-fill"), "ok");
}

// The names of the launches, in the order printed.
std::vector<std::string> names(const AppRun& r) {
  std::vector<std::string> out;
  for (const LaunchLine& l : r.launches) out.push_back(l.name);
  return out;
}

TEST_F(ZeSimTest, RegularListRunsAtEveryExecutionAndNotAfterReset) {
  const AppRun r = run_app("regular");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(names(r), (std::vector<std::string>{"scale", "add_one", "scale", "add_one", "scale",
                                                "add_one", "add_one"}))
      << r.output;
  EXPECT_EQ(r.launches.back().groups, "groups=2,1,1");  // recorded anew after the reset
  expect_windows_in_run(r);
}

TEST_F(ZeSimTest, QueuesOnSeveralThreadsShareOneEngine) {
  AppRun r = run_app("threads");
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_EQ(r.launches.size(), 20u) << r.output;
  std::map<std::string, int> per_groups;
  for (const LaunchLine& l : r.launches) ++per_groups[l.name + " " + l.groups];
  EXPECT_EQ(per_groups, (std::map<std::string, int>{{"scale groups=256,1,1", 5},
                                                    {"add_one groups=512,1,1", 5},
                                                    {"scale groups=768,1,1", 5},
                                                    {"add_one groups=1024,1,1", 5}}));
  // One engine: in start order, no window overlaps the one before.
  std::sort(r.launches.begin(), r.launches.end(),
            [](const LaunchLine& a, const LaunchLine& b) { return a.start < b.start; });
  expect_windows_in_run(r);
}

TEST_F(ZeSimTest, ListsWithoutEventsRun) {
  const AppRun r = run_app("no-events");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(names(r), (std::vector<std::string>{"add_one", "add_one"})) << r.output;
}

TEST_F(ZeSimTest, BarriersOrderKernelsAndAWaitHoldsUntilTheHostSignals) {
  const AppRun r = run_app("barriers");
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_EQ(r.launches.size(), 6u) << r.output;
  EXPECT_EQ(r.values.at("held-until-signalled"), "ok") << r.output;
  EXPECT_EQ(r.values.at("regular-held-until-signalled"), "ok") << r.output;
  expect_windows_in_run(r);
}

// Events of a pool without kernel timestamps complete with their kernel, also when it waits on
// the host (the program checks it; oaprof's sampled attribution must keep it so).
TEST_F(ZeSimTest, PlainEventsCompleteWithTheirKernels) {
  const AppRun r = run_app("plain-events");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(names(r), (std::vector<std::string>{"scale", "scale", "scale"})) << r.output;
  EXPECT_EQ(r.values.at("plain-event-status"), "ok") << r.output;
}

TEST_F(ZeSimTest, KernelsCreatedAndDestroyedMidRunKeepTheirNames) {
  const AppRun r = run_app("churn");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(names(r), (std::vector<std::string>{"add_one", "scale", "add_one", "fixed_group"}))
      << r.output;
}

TEST_F(ZeSimTest, MisuseGetsResultCodesNotACrash) {
  const AppRun r = run_app("misuse");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto code = [](ze_result_t c) { return fmt::format("0x{:x}", static_cast<unsigned>(c)); };
  std::map<std::string, std::string> expected{
      {"zeKernelCreate(null-module)", code(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)},
      {"zeKernelCreate(unknown-name)", code(ZE_RESULT_ERROR_INVALID_KERNEL_NAME)},
      {"zeKernelSetGroupSize(destroyed)", code(ZE_RESULT_ERROR_INVALID_ARGUMENT)},
      {"zeKernelSetArgumentValue(index)", code(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)},
      {"zeKernelSetArgumentValue(size)", code(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)},
      {"zeKernelSetGroupSize(zero)", code(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION)},
      {"zeCommandListAppendLaunchKernel(null-kernel)", code(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)},
      {"zeCommandQueueExecuteCommandLists(open-list)", code(ZE_RESULT_ERROR_INVALID_ARGUMENT)},
      {"zeEventHostSynchronize(null)", code(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)},
      {"zeModuleCreate(malformed)", code(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)},
      {"zeModuleDestroy(in-use)", code(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE)},
      {"zeImageCreate(unsupported)", code(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)},
      {"zeMemFree(foreign)", code(ZE_RESULT_ERROR_INVALID_ARGUMENT)},
      {"zeCommandQueueExecuteCommandLists(null-lists)", code(ZE_RESULT_ERROR_INVALID_NULL_POINTER)},
      {"zeCommandQueueExecuteCommandLists(destroyed-list)", code(ZE_RESULT_ERROR_INVALID_ARGUMENT)},
      {"launch(null-list)", code(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)}};
  // The layer's null-pointer cases, the same on a regular and an immediate list (ze_api.h of
  // libze-dev 1.8.12: a null wait list with a count is ZE_RESULT_ERROR_INVALID_SIZE).
  for (const char* kind : {"regular", "immediate"}) {
    const auto add = [&](const char* call, const char* what, ze_result_t c) {
      expected[fmt::format("{}({},{})", call, kind, what)] = code(c);
    };
    add("launch", "null-groups", ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    add("launch", "null-waits", ZE_RESULT_ERROR_INVALID_SIZE);
    add("indirect", "null-args", ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    add("multiple", "null-kernels", ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    add("cooperative", "null-kernel", ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  }
  // The books' calls with null handles and pointers.
  for (const char* call :
       {"zeCommandListReset(null)", "zeCommandListDestroy(null)", "zeEventCreate(null-pool)",
        "zeEventPoolDestroy(null)", "zeEventDestroy(null)", "zeEventHostReset(null)",
        "zeKernelSetGroupSize(null)", "zeKernelDestroy(null)", "zeCommandQueueSynchronize(null)",
        "zeFenceHostSynchronize(null)", "zeContextDestroy(null)"}) {
    expected[call] = code(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  }
  for (const char* call :
       {"zeEventPoolCreate(null-desc)", "zeEventPoolCreate(null-out)",
        "zeCommandListCreate(null-out)", "zeCommandListCreateImmediate(null-desc)"}) {
    expected[call] = code(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  }
  EXPECT_EQ(r.values, expected) << r.output;
}

// The simulated GPU hang: what ran before it completes, and every wait for the hung kernel or
// what came after it answers ZE_RESULT_ERROR_DEVICE_LOST (an append is still taken), at once
// rather than after the program's unbounded timeout.
TEST_F(ZeSimTest, AHungKernelLosesTheDeviceForEveryWaitBehindIt) {
  const AppRun r = run_app("device-lost");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(names(r), (std::vector<std::string>{"add_one", "add_one"})) << r.output;
  const std::string lost =
      fmt::format("0x{:x}", static_cast<unsigned>(ZE_RESULT_ERROR_DEVICE_LOST));
  EXPECT_EQ(r.values.at("zeFenceHostSynchronize(hung)"), lost) << r.output;
  EXPECT_EQ(r.values.at("zeEventHostSynchronize(hung-kernel)"), lost) << r.output;
  EXPECT_EQ(r.values.at("zeCommandListAppendLaunchKernel(after-loss)"), "0x0") << r.output;
  EXPECT_EQ(r.values.at("zeEventHostSynchronize(after-loss)"), lost) << r.output;
  EXPECT_EQ(r.values.at("zeCommandQueueSynchronize(hung)"), lost) << r.output;
}

}  // namespace
