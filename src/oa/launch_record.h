// One measured kernel launch as the privileged side hands it to the reporters: what the layer
// said about the launch, the counter deltas between the snapshots around it, and its validity.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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
  // Kernel replay across metric sets (Session::set_pass_configs): which set's passes `deltas`
  // counted; each such launch gives one record per set, with the same index.
  std::size_t pass_set = 0;
  // Sampled attribution: how far the counters over the launch's window can be from what a
  // bracketed read would give (oa::SampledDeltas::error_bound), and the share of the window other
  // launches of its process ran in too (their counts are in these counters as well).
  struct Sampled {
    double error_bound = 0;
    double overlap_share = 0;
  };
  std::optional<Sampled> sampled;
};

}  // namespace oaprof::oa
