// The selftest's checks that counters mean what the metric sets say, on the simulator: the
// build's kernel_runner runs through the path a profile takes (run/selftest_known_work.h), and
// with its kernels' work known, counter-derived FLOPs and GTI bytes in its rows match it, the
// EU-active share lies between the floors that work sets and every EU-cycle, an idle
// window stays still and its compute launches count no render event; each of their faults fails
// exactly its own check on KBL and TGL, and on MTL where the check measures (elsewhere it skips,
// saying why). Fake kernel_runners show whom it runs as and the skip without one. Runs without
// kernel_runner(options) start none (a test binary has no kernel_runner beside it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "run/selftest.h"
#include "run/selftest_known_work.h"
#include "run/selftest_work.h"
#include "selftest_test_util.h"
#include "tests/common/sanitizer.h"

namespace oaprof::run::selftest {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class SelftestWorkTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_shared_metrics_path(); }
  // kernel_runner(o): o with the build's kernel_runner, started as the invoking user (nobody
  // under this fake sudo when the test runs as root).
  const BuiltKernelRunner kernel_runner;
};

// The platforms whose known work a fault test runs with kernel_runner (tens of seconds each under
// the sanitizers, PoCL running the work): all of them in build/; under AddressSanitizer the first
// only, whose run goes through the same code, which is what that pass looks at.
std::vector<std::string_view> known_work_platforms(std::vector<std::string_view> all) {
  if (oaprof::testing::kAddressSanitizer) all.resize(1);
  return all;
}

double figure(const CheckResult& r, std::string_view name) {
  for (const Figure& f : r.figures) {
    if (f.name == name) return f.value;
  }
  throw std::logic_error(r.name + " has no figure " + std::string(name));
}

// Every known-work run of a check, with the ratio of counted to known work: a pass that compared
// nothing would prove nothing.
std::vector<double> ratios(const CheckResult& r) {
  std::vector<double> out;
  for (const Figure& f : r.figures) {
    if (f.name.ends_with("_ratio")) out.push_back(f.value);
  }
  return out;
}

// The counters checks' runs are kernel_runner's own, through the path a profile takes: each
// kernel and size is a row of a profile run, and the simulated GPU counted its known work.
TEST_F(SelftestWorkTest, OnKblEveryKernelAndSizeCountsItsKnownWork) {
  const SelftestReport report = run_selftest(kernel_runner(sim_options("kblgt2")));
  const CheckResult& flops = check(report, "known-work-flops");
  ASSERT_EQ(flops.verdict, Verdict::kPass) << flops.reason;
  EXPECT_EQ(ratios(flops).size(), 6u);  // mad_vect4 and mad_vect8 at three sizes
  for (const double r : ratios(flops)) EXPECT_NEAR(r, 1.0, 0.01);
  // 65536 work-items x 2048 multiply-adds of one lane each, two FLOPs a mad.
  EXPECT_DOUBLE_EQ(figure(flops, "mad_vect8_65536_known"), 65536.0 * 2048 * 2);
  EXPECT_THAT(flops.measurement,
              HasSubstr("in the rows of `kernel_runner mad_vect4 mad_vect8 --sweep wg=64:1024:x4 "
                        "--wi 64 --no-warmup --max-repeats 1 --quiet` through mmio"));
  // The same six launches' EU-active share: at or above both floors (the simulated EUs are
  // active for the FPUs' cycles plus a dispatch cost per work-item), within every EU-cycle.
  const CheckResult& active = check(report, "known-work-eu-active");
  ASSERT_EQ(active.verdict, Verdict::kPass) << active.reason;
  EXPECT_EQ(ratios(active).size(), 6u);
  for (const double r : ratios(active)) EXPECT_NEAR(r, 1.0, 0.01);
  // 65536 work-items x 2048 multiply-adds, 16 FLOPs an EU-cycle at most.
  EXPECT_DOUBLE_EQ(figure(active, "mad_vect8_65536_flops_floor"), 65536.0 * 2048 * 2 / 16);
  EXPECT_NEAR(
      figure(active, "mad_vect8_65536_fpu_floor") / figure(active, "mad_vect8_65536_flops_floor"),
      1.0, 0.01);
  EXPECT_GT(figure(active, "mad_vect4_4096_share"), 0);
  EXPECT_LE(figure(active, "mad_vect4_4096_share"), 100);
  EXPECT_THAT(active.measurement, HasSubstr("EU-active EU-cycles from EuActive in the rows of "
                                            "`kernel_runner mad_vect4 mad_vect8"));
  const CheckResult& bytes = check(report, "known-work-bytes");
  ASSERT_EQ(bytes.verdict, Verdict::kPass) << bytes.reason;
  EXPECT_EQ(ratios(bytes).size(), 2u);
  for (const double r : ratios(bytes)) EXPECT_NEAR(r, 1.0, 0.01);
  EXPECT_DOUBLE_EQ(figure(bytes, "load_store_vect4_128MiB_known"), 2.0 * (128 << 20));
  const CheckResult& quiet = check(report, "idle-and-render-quiet");
  ASSERT_EQ(quiet.verdict, Verdict::kPass) << quiet.reason;
  EXPECT_GT(figure(quiet, "compute_gpu_busy"), 0);
  EXPECT_EQ(figure(quiet, "compute_launches"), 6);
  EXPECT_EQ(figure(quiet, "render_counters"), 12);
  // The JSON report carries every run's known and counted work.
  const nlohmann::json j = report_json(report, "test");
  const nlohmann::json& f = j["checks"][6];
  ASSERT_EQ(f["name"], "known-work-flops");
  EXPECT_EQ(f["group"], "counters");
  EXPECT_EQ(f["tolerance"], "10% per kernel and size");
  EXPECT_EQ(f["figures"]["mad_vect4_4096_known"]["unit"], "FLOP");
  EXPECT_GT(f["figures"]["mad_vect4_4096_counted"]["value"].get<double>(), 0);
}

TEST_F(SelftestWorkTest, WhereTheSetOrTheSimulatorHasNoFigureTheCheckSkipsSayingWhy) {
  const SelftestReport tgl = run_selftest(sim_options("tglgt2"));
  EXPECT_EQ(check(tgl, "known-work-flops").verdict, Verdict::kSkip);
  EXPECT_THAT(check(tgl, "known-work-flops").reason, HasSubstr("has no Fpu0Active, Fpu1Active"));
  // Xe-LPG's compute launches are measured all the same: their render counters stay still.
  const SelftestReport mtl = run_selftest(kernel_runner(sim_options("mtlgt2")));
  EXPECT_EQ(check(mtl, "known-work-bytes").verdict, Verdict::kSkip);
  EXPECT_THAT(check(mtl, "known-work-bytes").reason,
              HasSubstr("the simulator models no known work on Xe-LPG"));
  EXPECT_EQ(check(mtl, "idle-and-render-quiet").verdict, Verdict::kPass)
      << check(mtl, "idle-and-render-quiet").reason;
  // Xe-LPG's set names the EU-active share XveActive: found, it is the model that is missing.
  EXPECT_EQ(check(mtl, "known-work-eu-active").verdict, Verdict::kSkip);
  EXPECT_THAT(check(mtl, "known-work-eu-active").reason,
              HasSubstr("the simulator models no known work on Xe-LPG"));
  // Xe2's ComputeBasic has no EU-active share at all.
  const SelftestReport lnl = run_selftest(sim_options("lnl"));
  EXPECT_EQ(check(lnl, "known-work-eu-active").verdict, Verdict::kSkip);
  EXPECT_THAT(check(lnl, "known-work-eu-active").reason, HasSubstr("has no EuActive"));
}

TEST_F(SelftestWorkTest, FpuCountHalvedFailsKnownWorkFlopsOnKblAndSkipsWhereNoFpuCounterIs) {
  const SelftestReport kbl =
      run_selftest(kernel_runner(sim_options("kblgt2", {SimFault::kFpuCountHalved})));
  EXPECT_THAT(failed(kbl), ElementsAre("known-work-flops")) << report_table(kbl);
  EXPECT_EQ(ratios(check(kbl, "known-work-flops")).size(), 6u);
  for (const double r : ratios(check(kbl, "known-work-flops"))) EXPECT_NEAR(r, 0.5, 0.01);
  // TGL's ComputeBasic has no FPU counter, MTL's no Fpu0/Fpu1Active: nothing to halve or fail.
  for (const std::string_view platform : {"tglgt2", "mtlgt2"}) {
    SCOPED_TRACE(platform);
    const SelftestReport r = run_selftest(sim_options(platform, {SimFault::kFpuCountHalved}));
    EXPECT_THAT(failed(r), IsEmpty()) << report_table(r);
    EXPECT_EQ(check(r, "known-work-flops").verdict, Verdict::kSkip);
  }
}

TEST_F(SelftestWorkTest, GtiBytesLostFailsKnownWorkBytesOnKblAndTglAndSkipsOnMtl) {
  for (const std::string_view platform : known_work_platforms({"kblgt2", "tglgt2"})) {
    SCOPED_TRACE(platform);
    const SelftestReport r =
        run_selftest(kernel_runner(sim_options(platform, {SimFault::kGtiBytesLost})));
    EXPECT_THAT(failed(r), ElementsAre("known-work-bytes")) << report_table(r);
    EXPECT_EQ(ratios(check(r, "known-work-bytes")).size(), 2u);
    for (const double ratio : ratios(check(r, "known-work-bytes"))) EXPECT_NEAR(ratio, 0.5, 0.01);
    EXPECT_THAT(check(r, "known-work-bytes").reason, HasSubstr("load_store_vect4_"));
    // The other counters checks measured and passed: the fault is the bytes' alone. TGL's set
    // has EuActive but no FPU counter: the EU-active share is judged by the FLOPs floor there.
    EXPECT_EQ(check(r, "idle-and-render-quiet").verdict, Verdict::kPass);
    EXPECT_EQ(check(r, "known-work-eu-active").verdict, Verdict::kPass)
        << check(r, "known-work-eu-active").reason;
  }
  const SelftestReport mtl = run_selftest(sim_options("mtlgt2", {SimFault::kGtiBytesLost}));
  EXPECT_THAT(failed(mtl), IsEmpty()) << report_table(mtl);
  EXPECT_EQ(check(mtl, "known-work-bytes").verdict, Verdict::kSkip);
}

// The EU-active counters count a quarter of the known kernels' EU-active cycles: below the floor
// the FLOPs (and on KBL the FPU counters, which the fault leaves alone) set, at every launch.
TEST_F(SelftestWorkTest, EuActiveUndercountFailsKnownWorkEuActiveOnKblAndTglAndSkipsOnMtl) {
  for (const std::string_view platform : known_work_platforms({"kblgt2", "tglgt2"})) {
    SCOPED_TRACE(platform);
    const SelftestReport r =
        run_selftest(kernel_runner(sim_options(platform, {SimFault::kEuActiveUndercount})));
    EXPECT_THAT(failed(r), ElementsAre("known-work-eu-active")) << report_table(r);
    const CheckResult& active = check(r, "known-work-eu-active");
    EXPECT_EQ(ratios(active).size(), 6u);
    for (const double ratio : ratios(active)) EXPECT_NEAR(ratio, 0.25, 0.01);
    EXPECT_THAT(active.reason, HasSubstr("EU-active EU-cycles where"));
    EXPECT_THAT(active.reason, HasSubstr("the EU-active counter misses cycles the EUs worked"));
  }
  const SelftestReport mtl = run_selftest(sim_options("mtlgt2", {SimFault::kEuActiveUndercount}));
  EXPECT_THAT(failed(mtl), IsEmpty()) << report_table(mtl);
  EXPECT_EQ(check(mtl, "known-work-eu-active").verdict, Verdict::kSkip);
}

TEST_F(SelftestWorkTest, RenderCounterLeakFailsIdleAndRenderQuietOnKblTglAndMtl) {
  for (const std::string_view platform : known_work_platforms({"kblgt2", "tglgt2", "mtlgt2"})) {
    SCOPED_TRACE(platform);
    const SelftestReport r =
        run_selftest(kernel_runner(sim_options(platform, {SimFault::kRenderCounterLeak})));
    EXPECT_THAT(failed(r), ElementsAre("idle-and-render-quiet")) << report_table(r);
    const CheckResult& quiet = check(r, "idle-and-render-quiet");
    EXPECT_THAT(quiet.reason, HasSubstr("PsThreads, RasterizedPixels counted during compute"));
    EXPECT_GT(figure(quiet, "compute_render_events"), 0);
  }
}

// The known work runs as `sudo oaprof -- kernel_runner ...` runs its program: as the invoking
// user (SUDO_UID/SUDO_GID; here nobody), with oaprof's layer and its configuration in the
// environment; what it says last is the reason when it measured nothing.
TEST_F(SelftestWorkTest, KernelRunnerRunsAsTheInvokingUserUnderTheProfilesLayer) {
  const FakeKernelRunner fake("echo 'kernel_runner: no OpenCL device found' >&2\nexit 3");
  SelftestOptions o = kernel_runner(sim_options("kblgt2"));
  o.kernel_runner_dir = fake.dir();
  const SelftestReport report = run_selftest(o);
  EXPECT_EQ(fake.pids().size(), 3u);  // the compute run and load_store's two
  EXPECT_EQ(fake.first_line("uid"), expected_uid());
  const std::vector<std::string> env = fake.lines("env");
  EXPECT_THAT(env, Contains(HasSubstr(OAPROF_LAYER_SO)));
  EXPECT_THAT(env, Contains("OAPROF_WORK_HINTS=1"));
  // The simulated device has no PCI address (PoCL runs the work): kernel_runner picks as before.
  EXPECT_THAT(fake.first_line("args"), Not(HasSubstr("--cl-device")));
  for (const char* name :
       {"known-work-flops", "known-work-eu-active", "known-work-bytes", "idle-and-render-quiet"}) {
    const CheckResult& r = check(report, name);
    EXPECT_EQ(r.verdict, Verdict::kSkip) << name;
    EXPECT_THAT(r.reason, HasSubstr("ended with status 3; its last line: kernel_runner: no "
                                    "OpenCL device found"))
        << name;
  }
}

// On real hardware every known-work run is on the device under test (its PCI address), not on
// whichever OpenCL device is listed first. Where no OpenCL device is there (PoCL's CPU device
// has no address), the real kernel_runner exits 3 through the profile run and the check skips
// with its words. The profile run's GPU is the simulator: only kernel_runner's device is real.
TEST_F(SelftestWorkTest, OnARealDeviceTheKnownWorkRunsOnItsPciAddressOrSkipsSayingNoneIsThere) {
  const SelftestOptions o = kernel_runner(sim_options("kblgt2"));
  gpu::Device device = described_real_device("0000:03:00.0");
  Context c{.options = o, .device = device, .table = device.platform};
  c.accesses = {"mmio"};
  KnownWork known;
  plan_known_work(c, known);
  ASSERT_EQ(known.runs.size(), 3u);  // the compute run and load_store's two
  for (const KernelRun& run : known.runs) {
    ASSERT_GE(run.arguments.size(), 2u);
    EXPECT_THAT(std::vector(run.arguments.end() - 2, run.arguments.end()),
                ElementsAre("--cl-device", "pci:0000:03:00.0"))
        << command_text(run);
  }
  known.runs.resize(1);
  known.kernel_runner = o.kernel_runner_dir / "kernel_runner";
  known.device = o.device;
  run_known_work(known, {});
  c.known_work = &known;
  const Outcome flops = check_known_work_flops(c);
  EXPECT_EQ(flops.verdict, Verdict::kSkip);
  EXPECT_THAT(flops.reason,
              HasSubstr("--quiet --cl-device pci:0000:03:00.0` was measured: its profile run ended "
                        "with status 3; its last line: kernel_runner: no OpenCL device is at PCI "
                        "address 0000:03:00.0; seen: platform 0 device 0 ("));
}

TEST_F(SelftestWorkTest, WithoutKernelRunnerTheKnownWorkChecksSkipSayingWhereItLooked) {
  const FakeKernelRunner fake("exit 0");
  std::filesystem::remove(fake.program());
  SelftestOptions o = sim_options("kblgt2");
  o.kernel_runner_dir = fake.dir();
  const SelftestReport report = run_selftest(o);
  for (const char* name :
       {"known-work-flops", "known-work-eu-active", "known-work-bytes", "idle-and-render-quiet"}) {
    const CheckResult& r = check(report, name);
    EXPECT_EQ(r.verdict, Verdict::kSkip) << name;
    EXPECT_THAT(r.reason, HasSubstr("no kernel_runner at " + fake.program().string())) << name;
  }
  EXPECT_TRUE(fake.pids().empty());
}

}  // namespace
}  // namespace oaprof::run::selftest
