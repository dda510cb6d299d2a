// The profile run, from the options parsed by `oaprof`'s command line to its exit status: checks
// the options into a ProfilePlan, sets up, runs and finishes (src/run/profile_run.cc).
#pragma once

#include "report/pass_merge.h"
#include "run/profile_plan.h"

namespace oaprof::run {

// Runs the profile the options describe and returns oaprof's exit status (base/errors.h).
int run_profile(const ProfileOptions& options);

// Runs a plan made by another part of oaprof once, as run_profile runs one set: its rows are
// kept in `rows` as well as written to the plan's outputs (none where plan.outputs.csv is empty).
// The selftest reads the counters of kernel_runner's known work this way, from the rows a
// profile reports. Returns the exit status run_profile would.
int run_profile_captured(const ProfilePlan& plan, report::Pass& rows);

}  // namespace oaprof::run
