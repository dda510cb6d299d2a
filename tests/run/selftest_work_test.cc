// The selftest's checks that counters mean what the metric sets say, on the simulator: with the
// work of kernel_runner's kernels known, counter-derived FLOPs and GTI bytes match it and an idle
// window and render counters stay still; each of their faults fails exactly its own check on KBL
// and TGL, and on MTL where the check measures (elsewhere it skips, saying why).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "run/selftest.h"
#include "selftest_test_util.h"

namespace oaprof::run::selftest {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class SelftestWorkTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_shared_metrics_path(); }
};

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

TEST_F(SelftestWorkTest, OnKblEveryKernelAndSizeCountsItsKnownWork) {
  const SelftestReport report = run_selftest(sim_options("kblgt2"));
  const CheckResult& flops = check(report, "known-work-flops");
  ASSERT_EQ(flops.verdict, Verdict::kPass) << flops.reason;
  EXPECT_EQ(ratios(flops).size(), 6u);  // mad_vect4 and mad_vect8 at three sizes
  for (const double r : ratios(flops)) EXPECT_NEAR(r, 1.0, 0.01);
  // 1048576 work-items x 2048 multiply-adds of one lane each, two FLOPs a mad.
  EXPECT_DOUBLE_EQ(figure(flops, "mad_vect8_1048576_known"), 1048576.0 * 2048 * 2);
  const CheckResult& bytes = check(report, "known-work-bytes");
  ASSERT_EQ(bytes.verdict, Verdict::kPass) << bytes.reason;
  EXPECT_EQ(ratios(bytes).size(), 2u);
  for (const double r : ratios(bytes)) EXPECT_NEAR(r, 1.0, 0.01);
  EXPECT_DOUBLE_EQ(figure(bytes, "load_store_vect4_256MiB_known"), 2.0 * (256 << 20));
  const CheckResult& quiet = check(report, "idle-and-render-quiet");
  ASSERT_EQ(quiet.verdict, Verdict::kPass) << quiet.reason;
  EXPECT_GT(figure(quiet, "compute_gpu_busy"), 50);
  EXPECT_EQ(figure(quiet, "render_counters"), 12);
}

TEST_F(SelftestWorkTest, WhereTheSetOrTheSimulatorHasNoFigureTheCheckSkipsSayingWhy) {
  const SelftestReport tgl = run_selftest(sim_options("tglgt2"));
  EXPECT_EQ(check(tgl, "known-work-flops").verdict, Verdict::kSkip);
  EXPECT_THAT(check(tgl, "known-work-flops").reason, HasSubstr("has no Fpu0Active, Fpu1Active"));
  EXPECT_EQ(check(tgl, "known-work-bytes").verdict, Verdict::kPass);
  EXPECT_EQ(check(tgl, "idle-and-render-quiet").verdict, Verdict::kPass);
  const SelftestReport mtl = run_selftest(sim_options("mtlgt2"));
  EXPECT_EQ(check(mtl, "known-work-bytes").verdict, Verdict::kSkip);
  EXPECT_THAT(check(mtl, "known-work-bytes").reason,
              HasSubstr("the simulator models no known work on Xe-LPG"));
  EXPECT_EQ(check(mtl, "idle-and-render-quiet").verdict, Verdict::kPass);
}

TEST_F(SelftestWorkTest, FpuCountHalvedFailsKnownWorkFlopsOnKblAndSkipsWhereNoFpuCounterIs) {
  const SelftestReport kbl = run_selftest(sim_options("kblgt2", {SimFault::kFpuCountHalved}));
  EXPECT_THAT(failed(kbl), ElementsAre("known-work-flops")) << report_table(kbl);
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
  for (const std::string_view platform : {"kblgt2", "tglgt2"}) {
    SCOPED_TRACE(platform);
    const SelftestReport r = run_selftest(sim_options(platform, {SimFault::kGtiBytesLost}));
    EXPECT_THAT(failed(r), ElementsAre("known-work-bytes")) << report_table(r);
    for (const double ratio : ratios(check(r, "known-work-bytes"))) EXPECT_NEAR(ratio, 0.5, 0.01);
    EXPECT_THAT(check(r, "known-work-bytes").reason, HasSubstr("load_store_vect4_"));
  }
  const SelftestReport mtl = run_selftest(sim_options("mtlgt2", {SimFault::kGtiBytesLost}));
  EXPECT_THAT(failed(mtl), IsEmpty()) << report_table(mtl);
  EXPECT_EQ(check(mtl, "known-work-bytes").verdict, Verdict::kSkip);
}

TEST_F(SelftestWorkTest, RenderCounterLeakFailsIdleAndRenderQuietOnKblTglAndMtl) {
  for (const std::string_view platform : {"kblgt2", "tglgt2", "mtlgt2"}) {
    SCOPED_TRACE(platform);
    const SelftestReport r = run_selftest(sim_options(platform, {SimFault::kRenderCounterLeak}));
    EXPECT_THAT(failed(r), ElementsAre("idle-and-render-quiet")) << report_table(r);
    const CheckResult& quiet = check(r, "idle-and-render-quiet");
    EXPECT_THAT(quiet.reason, HasSubstr("PsThreads, RasterizedPixels counted during compute"));
    EXPECT_GT(figure(quiet, "compute_render_events"), 0);
  }
}

TEST_F(SelftestWorkTest, TheJsonReportCarriesEveryRunsKnownAndCountedWork) {
  const nlohmann::json j = report_json(run_selftest(sim_options("kblgt2")), "test");
  bool seen = false;
  for (const auto& c : j["checks"]) {
    if (c["name"] != "known-work-flops") continue;
    seen = true;
    EXPECT_EQ(c["group"], "counters");
    EXPECT_EQ(c["tolerance"], "10% per kernel and size");
    EXPECT_EQ(c["figures"]["mad_vect4_4096_known"]["unit"], "FLOP");
    EXPECT_GT(c["figures"]["mad_vect4_4096_counted"]["value"].get<double>(), 0);
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace oaprof::run::selftest
