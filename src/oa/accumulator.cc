#include "oa/accumulator.h"

#include <stdexcept>

namespace oaprof::oa {

Accumulator::Accumulator(double timestamp_hz, double max_interval_ns)
    : timestamp_hz_(timestamp_hz),
      max_interval_ns_(max_interval_ns),
      max_interval_ticks_(max_interval_ns * timestamp_hz / 1e9) {}

void Accumulator::add(const Report& report) {
  ++reports_;
  if (previous_) {
    const CounterDeltas d =
        compute_deltas_checked(*previous_, report, timestamp_hz_, max_interval_ns_);
    if (d.interval_too_long) ++untrusted_intervals_;
    accumulate(total_, d);
  } else {
    // The first report fixes which counters the stream carries.
    total_.has_gpu_ticks = report.has_gpu_ticks;
    total_.a_present = report.a_present;
  }
  previous_ = report;
}

void Accumulator::add_raw(const FormatLayout& layout, std::span<const std::uint8_t> bytes) {
  ++reports_;
  if (!previous_raw_.empty()) {
    const std::uint64_t interval = accumulate_raw(layout, previous_raw_, bytes, total_);
    const bool too_long =
        interval > 0x7FFFFFFFu || static_cast<double>(interval) > max_interval_ticks_;
    if (too_long) {
      ++untrusted_intervals_;
      total_.interval_too_long = true;
    }
  } else if (bytes.size() < static_cast<std::size_t>(layout.size_bytes)) {
    throw std::invalid_argument("Accumulator::add_raw: a report shorter than its format");
  }
  previous_raw_ = bytes;
}

void Accumulator::mark_lost() { ++lost_gaps_; }

void Accumulator::reset() {
  previous_.reset();
  previous_raw_ = {};
  total_ = CounterDeltas{};
  reports_ = 0;
  untrusted_intervals_ = 0;
  lost_gaps_ = 0;
}

}  // namespace oaprof::oa
