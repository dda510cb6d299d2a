// Counter deltas between two reports, wrap-safe per counter width exactly as IGT and Mesa
// compute them: 32-bit counters modulo 2^32, 40-bit A counters modulo 2^40. Exact only when at
// most one wrap happened between the reads; callers that cannot promise that must read more often.
#pragma once

#include <array>
#include <cstdint>

#include "oa/report.h"

namespace oaprof::oa {

struct CounterDeltas {
  std::uint64_t timestamp = 0;  // GPU timestamp ticks
  std::uint64_t gpu_ticks = 0;  // GPU core clocks
  bool has_gpu_ticks = false;
  std::array<std::uint64_t, kMaxNumA> a{};
  std::array<bool, kMaxNumA> a_present{};
  std::array<std::uint64_t, kNumB> b{};
  std::array<std::uint64_t, kNumC> c{};
  // OA_PERFCNT1/2, read outside the report (IGT's `PERFCNT n READ`); zero when not sampled.
  std::array<std::uint64_t, 2> perfcnt{};
  // Counters whose end value was below their start value (one wrap corrected each).
  int wraps_corrected = 0;
  // Set when the interval between the two reads was longer than a counter can run without
  // wrapping twice: such a delta may be short by a multiple of 2^32 or 2^40 and must not be
  // presented as exact.
  bool interval_too_long = false;
};

std::uint64_t delta32(std::uint32_t begin, std::uint32_t end);
std::uint64_t delta40(std::uint64_t begin, std::uint64_t end);
// A counter `bits` wide (32, 40 or 64): end - begin modulo 2^bits.
std::uint64_t delta_bits(std::uint64_t begin, std::uint64_t end, int bits);

// The timestamp ticks between two raw timestamp fields of a format: modulo 2^header_bits, then
// shifted right by the format's timestamp_shift (IGT's ((end - start) mod 2^32) >> 1 on Xe-LPG).
std::uint64_t timestamp_delta(std::uint64_t begin, std::uint64_t end, int header_bits, int shift);
// The largest timestamp delta a format can express, 2^(header_bits - shift) - 1.
std::uint64_t timestamp_delta_max(int header_bits, int shift);

CounterDeltas compute_deltas(const Report& begin, const Report& end);

// compute_deltas, and flags the result interval_too_long when the timestamps say more than
// `max_interval_ns` passed (see max_safe_read_interval_ns) or the timestamp itself went backwards
// by more than half its range.
CounterDeltas compute_deltas_checked(const Report& begin, const Report& end, double timestamp_hz,
                                     double max_interval_ns);

// Adds `more` (a later interval) into `total`: the sum of consecutive deltas.
void accumulate(CounterDeltas& total, const CounterDeltas& more);

// The hot path of long captures: adds the deltas between two raw reports of `layout` straight into
// `total` without building Reports (same arithmetic as compute_deltas + accumulate). Both spans
// must hold at least layout.size_bytes (std::invalid_argument otherwise). Returns the interval's
// timestamp delta so the caller can judge it.
std::uint64_t accumulate_raw(const FormatLayout& layout, std::span<const std::uint8_t> begin,
                             std::span<const std::uint8_t> end, CounterDeltas& total);

// The longest interval between two reads after which every counter's delta is still exact, with a
// factor-2 margin: 32-bit clock counters (GPU_TICKS, B, C, A32..A35) advance at most once per core
// clock, 40-bit A counters at most once per EU per clock, and the 32-bit timestamp at
// `timestamp_hz` over `timestamp_bits` (31 where the format shifts a 32-bit timestamp). At
// 1150 MHz that is about 1.87 s, bounded by the 32-bit counters.
double max_safe_read_interval_ns(double freq_mhz, int eus, double timestamp_hz = 12e6,
                                 int timestamp_bits = 32);

// Derived figures every row carries.
double gpu_time_ns(const CounterDeltas& d, double timestamp_hz);
// gpu_time_ns in whole nanoseconds, for sums of busy time: 0 where it is no time at all (a
// timestamp frequency not known: 0/0), the largest where it is past any (an unknown frequency
// with ticks counted). A cast of those doubles would be undefined behaviour.
std::uint64_t gpu_busy_ns(const CounterDeltas& d, double timestamp_hz);
double average_frequency_mhz(const CounterDeltas& d, double timestamp_hz);

}  // namespace oaprof::oa
