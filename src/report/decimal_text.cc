#include "report/decimal_text.h"

#include <array>
#include <bit>
#include <cstring>

namespace oaprof::report {
namespace {

// 128 bits for a 53-bit mantissa times 10^9, shifted (gcc and clang; __extension__ keeps
// -Wpedantic quiet about the type).
__extension__ typedef unsigned __int128 Wide;

constexpr std::array<std::uint64_t, 10> kPow10{
    1, 10, 100, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000, 1'000'000'000};

// "00" to "99": two digits per division.
constexpr std::array<char, 200> kDigitPairs = [] {
  std::array<char, 200> pairs{};
  for (int i = 0; i < 100; ++i) {
    pairs[static_cast<std::size_t>(2 * i)] = static_cast<char>('0' + i / 10);
    pairs[static_cast<std::size_t>(2 * i + 1)] = static_cast<char>('0' + i % 10);
  }
  return pairs;
}();

// How many decimal digits `v` has (at least one).
int decimal_length(std::uint64_t v) {
  int n = 1;
  for (std::uint64_t limit = 10; n < 20 && v >= limit; limit *= 10) ++n;
  return n;
}

// The `n` lowest digits of `v`, zero-padded, ending at `end`.
void write_digits_before(char* end, std::uint64_t v, int n) {
  char* p = end;
  for (; n >= 2; n -= 2) {
    p -= 2;
    std::memcpy(p, &kDigitPairs[static_cast<std::size_t>(2 * (v % 100))], 2);
    v /= 100;
  }
  if (n == 1) *--p = static_cast<char>('0' + v % 10);
}

// v · 2^exponent rounded to an integer, half to even; `v` below 2^83 and `exponent` negative.
Wide shift_rounding(Wide v, int exponent) {
  const int k = -exponent;
  if (k >= 90) return 0;  // below a half
  const Wide one = 1;
  const Wide q = v >> k;
  const Wide rest = v & ((one << k) - 1);
  const Wide half = one << (k - 1);
  return rest > half || (rest == half && (q & 1) != 0) ? q + 1 : q;
}

}  // namespace

char* write_uint(char* at, std::uint64_t v) {
  const int n = decimal_length(v);
  write_digits_before(at + n, v, n);
  return at + n;
}

char* write_fixed(char* at, double v, int decimals) {
  if (decimals < 0 || decimals > 9) return nullptr;
  const auto bits = std::bit_cast<std::uint64_t>(v);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0x7ff) return nullptr;  // NaN, infinities
  // |v| = mantissa · 2^exponent exactly.
  const std::uint64_t mantissa = biased == 0 ? fraction : fraction | (std::uint64_t{1} << 52);
  const int exponent = biased == 0 ? -1074 : biased - 1075;
  if (exponent > 10) return nullptr;  // 2^63 and above
  const std::uint64_t scale = kPow10[static_cast<std::size_t>(decimals)];
  // |v| · 10^decimals, rounded: below 2^63 · 10^9, so the digits fit 64 bits after the point.
  const Wide scaled = static_cast<Wide>(mantissa) * scale;
  const Wide units = exponent >= 0 ? scaled << exponent : shift_rounding(scaled, exponent);
  // Below 2^64 (every figure but the largest) the division is a 64-bit one, several times faster.
  const bool narrow = (units >> 64) == 0;
  const auto units64 = static_cast<std::uint64_t>(units);
  const auto whole = narrow ? units64 / scale : static_cast<std::uint64_t>(units / scale);
  const auto after_point = narrow ? units64 % scale : static_cast<std::uint64_t>(units % scale);
  if (bits >> 63) *at++ = '-';
  at = write_uint(at, whole);
  if (decimals == 0) return at;
  *at++ = '.';
  write_digits_before(at + decimals, after_point, decimals);
  return at + decimals;
}

}  // namespace oaprof::report
