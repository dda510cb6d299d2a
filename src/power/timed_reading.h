// How a backend times a reading: by the clock on both sides of its counter reads, at their
// middle. A reader descheduled between the clock and its counters would otherwise get a time
// that is not its energy's (the counters read ms later than the clock said), and a window whose
// power is off by that gap (the simulated planes did so on a loaded CI machine). A read
// whose two clock reads lie further apart than kMaxReadSpanNs, a quarter of RAPL's update
// interval of about 1 ms (../shared/reference/hardware.md §8, from Intel's SDM), is made again,
// up to kReadAttempts times, and the one that took least time is kept.
#pragma once

#include <cstdint>
#include <limits>
#include <utility>

#include "power/energy_source.h"

namespace oaprof::power {

inline constexpr std::uint64_t kMaxReadSpanNs = 250'000;
inline constexpr int kReadAttempts = 3;

// `read_counters` returns the counters' energy (its time_ns is set here); it may be called again,
// so a backend's unwrapped totals must stay right over every call, as they do when each call
// adds the counters' change since the last.
template <class Clock, class ReadCounters>
EnergyReading timed_reading(Clock&& clock_ns, ReadCounters&& read_counters) {
  EnergyReading best;
  std::uint64_t best_span = std::numeric_limits<std::uint64_t>::max();
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    const std::uint64_t before = clock_ns();
    EnergyReading r = read_counters();
    const std::uint64_t after = clock_ns();
    const std::uint64_t span = after > before ? after - before : 0;
    r.time_ns = before + span / 2;
    if (span < best_span) {
      best = std::move(r);
      best_span = span;
    }
    if (span <= kMaxReadSpanNs) break;
  }
  return best;
}

}  // namespace oaprof::power
