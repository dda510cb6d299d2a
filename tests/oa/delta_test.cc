#include "oa/delta.h"

#include <gtest/gtest.h>

#include <random>

namespace oaprof::oa {
namespace {

TEST(DeltaTest, ThirtyTwoBitWrapsOnce) {
  EXPECT_EQ(delta32(10, 20), 10u);
  EXPECT_EQ(delta32(0xFFFFFFF0u, 0x10u), 0x20u);
  EXPECT_EQ(delta32(5, 5), 0u);
}

TEST(DeltaTest, FortyBitWrapsOnce) {
  constexpr std::uint64_t k40 = std::uint64_t{1} << 40;
  EXPECT_EQ(delta40(k40 - 16, 16), 32u);
  EXPECT_EQ(delta40(100, 200), 100u);
  // Bits above 40 in the inputs are not part of the counter.
  EXPECT_EQ(delta40(k40 + 100, k40 + 150), 50u);
}

TEST(DeltaTest, PropertyRandomStartsNearEveryWrapPoint) {
  std::mt19937_64 rng(1234);
  constexpr std::uint64_t k40 = std::uint64_t{1} << 40;
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t start40 = k40 - 1 - (rng() % 4096);
    const std::uint64_t step40 = rng() % (k40 / 2);
    EXPECT_EQ(delta40(start40, (start40 + step40) % k40), step40);
    const auto start32 = static_cast<std::uint32_t>(0xFFFFFFFFu - rng() % 4096);
    const auto step32 = static_cast<std::uint32_t>(rng() % 0x80000000u);
    EXPECT_EQ(delta32(start32, start32 + step32), step32);
  }
}

TEST(DeltaTest, ComputeDeltasUsesEachCountersWidth) {
  const auto& l = layout_of(ReportFormat::kA32u40_A4u32_B8_C8);
  Report a, b;
  a.timestamp = 0xFFFFFF00u;
  b.timestamp = 0x100u;
  a.has_gpu_ticks = b.has_gpu_ticks = true;
  a.gpu_ticks = 0xFFFFFFFFu;
  b.gpu_ticks = 9;
  for (int i = 0; i < kNumA; ++i) {
    a.a_present[i] = b.a_present[i] = true;
    a.a_is_40bit[i] = b.a_is_40bit[i] = i < l.a_count;
  }
  a.a[0] = (std::uint64_t{1} << 40) - 1;  // 40-bit: wraps at 2^40
  b.a[0] = 4;
  a.a[33] = 0xFFFFFFFEu;                  // 32-bit: wraps at 2^32
  b.a[33] = 1;
  a.b[2] = 0xFFFFFFFFu;
  b.b[2] = 0;
  const CounterDeltas d = compute_deltas(a, b);
  EXPECT_EQ(d.timestamp, 0x200u);
  EXPECT_EQ(d.gpu_ticks, 10u);
  EXPECT_EQ(d.a[0], 5u);
  EXPECT_EQ(d.a[33], 3u);
  EXPECT_EQ(d.b[2], 1u);
}

TEST(DeltaTest, DerivedTimeAndFrequency) {
  CounterDeltas d;
  d.timestamp = 12000;  // 1 ms at 12 MHz
  d.gpu_ticks = 1'150'000;
  d.has_gpu_ticks = true;
  EXPECT_DOUBLE_EQ(gpu_time_ns(d, 12e6), 1e6);
  EXPECT_DOUBLE_EQ(average_frequency_mhz(d, 12e6), 1150.0);
  d.timestamp = 0;
  EXPECT_EQ(average_frequency_mhz(d, 12e6), 0.0);
}

}  // namespace
}  // namespace oaprof::oa
