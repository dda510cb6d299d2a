// The profile run's plan: every option is checked in make_profile_plan, before a device, lock or
// file is touched, and the plan says what the run will do.
#include "run/profile_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

namespace oaprof::run {
namespace {

using ::testing::HasSubstr;
using Env = std::map<std::string, std::string>;

constexpr uid_t kUser = 1000;
constexpr uid_t kRoot = 0;

ProfileOptions with_program() {
  ProfileOptions o;
  o.command = {"/opt/bin/kernel_runner", "mad_vect4"};
  return o;
}

// The message of the std::invalid_argument make_profile_plan throws, or "" when it does not.
std::string refusal(const ProfileOptions& o, const Env& env = {}, uid_t euid = kUser) {
  try {
    (void)make_profile_plan(o, env, euid);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ProfilePlanTest, AProgramRunDefaultsToKernelModeAndAnOutputNamedAfterIt) {
  const ProfilePlan plan = make_profile_plan(with_program(), {}, kUser);
  EXPECT_EQ(plan.mode, RunMode::kKernel);
  EXPECT_EQ(plan.outputs.csv, "oaprof-kernel_runner.csv");
  EXPECT_EQ(plan.command.size(), 2u);
  EXPECT_EQ(plan.min_window.count(), 50);
  EXPECT_TRUE(plan.device.spec.is_auto());
  EXPECT_FALSE(plan.creds);
}

TEST(ProfilePlanTest, WithoutRootARealDeviceGoesThroughTheDaemonAndTheSimulatorDoesNot) {
  ProfileOptions o = with_program();
  EXPECT_TRUE(make_profile_plan(o, {}, kUser).through_daemon);
  EXPECT_FALSE(make_profile_plan(o, {}, kRoot).through_daemon);
  o.device_spec = "sim";
  const ProfilePlan sim = make_profile_plan(o, {}, kUser);
  EXPECT_FALSE(sim.through_daemon);
  EXPECT_TRUE(sim.device.spec.simulated());
  o.daemon = "always";
  EXPECT_TRUE(make_profile_plan(o, {}, kUser).through_daemon);
}

TEST(ProfilePlanTest, SystemWideTakesADurationAndNoProgram) {
  ProfileOptions o;
  o.system_wide = true;
  EXPECT_THAT(refusal(o), HasSubstr("--system-wide needs --duration"));
  o.duration = "2s";
  o.interval = "100ms";
  const ProfilePlan plan = make_profile_plan(o, {}, kUser);
  EXPECT_EQ(plan.mode, RunMode::kSystemWide);
  EXPECT_EQ(plan.duration.count(), 2000);
  ASSERT_TRUE(plan.interval);
  EXPECT_EQ(plan.interval->count(), 100);
  EXPECT_EQ(plan.outputs.csv, "oaprof-system.csv");
  o.command = {"true"};
  EXPECT_THAT(refusal(o), HasSubstr("give no program"));
  o.command.clear();
  o.interval = "0ms";
  EXPECT_THAT(refusal(o), HasSubstr("--interval must be > 0"));
}

TEST(ProfilePlanTest, AProgramRunRefusesSystemWideOptionsAndNeedsAProgram) {
  EXPECT_THAT(refusal(ProfileOptions{}), HasSubstr("name the program to profile"));
  ProfileOptions o = with_program();
  o.duration = "1s";
  EXPECT_THAT(refusal(o), HasSubstr("--duration and --interval go with --system-wide"));
  o = with_program();
  o.min_window = "fifty";
  EXPECT_THAT(refusal(o), HasSubstr("--min-window"));
}

TEST(ProfilePlanTest, ReplayGoesWithKernelModeAndAValidCount) {
  ProfileOptions o = with_program();
  for (const char* bad : {"lots", "20000", "-3"}) {
    o.replay = bad;
    EXPECT_THAT(refusal(o), HasSubstr("--replay")) << bad;
  }
  o.replay = "4";
  EXPECT_EQ(make_profile_plan(o, {}, kUser).replay, "4");
  o.mode = "app";
  EXPECT_THAT(refusal(o), HasSubstr("--replay goes with --mode kernel"));
}

// Issue 20: several sets are passes of an application replay, asked for by name; a set's name
// becomes part of its pass's file name, so it must be a symbol, never a path.
TEST(ProfilePlanTest, SeveralMetricSetsArePassesOfAnApplicationReplay) {
  ProfileOptions o = with_program();
  o.metric_set = "ComputeBasic, L3_1,ComputeBasic,Sampler_1";
  o.replay_mode = "application";
  const ProfilePlan plan = make_profile_plan(o, {}, kUser);
  EXPECT_TRUE(plan.application_replay);
  EXPECT_EQ(plan.pass_sets, (std::vector<std::string>{"ComputeBasic", "L3_1", "Sampler_1"}));
  EXPECT_EQ(plan.metric_set, "ComputeBasic");
  o.metric_set = "ComputeBasic,../../etc/x";
  EXPECT_THAT(refusal(o), HasSubstr("not a set's symbol name"));
  o.metric_set = "ComputeBasic,,L3_1";
  EXPECT_THAT(refusal(o), HasSubstr("an empty name"));
  o.metric_set = "ComputeBasic";
  EXPECT_TRUE(make_profile_plan(o, {}, kUser).pass_sets.empty());  // one set: one run
  o.replay_mode = "sometimes";
  EXPECT_THAT(refusal(o), HasSubstr("--replay-mode: give kernel or application"));
  o.replay_mode = "application";
  o.mode = "app";
  EXPECT_THAT(refusal(o), HasSubstr("goes with --mode kernel"));
}

// Kernel replay across sets (the default --replay-mode): each launch once per set, or N times
// per set with --replay N, locally or through oaprofd; the program's OAPROF_REPLAY counts every
// pass.
TEST(ProfilePlanTest, SeveralMetricSetsAreKernelReplayPassesLocallyOrThroughOaprofd) {
  ProfileOptions o = with_program();
  o.device_spec = "sim";
  o.metric_set = "ComputeBasic,L3_1,Sampler_1";
  ProfilePlan plan = make_profile_plan(o, {}, kUser);
  EXPECT_TRUE(kernel_replay_across_sets(plan));
  EXPECT_EQ(plan.pass_sets.size(), 3u);
  EXPECT_EQ(passes_per_set(plan), 1u);
  EXPECT_EQ(replay_variable(plan), "3");
  o.replay = "2";
  plan = make_profile_plan(o, {}, kUser);
  EXPECT_EQ(passes_per_set(plan), 2u);
  EXPECT_EQ(replay_variable(plan), "6");
  o.replay = "4000";
  EXPECT_THAT(refusal(o), HasSubstr("4000 passes for each of 3 sets"));
  o.replay = "auto";
  EXPECT_THAT(refusal(o), HasSubstr("give --replay N (passes per set)"));
  o.replay = "off";
  o.mode = "app";
  EXPECT_THAT(refusal(o), HasSubstr("both with --mode kernel"));
  o.mode = "kernel";
  // Through oaprofd too: the daemon switches its session's set by name (wire::SwitchSet).
  o.daemon = "always";
  plan = make_profile_plan(o, {}, kUser);
  EXPECT_TRUE(plan.through_daemon);
  EXPECT_TRUE(kernel_replay_across_sets(plan));
  // One set, or an application replay: OAPROF_REPLAY is --replay as given.
  o.daemon = "auto";
  o.replay = "2";
  o.metric_set = "ComputeBasic";
  EXPECT_EQ(replay_variable(make_profile_plan(o, {}, kUser)), "2");
  o.metric_set = "ComputeBasic,L3_1";
  o.replay_mode = "application";
  plan = make_profile_plan(o, {}, kUser);
  EXPECT_FALSE(kernel_replay_across_sets(plan));
  EXPECT_EQ(replay_variable(plan), "2");
}

TEST(ProfilePlanTest, MetricsNamesCountersInsteadOfSets) {
  ProfileOptions o = with_program();
  o.metrics = "EuActive, L3Misses";
  EXPECT_EQ(make_profile_plan(o, {}, kUser).metric_names,
            (std::vector<std::string>{"EuActive", "L3Misses"}));
  o.metric_set = "ComputeBasic";
  EXPECT_THAT(refusal(o), HasSubstr("give it or --metric-set"));
}

TEST(ProfilePlanTest, ABadKernelFilterIsRefused) {
  ProfileOptions o = with_program();
  o.kernel_name = "regex:(unclosed";
  EXPECT_NE(refusal(o), "");
}

TEST(ProfilePlanTest, AFormatNoGenerationHasIsRefusedAndTheSimulatorsIsCheckedForItsPart) {
  ProfileOptions o = with_program();
  o.format_text = "NoSuchFormat";
  EXPECT_THAT(refusal(o), HasSubstr("--format NoSuchFormat"));
  // Xe-LPG's OAG format: a real device may be one, the simulated Kaby Lake is not.
  o.format_text = "A24u40_A14u32_B8_C8";
  EXPECT_EQ(refusal(o), "");
  o.device_spec = "sim";
  EXPECT_NE(refusal(o), "");
  o.sim_platform = "mtlgt2";
  EXPECT_EQ(refusal(o), "");
}

TEST(ProfilePlanTest, UnknownReadOutsForcewakeAndEnergyBackendsAreRefusedWithTheChoices) {
  ProfileOptions o = with_program();
  o.access = "dma";
  EXPECT_THAT(refusal(o), HasSubstr("--access dma: give one of mmio"));
  o = with_program();
  o.forcewake = "always";
  EXPECT_NE(refusal(o), "");
  o = with_program();
  o.energy = "battery";
  EXPECT_THAT(refusal(o), HasSubstr("--energy battery: give one of auto, hwmon, powercap"));
  o = with_program();
  o.igpu_power = "pp2";
  EXPECT_NE(refusal(o), "");
  o = with_program();
  o.idle_baseline = "soon";
  EXPECT_NE(refusal(o), "");
}

TEST(ProfilePlanTest, SimulatedEnergyBesideARealDeviceIsRefusedBeforeItIsOpened) {
  ProfileOptions o = with_program();
  o.energy = "sim";
  o.device_spec = "0000:00:02.0";
  EXPECT_THAT(refusal(o, {}, kRoot), HasSubstr("--energy sim"));
  o.device_spec = "sim";
  EXPECT_EQ(refusal(o), "");
}

// A simulated part's placement is known from its platform: a discrete card's energy is never
// the (simulated) RAPL tree, and an integrated GPU has no card sensors; both refused before the
// device is opened. The former name of hwmon is still a backend.
TEST(ProfilePlanTest, EnergyThatDoesNotMeasureTheSimulatedPartIsRefused) {
  ProfileOptions o = with_program();
  o.device_spec = "sim";
  o.sim_platform = "bmg";
  o.access = "perf";
  o.energy = "sim";
  EXPECT_THAT(refusal(o), HasSubstr("never include a discrete card"));
  for (const char* fits : {"sim-hwmon", "auto", "none", "xe-hwmon"}) {
    o.energy = fits;
    EXPECT_EQ(refusal(o), "") << fits;
  }
  o = with_program();
  o.device_spec = "sim";
  o.energy = "sim-hwmon";
  EXPECT_THAT(refusal(o), HasSubstr("is an integrated GPU"));
}

TEST(ProfilePlanTest, AtMostOneOutputOnStandardOutput) {
  ProfileOptions o = with_program();
  o.csv_path = "-";
  EXPECT_EQ(make_profile_plan(o, {}, kUser).outputs.csv, "-");
  o.trace_path = "/dev/stdout";
  EXPECT_THAT(refusal(o), HasSubstr("more than one of -o, --json and --trace"));
}

TEST(ProfilePlanTest, UnderSudoIdsAreCheckedAndRootPathsKeepTheirDefaults) {
  const Env sudo{{"SUDO_UID", "1000"}, {"SUDO_GID", "1000"}};
  const ProfilePlan plan = make_profile_plan(with_program(), sudo, kRoot);
  ASSERT_TRUE(plan.creds);
  EXPECT_EQ(plan.creds->uid, 1000u);

  EXPECT_NE(refusal(with_program(), {{"SUDO_UID", "4294967296"}, {"SUDO_GID", "1000"}}, kRoot), "");
  ProfileOptions o = with_program();
  o.sysfs_root = "/home/user/fake-sys";
  EXPECT_THAT(refusal(o, sudo, kRoot), HasSubstr("--sysfs-root"));
  EXPECT_EQ(refusal(o, {}, kRoot), "");  // root without sudo may point it anywhere
  o = with_program();
  o.device_spec = "sim:/home/user/registers";
  EXPECT_NE(refusal(o, sudo, kRoot), "");
  Env state = sudo;
  state["OAPROF_STATE_DIR"] = "/home/user/state";
  EXPECT_NE(refusal(with_program(), state, kRoot), "");
}

TEST(ProfilePlanTest, TheDeviceOptionsCarryWhatALocalOpenNeeds) {
  ProfileOptions o = with_program();
  o.access = "perf";
  o.oa_exponent = 12;
  o.device_spec = "sim";
  o.sim_platform = "tglgt2";
  o.sim_eus = 80;
  o.sim_no_i915 = true;
  const ProfilePlan plan = make_profile_plan(o, {}, kRoot);
  EXPECT_FALSE(plan.device.map_registers);  // perf reads through i915, no BAR
  EXPECT_EQ(plan.device.perf_period_exponent, 12);
  EXPECT_EQ(plan.device.sim.platform.metrics_file, "tglgt2");
  EXPECT_EQ(plan.device.sim.eus, 80);
  EXPECT_FALSE(plan.device.sim.i915);
  o.oa_exponent = 32;
  EXPECT_THAT(refusal(o, {}, kRoot), HasSubstr("--oa-exponent"));
}

TEST(ProfilePlanTest, OutputNamesExpandHostPidAndRank) {
  const RunIdentity who{"node7", 4242, "3"};
  EXPECT_EQ(expand_output_name("out-%h-%p-%r.csv", who), "out-node7-4242-3.csv");
  EXPECT_EQ(expand_output_name("100%%.csv", who), "100%.csv");
  EXPECT_EQ(expand_output_name("", who), "");
  for (const char* bad : {"out-%x.csv", "out-%", "%H"}) {
    EXPECT_THROW((void)expand_output_name(bad, who), std::invalid_argument) << bad;
  }
  EXPECT_THROW((void)expand_output_name("out-%r.csv", RunIdentity{"node7", 1, std::nullopt}),
               std::invalid_argument);
}

TEST(ProfilePlanTest, EveryOutputIsExpandedAndARankedRunNeverWritesTheSameDefaultFile) {
  ProfileOptions o = with_program();
  o.json_path = "run-%r.json";
  o.trace_path = "run-%h.pftrace";
  const ProfilePlan ranked = make_profile_plan(o, {}, kUser, RunIdentity{"node7", 9, "12"});
  EXPECT_EQ(ranked.outputs.csv, "oaprof-kernel_runner-node7-12.csv");
  EXPECT_EQ(ranked.outputs.json, "run-12.json");
  EXPECT_EQ(ranked.outputs.trace, "run-node7.pftrace");
  EXPECT_THAT(refusal(o), HasSubstr("no rank is set"));  // no rank, and --json has %r
  o.json_path = "run-%q.json";
  EXPECT_THAT(refusal(o), HasSubstr("unknown %q"));
}

TEST(ProfilePlanTest, TheRankComesFromTheMpiLauncherBeforeSlurm) {
  EXPECT_EQ(run_identity({{"SLURM_PROCID", "5"}}).rank, "5");
  EXPECT_EQ(run_identity({{"SLURM_PROCID", "0"}, {"OMPI_COMM_WORLD_RANK", "7"}}).rank, "7");
  EXPECT_EQ(run_identity({{"PMI_RANK", "2"}, {"SLURM_PROCID", "0"}}).rank, "2");
  EXPECT_EQ(run_identity({}).rank, std::nullopt);
  EXPECT_FALSE(run_identity({}).host.empty());
  for (const char* bad : {"", "-1", "1e3", "../../etc", "12345678901"}) {
    EXPECT_THROW((void)run_identity({{"PMI_RANK", bad}}), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace oaprof::run

namespace oaprof::run {
namespace {

// Issue 17: --attribution sampled goes with a program in kernel mode that is never repeated;
// its period is bounded both ways and named when refused.
TEST(ProfilePlanTest, SampledAttributionTakesAPeriodAndNothingThatRepeatsALaunch) {
  ProfileOptions o = with_program();
  o.device_spec = "sim";
  EXPECT_FALSE(make_profile_plan(o, {}, kUser).sample_period.has_value());
  EXPECT_STREQ(attribution_name(make_profile_plan(o, {}, kUser)), "bracketed");
  o.attribution = "sampled";
  ProfilePlan plan = make_profile_plan(o, {}, kUser);
  ASSERT_TRUE(plan.sample_period.has_value());
  EXPECT_STREQ(attribution_name(plan), "sampled");
  EXPECT_EQ(*plan.sample_period, std::chrono::microseconds(1000));
  o.sample_period = "250us";
  EXPECT_EQ(*make_profile_plan(o, {}, kUser).sample_period, std::chrono::microseconds(250));
  for (const char* bad : {"50us", "1s"}) {
    o.sample_period = bad;
    EXPECT_THAT(refusal(o), HasSubstr("--sample-period: give 100us to 100ms")) << bad;
  }
  o.sample_period = "soon";
  EXPECT_THAT(refusal(o), HasSubstr("--sample-period"));
  o.sample_period = "1ms";
  o.replay = "3";
  EXPECT_THAT(refusal(o), HasSubstr("never repeats a launch"));
  o.replay = "off";
  o.metric_set = "ComputeBasic,L3_1";
  EXPECT_THAT(refusal(o), HasSubstr("--replay-mode application"));
  o.replay_mode = "application";
  EXPECT_TRUE(make_profile_plan(o, {}, kUser).sample_period.has_value());
  o.metric_set = oa::kBuiltinMetricSetSymbol;
  o.replay_mode = "kernel";
  o.mode = "app";
  EXPECT_THAT(refusal(o), HasSubstr("goes with --mode kernel"));
  o.mode = "kernel";
  o.attribution = "guessed";
  EXPECT_THAT(refusal(o), HasSubstr("--attribution: give bracketed or sampled"));
}

}  // namespace
}  // namespace oaprof::run
