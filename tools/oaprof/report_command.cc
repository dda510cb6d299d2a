// `oaprof report RUN.json... -o report.html`: the roofline report from the JSON documents of
// oaprof and kernel_runner runs, as one self-contained HTML page or the roofline alone as SVG.
// It needs no privilege: under sudo it becomes the invoking user before reading anything.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/cli.h"
#include "bench/peaks.h"
#include "oa/platform.h"
#include "report/roofline_svg.h"
#include "report/run_input.h"
#include "tools/oaprof/commands.h"

namespace oaprof::tools {
namespace {

struct ReportOptions {
  std::vector<std::string> inputs;
  std::string output = "report.html";
  std::string title = "oaprof report";
  std::string kernels;
};

// Theoretical peaks of each oaprof run's device: its platform's defaults with the run's own EUs,
// subslices and maximum frequency.
std::vector<report::TheoreticalPeaks> peaks_of(const std::vector<report::RunInput>& inputs) {
  std::vector<report::TheoreticalPeaks> out;
  for (const auto& in : inputs) {
    const auto* run = std::get_if<report::OaprofRun>(&in);
    if (!run) continue;
    const auto platform = oa::platform_by_name(run->platform);
    if (!platform) continue;
    bench::PeakInputs pi = bench::peak_inputs(*platform);
    if (run->eus > 0) pi.eus = run->eus;
    if (run->subslices && *run->subslices > 0) pi.subslices = *run->subslices;
    if (run->max_freq_mhz > 0) pi.freq_mhz = run->max_freq_mhz;
    const bench::Peaks p = bench::compute_peaks(pi);
    const std::string device = run->device_detail.empty() ? run->platform : run->device_detail;
    const bool seen =
        std::any_of(out.begin(), out.end(), [&](auto& q) { return q.device == device; });
    if (seen) continue;
    out.push_back({device, p.add_sp_flops / 1e9, p.mad_sp_flops / 1e9,
                   p.has_fp64 ? p.add_dp_flops / 1e9 : 0, p.has_fp64 ? p.mad_dp_flops / 1e9 : 0,
                   p.l3_bytes_per_s / 1e9});
  }
  return out;
}

int run_report(const ReportOptions& opt) {
  if (const int rc = become_sudo_user("report"); rc != 0) return rc;
  const bool svg = opt.output.ends_with(".svg");
  if (!svg && !opt.output.ends_with(".html") && !opt.output.ends_with(".htm")) {
    std::cerr << "oaprof report: -o " << opt.output
              << " must end in .html (the whole report) or .svg (the roofline alone)\n";
    return base::kExitUsage;
  }
  std::unique_ptr<std::regex> kernels;
  if (!opt.kernels.empty()) {
    try {
      kernels = std::make_unique<std::regex>(opt.kernels, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      std::cerr << "oaprof report: --kernels " << opt.kernels << " is not a regular expression ("
                << e.what() << ")\n";
      return base::kExitUsage;
    }
  }
  std::vector<report::RunInput> inputs;
  try {
    for (const std::string& path : opt.inputs) inputs.push_back(report::read_run_input(path));
  } catch (const report::RunInputError& e) {
    std::cerr << "oaprof report: " << e.what() << "\n";
    return base::kExitUsage;
  }
  const report::RooflineModel model =
      report::build_roofline_model(inputs, peaks_of(inputs), kernels.get());
  const std::string text =
      svg ? report::roofline_svg(model, opt.title) : report::html_report(model, opt.title);
  std::ofstream out(opt.output, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) {
    std::cerr << "oaprof report: cannot write " << opt.output << ": " << std::strerror(errno)
              << "\n";
    return base::kExitOutput;
  }
  std::cerr << fmt::format("oaprof report: wrote {} ({} points, {} ceilings{})\n", opt.output,
                           model.points.size(), model.ceilings.size(),
                           model.any_simulated ? "; device: simulated" : "");
  return 0;
}

std::pair<CLI::App*, Action> add_report(CLI::App& app) {
  auto opt = std::make_shared<ReportOptions>();
  auto* sub = app.add_subcommand(
      "report", "the roofline report (HTML or SVG) from runs' JSON (docs/report.md)");
  sub->add_option("inputs", opt->inputs,
                  "RUN.json files from oaprof --json or kernel_runner --json")
      ->required();
  sub->add_option("-o,--output", opt->output,
                  "report.html (the whole report) or report.svg (the roofline alone)")
      ->check(base::cli::output_file())
      ->capture_default_str();
  sub->add_option("--title", opt->title, "the report's title")->capture_default_str();
  sub->add_option("--kernels", opt->kernels, "only kernels whose name matches this regex");
  sub->footer(
      "Exit status:\n  0  written\n"
      "  2  bad options or an input that is not oaprof or kernel_runner JSON\n"
      "  4  the output cannot be written\n"
      "Example: oaprof report run.json kernel_runner.json -o report.html");
  return {sub, [opt] { return run_report(*opt); }};
}

OAPROF_REGISTER_SUBCOMMAND(report, add_report);

}  // namespace
}  // namespace oaprof::tools
