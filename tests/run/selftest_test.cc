// `oaprof selftest`'s checks in-process, on every simulated platform: without faults none fails,
// and each of the simulator's faults fails its own check and no other. Windows are short (the
// bounds each check applies hold for any window length), so the whole matrix takes seconds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mmio/sim_gpu.h"
#include "power/sim_hwmon.h"
#include "run/selftest.h"
#include "run/selftest_act_freq.h"
#include "run/selftest_checks.h"
#include "selftest_test_util.h"
#include "tests/common/energy_model_fixture.h"

namespace oaprof::run::selftest {

// gtest names a failing fault parameter by this, not by its bytes.
void PrintTo(const SimFaultInfo& fault, std::ostream* out) { *out << fault.name; }

namespace {

using ::testing::HasSubstr;

class SelftestTest : public ::testing::Test {
 protected:
  // Where the perf read-out finds each platform's IGT metric file (ComputeBasic).
  static void SetUpTestSuite() { use_shared_metrics_path(); }
};

TEST_F(SelftestTest, NoCheckFailsOnAnySimulatedPlatformAndTheCoreChecksPass) {
  for (const std::string_view platform : mmio::sim_platform_names()) {
    SCOPED_TRACE(platform);
    const SelftestReport report = run_selftest(sim_options(platform));
    EXPECT_THAT(failed(report), ::testing::IsEmpty()) << report_table(report);
    // Passing by skipping would prove nothing: these measure on every simulated part.
    for (const char* name : {"topology", "clocks", "energy"}) {
      EXPECT_EQ(check(report, name).verdict, Verdict::kPass) << name << "\n"
                                                             << report_table(report);
    }
    EXPECT_TRUE(report.simulated);
  }
}

TEST_F(SelftestTest, EveryReadOutOfAnI915PartIsMeasuredAndEveryCheckPasses) {
  // kernel_runner's known work for the counters checks; energy-model's model to judge.
  const BuiltKernelRunner kernel_runner;
  SelftestOptions options = kernel_runner(sim_options("kblgt2"));
  options.energy_model = testing::fitted_sim_energy_model("kblgt2");
  const SelftestReport report = run_selftest(options);
  EXPECT_EQ(report.accesses, (std::vector<std::string>{"mmio", "rpc", "perf"}));
  for (const CheckResult& r : report.checks) {
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.name << ": " << r.reason;
  }
  // gpu-ticks compared against the simulator's sysfs act_freq too, not only the register.
  EXPECT_THAT(check(report, "gpu-ticks").measurement, HasSubstr("against sysfs act_freq"));
}

// A test per fault, on the platforms where its check measures: exactly that check fails.
class SelftestFaultTest : public SelftestTest,
                          public ::testing::WithParamInterface<SimFaultInfo> {};

TEST_P(SelftestFaultTest, FailsItsOwnCheckAndNoOther) {
  const SimFaultInfo& fault = GetParam();
  std::vector<std::string_view> platforms = {"kblgt2", "tglgt2", "mtlgt2"};
  if (fault.fault == SimFault::kFlexMisrouted) platforms = {"kblgt2"};  // Gen8–11 only
  // Context-saved OA state exists on Gen8–11 only (selftest_driver_test.cc: skips elsewhere).
  if (fault.fault == SimFault::kCtxImageStale) platforms = {"kblgt2"};
  // i915's read-outs on Gen12 and Xe-LPG snapshot OAG with MI_STORE_REGISTER_MEM (the CS
  // timestamp); reports the unit writes are snapshots on Gen8–11 (MI_RPC) and under xe.
  if (fault.fault == SimFault::kOaTimestampShift) platforms = {"kblgt2", "tglgt2-xe", "mtlgt2-xe"};
  // A card's own energy sensors: DG2 under i915 (one channel), Battlemage under xe (two).
  if (fault.fault == SimFault::kHwmonStuck) platforms = {"acmgt1", "bmg"};
  // The simulator's per-event energy tables: Gen9's and Gen12's (mmio/sim_energy.h).
  if (fault.fault == SimFault::kEnergyModelDrift) platforms = {"kblgt2", "tglgt2"};
  for (const std::string_view platform : platforms) {
    SCOPED_TRACE(platform);
    SelftestOptions options = sim_options(platform, {fault.fault});
    // A model fitted to the part where the simulator has one, so that energy-model measures too
    // and every other fault is seen to leave it alone.
    options.energy_model = testing::fitted_sim_energy_model(std::string(platform));
    // xe's snapshots wait a period and a poll each: windows long beside that, so the doubled
    // timestamp lies outside even the widest bounds a loaded machine gives.
    if (fault.fault == SimFault::kOaTimestampShift) options.window_ns = 20'000'000;
    // noa-slow-settle's garbage lasts 25 ms of real time after the mux write: a machine that
    // stalls the selftest longer than that before its first window hides it. Such a run is
    // repeated (a stall five times in a row is not seen); no other fault depends on timing.
    const int attempts = fault.fault == SimFault::kNoaSlowSettle ? 5 : 1;
    SelftestReport report;
    for (int i = 0; i < attempts; ++i) {
      report = run_selftest(options);
      if (failed(report) == std::vector<std::string>{std::string(fault.check)}) break;
    }
    EXPECT_EQ(failed(report), std::vector<std::string>{std::string(fault.check)})
        << report_table(report);
  }
}

// Every fault but the counters checks' (fpu-count-halved, eu-active-undercount, gti-bytes-lost,
// render-counter-leak), whose checks measure kernel_runner's profile runs:
// tests/run/selftest_work_test.cc shows each failing exactly its own check, with the figures that
// say why, and starts kernel_runner only there (a few seconds a run on PoCL).
std::vector<SimFaultInfo> faults_without_known_work() {
  std::vector<SimFaultInfo> out;
  for (const SimFaultInfo& f : sim_faults()) {
    if (f.check != "known-work-flops" && f.check != "known-work-eu-active" &&
        f.check != "known-work-bytes" && f.check != "idle-and-render-quiet") {
      out.push_back(f);
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryFault, SelftestFaultTest,
                         ::testing::ValuesIn(faults_without_known_work()),
                         [](const ::testing::TestParamInfo<SimFaultInfo>& param) {
                           std::string name(param.param.name);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST_F(SelftestTest, XeFaultsFailTheirChecksThroughXesObservationStream) {
  for (const SimFault fault : {SimFault::kFusedEus, SimFault::kRaplStuck}) {
    const SelftestReport report = run_selftest(sim_options("lnl", {fault}));
    EXPECT_EQ(failed(report), std::vector<std::string>{std::string(sim_fault_info(fault).check)})
        << report_table(report);
  }
}

TEST_F(SelftestTest, TheJsonReportCarriesTheSchemaVersionAndEveryCheckWithItsNumbers) {
  const SelftestReport report = run_selftest(sim_options("tglgt2", {SimFault::kGpuTicksClock}));
  const nlohmann::json j = report_json(report, "9.9.9");
  EXPECT_EQ(j["schema_version"], kSchemaVersion);
  EXPECT_EQ(j["oaprof_version"], "9.9.9");
  EXPECT_EQ(j["device"]["simulated"], true);
  EXPECT_EQ(j["device"]["pci_id"], "8086:9a49");
  EXPECT_EQ(j["sim_faults"], nlohmann::json::array({"gpu-ticks-clock"}));
  EXPECT_EQ(j["failed"], true);
  ASSERT_EQ(j["checks"].size(), report.checks.size());
  const nlohmann::json& ticks = j["checks"][3];
  EXPECT_EQ(ticks["name"], "gpu-ticks");
  EXPECT_EQ(ticks["verdict"], "fail");
  EXPECT_FALSE(ticks["assumes"].get<std::string>().empty());
  EXPECT_FALSE(ticks["tolerance"].get<std::string>().empty());
  // Twice the clock: the ratios the windows' brackets allow (counted ticks over the widest and
  // the narrowest window) hold 2 between them. Their spread is the read-outs' length against the
  // window (a fifth of it under the sanitizers), so neither end alone is held near 2.
  EXPECT_LE(ticks["figures"]["ratio_min"]["value"].get<double>(), 2.0 * 1.01);
  EXPECT_GE(ticks["figures"]["ratio_max"]["value"].get<double>(), 2.0 * 0.99);
  EXPECT_GT(ticks["figures"]["ratio_max"]["value"].get<double>(), 1.5) << "not the true clock";
}

// A discrete card's energy is its own hwmon's, as a profile reads it, never the CPU package's
// RAPL: every plane its driver registers moves, the card covers its package, and the windows run
// across the driver's wrap (the sum printed as a negative `long`) without miscounting it.
TEST_F(SelftestTest, ADiscreteCardsEnergyCheckReadsItsHwmonAcrossTheDriversWrap) {
  for (const std::string_view platform : {"acmgt1", "acmgt2", "acmgt3", "bmg"}) {
    SCOPED_TRACE(platform);
    const SelftestReport report = run_selftest(sim_options(platform));
    const CheckResult& energy = check(report, "energy");
    EXPECT_EQ(energy.verdict, Verdict::kPass) << report_table(report);
    EXPECT_THAT(energy.measurement, HasSubstr("sim-hwmon: planes "));
    EXPECT_THAT(energy.measurement, HasSubstr("wraps at 9223372036854775808 uJ"));
    // Battlemage under xe has the board's channel too; DG2 under i915 the package's alone.
    EXPECT_THAT(energy.measurement,
                HasSubstr(platform == "bmg" ? "planes CARD, GPU_PKG;" : "planes GPU_PKG;"));
    EXPECT_THAT(energy.measurement, HasSubstr("CARD >= GPU_PKG"));
  }
}

TEST_F(SelftestTest, AFaultOnARealDeviceIsRefused) {
  SelftestOptions o = sim_options("kblgt2", {SimFault::kRaplStuck});
  o.device.spec = gpu::DeviceSpec::parse("0000:00:02.0");
  try {
    run_selftest(o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("--sim-fault"));
  }
}

// A sysfs tree in a temporary directory with one Intel display device of `pci_id` at `address`,
// bound to xe; the caller removes it.
std::filesystem::path fake_xe_device(std::string_view tag, std::string_view address,
                                     std::string_view pci_id) {
  namespace fs = std::filesystem;
  const fs::path sys = fs::temp_directory_path() /
                       ("oaprof-selftest-" + std::string(tag) + "-" + std::to_string(::getpid()));
  const fs::path dev = sys / "bus/pci/devices" / address;
  fs::create_directories(dev);
  fs::create_directories(sys / "bus/pci/drivers/xe");
  std::ofstream(dev / "vendor") << "0x8086\n";
  std::ofstream(dev / "device") << pci_id << "\n";
  std::ofstream(dev / "class") << "0x030000\n";
  fs::create_symlink("../../../bus/pci/drivers/xe", dev / "driver");
  return sys;
}

// A device xe drives is measured through xe's stream alone: the selftest must not ask for the BAR,
// which gpu::open_device refuses under xe (here a fake sysfs; its stream cannot open, and the
// checks that need it fail saying so rather than the selftest refusing to start).
TEST_F(SelftestTest, ADeviceXeDrivesIsOpenedWithoutItsRegistersAndMeasuredThroughPerf) {
  namespace fs = std::filesystem;
  const fs::path sys = fake_xe_device("xe", "0000:00:02.0", "0x64a0");  // Lunar Lake (lnl)
  SelftestOptions o = sim_options("lnl");
  o.device.spec = gpu::DeviceSpec::parse("0000:00:02.0");
  o.device.sysfs_root = sys;
  o.energy = "none";
  const SelftestReport report = run_selftest(o);
  fs::remove_all(sys);
  EXPECT_EQ(report.accesses, std::vector<std::string>{"perf"});
  EXPECT_FALSE(report.simulated);
  EXPECT_EQ(check(report, "restore").verdict, Verdict::kSkip);
}

// On a real card the energy check reads the card's own hwmon, found under its PCI device as a
// profile finds it, not the CPU package's RAPL (a fake sysfs: Battlemage bound to xe, its hwmon
// laid out by the simulated card's tree; nothing drives it, so only the backend is asserted).
TEST_F(SelftestTest, ARealCardsEnergyCheckReadsTheHwmonUnderItsOwnPciDevice) {
  namespace fs = std::filesystem;
  const fs::path sys = fake_xe_device("card", "0000:03:00.0", "0xe20b");  // Battlemage G21 (bmg)
  power::SimHwmon card(sys);  // xe's channels under 0000:03:00.0/hwmon/hwmon0
  SelftestOptions o = sim_options("bmg");
  o.device.spec = gpu::DeviceSpec::parse("0000:03:00.0");
  o.device.sysfs_root = sys;
  o.energy_roots.sysfs = sys;
  const SelftestReport report = run_selftest(o);
  fs::remove_all(sys);
  EXPECT_THAT(check(report, "energy").measurement, HasSubstr("hwmon: planes CARD, GPU_PKG;"));
}

// act_freq where each driver reports it (run/selftest_act_freq.h names the upstream files).
// No fault knob reaches timestamp-frequency (the simulated drivers and registers answer the
// table's rate, and a knob changing the rate rows use would fail `clocks` too): a KBL whose driver
// answers 19.2 MHz (GETPARAM) against the table's fixed 12 MHz is what the check exists to catch.
TEST(TimestampFrequencyCheckTest, ADriverAnswerUnlikeTheFixedRateFailsNamingEachSource) {
  const SelftestOptions options;
  gpu::Device device = described_real_device("0000:00:02.0");
  ASSERT_EQ(device.platform.timestamp_rule, oa::TimestampRule::kFixed);
  Context agreeing{.options = options, .device = device, .table = device.platform};
  EXPECT_EQ(check_timestamp_frequency(agreeing).verdict, Verdict::kPass);
  device.facts.timestamp_hz = 19.2e6;
  device.facts.timestamp_source = oa::TimestampSource::kI915GetParam;
  Context c{.options = options, .device = device, .table = device.platform};
  const Outcome o = check_timestamp_frequency(c);
  EXPECT_EQ(o.verdict, Verdict::kFail);
  EXPECT_THAT(o.measurement, HasSubstr("19.2 MHz, platform table 12 MHz"));
  EXPECT_THAT(o.reason, HasSubstr("the sources disagree"));
}

TEST(ActFreqTest, EachDriversFileIsReadAndAMissingOneSaysWhere) {
  namespace fs = std::filesystem;
  const fs::path card =
      fs::temp_directory_path() / ("oaprof-act-freq-" + std::to_string(::getpid())) / "card1";
  fs::create_directories(card / "gt/gt0");
  std::ofstream(card / "gt_act_freq_mhz") << "300\n";  // i915's legacy file alone
  EXPECT_EQ(read_act_freq(card, oa::KernelDriver::kI915).mhz, 300.0);
  std::ofstream(card / "gt/gt0/rps_act_freq_mhz") << "1250\n";  // the per-GT one wins
  EXPECT_EQ(read_act_freq(card, oa::KernelDriver::kI915).mhz, 1250.0);
  const ActFreq xe = read_act_freq(card, oa::KernelDriver::kXe);
  EXPECT_FALSE(xe.mhz);
  EXPECT_THAT(xe.source, HasSubstr("device/tile0/gt0/freq0/act_freq"));
  fs::create_directories(card / "device/tile0/gt0/freq0");
  std::ofstream(card / "device/tile0/gt0/freq0/act_freq") << "1900\n";
  EXPECT_EQ(read_act_freq(card, oa::KernelDriver::kXe).mhz, 1900.0);
  fs::remove_all(card.parent_path());
}

TEST(SimFaultTest, NamesAreParsedAndAnUnknownOneListsTheValidOnes) {
  for (const SimFaultInfo& f : sim_faults()) EXPECT_EQ(parse_sim_fault(f.name), f.fault);
  try {
    parse_sim_fault("gremlins");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("oa-timestamp-shift"));
  }
}

}  // namespace
}  // namespace oaprof::run::selftest
