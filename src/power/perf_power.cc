#include "power/perf_power.h"

#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "power/sysfs_file.h"
#include "power/timed_reading.h"
#include "power/unique_domains.h"

namespace oaprof::power {
namespace fs = std::filesystem;
namespace {

constexpr struct {
  const char* event;
  Domain domain;
} kPerfEvents[] = {
    {"energy-pkg", Domain::kPackage}, {"energy-cores", Domain::kCores},
    {"energy-gpu", Domain::kUncore},  {"energy-ram", Domain::kDram},
    {"energy-psys", Domain::kPsys},
};

std::string need_line(const fs::path& file, const char* what) {
  auto line = detail::read_line(file);
  if (!line) {
    throw std::runtime_error(fmt::format(
        "perf power PMU: cannot read {} ({}): the kernel's RAPL perf driver is missing or too "
        "old; use --energy powercap or msr",
        file.string(), what));
  }
  return *line;
}

// "event=0x02" (other terms, should a kernel add them, are not ours to program).
std::uint64_t parse_event_config(const fs::path& file, const std::string& text) {
  const std::string key = "event=";
  const auto at = text.find(key);
  std::optional<std::uint64_t> v;
  if (at != std::string::npos) {
    const std::string rest = text.substr(at + key.size());
    v = detail::parse_u64(rest.substr(0, rest.find(',')));
  }
  if (!v) {
    throw std::runtime_error(
        fmt::format("perf power PMU: {} holds '{}', not 'event=0xNN'", file.string(), text));
  }
  return *v;
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  auto bad = [&] {
    return std::runtime_error(fmt::format("'{}' is not a CPU list like 0 or 0,18 or 0-3", text));
  };
  std::string trimmed = text;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) trimmed.pop_back();
  if (trimmed.empty()) throw bad();
  std::size_t start = 0;
  while (start <= trimmed.size()) {
    const std::size_t comma = std::min(trimmed.find(',', start), trimmed.size());
    const std::string item = trimmed.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    const auto lo = detail::parse_u64(item.substr(0, dash));
    const auto hi = dash == std::string::npos ? lo : detail::parse_u64(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi > 1u << 20) throw bad();
    for (std::uint64_t c = *lo; c <= *hi; ++c) cpus.push_back(static_cast<int>(c));
    start = comma + 1;
  }
  return cpus;
}

PerfPowerPmu read_perf_power_pmu(const fs::path& pmu_dir) {
  if (!fs::exists(pmu_dir)) {
    throw std::runtime_error(fmt::format(
        "perf power PMU: {} does not exist: the kernel exposes no RAPL perf events (a virtual "
        "machine, a non-Intel CPU, or a kernel without the RAPL perf driver); use --energy "
        "powercap or msr",
        pmu_dir.string()));
  }
  PerfPowerPmu pmu;
  const std::string type_text = need_line(pmu_dir / "type", "the PMU's type");
  const auto type = detail::parse_u64(type_text);
  if (!type || *type > UINT32_MAX) {
    throw std::runtime_error(fmt::format("perf power PMU: {} holds '{}', not a PMU type",
                                         (pmu_dir / "type").string(), type_text));
  }
  pmu.type = static_cast<std::uint32_t>(*type);
  pmu.cpus = parse_cpu_list(need_line(pmu_dir / "cpumask", "one CPU of each package"));
  for (const auto& e : kPerfEvents) {
    const fs::path file = pmu_dir / "events" / e.event;
    const auto text = detail::read_line(file);
    if (!text) continue;  // the part has no such plane
    PerfPowerPmu::Event ev{e.domain, e.event, parse_event_config(file, *text)};
    const fs::path scale_file = pmu_dir / "events" / (std::string(e.event) + ".scale");
    const std::string scale_text = need_line(scale_file, "joules per count");
    char* end = nullptr;
    ev.scale_j = std::strtod(scale_text.c_str(), &end);
    if (end == scale_text.c_str() || !(ev.scale_j > 0) || !std::isfinite(ev.scale_j)) {
      throw std::runtime_error(fmt::format("perf power PMU: {} holds '{}', not a positive scale",
                                           scale_file.string(), scale_text));
    }
    const fs::path unit_file = pmu_dir / "events" / (std::string(e.event) + ".unit");
    const std::string unit = need_line(unit_file, "the unit");
    if (unit != "Joules") {
      throw std::runtime_error(
          fmt::format("perf power PMU: {} says the unit is '{}'; oaprof knows only Joules",
                      unit_file.string(), unit));
    }
    pmu.events.push_back(ev);
  }
  if (pmu.events.empty()) {
    throw std::runtime_error(
        fmt::format("perf power PMU: {} lists no energy-* event; use --energy powercap or msr",
                    (pmu_dir / "events").string()));
  }
  return pmu;
}

namespace {

class RealPerfEventSyscalls final : public PerfEventSyscalls {
 public:
  int open(std::uint32_t type, std::uint64_t config, int cpu) override {
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    attr.type = type;
    attr.config = config;
    const long fd = ::syscall(SYS_perf_event_open, &attr, -1, cpu, -1, 0UL);
    if (fd < 0) {
      const int err = errno;
      throw std::runtime_error(fmt::format(
          "perf_event_open(power type {}, config {:#x}, cpu {}) failed: {}{}", type, config, cpu,
          std::strerror(err),
          err == EACCES || err == EPERM ? " (system-wide perf events need root or CAP_PERFMON, or "
                                          "/proc/sys/kernel/perf_event_paranoid at 0 or below)"
                                        : ""));
    }
    return static_cast<int>(fd);
  }
  std::uint64_t read(int fd) override {
    std::uint64_t v = 0;
    if (::read(fd, &v, sizeof(v)) != static_cast<ssize_t>(sizeof(v))) {
      throw std::runtime_error(
          fmt::format("reading a perf power event failed: {}", std::strerror(errno)));
    }
    return v;
  }
  void close(int fd) override { ::close(fd); }
};

}  // namespace

std::unique_ptr<PerfEventSyscalls> make_perf_event_syscalls() {
  return std::make_unique<RealPerfEventSyscalls>();
}

PerfPowerSource::PerfPowerSource(const fs::path& pmu_dir,
                                 std::unique_ptr<PerfEventSyscalls> syscalls)
    : syscalls_(std::move(syscalls)) {
  const PerfPowerPmu pmu = read_perf_power_pmu(pmu_dir);
  try {
    for (int cpu : pmu.cpus) {
      for (const auto& ev : pmu.events) {
        Counter c{-1, ev.domain, ev.scale_j * 1e6};
        c.fd = syscalls_->open(pmu.type, ev.config, cpu);
        counters_.push_back(c);
      }
    }
  } catch (...) {
    for (const Counter& c : counters_) syscalls_->close(c.fd);
    throw;
  }
}

PerfPowerSource::~PerfPowerSource() {
  for (const Counter& c : counters_) syscalls_->close(c.fd);
}

std::vector<Domain> PerfPowerSource::domains() const { return detail::unique_domains(counters_); }

EnergyReading PerfPowerSource::read() {
  return timed_reading(monotonic_ns, [this] {
    EnergyReading r;
    std::map<Domain, long double> uj;
    for (const Counter& c : counters_) {
      uj[c.domain] += static_cast<long double>(syscalls_->read(c.fd)) * c.scale_uj;
    }
    for (const auto& [domain, v] : uj) r.energy_uj[domain] = static_cast<std::uint64_t>(v);
    return r;
  });
}

}  // namespace oaprof::power
