// Energy readings from the RAPL planes, behind one interface whatever the backend. Readings are
// cumulative microjoules per domain, already unwrapped to 64 bits by the backend.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace oaprof::power {

enum class Domain { kPackage, kCores, kUncore, kDram, kPsys };

std::string_view domain_name(Domain d);  // "package", "core", "uncore", "dram", "psys"

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
};

// iGPU power by the method's formulas; nullopt where a needed plane is missing.
struct IgpuPower {
  std::optional<double> pkg_pp0_dram_w;  // P_PKG − P_PP0 − P_DRAM (DRAM counted 0 when absent)
  bool dram_missing = false;
  std::optional<double> pp1_w;           // the uncore ("gpu") plane
  std::optional<double> pkg_pp0_w;
};

IgpuPower igpu_power(const EnergyReading& begin, const EnergyReading& end);

std::uint64_t monotonic_ns();

}  // namespace oaprof::power
