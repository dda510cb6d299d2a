#include "power/energy_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <stdexcept>
#include <string>

#include "base/duration.h"
#include "base/monotonic_clock.h"

namespace oaprof::power {

std::string_view domain_name(Domain d) {
  switch (d) {
    case Domain::kPackage:
      return "package";
    case Domain::kCores:
      return "core";
    case Domain::kUncore:
      return "uncore";
    case Domain::kDram:
      return "dram";
    case Domain::kPsys:
      return "psys";
    case Domain::kGpuCard:
      return "gpu_card";
    case Domain::kGpuPackage:
      return "gpu_pkg";
  }
  return "unknown";
}

std::string_view plane_name(Domain d) {
  switch (d) {
    case Domain::kPackage:
      return "PKG";
    case Domain::kCores:
      return "PP0";
    case Domain::kUncore:
      return "PP1";
    case Domain::kDram:
      return "DRAM";
    case Domain::kPsys:
      return "PSYS";
    case Domain::kGpuCard:
      return "CARD";
    case Domain::kGpuPackage:
      return "GPU_PKG";
  }
  return "unknown";
}

std::string_view formula_name(IgpuFormula f) {
  switch (f) {
    case IgpuFormula::kPkgPp0Dram:
      return "pkg-pp0-dram";
    case IgpuFormula::kPp1:
      return "pp1";
    case IgpuFormula::kPkgPp0:
      return "pkg-pp0";
    case IgpuFormula::kGpuPkg:
      return "gpu-pkg";
  }
  return "unknown";
}

std::string_view formula_label(IgpuFormula f) {
  switch (f) {
    case IgpuFormula::kPkgPp0Dram:
      return "P_PKG - P_PP0 - P_DRAM";
    case IgpuFormula::kPp1:
      return "P_PP1";
    case IgpuFormula::kPkgPp0:
      return "P_PKG - P_PP0";
    case IgpuFormula::kGpuPkg:
      return "P_GPU_PKG";
  }
  return "unknown";
}

IgpuFormula parse_igpu_formula(std::string_view name) {
  for (IgpuFormula f : kAllIgpuFormulas) {
    if (formula_name(f) == name) return f;
  }
  throw std::invalid_argument(fmt::format(
      "unknown GPU power formula '{}': use auto (the default: gpu-pkg where a discrete GPU has "
      "its own sensor, else pkg-pp0-dram), pkg-pp0-dram (P_PKG - P_PP0 - P_DRAM), pp1 (the PP1 "
      "'uncore'/'gpu' plane), pkg-pp0 (P_PKG - P_PP0) or gpu-pkg (a discrete xe GPU's package "
      "sensor)",
      name));
}

std::optional<IgpuFormula> parse_igpu_formula_choice(std::string_view name) {
  if (name == "auto") return std::nullopt;
  return parse_igpu_formula(name);
}

IgpuFormula default_igpu_formula(const std::vector<Domain>& domains) {
  const bool gpu_sensor =
      std::find(domains.begin(), domains.end(), Domain::kGpuPackage) != domains.end();
  return gpu_sensor ? IgpuFormula::kGpuPkg : IgpuFormula::kPkgPp0Dram;
}

std::optional<double> IgpuPower::watts(IgpuFormula f) const {
  switch (f) {
    case IgpuFormula::kPkgPp0Dram:
      return pkg_pp0_dram_w;
    case IgpuFormula::kPp1:
      return pp1_w;
    case IgpuFormula::kPkgPp0:
      return pkg_pp0_w;
    case IgpuFormula::kGpuPkg:
      return gpu_pkg_w;
  }
  return std::nullopt;
}

std::uint64_t monotonic_ns() { return base::monotonic_ns(); }

IgpuPower igpu_power(const std::map<Domain, double>& power_w) {
  IgpuPower p;
  auto watts = [&](Domain d) -> std::optional<double> {
    auto it = power_w.find(d);
    if (it == power_w.end()) return std::nullopt;
    return it->second;
  };
  const auto pkg = watts(Domain::kPackage);
  const auto pp0 = watts(Domain::kCores);
  const auto dram = watts(Domain::kDram);
  p.pp1_w = watts(Domain::kUncore);
  p.gpu_pkg_w = watts(Domain::kGpuPackage);
  if (pkg && pp0) {
    p.pkg_pp0_w = *pkg - *pp0;
    p.dram_missing = !dram.has_value();
    p.pkg_pp0_dram_w = *pkg - *pp0 - dram.value_or(0.0);
  }
  return p;
}

IgpuPower igpu_power(const EnergyReading& begin, const EnergyReading& end) {
  if (end.time_ns <= begin.time_ns) return {};
  const double seconds = static_cast<double>(end.time_ns - begin.time_ns) / 1e9;
  std::map<Domain, double> power_w;
  for (const auto& [domain, end_uj] : end.energy_uj) {
    auto b = begin.energy_uj.find(domain);
    if (b == begin.energy_uj.end()) continue;
    power_w[domain] = static_cast<double>(end_uj - b->second) / 1e6 / seconds;
  }
  return igpu_power(power_w);
}

}  // namespace oaprof::power
