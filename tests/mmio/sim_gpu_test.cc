#include "mmio/sim_gpu.h"

#include <gtest/gtest.h>

#include "mmio/registers.h"

namespace oaprof::mmio {
namespace {

constexpr std::uint32_t kEnableA36 = (5u << reg::kOaControlSelectShift) | reg::kOaControlEnable;

class SimGpuTest : public ::testing::Test {
 protected:
  std::uint64_t a40(int i) {
    return (static_cast<std::uint64_t>(sim_.read32(reg::a_high(i))) << 32) |
           sim_.read32(reg::a_low(i));
  }
  ManualClock clock_;
  SimGpu sim_{SimConfig{}, clock_};
};

TEST_F(SimGpuTest, CountsNothingUntilEnabled) {
  sim_.set_kernel_running(true);
  clock_.advance_ns(1'000'000);
  EXPECT_EQ(sim_.read32(reg::kGpuTicks), 0u);
  EXPECT_EQ(a40(0), 0u);
}

TEST_F(SimGpuTest, TicksAtTheConfiguredFrequencyAndBusyOnlyWhileAKernelRuns) {
  sim_.write32(reg::kOaControl, kEnableA36);
  clock_.advance_ns(1'000'000);  // 1 ms idle
  EXPECT_EQ(sim_.read32(reg::kGpuTicks), 1'150'000u);
  EXPECT_EQ(a40(0), 0u);
  sim_.set_kernel_running(true);
  clock_.advance_ns(2'000'000);  // 2 ms busy
  sim_.set_kernel_running(false);
  clock_.advance_ns(1'000'000);
  EXPECT_EQ(sim_.read32(reg::kGpuTicks), 4'600'000u);
  EXPECT_EQ(a40(0), 2'300'000u);
  // EU active: 24 EUs × 85 % of the busy clocks.
  EXPECT_EQ(a40(7), static_cast<std::uint64_t>(2'300'000.0 * 24 * 0.85));
}

TEST_F(SimGpuTest, DisablingFreezesTheCounters) {
  sim_.write32(reg::kOaControl, kEnableA36);
  clock_.advance_ns(1000);
  sim_.write32(reg::kOaControl, 0);
  const auto frozen = sim_.read32(reg::kGpuTicks);
  clock_.advance_ns(1'000'000);
  EXPECT_EQ(sim_.read32(reg::kGpuTicks), frozen);
}

// The live clock's quantum: reads within 1 µs of the model's last step read that step, the
// timestamp and the counters together; a read past it, or any write, moves the model on.
TEST(SimGpuQuantumTest, ReadsWithinTheClocksQuantumReadTheModelsLastStepTogether) {
  class QuantumClock final : public Clock {
   public:
    std::uint64_t now_ns() override { return now; }
    std::uint64_t read_quantum_ns() const override { return 1000; }
    std::uint64_t now = 0;
  } clock;
  SimGpu sim(SimConfig{}, clock);
  sim.write32(reg::kOaControl, kEnableA36);  // a write steps the model to 0
  clock.now = 999;
  EXPECT_EQ(sim.read32(reg::kGpuTicks), 0u) << "within the quantum: the step at 0";
  EXPECT_EQ(sim.read32(reg::kRingTimestamp), 0u);
  clock.now = 1'000'000;
  const std::uint32_t ts = sim.read32(reg::kRingTimestamp);  // past it: the model moves to 1 ms
  EXPECT_EQ(ts, 12'000u);
  clock.now = 1'000'900;
  EXPECT_EQ(sim.read32(reg::kGpuTicks), 1'150'000u) << "the clocks of the timestamp's instant";
  sim.write32(reg::kOaControl, kEnableA36);  // a write moves it on whatever the quantum
  EXPECT_EQ(sim.read32(reg::kGpuTicks), 1'151'035u);
  EXPECT_EQ(SteadyClock().read_quantum_ns(), 1000u);
  EXPECT_EQ(ManualClock().read_quantum_ns(), 0u) << "tests step the model at every read";
}

TEST_F(SimGpuTest, TimestampRunsAtThePlatformFrequencyWithoutOa) {
  const std::uint32_t t0 = sim_.read32(reg::kRingTimestamp);
  clock_.advance_ns(1'000'000'000);
  EXPECT_EQ(sim_.read32(reg::kRingTimestamp) - t0, 12'000'000u);
}

TEST_F(SimGpuTest, RpStatReportsTheFrequencyIn50Over3MhzUnits) {
  const std::uint32_t units = sim_.read32(reg::kRpStat) >> reg::kRpStatFreqShift;
  EXPECT_NEAR(units * 50.0 / 3.0, 1150.0, 50.0 / 3.0);
}

TEST(SimGpuWrapTest, CountersWrapAtTheirWidths) {
  ManualClock clock;
  SimConfig cfg;
  cfg.counter_start = 0xFFFFFFFFull - 100;  // 32-bit counters about to wrap
  SimGpu sim(cfg, clock);
  sim.write32(reg::kOaControl, kEnableA36);
  sim.set_kernel_running(true);
  clock.advance_ns(1000);                               // 1150 clocks
  EXPECT_EQ(sim.read32(reg::kGpuTicks), 1150u - 101u);  // wrapped at 2^32
  EXPECT_EQ(sim.read32(reg::a_high(0)), 1u);            // 40-bit: carried
  EXPECT_EQ(sim.read32(reg::a_low(0)), 1150u - 101u);

  SimConfig cfg40;
  cfg40.counter_start = (std::uint64_t{1} << 40) - 10;
  SimGpu sim40(cfg40, clock);
  sim40.write32(reg::kOaControl, kEnableA36);
  sim40.set_kernel_running(true);
  clock.advance_ns(1000);
  EXPECT_EQ(sim40.read32(reg::a_high(0)), 0u);  // wrapped at 2^40
  EXPECT_EQ(sim40.read32(reg::a_low(0)), 1140u);
}

TEST_F(SimGpuTest, CounterRegistersAreReadOnlyAndOthersArePlainMemory) {
  sim_.write32(reg::kGpuTicks, 1234);
  EXPECT_EQ(sim_.read32(reg::kGpuTicks), 0u);
  sim_.write32(0x9888, 0xDEADBEEF);
  EXPECT_EQ(sim_.read32(0x9888), 0xDEADBEEFu);
  EXPECT_THROW(sim_.read32(SimGpu::kRegisterFileBytes), std::out_of_range);
  EXPECT_THROW(sim_.write32(0x2B01, 0), std::out_of_range);
}

// OACTXCONTROL with the timer on at `exponent`, as i915 programs it for a perf stream.
constexpr std::uint32_t timer_ctx(std::uint32_t exponent) {
  return reg::kOaCtxControlCounterResume | SimGpu::kOaCtxControlTimerEnable |
         (exponent << SimGpu::kOaCtxControlTimerPeriodShift);
}

// The masked mux registers take masked writes only: a plain write of a read-back value (which
// has no mask bits) changes nothing, as on the hardware.
TEST_F(SimGpuTest, MaskedMuxRegistersIgnoreAPlainWrite) {
  for (std::uint32_t r : {reg::kHalfSliceChicken2, reg::kWaitForRc6Exit}) {
    sim_.write32(r, reg::masked_enable(0x21));
    EXPECT_EQ(sim_.read32(r), 0x21u);
    sim_.write32(r, 0x0004);
    EXPECT_EQ(sim_.read32(r), 0x21u) << std::hex << r;
    sim_.write32(r, 0xFFFF0000u | 0x0004);
    EXPECT_EQ(sim_.read32(r), 0x4u);
  }
}

// A part with fused-off EUs counts with the EUs it has.
TEST(SimGpuFusedTest, CountsTheEnabledEusOnly) {
  ManualClock clock;
  SimConfig config;
  config.eus = 23;
  SimGpu sim(config, clock);
  EXPECT_EQ(sim.eus(), 23);
  sim.write32(reg::kOaControl, kEnableA36);
  sim.set_kernel_running(true);
  clock.advance_ns(1'000'000);
  const std::uint64_t eu_active =
      (static_cast<std::uint64_t>(sim.read32(reg::a_high(7))) << 32) | sim.read32(reg::a_low(7));
  EXPECT_EQ(eu_active, static_cast<std::uint64_t>(1'150'000.0 * 23 * 0.85));
  config.eus = 25;  // more than a KBL GT2 has
  EXPECT_THROW(SimGpu(config, clock), std::invalid_argument);
}

TEST_F(SimGpuTest, TheOaTimerWritesReportsOnlyWhileCountingWithTheTimerOnAndABuffer) {
  sim_.write32(reg::kOaCtxControl, timer_ctx(10));  // 2048 ticks at 12 MHz: 170.67 µs
  clock_.advance_ns(1'000'000);
  EXPECT_EQ(sim_.oa_reports_pending(), 0u);  // no buffer, OA off
  sim_.init_oa_buffer(64 * 256);
  clock_.advance_ns(1'000'000);
  EXPECT_EQ(sim_.oa_reports_pending(), 0u);  // OA off
  sim_.write32(reg::kOaControl, kEnableA36);
  clock_.advance_ns(1'024'000);  // ticks 24000 → 36288: six multiples of 2048 in it
  const auto reports = sim_.read_oa_reports(100);
  ASSERT_EQ(reports.size(), 6u);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].size, 256);
    EXPECT_EQ(reports[i].dword(0), SimGpu::kTimerReportId);
    EXPECT_EQ(reports[i].dword(1), 24576u + 2048u * i);  // the timestamp of its tick
  }
  // GPU_TICKS advance by one period's worth of clocks between reports.
  EXPECT_NEAR(static_cast<double>(reports[1].dword(3) - reports[0].dword(3)), 2048 / 12e6 * 1.15e9,
              1.0);
  sim_.write32(reg::kOaCtxControl, reg::kOaCtxControlCounterResume);  // timer off
  clock_.advance_ns(1'000'000);
  EXPECT_EQ(sim_.oa_reports_pending(), 0u);
}

// Meteor Lake's OA unit ignores the CTC shift (linux i915_perf.c
// i915_perf_oa_timestamp_frequency, Wa_18013179988): its timer fires every (2 << exponent) ticks
// of the undivided 38.4 MHz crystal and its reports carry those ticks, at every shift, as IGT's
// tests/intel/perf.c (oa-exponents: periodic reports 2 << exponent apart) checks on hardware.
TEST(SimGpuXeLpgTest, TheOaTimerAndReportTimestampsCountTheCrystalAtEveryCtcShift) {
  constexpr double kCrystalHz = 38.4e6;
  for (const std::uint32_t shift : {1u, 2u, 3u}) {
    ManualClock clock;
    SimConfig c;
    c.platform = sim_platform_by_name("mtlgt2");
    c.platform.timestamp_hz = kCrystalHz / (1 << (3 - shift));
    c.timestamp_registers = TimestampRegisters{0, (2u << 3) | (shift << 1), 0};
    SimGpu sim(c, clock);
    const reg::OaRegisterBlock& block = reg::oa_block(oa::Generation::kXeLpg);
    sim.init_oa_buffer(64 * 256);
    sim.write32(block.ctx_control, timer_ctx(10));
    sim.write32(block.oa_control, kEnableA36);  // select 5: A24u40_A14u32_B8_C8 on Xe-LPG
    // Eight periods of 2048 crystal ticks, and a little less than a ninth.
    clock.advance_ns(static_cast<std::uint64_t>(8 * 2048 / kCrystalHz * 1e9) + 1000);
    const auto reports = sim.read_oa_reports(100);
    ASSERT_EQ(reports.size(), 8u) << "shift " << shift;
    for (std::size_t i = 0; i < reports.size(); ++i) {
      EXPECT_EQ(reports[i].dword(1), 2048u * (i + 1)) << "shift " << shift << ", report " << i;
    }
  }
}

TEST_F(SimGpuTest, AFullOaBufferDropsReportsAndSaysSoInOastatus) {
  sim_.init_oa_buffer(3 * 256);
  sim_.write32(reg::kOaCtxControl, timer_ctx(10));
  sim_.write32(reg::kOaControl, kEnableA36);
  clock_.advance_ns(1'000'000);
  EXPECT_EQ(sim_.oa_reports_pending(), 3u);
  EXPECT_EQ(sim_.read32(reg::kOaStatus),
            SimGpu::kOaStatusReportLost | SimGpu::kOaStatusBufferOverflow);
  EXPECT_EQ(sim_.read_oa_reports(2).size(), 2u);  // the reader frees room
  EXPECT_EQ(sim_.oa_reports_pending(), 1u);
  sim_.init_oa_buffer(3 * 256);  // what i915 does on overflow
  EXPECT_EQ(sim_.oa_reports_pending(), 0u);
  EXPECT_EQ(sim_.read32(reg::kOaStatus), 0u);
}

TEST(SimGpuContextImageTest, SwitchesLoadTheContextImageAndStopATimerItLacks) {
  ManualClock clock;
  SimConfig cfg;
  cfg.context_switch_period_ns = 1'000'000;
  cfg.context_image_value = 0x77;
  SimGpu sim(cfg, clock);
  sim.init_oa_buffer(1 << 16);
  sim.write32(reg::kOaCtxControl, timer_ctx(10));
  sim.write32(reg::kEuPerfCntl[0], 0x5004);
  sim.write32(reg::kOaControl, kEnableA36);
  clock.advance_ns(2'000'000);  // a switch at 1 ms loads another context's image
  EXPECT_EQ(sim.context_switches(), 2u);
  EXPECT_EQ(sim.read32(reg::kEuPerfCntl[0]), 0x77u);
  EXPECT_EQ(sim.oa_reports_pending(), 5u);  // the timer ran until the first switch only
  sim.read_oa_reports(100);

  sim.set_context_image({{reg::kOaCtxControl, timer_ctx(10)}, {reg::kEuPerfCntl[0], 0x5004}});
  clock.advance_ns(1'000'000);
  EXPECT_EQ(sim.read32(reg::kEuPerfCntl[0]), 0x5004u);
  EXPECT_EQ(sim.read32(reg::kEuPerfCntl[1]), 0x77u);  // not in the image
  clock.advance_ns(2'000'000);
  EXPECT_GE(sim.oa_reports_pending(), 11u);  // ticking through the switches now
}

TEST(SimGpuContextImageTest, ALongGapCountsEverySwitchAndTheSameEventsAsOneStep) {
  for (const bool flex : {false, true}) {
    ManualClock clock;
    SimConfig cfg;
    cfg.context_switch_period_ns = 1'000'000;
    cfg.flex_events = flex;
    SimGpu sim(cfg, clock);
    sim.write32(reg::kEuPerfCntl[0], 0x5004);
    sim.write32(reg::kOaControl, kEnableA36);
    sim.set_kernel_running(true);
    clock.advance_ns(500'000);
    sim.read32(reg::kGpuTicks);
    clock.advance_ns(2'000'000'000);  // 2000 switches in one read
    EXPECT_EQ(sim.context_switches(), 2000u);
    EXPECT_EQ(sim.read32(reg::kEuPerfCntl[0]), 0u);  // another context's image since 1 ms
    EXPECT_EQ(sim.read32(reg::kGpuTicks), 2'300'575'000u);
    // Until the first switch, at 1 ms, A7 counted the selected event (5/256 when modelled),
    // then the default one (85 %).
    const double before = flex ? 5.0 / 256 : 0.85;
    const double expected = 1'150'000.0 * 24 * before + 2'299'425'000.0 * 24 * 0.85;
    const std::uint64_t a7 =
        (static_cast<std::uint64_t>(sim.read32(reg::a_high(7))) << 32) | sim.read32(reg::a_low(7));
    EXPECT_NEAR(static_cast<double>(a7), expected, 2.0);
  }
}

TEST(SimGpuFlexTest, FlexCountersFollowTheirSelectOnlyWhenModelled) {
  for (const bool modelled : {false, true}) {
    ManualClock clock;
    SimConfig cfg;
    cfg.flex_events = modelled;
    SimGpu sim(cfg, clock);
    sim.write32(reg::kEuPerfCntl[0], 0x5004);  // select 4: 5/256 of the EU clocks
    sim.write32(reg::kOaControl, kEnableA36);
    sim.set_kernel_running(true);
    clock.advance_ns(1'000'000);
    const std::uint64_t a7 = sim.read32(reg::a_low(7));
    EXPECT_EQ(a7, modelled ? 1'150'000ull * 24 * 5 / 256
                           : static_cast<std::uint64_t>(1'150'000.0 * 24 * 0.85));
  }
}

}  // namespace
}  // namespace oaprof::mmio
