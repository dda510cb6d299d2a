// kernel_runner: the OpenCL micro-benchmarks of the catalogue, as an ordinary OpenCL program.
// Under oaprof every launch it makes is measured through the layer.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "launch/catalogue.h"
#include "launch/runner.h"

namespace {

constexpr int kExitWrongResult = 1;
constexpr int kExitUsage = 2;
constexpr int kExitOpenCl = 3;

double default_min_time_ms() {
  // oaprof passes its --min-window down so the runner's repeats cover the energy window.
  if (const char* env = std::getenv("OAPROF_MIN_TIME_MS"); env && *env) {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (*end == '\0' && v >= 0) return v;
  }
  return 50.0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace oaprof::launch;
  CLI::App app{"kernel_runner: OpenCL micro-benchmarks for characterising a GPU's compute roof.\n"
               "Kernels are named <op>[_<type>]_<width>: op add|sub|mul|div|mad, type sp "
               "(default)|dp|int, width scalar|vect2|vect4|vect8|vect16 (e.g. mad_vect4).\n"
               "Profile it with: oaprof -- kernel_runner mad_vect4",
               "kernel_runner"};
  std::vector<std::string> names;
  bool list = false;
  RunnerOptions opt;
  opt.min_time_ms = default_min_time_ms();
  app.add_option("kernels", names, "kernels to run, in order");
  app.add_flag("--list", list, "print every kernel with a one-line description and exit");
  app.add_option("--platform", opt.platform, "OpenCL platform: index or name substring (default: first)");
  app.add_option("--device", opt.device, "OpenCL device: index or name substring (default: first)");
  app.add_option("--wg", opt.work_groups, "number of work-groups")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--wi", opt.work_items, "work-items per work-group")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--iterations", opt.iterations, "loop iterations per work-item (default 2048 / width)")
      ->check(CLI::PositiveNumber);
  app.add_option("--min-time", opt.min_time_ms,
                 "repeat until the summed kernel time reaches this many ms (default 50, or "
                 "$OAPROF_MIN_TIME_MS as oaprof sets it)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-repeats", opt.max_repeats, "upper bound on measured launches")
      ->capture_default_str()->check(CLI::PositiveNumber);
  bool no_warmup = false;
  app.add_flag("--no-warmup", no_warmup, "skip the unmeasured warm-up launch");
  app.footer("Exit status: 0 success (skipped kernels included), 1 wrong result, 2 usage error, "
             "3 OpenCL set-up failure.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  opt.warmup = !no_warmup;

  if (list) {
    for (const auto& e : catalogue()) std::cout << fmt::format("{:<20} {}\n", e.name, e.description);
    return 0;
  }
  if (names.empty()) {
    std::cerr << "kernel_runner: name at least one kernel (see --list), e.g. kernel_runner mad_vect4\n";
    return kExitUsage;
  }
  std::vector<KernelSpec> specs;
  for (const auto& n : names) {
    auto spec = parse_kernel_name(n);
    if (!spec) {
      std::string hint;
      for (const auto& s : nearest_names(n)) hint += (hint.empty() ? "" : ", ") + s;
      std::cerr << fmt::format("kernel_runner: unknown kernel '{}'; did you mean {}? (--list shows all)\n",
                               n, hint);
      return kExitUsage;
    }
    specs.push_back(*spec);
  }

  try {
    Runner runner(opt);
    std::cout << fmt::format("device: {}\n", runner.device_name());
    std::cout << fmt::format("{:<18} {:>8} {:>6} {:>6} {:>8} {:>11} {:>11} {:>9} {:>10}\n", "kernel",
                             "global", "local", "iter", "repeats", "median_us", "mean_us",
                             "stderr_%", "Gop/s");
    for (const auto& spec : specs) {
      try {
        const RunResult r = runner.run(spec);
        std::cout << fmt::format("{:<18} {:>8} {:>6} {:>6} {:>8} {:>11.1f} {:>11.1f} {:>9.2f} {:>10.2f}\n",
                                 spec.name, r.global_size, r.local_size, r.iterations,
                                 r.stats.count, r.stats.median / 1e3, r.stats.mean / 1e3,
                                 r.stats.mean > 0 ? 100 * r.stats.stderr_ / r.stats.mean : 0.0,
                                 r.gops_median());
      } catch (const Unsupported& e) {
        std::cout << e.what() << "\n";
      }
    }
  } catch (const VerificationError& e) {
    std::cerr << "kernel_runner: " << e.what() << "\n";
    return kExitWrongResult;
  } catch (const std::exception& e) {
    std::cerr << "kernel_runner: " << e.what() << "\n";
    return kExitOpenCl;
  }
  return 0;
}
