#include "oa/accumulator.h"

#include <gtest/gtest.h>

#include <random>

namespace oaprof::oa {
namespace {

constexpr std::uint64_t k2to40 = std::uint64_t{1} << 40;

// A report of the 256-byte format as the hardware would hold true counts `truth` (unbounded).
Report report_of(std::uint64_t ts, std::uint64_t ticks, std::uint64_t a7, std::uint64_t a32,
                 std::uint64_t b0) {
  Report r = decode(ReportFormat::kA32u40_A4u32_B8_C8, std::vector<std::uint8_t>(256, 0));
  r.timestamp = static_cast<std::uint32_t>(ts);
  r.gpu_ticks = static_cast<std::uint32_t>(ticks);
  r.a[7] = a7 % k2to40;
  r.a[32] = static_cast<std::uint32_t>(a32);
  r.b[0] = static_cast<std::uint32_t>(b0);
  return r;
}

TEST(AccumulatorTest, IntervalsLongerThanOneWrapAreExactWhenReadOftenEnough) {
  // 1.15 GHz, 24 EUs, 12 MHz timestamp: read every 0.5 s for 60 s. GPU_TICKS wraps every 3.7 s,
  // so the total spans 16 wraps of it; A7 adds 20 per clock and wraps its 40 bits too.
  std::mt19937_64 rng(7);
  const double max_ns = max_safe_read_interval_ns(1150, 24, 12e6);
  Accumulator acc(12e6, max_ns);
  std::uint64_t ts = 0xFFFF0000u, ticks = 0xFFFFF000u, a7 = k2to40 - 1000, a32 = 0xFFFFFF00u,
                b0 = 0;
  const std::uint64_t ts0 = ts, ticks0 = ticks, a70 = a7, a320 = a32;
  acc.add(report_of(ts, ticks, a7, a32, b0));
  for (int i = 0; i < 120; ++i) {
    const std::uint64_t clocks = 575'000'000 - rng() % 1000;
    ts += 6'000'000;
    ticks += clocks;
    a7 += clocks * 20;
    a32 += clocks / 3;
    b0 += clocks;
    acc.add(report_of(ts, ticks, a7, a32, b0));
  }
  EXPECT_TRUE(acc.exact());
  EXPECT_EQ(acc.reports(), 121u);
  EXPECT_EQ(acc.total().timestamp, ts - ts0);
  EXPECT_EQ(acc.total().gpu_ticks, ticks - ticks0);
  EXPECT_GT(acc.total().gpu_ticks, std::uint64_t{16} << 32);
  EXPECT_EQ(acc.total().a[7], a7 - a70);
  EXPECT_GT(acc.total().a[7], k2to40);
  EXPECT_EQ(acc.total().a[32], a32 - a320);
  EXPECT_EQ(acc.total().b[0], b0);
  EXPECT_GT(acc.total().wraps_corrected, 16);
}

TEST(AccumulatorTest, AGapTooLongIsFlaggedNotAbsorbed) {
  const double max_ns = max_safe_read_interval_ns(1150, 24, 12e6);
  Accumulator acc(12e6, max_ns);
  acc.add(report_of(0, 0, 0, 0, 0));
  // 5 s later: GPU_TICKS wrapped once (exactly 1.15e9 × 5 = 5.75e9 > 2^32) and the delta is short.
  acc.add(report_of(60'000'000, 5'750'000'000ull, 0, 0, 0));
  EXPECT_FALSE(acc.exact());
  EXPECT_EQ(acc.untrusted_intervals(), 1u);
  EXPECT_TRUE(acc.total().interval_too_long);
  EXPECT_NE(acc.total().gpu_ticks, 5'750'000'000ull);  // what an unflagged result would hide
}

TEST(AccumulatorTest, LostReportsAreCountedAndResetStartsOver) {
  Accumulator acc(12e6, 1e9);
  acc.add(report_of(0, 0, 0, 0, 0));
  acc.mark_lost();
  acc.add(report_of(1200, 1000, 10, 0, 0));
  EXPECT_EQ(acc.lost_gaps(), 1u);
  EXPECT_TRUE(acc.exact());
  EXPECT_EQ(acc.total().a[7], 10u);
  acc.reset();
  EXPECT_EQ(acc.reports(), 0u);
  EXPECT_EQ(acc.total().a[7], 0u);
  acc.add(report_of(5, 5, 5, 5, 5));
  EXPECT_EQ(acc.total().timestamp, 0u);
}

TEST(AccumulatorTest, SafeIntervalFollowsTheNarrowestCounter) {
  // 32-bit clock counters bound it at 1.15 GHz: 2^32 / 1.15e9 / 2 ≈ 1.867 s.
  EXPECT_NEAR(max_safe_read_interval_ns(1150, 24, 12e6), 4294967296.0 / 1.15e9 / 2 * 1e9, 1.0);
  // With many EUs the 40-bit A counters bind: 2^40 / (1e9 × 512) / 2 ≈ 1.07 s.
  EXPECT_NEAR(max_safe_read_interval_ns(1000, 512, 12e6), 1099511627776.0 / 512e9 / 2 * 1e9, 1.0);
  // A very fast timestamp binds.
  EXPECT_NEAR(max_safe_read_interval_ns(1, 1, 1e9), 4294967296.0 / 1e9 / 2 * 1e9, 1.0);
  EXPECT_EQ(max_safe_read_interval_ns(0, 24), 0.0);
}

TEST(AccumulatorTest, RawPathMatchesTheDecodedPathForEveryFormat) {
  // Random counters starting near 2^32 and 2^40 in every format: add_raw must give exactly what
  // decode + compute_deltas + accumulate give.
  std::mt19937_64 rng(99);
  for (const FormatLayout& l : all_formats()) {
    SCOPED_TRACE(std::string(l.name));
    Accumulator decoded(12e6, 1e12), raw(12e6, 1e12), batch(12e6, 1e12);
    CounterDeltas pairwise;
    std::vector<std::uint8_t> all;
    std::vector<RawReport> reports;
    Report r;
    r.timestamp = 0xFFFFFFF0u;
    r.gpu_ticks = 0xFFFFFF00u;
    for (auto& a : r.a) a = (std::uint64_t{1} << 40) - 1 - rng() % 100000;
    for (auto& b : r.b) b = 0xFFFFFFFFu - static_cast<std::uint32_t>(rng() % 100000);
    for (auto& c : r.c) c = 0xFFFFFFFFu - static_cast<std::uint32_t>(rng() % 100000);
    for (int i = 0; i < 50; ++i) {
      reports.push_back(encode(l.format, r));
      r.timestamp += 1000;
      r.gpu_ticks += static_cast<std::uint32_t>(rng() % 1'000'000);
      for (auto& a : r.a) a += rng() % 50'000'000;
      for (auto& b : r.b) b += static_cast<std::uint32_t>(rng() % 1'000'000);
      for (auto& c : r.c) c += static_cast<std::uint32_t>(rng() % 1'000'000);
    }
    for (const RawReport& rep : reports) {
      const std::span<const std::uint8_t> bytes(rep.bytes.data(),
                                                static_cast<std::size_t>(rep.size));
      decoded.add(decode(l.format, bytes));
      raw.add_raw(l, bytes);
      if (!all.empty()) {
        accumulate_raw(l, std::span(all).last(bytes.size()), bytes, pairwise);
      }
      all.insert(all.end(), bytes.begin(), bytes.end());
    }
    // Blocks of uneven sizes, as reads of a stream would deliver them.
    const auto size = static_cast<std::size_t>(l.size_bytes);
    std::size_t at = 0;
    for (std::size_t block : {1, 7, 2, 30, 10}) {
      batch.add_raw_batch(l, std::span(all).subspan(at * size, block * size));
      at += block;
    }
    ASSERT_EQ(at, 50u);
    const CounterDeltas& a = decoded.total();
    const CounterDeltas* pairwise_total = &pairwise;
    for (const CounterDeltas* other : {&batch.total(), pairwise_total}) {
      EXPECT_EQ(a.timestamp, other->timestamp);
      EXPECT_EQ(a.gpu_ticks, other->gpu_ticks);
      EXPECT_EQ(a.a, other->a);
      EXPECT_EQ(a.b, other->b);
      EXPECT_EQ(a.c, other->c);
      EXPECT_EQ(a.wraps_corrected, other->wraps_corrected);
    }
    EXPECT_EQ(batch.reports(), 50u);
    const CounterDeltas& b = raw.total();
    EXPECT_EQ(a.timestamp, b.timestamp);
    EXPECT_EQ(a.gpu_ticks, b.gpu_ticks);
    EXPECT_EQ(a.has_gpu_ticks, b.has_gpu_ticks);
    EXPECT_EQ(a.a, b.a);
    EXPECT_EQ(a.a_present, b.a_present);
    EXPECT_EQ(a.b, b.b);
    EXPECT_EQ(a.c, b.c);
    EXPECT_EQ(a.wraps_corrected, b.wraps_corrected);
    // PEC64u64 has only 64-bit fields, which these values never wrap (PecCountersWrapAt2To64).
    if (l.format != ReportFormat::kPec64u64) {
      EXPECT_GT(b.wraps_corrected, 0);
    }
    EXPECT_EQ(raw.reports(), 50u);
    EXPECT_TRUE(raw.exact());
  }
  Accumulator acc(12e6, 1e12);
  std::vector<std::uint8_t> short_report(100);
  EXPECT_THROW(acc.add_raw(layout_of(ReportFormat::kA32u40_A4u32_B8_C8), short_report),
               std::invalid_argument);
  EXPECT_THROW(acc.add_raw_batch(layout_of(ReportFormat::kA32u40_A4u32_B8_C8), short_report),
               std::invalid_argument);
}

TEST(AccumulatorTest, PecCountersWrapAt2To64) {
  // IGT's intel_xe_perf_accumulate_reports takes each PEC delta as a plain 64-bit difference:
  // a counter that passes 2^64 - 1 still gives the events counted.
  const FormatLayout& l = layout_of(ReportFormat::kPec64u64);
  Report r0;
  r0.timestamp = 1000;
  r0.gpu_ticks = 5000;
  Report r1 = r0;
  r1.timestamp += 19'200;
  r1.gpu_ticks += 20'000;
  for (int i = 0; i < 64; ++i) {
    r0.a[i] = ~std::uint64_t{0} - static_cast<std::uint64_t>(i);
    r1.a[i] = r0.a[i] + 1000 + static_cast<std::uint64_t>(i);
  }
  Accumulator acc(19.2e6, 1e9);
  acc.add_raw(l, encode(l.format, r0).bytes);
  acc.add_raw(l, encode(l.format, r1).bytes);
  for (int i = 0; i < 64; ++i) {
    EXPECT_TRUE(acc.total().a_present[i]);
    EXPECT_EQ(acc.total().a[i], 1000u + static_cast<std::uint64_t>(i)) << "PEC " << i;
  }
  EXPECT_EQ(acc.total().gpu_ticks, 20'000u);
  EXPECT_EQ(acc.total().timestamp, 19'200u);
  EXPECT_TRUE(acc.exact());
}

TEST(AccumulatorTest, RawPathFlagsAGapTooLong) {
  const FormatLayout& l = layout_of(ReportFormat::kA32u40_A4u32_B8_C8);
  Accumulator acc(12e6, max_safe_read_interval_ns(1150, 24, 12e6));
  const RawReport r0 = encode(l.format, report_of(0, 0, 0, 0, 0));
  const RawReport r1 = encode(l.format, report_of(12'000, 1'150'000, 0, 0, 0));             // 1 ms
  const RawReport r2 = encode(l.format, report_of(60'012'000, 5'751'150'000ull, 0, 0, 0));  // 5 s
  std::vector<std::uint8_t> block;
  for (const RawReport* r : {&r0, &r1}) {
    block.insert(block.end(), r->bytes.begin(), r->bytes.begin() + r->size);
  }
  acc.add_raw_batch(l, block);
  EXPECT_TRUE(acc.exact());
  acc.add_raw(l, r2.bytes);
  EXPECT_FALSE(acc.exact());
  EXPECT_EQ(acc.untrusted_intervals(), 1u);
  EXPECT_TRUE(acc.total().interval_too_long);
}

}  // namespace
}  // namespace oaprof::oa
