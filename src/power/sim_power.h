// The simulated RAPL tree: a powercap directory (package-0 with core and uncore subzones, and
// psys) whose energy_uj files a model advances: idle power per plane plus a GPU term scaled by
// the GPU's activity. It knows nothing of SimGpu: whoever runs the simulated GPU calls
// set_gpu_active() (or set_gpu_activity()) when kernels start and stop. Its numbers are a model,
// never a measurement.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "power/energy_source.h"
#include "power/powercap.h"

namespace oaprof::power {

// The GPU's energy from a per-event model outside this folder (the simulated GPU's,
// mmio/sim_energy.h): joules so far, nullopt when it has none. The simulated RAPL tree and hwmon
// then draw the GPU's share of each plane from it instead of from an activity.
using GpuEnergyJ = std::function<std::optional<double>()>;

// Pulls a GpuEnergyJ: the joules added since the previous pull, the first time since start().
class GpuEnergyFeed {
 public:
  explicit GpuEnergyFeed(GpuEnergyJ source) : source_(std::move(source)) {}
  bool active() const { return static_cast<bool>(source_); }
  // Called when the planes start at 0, at the instant they count from: the GPU's energy before
  // then is not theirs. A tree made after the GPU ran (the selftest's energy-model check makes
  // one) would otherwise put all of it into its first window.
  void start() { take_j(); }
  double take_j();

 private:
  GpuEnergyJ source_;
  double last_j_ = 0;
};

struct SimPowerModel {
  // Idle power of each plane; the package includes its cores and uncore, psys the whole platform.
  double package_idle_w = 2.0;
  double cores_idle_w = 0.6;
  double uncore_idle_w = 0.3;
  double psys_idle_w = 4.0;
  // Added to uncore (PP1), package and psys while the GPU is busy, times its activity (0..1).
  double gpu_active_w = 9.0;
  // When set, the GPU's energy instead: the uncore plane is the GPU (its idle power replaced by
  // the model's static power), the package its cores and the GPU, psys the rest and the package.
  GpuEnergyJ gpu_energy_j;
  std::uint64_t max_energy_range_uj = 262143328850;  // a typical client part's range
  // The files change only at multiples of this, as RAPL's counters do (about every 1 ms), each
  // time to the energy at that instant; 0 makes them follow the clock exactly.
  std::uint64_t update_interval_ns = 1'000'000;
  // A fault for `oaprof selftest --sim-fault rapl-stuck`: this plane's counter never moves.
  std::optional<Domain> stuck_plane;
};

class SimPowercap {
 public:
  using Clock = std::function<std::uint64_t()>;  // nanoseconds
  // Creates the tree in `class_dir` (made if absent) with every counter at 0.
  explicit SimPowercap(std::filesystem::path class_dir, SimPowerModel model = {},
                       Clock clock_ns = monotonic_ns);
  ~SimPowercap();
  SimPowercap(const SimPowercap&) = delete;
  SimPowercap& operator=(const SimPowercap&) = delete;

  // Energy up to now accrues at the old activity, from now on at the new. Throws
  // std::invalid_argument outside [0, 1].
  void set_gpu_activity(double fraction);
  void set_gpu_active(bool active) { set_gpu_activity(active ? 1.0 : 0.0); }
  double gpu_activity() const;

  // Brings the files up to the clock's now.
  void update();
  // update(), then reads the files through `reader` before any other update can interleave.
  EnergyReading read_through(PowercapSource& reader);

  // The model's power per plane at an activity.
  std::map<Domain, double> power_w(double activity) const;

  const std::filesystem::path& class_dir() const { return class_dir_; }
  const Clock& clock() const { return clock_ns_; }

 private:
  void advance_locked();
  void add_gpu_energy_locked(double gpu_j, double published_share);
  void write_locked();
  std::filesystem::path class_dir_;
  SimPowerModel model_;
  GpuEnergyFeed gpu_feed_;
  Clock clock_ns_;
  mutable std::mutex mu_;
  std::uint64_t last_ns_ = 0;
  double activity_ = 0;
  std::map<Domain, std::uint64_t> energy_nj_;     // nJ, so whole-µJ steps add up exactly
  std::map<Domain, std::uint64_t> published_nj_;  // at the latest update instant: the files
  bool files_stale_ = true;
  std::vector<int> energy_fds_;  // one per zone, in kSimZones order
};

// A fresh directory for a simulated tree, private to this process
// (<tmp>/oaprof-sim-<what>-<pid>-<n>), and its removal with everything in it (nothing for an
// empty path).
std::filesystem::path make_private_sim_dir(std::string_view what);
void remove_private_sim_dir(const std::filesystem::path& dir);

// Throws std::invalid_argument, naming the simulated source (`what`), for a GPU activity outside
// [0, 1].
void check_gpu_activity(double fraction, std::string_view what);

// A simulated energy source (sim, sim-hwmon): a model the simulated GPU drives through its
// activity, never a measurement.
class SimulatedEnergy : public EnergySource {
 public:
  // Energy up to now accrues at the old activity, from now on at the new. Throws
  // std::invalid_argument outside [0, 1].
  virtual void set_gpu_activity(double fraction) = 0;
  void set_gpu_active(bool active) { set_gpu_activity(active ? 1.0 : 0.0); }
};

// The "sim" backend: a SimPowercap read through the ordinary powercap reader, so the simulated
// path exercises the same code as the real one.
class SimEnergySource final : public SimulatedEnergy {
 public:
  // An empty `class_dir` makes a private temporary directory, removed with the source.
  explicit SimEnergySource(std::filesystem::path class_dir = {}, SimPowerModel model = {},
                           SimPowercap::Clock clock_ns = monotonic_ns);
  ~SimEnergySource() override;
  SimEnergySource(const SimEnergySource&) = delete;
  SimEnergySource& operator=(const SimEnergySource&) = delete;

  std::string_view name() const override { return "sim"; }
  std::vector<Domain> domains() const override { return reader_->domains(); }
  EnergyReading read() override;
  std::optional<std::uint64_t> wrap_range_uj() const override { return reader_->wrap_range_uj(); }
  void set_gpu_activity(double fraction) override { sim_->set_gpu_activity(fraction); }

  // Drive this from the simulated GPU's kernel-running signal.
  SimPowercap& simulator() { return *sim_; }

 private:
  std::filesystem::path owned_dir_;
  std::unique_ptr<SimPowercap> sim_;
  std::unique_ptr<PowercapSource> reader_;
};

}  // namespace oaprof::power
