// Chooses which metric sets to program for a list of counters the user names (`oaprof --metrics
// EuActive,GtiReadThroughput,...`): the OA unit runs one set at a time, so every extra set is
// another run of the workload, and the fewest sets that give every name is what the user wants.
// Pure: the caller owns the sets; the result points into them.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "oa/metric_set.h"

namespace oaprof::oa {

struct MetricCover {
  std::vector<const MetricSet*> sets;  // the chosen sets, in the order they appear in the input
  // For each requested name (duplicates once), in request order: the symbol of the chosen set
  // that gives it, the earliest chosen set where several do.
  std::vector<std::pair<std::string, std::string>> given_by;
};

// The fewest sets of `sets` whose counters include every name of `names` (counter symbols as in
// IGT's XML, "EuActive", matched exactly, case included). Covers of up to kMaxExactCoverSize sets
// are found by trying every combination, smallest first; among equally small covers, the one
// whose sets come first in `sets` wins. Where no cover that small exists, the sets are picked
// greedily (see metric_cover.cc), which may use more sets than the optimum.
// Throws std::invalid_argument for an empty list, an empty name, or names no set has: one message
// listing each unknown name with up to three closest known symbols.
MetricCover choose_metric_sets(std::span<const MetricSet> sets, std::span<const std::string> names);

// Beyond this many sets, trying every combination costs C(sets, k) checks, which grows too fast
// for files of a hundred sets.
inline constexpr int kMaxExactCoverSize = 4;

}  // namespace oaprof::oa
