#include "power/xe_hwmon.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "power/unique_domains.h"

namespace oaprof::power {
namespace fs = std::filesystem;
namespace {

// hwmon numbers its channels from 1; xe has two energy channels, this bound leaves room.
constexpr int kMaxEnergyChannels = 8;

// The device's hwmon directories whose `name` is "xe", in order.
std::vector<fs::path> xe_hwmon_dirs(const fs::path& device_dir) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(device_dir / "hwmon", ec)) {
    if (entry.path().filename().string().rfind("hwmon", 0) != 0) continue;
    if (detail::read_line(entry.path() / "name") == "xe") dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// The domain of energy<n>_input in `dir`, or nullopt when there is no such channel or it is not
// one oaprof knows.
std::optional<Domain> channel_domain(const fs::path& dir, int n) {
  std::error_code ec;
  if (!fs::exists(dir / fmt::format("energy{}_input", n), ec)) return std::nullopt;
  const auto label = detail::read_line(dir / fmt::format("energy{}_label", n));
  if (!label) return n == 1 ? std::optional<Domain>(Domain::kGpuPackage) : std::nullopt;
  return xe_hwmon_label_domain(*label);
}

}  // namespace

std::optional<Domain> xe_hwmon_label_domain(std::string_view label) {
  if (label == "card") return Domain::kGpuCard;
  if (label == "pkg") return Domain::kGpuPackage;
  return std::nullopt;
}

XeHwmonSource::XeHwmonSource(fs::path device_dir, std::function<std::uint64_t()> clock_ns)
    : clock_ns_(std::move(clock_ns)) {
  const auto dirs = xe_hwmon_dirs(device_dir);
  if (dirs.empty()) {
    throw std::runtime_error(fmt::format(
        "{} has no xe hwmon: xe registers its energy sensors only for discrete GPUs (an "
        "integrated GPU's power comes from the CPU's RAPL planes)",
        device_dir.string()));
  }
  for (const fs::path& dir : dirs) {
    for (int n = 1; n <= kMaxEnergyChannels; ++n) {
      const auto domain = channel_domain(dir, n);
      if (!domain) continue;
      Channel c{detail::OpenNumberFile(dir / fmt::format("energy{}_input", n),
                                       "xe makes energy*_input readable by every user (0444): "
                                       "check the file's mode and any security module"),
                *domain};
      c.last_raw = c.energy_file.read();
      channels_.push_back(std::move(c));
    }
  }
  if (channels_.empty()) {
    throw std::runtime_error(fmt::format(
        "{} has no energy channel labelled card or pkg: this kernel's xe does not expose the "
        "GPU's energy (a newer kernel does for Battlemage and DG2)",
        dirs.front().string()));
  }
}

std::vector<Domain> XeHwmonSource::domains() const { return detail::unique_domains(channels_); }

EnergyReading XeHwmonSource::read() {
  EnergyReading r;
  r.time_ns = clock_ns_();
  for (Channel& c : channels_) {
    const std::uint64_t raw = c.energy_file.read();
    c.total += counter_delta(c.last_raw, raw, 0);  // range 0: a step down is a reset
    c.last_raw = raw;
    r.energy_uj[c.domain] += c.total;
  }
  return r;
}

}  // namespace oaprof::power
