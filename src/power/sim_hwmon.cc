#include "power/sim_hwmon.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "power/sysfs_file.h"

namespace oaprof::power {
namespace fs = std::filesystem;
namespace {

struct SimChannel {
  int number;
  const char* label;  // null: unlabelled
  Domain domain;
};

// The channels each driver registers on the cards oaprof simulates (power/hwmon.h).
std::vector<SimChannel> channels_of(const std::string& driver) {
  if (driver == "xe") return {{1, "card", Domain::kGpuCard}, {2, "pkg", Domain::kGpuPackage}};
  if (driver == "i915") return {{1, nullptr, Domain::kGpuPackage}};
  throw std::invalid_argument(
      fmt::format("simulated hwmon: driver '{}' is neither i915 nor xe", driver));
}

int create_counter_file(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("simulated hwmon: cannot create {}: {}", file.string(), std::strerror(errno)));
  }
  return fd;
}

}  // namespace

SimHwmon::SimHwmon(fs::path sysfs_root, SimHwmonModel model, Clock clock_ns)
    : root_(std::move(sysfs_root)), model_(std::move(model)), clock_ns_(std::move(clock_ns)) {
  const std::vector<SimChannel> channels = channels_of(model_.driver);
  const fs::path dir = device_dir() / "hwmon" / "hwmon0";
  fs::create_directories(dir);
  detail::write_atomically(dir / "name", model_.driver + "\n");
  for (const SimChannel& c : channels) {
    if (c.label) {
      detail::write_atomically(dir / fmt::format("energy{}_label", c.number),
                               std::string(c.label) + "\n");
    }
    energy_nj_[c.domain] = 0;
    try {
      files_.emplace_back(c.domain,
                          create_counter_file(dir / fmt::format("energy{}_input", c.number)));
    } catch (...) {
      for (const auto& file : files_) ::close(file.second);
      throw;
    }
  }
  std::lock_guard lock(mu_);
  last_ns_ = clock_ns_();
  gpu_feed_.start();
  write_locked();
}

SimHwmon::~SimHwmon() {
  for (const auto& file : files_) ::close(file.second);
}

fs::path SimHwmon::device_dir() const {
  return root_ / "bus" / "pci" / "devices" / model_.pci_address;
}

std::map<Domain, double> SimHwmon::power_w(double activity) const {
  if (gpu_feed_.active()) {
    // The GPU's share comes from its energy model (advance_locked): none of it here.
    return {{Domain::kGpuPackage, 0.0},
            {Domain::kGpuCard, model_.card_idle_w - model_.package_idle_w}};
  }
  const double gpu = model_.gpu_active_w * activity;
  return {{Domain::kGpuPackage, model_.package_idle_w + gpu},
          {Domain::kGpuCard, model_.card_idle_w + gpu}};
}

void SimHwmon::set_gpu_activity(double fraction) {
  check_gpu_activity(fraction, "simulated hwmon");
  std::lock_guard lock(mu_);
  advance_locked();  // the files are written when read, not at every kernel boundary
  activity_ = fraction;
}

EnergyReading SimHwmon::read_through(HwmonSource& reader) {
  std::lock_guard lock(mu_);
  advance_locked();
  write_locked();
  EnergyReading r = reader.read();
  r.time_ns = last_ns_;  // the files' instant (SimPowercap::read_through says why)
  return r;
}

void SimHwmon::advance_locked() {
  const std::uint64_t now = clock_ns_();
  if (now <= last_ns_) return;
  const auto elapsed_ns = static_cast<long double>(now - last_ns_);
  for (auto& [domain, nj] : energy_nj_) {
    if (domain == model_.stuck_domain) continue;
    // W × ns = nJ.
    nj += static_cast<std::uint64_t>(std::llround(power_w(activity_).at(domain) * elapsed_ns));
  }
  const auto gpu_nj = static_cast<std::uint64_t>(std::llround(gpu_feed_.take_j() * 1e9));
  for (auto& [domain, nj] : energy_nj_) {
    if (domain != model_.stuck_domain) nj += gpu_nj;
  }
  last_ns_ = now;
}

void SimHwmon::write_locked() {
  // Fixed-width text rewritten in place, as SimPowercap does: never a shorter number that would
  // leave stale digits behind. The sum wraps modulo 2^64 and prints signed, as the driver's `long`.
  for (const auto& [domain, fd] : files_) {
    const std::uint64_t uj = model_.start_uj + energy_nj_.at(domain) / 1000;
    const std::string text = fmt::format("{:020}\n", static_cast<std::int64_t>(uj));
    if (::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      throw std::runtime_error(
          fmt::format("simulated hwmon: writing an energy file failed: {}", std::strerror(errno)));
    }
  }
}

SimHwmonSource::SimHwmonSource(fs::path dir, SimHwmonModel model, SimHwmon::Clock clock_ns) {
  if (dir.empty()) dir = owned_dir_ = make_private_sim_dir("hwmon");
  sim_ = std::make_unique<SimHwmon>(dir, std::move(model), clock_ns);
  reader_ = std::make_unique<HwmonSource>(sim_->device_dir(), sim_->clock());
}

SimHwmonSource::~SimHwmonSource() {
  reader_.reset();
  sim_.reset();
  remove_private_sim_dir(owned_dir_);
}

}  // namespace oaprof::power
