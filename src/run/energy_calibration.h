// The energy model's calibration sweep: kernel_runner kernels with known work that each stress one
// event class (FP32, FP64, integer, low occupancy, send and L3, GTI and DRAM, dispatch) and an
// idle window, each measured over RAPL-resolvable windows with the OA counters. On the simulator
// it runs in-process (simulate_sweep: SimGpu and the simulated RAPL tree on a virtual clock, the
// launch repeated to cover each window as oaprof's replay does); on hardware `oaprof model fit
// --from` reads the JSON of a profiled run of it (samples_from_run).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "bench/known_work.h"
#include "mmio/sim_energy.h"
#include "model/fit.h"

namespace oaprof::run {

struct CalibrationKernel {
  std::string name;  // a catalogue name, or "idle" for a window without a kernel
  std::size_t global_size = 4096;
  bench::WorkParams params;
  std::string label() const;  // name and size, the key the fit leaves kernels out by
};

// The sweep the model is fitted from, and kernels of the catalogue held back to check it.
std::vector<CalibrationKernel> calibration_sweep();
std::vector<CalibrationKernel> held_back_kernels();

struct SimCalibrationOptions {
  std::string platform = "kblgt2";  // --sim-platform
  // The simulated GPU's energy model; nullopt: its platform's table (mmio/sim_energy.h).
  std::optional<mmio::SimEnergyModel> energy_model;
  int windows_per_kernel = 3;
  double min_window_s = 0.05;     // oaprof's --min-window
  double launch_gap_ns = 20'000;  // idle time between two launches of a window
};

// Measures every kernel of `sweep` on the simulator; the energy is the iGPU's by pkg-pp0-dram
// (no DRAM plane: P_PKG − P_PP0), as oaprof's rows give it.
std::vector<model::Sample> simulate_sweep(const std::vector<CalibrationKernel>& sweep,
                                          const SimCalibrationOptions& options);
model::ModelIdentity simulated_identity(const std::string& platform);

// The windows of a run's JSON (`oaprof --json`): each row with an energy figure, its counters
// and its window. Throws std::invalid_argument naming what is missing.
std::vector<model::Sample> samples_from_run(const nlohmann::json& run);
// The device, platform, driver and metric set the run names, and the iGPU formula its rows with
// an energy figure measured by ("igpu pkg-pp0-dram"); throws std::invalid_argument for a
// platform the model does not cover or rows of several formulas.
model::ModelIdentity identity_of_run(const nlohmann::json& run);

}  // namespace oaprof::run
