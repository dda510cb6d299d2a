// CLOCK_MONOTONIC in ns: the one host clock oaprof's processes share. The layer times its calls
// and puts sampled launches' windows on it; the session times its periodic reads with it, and
// the energy readings carry it, so all of them can be compared without calibration.
#pragma once

#include <time.h>

#include <cstdint>

namespace oaprof::base {

inline std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace oaprof::base
