#include "power/sim_power.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>

#include "power/sysfs_file.h"

namespace oaprof::power {
namespace fs = std::filesystem;
namespace {

constexpr struct {
  const char* dir;
  const char* name;
  Domain domain;
} kSimZones[] = {
    {"intel-rapl:0", "package-0", Domain::kPackage},
    {"intel-rapl:0:0", "core", Domain::kCores},
    {"intel-rapl:0:1", "uncore", Domain::kUncore},
    {"intel-rapl:1", "psys", Domain::kPsys},
};

}  // namespace

double GpuEnergyFeed::take_j() {
  if (!source_) return 0;
  const std::optional<double> now = source_();
  if (!now) return 0;
  const double added = std::max(0.0, *now - last_j_);
  last_j_ = *now;
  return added;
}

SimPowercap::SimPowercap(fs::path class_dir, SimPowerModel model, Clock clock_ns)
    : class_dir_(std::move(class_dir)),
      model_(model),
      gpu_feed_(model_.gpu_energy_j),
      clock_ns_(std::move(clock_ns)) {
  if (model_.max_energy_range_uj == 0) {
    throw std::invalid_argument("simulated RAPL: max_energy_range_uj must be positive");
  }
  for (const auto& z : kSimZones) {
    const fs::path dir = class_dir_ / z.dir;
    fs::create_directories(dir);
    detail::write_atomically(dir / "name", std::string(z.name) + "\n");
    detail::write_atomically(dir / "max_energy_range_uj",
                             std::to_string(model_.max_energy_range_uj) + "\n");
    energy_nj_[z.domain] = 0;
    published_nj_[z.domain] = 0;
    const fs::path energy = dir / "energy_uj";
    const int fd = ::open(energy.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      for (int open_fd : energy_fds_) ::close(open_fd);
      throw std::runtime_error(fmt::format("simulated RAPL: cannot create {}: {}", energy.string(),
                                           std::strerror(errno)));
    }
    energy_fds_.push_back(fd);
  }
  std::lock_guard lock(mu_);
  last_ns_ = clock_ns_();
  gpu_feed_.start();
  write_locked();
}

std::map<Domain, double> SimPowercap::power_w(double activity) const {
  if (gpu_feed_.active()) {
    // The GPU's share comes from its energy model (add_gpu_energy_locked): none of it here.
    std::map<Domain, double> watts = {
        {Domain::kPackage, model_.cores_idle_w},
        {Domain::kCores, model_.cores_idle_w},
        {Domain::kUncore, 0.0},
        {Domain::kPsys, model_.psys_idle_w - model_.package_idle_w + model_.cores_idle_w}};
    if (model_.stuck_plane) watts[*model_.stuck_plane] = 0;
    return watts;
  }
  const double gpu = model_.gpu_active_w * activity;
  std::map<Domain, double> watts = {{Domain::kPackage, model_.package_idle_w + gpu},
                                    {Domain::kCores, model_.cores_idle_w},
                                    {Domain::kUncore, model_.uncore_idle_w + gpu},
                                    {Domain::kPsys, model_.psys_idle_w + gpu}};
  if (model_.stuck_plane) watts[*model_.stuck_plane] = 0;
  return watts;
}

void check_gpu_activity(double fraction, std::string_view what) {
  if (!(fraction >= 0.0 && fraction <= 1.0)) {
    throw std::invalid_argument(
        fmt::format("{}: GPU activity {} is outside [0, 1]", what, fraction));
  }
}

void SimPowercap::set_gpu_activity(double fraction) {
  check_gpu_activity(fraction, "simulated RAPL");
  std::lock_guard lock(mu_);
  // Energy so far accrues at the old activity. The files are brought up to date when they are
  // read (read_through, update), not here: the profiler changes the activity at every kernel
  // boundary, and four file writes there would be the simulator's cost in every measurement.
  advance_locked();
  activity_ = fraction;
}

SimPowercap::~SimPowercap() {
  for (int fd : energy_fds_) ::close(fd);
}

EnergyReading SimPowercap::read_through(PowercapSource& reader) {
  std::lock_guard lock(mu_);
  advance_locked();
  write_locked();
  EnergyReading r = reader.read();
  // The files hold the energy up to the instant they were brought to: the reading's time is
  // that instant, not the reader's later look at the clock, so that a reader descheduled in
  // between (a loaded machine) does not stretch or shrink the window by its wait.
  r.time_ns = last_ns_;
  return r;
}

double SimPowercap::gpu_activity() const {
  std::lock_guard lock(mu_);
  return activity_;
}

void SimPowercap::update() {
  std::lock_guard lock(mu_);
  advance_locked();
  write_locked();
}

void SimPowercap::advance_locked() {
  const std::uint64_t now = clock_ns_();
  if (now <= last_ns_) return;  // a clock that did not advance adds nothing
  const auto elapsed_ns = static_cast<long double>(now - last_ns_);
  // The latest instant at which the hardware would have updated its counters: the activity has
  // been the same since last_ns_, so the energy there follows from the same power.
  const std::uint64_t interval = model_.update_interval_ns;
  const std::uint64_t update_ns = interval == 0 ? now : now / interval * interval;
  for (const auto& [domain, watts] : power_w(activity_)) {
    // W × ns = nJ.
    if (update_ns > last_ns_) {
      const auto to_update = static_cast<long double>(update_ns - last_ns_);
      published_nj_[domain] =
          energy_nj_[domain] + static_cast<std::uint64_t>(std::llround(watts * to_update));
      files_stale_ = true;
    }
    energy_nj_[domain] += static_cast<std::uint64_t>(std::llround(watts * elapsed_ns));
  }
  // The GPU's energy since the last advance, spread evenly over the interval like the power.
  if (gpu_feed_.active()) {
    const long double to_update = update_ns > last_ns_ ? update_ns - last_ns_ : 0;
    add_gpu_energy_locked(gpu_feed_.take_j(), static_cast<double>(to_update / elapsed_ns));
  }
  last_ns_ = now;
}

void SimPowercap::add_gpu_energy_locked(double gpu_j, double published_share) {
  const auto nj = static_cast<std::uint64_t>(std::llround(gpu_j * 1e9));
  for (Domain d : {Domain::kUncore, Domain::kPackage, Domain::kPsys}) {
    if (model_.stuck_plane == d) continue;
    // published_nj_ was just set to the energy at the update instant without the GPU's share.
    published_nj_[d] +=
        static_cast<std::uint64_t>(std::llround(static_cast<double>(nj) * published_share));
    energy_nj_[d] += nj;
  }
}

void SimPowercap::write_locked() {
  // Between update instants the files do not change: nothing to write.
  if (!files_stale_) return;
  files_stale_ = false;
  // The counter as hardware holds it: modulo the range, so readers see wraps. Fixed-width text
  // rewritten in place: no rename (which ext4 turns into a flush), and never a shorter number
  // that would leave stale digits behind.
  for (std::size_t i = 0; i < std::size(kSimZones); ++i) {
    const std::uint64_t wrapped =
        published_nj_[kSimZones[i].domain] / 1000 % model_.max_energy_range_uj;
    const std::string text = fmt::format("{:020}\n", wrapped);
    if (::pwrite(energy_fds_[i], text.data(), text.size(), 0) !=
        static_cast<ssize_t>(text.size())) {
      throw std::runtime_error(fmt::format("simulated RAPL: writing {}/energy_uj failed: {}",
                                           kSimZones[i].dir, std::strerror(errno)));
    }
  }
}

fs::path make_private_sim_dir(std::string_view what) {
  static std::atomic<int> serial{0};
  const fs::path dir = fs::temp_directory_path() /
                       fmt::format("oaprof-sim-{}-{}-{}", what, ::getpid(), serial.fetch_add(1));
  fs::remove_all(dir);
  return dir;
}

void remove_private_sim_dir(const fs::path& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

SimEnergySource::SimEnergySource(fs::path class_dir, SimPowerModel model,
                                 SimPowercap::Clock clock_ns) {
  if (class_dir.empty()) class_dir = owned_dir_ = make_private_sim_dir("rapl");
  sim_ = std::make_unique<SimPowercap>(class_dir, model, clock_ns);
  reader_ = std::make_unique<PowercapSource>(class_dir, sim_->clock());
}

SimEnergySource::~SimEnergySource() {
  reader_.reset();
  sim_.reset();
  remove_private_sim_dir(owned_dir_);
}

EnergyReading SimEnergySource::read() { return sim_->read_through(*reader_); }

}  // namespace oaprof::power
