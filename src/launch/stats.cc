#include "launch/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace oaprof::launch {

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
  if (samples.size() >= max_repeats) return false;
  if (samples.size() < 2) return true;  // no standard error from one sample
  const Stats s = summarize(samples);
  if (s.sum < min_total) return true;
  return s.mean > 0 && s.stderr_ / s.mean > max_rel_stderr;
}

}  // namespace oaprof::launch
