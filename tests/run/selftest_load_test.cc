// The selftest's GPU load (run/selftest_load.h), up to the system calls: kernel_runner started
// as the invoking user with the load's arguments, waited for until it launches, stopped and
// reaped on every way out of a check, and the skip (with where it looked, or its last words)
// when there is none. The simulator's busy windows start it too here (SimLoad), as real
// hardware's do; fake kernel_runners (shell scripts) say what they were started with.
#include "run/selftest_load.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "selftest_test_util.h"
#include "tests/common/energy_model_fixture.h"

namespace oaprof::run::selftest {
namespace {

namespace fs = std::filesystem;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The checks whose busy windows need a load, and skip without one (context-switch: two, one after
// the other, each a GPU context of its own).
const std::vector<std::string> kLoadedChecks = {"readouts-agree", "rpc-vs-periodic", "noa-counting",
                                                "flex-routing", "context-switch"};
// Those and energy, whose busy windows run under one too; without one it judges the rest.
const std::vector<std::string> kEveryLoadedCheck = {"readouts-agree", "rpc-vs-periodic",
                                                    "noa-counting",   "flex-routing",
                                                    "context-switch", "energy"};
// The simulated KBL's read-outs, each of which context-switch measures through.
constexpr std::size_t kKblAccesses = 3;

constexpr const char* kLaunching =
    "echo 'kernel_runner: busy: mad_vect8 launching on fake GPU for 60 s' >&2\nexec sleep 30";

// Gone and reaped: not even a zombie answers.
bool reaped(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

SelftestReport run_with_load(const FakeKernelRunner& fake, SimLoad load,
                             std::optional<std::string> no_load = std::nullopt,
                             std::shared_ptr<const model::EnergyModel> energy_model = nullptr) {
  SelftestOptions o = sim_options("kblgt2");
  o.energy_model = std::move(energy_model);
  // The energy check compares the GPU's power over idle and busy windows, read from RAPL planes
  // that (like the hardware's) update every 1 ms: over the 5 ms windows of the other tests a
  // window's power may be off by a fifth, by where the updates fell, which on a loaded machine
  // made a load the planes did not see look like a rise (1 run in 3 under the sanitizers beside
  // stress-ng). 25 ms windows keep that under a twentieth, below the rise the check asks for.
  o.window_ns = 25'000'000;
  o.kernel_runner_dir = fake.dir();
  o.sim_load = load;
  o.no_load = std::move(no_load);
  return run_selftest(o);
}

class SelftestLoadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_shared_metrics_path(); }
  SudoEnv sudo_{std::string("65534")};
};

// Each busy check starts kernel_runner as the invoking user with the load's arguments, measures
// under it (it says so) and leaves it stopped and reaped.
TEST_F(SelftestLoadTest, EachBusyCheckRunsUnderKernelRunnerAsTheUserAndReapsIt) {
  const FakeKernelRunner fake(kLaunching);
  const SelftestReport report = run_with_load(fake, SimLoad::kModelAndProcess);
  EXPECT_TRUE(failed(report).empty()) << report_table(report);
  EXPECT_THAT(check(report, "energy").measurement, Not(HasSubstr("not judged")));
  for (const std::string& name : kEveryLoadedCheck) {
    const CheckResult& r = check(report, name);
    EXPECT_EQ(r.verdict, Verdict::kPass) << name << ": " << r.reason;
    EXPECT_THAT(r.measurement,
                HasSubstr("; load: kernel_runner mad_vect8 launching on fake GPU for 60 s (pid "))
        << name;
  }
  EXPECT_THAT(check(report, "context-switch").measurement,
              HasSubstr("perf kept it; load: kernel_runner mad_vect8 launching on fake GPU for "));
  EXPECT_THAT(check(report, "context-switch").measurement, HasSubstr(", then a new one: pid "));
  // One load a check, and two for each read-out context-switch measures through.
  const std::vector<pid_t> pids = fake.pids();
  EXPECT_EQ(pids.size(), kEveryLoadedCheck.size() - 1 + 2 * kKblAccesses);
  for (const pid_t pid : pids) EXPECT_TRUE(reaped(pid)) << pid;
  EXPECT_EQ(fake.first_line("uid"), expected_uid());
  EXPECT_THAT(fake.first_line("args"), StartsWith("mad_vect8 --wg 16384 --wi 64 --busy "));
  // The simulated device has no PCI address (PoCL runs the load): kernel_runner picks as before.
  EXPECT_THAT(fake.first_line("args"), Not(HasSubstr("--cl-device")));
}

// A load the counters miss (the simulated GPU is not told of it) makes each busy check say so,
// with the load in the measurement, rather than pass.
TEST_F(SelftestLoadTest, ALoadTheCountersMissFailsEveryBusyCheck) {
  const FakeKernelRunner fake(kLaunching);
  const SelftestReport report = run_with_load(fake, SimLoad::kProcessOnly);
  for (const std::string& name : kEveryLoadedCheck) {
    const CheckResult& r = check(report, name);
    EXPECT_EQ(r.verdict, Verdict::kFail) << name;
    EXPECT_THAT(r.measurement, HasSubstr("; load: kernel_runner mad_vect8")) << name;
  }
  EXPECT_EQ(check(report, "readouts-agree").reason,
            "the GPU-busy counter did not count the load: A0 does not count this GPU's work");
  EXPECT_THAT(check(report, "energy").reason,
              HasSubstr("the GPU load did not raise the GPU's power"));
  // The simulated GPU saw neither load, nor any switch: no counts to compare, no loss flagged.
  EXPECT_THAT(check(report, "context-switch").reason,
              HasSubstr("perf: A0 (GPU busy) counted fewer than 10^4 clocks in the busy window "
                        "before the switch: A0 does not count this GPU's work"));
  EXPECT_THAT(check(report, "context-switch").reason,
              HasSubstr("mmio: the snapshot after a switch did not flag config_lost"));
  for (const pid_t pid : fake.pids()) EXPECT_TRUE(reaped(pid)) << pid;
}

TEST_F(SelftestLoadTest, WithoutKernelRunnerTheBusyChecksSaySkipAndWhereItLooked) {
  const FakeKernelRunner fake(kLaunching);
  fs::remove(fake.program());
  const SelftestReport report = run_with_load(fake, SimLoad::kModelAndProcess);
  for (const std::string& name : kLoadedChecks) {
    const CheckResult& r = check(report, name);
    EXPECT_EQ(r.verdict, Verdict::kSkip) << name;
    EXPECT_THAT(r.reason, HasSubstr("no kernel_runner at " + fake.program().string())) << name;
  }
  // The energy check judges its planes still, and says why its busy windows were not.
  const CheckResult& energy = check(report, "energy");
  EXPECT_EQ(energy.verdict, Verdict::kPass) << energy.reason;
  EXPECT_THAT(energy.measurement, HasSubstr("busy windows not judged: no kernel_runner at "));
}

TEST_F(SelftestLoadTest, AKernelRunnerThatExitsAtOnceSkipsWithItsLastLine) {
  const FakeKernelRunner fake(
      "echo 'kernel_runner: looking for OpenCL' >&2\n"
      "echo 'kernel_runner: no OpenCL platform found' >&2\nexit 3");
  const SelftestReport report = run_with_load(fake, SimLoad::kModelAndProcess);
  for (const std::string& name : kLoadedChecks) {
    const CheckResult& r = check(report, name);
    EXPECT_EQ(r.verdict, Verdict::kSkip) << name;
    EXPECT_THAT(r.reason, HasSubstr("kernel_runner exited before its first launch (exit status "
                                    "3): kernel_runner: no OpenCL platform found"))
        << name;
  }
  for (const pid_t pid : fake.pids()) EXPECT_TRUE(reaped(pid)) << pid;
}

// energy-model's windows of known work run under kernel_runner launching that work, resting three
// times each launch's length after it (the window at most a quarter busy); the idle window under
// none. The simulated GPU is told of the same work, so the model holds.
TEST_F(SelftestLoadTest, EnergyModelWindowsRunUnderKernelRunnerLaunchingTheirWork) {
  const FakeKernelRunner fake(kLaunching);
  const SelftestReport report = run_with_load(fake, SimLoad::kModelAndProcess, std::nullopt,
                                              testing::fitted_sim_energy_model("kblgt2"));
  const CheckResult& r = check(report, "energy-model");
  ASSERT_EQ(r.verdict, Verdict::kPass) << report_table(report);
  EXPECT_THAT(r.measurement, HasSubstr("mad_vect8_65536 "));
  EXPECT_THAT(r.measurement, Not(::testing::ContainsRegex("idle [^,]*under kernel_runner")));
  std::vector<std::string> model_loads;
  for (const std::string& args : fake.lines("args")) {
    if (args.find("--rest") != std::string::npos) model_loads.push_back(args);
  }
  using ::testing::MatchesRegex;
  EXPECT_THAT(model_loads,
              ::testing::ElementsAre(
                  MatchesRegex("mad_vect8 --wg 1024 --wi 64 --busy [0-9]+s --rest 3"),
                  MatchesRegex("mad_vect8 --wg 4096 --wi 64 --busy [0-9]+s --rest 3"),
                  MatchesRegex("load_store_vect4 --wg 64 --wi 64 --size 16777216 --busy [0-9]+s "
                               "--rest 3"),
                  MatchesRegex("load_store_vect4 --wg 64 --wi 64 --size 67108864 --busy [0-9]+s "
                               "--rest 3")));
  for (const pid_t pid : fake.pids()) EXPECT_TRUE(reaped(pid)) << pid;
}

// Where no load may be started (oaprofd's selftest for a client), none is, and each busy check
// gives the reason it was told: the four skip, energy says its busy windows were not judged.
TEST_F(SelftestLoadTest, WhereNoLoadMayBeStartedNoneIsAndTheChecksSayWhy) {
  const FakeKernelRunner fake(kLaunching);
  const SelftestReport report =
      run_with_load(fake, SimLoad::kModelAndProcess, "no program for a client");
  for (const std::string& name : kLoadedChecks) {
    EXPECT_EQ(check(report, name).verdict, Verdict::kSkip) << name;
    EXPECT_THAT(check(report, name).reason, HasSubstr("no program for a client")) << name;
  }
  EXPECT_THAT(check(report, "energy").measurement,
              HasSubstr("busy windows not judged: no program for a client"));
  EXPECT_TRUE(fake.pids().empty());
}

// On real hardware the load runs on the device under test: kernel_runner is told its PCI address,
// so that an iGPU or a CPU runtime listed first does not take the work.
TEST_F(SelftestLoadTest, OnARealDeviceTheLoadRunsOnItsPciAddress) {
  const FakeKernelRunner fake(kLaunching);
  SelftestOptions o;
  o.kernel_runner_dir = fake.dir();
  gpu::Device device = described_real_device("0000:03:00.0");
  const Context c{.options = o, .device = device, .table = device.platform};
  std::string why;
  const std::unique_ptr<GpuLoad> load = start_load(c, why);
  ASSERT_NE(load, nullptr) << why;
  EXPECT_THAT(fake.first_line("args"), StartsWith("mad_vect8 --wg 16384 --wi 64 --busy "));
  EXPECT_THAT(fake.first_line("args"), EndsWith(" --cl-device pci:0000:03:00.0"));
}

TEST(OpenclDeviceUnderTestTest, ARealDevicesAddressTheSimulatorNone) {
  EXPECT_EQ(opencl_device_under_test(described_real_device("0001:80:1f.7")),
            mmio::parse_pci_address("0001:80:1f.7"));
  const gpu::Device sim = gpu::open_device(sim_options("kblgt2").device);
  EXPECT_EQ(opencl_device_under_test(sim), std::nullopt);
  EXPECT_THAT(opencl_device_arguments(mmio::parse_pci_address("03:00.0")),
              ::testing::ElementsAre("--cl-device", "pci:0000:03:00.0"));
  EXPECT_TRUE(opencl_device_arguments(std::nullopt).empty());
}

// No OpenCL device at the address under test (PoCL's CPU device has none): the real kernel_runner
// exits 3 before its first launch and the busy checks skip with its own words.
TEST_F(SelftestLoadTest, NoOpenclDeviceAtTheAddressSkipsWithKernelRunnersWords) {
  SelftestOptions o;
  o.kernel_runner_dir = fs::path(KERNEL_RUNNER_BIN).parent_path();
  gpu::Device device = described_real_device("0000:03:00.0");
  const Context c{.options = o, .device = device, .table = device.platform};
  std::string why;
  EXPECT_EQ(start_load(c, why), nullptr);
  EXPECT_THAT(why, StartsWith("no GPU load: kernel_runner exited before its first launch (exit "
                              "status 3): kernel_runner: no OpenCL device is at PCI address "
                              "0000:03:00.0; seen: platform 0 device 0 ("));
}

// Never as root: root without sudo (nobody to run it as) starts nothing and says why.
TEST_F(SelftestLoadTest, RootWithoutSudoStartsNoLoad) {
  if (::geteuid() != 0) GTEST_SKIP() << "the refusal is root's";
  const SudoEnv no_sudo(std::nullopt);
  const FakeKernelRunner fake(kLaunching);
  const SelftestReport report = run_with_load(fake, SimLoad::kModelAndProcess);
  EXPECT_EQ(check(report, "readouts-agree").verdict, Verdict::kSkip);
  EXPECT_THAT(check(report, "readouts-agree").reason,
              HasSubstr("the selftest starts no GPU load as root"));
  EXPECT_TRUE(fake.pids().empty());
}

LoadCommand command_for(const FakeKernelRunner& fake) {
  return LoadCommand{.argv = load_arguments(fake.program(), 60, std::nullopt),
                     .credentials = std::nullopt,
                     .start_bound = std::chrono::milliseconds(30'000),
                     .stop_bound = std::chrono::milliseconds(5'000)};
}

// A check that throws while its load runs leaves no process behind.
TEST(GpuLoadTest, ACheckThatThrowsLeavesItStoppedAndReaped) {
  const FakeKernelRunner fake(kLaunching);
  pid_t pid = -1;
  EXPECT_THROW(
      {
        const GpuLoad load(command_for(fake));
        pid = load.pid();
        throw std::runtime_error("the measurement could not be made");
      },
      std::runtime_error);
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(reaped(pid));
}

// One that ignores SIGTERM is killed once the stop bound is over.
TEST(GpuLoadTest, OneThatIgnoresSigtermIsKilled) {
  const FakeKernelRunner fake(std::string("trap '' TERM\n") + kLaunching);
  LoadCommand command = command_for(fake);
  command.stop_bound = std::chrono::milliseconds(100);
  GpuLoad load(command);
  const pid_t pid = load.pid();
  const int status = load.stop();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_TRUE(reaped(pid));
}

// One that never says it launches is stopped after the start bound, and says so.
TEST(GpuLoadTest, OneThatNeverStartsLaunchingIsStopped) {
  const FakeKernelRunner fake("echo 'kernel_runner: compiling' >&2\nexec sleep 30");
  LoadCommand command = command_for(fake);
  command.start_bound = std::chrono::milliseconds(200);
  try {
    const GpuLoad load(command);
    ADD_FAILURE() << "started";
  } catch (const LoadUnavailable& e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel_runner did not start launching within 0.2 s, its last "
                                    "line: kernel_runner: compiling; stopped it"));
  }
  ASSERT_EQ(fake.pids().size(), 1u);
  EXPECT_TRUE(reaped(fake.pids().front()));
}

// The real kernel_runner with the load's arguments: it starts launching, says so, and stops
// cleanly on SIGTERM (after the launch in flight, status 0).
TEST(GpuLoadTest, TheRealKernelRunnerTakesTheLoadsArguments) {
  GpuLoad load(LoadCommand{.argv = load_arguments(KERNEL_RUNNER_BIN, 60, std::nullopt)});
  EXPECT_THAT(load.started(), StartsWith("mad_vect8 launching on "));
  const int status = load.stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// And energy-model's window loads: a memory kernel over its buffer size, resting after each launch.
TEST(GpuLoadTest, TheRealKernelRunnerTakesAWindowsLoadWithItsSizeAndRest) {
  const LoadWork work{
      .kernel = "load_store_vect4", .global = 4096, .size_bytes = 1 << 20, .rest = 3};
  GpuLoad load(LoadCommand{.argv = load_arguments(KERNEL_RUNNER_BIN, 60, std::nullopt, work)});
  EXPECT_THAT(load.started(), StartsWith("load_store_vect4 launching on "));
  EXPECT_THAT(load.started(), EndsWith("resting 3 times each launch's length after it"));
  const int status = load.stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace oaprof::run::selftest
