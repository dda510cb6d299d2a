// The layer's side of sampled attribution (--attribution sampled): launches go to the queue at
// once, with no drain and no snapshot, and each is remembered with its event until the event is
// seen complete at one of the program's own sync points. Then its window (its OpenCL start and
// end, mapped onto the host's clock) is known, and so are those of the launches that could have
// run beside it: every launch enqueued before it was seen complete, except the younger ones of
// its own in-order queue. Once all of those are complete too, its record is ready, with the
// share of its window they shared. No OpenCL here:
// the interceptor asks the events, this keeps the books (unit-tested alone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "ipc/wire.h"

namespace oaprof::attach {

class SampledLaunches {
 public:
  // At most this many launches wait for their events (a few MB of books); past it the
  // interceptor waits for the oldest, since a program that never synchronises would otherwise
  // grow them without end. A CPU device runs tiny kernels slower than a program enqueues them:
  // 1024 made launch_overhead_bench's 10,000 back-to-back launches wait at every launch.
  static constexpr std::size_t kMaxInFlight = 16384;

  // What an event says when asked: still running, complete with its window on the host's clock
  // (and the OpenCL times of the record), or failed (no window: the record is dropped). `record`
  // is the launch's, as add() was given it; the asker may complete it with what is known only
  // once the launch ran (a Level Zero indirect launch's group counts).
  struct Completion {
    enum class State { kRunning, kComplete, kFailed } state = State::kRunning;
    std::uint64_t host_start_ns = 0, host_end_ns = 0;
    std::uint64_t queued_ns = 0, submit_ns = 0, start_ns = 0, end_ns = 0;
    oa::ClockCalibration clock = oa::ClockCalibration::kDeviceAndHostTimer;
  };
  using Ask = std::function<Completion(void* event, oa::Launch& record)>;

  // A launch just enqueued, `record.api_ns` being the host time of the program's call (no
  // launch starts before it), on `record.queue`, which runs its launches in order unless
  // `in_order` is false. The books own `event` until it is handed to `release`.
  void add(void* event, oa::Launch record, bool in_order = true);
  std::size_t in_flight() const { return running_.size(); }
  void* oldest_event() const { return running_.empty() ? nullptr : running_.front().event; }
  // When the oldest running launch was called (its record's api_ns); 0 when none runs.
  std::uint64_t oldest_api_ns() const {
    return running_.empty() ? 0 : running_.front().record.api_ns;
  }

  // Asks the running launches' events, oldest first; each one that completed or failed is
  // handed to `release`. `Scope::kAll` asks every one (at a sync point); `kOldest` stops at the
  // first still running (at a launch: on an in-order queue the younger ones run after it, and
  // asking each of a long queue at every launch would cost the program per launch what it
  // has queued). Returns the records that are ready, in launch order, with their windows and
  // overlap shares; and counts the failed ones in failed().
  enum class Scope { kAll, kOldest };
  std::vector<oa::Launch> harvest(const Ask& ask, const std::function<void(void*)>& release,
                                  Scope scope = Scope::kAll);
  std::uint64_t failed() const { return failed_; }
  // Launches complete but not yet ready (waiting on an older one that still runs).
  std::size_t waiting() const { return done_.size(); }
  // Completed windows kept for the overlap of launches not yet ready.
  std::size_t windows_kept() const { return spans_.size(); }
  // How many kept windows the overlap shares have looked at, all launches together: a few per
  // launch, not all kept ones per launch (a sync point completing N launches at once).
  std::uint64_t windows_examined() const { return windows_examined_; }

 private:
  struct Running {
    std::uint64_t seq;
    void* event;
    oa::Launch record;
  };
  // Per queue with launches running: how many, whether it runs them in order, and the latest
  // end of its completed launches (an in-order queue's running launches start after it).
  struct Queue {
    std::size_t running = 0;
    bool in_order = true;
    std::uint64_t floor_ns = 0;
  };
  struct Done {
    std::uint64_t seq;
    std::uint64_t barrier;  // launches with a smaller seq may have run beside it
    oa::Launch record;
  };
  struct Span {
    std::uint64_t seq, start_ns, end_ns;
  };
  void complete(Running& r, const Completion& c);
  std::uint32_t overlap_ppm(const Done& d);
  // Forgets the windows no waiting or running launch can overlap any more.
  void prune();
  // The earliest a running launch can start: per queue, its oldest running launch's call, or on
  // an in-order queue the end of its latest completed launch when that is later.
  std::uint64_t earliest_running_start() const;

  std::uint64_t next_seq_ = 0;
  std::deque<Running> running_;
  std::vector<Done> done_;
  // Completed windows that may still overlap a launch not yet ready, in order of their start,
  // and the longest of them: a window starting more than that before a launch's start ended
  // before it, so a launch's neighbours lie in a short range of them.
  std::vector<Span> spans_;
  std::uint64_t longest_span_ns_ = 0;
  std::uint64_t windows_examined_ = 0;
  std::map<std::uint64_t, Queue> queues_;
  static constexpr std::size_t kMaxIdleQueues = 256;
  std::uint64_t failed_ = 0;
};

// When a layer asks its running launches' events between the program's sync points (issue 33).
// A runtime may charge more for the two questions while its queue runs: NVIDIA's OpenCL took
// 2.7–3.3 µs a launch for them then and 1.2 µs after a clFinish in the layer's timers (round
// six), 0.5–0.7 µs a launch more mid-run in a program of its own (round eight, docs/attach.md).
// So a program that synchronises is asked at its sync points only, and between them a layer
// asks once kAskPast launches wait (every kAskEvery launches then), or once the oldest has
// waited kAskAfterNs: its row must reach the counter timeline while that still holds the reads
// around it (10 s of them). Both layers, OpenCL and Level Zero, ask by it.
class AskPolicy {
 public:
  static constexpr std::size_t kAskPast = 256;
  static constexpr std::uint32_t kAskEvery = 16;
  static constexpr std::uint64_t kAskAfterNs = 50'000'000;
  // An old launch still running (a long kernel ahead of short ones) is asked again at most this
  // often, not at every launch behind it.
  static constexpr std::uint64_t kAskAgainNs = 1'000'000;

  // Whether to ask the oldest running launches now, `now_ns` being the host time of the launch
  // just added to `books` (its call's).
  bool due(const SampledLaunches& books, std::uint64_t now_ns);

 private:
  std::uint32_t launches_since_ask_ = 0;
  std::uint64_t last_age_ask_ns_ = 0;
};

}  // namespace oaprof::attach
