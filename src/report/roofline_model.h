// What the roofline report draws, computed once from the validated inputs (run_input.h): the
// ceilings (theoretical from the peaks, measured from kernel_runner runs), each kernel as a point
// (exact for kernel_runner's kernels, an estimate from counters for any other kernel, labelled as
// such), the energy figures, the sweeps and the per-kernel table with its validity flags. The
// renderers (roofline_svg.h) only lay these out.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "report/run_input.h"

namespace oaprof::report {

// Theoretical peaks of one device (bench::compute_peaks' figures, which the caller supplies:
// this layer does not depend on the launch layer).
struct TheoreticalPeaks {
  std::string device;  // whose peaks, for the legend
  double add_sp_gflops = 0;
  double mad_sp_gflops = 0;
  double add_dp_gflops = 0;  // 0: no FP64 hardware
  double mad_dp_gflops = 0;
  double l3_gbps = 0;
};

struct Ceiling {
  std::string label;   // "peak MAD SP", "measured mad_vect4"
  std::string device;  // whose
  double value = 0;    // GFLOP/s for a compute ceiling, GB/s for a memory one
  bool compute = true;
  bool measured = false;  // from a kernel_runner run, not a formula
};

struct RooflinePoint {
  std::string kernel;
  double intensity = 0;   // FLOP per byte
  double gflops = 0;      // GFLOP/s
  bool estimate = false;  // from counters (hollow marker)
  bool simulated = false;
  std::string detail;  // the tooltip: how the figures were obtained, counters named
  std::string flags;
  bool modelled_energy = false;  // the power roofline's point of a kernel without measured power
};

struct SweepPoint {
  double x = 0;
  double rate = 0;
  bool fills_hw_threads = false;
};

struct Sweep {
  std::string kernel;
  std::string axis;  // "work-groups" or "work-items"
  std::string unit;  // GFLOP/s, GB/s
  std::vector<SweepPoint> points;
};

struct KernelRow {
  std::string kernel;
  std::string source;
  std::size_t launches = 0;
  double time_ns = 0;  // summed kernel time
  std::optional<double> gflops;
  std::optional<double> gbps;
  bool estimate = false;
  std::optional<double> power_w;  // mean iGPU power over the launches that have one
  // No launch had a measured window: power_w is the energy model's (energy_model_j over the
  // launches' GPU time), not a measurement.
  bool power_modelled = false;
  std::optional<double> energy_per_launch_j;
  std::optional<double> gflops_per_w;
  std::string flags;  // the union of the rows' flags; empty: clean
  bool simulated = false;
};

struct RunMeta {
  std::string source;
  std::string kind;  // "oaprof" or "kernel_runner"
  std::string device;
  bool simulated = false;
  std::vector<std::pair<std::string, std::string>> fields;
};

struct RooflineModel {
  std::vector<Ceiling> ceilings;
  std::vector<RooflinePoint> points;
  // The power roofline: GFLOP/s per watt against intensity, with the best efficiencies the inputs
  // show (GFLOP/s per W, GB/s per W) as its ceilings; kernels that have energy as points.
  std::vector<Ceiling> power_ceilings;
  std::vector<RooflinePoint> power_points;
  std::vector<Sweep> sweeps;
  std::vector<KernelRow> kernels;
  std::vector<RunMeta> runs;
  bool any_energy = false;
  bool any_modelled_energy = false;
  bool any_simulated = false;
};

// `kernels`: only kernels whose name it matches (search, not full match); null: all.
RooflineModel build_roofline_model(const std::vector<RunInput>& inputs,
                                   const std::vector<TheoreticalPeaks>& peaks,
                                   const std::regex* kernels);

}  // namespace oaprof::report
