// Reads the counters on a thread at a fixed period and folds consecutive snapshots into deltas,
// so that windows longer than a counter's wrap time (32-bit GPU_TICKS wraps in 3.7 s at 1.15 GHz)
// stay exact. It emits one row per interval (a timeline: `--system-wide --interval`) or one row
// for everything between start() and stop() (`--mode app`, `--system-wide` alone).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "oa/accumulator.h"
#include "session/session.h"

namespace oaprof::session {

struct SamplerOptions {
  // Must stay well under the shortest wrap time; 500 ms leaves a factor of 3 at 2.4 GHz.
  std::chrono::milliseconds read_period{500};
  std::optional<std::chrono::milliseconds> row_interval;  // none: one row at stop()
  std::string label = "(interval)";                       // the row's kernel column
  std::uint32_t pid = 0;
  // For the accumulator: the timestamp clock, and the longest read gap whose deltas are exact
  // (oa::max_safe_read_interval_ns); a longer gap flags the row interval_too_long.
  double timestamp_hz = 12e6;
  double max_interval_ns = 1e9;
};

class Sampler {
 public:
  Sampler(Session& session, SamplerOptions options);
  ~Sampler();  // stop()s
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  void start();
  // Takes the last snapshot and emits what is left. Idempotent; never throws: when a snapshot
  // fails (the source is gone), sampling ends there, the row is emitted with what was read up to
  // then and flagged sampling_failed, and failure() says why.
  void stop();

  std::uint64_t reads() const { return reads_; }
  // Why sampling ended early; empty when it did not. Read after stop().
  const std::string& failure() const { return failure_; }

 private:
  void loop();
  void read_and_fold();
  void emit_row();
  void emit_partial_row();

  Session& session_;
  SamplerOptions options_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool running_ = false;
  oa::Accumulator accumulator_;                     // this row's reads, folded wrap-safe
  std::optional<power::EnergyReading> row_energy_;  // at the start of the current row
  gpu::PerfStreamCounts row_stream_;                // the perf stream's counts then
  // A context switch reloaded the context-saved registers (Gen8–11 flex) during this row.
  bool row_config_lost_ = false;
  // The read this row starts from was interrupted (its skew is this row's and the last one's).
  bool row_starts_interrupted_ = false;
  std::uint64_t row_start_ns_ = 0;
  std::uint64_t reads_ = 0;
  std::string failure_;
};

}  // namespace oaprof::session
