#include "launch/sampled_launches.h"

#include <algorithm>
#include <limits>
#include <span>
#include <utility>

#include "oa/sampled_attribution.h"

namespace oaprof::launch {
namespace wire = oa::wire;

void SampledLaunches::add(void* event, wire::Launch record) {
  running_.push_back({next_seq_++, event, std::move(record)});
}

void SampledLaunches::complete(Running& r, const Completion& c) {
  wire::Launch& rec = r.record;
  rec.profiled = true;
  rec.queued_ns = c.queued_ns;
  rec.submit_ns = c.submit_ns;
  rec.start_ns = c.start_ns;
  rec.end_ns = c.end_ns;
  // A window mapped backwards (an end before its start: a calibration off by more than the
  // kernel) is taken as empty at its start rather than refused.
  const std::uint64_t end = std::max(c.host_start_ns, c.host_end_ns);
  rec.sampled = wire::SampledWindow{c.host_start_ns, end, 0, c.clock};
  rec.flags |= wire::kLaunchSampled;
  spans_.push_back({r.seq, c.host_start_ns, end});
  // Every launch enqueued so far may have run beside it; none enqueued from now on can have,
  // since it completed before they were enqueued.
  done_.push_back({r.seq, next_seq_, std::move(rec)});
}

std::uint32_t SampledLaunches::overlap_ppm(const Done& d) const {
  std::vector<oa::Window> windows{{d.record.sampled->host_start_ns, d.record.sampled->host_end_ns}};
  for (const Span& s : spans_) {
    if (s.seq != d.seq && s.seq < d.barrier) windows.push_back({s.start_ns, s.end_ns});
  }
  const double share = oa::overlap_shares(windows).front();
  return static_cast<std::uint32_t>(std::clamp(share, 0.0, 1.0) * 1e6 + 0.5);
}

std::vector<wire::Launch> SampledLaunches::harvest(const Ask& ask,
                                                    const std::function<void(void*)>& release) {
  for (auto it = running_.begin(); it != running_.end();) {
    const Completion c = ask(it->event, it->record);
    if (c.state == Completion::State::kRunning) {
      ++it;
      continue;
    }
    release(it->event);
    if (c.state == Completion::State::kFailed) {
      ++failed_;
    } else {
      complete(*it, c);
    }
    it = running_.erase(it);
  }
  // Ready: every launch that could have run beside it has completed (or failed).
  const std::uint64_t oldest_running =
      running_.empty() ? std::numeric_limits<std::uint64_t>::max() : running_.front().seq;
  std::vector<wire::Launch> ready;
  std::vector<Done> still;
  std::sort(done_.begin(), done_.end(), [](const Done& a, const Done& b) { return a.seq < b.seq; });
  for (Done& d : done_) {
    if (d.barrier > oldest_running) {
      still.push_back(std::move(d));
      continue;
    }
    d.record.sampled->overlap_ppm = overlap_ppm(d);
    ready.push_back(std::move(d.record));
  }
  done_ = std::move(still);
  prune();
  return ready;
}

void SampledLaunches::prune() {
  // A launch not yet ready starts at its window's start, or (still running) no earlier than its
  // program's call: a window that ended before all of those overlaps none of them.
  std::uint64_t earliest = std::numeric_limits<std::uint64_t>::max();
  for (const Done& d : done_) earliest = std::min(earliest, d.record.sampled->host_start_ns);
  for (const Running& r : running_) earliest = std::min(earliest, r.record.api_ns);
  std::erase_if(spans_, [&](const Span& s) { return s.end_ns < earliest; });
}

}  // namespace oaprof::launch
