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
  std::array<std::uint64_t, kNumA> a{};
  std::array<bool, kNumA> a_present{};
  std::array<std::uint64_t, kNumB> b{};
  std::array<std::uint64_t, kNumC> c{};
};

std::uint64_t delta32(std::uint32_t begin, std::uint32_t end);
std::uint64_t delta40(std::uint64_t begin, std::uint64_t end);

CounterDeltas compute_deltas(const Report& begin, const Report& end);

// Derived figures every row carries.
double gpu_time_ns(const CounterDeltas& d, double timestamp_hz);
double average_frequency_mhz(const CounterDeltas& d, double timestamp_hz);

}  // namespace oaprof::oa
