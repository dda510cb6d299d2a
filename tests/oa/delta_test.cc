#include "oa/delta.h"

#include <gtest/gtest.h>

#include <limits>
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
    a.a_bits[i] = b.a_bits[i] = i < l.a_runs[0].count ? 40 : 32;
  }
  a.a[0] = (std::uint64_t{1} << 40) - 1;  // 40-bit: wraps at 2^40
  b.a[0] = 4;
  a.a[33] = 0xFFFFFFFEu;  // 32-bit: wraps at 2^32
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

// Busy time summed in whole nanoseconds: an unknown timestamp frequency gives none (0/0) or the
// most there is (ticks over 0), never a cast of NaN or infinity (undefined; 2^63 on x86).
TEST(DeltaTest, GpuBusyNsIsWholeNanosecondsEvenWithoutATimestampFrequency) {
  CounterDeltas d;
  d.timestamp = 12001;
  EXPECT_EQ(gpu_busy_ns(d, 12e6), 1'000'083u);
  EXPECT_EQ(gpu_busy_ns(d, 0), std::numeric_limits<std::uint64_t>::max());
  d.timestamp = 0;
  EXPECT_EQ(gpu_busy_ns(d, 0), 0u);
  EXPECT_EQ(gpu_busy_ns(d, 12e6), 0u);
}

TEST(DeltaTest, XeLpgTimestampIsShiftedAndWrapsAtThirtyTwoBits) {
  // IGT (lib/i915/perf.c @ b3d809d537fe, oa_timestamp_shift -1 on MTL): delta =
  // ((end - start) mod 2^32) >> 1.
  EXPECT_EQ(timestamp_delta(0xFFFFFFFEu, 0x4u, 32, 1), 3u);
  EXPECT_EQ(timestamp_delta(100, 300, 32, 1), 100u);
  EXPECT_EQ(timestamp_delta(100, 300, 32, 0), 200u);
  EXPECT_EQ(timestamp_delta_max(32, 1), 0x7FFFFFFFu);
  // 64-bit OAM timestamps do not wrap at 32 bits.
  EXPECT_EQ(timestamp_delta(0xFFFFFFF0u, 0x1'0000'0010ull, 64, 1), 0x10u);
  EXPECT_EQ(delta_bits(0xFFFFFFFFFFFFFFF0ull, 0x10, 64), 0x20u);
}

// Encodes the pair in `format`, and checks that the decoded and the raw paths agree; returns the
// decoded deltas.
CounterDeltas deltas_both_ways(ReportFormat format, const Report& r0, const Report& r1) {
  const FormatLayout& l = layout_of(format);
  const RawReport e0 = encode(format, r0), e1 = encode(format, r1);
  const auto size = static_cast<std::size_t>(l.size_bytes);
  const std::span<const std::uint8_t> b0(e0.bytes.data(), size), b1(e1.bytes.data(), size);
  const CounterDeltas d = compute_deltas(decode(format, b0), decode(format, b1));
  CounterDeltas raw;
  EXPECT_EQ(accumulate_raw(l, b0, b1, raw), d.timestamp);
  EXPECT_EQ(raw.timestamp, d.timestamp);
  EXPECT_EQ(raw.gpu_ticks, d.gpu_ticks);
  EXPECT_EQ(raw.a, d.a);
  EXPECT_EQ(raw.b, d.b);
  EXPECT_EQ(raw.c, d.c);
  EXPECT_EQ(raw.wraps_corrected, d.wraps_corrected);
  return d;
}

TEST(DeltaTest, A24u40PairWrapsEachCounterAtItsOwnWidth) {
  Report r0, r1;
  r0.timestamp = 0xFFFFFF00u;  // raw field wraps; 0x300 raw ticks = 0x180 shifted
  r1.timestamp = 0x200u;
  r0.gpu_ticks = 0xFFFFFFF0u;
  r1.gpu_ticks = 0x10u;
  r0.a[3] = 0xFFFFFFFFu;  // 32-bit A3 wraps
  r1.a[3] = 4;
  r0.a[5] = (std::uint64_t{1} << 40) - 2;  // 40-bit A5 wraps at 2^40, not 2^32
  r1.a[5] = 0x1'0000'0001ull;
  r0.a[37] = 0xFFFFFFF0u;  // A37, 32-bit at dword 46
  r1.a[37] = 0x0Fu;
  r0.b[4] = 0xFFFFFFFFu;
  r1.b[4] = 0;
  const CounterDeltas d = deltas_both_ways(ReportFormat::kA24u40_A14u32_B8_C8, r0, r1);
  EXPECT_EQ(d.timestamp, 0x180u);
  EXPECT_EQ(d.gpu_ticks, 0x20u);
  EXPECT_EQ(d.a[3], 5u);
  EXPECT_EQ(d.a[5], 0x1'0000'0003ull);
  EXPECT_EQ(d.a[37], 0x1Fu);
  EXPECT_EQ(d.b[4], 1u);
  EXPECT_EQ(d.wraps_corrected, 6);
}

TEST(DeltaTest, OamPairUsesSixtyFourBitHeaderAndCounters) {
  Report r0, r1;
  r0.timestamp = 0x1'FFFF'FFF0ull;
  r1.timestamp = 0x2'0000'0030ull;  // 0x40 raw, 0x20 shifted
  r0.gpu_ticks = 0xFFFF'FFFFull;
  r1.gpu_ticks = 0x1'0000'0009ull;  // no 32-bit wrap: 10 clocks
  r0.a[2] = 0xFFFF'FFFF'FFFFull;    // 64-bit MPEC2 runs past 2^40
  r1.a[2] = 0x1'0000'0000'0005ull;
  r0.c[7] = 0xFFFFFFFEu;
  r1.c[7] = 1;
  const CounterDeltas d = deltas_both_ways(ReportFormat::kMpec8u64_B8_C8, r0, r1);
  EXPECT_EQ(d.timestamp, 0x20u);
  EXPECT_EQ(d.gpu_ticks, 10u);
  EXPECT_EQ(d.a[2], 6u);
  EXPECT_EQ(d.c[7], 3u);
  EXPECT_EQ(d.wraps_corrected, 1);
}

}  // namespace
}  // namespace oaprof::oa
