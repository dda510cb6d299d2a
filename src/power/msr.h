// RAPL through the model-specific registers (/dev/cpu/N/msr, the msr module): the energy unit from
// MSR_RAPL_POWER_UNIT, read by the CPU model's rule (rapl_unit.h), the PKG/PP0/PP1/DRAM/PSYS
// status registers of one CPU of each package, 32-bit counters unwrapped into 64 bits. The /dev,
// sysfs and proc roots are parameters, so tests use sparse regular files with the register values
// at their offsets and a cpuinfo of the part they play.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "power/energy_source.h"
#include "power/rapl_unit.h"

namespace oaprof::power {

inline constexpr std::uint32_t kMsrRaplPowerUnit = 0x606;
inline constexpr std::uint32_t kMsrPkgEnergyStatus = 0x611;
inline constexpr std::uint32_t kMsrDramEnergyStatus = 0x619;
inline constexpr std::uint32_t kMsrPp0EnergyStatus = 0x639;
inline constexpr std::uint32_t kMsrPp1EnergyStatus = 0x641;
inline constexpr std::uint32_t kMsrPlatformEnergyStatus = 0x64D;

// The lowest-numbered CPU of each physical package, from
// <cpu_dir>/cpuN/topology/physical_package_id (cpu_dir normally /sys/devices/system/cpu).
std::vector<int> first_cpu_of_each_package(const std::filesystem::path& cpu_dir);

class MsrSource final : public EnergySource {
 public:
  // `dev_cpu_dir` normally /dev/cpu, `cpu_dir` normally /sys/devices/system/cpu, `cpuinfo`
  // normally /proc/cpuinfo (the CPU model decides what the energy unit means). Throws
  // std::runtime_error when the msr device is absent or unreadable (with the fix), the CPU model
  // cannot be read or no RAPL register answers.
  MsrSource(const std::filesystem::path& dev_cpu_dir, const std::filesystem::path& cpu_dir,
            const std::filesystem::path& cpuinfo);
  ~MsrSource() override;
  MsrSource(const MsrSource&) = delete;
  MsrSource& operator=(const MsrSource&) = delete;

  std::string_view name() const override { return "msr"; }
  std::vector<Domain> domains() const override;
  EnergyReading read() override;
  std::optional<std::uint64_t> wrap_range_uj() const override;
  // The rule the energy unit was read by (the CPU model's).
  RaplEnergyUnit energy_unit() const { return energy_unit_; }

 private:
  void add_planes(int fd, double unit_uj);

  struct Plane {
    int fd = -1;  // shared by the planes of one package; owned by fds_
    std::uint32_t msr = 0;
    Domain domain;
    double unit_uj = 0;
    std::uint32_t last_raw = 0;
    std::uint64_t total_counts = 0;
  };
  std::vector<int> fds_;
  std::vector<Plane> planes_;
  RaplEnergyUnit energy_unit_ = RaplEnergyUnit::kCore;
};

}  // namespace oaprof::power
