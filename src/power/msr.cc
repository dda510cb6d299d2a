#include "power/msr.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>

#include "power/sysfs_file.h"
#include "power/timed_reading.h"
#include "power/unique_domains.h"

namespace oaprof::power {
namespace fs = std::filesystem;
namespace {

constexpr struct {
  std::uint32_t msr;
  Domain domain;
} kPlanes[] = {
    {kMsrPkgEnergyStatus, Domain::kPackage},   {kMsrPp0EnergyStatus, Domain::kCores},
    {kMsrPp1EnergyStatus, Domain::kUncore},    {kMsrDramEnergyStatus, Domain::kDram},
    {kMsrPlatformEnergyStatus, Domain::kPsys},
};

// nullopt when the register does not exist on this part (the msr driver answers EIO).
std::optional<std::uint64_t> read_msr(int fd, std::uint32_t msr, int* err) {
  std::uint64_t v = 0;
  if (::pread(fd, &v, sizeof(v), static_cast<off_t>(msr)) != static_cast<ssize_t>(sizeof(v))) {
    *err = errno;
    return std::nullopt;
  }
  return v;
}

int open_msr_device(const fs::path& dev) {
  const int fd = ::open(dev.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) return fd;
  const int err = errno;
  throw std::runtime_error(fmt::format(
      "msr: cannot open {}: {} ({})", dev.string(), std::strerror(err),
      err == ENOENT ? "load the msr module: sudo modprobe msr"
                    : "reading MSRs needs root (CAP_SYS_RAWIO): run oaprof with sudo or "
                      "through oaprofd"));
}

std::uint64_t read_power_unit(int fd, const fs::path& dev) {
  int err = 0;
  const auto unit = read_msr(fd, kMsrRaplPowerUnit, &err);
  if (unit) return *unit;
  throw std::runtime_error(fmt::format(
      "msr: reading MSR_RAPL_POWER_UNIT (0x606) from {} failed: {} (this CPU has no RAPL; "
      "a virtual machine or a non-Intel part)",
      dev.string(), std::strerror(err)));
}

}  // namespace

std::vector<int> first_cpu_of_each_package(const fs::path& cpu_dir) {
  std::map<std::uint64_t, int> first;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cpu_dir, ec)) {
    const std::string leaf = entry.path().filename().string();
    if (leaf.rfind("cpu", 0) != 0) continue;
    const auto cpu = detail::parse_u64(leaf.substr(3));
    if (!cpu) continue;  // cpufreq, cpuidle
    const auto line = detail::read_line(entry.path() / "topology" / "physical_package_id");
    const auto package = line ? detail::parse_u64(*line) : std::nullopt;
    if (!package) continue;  // an offline CPU has no topology
    auto [it, inserted] = first.emplace(*package, static_cast<int>(*cpu));
    if (!inserted) it->second = std::min(it->second, static_cast<int>(*cpu));
  }
  if (first.empty()) {
    throw std::runtime_error(fmt::format(
        "msr: no CPU topology under {} (cpuN/topology/physical_package_id): pass the sysfs root "
        "with --sysfs-root",
        cpu_dir.string()));
  }
  std::vector<int> cpus;
  for (const auto& [package, cpu] : first) cpus.push_back(cpu);
  return cpus;
}

MsrSource::MsrSource(const fs::path& dev_cpu_dir, const fs::path& cpu_dir,
                     const fs::path& cpuinfo) {
  try {
    bool model_known = false;
    for (int cpu : first_cpu_of_each_package(cpu_dir)) {
      const fs::path dev = dev_cpu_dir / std::to_string(cpu) / "msr";
      const int fd = open_msr_device(dev);
      fds_.push_back(fd);
      const std::uint64_t unit = read_power_unit(fd, dev);
      // Asked once the MSRs answer, so that a machine without them hears about the msr module
      // first; every package of a machine is the same model.
      if (!model_known) energy_unit_ = rapl_energy_unit_of(read_cpu_model(cpuinfo));
      model_known = true;
      add_planes(fd, rapl_energy_unit_uj(unit, energy_unit_));
    }
  } catch (...) {
    for (int fd : fds_) ::close(fd);
    throw;
  }
  if (planes_.empty()) {
    for (int fd : fds_) ::close(fd);
    throw std::runtime_error("msr: no RAPL energy status register answered; use --energy powercap");
  }
}

void MsrSource::add_planes(int fd, double unit_uj) {
  for (const auto& p : kPlanes) {
    int err = 0;
    const auto raw = read_msr(fd, p.msr, &err);
    if (!raw) continue;  // the part has no such plane
    planes_.push_back(Plane{fd, p.msr, p.domain, unit_uj, static_cast<std::uint32_t>(*raw)});
  }
}

MsrSource::~MsrSource() {
  for (int fd : fds_) ::close(fd);
}

std::vector<Domain> MsrSource::domains() const { return detail::unique_domains(planes_); }

std::optional<std::uint64_t> MsrSource::wrap_range_uj() const {
  double smallest = 0;
  for (const Plane& p : planes_) {
    const double range = 4294967296.0 * p.unit_uj;
    if (smallest == 0 || range < smallest) smallest = range;
  }
  return static_cast<std::uint64_t>(smallest);
}

EnergyReading MsrSource::read() {
  return timed_reading(monotonic_ns, [this] {
    EnergyReading r;
    std::map<Domain, long double> uj;
    for (Plane& p : planes_) {
      int err = 0;
      const auto raw = read_msr(p.fd, p.msr, &err);
      if (!raw) {
        throw std::runtime_error(
            fmt::format("msr: reading MSR {:#x} failed: {}", p.msr, std::strerror(err)));
      }
      const auto now = static_cast<std::uint32_t>(*raw);
      p.total_counts += static_cast<std::uint32_t>(now - p.last_raw);  // modulo 2^32: the wrap
      p.last_raw = now;
      uj[p.domain] += static_cast<long double>(p.total_counts) * p.unit_uj;
    }
    for (const auto& [domain, v] : uj) r.energy_uj[domain] = static_cast<std::uint64_t>(v);
    return r;
  });
}

}  // namespace oaprof::power
