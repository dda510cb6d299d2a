// Sweeps of one launch parameter (reference/method.md "Sweeps": work-groups 1..512, work-items
// 1..256, data sizes), parsed from `--sweep wg=1:512`, and the progress bar a long sweep shows.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace oaprof::bench {

enum class SweepParam { kWorkGroups, kWorkItems, kSize };

struct Sweep {
  SweepParam param = SweepParam::kWorkGroups;
  std::vector<std::size_t> values;  // in order, one launch configuration each
};

// "wg=FROM:TO[:STEP]", "wi=…" or "size=…". STEP is an increment (default 1, as the method asks:
// stepping by powers of two misses the saw-tooth) or `xN` for a geometric sweep. Sizes take K, M
// and G suffixes (powers of 1024). Throws std::invalid_argument with what is wrong.
Sweep parse_sweep(std::string_view text);

// "64M" → 67108864; plain numbers are bytes. Throws std::invalid_argument.
std::size_t parse_byte_size(std::string_view text);

std::string_view sweep_param_name(SweepParam p);  // "wg", "wi", "size"

// A one-line bar on a terminal ("[#####     ] 12/512 wg=12"), redrawn in place; silent when
// disabled (output not a terminal, or --quiet).
class ProgressBar {
 public:
  ProgressBar(std::ostream& out, std::size_t total, bool enabled);
  void update(std::size_t done, std::string_view label);
  void finish();

 private:
  std::ostream& out_;
  std::size_t total_;
  bool enabled_;
};

}  // namespace oaprof::bench
