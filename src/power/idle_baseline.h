// The idle baseline: power per plane measured while nothing runs, just before the profiled run, so
// that the dynamic power of a kernel (total − idle) can be told from the static power that
// dominates on these parts. The sleep is a parameter so tests run it on a virtual clock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string_view>

#include "power/energy_source.h"

namespace oaprof::power {

inline constexpr std::uint64_t kDefaultIdleBaselineNs = 250'000'000;

struct IdleBaseline {
  std::uint64_t duration_ns = 0;
  std::map<Domain, double> power_w;
  IgpuPower igpu;
  // False when no counter advanced: the baseline is then no measurement (a VM, a frozen counter).
  bool counters_moved = false;
};

// From two readings; throws std::invalid_argument when `end` is not after `begin`.
IdleBaseline idle_baseline_from(const EnergyReading& begin, const EnergyReading& end);

using Sleeper = std::function<void(std::uint64_t duration_ns)>;
void sleep_ns(std::uint64_t duration_ns);  // the real one

// Reads, sleeps `duration_ns`, reads again.
IdleBaseline measure_idle_baseline(EnergySource& source, std::uint64_t duration_ns,
                                   const Sleeper& sleep = sleep_ns);

// `--idle-baseline DURATION|off`: nullopt for "off". Throws std::invalid_argument otherwise.
std::optional<std::uint64_t> parse_idle_baseline(std::string_view text);

}  // namespace oaprof::power
