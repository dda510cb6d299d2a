// RAPL through the perf "power" PMU: one system-wide counting event per plane on one CPU of each
// package (the PMU's cpumask), with the event codes, scale and unit read from sysfs. The kernel
// unwraps the 32-bit hardware counters, so readings are 64-bit already. The perf_event_open call
// sits behind PerfEventSyscalls so tests cover everything up to the system call.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "power/energy_source.h"

namespace oaprof::power {

// What sysfs says about the power PMU (normally /sys/bus/event_source/devices/power).
struct PerfPowerPmu {
  struct Event {
    Domain domain;
    std::string name;          // "energy-pkg"
    std::uint64_t config = 0;  // from "event=0x02"
    double scale_j = 0;        // joules per count (2^-32 on current parts)
  };
  std::uint32_t type = 0;
  std::vector<int> cpus;  // one CPU of each package
  std::vector<Event> events;
};

// Throws std::runtime_error saying which file is missing or malformed and what to do.
PerfPowerPmu read_perf_power_pmu(const std::filesystem::path& pmu_dir);

// "0", "0,18", "0-1,4": the CPU lists of sysfs. Throws std::runtime_error on anything else.
std::vector<int> parse_cpu_list(const std::string& text);

class PerfEventSyscalls {
 public:
  virtual ~PerfEventSyscalls() = default;
  // A system-wide (pid -1) counting event on `cpu`; returns a descriptor or throws
  // std::runtime_error with errno's reason and the fix (perf_event_paranoid, CAP_PERFMON).
  virtual int open(std::uint32_t type, std::uint64_t config, int cpu) = 0;
  // The event's count since it was opened.
  virtual std::uint64_t read(int fd) = 0;
  virtual void close(int fd) = 0;
};

// The real system calls.
std::unique_ptr<PerfEventSyscalls> make_perf_event_syscalls();

class PerfPowerSource final : public EnergySource {
 public:
  // Opens every event of `pmu_dir` on each CPU of the cpumask. Throws std::runtime_error when the
  // PMU is absent or an event cannot be opened.
  PerfPowerSource(const std::filesystem::path& pmu_dir,
                  std::unique_ptr<PerfEventSyscalls> syscalls);
  ~PerfPowerSource() override;
  PerfPowerSource(const PerfPowerSource&) = delete;
  PerfPowerSource& operator=(const PerfPowerSource&) = delete;

  std::string_view name() const override { return "perf"; }
  std::vector<Domain> domains() const override;
  EnergyReading read() override;

 private:
  struct Counter {
    int fd = -1;
    Domain domain;
    double scale_uj = 0;
  };
  std::unique_ptr<PerfEventSyscalls> syscalls_;
  std::vector<Counter> counters_;
};

}  // namespace oaprof::power
