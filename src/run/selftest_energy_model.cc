// The selftest's quick calibration check of an energy model: known work measured through the
// selftest's read-out and energy planes, each window's energy predicted by the model from the
// window's counters, and judged by the code that flags a profile's rows energy_model_disagrees
// (report/row.h: row_energy, modelled_energy), so that the check and the rows cannot differ on
// what "within the model's error" means.
#include "run/selftest_energy_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "base/monotonic_clock.h"
#include "bench/known_work.h"
#include "mmio/sim_work.h"
#include "oa/report.h"
#include "power/energy_registry.h"
#include "report/row.h"
#include "run/selftest_load.h"
#include "session/unit.h"

namespace oaprof::run::selftest {
namespace {

constexpr std::string_view kRecalibrate = "calibrate again on this device (`oaprof model fit`)";

// The groups of the checks whose findings this one stands on: the counters the model reads, the
// clock its frequency comes from, and the planes it is compared with. Where one of them failed, a
// disagreement would not tell a wrong model from a wrong counter or plane.
constexpr std::string_view kPremiseGroups[] = {"clocks", "read-outs agree", "counters",
                                               "programming", "energy"};

// A launch is followed by this many times its length idle: the window is at most a quarter busy,
// inside the event rates the calibration sweep reaches (its kernels are small: on a part of many
// EUs, such as TGL's 96, they fill about a third of them), so that the model states an error for
// every window.
constexpr double kIdlePerBusy = 3;

// One window of the check: a catalogue kernel launched again and again, or none (idle).
struct ModelWorkload {
  std::string label;                   // "mad_vect8_65536", "idle"
  std::optional<oa::KernelWork> work;  // nullopt: idle
  LoadWork load = {};                  // the same work as kernel_runner's load (real hardware)
};

// FP32 work (FPUs, EU activity) and memory work beyond the last-level cache (sends, L3, GTI), two
// sizes each, so that per-launch costs and per-event energies both show; and the static power.
std::vector<ModelWorkload> model_workloads() {
  std::vector<ModelWorkload> out = {{"idle", std::nullopt}};
  for (const std::size_t global : {65536, 262144}) {
    out.push_back({fmt::format("mad_vect8_{}", global),
                   bench::known_work("mad_vect8", global),
                   {.kernel = "mad_vect8", .global = global, .rest = kIdlePerBusy}});
  }
  for (const std::size_t mib : {16, 64}) {
    bench::WorkParams params;
    params.size_bytes = mib << 20;
    out.push_back({fmt::format("load_store_vect4_{}MiB", mib),
                   bench::known_work("load_store_vect4", 4096, params),
                   {.kernel = "load_store_vect4",
                    .global = 4096,
                    .size_bytes = params.size_bytes,
                    .rest = kIdlePerBusy}});
  }
  return out;
}

void wait_ns(double ns) {
  std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<std::int64_t>(ns)));
}

// One launch of `work` on the simulator, as long as the model of the part says it takes, then
// the rest.
void launch_and_rest(Context& c, gpu::CounterSource& source, const oa::KernelWork& work) {
  const mmio::SimGpu& sim = *c.device.sim;
  const double ns =
      mmio::sim_kernel_events(work, sim.config().platform.gen, sim.eus(), sim.config().freq_mhz)
          .duration_ns;
  source.kernel_running(true, &work);
  wait_ns(ns);
  source.kernel_running(false);
  wait_ns(ns * kIdlePerBusy);
}

// What a profile's run information says that the row's energy and its model depend on: the
// timestamp frequency, the set the counters were programmed with, and the energy windows' default
// judgement (--min-window 50 ms, pkg-pp0-dram, no idle baseline).
report::RunInfo model_run_info(const Context& c, const std::string& metric_set) {
  report::RunInfo info;
  info.timestamp_hz = c.device.facts.timestamp_hz;
  info.metric_set = metric_set;
  info.energy_model = c.options.energy_model;
  return info;
}

// The window's work, `ns` of it: launched on the simulated GPU where the model is told of the
// work, else (real hardware, or a simulator whose load only the process is) the load's already.
void run_window_work(Context& c, gpu::CounterSource& source, const ModelWorkload& w,
                     std::uint64_t ns) {
  const bool sim_launches = w.work && c.device.simulated() && model_told_of_load(c);
  if (!sim_launches) return wait_ns(static_cast<double>(ns));
  const std::uint64_t start = base::monotonic_ns();
  while (base::monotonic_ns() - start < ns) launch_and_rest(c, source, *w.work);
}

struct JudgedWindow {
  std::string label;
  report::ModelledEnergy energy;
  std::string load = {};  // the kernel_runner it ran under: "pid N"; "" for none
  double deviation() const {
    return energy.measured_j && energy.energy_j > 0 ? *energy.measured_j / energy.energy_j - 1 : 0;
  }
};

// One window of at least `ns` (RAPL-resolvable), as one row of a profile: its counters and the
// planes read around it, its modelled energy compared with the measured one. A window of work
// runs under kernel_runner launching that work on real hardware (start_load; none on the
// simulator's model): nullopt with `why` where it could not be had.
std::optional<JudgedWindow> measure_model_window(Context& c, gpu::CounterSource& source,
                                                 power::EnergySource& energy,
                                                 const ModelWorkload& w,
                                                 const report::RunInfo& info, std::uint64_t ns,
                                                 std::string& why) {
  std::unique_ptr<GpuLoad> load;
  if (w.work) load = start_load(c, why, w.load);
  if (!why.empty()) return std::nullopt;
  const power::EnergyReading e0 = energy.read();
  const oa::RawReport r0 = source.snapshot(1);
  run_window_work(c, source, w, ns);
  const oa::RawReport r1 = source.snapshot(2);
  const power::EnergyReading e1 = energy.read();
  oa::LaunchRecord record;
  record.deltas =
      oa::compute_deltas(oa::decode(c.format, r0.bytes), oa::decode(c.format, r1.bytes));
  return JudgedWindow{.label = w.label,
                      .energy = *report::row_energy(record, &e0, &e1, info, "").modelled,
                      .load = load ? fmt::format("pid {}", load->pid()) : std::string()};
}

// The device's platform in the two spellings a model may carry: "KBL GT2" (`oaprof model fit
// --device sim`) or the IGT metrics file's name, as a run's JSON gives it (`--from`).
bool model_is_of(const model::EnergyModel& m, const oa::Platform& p) {
  return m.generation == p.gen &&
         (m.platform == fmt::format("{} {}", p.codename, oa::gt_label(p)) ||
          m.platform == p.metrics_file);
}

// The set the read-outs count with: the selftest's own where it was found, else the bare counters.
std::string programmed_set(const Context& c) {
  const bool bare = c.config.mux.empty() && c.config.boolean.empty() && c.config.flex.empty();
  return bare ? std::string("(bare counters)") : c.options.metric_set;
}

// Why the model cannot be judged on this device at all, from what the model file says of itself.
std::optional<std::string> model_not_for_device(const Context& c, const model::EnergyModel& m) {
  const oa::Platform& p = c.device.platform;
  if (!model_is_of(m, p)) {
    return fmt::format("the model is of {} ({}), the device is {} {} ({}): {}", m.platform,
                       oa::generation_name(m.generation), p.codename, oa::gt_label(p),
                       oa::generation_name(p.gen), kRecalibrate);
  }
  if (m.metric_set != programmed_set(c)) {
    return fmt::format("the model reads {}'s counters, the read-outs count {}", m.metric_set,
                       programmed_set(c));
  }
  return std::nullopt;
}

// The earlier checks of this run, in the groups this one stands on, that failed.
std::vector<std::string> failed_premises(const Context& c) {
  std::vector<std::string> out;
  for (const CheckResult& r : c.earlier != nullptr ? *c.earlier : std::vector<CheckResult>{}) {
    const bool premise = std::find(std::begin(kPremiseGroups), std::end(kPremiseGroups), r.group) !=
                         std::end(kPremiseGroups);
    if (premise && r.verdict == Verdict::kFail) out.push_back(r.name);
  }
  return out;
}

// Why nothing is measured here, or nullopt.
std::optional<std::string> why_not_measured(const Context& c) {
  if (!c.options.energy_model) {
    return std::string(
        "no model given: name the model.json `oaprof model fit` wrote with --energy-model FILE");
  }
  if (auto why = model_not_for_device(c, *c.options.energy_model)) return why;
  if (const std::vector<std::string> failed = failed_premises(c); !failed.empty()) {
    return fmt::format(
        "not judged: {} failed, so the counters or planes the model is compared through are in "
        "doubt",
        fmt::join(failed, ", "));
  }
  if (c.accesses.empty()) return std::string("no read-out to measure through");
  if (c.device.simulated() && !mmio::sim_models_known_work(c.device.platform.gen)) {
    return fmt::format("the simulator models no known work on {} (mmio/sim_work.h)",
                       oa::generation_name(c.device.platform.gen));
  }
  return std::nullopt;
}

// The planes the model is compared with. The selftest's simulated RAPL tree follows a GPU activity
// that knows nothing of events (selftest.cc's open_energy), so on the simulator the same backend
// is opened as a profile opens it: fed by the simulated GPU's per-event energy
// (session::aim_energy_roots). `why` says why there is none.
std::unique_ptr<power::EnergySource> model_planes(const Context& c, std::string& why) {
  power::EnergyRoots roots = c.options.energy_roots;
  session::aim_energy_roots(roots, c.device);
  power::EnergyChoice choice = power::choose_energy_source(
      session::energy_backend_for(c.options.energy, true, c.device.platform.discrete), roots);
  why = choice.reason;
  return std::move(choice.source);
}

std::vector<Figure> window_figures(const std::vector<JudgedWindow>& windows) {
  std::vector<Figure> figures;
  for (const JudgedWindow& w : windows) {
    figures.push_back({w.label + "_measured_j", w.energy.measured_j.value_or(0), "J"});
    figures.push_back({w.label + "_modelled_j", w.energy.energy_j, "J"});
    figures.push_back({w.label + "_error_j", w.energy.error_j, "J"});
    figures.push_back({w.label + "_measured_error_j", w.energy.measured_error_j, "J"});
  }
  return figures;
}

std::string window_text(const JudgedWindow& w) {
  return fmt::format("{} {:.4g} J vs {:.4g} ± {:.2g} J{}", w.label, w.energy.measured_j.value_or(0),
                     w.energy.energy_j, w.energy.error_j,
                     w.load.empty() ? "" : " (under kernel_runner " + w.load + ")");
}

// Pass when every window was measured and agrees with the model; else the worst window.
Outcome judge_windows(const std::vector<JudgedWindow>& windows, const std::string& through) {
  std::vector<std::string> parts;
  const JudgedWindow* worst = nullptr;
  const JudgedWindow* unmeasured = nullptr;
  for (const JudgedWindow& w : windows) {
    parts.push_back(window_text(w));
    if (!w.energy.measured_j && unmeasured == nullptr) unmeasured = &w;
    const bool worse = worst == nullptr || std::abs(w.deviation()) > std::abs(worst->deviation());
    if (w.energy.disagrees && worse) worst = &w;
  }
  const std::string measured =
      fmt::format("measured vs modelled through {}: {}", through, fmt::join(parts, ", "));
  if (unmeasured != nullptr) {
    return fail(
        measured,
        fmt::format("{}: no measured energy over the window to compare with", unmeasured->label),
        window_figures(windows));
  }
  if (worst == nullptr) return pass(measured, window_figures(windows));
  return fail(measured,
              fmt::format("{}: measured {:.4g} J, {:+.1f}% from the model's {:.4g} ± {:.2g} J "
                          "(the measurement ± {:.2g} J): the GPU no longer draws the energy per "
                          "event the model was fitted to; {}",
                          worst->label, *worst->energy.measured_j, worst->deviation() * 100,
                          worst->energy.energy_j, worst->energy.error_j,
                          worst->energy.measured_error_j, kRecalibrate),
              window_figures(windows));
}

// The first window the model extrapolates to, where it states no error, and why.
std::optional<std::string> extrapolated(const std::vector<JudgedWindow>& windows) {
  for (const JudgedWindow& w : windows) {
    if (w.energy.extrapolated.empty()) continue;
    return fmt::format("the model does not cover {} ({}): it states no error there; {}", w.label,
                       fmt::join(w.energy.extrapolated, "; "), kRecalibrate);
  }
  return std::nullopt;
}

}  // namespace

// energy: each window's measured energy lies within the model's error of what the model predicts
// from the window's counters, as a profile's rows judge it.
Outcome check_energy_model(Context& c) {
  if (auto why = why_not_measured(c)) return skip(std::move(*why));
  std::string no_planes;
  const std::unique_ptr<power::EnergySource> planes = model_planes(c, no_planes);
  if (!planes) return skip("no energy source: " + no_planes);
  const report::RunInfo info = model_run_info(c, programmed_set(c));
  // At least the window a row's energy needs to be compared (RAPL-resolvable).
  const std::uint64_t ns = std::max(c.window_ns, info.energy_options.min_window_ns);
  StartedSource source(c, c.accesses.front());
  std::vector<JudgedWindow> windows;
  for (const ModelWorkload& w : model_workloads()) {
    std::string no_load;
    auto window = measure_model_window(c, *source, *planes, w, info, ns, no_load);
    if (!window) return skip(fmt::format("{} (the {} window's)", no_load, w.label));
    windows.push_back(std::move(*window));
  }
  if (auto why = extrapolated(windows)) return skip(std::move(*why));
  return judge_windows(windows, fmt::format("{} and {}", c.accesses.front(), planes->name()));
}

std::optional<mmio::SimEnergyModel> drifted_sim_energy_model(oa::Generation gen) {
  std::optional<mmio::SimEnergyModel> m = mmio::sim_energy_model(gen);
  // gpu_busy_cycles, the first event of every generation's set (oa/energy_events.h).
  if (m && !m->joules_per_event.empty()) m->joules_per_event[0] *= 2;
  return m;
}

}  // namespace oaprof::run::selftest
