// One measured kernel launch as the privileged side hands it to the reporters: what the layer
// said about the launch, the counter deltas between the snapshots around it, and its validity.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oa/delta.h"
#include "oa/wire.h"

namespace oaprof::oa {

struct LaunchRecord {
  std::uint64_t index = 0;  // 0-based, in order of completion across all clients
  std::uint32_t pid = 0;    // the process that launched it
  wire::Launch launch;
  CounterDeltas deltas;
  std::vector<std::string> flags;  // validity notes: "no_profiling", "counter_wrap_risk", …
};

}  // namespace oaprof::oa
