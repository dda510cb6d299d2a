#include "bench/sweep_run.h"

#include <iostream>

#include <fmt/format.h>

#include "bench/peaks.h"

namespace oaprof::bench {
namespace {

void set_sweep_value(RunnerOptions& o, SweepParam param, std::size_t v) {
  switch (param) {
    case SweepParam::kWorkGroups:
      o.work_groups = v;
      break;
    case SweepParam::kWorkItems:
      o.work_items = v;
      break;
    case SweepParam::kSize:
      o.size_bytes = v;
      break;
  }
}

}  // namespace

void run_sweep(Runner& runner, ResultWriter& writer, const KernelSpec& spec, const Sweep& sweep,
               int hw_threads, bool progress) {
  ProgressBar bar(std::cerr, sweep.values.size(), progress);
  for (std::size_t i = 0; i < sweep.values.size(); ++i) {
    const std::size_t v = sweep.values[i];
    set_sweep_value(runner.options(), sweep.param, v);
    bar.update(i, fmt::format("{} {}={}", spec.name, sweep_param_name(sweep.param), v));
    const RunResult r = runner.run(spec);
    bar.finish();
    writer.row(r, fills_hw_threads(r.global_size / r.local_size, r.local_size, hw_threads));
  }
}

}  // namespace oaprof::bench
