#include "power/idle_baseline.h"

#include "base/duration.h"

#include <fmt/format.h>

#include <chrono>
#include <stdexcept>
#include <thread>

namespace oaprof::power {

IdleBaseline idle_baseline_from(const EnergyReading& begin, const EnergyReading& end) {
  if (end.time_ns <= begin.time_ns) {
    throw std::invalid_argument(
        fmt::format("idle baseline: the second reading ({} ns) is not after the first ({} ns)",
                    end.time_ns, begin.time_ns));
  }
  IdleBaseline b;
  b.duration_ns = end.time_ns - begin.time_ns;
  const double seconds = static_cast<double>(b.duration_ns) / 1e9;
  for (const auto& [domain, end_uj] : end.energy_uj) {
    const auto it = begin.energy_uj.find(domain);
    if (it == begin.energy_uj.end()) continue;
    const std::uint64_t delta = end_uj - it->second;
    if (delta > 0) b.counters_moved = true;
    b.power_w[domain] = static_cast<double>(delta) / 1e6 / seconds;
  }
  b.igpu = igpu_power(b.power_w);
  return b;
}

void sleep_ns(std::uint64_t duration_ns) {
  std::this_thread::sleep_for(std::chrono::nanoseconds(duration_ns));
}

IdleBaseline measure_idle_baseline(EnergySource& source, std::uint64_t duration_ns,
                                   const Sleeper& sleep) {
  if (duration_ns == 0) {
    throw std::invalid_argument("idle baseline: the duration must be positive (or use 'off')");
  }
  const EnergyReading begin = source.read();
  sleep(duration_ns);
  const EnergyReading end = source.read();
  return idle_baseline_from(begin, end);
}

std::optional<std::uint64_t> parse_idle_baseline(std::string_view text) {
  if (text == "off") return std::nullopt;
  const auto ns = static_cast<std::uint64_t>(base::parse_duration(text).count());
  if (ns == 0) {
    throw std::invalid_argument(
        "--idle-baseline 0 measures nothing: give a duration such as 250ms, or 'off'");
  }
  return ns;
}

}  // namespace oaprof::power
