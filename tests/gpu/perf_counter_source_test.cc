// The perf read-out end to end on the simulator: it keeps a metric set's flex configuration
// across context switches (where mmio and rpc lose it), counts lost records, and cleans up.
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpu/counter_source.h"
#include "gpu/i915/i915_perf.h"
#include "gpu/sim/sim_i915_perf.h"
#include "mmio/registers.h"
#include "oa/delta.h"
#include "oa/metric_xml.h"
#include "oa/topology.h"

namespace oaprof::gpu {
namespace {

using ::testing::HasSubstr;

constexpr auto kSourceFmt = oa::ReportFormat::kA32u40_A4u32_B8_C8;

// ComputeBasic of IGT's Kaby Lake GT2 file (the simulated platform): mux, boolean and all seven
// flex registers.
mmio::OaConfig compute_basic(const oa::Platform& platform) {
  std::ifstream in(std::string(OAPROF_IGT_METRICS_DIR) + "/oa-kblgt2.xml");
  std::stringstream text;
  text << in.rdbuf();
  const oa::MetricFile file = oa::import_metrics_xml(text.str(), "oa-kblgt2.xml");
  const oa::MetricSet* set = file.find("ComputeBasic");
  if (set == nullptr) throw std::runtime_error("oa-kblgt2.xml has no ComputeBasic");
  const auto vars = oa::device_variables(platform);
  using Kind = oa::RegisterConfig::Kind;
  return {set->guid(), set->writes(Kind::kNoa, vars), set->writes(Kind::kBoolean, vars),
          set->writes(Kind::kFlex, vars)};
}

struct KernelRun {
  oa::CounterDeltas deltas;
  bool config_lost = false;
  std::uint64_t switches = 0;
};

// A 3.5 ms kernel between two snapshots; with switches every millisecond, three land in it.
// Times are whole microseconds so that the model's arithmetic is exact.
KernelRun run_kernel(std::string_view access, std::uint64_t switch_period_ns) {
  auto c = std::make_unique<mmio::ManualClock>();
  mmio::ManualClock* clock = c.get();
  mmio::SimConfig cfg;
  cfg.flex_events = true;
  cfg.context_switch_period_ns = switch_period_ns;
  Device d = make_sim_device(std::move(c), cfg);
  const mmio::OaConfig config = compute_basic(d.platform);
  EXPECT_EQ(config.flex.size(), 7u);
  auto src = make_counter_source(access, d);
  src->start(kSourceFmt, config);
  clock->advance_ns(200'000);
  const auto r0 = src->snapshot(1);
  src->kernel_running(true);
  clock->advance_ns(3'500'000);
  src->kernel_running(false);
  const auto r1 = src->snapshot(2);
  KernelRun run;
  run.config_lost = src->config_lost();
  run.switches = d.sim->context_switches();
  src->stop();
  run.deltas =
      oa::compute_deltas(oa::decode(kSourceFmt, r0.bytes), oa::decode(kSourceFmt, r1.bytes));
  return run;
}

TEST(PerfReadOutTest, KeepsFlexCountersRightAcrossContextSwitchesWhereMmioAndRpcLoseThem) {
  const KernelRun reference = run_kernel("mmio", 0);  // no switches: the configuration holds
  ASSERT_FALSE(reference.config_lost);
  // ComputeBasic's EU_PERF_CNTL0 is 0x5004: the model counts 5/256 of the busy EU clocks.
  EXPECT_EQ(reference.deltas.a[7], 3'500'000ull * 1150 / 1000 * 24 * 5 / 256);

  const KernelRun perf = run_kernel("perf", 1'000'000);
  EXPECT_EQ(perf.switches, 3u);
  EXPECT_FALSE(perf.config_lost);
  for (int i = 7; i <= 13; ++i) {
    EXPECT_EQ(perf.deltas.a[i], reference.deltas.a[i]) << "A" << i;
  }
  EXPECT_EQ(perf.deltas.gpu_ticks, reference.deltas.gpu_ticks);

  for (const char* access : {"mmio", "rpc"}) {
    SCOPED_TRACE(access);
    const KernelRun lost = run_kernel(access, 1'000'000);
    EXPECT_TRUE(lost.config_lost);
    // After the first switch the flex counters counted another context's events.
    EXPECT_NE(lost.deltas.a[7], reference.deltas.a[7]);
    EXPECT_EQ(lost.deltas.gpu_ticks, reference.deltas.gpu_ticks);
  }
}

TEST(PerfReadOutTest, TheBuiltInSetIsRefusedAsI915WouldRefuseIt) {
  Device d = make_sim_device(std::make_unique<mmio::ManualClock>());
  auto src = make_counter_source("perf", d);
  try {
    src->start(kSourceFmt);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("built-in set"));
    EXPECT_THAT(e.what(), HasSubstr("--metric-set"));
  }
  EXPECT_EQ(d.mmio->read32(mmio::reg::kOaControl), 0u);
  EXPECT_THROW(src->snapshot(1), std::logic_error);
}

TEST(PerfReadOutTest, CountsSamplesAndTheLossOfAnUnreadBuffer) {
  auto c = std::make_unique<mmio::ManualClock>();
  mmio::ManualClock* clock = c.get();
  Device d = make_sim_device(std::move(c));
  d.perf_period_exponent = 5;  // 5.33 µs: the 16 MiB buffer holds 65536 reports, 350 ms
  auto src = make_counter_source("perf", d);
  src->start(kSourceFmt, compute_basic(d.platform));
  clock->advance_ns(100'000);
  src->snapshot(1);
  const PerfStreamCounts first = src->perf_stream_counts();
  EXPECT_GE(first.samples, 18);  // 100 µs / 5.33 µs
  EXPECT_LE(first.samples, 19);
  EXPECT_EQ(first.buffer_lost, 0);
  clock->advance_ns(500'000'000);  // nobody reads for half a second
  src->snapshot(2);
  const PerfStreamCounts second = src->perf_stream_counts();
  EXPECT_EQ(second.buffer_lost, 1);
  EXPECT_EQ(second.samples, first.samples);  // the restart threw the full buffer away
  clock->advance_ns(100'000);
  src->snapshot(3);  // sampling again after the restart
  EXPECT_GT(src->perf_stream_counts().samples, second.samples);
  EXPECT_EQ(src->perf_stream_counts().buffer_lost, 1);
  src->stop();
}

TEST(PerfReadOutTest, StopRemovesTheConfigurationItAddedAndFreesTheOaUnit) {
  Device d = make_sim_device(std::make_unique<mmio::ManualClock>());
  const mmio::OaConfig config = compute_basic(d.platform);
  auto a = make_counter_source("perf", d);
  a->start(kSourceFmt, config);
  auto probe = make_sim_i915_perf(*d.sim);
  EXPECT_EQ(probe->find_config_id(config.guid), 2u);
  auto b = make_counter_source("perf", d);
  try {
    b->start(kSourceFmt, config);  // the configuration exists; the OA unit is taken
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("simulated i915 refused the perf stream"));
    EXPECT_THAT(e.what(), HasSubstr("Device or resource busy"));
  }
  a->stop();
  EXPECT_EQ(probe->find_config_id(config.guid), std::nullopt);
  EXPECT_EQ(d.mmio->read32(mmio::reg::kOaControl), 0u);
  b->start(kSourceFmt, config);
  EXPECT_EQ(b->snapshot(7).dword(0), 7u);
  b->stop();
}

}  // namespace
}  // namespace oaprof::gpu
