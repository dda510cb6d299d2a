#include "session/sampler.h"

#include "base/monotonic_clock.h"

namespace oaprof::session {
namespace {

using base::monotonic_ns;

}  // namespace

Sampler::Sampler(Session& session, SamplerOptions options)
    : session_(session),
      options_(std::move(options)),
      accumulator_(options_.timestamp_hz, options_.max_interval_ns) {}

Sampler::~Sampler() { stop(); }

void Sampler::start() {
  std::lock_guard lock(mu_);
  Session::SampleNotes notes;
  accumulator_.add(session_.sample(&row_energy_, &notes));
  row_starts_interrupted_ = notes.readout_interrupted;
  row_stream_ = session_.perf_stream_counts();
  reads_ = 1;
  row_start_ns_ = monotonic_ns();
  running_ = true;
  thread_ = std::thread([this] { loop(); });
}

void Sampler::stop() {
  {
    std::lock_guard lock(mu_);
    if (!running_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  std::lock_guard lock(mu_);
  running_ = false;
  // The last row may fail to be written too (a full disk): the row writer reports that when
  // oaprof drains it, and stop() stays free of exceptions as its callers expect.
  try {
    if (!failure_.empty()) {
      emit_partial_row();
      return;
    }
    try {
      emit_row();
    } catch (const std::exception& e) {
      failure_ = e.what();
      emit_partial_row();
    }
  } catch (const std::exception&) {
  }
}

void Sampler::loop() {
  std::unique_lock lock(mu_);
  const bool timeline = options_.row_interval.has_value();
  const auto row_interval = options_.row_interval.value_or(std::chrono::milliseconds(0));
  auto next_read = std::chrono::steady_clock::now() + options_.read_period;
  auto next_row = std::chrono::steady_clock::now() + row_interval;
  while (!stopping_) {
    const auto wake = timeline ? std::min(next_read, next_row) : next_read;
    if (cv_.wait_until(lock, wake, [this] { return stopping_; })) break;
    const auto now = std::chrono::steady_clock::now();
    next_read = now + options_.read_period;
    // An exception must not leave the thread (that would end the program): a source that fails
    // (oaprofd gone) ends the sampling, and stop() writes what was read up to then.
    try {
      if (timeline && now >= next_row) {
        emit_row();
        next_row += row_interval;
      } else {
        read_and_fold();
      }
    } catch (const std::exception& e) {
      failure_ = e.what();
      return;
    }
  }
}

void Sampler::read_and_fold() {
  Session::SampleNotes notes;
  accumulator_.add(session_.sample(nullptr, &notes));
  row_config_lost_ = row_config_lost_ || notes.config_lost;
  // An interrupted read inside the row is not flagged: its skew moves counts from one of the
  // row's intervals to the next, and the row's total keeps them.
  ++reads_;
}

void Sampler::emit_row() {
  // The row ends with a snapshot of its own, read together with the energy; the next row starts
  // from both.
  std::optional<power::EnergyReading> end;
  Session::SampleNotes notes;
  const oa::Report now = session_.sample(&end, &notes);
  ++reads_;
  accumulator_.add(now);
  oa::LaunchRecord r;
  r.pid = options_.pid;
  r.launch.kernel_name = options_.label;
  r.launch.api_ns = row_start_ns_;
  r.deltas = accumulator_.total();
  if (!accumulator_.exact()) r.flags.emplace_back("interval_too_long");
  // The snapshot that found the registers reloaded also put them back: the counters were wrong
  // for part of this row's time, not the next one's.
  if (row_config_lost_ || notes.config_lost) r.flags.emplace_back("config_lost");
  row_config_lost_ = false;
  // A row's counts are skewed by the reads it starts and ends with.
  if (row_starts_interrupted_ || notes.readout_interrupted) {
    r.flags.emplace_back("readout_interrupted");
  }
  row_starts_interrupted_ = notes.readout_interrupted;
  const gpu::PerfStreamCounts stream = session_.perf_stream_counts();
  add_stream_loss_flags(row_stream_, stream, r.flags);
  row_stream_ = stream;
  const bool energy = row_energy_ && end;
  session_.emit(std::move(r), energy ? &*row_energy_ : nullptr, energy ? &*end : nullptr);
  row_energy_ = end;
  accumulator_.reset();
  accumulator_.add(now);  // the next row starts from this snapshot
  row_start_ns_ = monotonic_ns();
}

void Sampler::emit_partial_row() {
  oa::LaunchRecord r;
  r.pid = options_.pid;
  r.launch.kernel_name = options_.label;
  r.launch.api_ns = row_start_ns_;
  r.deltas = accumulator_.total();  // up to the last snapshot that could be read
  r.flags.emplace_back("sampling_failed");
  if (!accumulator_.exact()) r.flags.emplace_back("interval_too_long");
  if (row_config_lost_) r.flags.emplace_back("config_lost");
  if (row_starts_interrupted_) r.flags.emplace_back("readout_interrupted");
  session_.emit(std::move(r));
  accumulator_.reset();
}

}  // namespace oaprof::session
