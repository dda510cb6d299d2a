#include "run/energy_calibration.h"

#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "mmio/counter_registers.h"
#include "mmio/registers.h"
#include "mmio/sim_gpu.h"
#include "oa/energy_events.h"
#include "oa/report_format.h"
#include "power/sim_power.h"

namespace oaprof::run {
namespace {

using json = nlohmann::json;
constexpr std::uint32_t kEnableSelect5 =
    (5u << mmio::reg::kOaControlSelectShift) | mmio::reg::kOaControlEnable;

// The simulated part, its OA unit counting the default format, and its RAPL tree on one clock.
struct SimRig {
  SimRig(const SimCalibrationOptions& o) {
    mmio::SimConfig c;
    c.platform = mmio::sim_platform_by_name(o.platform);
    c.energy_model = o.energy_model;
    gpu.emplace(c, clock);
    if (!gpu->energy_model()) {
      throw std::invalid_argument(fmt::format(
          "--sim-platform {}: the simulator has no per-event energy model for it (kblgt2, tglgt2)",
          o.platform));
    }
    gpu->write32(mmio::reg::oa_block(c.platform.gen).oa_control, kEnableSelect5);
    gpu->write32(mmio::reg::kSqCnt1, mmio::reg::kSqCnt1PmonEnable);  // Gen12 counts only with it
    power::SimPowerModel power;
    power.gpu_energy_j = [this] { return gpu->gpu_energy_j(); };
    energy.emplace(std::filesystem::path(), power, [this] { return clock.now_ns(); });
  }
  oa::Report read() {
    const oa::Generation gen = gpu->config().platform.gen;
    const oa::ReportFormat format = oa::default_format(gen);
    const oa::Report r =
        mmio::read_counter_registers(mmio::reg::oa_block(gen), format, 0,
                                     [this](std::uint32_t off) { return gpu->read32(off); });
    return oa::decode(format, oa::encode(format, r).bytes);
  }
  mmio::ManualClock clock;
  std::optional<mmio::SimGpu> gpu;
  std::optional<power::SimEnergySource> energy;
};

double igpu_joules(const power::EnergyReading& a, const power::EnergyReading& b) {
  auto uj = [&](power::Domain d) {
    return static_cast<double>(b.energy_uj.at(d) - a.energy_uj.at(d));
  };
  return (uj(power::Domain::kPackage) - uj(power::Domain::kCores)) / 1e6;
}

// One window: the kernel launched back to back (a gap between launches) until the window is
// covered, or the idle GPU for the window.
model::Sample measure_window(SimRig& rig, const CalibrationKernel& k,
                             const SimCalibrationOptions& o) {
  const auto window_ns = static_cast<std::uint64_t>(o.min_window_s * 1e9);
  const std::optional<oa::KernelWork> work =
      k.name == "idle" ? std::nullopt : bench::known_work(k.name, k.global_size, k.params);
  if (k.name != "idle" && !work) {
    throw std::invalid_argument(fmt::format("calibration kernel {} has no known work", k.name));
  }
  const power::EnergyReading e0 = rig.energy->read();
  const oa::Report r0 = rig.read();
  const std::uint64_t start = rig.clock.now_ns();
  if (!work) rig.clock.advance_ns(window_ns);
  while (work && rig.clock.now_ns() - start < window_ns) {
    const mmio::SimConfig& c = rig.gpu->config();
    const double ns =
        mmio::sim_kernel_events(*work, c.platform.gen, rig.gpu->eus(), c.freq_mhz).duration_ns;
    rig.gpu->set_kernel_running(true, &*work);
    rig.clock.advance_ns(static_cast<std::uint64_t>(std::ceil(ns)));
    rig.gpu->set_kernel_running(false);
    rig.clock.advance_ns(static_cast<std::uint64_t>(o.launch_gap_ns));
  }
  const oa::Report r1 = rig.read();
  const power::EnergyReading e1 = rig.energy->read();
  model::Sample s;
  s.kernel = k.label();
  s.deltas = oa::compute_deltas(r0, r1);
  s.window_s = static_cast<double>(e1.time_ns - e0.time_ns) / 1e9;
  s.energy_j = igpu_joules(e0, e1);
  s.freq_mhz = rig.gpu->config().freq_mhz;
  return s;
}

std::size_t column_of(const std::map<std::string, std::size_t>& column, const std::string& name) {
  const auto it = column.find(name);
  if (it == column.end())
    throw std::invalid_argument(fmt::format("the run has no {} column", name));
  return it->second;
}

double row_number(const json& row, const std::map<std::string, std::size_t>& column,
                  const std::string& name) {
  const json& v = row.at(column_of(column, name));
  return v.is_number() ? v.get<double>() : 0.0;
}

// A counter cell: a whole number of events, 0 to 2^64 - 1, or null (a counter the row lacks: 0).
// A run's JSON is the user's file: anything else is refused, naming the row and the column.
std::uint64_t counter_cell(const json& row, std::size_t index,
                           const std::map<std::string, std::size_t>& column,
                           const std::string& name) {
  const json& v = row.at(column_of(column, name));
  if (v.is_null()) return 0;
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<std::uint64_t>();
  // 2^64 as a double: every double below it converts exactly to a std::uint64_t.
  constexpr double kLimit = 18446744073709551616.0;
  if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() < kLimit) {
    return static_cast<std::uint64_t>(v.get<double>());
  }
  throw std::invalid_argument(
      fmt::format("launch {}: {} is {}, not a count of events", index, name, v.dump()));
}

// The row's energy figures must be finite (a number past a double's range reads as infinity).
double finite_cell(const json& row, std::size_t index,
                   const std::map<std::string, std::size_t>& column, const std::string& name) {
  const double v = row_number(row, column, name);
  if (!std::isfinite(v))
    throw std::invalid_argument(fmt::format("launch {}: {} is not a finite number", index, name));
  return v;
}

}  // namespace

std::string CalibrationKernel::label() const {
  if (name == "idle") return name;
  const std::string at = fmt::format("{}@{}", name, global_size);
  return params.iterations > 0 ? fmt::format("{}x{}", at, params.iterations) : at;
}

std::vector<CalibrationKernel> calibration_sweep() {
  return {
      {"add_scalar", 4096, {}},         // FP32, every EU
      {"add_dp_scalar", 4096, {}},      // FP64: FPU0 alone
      {"mul_int_vect4", 4096, {}},      // integer ALU
      {"add_scalar", 112, {}},          // one EU busy: busy cycles apart from EU cycles
      {"load_store_scalar", 4096, {}},  // sends, L3 and GTI (16 MiB: beyond L3)
      {"load_store_vect16", 4096, {}},  // the same bytes in fewer sends
      {"load_store_vect4", 4096, {}},
      // L3 hits: small arrays chased many times. Every class has two kernels, so the fit left
      // without one still sees that class (an honest leave-one-kernel-out error).
      {"pchase_bw", 4096, {.iterations = 64, .size_bytes = 256 << 10, .outer = {}}},
      {"pchase_bw", 1024, {.iterations = 256, .size_bytes = 128 << 10, .outer = {}}},
      {"empty", 1 << 20, {}},  // dispatch alone
      {"empty", 1 << 18, {}},
      {"idle", 0, {}},  // static power
  };
}

std::vector<CalibrationKernel> held_back_kernels() {
  return {
      {"mad_vect8", 4096, {}}, {"sub_dp_vect2", 4096, {}},  {"load_store_dp_vect4", 4096, {}},
      {"pchase_bw", 4096, {}}, {"div_int_scalar", 448, {}},
  };
}

std::vector<model::Sample> simulate_sweep(const std::vector<CalibrationKernel>& sweep,
                                          const SimCalibrationOptions& options) {
  SimRig rig(options);
  std::vector<model::Sample> out;
  for (const CalibrationKernel& k : sweep) {
    for (int w = 0; w < options.windows_per_kernel; ++w)
      out.push_back(measure_window(rig, k, options));
  }
  return out;
}

model::ModelIdentity simulated_identity(const std::string& platform) {
  const oa::Platform p = mmio::sim_platform_by_name(platform);
  return {"simulated",    fmt::format("{} {}", p.codename, oa::gt_label(p)),
          p.gen,          p.driver == oa::KernelDriver::kXe ? "xe" : "i915",
          "ComputeBasic", "igpu pkg-pp0-dram (simulated RAPL: a model)"};
}

namespace {

std::map<std::string, std::size_t> column_index(const json& run) {
  std::map<std::string, std::size_t> column;
  const json& names = run.at("columns");
  for (std::size_t i = 0; i < names.size(); ++i) column[names[i].get<std::string>()] = i;
  return column;
}

bool has_energy(const json& row, const std::map<std::string, std::size_t>& column) {
  return row_number(row, column, "igpu_power_w") > 0 && row_number(row, column, "window_ns") > 0;
}

// What the rows with an energy figure measured: "igpu " and their --igpu-power formula. A model
// is fitted to one formula, so a run whose rows used several is refused.
std::string fitted_energy(const json& run) {
  const auto column = column_index(run);
  const auto formula = column.find("igpu_formula");
  if (formula == column.end()) return "igpu (the run's formula)";  // runs before the column
  std::set<std::string> names;
  for (const json& row : run.at("launches")) {
    const json& name = row.at(formula->second);
    if (has_energy(row, column) && name.is_string()) names.insert(name.get<std::string>());
  }
  if (names.size() > 1) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument(fmt::format(
        "the run's rows measured the iGPU by several formulas ({}); a model is fitted to one: "
        "profile the sweep again with one --igpu-power",
        list));
  }
  return names.empty() ? "igpu (the run's formula)" : "igpu " + *names.begin();
}

}  // namespace

namespace {

std::vector<model::Sample> samples_of(const json& run) {
  const auto column = column_index(run);
  std::vector<model::Sample> out;
  const json& launches = run.at("launches");
  if (!launches.is_array()) throw std::invalid_argument("the run's launches are not a list");
  for (std::size_t index = 0; index < launches.size(); ++index) {
    const json& row = launches[index];
    if (!has_energy(row, column)) continue;  // no energy figure for this row
    const double power_w = finite_cell(row, index, column, "igpu_power_w");
    const double window_ns = finite_cell(row, index, column, "window_ns");
    model::Sample s;
    s.kernel = fmt::format("{}@{}", row.at(column_of(column, "kernel")).get<std::string>(),
                           row.at(column_of(column, "global_size")).dump());
    for (int i = 0; i < oa::kMaxNumA; ++i) {
      const std::string name = fmt::format("A{}", i);
      if (column.contains(name))
        s.deltas.a[static_cast<std::size_t>(i)] = counter_cell(row, index, column, name);
    }
    for (int i = 0; i < oa::kNumB; ++i) {
      s.deltas.b[static_cast<std::size_t>(i)] =
          counter_cell(row, index, column, fmt::format("B{}", i));
    }
    for (int i = 0; i < oa::kNumC; ++i) {
      s.deltas.c[static_cast<std::size_t>(i)] =
          counter_cell(row, index, column, fmt::format("C{}", i));
    }
    s.window_s = window_ns / 1e9;
    s.energy_j = power_w * s.window_s;
    s.freq_mhz = finite_cell(row, index, column, "avg_freq_mhz");
    out.push_back(std::move(s));
  }
  return out;
}

model::ModelIdentity identity_of(const json& run) {
  const auto text = [&](const char* key) {
    return run.contains(key) && run[key].is_string() ? run[key].get<std::string>() : std::string();
  };
  const std::string platform = text("platform");  // the IGT metrics file's name, e.g. kblgt2
  const std::optional<oa::Platform> p = oa::platform_by_name(platform);
  if (!p || oa::energy_events(p->gen) == nullptr) {
    throw std::invalid_argument(fmt::format(
        "the run's platform '{}' is not one the energy model is defined for (Gen9, Gen12)",
        platform));
  }
  return {text("device"), platform, p->gen, text("driver"), text("metric_set"), fitted_energy(run)};
}

// The run's JSON is the user's: a shape unlike oaprof --json's (a missing key, a row that is no
// list, a cell of another type) is refused as such, not as the JSON library's words alone.
template <class Read>
auto read_run_json(Read read) {
  try {
    return read();
  } catch (const json::exception& e) {
    throw std::invalid_argument(
        fmt::format("not the JSON of an oaprof run (oaprof --json): {}", e.what()));
  }
}

}  // namespace

std::vector<model::Sample> samples_from_run(const json& run) {
  return read_run_json([&] { return samples_of(run); });
}

model::ModelIdentity identity_of_run(const json& run) {
  return read_run_json([&] { return identity_of(run); });
}

}  // namespace oaprof::run
