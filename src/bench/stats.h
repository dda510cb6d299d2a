// Statistics over repeated launches and the rule that decides when to stop repeating
// (reference/method.md "Statistics": keep every sample; median, mean, standard deviation,
// standard error; stop when the window is covered and the standard error is small enough).
#pragma once

#include <cstddef>
#include <span>

namespace oaprof::bench {

struct Stats {
  std::size_t count = 0;
  double median = 0, mean = 0, stddev = 0, stderr_ = 0, sum = 0, min = 0, max = 0;
};

Stats summarize(std::span<const double> samples);

struct RepeatRule {
  double min_total = 0;  // accumulated sample sum that must be reached (the RAPL window)
  std::size_t max_repeats = 1000;
  double max_rel_stderr = 0.02;  // standard error / mean below which the estimate is good enough

  // True while another launch is needed. O(n) per call: for a long run use RepeatTracker.
  bool more(std::span<const double> samples) const;
};

// The same rule, fed one sample at a time in O(1) (running sums, Welford's update), so a run of
// many short launches does not spend quadratic time deciding whether to stop.
class RepeatTracker {
 public:
  explicit RepeatTracker(RepeatRule rule) : rule_(rule) {}
  void add(double sample);
  bool more() const;
  std::size_t count() const { return count_; }

 private:
  RepeatRule rule_;
  std::size_t count_ = 0;
  double sum_ = 0, mean_ = 0, m2_ = 0;
};

}  // namespace oaprof::bench
