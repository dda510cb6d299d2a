// `oaprof model fit`: fits the per-event energy model (src/model) to the calibration sweep, on the
// simulator in-process (--device sim) or from the JSON of a profiled run of the sweep (--from),
// writes model.json and prints the coefficients, their intervals and the leave-one-kernel-out
// error. docs/energy.md ("The energy model") says how to calibrate on a real machine.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/fit.h"
#include "report/json_text.h"
#include "report/run_input.h"
#include "report/text_escape.h"
#include "run/energy_calibration.h"
#include "tools/oaprof/commands.h"

namespace oaprof::tools {
namespace {

struct ModelFitOptions {
  std::string from;
  std::string device;
  std::string sim_platform = "kblgt2";
  std::string output = "model.json";
  int replicates = 400;
  std::uint64_t seed = 1;
};

void print_model(const model::EnergyModel& m) {
  std::cout << fmt::format("energy model of {} ({}, {}, {} events, {:.0f}-{:.0f} MHz){}\n",
                           report::visible_text(m.platform), report::visible_text(m.device),
                           report::visible_text(m.driver), report::visible_text(m.metric_set),
                           m.freq_min_mhz, m.freq_max_mhz,
                           m.device == "simulated" ? ": simulated, a model's model" : "");
  std::cout << fmt::format("{:<24} {:>12} {:>26}  {}\n", "coefficient", "value",
                           fmt::format("{:.0f}% interval", m.confidence * 100), "unit");
  auto row = [](const model::Coefficient& c) {
    if (!c.calibrated) {
      std::cout << fmt::format("{:<24} {:>12} {:>26}  J/{}\n", c.name, "-", "not calibrated",
                               c.unit);
      return;
    }
    std::cout << fmt::format("{:<24} {:>12.4g} {:>26}  {}{}\n", c.name, c.value,
                             fmt::format("[{:.4g}, {:.4g}]", c.low, c.high),
                             c.unit == "W" ? "" : "J/", c.unit);
  };
  row(m.static_power);
  for (const model::Coefficient& c : m.events) row(c);
  std::cout << fmt::format("leave-one-kernel-out: rms relative error {:.1f}%\n",
                           m.loo_rms_relative * 100);
  for (const model::KernelError& e : m.leave_one_out) {
    std::cout << fmt::format(
        "  {:<36} measured {:>9.4f} J  predicted {:>9} J  {}\n", report::visible_text(e.kernel),
        e.measured_j, e.modelled_j ? fmt::format("{:.4f}", *e.modelled_j) : "-",
        e.modelled_j ? fmt::format("{:+.1f}%", (*e.modelled_j / e.measured_j - 1) * 100) : "");
  }
}

// The simulator's held-back kernels, measured and modelled: how the model does on kernels it
// was not fitted to.
void print_held_back(const model::EnergyModel& m, const std::string& platform) {
  run::SimCalibrationOptions o;
  o.platform = platform;
  o.windows_per_kernel = 1;
  std::cout << "held-back kernels (simulated):\n";
  const auto kernels = run::held_back_kernels();
  const auto samples = run::simulate_sweep(kernels, o);
  for (const model::Sample& s : samples) {
    const model::Prediction p = model::predict(m, s.deltas, s.window_s, s.freq_mhz, m.metric_set);
    std::cout << fmt::format(
        "  {:<36} measured {:>9.4f} J  modelled {:>9.4f} ± {:.4f} J  {:+.1f}%{}\n", s.kernel,
        s.energy_j, p.energy_j, p.error_j, (p.energy_j / s.energy_j - 1) * 100,
        p.extrapolated.empty() ? "" : "  (extrapolated)");
  }
}

std::vector<model::Sample> read_run(const std::string& path, model::ModelIdentity& identity) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(fmt::format("--from {}: cannot open it", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > report::kMaxRunInputBytes) {
    throw std::invalid_argument(
        fmt::format("--from {}: larger than {} bytes", path, report::kMaxRunInputBytes));
  }
  const nlohmann::json run = nlohmann::json::parse(text.str(), nullptr, false);
  if (run.is_discarded()) throw std::invalid_argument(fmt::format("--from {}: not JSON", path));
  identity = run::identity_of_run(run);
  return run::samples_from_run(run);
}

int run_model_fit(const ModelFitOptions& opt) {
  if (int rc = become_sudo_user("oaprof model fit"); rc != 0) return rc;
  if (opt.from.empty() && opt.device != "sim") {
    std::cerr << "oaprof model fit: give --from RUN.json (a profiled run of the calibration "
                 "sweep, docs/energy.md) or --device sim (the simulator's sweep, in-process)\n";
    return base::kExitUsage;
  }
  try {
    model::ModelIdentity identity;
    std::vector<model::Sample> samples;
    if (!opt.from.empty()) {
      samples = read_run(opt.from, identity);
    } else {
      run::SimCalibrationOptions o;
      o.platform = opt.sim_platform;
      samples = run::simulate_sweep(run::calibration_sweep(), o);
      identity = run::simulated_identity(opt.sim_platform);
    }
    const model::EnergyModel m =
        model::fit_energy_model(samples, identity, {opt.replicates, 0.95, opt.seed});
    std::ofstream out(opt.output);
    out << report::json_text(model::to_json(m), 1) << "\n";
    if (!out.flush()) {
      std::cerr << fmt::format("oaprof model fit: writing {} failed\n", opt.output);
      return base::kExitOutput;
    }
    print_model(m);
    if (opt.from.empty()) print_held_back(m, opt.sim_platform);
    std::cout << fmt::format("wrote {}\n", opt.output);
    return 0;
  } catch (const model::FitError& e) {
    std::cerr << fmt::format("oaprof model fit: {}\n", e.what());
    return base::kExitCheckFailed;
  } catch (const std::exception& e) {
    std::cerr << fmt::format("oaprof model fit: {}\n", e.what());
    return base::kExitUsage;
  }
}

std::pair<CLI::App*, Action> add_model_command(CLI::App& app) {
  auto opt = std::make_shared<ModelFitOptions>();
  CLI::App* model = app.add_subcommand("model", "the per-event energy model (docs/energy.md)");
  model->require_subcommand(1);
  CLI::App* fit = model->add_subcommand(
      "fit", "fit energy per counter event and static power to the calibration sweep");
  fit->add_option("--from", opt->from, "the JSON of a profiled run of the calibration sweep");
  fit->add_option("--device", opt->device, "sim: run the simulator's sweep in-process");
  fit->add_option("--sim-platform", opt->sim_platform, "kblgt2 (default) or tglgt2");
  fit->add_option("-o,--output", opt->output, "where to write the model (default model.json)");
  fit->add_option("--replicates", opt->replicates, "bootstrap replicates (default 400)")
      ->check(CLI::Range(20, 100000));
  fit->add_option("--seed", opt->seed, "of the bootstrap");
  model->footer(
      "Exit status:\n  0  fitted and written\n  1  the sweep cannot be fitted (too few kernels, "
      "collinear events)\n  2  bad options or input\n  4  the model could not be written");
  return {model, [opt] { return run_model_fit(*opt); }};
}

}  // namespace

OAPROF_REGISTER_SUBCOMMAND(model, add_model_command);

}  // namespace oaprof::tools
