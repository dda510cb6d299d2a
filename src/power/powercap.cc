#include "power/powercap.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::power {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> read_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::optional<Domain> domain_from_name(const std::string& name) {
  if (name.rfind("package", 0) == 0) return Domain::kPackage;
  if (name == "core") return Domain::kCores;
  if (name == "uncore") return Domain::kUncore;
  if (name == "dram") return Domain::kDram;
  if (name == "psys") return Domain::kPsys;
  return std::nullopt;
}

}  // namespace

PowercapSource::PowercapSource(fs::path class_dir) {
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(class_dir, ec)) {
    const std::string leaf = entry.path().filename().string();
    if (leaf.rfind("intel-rapl:", 0) == 0) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    const auto name = read_line(dir / "name");
    if (!name) continue;
    const auto domain = domain_from_name(*name);
    if (!domain) continue;
    Zone z{dir / "energy_uj", *domain};
    const auto range = read_line(dir / "max_energy_range_uj");
    z.max_range_uj = range ? std::stoull(*range) : 0;
    z.last_raw = read_raw(z);
    zones_.push_back(z);
  }
  if (zones_.empty()) {
    throw std::runtime_error(fmt::format(
        "no RAPL zone under {}: this machine exposes no RAPL through powercap (a virtual machine, "
        "or the intel_rapl_common module is not loaded: try `modprobe intel_rapl_msr`)",
        class_dir.string()));
  }
}

std::uint64_t PowercapSource::read_raw(const Zone& zone) const {
  std::ifstream in(zone.energy_file);
  std::uint64_t v = 0;
  if (!in) {
    const int err = errno;
    throw std::runtime_error(fmt::format(
        "cannot read {}: {}{}", zone.energy_file.string(), std::strerror(err),
        err == EACCES ? " (energy_uj is root-only since Linux 5.10: run oaprof with sudo or "
                        "through oaprofd)"
                      : ""));
  }
  if (!(in >> v)) {
    throw std::runtime_error(fmt::format("{} does not hold a number", zone.energy_file.string()));
  }
  return v;
}

std::vector<Domain> PowercapSource::domains() const {
  std::vector<Domain> out;
  for (const Zone& z : zones_) {
    if (std::find(out.begin(), out.end(), z.domain) == out.end()) out.push_back(z.domain);
  }
  return out;
}

EnergyReading PowercapSource::read() {
  EnergyReading r;
  r.time_ns = monotonic_ns();
  for (Zone& z : zones_) {
    const std::uint64_t raw = read_raw(z);
    // A counter that went backwards wrapped once at max_energy_range_uj.
    z.total += raw >= z.last_raw ? raw - z.last_raw : raw + z.max_range_uj - z.last_raw;
    z.last_raw = raw;
    r.energy_uj[z.domain] += z.total;
  }
  return r;
}

}  // namespace oaprof::power
