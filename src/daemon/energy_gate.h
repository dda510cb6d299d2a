// RAPL through oaprofd. The kernel made powercap's energy_uj root-only because energy read at a
// fine grain by an unprivileged process is a side channel on whatever else runs on the package
// (CVE-2020-8694, "PLATYPUS"). oaprofd lends energy readings only under this policy (docs/
// daemon.md, "Security model"): to the client whose session holds the OA unit, for that session's
// life (DaemonService checks that); no finer in time than kEnergyMinIntervalNs, which this gate
// enforces per session (a request sooner gets the last reading again, with its own time, so
// windows stay honest and no finer structure leaks); and not at all when the administrator says
// so (oaprofd --energy off).
#pragma once

#include <cstdint>
#include <optional>

#include "power/energy_source.h"

namespace oaprof::daemon {

// A session learns at most 1000 distinct readings a second, each at least 1 ms after the last:
// enough for per-kernel windows (--min-window is 50 ms by default), coarse for a side channel.
inline constexpr std::uint64_t kEnergyMinIntervalNs = 1'000'000;

class EnergyGate {
 public:
  explicit EnergyGate(std::uint64_t min_interval_ns = kEnergyMinIntervalNs)
      : min_interval_ns_(min_interval_ns) {}

  // The reading to hand out at `now_ns` (CLOCK_MONOTONIC): a fresh one from `source` when the
  // last fresh one is at least the interval old, else that one again.
  power::EnergyReading reading(power::EnergySource& source, std::uint64_t now_ns);

  std::uint64_t fresh_readings() const { return fresh_; }
  std::uint64_t repeated_readings() const { return repeated_; }

 private:
  std::uint64_t min_interval_ns_;
  std::optional<power::EnergyReading> last_;
  std::uint64_t last_at_ns_ = 0;
  std::uint64_t fresh_ = 0;
  std::uint64_t repeated_ = 0;
};

}  // namespace oaprof::daemon
