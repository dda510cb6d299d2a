// Sampled attribution (issue 17), its arithmetic: the counters are read periodically and never
// around a launch, and each launch gets the counters' growth between its start and its end, each
// edge interpolated linearly between the two reads around it. Launches that ran at the same time
// share the counters: the hardware counts them together, so each says how much of its window it
// shared instead of pretending to split them. The periodic reads and the launches' OpenCL times
// come from elsewhere; this is what turns them into rows.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "oa/delta.h"

namespace oaprof::oa {

// A launch's window on the timeline's clock, in ns: [start_ns, end_ns].
struct Window {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

// A window's counters as the timeline gives them.
struct SampledDeltas {
  CounterDeltas deltas;
  // The share of the window whose counts were interpolated rather than read: the read periods
  // its edges fall in, over its length (0 when both edges fall on reads). Interpolation assumes
  // the counters grew evenly inside those periods; a kernel that starts or ends inside one makes
  // the busy and EU counters the most wrong, by up to a quarter of a period's growth at each
  // edge. A window between two reads (below) has the one period it lies in over its length:
  // above 1, its figures are mostly interpolation; infinite for a window of no length.
  double error_bound = 0;
  // No read lies inside the window (it is shorter than a read period, or has no length): its
  // counts are all a share of one period's growth, interpolated, never read.
  bool between_reads = false;
};

// A point `part` ns into a read period of `period` ns (part <= period): each counter there is
// begin + llround((end − begin) × f), f = part / period, both in long double, as the timeline
// has always interpolated. Where long double is x87's extended format (64-bit significands,
// rounded to nearest even), apply() reaches the same count in integers: the two significands'
// 128-bit product rounded to 64 bits as the x87 unit rounds it, then to a whole count half away
// from zero. Elsewhere, and for counts from 2^62 on, the long double path runs. It cost a
// launch's attribution (two edges, 84 counters) 1.66 µs on the 2-core VM, most of oaprof's time
// per sampled record, in llroundl and in stalls reloading x87 values; 1.15 µs now (issue 33).
struct PeriodShare {
  PeriodShare(std::uint64_t part, std::uint64_t period);
  std::uint64_t apply(std::uint64_t begin, std::uint64_t end) const;

  long double f;  // part / period
  // f = significand × 2^(exponent − 63) where long double is x87's (f lies in [0, 1]: zero, or
  // normalised with its leading bit set); 0 when f is 0.
  std::uint64_t significand = 0;
  int exponent = 0;
};

// The counters' running totals at the periodic reads, in time order.
class CounterTimeline {
 public:
  // A read at `time_ns`: `total` is the counters' growth since the timeline's first read (an
  // Accumulator's total, wraps undone), `untrusted_intervals` how many intervals up to it were
  // too long to be exact (Accumulator::untrusted_intervals()). Throws std::invalid_argument when
  // `time_ns` is not after the last read's.
  void add(std::uint64_t time_ns, const CounterDeltas& total,
           std::uint64_t untrusted_intervals = 0);
  // Forgets the reads that no window starting at or after `time_ns` needs: all before it but the
  // last.
  void forget_before(std::uint64_t time_ns);
  std::size_t size() const { return points_.size(); }

  // The counters over `w`. nullopt unless the timeline covers it: a read at or before its start,
  // and one at or after its end. The window's deltas are flagged interval_too_long when an
  // interval that was too long lies between the reads around it.
  std::optional<SampledDeltas> attribute(const Window& w) const;

 private:
  struct Point {
    std::uint64_t time_ns;
    CounterDeltas total;
    std::uint64_t untrusted;
  };
  // Where `time_ns` lies: between points[before] and points[after] (the same read when it falls
  // on one), the length of that period (0 on a read), and the share of it up to time_ns, which
  // interpolates the totals there.
  struct At {
    std::uint64_t period_ns;
    std::size_t before;
    std::size_t after;
    PeriodShare share;
  };
  At at(std::uint64_t time_ns) const;
  // The error bound and between_reads of a window from `begin` to `end` (SampledDeltas).
  void bound_error(const At& begin, const At& end, std::uint64_t length_ns, SampledDeltas& s) const;
  std::deque<Point> points_;  // forgotten from the front as reads come in at the back
};

// Per window, the share of it (0 to 1) during which at least one other window was open too. A
// window of zero length shares nothing.
std::vector<double> overlap_shares(std::span<const Window> windows);

// Maps the device's clock (OpenCL's profiling times) onto the timeline's (the host's monotonic
// clock, when the reads are timed there), from calibration pairs (device ns, host ns) such as
// clGetDeviceAndHostTimer gives: the least-squares line through them, or the offset alone from a
// single pair.
class ClockMap {
 public:
  // Throws std::invalid_argument without pairs, or with two or more that all have the same
  // device time.
  static ClockMap fit(std::span<const std::pair<std::uint64_t, std::uint64_t>> pairs);
  std::uint64_t to_host(std::uint64_t device_ns) const;
  // How far the furthest pair lies from the line: the calibration's own error.
  double max_residual_ns() const { return max_residual_ns_; }
  double slope() const { return static_cast<double>(slope_); }

 private:
  // host = host0 + slope × (device − device0): centred on the pairs' means, and in long double
  // (64-bit mantissa on x86), so that clock values near 2^60 ns keep their nanoseconds.
  long double device0_ = 0, host0_ = 0, slope_ = 1;
  double max_residual_ns_ = 0;
};

}  // namespace oaprof::oa
