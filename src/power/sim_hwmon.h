// A simulated discrete card's hwmon: a sysfs tree (<root>/bus/pci/devices/<BDF>/hwmon/hwmon0) laid
// out as i915 or xe registers it (power/hwmon.h), whose energy*_input files a model advances: idle
// power plus a GPU term scaled by the GPU's activity. The simulator uses it for a discrete
// simulated platform, as it uses the simulated RAPL tree (sim_power.h) for an integrated one, and
// reads it through the real hwmon reader. Its numbers are a model, never a measurement.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "power/hwmon.h"
#include "power/sim_power.h"

namespace oaprof::power {

struct SimHwmonModel {
  // Whose layout: "xe" (energy1_input "card", energy2_input "pkg") or "i915" (one unlabelled
  // energy1_input, the GPU package).
  std::string driver = "xe";
  std::string pci_address = "0000:03:00.0";
  double package_idle_w = 8.0;  // the GPU package
  double card_idle_w = 20.0;    // the board: package, memory, regulators, fans
  // Added to package and board while the GPU is busy, times its activity (0..1).
  double gpu_active_w = 80.0;
  // When set, the GPU's energy instead (sim_power.h): the package is the GPU (its idle power
  // replaced by the model's static power), the board the rest of its idle power and the GPU.
  GpuEnergyJ gpu_energy_j;
  // Every counter's value at creation, in µJ: the driver's running sum after a long uptime. The
  // files print it as the driver's signed `long` does, so a start just below 2^63 crosses into
  // negative numbers as a real one would after 292 years at 1000 W (hwmon.h): what `oaprof
  // selftest`'s energy check runs across on a simulated card.
  std::uint64_t start_uj = 0;
  // A fault for `oaprof selftest --sim-fault hwmon-stuck`: this channel's counter never moves.
  std::optional<Domain> stuck_domain;
};

class SimHwmon {
 public:
  using Clock = std::function<std::uint64_t()>;  // nanoseconds
  // Creates the tree under `sysfs_root` (made if absent) with every counter at 0. Throws
  // std::invalid_argument for a driver other than i915 or xe.
  explicit SimHwmon(std::filesystem::path sysfs_root, SimHwmonModel model = {},
                    Clock clock_ns = monotonic_ns);
  ~SimHwmon();
  SimHwmon(const SimHwmon&) = delete;
  SimHwmon& operator=(const SimHwmon&) = delete;

  // Throws std::invalid_argument outside [0, 1].
  void set_gpu_activity(double fraction);
  // Brings the files up to the clock's now, then reads them through `reader`.
  EnergyReading read_through(HwmonSource& reader);

  // The model's power per domain at an activity.
  std::map<Domain, double> power_w(double activity) const;
  std::filesystem::path device_dir() const;
  const Clock& clock() const { return clock_ns_; }

 private:
  void advance_locked();
  void write_locked();
  std::filesystem::path root_;
  SimHwmonModel model_;
  GpuEnergyFeed gpu_feed_{model_.gpu_energy_j};
  Clock clock_ns_;
  std::mutex mu_;
  std::uint64_t last_ns_ = 0;
  double activity_ = 0;
  std::map<Domain, std::uint64_t> energy_nj_;
  std::vector<std::pair<Domain, int>> files_;  // each channel's energy*_input, open for writing
};

// The "sim-hwmon" backend: a SimHwmon read through the ordinary hwmon reader.
class SimHwmonSource final : public SimulatedEnergy {
 public:
  // An empty `dir` makes a private temporary directory, removed with the source.
  explicit SimHwmonSource(std::filesystem::path dir = {}, SimHwmonModel model = {},
                          SimHwmon::Clock clock_ns = monotonic_ns);
  ~SimHwmonSource() override;
  SimHwmonSource(const SimHwmonSource&) = delete;
  SimHwmonSource& operator=(const SimHwmonSource&) = delete;

  std::string_view name() const override { return "sim-hwmon"; }
  std::vector<Domain> domains() const override { return reader_->domains(); }
  EnergyReading read() override { return sim_->read_through(*reader_); }
  void set_gpu_activity(double fraction) override { sim_->set_gpu_activity(fraction); }

  SimHwmon& simulator() { return *sim_; }
  const HwmonSource& reader() const { return *reader_; }

 private:
  std::filesystem::path owned_dir_;
  std::unique_ptr<SimHwmon> sim_;
  std::unique_ptr<HwmonSource> reader_;
};

}  // namespace oaprof::power
