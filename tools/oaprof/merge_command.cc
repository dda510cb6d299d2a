// `oaprof merge FILES... -o all.csv|all.json`: the outputs of the runs of one job (a file per
// host and rank: oaprof -o out-%h-%r.csv) as one table, with each kernel's GPU time across the
// runs (least, median, most). It needs no privilege: under sudo it becomes the invoking user
// before reading anything (docs/cluster.md).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/cli.h"
#include "report/merge.h"
#include "tools/oaprof/commands.h"

namespace oaprof::tools {
namespace {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  bool quiet = false;
};

int run_merge(const MergeOptions& opt) {
  if (const int rc = become_sudo_user("merge"); rc != 0) return rc;
  const bool json = opt.output.ends_with(".json");
  if (!json && !opt.output.ends_with(".csv")) {
    std::cerr << "oaprof merge: -o " << opt.output << " must end in .csv or .json\n";
    return base::kExitUsage;
  }
  report::MergedRuns merged;
  try {
    std::vector<report::RunTable> tables;
    for (const std::string& path : opt.inputs) {
      if (path == opt.output) {
        throw report::RunInputError(path + " is both an input and the output");
      }
      tables.push_back(report::read_run_table(path));
    }
    merged = report::merge_runs(std::move(tables));
  } catch (const report::RunInputError& e) {
    std::cerr << "oaprof merge: " << e.what() << "\n";
    return base::kExitUsage;
  }
  const auto kernels = report::kernels_across_runs(merged);
  std::ofstream out(opt.output, std::ios::binary | std::ios::trunc);
  if (json) {
    report::write_merged_json(out, merged, kernels);
  } else {
    report::write_merged_csv(out, merged);
  }
  out.flush();
  if (!out) {
    std::cerr << "oaprof merge: cannot write " << opt.output << ": " << std::strerror(errno)
              << "\n";
    return base::kExitOutput;
  }
  const std::size_t runs = merged.runs();
  if (!opt.quiet) report::write_kernels_table(std::cerr, kernels, runs);
  std::cerr << fmt::format("oaprof merge: wrote {} ({} rows of {} runs from {} files)\n",
                           opt.output, merged.rows.size(), runs, merged.sources.size());
  return 0;
}

std::pair<CLI::App*, Action> add_merge(CLI::App& app) {
  auto opt = std::make_shared<MergeOptions>();
  auto* sub = app.add_subcommand("merge",
                                 "one table from many runs' CSV or JSON outputs (docs/cluster.md)");
  sub->add_option("inputs", opt->inputs, "oaprof CSV or JSON outputs, all of one metric set")
      ->required();
  sub->add_option("-o,--output", opt->output,
                  "all.csv (the rows) or all.json (the rows and per-kernel figures)")
      ->check(base::cli::output_file())
      ->required();
  sub->add_flag("-q,--quiet", opt->quiet, "no per-kernel table on stderr");
  sub->footer(
      "Exit status:\n  0  written\n"
      "  2  bad options, an input that is not an oaprof output, or inputs that do not\n"
      "     belong together (the message names the files)\n"
      "  4  the output cannot be written\n"
      "Example: oaprof merge out-*.csv -o all.json");
  return {sub, [opt] { return run_merge(*opt); }};
}

OAPROF_REGISTER_SUBCOMMAND(merge, add_merge);

}  // namespace
}  // namespace oaprof::tools
