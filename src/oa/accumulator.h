// Folds a sequence of reports of one counter stream into running totals, so that an interval
// longer than any counter's wrap time is exact as long as consecutive reports come closer together
// than max_safe_read_interval_ns. A gap too long to trust is flagged, never silently absorbed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "oa/delta.h"
#include "oa/report.h"

namespace oaprof::oa {

class Accumulator {
 public:
  // `max_interval_ns` is the longest gap between two reports that is trusted; usually
  // max_safe_read_interval_ns(max GPU frequency, EUs, timestamp_hz).
  Accumulator(double timestamp_hz, double max_interval_ns);

  // Folds the delta from the previous report (if any) into the total.
  void add(const Report& report);
  // The same for raw report bytes of `layout`, without decoding them into a Report. Do not mix
  // with add() between two reset()s.
  void add_raw(const FormatLayout& layout, std::span<const std::uint8_t> bytes);
  // Folds a block of consecutive raw reports (a read() of a perf stream, a file): the path for
  // long captures. Totals are exact for the same reason as add(): each pair is checked for wraps
  // (a cheap test that no counter went down, then an exact count when one did) and the sum is
  // last − first + wraps × 2^width. Throws std::invalid_argument when `reports` is not a whole
  // number of reports.
  void add_raw_batch(const FormatLayout& layout, std::span<const std::uint8_t> reports);
  // Reports were lost between the previous report and the next. The counters themselves kept
  // counting, so the next delta is still exact if the gap is short enough (add() checks that);
  // the gap is only counted.
  void mark_lost();
  // Starts over: no previous report, zero totals.
  void reset();

  const CounterDeltas& total() const { return total_; }
  std::uint64_t reports() const { return reports_; }
  std::uint64_t untrusted_intervals() const { return untrusted_intervals_; }
  std::uint64_t lost_gaps() const { return lost_gaps_; }
  // True when every folded interval was short enough for its delta to be exact.
  bool exact() const { return untrusted_intervals_ == 0; }

 private:
  double timestamp_hz_;
  double max_interval_ns_;
  double max_interval_ticks_;           // the same in timestamp ticks, for the raw path
  std::uint32_t max_interval_ticks32_;  // and as an integer, capped at half the 32-bit range
  std::optional<Report> previous_;
  // The raw path keeps a copy of the last report of the previous block.
  std::array<std::uint8_t, kMaxReportBytes> anchor_{};
  bool has_anchor_ = false;
  CounterDeltas total_;
  std::uint64_t reports_ = 0;
  std::uint64_t untrusted_intervals_ = 0;
  std::uint64_t lost_gaps_ = 0;
};

}  // namespace oaprof::oa
