#include "oa/delta.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::oa {

std::uint64_t delta32(std::uint32_t begin, std::uint32_t end) {
  return static_cast<std::uint32_t>(end - begin);
}

std::uint64_t delta40(std::uint64_t begin, std::uint64_t end) {
  constexpr std::uint64_t kMask = (std::uint64_t{1} << 40) - 1;
  begin &= kMask;
  end &= kMask;
  return end >= begin ? end - begin : (kMask + 1) + end - begin;
}

std::uint64_t delta_bits(std::uint64_t begin, std::uint64_t end, int bits) {
  if (bits >= 64) return end - begin;
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  return (end - begin) & mask;
}

std::uint64_t timestamp_delta(std::uint64_t begin, std::uint64_t end, int header_bits, int shift) {
  return delta_bits(begin, end, header_bits) >> shift;
}

std::uint64_t timestamp_delta_max(int header_bits, int shift) {
  const int bits = header_bits - shift;
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

namespace {

// The counter went down: one wrap corrected (for 64-bit counters, which never wrap in practice,
// the same test keeps the count honest).
bool wrapped(std::uint64_t begin, std::uint64_t end, int bits) {
  if (bits >= 64) return end < begin;
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  return (end & mask) < (begin & mask);
}

}  // namespace

CounterDeltas compute_deltas(const Report& begin, const Report& end) {
  CounterDeltas d;
  int wraps = 0;
  const int header_bits = end.header_bits;
  d.timestamp = timestamp_delta(begin.timestamp, end.timestamp, header_bits, end.timestamp_shift);
  wraps += wrapped(begin.timestamp, end.timestamp, header_bits);
  d.has_gpu_ticks = begin.has_gpu_ticks && end.has_gpu_ticks;
  if (d.has_gpu_ticks) {
    d.gpu_ticks = delta_bits(begin.gpu_ticks, end.gpu_ticks, header_bits);
    wraps += wrapped(begin.gpu_ticks, end.gpu_ticks, header_bits);
  }
  for (int i = 0; i < kMaxNumA; ++i) {
    if (!begin.a_present[i] || !end.a_present[i]) continue;
    d.a_present[i] = true;
    const int bits = begin.a_bits[i] != 0 ? begin.a_bits[i] : 32;
    d.a[i] = delta_bits(begin.a[i], end.a[i], bits);
    wraps += wrapped(begin.a[i], end.a[i], bits);
  }
  for (int i = 0; i < kNumB; ++i) {
    d.b[i] = delta32(begin.b[i], end.b[i]);
    wraps += end.b[i] < begin.b[i];
  }
  for (int i = 0; i < kNumC; ++i) {
    d.c[i] = delta32(begin.c[i], end.c[i]);
    wraps += end.c[i] < begin.c[i];
  }
  d.wraps_corrected = wraps;
  return d;
}

CounterDeltas compute_deltas_checked(const Report& begin, const Report& end, double timestamp_hz,
                                     double max_interval_ns) {
  CounterDeltas d = compute_deltas(begin, end);
  // A timestamp delta in the upper half of its range is far more likely a reordered or stale
  // report than a 179-second gap between two reads of one stream.
  const bool backwards =
      d.timestamp > timestamp_delta_max(end.header_bits, end.timestamp_shift) / 2;
  d.interval_too_long = backwards || gpu_time_ns(d, timestamp_hz) > max_interval_ns;
  return d;
}

void accumulate(CounterDeltas& total, const CounterDeltas& more) {
  total.timestamp += more.timestamp;
  total.gpu_ticks += more.gpu_ticks;
  total.has_gpu_ticks = more.has_gpu_ticks;
  for (int i = 0; i < kMaxNumA; ++i) {
    total.a[i] += more.a[i];
    total.a_present[i] = more.a_present[i];
  }
  for (int i = 0; i < kNumB; ++i) total.b[i] += more.b[i];
  for (int i = 0; i < kNumC; ++i) total.c[i] += more.c[i];
  for (std::size_t i = 0; i < total.perfcnt.size(); ++i) total.perfcnt[i] += more.perfcnt[i];
  total.wraps_corrected += more.wraps_corrected;
  total.interval_too_long = total.interval_too_long || more.interval_too_long;
}

namespace {

// The 256-byte format with its offsets as constants (reference/hardware.md §3), so the compiler
// unrolls and vectorises: the path every long capture on Gen8+ takes.
int accumulate_a32u40(const std::uint8_t* b, const std::uint8_t* e, CounterDeltas& t) {
  constexpr std::uint64_t kMask40 = (std::uint64_t{1} << 40) - 1;
  // Local copies: the report bytes may alias `t` as far as the compiler knows, which would keep
  // it from vectorising the loops.
  std::uint32_t lo0[kNumA40], lo1[kNumA40];
  std::uint8_t hi0[kNumA40], hi1[kNumA40];
  std::memcpy(lo0, b + 16, sizeof lo0);
  std::memcpy(lo1, e + 16, sizeof lo1);
  std::memcpy(hi0, b + 160, sizeof hi0);
  std::memcpy(hi1, e + 160, sizeof hi1);
  // A32..A35 (bytes 144..159), B and C (192..255) and GPU_TICKS (12): 21 32-bit counters.
  constexpr int kNum32 = 4 + kNumB + kNumC + 1;
  std::uint32_t w0[kNum32], w1[kNum32];
  std::memcpy(w0, b + 144, 16);
  std::memcpy(w1, e + 144, 16);
  std::memcpy(w0 + 4, b + 192, 64);
  std::memcpy(w1 + 4, e + 192, 64);
  w0[kNum32 - 1] = load_u32(b + 12);
  w1[kNum32 - 1] = load_u32(e + 12);
  // A wrap shows as a borrow out of the 64-bit difference of values below 2^40 (or 2^32).
  std::uint64_t d40[kNumA40], d32[kNum32];
  std::uint64_t wraps = 0;
  for (int i = 0; i < kNumA40; ++i) {
    const std::uint64_t v0 = lo0[i] | static_cast<std::uint64_t>(hi0[i]) << 32;
    const std::uint64_t v1 = lo1[i] | static_cast<std::uint64_t>(hi1[i]) << 32;
    const std::uint64_t diff = v1 - v0;
    d40[i] = diff & kMask40;
    wraps += diff >> 63;
  }
  for (int i = 0; i < kNum32; ++i) {
    const std::uint64_t diff = static_cast<std::uint64_t>(w1[i]) - w0[i];
    d32[i] = diff & 0xFFFFFFFFu;
    wraps += diff >> 63;
  }
  for (int i = 0; i < kNumA40; ++i) t.a[static_cast<std::size_t>(i)] += d40[i];
  for (int i = 0; i < 4; ++i) t.a[static_cast<std::size_t>(kNumA40 + i)] += d32[i];
  for (int i = 0; i < kNumB; ++i) t.b[static_cast<std::size_t>(i)] += d32[4 + i];
  for (int i = 0; i < kNumC; ++i) t.c[static_cast<std::size_t>(i)] += d32[4 + kNumB + i];
  t.gpu_ticks += d32[kNum32 - 1];
  return static_cast<int>(wraps);
}

int accumulate_generic(const FormatLayout& l, const std::uint8_t* b, const std::uint8_t* e,
                       CounterDeltas& total) {
  int wraps = 0;
  auto add32 = [&](int offset, std::uint64_t& into) {
    const std::uint32_t v0 = load_u32(b + offset), v1 = load_u32(e + offset);
    into += static_cast<std::uint32_t>(v1 - v0);
    wraps += v1 < v0;
  };
  if (l.gpu_ticks_offset >= 0) {
    const std::uint64_t v0 = read_gpu_ticks_field(l, b), v1 = read_gpu_ticks_field(l, e);
    total.gpu_ticks += delta_bits(v0, v1, l.header_bits());
    wraps += v1 < v0;
  }
  for (const CounterRun& run : l.a_runs) {
    for (int i = 0; i < run.count; ++i) {
      const std::uint64_t v0 = read_run_counter(run, b, i), v1 = read_run_counter(run, e, i);
      total.a[static_cast<std::size_t>(run.first + i)] += delta_bits(v0, v1, run.bits);
      wraps += v1 < v0;
    }
  }
  for (int i = 0; i < l.b_count; ++i)
    add32(l.b_offset + 4 * i, total.b[static_cast<std::size_t>(i)]);
  for (int i = 0; i < l.c_count; ++i)
    add32(l.c_offset + 4 * i, total.c[static_cast<std::size_t>(i)]);
  return wraps;
}

}  // namespace

std::uint64_t accumulate_raw(const FormatLayout& l, std::span<const std::uint8_t> begin,
                             std::span<const std::uint8_t> end, CounterDeltas& total) {
  const auto size = static_cast<std::size_t>(l.size_bytes);
  if (begin.size() < size || end.size() < size) {
    throw std::invalid_argument(fmt::format("{} report needs {} bytes, got {} and {}", l.name, size,
                                            begin.size(), end.size()));
  }
  const std::uint8_t* b = begin.data();
  const std::uint8_t* e = end.data();
  const std::uint64_t ts0 = read_timestamp_field(l, b), ts1 = read_timestamp_field(l, e);
  const std::uint64_t interval = timestamp_delta(ts0, ts1, l.header_bits(), l.timestamp_shift);
  total.timestamp += interval;
  int wraps = ts1 < ts0;
  wraps += l.format == ReportFormat::kA32u40_A4u32_B8_C8 ? accumulate_a32u40(b, e, total)
                                                         : accumulate_generic(l, b, e, total);
  total.wraps_corrected += wraps;
  for (const CounterRun& run : l.a_runs) {
    for (int i = 0; i < run.count; ++i)
      total.a_present[static_cast<std::size_t>(run.first + i)] = true;
  }
  total.has_gpu_ticks = l.gpu_ticks_offset >= 0;
  return interval;
}

double max_safe_read_interval_ns(double freq_mhz, int eus, double timestamp_hz,
                                 int timestamp_bits) {
  if (freq_mhz <= 0 || eus <= 0 || timestamp_hz <= 0) return 0.0;
  constexpr double k2to32 = 4294967296.0;
  constexpr double k2to40 = 1099511627776.0;
  const double clock_hz = freq_mhz * 1e6;
  const double wrap32_s = k2to32 / clock_hz;
  const double wrap40_s = k2to40 / (clock_hz * eus);
  const double wrap_ts_s = std::ldexp(1.0, timestamp_bits) / timestamp_hz;
  return std::min({wrap32_s, wrap40_s, wrap_ts_s}) / 2.0 * 1e9;
}

double gpu_time_ns(const CounterDeltas& d, double timestamp_hz) {
  return static_cast<double>(d.timestamp) * 1e9 / timestamp_hz;
}

std::uint64_t gpu_busy_ns(const CounterDeltas& d, double timestamp_hz) {
  const double ns = gpu_time_ns(d, timestamp_hz);
  if (!(ns > 0)) return 0;
  constexpr double kPastAny = 18446744073709551616.0;  // 2^64
  if (ns >= kPastAny) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(ns);
}

double average_frequency_mhz(const CounterDeltas& d, double timestamp_hz) {
  if (d.timestamp == 0 || !d.has_gpu_ticks) return 0.0;
  return static_cast<double>(d.gpu_ticks) * timestamp_hz / static_cast<double>(d.timestamp) / 1e6;
}

}  // namespace oaprof::oa
