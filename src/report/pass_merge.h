// Passes across metric sets (issue 20): each set's rows of a launch, from an application replay
// (the program once per set) or a kernel replay across sets (each launch once per set), are
// joined into one row with every set's metrics. A launch is known across passes by
// its kernel name, its ordinal among that kernel's launches, and its global and local sizes; runs
// that launched different sequences are not joined (each pass keeps its own file).
#pragma once

#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "report/row.h"

namespace oaprof::report {

// One pass: the set it counted, its rows (launch_fields, in the order written) and which of
// their columns are the set's metrics.
struct Pass {
  std::string set;
  std::vector<std::vector<Field>> rows;
  std::vector<std::string> metric_columns;
};

// The passes launched different sequences; what() names the first difference.
class PassMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The joined table: per launch of the first pass, in its order, the launch's identity (launch,
// kernel, global_size, local_size) and its replay_passes (in a kernel replay across sets, all
// sets' passes), then per pass its set's gpu_time_ns and flags, then every
// pass's metrics, each column named <set>.<metric column>. Throws PassMismatch when a pass lacks
// a launch another has, and std::invalid_argument for fewer than two passes or a row without
// the identity columns.
struct MergedPasses {
  std::vector<std::string> columns;
  std::vector<std::vector<Field>> rows;
};
MergedPasses merge_passes(std::span<const Pass> passes);

// The joined rows as one JSON document: {"joined_from": {"replay": `replay`, "sets": [...]},
// "launches": [{column: value, ...}, ...]}, numbers as numbers and empty cells null.
void write_joined_json(std::ostream& out, const MergedPasses& joined,
                       std::span<const std::string> sets, const std::string& replay);

}  // namespace oaprof::report
