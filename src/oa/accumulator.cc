#include "oa/accumulator.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::oa {

Accumulator::Accumulator(double timestamp_hz, double max_interval_ns)
    : timestamp_hz_(timestamp_hz),
      max_interval_ns_(max_interval_ns),
      max_interval_ticks_(max_interval_ns * timestamp_hz / 1e9),
      // A timestamp delta in the upper half of its range is a stale or reordered report.
      max_interval_ticks32_(max_interval_ticks_ >= 2147483647.0
                                ? 0x7FFFFFFFu
                                : static_cast<std::uint32_t>(std::max(0.0, max_interval_ticks_))) {}

void Accumulator::add(const Report& report) {
  ++reports_;
  if (previous_) {
    const CounterDeltas d =
        compute_deltas_checked(*previous_, report, timestamp_hz_, max_interval_ns_);
    if (d.interval_too_long) ++untrusted_intervals_;
    accumulate(total_, d);
  } else {
    // The first report fixes which counters the stream carries.
    total_.has_gpu_ticks = report.has_gpu_ticks;
    total_.a_present = report.a_present;
  }
  previous_ = report;
}

namespace {

// Wraps counted per counter between a block's first and last report.
struct WrapCounts {
  std::array<std::uint64_t, kMaxNumA> a{};
  std::array<std::uint64_t, kNumB> b{};
  std::array<std::uint64_t, kNumC> c{};
  std::uint64_t ticks = 0;
};

// True when some counter of the 256-byte format may have wrapped between `p` and `c`: a 32-bit
// field or a 40-bit counter's high byte went down (a 40-bit wrap lowers one or the other). Kept
// branch-free so it vectorises; the rare true case is counted exactly by count_wraps.
bool may_wrap_a32u40(const std::uint8_t* p, const std::uint8_t* c) {
  std::uint32_t any = 0;
  for (int i = 3; i < 40; ++i) any |= load_u32(c + 4 * i) < load_u32(p + 4 * i);   // ticks, A0..A35
  for (int i = 48; i < 64; ++i) any |= load_u32(c + 4 * i) < load_u32(p + 4 * i);  // B, C
  for (int i = 160; i < 192; ++i) any |= c[i] < p[i];  // A0..A31 bits 39:32
  return any != 0;
}

void count_wraps(const FormatLayout& l, const std::uint8_t* p, const std::uint8_t* c,
                 WrapCounts& w) {
  if (l.gpu_ticks_offset >= 0) w.ticks += read_gpu_ticks_field(l, c) < read_gpu_ticks_field(l, p);
  for (const CounterRun& run : l.a_runs) {
    for (int i = 0; i < run.count; ++i) {
      w.a[static_cast<std::size_t>(run.first + i)] +=
          read_run_counter(run, c, i) < read_run_counter(run, p, i);
    }
  }
  for (int i = 0; i < l.b_count; ++i) {
    const int off = l.b_offset + 4 * i;
    w.b[static_cast<std::size_t>(i)] += load_u32(c + off) < load_u32(p + off);
  }
  for (int i = 0; i < l.c_count; ++i) {
    const int off = l.c_offset + 4 * i;
    w.c[static_cast<std::size_t>(i)] += load_u32(c + off) < load_u32(p + off);
  }
}

// total += last − first + wraps × 2^width, counter by counter (64-bit counters never wrap in
// practice; their sum is last − first modulo 2^64, which stays exact for one wrap).
void fold(const FormatLayout& l, const std::uint8_t* first, const std::uint8_t* last,
          const WrapCounts& w, CounterDeltas& t) {
  std::uint64_t wraps = 0;
  auto add = [&](std::uint64_t v0, std::uint64_t v1, std::uint64_t n, int width,
                 std::uint64_t& into) {
    into += v1 + (width >= 64 ? 0 : n << width) - v0;
    wraps += n;
  };
  if (l.gpu_ticks_offset >= 0) {
    add(read_gpu_ticks_field(l, first), read_gpu_ticks_field(l, last), w.ticks, l.header_bits(),
        t.gpu_ticks);
  }
  for (const CounterRun& run : l.a_runs) {
    for (int i = 0; i < run.count; ++i) {
      const auto idx = static_cast<std::size_t>(run.first + i);
      add(read_run_counter(run, first, i), read_run_counter(run, last, i), w.a[idx], run.bits,
          t.a[idx]);
    }
  }
  for (int i = 0; i < l.b_count; ++i) {
    const int off = l.b_offset + 4 * i;
    add(load_u32(first + off), load_u32(last + off), w.b[static_cast<std::size_t>(i)], 32,
        t.b[static_cast<std::size_t>(i)]);
  }
  for (int i = 0; i < l.c_count; ++i) {
    const int off = l.c_offset + 4 * i;
    add(load_u32(first + off), load_u32(last + off), w.c[static_cast<std::size_t>(i)], 32,
        t.c[static_cast<std::size_t>(i)]);
  }
  t.wraps_corrected += static_cast<int>(wraps);
}

}  // namespace

void Accumulator::add_raw(const FormatLayout& layout, std::span<const std::uint8_t> bytes) {
  if (bytes.size() < static_cast<std::size_t>(layout.size_bytes)) {
    throw std::invalid_argument(fmt::format("Accumulator: a {} report needs {} bytes, got {}",
                                            layout.name, layout.size_bytes, bytes.size()));
  }
  add_raw_batch(layout, bytes.first(static_cast<std::size_t>(layout.size_bytes)));
}

void Accumulator::add_raw_batch(const FormatLayout& layout, std::span<const std::uint8_t> reports) {
  const auto size = static_cast<std::size_t>(layout.size_bytes);
  if (reports.size() % size != 0) {
    throw std::invalid_argument(
        fmt::format("Accumulator: {} bytes are not a whole number of {}-byte {} reports",
                    reports.size(), size, layout.name));
  }
  const std::size_t n = reports.size() / size;
  if (n == 0) return;
  const std::uint8_t* base = reports.data();
  const std::uint8_t* first = has_anchor_ ? anchor_.data() : base;
  const std::uint8_t* prev = first;
  const bool fast = layout.format == ReportFormat::kA32u40_A4u32_B8_C8;
  WrapCounts wraps;
  int ts_wraps = 0;
  std::uint64_t untrusted = 0;
  std::uint64_t timestamp = total_.timestamp;
  // A delta in the upper half of the timestamp's range is a stale or reordered report.
  const std::uint64_t max_ticks = std::min<std::uint64_t>(
      max_interval_ticks32_, timestamp_delta_max(layout.header_bits(), layout.timestamp_shift) / 2);
  for (std::size_t k = has_anchor_ ? 0 : 1; k < n; ++k) {
    const std::uint8_t* cur = base + k * size;
    const std::uint64_t ts0 = read_timestamp_field(layout, prev);
    const std::uint64_t ts1 = read_timestamp_field(layout, cur);
    const std::uint64_t interval =
        timestamp_delta(ts0, ts1, layout.header_bits(), layout.timestamp_shift);
    timestamp += interval;
    ts_wraps += ts1 < ts0;
    untrusted += interval > max_ticks;
    if (!fast || may_wrap_a32u40(prev, cur)) count_wraps(layout, prev, cur, wraps);
    prev = cur;
  }
  total_.timestamp = timestamp;
  fold(layout, first, prev, wraps, total_);
  total_.wraps_corrected += ts_wraps;
  if (untrusted > 0) {
    untrusted_intervals_ += untrusted;
    total_.interval_too_long = true;
  }
  total_.has_gpu_ticks = layout.gpu_ticks_offset >= 0;
  for (const CounterRun& run : layout.a_runs) {
    for (int i = 0; i < run.count; ++i)
      total_.a_present[static_cast<std::size_t>(run.first + i)] = true;
  }
  std::memcpy(anchor_.data(), prev, size);  // `prev` may be anchor_ itself only when n == 0
  has_anchor_ = true;
  reports_ += n;
}

void Accumulator::mark_lost() { ++lost_gaps_; }

void Accumulator::reset() {
  previous_.reset();
  has_anchor_ = false;
  total_ = CounterDeltas{};
  reports_ = 0;
  untrusted_intervals_ = 0;
  lost_gaps_ = 0;
}

}  // namespace oaprof::oa
