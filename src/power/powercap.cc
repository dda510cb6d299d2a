#include "power/powercap.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "power/sysfs_file.h"
#include "power/timed_reading.h"
#include "power/unique_domains.h"

namespace oaprof::power {
namespace fs = std::filesystem;

std::optional<Domain> powercap_zone_domain(std::string_view name) {
  if (name.rfind("package", 0) == 0) return Domain::kPackage;
  if (name == "core") return Domain::kCores;
  if (name == "uncore") return Domain::kUncore;
  if (name == "dram") return Domain::kDram;
  if (name == "psys") return Domain::kPsys;
  return std::nullopt;
}

PowercapSource::PowercapSource(fs::path class_dir)
    : PowercapSource(std::move(class_dir), monotonic_ns) {}

PowercapSource::PowercapSource(fs::path class_dir, std::function<std::uint64_t()> clock_ns)
    : clock_ns_(std::move(clock_ns)) {
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(class_dir, ec)) {
    const std::string leaf = entry.path().filename().string();
    // intel-rapl-mmio:N duplicates the package plane through another interface: skip it.
    if (leaf.rfind("intel-rapl:", 0) == 0) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    const auto name = detail::read_line(dir / "name");
    if (!name) continue;
    const auto domain = powercap_zone_domain(*name);
    if (!domain) continue;
    Zone z{detail::OpenNumberFile(dir / "energy_uj",
                                  "energy_uj is root-only since Linux 5.10: run oaprof with sudo "
                                  "or through oaprofd"),
           *domain};
    const auto range = detail::read_line(dir / "max_energy_range_uj");
    z.max_range_uj = range ? detail::parse_u64(*range).value_or(0) : 0;
    z.last_raw = z.energy_file.read();
    zones_.push_back(std::move(z));
  }
  if (zones_.empty()) {
    throw std::runtime_error(fmt::format(
        "no RAPL zone under {}: this machine exposes no RAPL through powercap (a virtual machine, "
        "or the intel_rapl_common module is not loaded: try `modprobe intel_rapl_msr`)",
        class_dir.string()));
  }
}

std::vector<Domain> PowercapSource::domains() const { return detail::unique_domains(zones_); }

std::optional<std::uint64_t> PowercapSource::wrap_range_uj() const {
  std::optional<std::uint64_t> smallest;
  for (const Zone& z : zones_) {
    if (z.max_range_uj > 0 && (!smallest || z.max_range_uj < *smallest)) smallest = z.max_range_uj;
  }
  return smallest;
}

EnergyReading PowercapSource::read() {
  return timed_reading(clock_ns_, [this] {
    EnergyReading r;
    for (Zone& z : zones_) {
      const std::uint64_t raw = z.energy_file.read();
      z.total += counter_delta(z.last_raw, raw, z.max_range_uj);
      z.last_raw = raw;
      r.energy_uj[z.domain] += z.total;
    }
    return r;
  });
}

}  // namespace oaprof::power
