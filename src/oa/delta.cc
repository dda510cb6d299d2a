#include "oa/delta.h"

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

CounterDeltas compute_deltas(const Report& begin, const Report& end) {
  CounterDeltas d;
  d.timestamp = delta32(begin.timestamp, end.timestamp);
  d.has_gpu_ticks = begin.has_gpu_ticks && end.has_gpu_ticks;
  if (d.has_gpu_ticks) d.gpu_ticks = delta32(begin.gpu_ticks, end.gpu_ticks);
  for (int i = 0; i < kNumA; ++i) {
    if (!begin.a_present[i] || !end.a_present[i]) continue;
    d.a_present[i] = true;
    d.a[i] = begin.a_is_40bit[i] ? delta40(begin.a[i], end.a[i])
                                 : delta32(static_cast<std::uint32_t>(begin.a[i]),
                                           static_cast<std::uint32_t>(end.a[i]));
  }
  for (int i = 0; i < kNumB; ++i) d.b[i] = delta32(begin.b[i], end.b[i]);
  for (int i = 0; i < kNumC; ++i) d.c[i] = delta32(begin.c[i], end.c[i]);
  return d;
}

double gpu_time_ns(const CounterDeltas& d, double timestamp_hz) {
  return static_cast<double>(d.timestamp) * 1e9 / timestamp_hz;
}

double average_frequency_mhz(const CounterDeltas& d, double timestamp_hz) {
  if (d.timestamp == 0 || !d.has_gpu_ticks) return 0.0;
  return static_cast<double>(d.gpu_ticks) * timestamp_hz / static_cast<double>(d.timestamp) / 1e6;
}

}  // namespace oaprof::oa
