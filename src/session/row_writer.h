// Writes a session's rows on a thread of its own. Formatting a row and writing it to CSV and JSON
// takes tens of microseconds; done on the thread that answers snapshots, it would sit between a
// launch's record and the next launch's 'before' snapshot of a program that launches back to
// back. Rows are written in the order they arrive, gathered for up to kBatchWindow after the
// first of a batch (one wake-up of the writer per batch, not per launch) and flushed at the end
// of each batch, so the files lag the run by a few milliseconds at most, and a crash of the
// profiled program loses nothing (oaprof drains the queue before it ends).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "session/session.h"

namespace oaprof::session {

class RowWriter {
 public:
  static constexpr std::chrono::milliseconds kBatchWindow{2};
  // Rows queued at most: past it add() waits for the writer (a row is never dropped). A program
  // whose launches come faster than rows are written (tiny kernels on a CPU device sharing the
  // writer's cores) otherwise grew oaprof by a kB or so a row: 400 MB after 1 M launches.
  static constexpr std::size_t kMaxQueued = 4096;

  // `write` formats and writes one row (to buffers); `flush` pushes what was written out and
  // throws if the output failed (a full disk). Both run on the writer's thread only.
  RowWriter(Session::Sink write, std::function<void()> flush, std::size_t max_queued = kMaxQueued);
  // Writes and flushes what is queued, then stops the thread. Never throws: call drain() first to
  // hear of errors.
  ~RowWriter();
  RowWriter(const RowWriter&) = delete;
  RowWriter& operator=(const RowWriter&) = delete;

  // Queues one row (the record is kept, the readings copied), after waiting for room when
  // `max_queued` rows wait already. Throws the first error a write or flush met, so the client
  // whose launch it was hears that its rows are not being kept.
  void add(oa::LaunchRecord record, const power::EnergyReading* begin,
           const power::EnergyReading* end);
  // A Session::Sink that queues here.
  Session::Sink sink();
  // Returns once every row queued so far is written and flushed; throws the first error met.
  void drain();
  std::uint64_t rows_written() const;

 private:
  struct Row {
    oa::LaunchRecord record;
    std::optional<power::EnergyReading> begin, end;
  };
  void run();
  void rethrow_locked() const;

  Session::Sink write_;
  std::function<void()> flush_;
  std::size_t max_queued_;
  mutable std::mutex mu_;
  std::condition_variable work_;
  std::condition_variable idle_;
  std::vector<Row> queue_;
  std::uint64_t queued_ = 0;   // rows ever queued
  std::uint64_t written_ = 0;  // rows written and flushed (or failed)
  bool stop_ = false;
  std::uint64_t drain_requests_ = 0;  // a drain() cuts the batch window short
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace oaprof::session
