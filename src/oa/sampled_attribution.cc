#include "oa/sampled_attribution.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "base/uint128.h"

namespace oaprof::oa {
namespace {

using u128 = base::UInt128;

constexpr bool kX87Extended = std::numeric_limits<long double>::digits == 64 &&
                              std::numeric_limits<long double>::radix == 2 &&
                              sizeof(long double) >= 10;

// `growth` × f as the x87 unit multiplies under Linux's default control word (the 128-bit product
// of the significands rounded to 64 bits, to nearest, ties to even), then rounded to a whole
// count half away from zero, as llround. nullopt from 2^62 on: the long double path keeps those.
inline std::optional<std::uint64_t> rounded_product(std::uint64_t growth, std::uint64_t significand,
                                                    int exponent) {
  if (growth == 0 || significand == 0) return 0;
  const u128 product = static_cast<u128>(growth) * significand;
  const auto high = static_cast<std::uint64_t>(product >> 64);
  const auto low = static_cast<std::uint64_t>(product);
  std::uint64_t kept = low;
  int dropped = 0;  // low bits the 64-bit significand cannot hold
  if (high != 0) {
    const int lead = __builtin_clzll(high);
    dropped = 64 - lead;  // 1 to 64
    kept = lead == 0 ? high : (high << lead) | (low >> dropped);
    const std::uint64_t rest = dropped == 64 ? low : low & ((std::uint64_t{1} << dropped) - 1);
    const std::uint64_t half = std::uint64_t{1} << (dropped - 1);
    if ((rest > half || (rest == half && (kept & 1) != 0)) && ++kept == 0) {
      kept = std::uint64_t{1} << 63;  // rounded up to 2^64
      ++dropped;
    }
  }
  // The product is kept × 2^(dropped + exponent − 63): at least 2^63 when that shift is not
  // negative.
  const int shift = 63 - dropped - exponent;
  if (shift <= 0) return std::nullopt;
  if (shift > 64) return 0;  // below a half
  const std::uint64_t whole = shift == 64 ? 0 : kept >> shift;
  if (whole >= (std::uint64_t{1} << 62)) return std::nullopt;
  return whole + ((kept >> (shift - 1)) & 1);
}

// PeriodShare::apply, inlined where two shares are applied to every counter (attribute()).
inline std::uint64_t apply_share(const PeriodShare& s, std::uint64_t begin, std::uint64_t end) {
  if (end <= begin) return begin;
  if constexpr (kX87Extended) {
    if (const auto grown = rounded_product(end - begin, s.significand, s.exponent)) {
      return begin + *grown;
    }
  }
  const long double grown = static_cast<long double>(end - begin) * s.f;
  return begin + static_cast<std::uint64_t>(std::llround(grown));
}

// Every counter of `in...` through `op`, into `out` (the flags are the caller's).
template <class Op, class... In>
void each_counter(CounterDeltas& out, Op op, const In&... in) {
  out.timestamp = op(in.timestamp...);
  out.gpu_ticks = op(in.gpu_ticks...);
  for (std::size_t i = 0; i < out.a.size(); ++i) out.a[i] = op(in.a[i]...);
  for (std::size_t i = 0; i < out.b.size(); ++i) out.b[i] = op(in.b[i]...);
  for (std::size_t i = 0; i < out.c.size(); ++i) out.c[i] = op(in.c[i]...);
  for (std::size_t i = 0; i < out.perfcnt.size(); ++i) out.perfcnt[i] = op(in.perfcnt[i]...);
}

}  // namespace

PeriodShare::PeriodShare(std::uint64_t part, std::uint64_t period)
    : f(static_cast<long double>(part) / static_cast<long double>(period)) {
  if constexpr (kX87Extended) {
    // The x87 layout: the 64-bit significand (its leading bit explicit), then sign and a 15-bit
    // exponent biased by 16383. f lies in [0, 1]: never negative, infinite or subnormal.
    std::uint16_t sign_exponent = 0;
    std::memcpy(&significand, &f, sizeof significand);
    std::memcpy(&sign_exponent, reinterpret_cast<const unsigned char*>(&f) + 8,
                sizeof sign_exponent);
    exponent = (sign_exponent & 0x7fff) - 16383;
  }
}

std::uint64_t PeriodShare::apply(std::uint64_t begin, std::uint64_t end) const {
  return apply_share(*this, begin, end);
}

void CounterTimeline::add(std::uint64_t time_ns, const CounterDeltas& total,
                          std::uint64_t untrusted_intervals) {
  if (!points_.empty() && time_ns <= points_.back().time_ns) {
    throw std::invalid_argument(
        fmt::format("a periodic read at {} ns does not come after the last one at {} ns", time_ns,
                    points_.back().time_ns));
  }
  points_.push_back({time_ns, total, untrusted_intervals});
}

void CounterTimeline::forget_before(std::uint64_t time_ns) {
  const auto first_after =
      std::upper_bound(points_.begin(), points_.end(), time_ns,
                       [](std::uint64_t t, const Point& p) { return t < p.time_ns; });
  if (first_after - points_.begin() <= 1) return;
  points_.erase(points_.begin(), first_after - 1);  // keeps the last read at or before time_ns
}

CounterTimeline::At CounterTimeline::at(std::uint64_t time_ns) const {
  const auto after =
      std::lower_bound(points_.begin(), points_.end(), time_ns,
                       [](const Point& p, std::uint64_t t) { return p.time_ns < t; });
  const auto k = static_cast<std::size_t>(after - points_.begin());
  if (points_[k].time_ns == time_ns) return {0, k, k, PeriodShare(0, 1)};
  const std::uint64_t begin = points_[k - 1].time_ns;
  const std::uint64_t period = points_[k].time_ns - begin;
  return {period, k - 1, k, PeriodShare(time_ns - begin, period)};
}

std::optional<SampledDeltas> CounterTimeline::attribute(const Window& w) const {
  if (points_.empty() || w.end_ns < w.start_ns || w.start_ns < points_.front().time_ns ||
      w.end_ns > points_.back().time_ns) {
    return std::nullopt;
  }
  const At begin = at(w.start_ns);
  const At end = at(w.end_ns);
  SampledDeltas s;
  CounterDeltas& d = s.deltas;
  // Each counter's total at both edges, interpolated where an edge falls between reads (on a
  // read both points are that read), and the growth between them: straight into the deltas.
  each_counter(
      d,
      [&](std::uint64_t b0, std::uint64_t b1, std::uint64_t e0, std::uint64_t e1) {
        const std::uint64_t from = apply_share(begin.share, b0, b1);
        const std::uint64_t to = apply_share(end.share, e0, e1);
        return to >= from ? to - from : 0;
      },
      points_[begin.before].total, points_[begin.after].total, points_[end.before].total,
      points_[end.after].total);
  const Point& first = points_[begin.before];
  const Point& last = points_[end.after];
  d.has_gpu_ticks = last.total.has_gpu_ticks;
  d.a_present = last.total.a_present;
  d.wraps_corrected = last.total.wraps_corrected - first.total.wraps_corrected;
  d.interval_too_long = last.untrusted > first.untrusted;
  bound_error(begin, end, w.end_ns - w.start_ns, s);
  return s;
}

void CounterTimeline::bound_error(const At& begin, const At& end, std::uint64_t length_ns,
                                  SampledDeltas& s) const {
  // A window of no length measures nothing, wherever it lies: on a read it would get no counts
  // and no interpolated edge, a bound of 0 that claims an exact nothing.
  if (length_ns == 0) {
    s.between_reads = true;
    s.error_bound = std::numeric_limits<double>::infinity();
    return;
  }
  const auto length = static_cast<double>(length_ns);
  // The reads around the window are at most one period apart and an edge is interpolated: its
  // counts are a share of that period's growth, which may all be the kernel's (or none of it),
  // so the period, counted once, is the bound.
  if (end.after - begin.before <= 1 && (begin.period_ns > 0 || end.period_ns > 0)) {
    s.between_reads = true;
    const std::uint64_t period = points_[end.after].time_ns - points_[begin.before].time_ns;
    s.error_bound = static_cast<double>(period) / length;
    return;
  }
  s.error_bound = static_cast<double>(begin.period_ns + end.period_ns) / length;
}

std::vector<double> overlap_shares(std::span<const Window> windows) {
  // The open windows' count between consecutive edges; where it is 2 or more, every window open
  // there shares the counters.
  std::vector<std::pair<std::uint64_t, int>> edges;
  for (const Window& w : windows) {
    if (w.end_ns <= w.start_ns) continue;
    edges.emplace_back(w.start_ns, +1);
    edges.emplace_back(w.end_ns, -1);
  }
  std::sort(edges.begin(), edges.end());
  // shared_before[k]: the shared time before edges[k]; open_after[k]: the windows open just
  // after it.
  std::vector<std::uint64_t> shared_before(edges.size(), 0);
  std::vector<int> open_after(edges.size(), 0);
  for (std::size_t k = 0; k < edges.size(); ++k) {
    const int open_before = k > 0 ? open_after[k - 1] : 0;
    if (k > 0) {
      shared_before[k] =
          shared_before[k - 1] + (open_before >= 2 ? edges[k].first - edges[k - 1].first : 0);
    }
    open_after[k] = open_before + edges[k].second;
  }
  // The shared time up to `t`: edges at t count as passed (the time between them is zero).
  const auto shared_until = [&](std::uint64_t t) -> std::uint64_t {
    const auto next =
        std::upper_bound(edges.begin(), edges.end(), std::pair<std::uint64_t, int>{t, +1});
    const auto k = static_cast<std::size_t>(next - edges.begin());
    if (k == 0) return 0;
    return shared_before[k - 1] + (open_after[k - 1] >= 2 ? t - edges[k - 1].first : 0);
  };
  std::vector<double> shares;
  shares.reserve(windows.size());
  for (const Window& w : windows) {
    if (w.end_ns <= w.start_ns) {
      shares.push_back(0.0);
      continue;
    }
    const std::uint64_t shared = shared_until(w.end_ns) - shared_until(w.start_ns);
    shares.push_back(static_cast<double>(shared) / static_cast<double>(w.end_ns - w.start_ns));
  }
  return shares;
}

ClockMap ClockMap::fit(std::span<const std::pair<std::uint64_t, std::uint64_t>> pairs) {
  if (pairs.empty()) throw std::invalid_argument("a clock map needs a calibration pair");
  ClockMap m;
  long double sum_d = 0, sum_h = 0;
  for (const auto& [d, h] : pairs) {
    sum_d += static_cast<long double>(d);
    sum_h += static_cast<long double>(h);
  }
  const auto n = static_cast<long double>(pairs.size());
  m.device0_ = sum_d / n;
  m.host0_ = sum_h / n;
  if (pairs.size() > 1) {
    long double sxx = 0, sxy = 0;
    for (const auto& [d, h] : pairs) {
      const long double dx = static_cast<long double>(d) - m.device0_;
      sxx += dx * dx;
      sxy += dx * (static_cast<long double>(h) - m.host0_);
    }
    if (sxx == 0) {
      throw std::invalid_argument("calibration pairs that all have one device time give no rate");
    }
    m.slope_ = sxy / sxx;
  }
  for (const auto& [d, h] : pairs) {
    const long double fitted = m.host0_ + m.slope_ * (static_cast<long double>(d) - m.device0_);
    m.max_residual_ns_ = std::max(
        m.max_residual_ns_, static_cast<double>(std::fabs(static_cast<long double>(h) - fitted)));
  }
  return m;
}

std::uint64_t ClockMap::to_host(std::uint64_t device_ns) const {
  const long double host = host0_ + slope_ * (static_cast<long double>(device_ns) - device0_);
  // Clamped to the clock's range: a time from an untrusted peer may lie anywhere.
  constexpr auto kMax = static_cast<long double>(std::numeric_limits<std::uint64_t>::max());
  if (!(host > 0)) return 0;
  if (host >= kMax) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(host + 0.5L);
}

}  // namespace oaprof::oa
