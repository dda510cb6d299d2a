// The exit status of every tool lives with the typed errors in base/errors.h; the run names them
// as its own.
#pragma once

#include "base/errors.h"

namespace oaprof::run {

using base::kExitCannotRun;
using base::kExitOutput;
using base::kExitPassesDiffer;
using base::kExitSession;
using base::kExitSetup;
using base::kExitUsage;

}  // namespace oaprof::run
