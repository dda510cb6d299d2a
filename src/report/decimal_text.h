// Numbers as CSV cells, written straight into a buffer (issue 33): a row is some sixty integer
// and a dozen double cells, and formatting them was the largest part of writing it. Both give
// exactly what oaprof's formats gave before: fmt's "{}" for integers and "{:.{}f}" for doubles
// (decimal_text_test.cc compares them over edge and random values).
#pragma once

#include <cstddef>
#include <cstdint>

namespace oaprof::report {

// The most characters write_uint writes (2^64 - 1), and write_fixed (a sign, nineteen integer
// digits, the point and nine decimals).
inline constexpr std::size_t kMaxUintChars = 20;
inline constexpr std::size_t kMaxFixedChars = 1 + 19 + 1 + 9;

// Writes `v` in decimal at `at` and returns the end; it may also write bytes after the end, up
// to at + kMaxUintChars, so there must be room for that many.
char* write_uint(char* at, std::uint64_t v);

// Writes `v` with `decimals` digits after the point, correctly rounded (half to even, as
// printf and fmt round the exact binary value), at `at`, and returns the end; nullptr, with
// nothing written, where this exact integer method does not reach: NaN, infinities, magnitudes
// of 2^63 and above, and `decimals` outside 0..9. The caller formats those with fmt. Like
// write_uint it needs room for kMaxFixedChars.
char* write_fixed(char* at, double v, int decimals);

}  // namespace oaprof::report
