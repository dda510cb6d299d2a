// Private to src/run: what every selftest check is handed (the open device, the read-outs it may
// measure through, the metric set they are programmed with, the energy source) and the one way a
// check measures a window. The checks themselves are in selftest_checks.cc; selftest.cc lists
// them and runs them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/counter_source.h"
#include "gpu/device.h"
#include "mmio/oa_programmer.h"
#include "oa/delta.h"
#include "oa/platform.h"
#include "oa/report_format.h"
#include "power/energy_source.h"
#include "power/sim_hwmon.h"
#include "power/sim_power.h"
#include "run/selftest.h"
#include "run/selftest_known_work.h"

namespace oaprof::run::selftest {

// The register window with the value every register had before oaprof first wrote it, recorded
// from the device's opening on (gpu::DeviceOptions::wrap_mmio), for the restore check.
class RecordingMmio final : public mmio::Mmio {
 public:
  explicit RecordingMmio(std::unique_ptr<mmio::Mmio> inner);
  std::uint32_t read32(std::uint32_t offset) override;
  void write32(std::uint32_t offset, std::uint32_t value) override;
  std::string describe() const override;
  const std::map<std::uint32_t, std::uint32_t>& before() const { return before_; }

 private:
  std::unique_ptr<mmio::Mmio> inner_;
  std::map<std::uint32_t, std::uint32_t> before_;
};

struct Context {
  const SelftestOptions& options;
  gpu::Device& device;
  oa::Platform table;  // the PCI id's row, as the platform table has it
  oa::ReportFormat format = oa::ReportFormat::kA32u40_A4u32_B8_C8;
  mmio::OaConfig config = {};  // what every read-out is programmed with
  // The read-outs to measure through, and those asked for that cannot be, with the reason.
  std::vector<std::string> accesses = {};
  std::map<std::string, std::string> unusable = {};
  bool registers_mapped = false;  // oaprof may read the BAR (i915, not --access perf only)
  const RecordingMmio* recorder = nullptr;  // in front of the device's registers
  std::unique_ptr<power::EnergySource> energy = nullptr;
  std::string energy_missing = {};  // why there is none
  // The simulator's RAPL tree or card hwmon, driven by busy windows.
  power::SimulatedEnergy* sim_power = nullptr;
  // A simulated discrete card: the energy check reopens its hwmon with every counter just below
  // the driver's wrap, so that its windows run across it (selftest_energy.cc).
  std::optional<power::SimHwmonModel> sim_card = std::nullopt;
  int windows = 8;
  std::uint64_t window_ns = 100'000'000;
  // The DRM card directory where the driver reports act_freq (run/selftest_act_freq.h); for the
  // simulator its fake tree. Empty: not known (the gpu-ticks check then says so).
  std::filesystem::path card_sysfs = {};
  // The checks run before this one, in order: a check that stands on others' findings
  // (energy-model) is not judged where they failed.
  const std::vector<CheckResult>* earlier = nullptr;
  // kernel_runner's runs of known work, measured before the device was opened for the checks
  // (the counters checks read their rows: selftest_work.cc).
  const KnownWork* known_work = nullptr;
};

// What a check found; the frame adds its name, group, assumption and tolerance.
struct Outcome {
  Verdict verdict = Verdict::kSkip;
  std::string measurement;
  std::string reason;
  std::vector<Figure> figures;
};

Outcome pass(std::string measurement, std::vector<Figure> figures = {});
Outcome fail(std::string measurement, std::string reason, std::vector<Figure> figures = {});
Outcome skip(std::string reason);

// The counter deltas of one window between two snapshots, and the bounds CLOCK_MONOTONIC puts on
// the time between the two reports: each report was taken while its snapshot() call ran, so
// that time lies between (start of 2nd call - end of 1st) and (end of 2nd - start of 1st),
// however long the calls were delayed.
struct Window {
  oa::CounterDeltas deltas;
  std::uint64_t min_ns = 0;
  std::uint64_t max_ns = 0;
};

// A read-out started with the context's format and set; stopped (everything restored) on
// destruction.
class StartedSource {
 public:
  // `config` null: the context's set.
  StartedSource(Context& c, const std::string& access, const mmio::OaConfig* config = nullptr);
  ~StartedSource();
  StartedSource(const StartedSource&) = delete;
  StartedSource& operator=(const StartedSource&) = delete;
  gpu::CounterSource& operator*() { return *source_; }
  gpu::CounterSource* operator->() { return source_.get(); }

 private:
  std::unique_ptr<gpu::CounterSource> source_;
};

// Tells the simulated GPU (and its energy model) that a kernel runs or ended; real hardware's
// busy windows run under a GpuLoad (run/selftest_load.h) and ignore it.
void set_busy(Context& c, gpu::CounterSource& source, bool busy);
// Whether the busy windows tell the model: real hardware ignores what set_busy says, and so does
// the simulator whose load is kernel_runner alone (SimLoad::kProcessOnly).
bool model_told_of_load(const Context& c);
// Tells the simulated energy planes alone, as set_busy tells them (the energy check's windows).
void set_planes_busy(Context& c, bool busy);

// One window of `ns`: busy (the simulator's kernel and RAPL model running; real hardware is
// held awake by forcewake) or idle.
Window measure_window(Context& c, gpu::CounterSource& source, std::uint64_t ns, bool busy);

Outcome check_topology(Context& c);
Outcome check_timestamp_frequency(Context& c);
Outcome check_clocks(Context& c);
Outcome check_gpu_ticks(Context& c);
Outcome check_readouts_agree(Context& c);
Outcome check_noa_counting(Context& c);
Outcome check_flex_routing(Context& c);
Outcome check_restore(Context& c);
Outcome check_forcewake(Context& c);
Outcome check_energy(Context& c);

}  // namespace oaprof::run::selftest
