// `oaprof metrics list|show|import`: which metric sets oaprof can use on a platform, what one of
// them computes, and importing IGT metric files (validated first) into the user's directory.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "oa/builtin_metric_set.h"
#include "oa/topology.h"
#include "session/metric_source.h"
#include "session/trusted_metrics.h"
#include "session/user_file.h"
#include "tools/oaprof/commands.h"

namespace oaprof::tools {

namespace fs = std::filesystem;

using session::find_metric_file;
using session::load_metric_file;
using session::load_metric_set;
using session::metric_search_env;

namespace {

struct MetricsOptions {
  std::string platform;
  std::string metrics_xml;
  std::string set;
  std::vector<std::string> files;
};

void print_set_line(const oa::MetricSet& set) {
  std::cout << fmt::format("  {:<28} {:>3} counters  {:>4} NOA {:>3} OA {:>2} FLEX  {}\n",
                           set.symbol(), set.counters().size(),
                           set.register_count(oa::RegisterConfig::Kind::kNoa),
                           set.register_count(oa::RegisterConfig::Kind::kBoolean),
                           set.register_count(oa::RegisterConfig::Kind::kFlex), set.name());
}

int run_list(const MetricsOptions& opt) {
  std::vector<oa::Platform> platforms;
  if (!opt.platform.empty()) {
    platforms.push_back(oa::require_platform_by_name(opt.platform));
  } else {
    for (const std::string_view name : oa::platform_names()) {
      platforms.push_back(*oa::platform_by_name(name));
    }
  }
  for (const oa::Platform& p : platforms) {
    std::cout << fmt::format("{} ({} {}, {}):\n", p.metrics_file, p.codename,
                             oa::generation_name(p.gen), oa::gt_label(p));
    if (oa::has_builtin_metric_set(p)) print_set_line(oa::builtin_metric_set(p));
    const auto path = find_metric_file(p, opt.metrics_xml);
    if (!path) {
      std::cout << fmt::format("  (no {} found: `oaprof metrics import` adds it)\n",
                               oa::metric_file_name(p.metrics_file));
      continue;
    }
    try {
      const oa::MetricFile file = load_metric_file(*path);
      std::cout << fmt::format("  from {}:\n", path->string());
      for (const oa::MetricSet& set : file.sets) print_set_line(set);
    } catch (const std::exception& e) {
      std::cout << fmt::format("  ({} cannot be used: {})\n", path->string(), e.what());
    }
  }
  return 0;
}

int run_show(const MetricsOptions& opt) {
  const oa::Platform platform =
      opt.platform.empty() ? oa::simulated_platform() : oa::require_platform_by_name(opt.platform);
  const oa::MetricSet set = load_metric_set(platform, opt.set, opt.metrics_xml);
  std::cout << fmt::format("{} — {}\n", set.symbol(), set.name());
  std::cout << fmt::format("platform: {} ({}); guid: {}\n", platform.metrics_file,
                           platform.codename, set.guid().empty() ? "-" : set.guid());
  const oa::DeviceVariables vars = oa::device_variables(platform);
  for (const auto kind : {oa::RegisterConfig::Kind::kNoa, oa::RegisterConfig::Kind::kBoolean,
                          oa::RegisterConfig::Kind::kFlex}) {
    std::cout << fmt::format("{} registers: {} ({} on this platform's default topology)\n",
                             oa::register_config_kind_name(kind), set.register_count(kind),
                             set.writes(kind, vars).size());
  }
  std::cout << fmt::format("{} counters:\n", set.counters().size());
  const std::vector<std::string> unknown_inputs = set.unknown_inputs(vars);
  for (const oa::MetricCounter& c : set.counters()) {
    std::cout << fmt::format("  {:<32} {:<10} {:<7} {}\n", c.symbol, c.units,
                             oa::data_type_name(c.data_type), c.equation.text());
    if (c.max_equation) std::cout << fmt::format("  {:<51} max: {}\n", "", c.max_equation->text());
    if (c.availability) {
      std::cout << fmt::format("  {:<51} available if: {}\n", "", c.availability->text());
    }
    const auto index = static_cast<std::size_t>(&c - set.counters().data());
    if (const std::string& need = unknown_inputs[index]; !need.empty()) {
      std::cout << fmt::format(
          "  {:<51} unavailable: reads {}, which only the device's query "
          "gives\n",
          "", need);
    }
  }
  return 0;
}

int run_import(const MetricsOptions& opt) {
  const fs::path dir = oa::user_metrics_dir(metric_search_env());
  // Validate every file before copying any, so a bad one leaves the directory untouched.
  std::vector<std::pair<fs::path, std::size_t>> valid;
  for (const std::string& f : opt.files) {
    const fs::path path(f);
    if (path.extension() != ".xml") {
      throw std::invalid_argument(fmt::format("{} is not an .xml file", f));
    }
    valid.emplace_back(path, load_metric_file(path).sets.size());
  }
  fs::create_directories(dir);
  for (const auto& [path, sets] : valid) {
    const fs::path target = dir / path.filename();
    fs::copy_file(path, target, fs::copy_options::overwrite_existing);
    std::cout << fmt::format("imported {} ({} sets) to {}\n", path.string(), sets, target.string());
  }
  return 0;
}

std::pair<CLI::App*, Action> add_metrics_command(CLI::App& app) {
  auto opt = std::make_shared<MetricsOptions>();
  CLI::App* sub =
      app.add_subcommand("metrics", "list, show and import metric sets (docs/metrics.md)");
  sub->footer(
      "Exit status:\n  0  done\n  2  bad options or an unknown set\n"
      "  3  under sudo, the drop to the invoking user did not take\n"
      "  4  a file cannot be read or written");
  sub->require_subcommand(1);
  CLI::App* list = sub->add_subcommand("list", "the metric sets of every platform, or of one");
  list->add_option("--platform", opt->platform, "a platform name such as kblgt2");
  list->add_option("--metrics-xml", opt->metrics_xml, "read this file instead of searching");
  CLI::App* show = sub->add_subcommand("show", "a set's counters, units, equations, registers");
  show->add_option("SET", opt->set, "the set's symbol name, e.g. ComputeBasic or Builtin")
      ->required();
  show->add_option("--platform", opt->platform, "platform name (default: the simulated kblgt2)");
  show->add_option("--metrics-xml", opt->metrics_xml, "read this file instead of searching");
  CLI::App* import = sub->add_subcommand(
      "import", "check IGT oa-*.xml files; copy them to $XDG_DATA_HOME/oaprof/metrics");
  import->add_option("FILE", opt->files, "oa-<platform>.xml files")->required();
  return {sub, [opt, list, show, import] {
            // Nothing here needs root: under sudo it reads and writes as the user.
            if (const int rc = become_sudo_user("metrics"); rc != 0) return rc;
            try {
              if (list->parsed()) return run_list(*opt);
              if (show->parsed()) return run_show(*opt);
              if (import->parsed()) return run_import(*opt);
            } catch (const std::invalid_argument& e) {
              std::cerr << "oaprof metrics: " << e.what() << "\n";
              return base::kExitUsage;
            } catch (const std::exception& e) {
              std::cerr << "oaprof metrics: " << e.what() << "\n";
              return base::kExitOutput;
            }
            return base::kExitUsage;
          }};
}

}  // namespace

OAPROF_REGISTER_SUBCOMMAND(metrics, add_metrics_command);

}  // namespace oaprof::tools
