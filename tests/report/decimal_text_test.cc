// write_uint and write_fixed (issue 33) against the formats they replace on the CSV path, fmt's
// "{}" and "{:.{}f}", byte for byte: every power of ten and its neighbours, exact ties of every
// kind (half to even), carries through every digit, subnormals, signed zeros, the edges of the
// method's reach, and random values of each kind.
#include "report/decimal_text.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/common/sanitizer.h"

namespace oaprof::report {
namespace {

std::string uint_text(std::uint64_t v) {
  char buffer[kMaxUintChars];
  return {buffer, write_uint(buffer, v)};
}

// write_fixed's text, or fmt's where it declines (as the CSV line falls back).
std::string fixed_text(double v, int decimals) {
  char buffer[kMaxFixedChars];
  char* end = write_fixed(buffer, v, decimals);
  return end ? std::string(buffer, end) : fmt::format("{:.{}f}", v, decimals);
}

TEST(DecimalTextTest, IntegersAreFmtsAtEveryLengthAndAtRandom) {
  std::vector<std::uint64_t> values{0, std::numeric_limits<std::uint64_t>::max()};
  for (std::uint64_t p = 1; p <= 10'000'000'000'000'000'000u; p *= 10) {
    values.insert(values.end(), {p - 1, p, p + 1});
    if (p > std::numeric_limits<std::uint64_t>::max() / 10) break;
  }
  // Every four-digit group in both halves of an eight-digit one (they are split independently),
  // and random values of every length.
  for (std::uint64_t v = 0; v < 10'000; ++v) {
    values.insert(values.end(), {v, v * 10'000 + (v * 7'919) % 10'000, v * 10'001});
  }
  std::mt19937_64 rng(1);
  for (int i = 0; i < 300'000; ++i) values.push_back(rng() >> (rng() % 64));
  for (const std::uint64_t v : values) ASSERT_EQ(uint_text(v), fmt::format("{}", v)) << v;
}

// Doubles that reach each branch: ties at every precision (k / 2^j), carries (9.9995),
// neighbours of powers of ten and of 2^63, subnormals, zeros of both signs, NaN, infinities.
std::vector<double> edge_doubles() {
  std::vector<double> v{0.0,
                        -0.0,
                        0.5,
                        1.5,
                        2.5,
                        -2.5,
                        0.125,
                        0.375,
                        9.9995,
                        99.95,
                        0.0005,
                        -0.0005,
                        1e-300,
                        4.9e-324,
                        -4.9e-324,
                        2.2250738585072014e-308,
                        std::numeric_limits<double>::quiet_NaN(),
                        -std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::infinity(),
                        -std::numeric_limits<double>::infinity(),
                        1e300,
                        -1e300};
  for (int j = 1; j < 40; ++j) {
    for (int k = 1; k < 64; k += 2) v.push_back(std::ldexp(k, -j));
  }
  for (double p = 1e-12; p < 1e20; p *= 10) {
    v.insert(v.end(), {p, std::nextafter(p, 0), std::nextafter(p, 1e300), -p});
  }
  const double two63 = std::ldexp(1, 63);
  v.insert(v.end(), {two63, std::nextafter(two63, 0), std::nextafter(two63, 1e300),
                     std::ldexp(1, 53) + 2, std::ldexp(1, 52) + 0.5});
  return v;
}

TEST(DecimalTextTest, FixedIsFmtsAtTheEdgesAtEveryPrecision) {
  for (const double v : edge_doubles()) {
    for (int decimals = 0; decimals <= 10; ++decimals) {
      ASSERT_EQ(fixed_text(v, decimals), fmt::format("{:.{}f}", v, decimals))
          << fmt::format("{:a} at {}", v, decimals);
    }
  }
}

// Random bit patterns (every exponent) and figures as rows hold them (counts over times).
TEST(DecimalTextTest, FixedIsFmtsForRandomDoubles) {
  std::mt19937_64 rng(2);
  // 22 s under the sanitizers for all of them: a tenth there (tests/common/sanitizer.h).
  constexpr int kDraws = testing::kAddressSanitizer ? 10'000 : 100'000;
  int reached = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double v =
        i % 2 ? std::bit_cast<double>(rng())
              : static_cast<double>(rng() % 100'000'000) / static_cast<double>(1 + rng() % 100'000);
    const int decimals = static_cast<int>(rng() % 10);
    char buffer[kMaxFixedChars];
    reached += write_fixed(buffer, v, decimals) != nullptr;
    ASSERT_EQ(fixed_text(v, decimals), fmt::format("{:.{}f}", v, decimals))
        << fmt::format("{:a} at {}", v, decimals);
  }
  EXPECT_GT(reached, kDraws / 2);  // the figures of rows, and the small random ones
}

}  // namespace
}  // namespace oaprof::report
