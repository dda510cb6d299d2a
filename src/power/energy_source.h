// Energy readings from the RAPL planes or a discrete card's own sensors, behind one interface
// whatever the backend. Readings are cumulative microjoules per domain, already unwrapped to 64
// bits by the backend. Everything the profiler needs from src/power is reachable from here:
// backends (energy_registry.h), the window arithmetic (energy_window.h), the long-run sampler
// (energy_sampler.h) and the simulator.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oaprof::power {

// The CPU's RAPL planes, then a discrete GPU's own sensors (its driver's hwmon: the whole board,
// and the GPU package; hwmon.h).
enum class Domain { kPackage, kCores, kUncore, kDram, kPsys, kGpuCard, kGpuPackage };

inline constexpr Domain kAllDomains[] = {Domain::kPackage,   Domain::kCores, Domain::kUncore,
                                         Domain::kDram,      Domain::kPsys,  Domain::kGpuCard,
                                         Domain::kGpuPackage};

// "package", "core", "uncore", "dram", "psys", "gpu_card", "gpu_pkg"
std::string_view domain_name(Domain d);
// The plane's name in the method's formulas: "PKG", "PP0", "PP1", "DRAM", "PSYS", and the GPU's
// own "CARD" and "GPU_PKG".
std::string_view plane_name(Domain d);

struct EnergyReading {
  std::uint64_t time_ns = 0;                  // CLOCK_MONOTONIC when read
  std::map<Domain, std::uint64_t> energy_uj;  // summed over packages
};

class EnergySource {
 public:
  virtual ~EnergySource() = default;
  virtual std::string_view name() const = 0;
  virtual std::vector<Domain> domains() const = 0;
  // Throws std::runtime_error with the reason and the fix when the counters cannot be read.
  virtual EnergyReading read() = 0;
  // The smallest hardware counter range in µJ before it wraps, when the backend's counters wrap
  // at all; the sampler (energy_sampler.h) reads often enough that none wraps twice unseen.
  virtual std::optional<std::uint64_t> wrap_range_uj() const { return std::nullopt; }
};

// The GPU power formulas oaprof knows; `--igpu-power` picks the headline one. The first three
// take an integrated GPU's power out of the CPU package's RAPL planes; gpu-pkg is a discrete
// GPU's own package sensor, measured directly.
enum class IgpuFormula { kPkgPp0Dram, kPp1, kPkgPp0, kGpuPkg };

inline constexpr IgpuFormula kAllIgpuFormulas[] = {IgpuFormula::kPkgPp0Dram, IgpuFormula::kPp1,
                                                   IgpuFormula::kPkgPp0, IgpuFormula::kGpuPkg};

std::string_view formula_name(IgpuFormula f);   // "pkg-pp0-dram", "pp1", "pkg-pp0", "gpu-pkg"
std::string_view formula_label(IgpuFormula f);  // "P_PKG - P_PP0 - P_DRAM", …, "P_GPU_PKG"
// Throws std::invalid_argument naming the valid formulas.
IgpuFormula parse_igpu_formula(std::string_view name);
// `--igpu-power`'s value: nullopt for "auto" (default_igpu_formula decides once the energy
// source is open), else parse_igpu_formula's.
std::optional<IgpuFormula> parse_igpu_formula_choice(std::string_view name);
// What "auto" means for a source with these domains: gpu-pkg where the GPU's own package sensor
// is there (a discrete xe GPU), else pkg-pp0-dram.
IgpuFormula default_igpu_formula(const std::vector<Domain>& domains);

// iGPU power by the method's formulas; nullopt where a needed plane is missing.
struct IgpuPower {
  std::optional<double> pkg_pp0_dram_w;  // P_PKG − P_PP0 − P_DRAM (DRAM counted 0 when absent)
  bool dram_missing = false;
  std::optional<double> pp1_w;  // the uncore ("gpu") plane
  std::optional<double> pkg_pp0_w;
  std::optional<double> gpu_pkg_w;  // a discrete GPU's own package sensor

  std::optional<double> watts(IgpuFormula f) const;
};

IgpuPower igpu_power(const EnergyReading& begin, const EnergyReading& end);
// The same formulas on per-domain power figures (an idle baseline, a dynamic power).
IgpuPower igpu_power(const std::map<Domain, double>& power_w);

std::uint64_t monotonic_ns();

// The advance of a counter that counts up to `range` and wraps to 0: when `now` < `prev` it
// wrapped once (a second wrap between two reads cannot be seen: the sampler prevents it).
// A range of 0 (unknown) takes a backwards step as a reset and counts `now` only.
constexpr std::uint64_t counter_delta(std::uint64_t prev, std::uint64_t now, std::uint64_t range) {
  if (now >= prev) return now - prev;
  return range >= prev ? now + (range - prev) : now;
}

}  // namespace oaprof::power
