#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "report/roofline_model.h"
#include "report/roofline_svg.h"

namespace oaprof::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

RunnerRun runner() {
  RunnerRun r;
  r.source = "kr.json";
  r.device = "cpu";
  r.results.push_back({"mad_vect4", "private", 4096, 64, 0, 1e6, 16777216, 4.5, "GFLOP/s", false});
  r.results.push_back(
      {"load_store_vect4", "private", 4096, 64, 1 << 20, 1e6, 2 << 20, 5.5, "GB/s", false});
  return r;
}

OaprofRun oaprof_run() {
  OaprofRun r;
  r.source = "run.json";
  r.device = "simulated";
  r.eus = 24;
  OaprofLaunch l;
  l.kernel = "k";
  l.kernel_ns = 2e6;  // the OpenCL time; the estimate divides by the counters' GPU time
  l.gpu_time_ns = 1e6;
  l.igpu_power_w = 2;
  l.flags = "energy-window-short";
  l.numbers = {{"Fpu0Active_percent", 50},
               {"Fpu1Active_percent", 25},
               {"GpuCoreClocks_cycles", 1e6},
               {"ShaderMemoryAccesses_messages", 1e5}};
  r.launches = {l, l};
  return r;
}

TEST(RooflineTest, LogScaleMapsDecadesLinearly) {
  const LogScale s{0.01, 1000, 80, 560};
  EXPECT_DOUBLE_EQ(s.map(0.01), 80);
  EXPECT_DOUBLE_EQ(s.map(1), 80 + 2.0 / 5 * 480);
  EXPECT_DOUBLE_EQ(s.map(1000), 560);
}

TEST(RooflineTest, KernelRunnerKernelsArePointsWithKnownWork) {
  const auto m = build_roofline_model({runner()}, {}, nullptr);
  ASSERT_EQ(m.points.size(), 1u);  // load_store has no FLOPs: it is a ceiling, not a point
  EXPECT_FALSE(m.points[0].estimate);
  // 4096 work-items × 4 floats × 4 bytes, read once and written once.
  EXPECT_DOUBLE_EQ(m.points[0].intensity, 16777216.0 / (2 * 4096 * 4 * 4));
  ASSERT_EQ(m.ceilings.size(), 2u);
  EXPECT_TRUE(m.ceilings[0].measured);
}

TEST(RooflineTest, CounterEstimatesAreLabelledAndFlagged) {
  const auto m = build_roofline_model({oaprof_run()}, {{"dev", 100, 200, 25, 50, 300}}, nullptr);
  ASSERT_EQ(m.points.size(), 1u);
  const RooflinePoint& p = m.points[0];
  EXPECT_TRUE(p.estimate);
  EXPECT_TRUE(p.simulated);
  // (50 % + 25 %) × 1e6 clocks × 24 EUs × 8 FLOP per FPU cycle, per launch, over 1 ms each.
  EXPECT_DOUBLE_EQ(p.gflops, 0.75 * 1e6 * 24 * 8 / 1e6);
  EXPECT_DOUBLE_EQ(p.intensity, 0.75 * 1e6 * 24 * 8 / (1e5 * 64));
  EXPECT_THAT(p.detail, HasSubstr("Fpu0Active_percent"));
  EXPECT_THAT(p.detail, HasSubstr("ShaderMemoryAccesses_messages"));
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].flags, "energy-window-short;simulated");
  EXPECT_EQ(m.kernels[0].launches, 2u);
  EXPECT_DOUBLE_EQ(*m.kernels[0].gflops_per_w, p.gflops / 2);
  EXPECT_EQ(m.ceilings.size(), 5u);  // MAD/ADD SP and DP, L3
  // The power roofline: the kernel at its GFLOP/s per W, under the best efficiencies seen.
  ASSERT_EQ(m.power_points.size(), 1u);
  EXPECT_DOUBLE_EQ(m.power_points[0].gflops, p.gflops / 2);
  EXPECT_DOUBLE_EQ(m.power_points[0].intensity, p.intensity);
  ASSERT_EQ(m.power_ceilings.size(), 2u);
  EXPECT_DOUBLE_EQ(m.power_ceilings[0].value, p.gflops / 2);
  EXPECT_DOUBLE_EQ(m.power_ceilings[1].value, *m.kernels[0].gbps / 2);
  EXPECT_FALSE(m.power_ceilings[1].compute);
}

TEST(RooflineTest, NoPowerRooflineWithoutEnergy) {
  OaprofRun o = oaprof_run();
  for (auto& l : o.launches) l.igpu_power_w.reset();
  const auto m = build_roofline_model({o}, {}, nullptr);
  EXPECT_TRUE(m.power_ceilings.empty());
  EXPECT_TRUE(m.power_points.empty());
  EXPECT_THAT(html_report(m, "t"), HasSubstr("No input has iGPU energy"));
}

// A run without measured energy but with --energy-model's figures: the power roofline uses them,
// the table and the points say they are modelled, and a legend line says what that means.
TEST(RooflineTest, ThePowerRooflineUsesModelledEnergyWhereNothingWasMeasuredAndSaysSo) {
  OaprofRun o = oaprof_run();
  for (auto& l : o.launches) {
    l.igpu_power_w.reset();
    l.energy_model_j = 3e-3;  // over the 1 ms of GPU time: 3 W
  }
  const auto m = build_roofline_model({o}, {}, nullptr);
  ASSERT_EQ(m.kernels.size(), 1u);
  ASSERT_TRUE(m.kernels[0].power_w);
  EXPECT_DOUBLE_EQ(*m.kernels[0].power_w, 3);
  EXPECT_TRUE(m.kernels[0].power_modelled);
  ASSERT_EQ(m.power_points.size(), 1u);
  EXPECT_TRUE(m.power_points[0].modelled_energy);
  EXPECT_THAT(m.power_points[0].detail, HasSubstr("modelled by the energy model, not measured"));
  const std::string html = html_report(m, "t");
  EXPECT_THAT(html, HasSubstr("id=\"modelled-energy\""));
  EXPECT_THAT(html, HasSubstr(" ~modelled"));
}

TEST(RooflineTest, MeasuredPowerWinsOverModelledEnergy) {
  OaprofRun o = oaprof_run();  // 2 W measured
  for (auto& l : o.launches) l.energy_model_j = 3e-3;
  const auto m = build_roofline_model({o}, {}, nullptr);
  EXPECT_DOUBLE_EQ(*m.kernels[0].power_w, 2);
  EXPECT_FALSE(m.kernels[0].power_modelled);
  EXPECT_THAT(html_report(m, "t"), Not(HasSubstr("modelled-energy")));
}

TEST(RooflineTest, KernelsRegexSelects) {
  const std::regex re("^mad");
  const auto m = build_roofline_model({runner(), oaprof_run()}, {}, &re);
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].kernel, "mad_vect4");
}

TEST(RooflineTest, SweepsAlongWorkGroups) {
  RunnerRun r = runner();
  r.results.resize(1);
  r.results.push_back(r.results[0]);
  r.results[1].global = 8192;
  r.results[1].fills_hw_threads = true;
  const auto m = build_roofline_model({r}, {}, nullptr);
  ASSERT_EQ(m.sweeps.size(), 1u);
  EXPECT_EQ(m.sweeps[0].axis, "work-groups");
  ASSERT_EQ(m.sweeps[0].points.size(), 2u);
  EXPECT_EQ(m.sweeps[0].points[1].x, 128);
  EXPECT_TRUE(m.sweeps[0].points[1].fills_hw_threads);
}

TEST(RooflineTest, HtmlIsSelfContainedAndShowsFlags) {
  OaprofRun o = oaprof_run();
  o.launches[0].kernel = "<script>alert(1)</script>";
  const std::string html = html_report(build_roofline_model({runner(), o}, {}, nullptr), "t & u");
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("href=")));
  EXPECT_THAT(html, Not(HasSubstr("https:")));
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)"));
  EXPECT_THAT(html, HasSubstr("<h1>t &amp; u</h1>"));
  EXPECT_THAT(html, HasSubstr("device: simulated"));
  EXPECT_THAT(html, HasSubstr("⚠ energy-window-short;simulated"));
}

}  // namespace
}  // namespace oaprof::report
