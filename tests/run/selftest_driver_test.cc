// The selftest's driver and programming checks (src/run/selftest_driver.cc) on simulated KBL, TGL
// and MTL: each measures and passes without faults, and its fault fails it with the numbers that
// say why (selftest_test.cc's EveryFault shows each fault fails no other check); and the
// simulated drivers and GPU behave as the faults say.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "gpu/i915/i915_perf.h"
#include "gpu/sim/sim_i915_perf.h"
#include "gpu/sim/sim_xe_observation.h"
#include "mmio/sim_gpu.h"
#include "run/selftest.h"
#include "selftest_test_util.h"

namespace oaprof::run::selftest {
namespace {

using ::testing::HasSubstr;

constexpr const char* kPlatforms[] = {"kblgt2", "tglgt2", "mtlgt2"};

class SelftestDriverTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_shared_metrics_path(); }

  static SelftestReport run_on(std::string_view platform, std::vector<SimFault> faults = {}) {
    return run_selftest(sim_options(platform, std::move(faults)));
  }

  static const CheckResult& result(const SelftestReport& report, std::string_view name) {
    for (const CheckResult& r : report.checks) {
      if (r.name == name) return r;
    }
    throw std::logic_error("no check " + std::string(name));
  }

  static double figure(const CheckResult& r, std::string_view name) {
    for (const Figure& f : r.figures) {
      if (f.name == name) return f.value;
    }
    throw std::logic_error(r.name + " has no figure " + std::string(name));
  }
};

TEST_F(SelftestDriverTest, WithoutFaultsEachCheckMeasuresAndPassesWhereItApplies) {
  for (const char* platform : kPlatforms) {
    SCOPED_TRACE(platform);
    const SelftestReport report = run_on(platform);
    for (const char* name : {"driver-accepts-configs", "noa-settle", "rpc-vs-periodic"}) {
      EXPECT_EQ(result(report, name).verdict, Verdict::kPass)
          << name << ": " << result(report, name).reason;
    }
    // Every set of the platform's file was added and removed: ComputeBasic among them.
    const CheckResult& configs = result(report, "driver-accepts-configs");
    EXPECT_GT(figure(configs, "accepted"), 1);
    EXPECT_EQ(figure(configs, "accepted"), figure(configs, "sets_added"));
    EXPECT_EQ(figure(configs, "not_removed"), 0);
  }
  // Gen8–11: mmio and rpc flag the loss, perf keeps the configuration.
  const SelftestReport kbl_report = run_on("kblgt2");
  const CheckResult& kbl = result(kbl_report, "context-switch");
  EXPECT_EQ(kbl.verdict, Verdict::kPass) << kbl.reason;
  EXPECT_THAT(kbl.measurement, HasSubstr("perf kept it"));
  EXPECT_THAT(kbl.measurement, HasSubstr("mmio flagged the loss"));
}

TEST_F(SelftestDriverTest, ConfigRejectedFailsDriverAcceptsConfigsNamingTheOneSet) {
  for (const char* platform : kPlatforms) {
    SCOPED_TRACE(platform);
    const SelftestReport report = run_on(platform, {SimFault::kConfigRejected});
    const CheckResult& r = result(report, "driver-accepts-configs");
    EXPECT_EQ(r.verdict, Verdict::kFail);
    EXPECT_EQ(figure(r, "rejected"), 1);
    EXPECT_EQ(figure(r, "accepted") + 1, figure(r, "sets_added"));
    EXPECT_THAT(r.reason, HasSubstr("Invalid argument"));
  }
}

TEST_F(SelftestDriverTest, NoaSlowSettleFailsNoaSettleWithGarbageInTheFirstWindow) {
  for (const char* platform : kPlatforms) {
    SCOPED_TRACE(platform);
    // The garbage lasts 25 ms of real time: a stall before the first window hides it, so a
    // loaded machine gets five tries (selftest_test.cc's fault test does the same).
    SelftestReport report = run_on(platform, {SimFault::kNoaSlowSettle});
    for (int i = 1; i < 5 && result(report, "noa-settle").verdict != Verdict::kFail; ++i) {
      report = run_on(platform, {SimFault::kNoaSlowSettle});
    }
    const CheckResult& r = result(report, "noa-settle");
    EXPECT_EQ(r.verdict, Verdict::kFail);
    // The garbage rate is 50 events per ms; the tolerance 2 per ms and 5%.
    EXPECT_GT(figure(r, "worst_difference"), 10);
  }
}

TEST_F(SelftestDriverTest, CtxImageStaleFailsContextSwitchOnGen9AndChangesNothingOnGen12) {
  const SelftestReport kbl_report = run_on("kblgt2", {SimFault::kCtxImageStale});
  const CheckResult& kbl = result(kbl_report, "context-switch");
  EXPECT_EQ(kbl.verdict, Verdict::kFail);
  EXPECT_THAT(kbl.reason, HasSubstr("perf: the switch changed A7"));
  EXPECT_GT(figure(kbl, "perf_worst_relative_difference"), 0.5);
  // Gen12 and Xe-LPG: the driver writes OAG and the flex registers globally, so nothing is in
  // a context image to be stale, and the check says so rather than passing.
  for (const char* platform : {"tglgt2", "mtlgt2", "lnl"}) {
    SCOPED_TRACE(platform);
    const SelftestReport report = run_on(platform, {SimFault::kCtxImageStale});
    EXPECT_EQ(result(report, "context-switch").verdict, Verdict::kSkip);
    EXPECT_THAT(result(report, "context-switch").reason, HasSubstr("context-saved"));
    EXPECT_FALSE(any_failed(report)) << report_table(report);
  }
}

TEST_F(SelftestDriverTest, PeriodicCountsDoubledFailsRpcVsPeriodicWithTheDoubledRatios) {
  for (const char* platform : kPlatforms) {
    SCOPED_TRACE(platform);
    const SelftestReport report = run_on(platform, {SimFault::kPeriodicCountsDoubled});
    const CheckResult& r = result(report, "rpc-vs-periodic");
    EXPECT_EQ(r.verdict, Verdict::kFail);
    EXPECT_NEAR(figure(r, "worst_relative_difference"), 1.0, 0.05);  // twice: 100% off
  }
}

TEST_F(SelftestDriverTest, UnderXeThePeriodicReportsAreTheOnlyPathAndTheCheckSaysSo) {
  const SelftestReport report = run_on("tglgt2-xe");
  const CheckResult& r = result(report, "rpc-vs-periodic");
  EXPECT_EQ(r.verdict, Verdict::kSkip);
  EXPECT_THAT(r.reason, HasSubstr("under xe"));
}

// The simulated drivers refuse exactly the UUID the fault names, as i915_perf.c's alloc_oa_regs
// and xe_oa.c's ADD_CONFIG refuse a list with a register their tables lack: EINVAL.
constexpr const char* kRejected = "01234567-89ab-cdef-0123-456789abcdef";
constexpr const char* kAccepted = "11111111-2222-3333-4444-555555555555";

mmio::OaConfig one_flex_config(const char* uuid) {
  return {.guid = uuid, .mux = {}, .boolean = {}, .flex = {{mmio::reg::kEuPerfCntl[0], 0x5004}}};
}

TEST(SimDriverFaultTest, SimulatedI915RefusesTheRejectedUuidWithEinval) {
  mmio::SimConfig config;
  config.faults.rejected_config_uuid = kRejected;
  mmio::SteadyClock clock;
  mmio::SimGpu sim(config, clock);
  const auto perf = gpu::make_sim_i915_perf(sim);
  EXPECT_EQ(gpu::add_oa_config(*perf, one_flex_config(kRejected)), -EINVAL);
  const int id = gpu::add_oa_config(*perf, one_flex_config(kAccepted));
  ASSERT_GE(id, 2);
  EXPECT_EQ(perf->remove_config(static_cast<std::uint64_t>(id)), 0);
}

TEST(SimDriverFaultTest, SimulatedXeRefusesTheRejectedUuidWithEinval) {
  mmio::SimConfig config;
  config.platform = mmio::sim_platform_by_name("tglgt2-xe");
  config.faults.rejected_config_uuid = kRejected;
  gpu::Device device = gpu::make_sim_device(std::make_unique<mmio::SteadyClock>(), config);
  const auto xe = gpu::make_sim_xe_observation(*device.sim_xe);
  auto add = [&](const char* uuid) {
    const std::uint32_t regs[] = {mmio::reg::kEuPerfCntl[0], 0x5004};
    gpu::xe::OaConfigParam c;
    std::memcpy(c.uuid, uuid, sizeof c.uuid);
    c.n_regs = 1;
    c.regs_ptr = reinterpret_cast<std::uintptr_t>(regs);
    return xe->add_config(c);
  };
  EXPECT_EQ(add(kRejected), -EINVAL);
  const int id = add(kAccepted);
  ASSERT_GE(id, 1);
  EXPECT_EQ(xe->remove_config(static_cast<std::uint64_t>(id)), 0);
}

// A forced switch reloads the context-saved registers from the image i915 wrote, unless the
// image is stale: then from another context's values.
TEST(SimDriverFaultTest, ASwitchLoadsTheImageUnlessItIsStale) {
  for (const bool stale : {false, true}) {
    mmio::SimConfig config;
    config.faults.context_image_stale = stale;
    mmio::ManualClock clock;
    mmio::SimGpu sim(config, clock);
    sim.write32(mmio::reg::kEuPerfCntl[0], 0x5004);
    sim.set_context_image({{mmio::reg::kEuPerfCntl[0], 0x5004}});
    sim.switch_context();
    EXPECT_EQ(sim.read32(mmio::reg::kEuPerfCntl[0]), stale ? 0u : 0x5004u) << stale;
    EXPECT_EQ(sim.context_switches(), 1u);
  }
}

}  // namespace
}  // namespace oaprof::run::selftest
