#include "power/energy_source.h"

#include <ctime>

namespace oaprof::power {

std::string_view domain_name(Domain d) {
  switch (d) {
    case Domain::kPackage: return "package";
    case Domain::kCores: return "core";
    case Domain::kUncore: return "uncore";
    case Domain::kDram: return "dram";
    case Domain::kPsys: return "psys";
  }
  return "unknown";
}

std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

IgpuPower igpu_power(const EnergyReading& begin, const EnergyReading& end) {
  IgpuPower p;
  if (end.time_ns <= begin.time_ns) return p;
  const double seconds = static_cast<double>(end.time_ns - begin.time_ns) / 1e9;
  auto watts = [&](Domain d) -> std::optional<double> {
    auto b = begin.energy_uj.find(d);
    auto e = end.energy_uj.find(d);
    if (b == begin.energy_uj.end() || e == end.energy_uj.end()) return std::nullopt;
    return static_cast<double>(e->second - b->second) / 1e6 / seconds;
  };
  const auto pkg = watts(Domain::kPackage);
  const auto pp0 = watts(Domain::kCores);
  const auto dram = watts(Domain::kDram);
  p.pp1_w = watts(Domain::kUncore);
  if (pkg && pp0) {
    p.pkg_pp0_w = *pkg - *pp0;
    p.dram_missing = !dram.has_value();
    p.pkg_pp0_dram_w = *pkg - *pp0 - dram.value_or(0.0);
  }
  return p;
}

}  // namespace oaprof::power
