// Private to src/run: the selftest's checks that counters mean what the metric sets say. Each
// reads the counters of the set the read-outs are programmed with (IGT's ComputeBasic) as its
// own equations evaluate them and compares them with work known beforehand: FLOPs of
// kernel_runner's mad_vect4 and mad_vect8 and the EU-active share they imply, bytes of its
// load_store beyond the last-level cache (bench::known_work), all from the rows of
// kernel_runner's profile runs (run/selftest_known_work.h); nothing during an idle window; no
// render-pipeline event during kernel_runner's compute launches.
#pragma once

#include <string_view>

#include "run/selftest_checks.h"

namespace oaprof::run::selftest {

// The checks that read kernel_runner's runs.
inline constexpr std::string_view kKnownWorkChecks[] = {
    "known-work-flops", "known-work-eu-active", "known-work-bytes", "idle-and-render-quiet"};

// The kernel_runner runs the checks that measure on this device (and are not among
// options.skip_checks) need, into known.runs, with the read-out and set they measure through.
void plan_known_work(Context& c, KnownWork& known);

Outcome check_known_work_flops(Context& c);
Outcome check_known_work_eu_active(Context& c);
Outcome check_known_work_bytes(Context& c);
Outcome check_idle_and_render_quiet(Context& c);

}  // namespace oaprof::run::selftest
