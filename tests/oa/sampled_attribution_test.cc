// Sampled attribution's arithmetic (issue 17): interpolated edges, the error bound each window
// carries, the share of a window other windows overlapped, and the device-to-host clock map.
#include "oa/sampled_attribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace oaprof::oa {
namespace {

// Totals of counters growing at a steady rate: timestamp 12 per µs, GPU clocks 1150 per µs, A0
// at `busy` per µs.
CounterDeltas steady_total(std::uint64_t t_ns, double busy_per_us = 1000.0) {
  CounterDeltas d;
  d.timestamp = t_ns * 12 / 1000;
  d.gpu_ticks = t_ns * 1150 / 1000;
  d.has_gpu_ticks = true;
  d.a[0] = static_cast<std::uint64_t>(static_cast<double>(t_ns) * busy_per_us / 1000.0);
  d.a_present[0] = true;
  return d;
}

// Reads every 100 µs from 0 to 10 ms.
CounterTimeline steady_timeline() {
  CounterTimeline t;
  for (std::uint64_t ns = 0; ns <= 10'000'000; ns += 100'000) t.add(ns, steady_total(ns));
  return t;
}

TEST(CounterTimelineTest, AWindowGetsTheGrowthBetweenItsEdgesInterpolatedInsideTheirPeriods) {
  const CounterTimeline t = steady_timeline();
  // 1.23 ms from 2.05 ms: both edges half-way into a period.
  const auto s = t.attribute({2'050'000, 3'280'000});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->deltas.gpu_ticks, 1'414'500u);  // 1230 µs × 1150
  EXPECT_EQ(s->deltas.timestamp, 14'760u);
  EXPECT_EQ(s->deltas.a[0], 1'230'000u);
  EXPECT_TRUE(s->deltas.has_gpu_ticks);
  EXPECT_TRUE(s->deltas.a_present[0]);
  EXPECT_FALSE(s->deltas.interval_too_long);
  EXPECT_DOUBLE_EQ(s->error_bound, 200'000.0 / 1'230'000.0);
  // Edges on reads: nothing interpolated.
  const auto exact = t.attribute({2'000'000, 3'000'000});
  ASSERT_TRUE(exact.has_value());
  EXPECT_EQ(exact->deltas.gpu_ticks, 1'150'000u);
  EXPECT_EQ(exact->error_bound, 0.0);
  EXPECT_FALSE(s->between_reads);
  EXPECT_FALSE(exact->between_reads);
}

// A window with no read inside it (issue 29, item 12) is a share of one period's growth: it
// carries that period over its length, once, and says it lies between reads; a window of no
// length carries an infinite bound, on a read too, never an exact-looking 0 with no counts.
TEST(CounterTimelineTest, AWindowBetweenTwoReadsCarriesThePeriodItLiesInAndSaysSo) {
  const CounterTimeline t = steady_timeline();
  const auto inside = t.attribute({5'010'000, 5'030'000});  // 20 µs inside a 100 µs period
  ASSERT_TRUE(inside.has_value());
  EXPECT_EQ(inside->deltas.a[0], 20'000u);
  EXPECT_DOUBLE_EQ(inside->error_bound, 100.0 / 20.0);
  EXPECT_TRUE(inside->between_reads);
  // An edge on a read, the other inside the period after (or before) it: the same.
  for (const Window w : {Window{5'000'000, 5'020'000}, Window{4'980'000, 5'000'000}}) {
    const auto touching = t.attribute(w);
    ASSERT_TRUE(touching.has_value());
    EXPECT_DOUBLE_EQ(touching->error_bound, 100.0 / 20.0);
    EXPECT_TRUE(touching->between_reads);
  }
  const double infinite = std::numeric_limits<double>::infinity();
  for (const std::uint64_t at : {5'010'000u, 5'000'000u}) {  // inside a period, on a read
    SCOPED_TRACE(at);
    const auto none = t.attribute({at, at});
    ASSERT_TRUE(none.has_value());
    EXPECT_EQ(none->deltas.gpu_ticks, 0u);
    EXPECT_EQ(none->error_bound, infinite);
    EXPECT_TRUE(none->between_reads);
  }
  // A read inside the window, or reads on both edges: its edges' periods, as before.
  const auto across = t.attribute({5'050'000, 5'130'000});
  const auto one_period = t.attribute({5'000'000, 5'100'000});
  ASSERT_TRUE(across.has_value() && one_period.has_value());
  EXPECT_DOUBLE_EQ(across->error_bound, 200.0 / 80.0);
  EXPECT_FALSE(across->between_reads);
  EXPECT_EQ(one_period->error_bound, 0.0);
  EXPECT_FALSE(one_period->between_reads);
}

// Interpolation assumes even growth inside the edge periods. A kernel that starts and ends
// inside them, on a GPU idle around it, is the worst case: each edge is off by f (1 − f) of a
// period's growth, at most a quarter, which the bound covers four times over.
TEST(CounterTimelineTest, BusyOnlyInsideTheWindowStaysWithinAQuarterOfTheBound) {
  for (const std::uint64_t into : {10'000u, 37'000u, 50'000u, 90'000u}) {
    SCOPED_TRACE(into);
    const double f = static_cast<double>(into) / 100'000;  // how far into its period it starts
    const std::uint64_t start = 2'000'000 + into;
    const std::uint64_t end = start + 2'000'000;  // 20 periods
    CounterTimeline t;
    for (std::uint64_t ns = 0; ns <= 5'000'000; ns += 100'000) {
      CounterDeltas d = steady_total(ns, 0.0);
      d.a[0] = std::clamp(ns, start, end) - start;  // busy 1 per ns while the kernel runs
      t.add(ns, d);
    }
    const auto s = t.attribute({start, end});
    ASSERT_TRUE(s.has_value());
    const double truth = 2'000'000.0;
    const double err = std::abs(static_cast<double>(s->deltas.a[0]) - truth) / truth;
    EXPECT_NEAR(err, 2 * f * (1 - f) * 100'000 / truth, 1e-6);
    EXPECT_LE(err, s->error_bound / 4 + 1e-9);
  }
}

TEST(CounterTimelineTest, WindowsOutsideTheReadsAndReadsOutOfOrderAreRefused) {
  CounterTimeline t = steady_timeline();
  EXPECT_FALSE(t.attribute({10'000'000, 10'000'001}).has_value());
  EXPECT_FALSE(t.attribute({3'000'000, 2'000'000}).has_value());
  EXPECT_FALSE(CounterTimeline().attribute({0, 0}).has_value());
  EXPECT_THROW(t.add(10'000'000, steady_total(10'000'000)), std::invalid_argument);
  EXPECT_THROW(t.add(9'000'000, steady_total(9'000'000)), std::invalid_argument);
  // Forgetting keeps the read before the cut, so a window from the cut on is still covered.
  t.forget_before(5'050'000);
  EXPECT_EQ(t.size(), 51u);  // 5.0 ms to 10.0 ms
  EXPECT_TRUE(t.attribute({5'050'000, 6'000'000}).has_value());
  EXPECT_FALSE(t.attribute({4'990'000, 6'000'000}).has_value());
}

// An interval too long to be exact taints the windows whose reads enclose it, and no other.
TEST(CounterTimelineTest, AnUntrustedIntervalFlagsOnlyTheWindowsAroundIt) {
  CounterTimeline t;
  t.add(0, steady_total(0), 0);
  t.add(100'000, steady_total(100'000), 0);
  t.add(5'000'000'000, steady_total(5'000'000'000), 1);  // the reads stalled for 5 s
  t.add(5'000'100'000, steady_total(5'000'100'000), 1);
  EXPECT_FALSE(t.attribute({0, 100'000})->deltas.interval_too_long);
  EXPECT_TRUE(t.attribute({50'000, 5'000'000'000})->deltas.interval_too_long);
  EXPECT_TRUE(t.attribute({200'000, 300'000})->deltas.interval_too_long);
  EXPECT_FALSE(t.attribute({5'000'000'000, 5'000'050'000})->deltas.interval_too_long);
}

// The count at a point in a read period as the timeline always computed it, in long double.
std::uint64_t long_double_count(std::uint64_t begin, std::uint64_t end, std::uint64_t part,
                                std::uint64_t period) {
  if (end <= begin) return begin;
  const long double f = static_cast<long double>(part) / static_cast<long double>(period);
  return begin +
         static_cast<std::uint64_t>(std::llround(static_cast<long double>(end - begin) * f));
}

// PeriodShare computes the interpolated counts in integers where long double is x87's: every
// count must be the one long double gave, or rows would change. Random periods and growths of
// every magnitude, exact halves (an odd growth at half a period) and the products that fall a
// hair below a half (61 × 1/122), both ends of the period, and growths past 2^62 (the long
// double path) are all compared.
TEST(CounterTimelineTest, ASharesCountsAreTheLongDoubleInterpolationsExactly) {
  std::mt19937_64 rng(33);
  auto check = [](std::uint64_t begin, std::uint64_t end, std::uint64_t part,
                  std::uint64_t period) {
    return PeriodShare(part, period).apply(begin, end) ==
           long_double_count(begin, end, part, period);
  };
  for (int i = 0; i < 1'000'000; ++i) {
    const std::uint64_t period = (rng() >> (rng() % 64)) | 1;
    const std::uint64_t part = rng() % (period + 1);
    const std::uint64_t begin = rng() >> (rng() % 64);
    const std::uint64_t growth = rng() >> (rng() % 64);
    const std::uint64_t end = begin + std::min(growth, ~begin);
    ASSERT_TRUE(check(begin, end, part, period))
        << begin << " " << end << " " << part << "/" << period;
    const std::uint64_t odd = (rng() >> (rng() % 64)) | 1;  // odd × 1/2: an exact half
    ASSERT_TRUE(check(7, 7 + odd, 1, 2)) << odd;
    const std::uint64_t small = rng() % 5000 + 1;  // small growths over small periods
    ASSERT_TRUE(check(0, small, rng() % (small + 1), small + rng() % 300)) << small;
  }
  EXPECT_EQ(PeriodShare(1, 122).apply(1549, 1610), 1549u);  // 61 × (1/122) lies below a half
  EXPECT_EQ(PeriodShare(1, 2).apply(0, 1), 1u);             // a half rounds away from zero
  EXPECT_EQ(PeriodShare(0, 100).apply(5, 900), 5u);
  EXPECT_EQ(PeriodShare(100, 100).apply(5, 900), 900u);
  EXPECT_EQ(PeriodShare(40, 100).apply(900, 5), 900u);  // a total never goes backwards
  for (const std::uint64_t big :
       {std::uint64_t{1} << 62, ~std::uint64_t{0} >> 1, ~std::uint64_t{0}}) {
    EXPECT_TRUE(check(0, big, 1, 3)) << big;
    EXPECT_TRUE(check(0, big, 3, 3)) << big;
  }
}

TEST(OverlapSharesTest, EachWindowSaysHowMuchOfItAnotherShared) {
  // a alone; b and c overlap by 10; d inside e; f and g identical; h zero length inside e.
  const std::vector<Window> w = {{0, 100},   {200, 260}, {250, 300}, {420, 440},
                                 {400, 500}, {600, 650}, {600, 650}, {450, 450}};
  const std::vector<double> s = overlap_shares(w);
  ASSERT_EQ(s.size(), w.size());
  EXPECT_DOUBLE_EQ(s[0], 0.0);
  EXPECT_DOUBLE_EQ(s[1], 10.0 / 60.0);
  EXPECT_DOUBLE_EQ(s[2], 10.0 / 50.0);
  EXPECT_DOUBLE_EQ(s[3], 1.0);
  EXPECT_DOUBLE_EQ(s[4], 20.0 / 100.0);
  EXPECT_DOUBLE_EQ(s[5], 1.0);
  EXPECT_DOUBLE_EQ(s[6], 1.0);
  EXPECT_DOUBLE_EQ(s[7], 0.0);
  // Windows that only touch share nothing; three at once count once.
  EXPECT_EQ(overlap_shares(std::vector<Window>{{0, 10}, {10, 20}}), (std::vector<double>{0, 0}));
  const std::vector<double> three =
      overlap_shares(std::vector<Window>{{0, 30}, {10, 20}, {15, 40}});
  EXPECT_DOUBLE_EQ(three[0], 20.0 / 30.0);  // shared from 10 to 30
  EXPECT_DOUBLE_EQ(three[1], 1.0);
  EXPECT_DOUBLE_EQ(three[2], 15.0 / 25.0);  // shared from 15 to 30
  EXPECT_TRUE(overlap_shares({}).empty());
}

TEST(ClockMapTest, TheLineThroughTheCalibrationPairsMapsDeviceTimesToTheHosts) {
  // The device clock runs 50 ppm fast and 1.5 s behind, at values near 2^60 ns.
  const std::uint64_t base = std::uint64_t{1} << 60;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  for (std::uint64_t i = 0; i < 5; ++i) {
    const std::uint64_t host = base + i * 100'000'000;
    const auto device =
        static_cast<std::uint64_t>(static_cast<long double>(host - base) * 1.00005L) + base -
        1'500'000'000;
    pairs.emplace_back(device, host);
  }
  const ClockMap m = ClockMap::fit(pairs);
  EXPECT_NEAR(m.slope(), 1 / 1.00005, 1e-12);
  EXPECT_LT(m.max_residual_ns(), 2.0);
  for (const auto& [device, host] : pairs) {
    EXPECT_LE(std::abs(static_cast<double>(m.to_host(device)) - static_cast<double>(host)), 2.0);
  }
  // One pair: the offset alone.
  using Pairs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  const ClockMap one = ClockMap::fit(Pairs{{1000, 5000}});
  EXPECT_EQ(one.to_host(1500), 5500u);
  EXPECT_EQ(one.max_residual_ns(), 0.0);
  EXPECT_THROW(ClockMap::fit({}), std::invalid_argument);
  EXPECT_THROW(ClockMap::fit(Pairs{{7, 1}, {7, 2}}), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::oa
