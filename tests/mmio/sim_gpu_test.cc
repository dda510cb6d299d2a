#include "mmio/sim_gpu.h"

#include <gtest/gtest.h>

#include "mmio/registers.h"

namespace oaprof::mmio {
namespace {

constexpr std::uint32_t kEnableA36 = (5u << reg::kOaControlSelectShift) | reg::kOaControlEnable;

class SimGpuTest : public ::testing::Test {
 protected:
  std::uint64_t a40(int i) {
    return (static_cast<std::uint64_t>(sim_.read32(reg::a_high(i))) << 32) | sim_.read32(reg::a_low(i));
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
  clock.advance_ns(1000);  // 1150 clocks
  EXPECT_EQ(sim.read32(reg::kGpuTicks), 1150u - 101u);                     // wrapped at 2^32
  EXPECT_EQ(sim.read32(reg::a_high(0)), 1u);                               // 40-bit: carried
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

}  // namespace
}  // namespace oaprof::mmio
