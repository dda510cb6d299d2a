// RAPL through the powercap sysfs class: zones intel-rapl:N and subzones intel-rapl:N:M found by
// their `name` file, energy_uj unwrapped with max_energy_range_uj. The sysfs root is a parameter
// so tests point it at a fake tree.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "power/energy_source.h"
#include "power/sysfs_file.h"

namespace oaprof::power {

// The domain of a powercap zone by its `name` file ("package-0", "core", "uncore", "dram",
// "psys"); nullopt for zones that are not RAPL planes.
std::optional<Domain> powercap_zone_domain(std::string_view zone_name);

class PowercapSource final : public EnergySource {
 public:
  // `class_dir` is normally /sys/class/powercap. Throws std::runtime_error when no RAPL zone is
  // there or its energy cannot be read (with the reason: absent, permission, …).
  explicit PowercapSource(std::filesystem::path class_dir);
  // The same, with readings stamped by `clock_ns` instead of CLOCK_MONOTONIC (the simulator's
  // virtual clock).
  PowercapSource(std::filesystem::path class_dir, std::function<std::uint64_t()> clock_ns);

  std::string_view name() const override { return "powercap"; }
  std::vector<Domain> domains() const override;
  EnergyReading read() override;
  std::optional<std::uint64_t> wrap_range_uj() const override;

 private:
  struct Zone {
    detail::OpenNumberFile energy_file;  // kept open: read at every kernel boundary
    Domain domain;
    std::uint64_t max_range_uj = 0;
    std::uint64_t last_raw = 0;
    std::uint64_t total = 0;  // unwrapped, since the first read
  };
  std::vector<Zone> zones_;
  std::function<std::uint64_t()> clock_ns_;
};

}  // namespace oaprof::power
