// The exact median of integer values (durations in ns, timestamp ticks) kept as a count per
// distinct value: its memory grows with how many different values came, not with how many. A
// million launches of one kernel take a few hundred distinct durations, not a million doubles
// (issue 33: oaprof's memory stays flat to 10 M launches).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>

namespace oaprof::report {

class ExactMedian {
 public:
  void add(std::uint64_t value) {
    ++counts_[value];
    ++count_;
  }
  std::uint64_t count() const { return count_; }
  // How many values are kept: one per distinct value.
  std::size_t distinct() const { return counts_.size(); }

  // The median of to_double(value) over every value added: the middle one, or the mean of the
  // two middle ones; NaN when none was added. `to_double` must not decrease as the value grows
  // (a scale to ns does not), so that the values' order is its results' order and the figure is
  // the one sorting all results would give.
  template <typename ToDouble>
  double median(ToDouble to_double) const {
    if (count_ == 0) return std::nan("");
    const std::uint64_t upper = count_ / 2;  // the middle one's rank, or the upper middle one's
    if (count_ % 2) return to_double(at_rank(upper));
    return (to_double(at_rank(upper - 1)) + to_double(at_rank(upper))) / 2;
  }

 private:
  // The value at `rank` (from 0) in ascending order.
  std::uint64_t at_rank(std::uint64_t rank) const {
    for (const auto& [value, n] : counts_) {
      if (rank < n) return value;
      rank -= n;
    }
    return counts_.rbegin()->first;  // not reached: rank < count_
  }

  std::map<std::uint64_t, std::uint64_t> counts_;  // value → how many times it came
  std::uint64_t count_ = 0;
};

}  // namespace oaprof::report
