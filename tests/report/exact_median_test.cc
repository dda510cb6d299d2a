#include "report/exact_median.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace oaprof::report {
namespace {

double sorted_median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The counted median is the one sorting every value gives, bit for bit, for odd and even counts
// and through a scale (ticks to ns) that rounds.
TEST(ExactMedianTest, IsTheMedianOfEveryValueAdded) {
  std::mt19937_64 rng(7);
  const auto to_ns = [](std::uint64_t ticks) { return static_cast<double>(ticks) * 1e9 / 19.2e6; };
  for (const std::size_t n : {1u, 2u, 3u, 10u, 11u, 1000u, 1001u}) {
    ExactMedian m;
    std::vector<double> all;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t v = rng() % 50;  // repeats, as durations do
      m.add(v);
      all.push_back(to_ns(v));
    }
    EXPECT_EQ(m.count(), n);
    EXPECT_EQ(m.median(to_ns), sorted_median(all)) << n << " values";
  }
}

TEST(ExactMedianTest, KeepsOneCountPerDistinctValue) {
  ExactMedian m;
  for (std::uint64_t i = 0; i < 100'000; ++i) m.add(1000 + i % 7);
  EXPECT_EQ(m.distinct(), 7u);
  EXPECT_EQ(m.count(), 100'000u);
}

TEST(ExactMedianTest, HasNoMedianWithoutValues) {
  EXPECT_TRUE(std::isnan(ExactMedian().median([](std::uint64_t v) { return double(v); })));
}

}  // namespace
}  // namespace oaprof::report
