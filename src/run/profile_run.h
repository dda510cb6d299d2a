// The profile run, from the options parsed by `oaprof`'s command line to its exit status: checks
// the options into a ProfilePlan, sets up, runs and finishes (src/run/profile_run.cc).
#pragma once

#include "run/profile_plan.h"

namespace oaprof::run {

// Runs the profile the options describe and returns oaprof's exit status (base/errors.h).
int run_profile(const ProfileOptions& options);

}  // namespace oaprof::run
