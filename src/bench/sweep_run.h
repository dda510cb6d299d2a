// Running one kernel over every step of a sweep (bench/sweep.h): a row each, with a progress bar.
#pragma once

#include "bench/catalogue.h"
#include "bench/result_writer.h"
#include "bench/runner.h"
#include "bench/sweep.h"

namespace oaprof::bench {

// Each step sets the swept parameter in the runner's options and writes the launch's row, marked
// where the launch fills every hardware thread (`hw_threads` 0: unknown). `progress` draws the
// bar on stderr. Leaves the last step's value in the runner's options.
void run_sweep(Runner& runner, ResultWriter& writer, const KernelSpec& spec, const Sweep& sweep,
               int hw_threads, bool progress);

}  // namespace oaprof::bench
