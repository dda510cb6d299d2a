// Private to src/run: the selftest's checks that counters mean what the metric sets say. Each
// evaluates the counters of the set the read-outs are programmed with (IGT's ComputeBasic) by the
// set's own equations and compares them with work known beforehand: FLOPs of kernel_runner's
// mad_vect4 and mad_vect8, bytes of its load_store beyond the last-level cache
// (bench::known_work), nothing during an idle window, no render-pipeline event during compute.
#pragma once

#include "run/selftest_checks.h"

namespace oaprof::run::selftest {

Outcome check_known_work_flops(Context& c);
Outcome check_known_work_bytes(Context& c);
Outcome check_idle_and_render_quiet(Context& c);

}  // namespace oaprof::run::selftest
