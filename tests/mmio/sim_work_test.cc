// SimGpu with a kernel whose work it knows: the counters advance as that work dictates, and the
// per-event energy model follows exactly the events oa::energy_events reads.
#include <gtest/gtest.h>

#include "mmio/counter_registers.h"
#include "mmio/registers.h"
#include "mmio/sim_gpu.h"
#include "oa/energy_events.h"
#include "oa/report_format.h"

namespace oaprof::mmio {
namespace {

constexpr std::uint32_t kEnableSelect5 = (5u << reg::kOaControlSelectShift) | reg::kOaControlEnable;

struct Bench {
  explicit Bench(std::string_view platform, std::optional<SimEnergyModel> model = std::nullopt) {
    SimConfig c;
    c.platform = sim_platform_by_name(platform);
    c.energy_model = std::move(model);
    sim.emplace(c, clock);
    const reg::OaRegisterBlock& block = reg::oa_block(c.platform.gen);
    sim->write32(block.oa_control, kEnableSelect5);
    sim->write32(reg::kSqCnt1, reg::kSqCnt1PmonEnable);  // Gen12 counts only with PMON
  }
  oa::Report read() {
    const oa::Generation gen = sim->config().platform.gen;
    const oa::ReportFormat format = oa::default_format(gen);
    // Through the report's encoding, as a source hands it on: that marks the counters present.
    const oa::Report r = read_counter_registers(
        reg::oa_block(gen), format, 0, [&](std::uint32_t off) { return sim->read32(off); });
    return oa::decode(format, oa::encode(format, r).bytes);
  }
  ManualClock clock;
  std::optional<SimGpu> sim;
};

TEST(SimWorkTest, Gen9CountsAKnownKernelsFpuSendAndGtiEventsWhenItEnds) {
  Bench b("kblgt2");
  oa::KernelWork w;
  w.work_items = 4096;
  w.fp32_ops = 1.6e6;  // both FPUs together, 8 an EU-cycle: 2e5 EU-cycles on each
  w.fp64_ops = 2e5;    // FPU0 alone, 2 an EU-cycle
  w.global_bytes = 64e3;
  w.global_accesses = 8e3;
  w.footprint_bytes = 32e3;  // fits the simulated L3: read from memory once
  const oa::Report begin = b.read();
  b.sim->set_kernel_running(true, &w);
  b.sim->set_kernel_running(false);  // no time passed: the work is counted all the same
  const oa::CounterDeltas d = oa::compute_deltas(begin, b.read());
  EXPECT_EQ(d.a[10], 200'000u + 100'000u);  // FPU0: FP32 and FP64
  EXPECT_EQ(d.a[11], 200'000u);
  EXPECT_EQ(d.a[9], 200'000u);                    // both active
  EXPECT_EQ(d.a[12], 2'000u);                     // send: 64 kB / 32
  EXPECT_EQ(d.a[7], 300'000u + 2'000u + 1'024u);  // busiest FPU + send + dispatch
  EXPECT_EQ(d.a[32], 1'000u);                     // 64-byte messages
  EXPECT_EQ((d.c[4] + d.c[5]) * 64, 32'000u);     // the footprint, through GTI
  EXPECT_EQ(d.a[0], 0u);                          // busy follows the clock, which did not move
}

TEST(SimWorkTest, KnownEventsSpreadOverTheTimeThePartWouldTake) {
  Bench b("kblgt2");
  oa::KernelWork w;
  w.work_items = 24 * 112;       // fills the 24 EUs
  w.fp32_ops = 24 * 8 * 1.15e6;  // 1.15e6 cycles of all 24 EUs: 1 ms at 1150 MHz
  // Dispatch adds a quarter EU-cycle per work-item: 672 EU-cycles, 28 clocks of the 24 EUs.
  const double dispatch_ns = 28 / 1.15;
  const auto events = sim_kernel_events(w, oa::Generation::kGen9, 24, 1150);
  EXPECT_NEAR(events.duration_ns, 1e6 + dispatch_ns, 1);
  // 112 work-items fill one EU: the same work takes 24 times as long.
  oa::KernelWork narrow = w;
  narrow.work_items = 112;
  // (its 28 EU-cycles of dispatch on one EU take as long as the 672 above on 24)
  EXPECT_NEAR(sim_kernel_events(narrow, oa::Generation::kGen9, 24, 1150).duration_ns,
              24e6 + dispatch_ns, 1);
  const oa::Report begin = b.read();
  b.sim->set_kernel_running(true, &w);
  b.clock.advance_ns(500'000);
  const oa::CounterDeltas half = oa::compute_deltas(begin, b.read());
  const double half_done = 0.5e6 / events.duration_ns;
  EXPECT_NEAR(static_cast<double>(half.a[10]), 24 * 1.15e6 * half_done, 2);
  b.clock.advance_ns(1'500'000);  // past the work: the FPUs are done, the GPU still busy
  b.sim->set_kernel_running(false);
  const oa::CounterDeltas all = oa::compute_deltas(begin, b.read());
  EXPECT_NEAR(static_cast<double>(all.a[10]), 24 * 1.15e6, 2);
  EXPECT_EQ(all.a[0], 2'300'000u);
}

TEST(SimWorkTest, Gen12PutsTheWorkIntoItsComputeBasicLayout) {
  Bench b("tglgt2");
  oa::KernelWork w;
  w.fp32_ops = 8e5;  // 1e5 EU-cycles
  w.global_bytes = 64e6;
  w.global_accesses = 8e6;
  w.footprint_bytes = 64e6;  // beyond the simulated L3: every byte from memory
  const oa::Report begin = b.read();
  b.sim->set_kernel_running(true, &w);
  b.sim->set_kernel_running(false);
  const oa::CounterDeltas d = oa::compute_deltas(begin, b.read());
  EXPECT_EQ(d.a[7] + d.a[8] + d.a[9] + d.a[10], 100'000u + 2'000'000u);
  EXPECT_EQ(d.a[32], 1'000'000u);
  EXPECT_EQ((d.c[2] + d.c[3] + d.c[4] + d.c[5] + d.c[6] + d.c[7]) * 64, 64'000'000u);
}

TEST(SimWorkTest, TheEnergyIsStaticPowerPlusEachEventsCoefficient) {
  const oa::EnergyEventSet* set = oa::energy_events(oa::Generation::kGen9);
  ASSERT_NE(set, nullptr);
  SimEnergyModel model{2.0, std::vector<double>(set->events.size(), 0.0), 0.0, 1};
  model.joules_per_event[0] = 1e-9;   // per busy cycle
  model.joules_per_event[7] = 1e-10;  // per GTI byte
  Bench b("kblgt2", model);
  oa::KernelWork w;
  w.global_bytes = w.footprint_bytes = 1e6;
  const double before = b.sim->gpu_energy_j().value();
  const oa::Report begin = b.read();
  b.sim->set_kernel_running(true, &w);
  b.clock.advance_ns(1'000'000);
  b.sim->set_kernel_running(false);
  b.clock.advance_ns(1'000'000);
  const oa::CounterDeltas d = oa::compute_deltas(begin, b.read());
  const double expected = 2.0 * 2e-3 + 1e-9 * oa::event_value(set->events[0], d) +
                          1e-10 * oa::event_value(set->events[7], d);
  // The counters hold whole counts; the model counts fractions: a GTI count or two apart.
  EXPECT_NEAR(b.sim->gpu_energy_j().value() - before, expected, 2 * 64 * 1e-10);
  EXPECT_NEAR(oa::event_value(set->events[7], d), 1e6, 64);
}

TEST(SimWorkTest, UnknownKernelsKeepTheWorkloadFractions) {
  Bench b("kblgt2");
  const oa::Report begin = b.read();
  b.sim->set_kernel_running(true);
  b.clock.advance_ns(1'000'000);
  b.sim->set_kernel_running(false);
  const oa::CounterDeltas d = oa::compute_deltas(begin, b.read());
  EXPECT_EQ(d.a[7], static_cast<std::uint64_t>(1'150'000.0 * 24 * 0.85));
}

TEST(SimWorkTest, PlatformsWithoutAnEnergyTableHaveNoModelledEnergy) {
  ManualClock clock;
  SimConfig c;
  c.platform = sim_platform_by_name("mtlgt2");
  SimGpu sim(c, clock);
  EXPECT_FALSE(sim.gpu_energy_j());
  EXPECT_TRUE(SimGpu(SimConfig{}, clock).gpu_energy_j());
}

}  // namespace
}  // namespace oaprof::mmio
