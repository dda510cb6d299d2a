#include "report/decimal_text.h"

#include <array>
#include <bit>
#include <cstring>

#include "base/uint128.h"

namespace oaprof::report {
namespace {

// 128 bits for a 53-bit mantissa times 10^9, shifted.
using Wide = base::UInt128;

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

// The eight digits of `v` (below 10^8), zero-padded, as the eight bytes of a word in memory
// order (x86-64 and every target oaprof builds for are little-endian). The digits are split
// lane-wise in one register (4-digit halves in 32-bit lanes, then pairs in 16-bit lanes, then
// digits in bytes; each division a multiply and shift exact below 10^4 and 100): no table, no
// chain of divisions, and nothing written to memory to be read back.
[[gnu::always_inline]] inline std::uint64_t digits8(std::uint32_t v) {
  std::uint64_t x = (v / 10'000) | std::uint64_t{v % 10'000} << 32;
  const std::uint64_t hundreds = ((x * 10'486) >> 20) & 0x0000'007f'0000'007f;  // x / 100
  x = hundreds | (x - hundreds * 100) << 16;
  const std::uint64_t tens = ((x * 103) >> 10) & 0x000f'000f'000f'000f;  // x / 10
  x = tens | (x - tens * 10) << 8;
  return x | 0x3030'3030'3030'3030;  // '0'
}
void put8(char* at, std::uint32_t v) {
  const std::uint64_t digits = digits8(v);
  std::memcpy(at, &digits, 8);
}

int length_below_1e8(std::uint32_t v) {
  if (v < 10'000) return v < 100 ? (v < 10 ? 1 : 2) : (v < 1'000 ? 3 : 4);
  return v < 1'000'000 ? (v < 100'000 ? 5 : 6) : (v < 10'000'000 ? 7 : 8);
}

// `v` below 10^8 without leading zeros: its eight digits shifted past the leading zeros and
// written eight bytes at once (the bytes past the digits land in room the caller has).
char* write_below_1e8(char* at, std::uint32_t v) {
  const int n = length_below_1e8(v);
  const std::uint64_t digits = digits8(v) >> (8 * (8 - n));
  std::memcpy(at, &digits, 8);
  return at + n;
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
  constexpr std::uint64_t k1e8 = 100'000'000;
  if (v < k1e8) return write_below_1e8(at, static_cast<std::uint32_t>(v));
  if (v < k1e8 * k1e8) {
    at = write_below_1e8(at, static_cast<std::uint32_t>(v / k1e8));
    put8(at, static_cast<std::uint32_t>(v % k1e8));
    return at + 8;
  }
  at = write_below_1e8(at, static_cast<std::uint32_t>(v / (k1e8 * k1e8)));  // at most 1844
  put8(at, static_cast<std::uint32_t>(v / k1e8 % k1e8));
  put8(at + 8, static_cast<std::uint32_t>(v % k1e8));
  return at + 16;
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
