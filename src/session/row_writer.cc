#include "session/row_writer.h"

#include <algorithm>
#include <utility>

namespace oaprof::session {

RowWriter::RowWriter(Session::Sink write, std::function<void()> flush, std::size_t max_queued)
    : write_(std::move(write)),
      flush_(std::move(flush)),
      max_queued_(std::max<std::size_t>(max_queued, 1)) {
  thread_ = std::thread([this] { run(); });
}

RowWriter::~RowWriter() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  work_.notify_one();
  thread_.join();
}

void RowWriter::rethrow_locked() const {
  if (error_) std::rethrow_exception(error_);
}

void RowWriter::add(oa::LaunchRecord record, const power::EnergyReading* begin,
                    const power::EnergyReading* end) {
  Row row{std::move(record), begin ? std::optional(*begin) : std::nullopt,
          end ? std::optional(*end) : std::nullopt};
  bool first_of_batch = false, full = false;
  {
    std::unique_lock lock(mu_);
    // The writer is behind: wait for it (it writes what is queued at once, without its window).
    idle_.wait(lock, [&] { return queue_.size() < max_queued_ || error_ != nullptr; });
    rethrow_locked();
    first_of_batch = queue_.empty();
    queue_.push_back(std::move(row));
    ++queued_;
    full = queue_.size() >= max_queued_;
  }
  // The writer is only waiting for the first row of a batch, or to hear that the queue is full;
  // other rows it gathers by itself.
  if (first_of_batch || full) work_.notify_one();
}

Session::Sink RowWriter::sink() {
  return [this](oa::LaunchRecord&& r, const power::EnergyReading* begin,
                const power::EnergyReading* end) { add(std::move(r), begin, end); };
}

void RowWriter::drain() {
  std::unique_lock lock(mu_);
  const std::uint64_t target = queued_;
  ++drain_requests_;
  work_.notify_one();
  idle_.wait(lock, [&] { return written_ >= target; });
  rethrow_locked();
}

std::uint64_t RowWriter::rows_written() const {
  std::lock_guard lock(mu_);
  return written_;
}

void RowWriter::run() {
  std::vector<Row> batch;
  std::unique_lock lock(mu_);
  for (;;) {
    work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything is written
    // Gather the rows of the next few milliseconds into this batch, unless someone waits.
    const std::uint64_t drains = drain_requests_;
    work_.wait_for(lock, kBatchWindow, [&] {
      return stop_ || drain_requests_ != drains || queue_.size() >= max_queued_;
    });
    batch.swap(queue_);
    idle_.notify_all();  // room again for an add() that waits
    const bool failed = error_ != nullptr;
    lock.unlock();
    std::exception_ptr error;
    if (!failed) {
      try {
        for (Row& r : batch) {
          write_(std::move(r.record), r.begin ? &*r.begin : nullptr, r.end ? &*r.end : nullptr);
        }
        // One flush for the whole batch: when launches come faster than rows are written, the
        // rows queued meanwhile go out together.
        flush_();
      } catch (...) {
        error = std::current_exception();
      }
    }
    lock.lock();
    if (error && !error_) error_ = error;
    written_ += batch.size();
    batch.clear();
    idle_.notify_all();
  }
}

}  // namespace oaprof::session
