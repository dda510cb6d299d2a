#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace oaprof::bench {

Stats summarize(std::span<const double> samples) {
  Stats s;
  s.count = samples.size();
  if (s.count == 0) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  s.min = sorted.front();
  s.max = sorted.back();
  s.sum = std::accumulate(sorted.begin(), sorted.end(), 0.0);
  s.mean = s.sum / static_cast<double>(n);
  if (n > 1) {
    double ss = 0;
    for (double v : sorted) ss += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(n - 1));
    s.stderr_ = s.stddev / std::sqrt(static_cast<double>(n));
  }
  return s;
}

bool RepeatRule::more(std::span<const double> samples) const {
  RepeatTracker t(*this);
  for (double v : samples) t.add(v);
  return t.more();
}

void RepeatTracker::add(double sample) {
  ++count_;
  sum_ += sample;
  const double delta = sample - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (sample - mean_);
}

bool RepeatTracker::more() const {
  if (count_ >= rule_.max_repeats) return false;
  if (count_ < 2) return true;  // no standard error from one sample
  if (sum_ < rule_.min_total) return true;
  const double n = static_cast<double>(count_);
  const double stderr_ = std::sqrt(m2_ / (n - 1)) / std::sqrt(n);
  return mean_ > 0 && stderr_ / mean_ > rule_.max_rel_stderr;
}

}  // namespace oaprof::bench
