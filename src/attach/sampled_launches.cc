#include "attach/sampled_launches.h"

#include <algorithm>
#include <limits>
#include <span>
#include <utility>

#include "oa/sampled_attribution.h"

namespace oaprof::attach {
namespace wire = ipc::wire;

void SampledLaunches::add(void* event, wire::Launch record, bool in_order) {
  Queue& q = queues_[record.queue];
  q.running += 1;
  q.in_order = in_order;
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
  // Launches mostly complete in order of their start: an append, as a rule.
  const auto at =
      std::upper_bound(spans_.begin(), spans_.end(), c.host_start_ns,
                       [](std::uint64_t start, const Span& s) { return start < s.start_ns; });
  spans_.insert(at, {r.seq, c.host_start_ns, end});
  longest_span_ns_ = std::max(longest_span_ns_, end - c.host_start_ns);
  Queue& q = queues_[rec.queue];
  q.floor_ns = std::max(q.floor_ns, end);
  // Every launch enqueued so far may have run beside it; none enqueued from now on can have,
  // since it completed before they were enqueued.
  done_.push_back({r.seq, next_seq_, std::move(rec)});
}

std::uint32_t SampledLaunches::overlap_ppm(const Done& d) {
  const std::uint64_t start = d.record.sampled->host_start_ns, end = d.record.sampled->host_end_ns;
  auto shares = [&](const Span& s) {
    return s.start_ns < end && start < s.end_ns && s.seq != d.seq && s.seq < d.barrier;
  };
  // Only windows that start before this one ends, and no earlier than the longest kept one
  // before its start, can share it: a short range of spans_ (sorted by start), not all of it.
  auto by_start = [](const Span& s, std::uint64_t t) { return s.start_ns < t; };
  const auto first = std::lower_bound(spans_.begin(), spans_.end(),
                                      start - std::min(start, longest_span_ns_), by_start);
  const auto last = std::lower_bound(first, spans_.end(), end, by_start);
  windows_examined_ += static_cast<std::uint64_t>(last - first);
  // Most launches share nothing: found without building the sweep's input.
  if (std::none_of(first, last, shares)) return 0;
  std::vector<oa::Window> windows{{start, end}};
  for (auto s = first; s != last; ++s) {
    if (shares(*s)) windows.push_back({s->start_ns, s->end_ns});
  }
  const double share = oa::overlap_shares(windows).front();
  return static_cast<std::uint32_t>(std::clamp(share, 0.0, 1.0) * 1e6 + 0.5);
}

std::vector<wire::Launch> SampledLaunches::harvest(const Ask& ask,
                                                   const std::function<void(void*)>& release,
                                                   Scope scope) {
  for (auto it = running_.begin(); it != running_.end();) {
    const Completion c = ask(it->event, it->record);
    if (c.state == Completion::State::kRunning) {
      if (scope == Scope::kOldest) break;
      ++it;
      continue;
    }
    release(it->event);
    if (auto q = queues_.find(it->record.queue); q != queues_.end()) q->second.running -= 1;
    if (c.state == Completion::State::kFailed) {
      ++failed_;
    } else {
      complete(*it, c);
    }
    it = running_.erase(it);
  }
  // Ready: every launch that could have run beside it has completed (or failed), or those still
  // running cannot start before it ended (the younger launches of its own in-order queue).
  const std::uint64_t oldest_running =
      running_.empty() ? std::numeric_limits<std::uint64_t>::max() : running_.front().seq;
  const std::uint64_t earliest_start = earliest_running_start();
  std::vector<wire::Launch> ready;
  std::vector<Done> still;
  std::sort(done_.begin(), done_.end(), [](const Done& a, const Done& b) { return a.seq < b.seq; });
  for (Done& d : done_) {
    if (d.barrier > oldest_running && d.record.sampled->host_end_ns > earliest_start) {
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

std::uint64_t SampledLaunches::earliest_running_start() const {
  std::uint64_t earliest = std::numeric_limits<std::uint64_t>::max();
  std::size_t queues_left = 0;
  for (const auto& [handle, q] : queues_) queues_left += q.running > 0;
  // Oldest first: a queue's oldest running launch made its call before the younger ones, and
  // on an in-order queue none of them starts before the latest completed one ended.
  std::map<std::uint64_t, bool> seen;
  for (auto it = running_.begin(); it != running_.end() && queues_left > 0; ++it) {
    const Queue& q = queues_.at(it->record.queue);
    std::uint64_t start = it->record.api_ns;
    if (q.in_order) {
      if (!seen.emplace(it->record.queue, true).second) continue;
      --queues_left;
      start = std::max(start, q.floor_ns);
    } else if (seen.emplace(it->record.queue, true).second) {
      --queues_left;  // out of order: every running launch of it may start at its call
    }
    earliest = std::min(earliest, start);
  }
  return earliest;
}

void SampledLaunches::prune() {
  // A launch not yet ready starts at its window's start, and one still running no earlier than
  // earliest_running_start(): a window that ended before all of those overlaps none of them.
  std::uint64_t earliest = earliest_running_start();
  for (const Done& d : done_) earliest = std::min(earliest, d.record.sampled->host_start_ns);
  std::erase_if(spans_, [&](const Span& s) { return s.end_ns < earliest; });  // keeps the order
  longest_span_ns_ = 0;
  for (const Span& s : spans_) longest_span_ns_ = std::max(longest_span_ns_, s.end_ns - s.start_ns);
  // A queue's floor outlives its running launches: the next launch on it starts after that
  // floor too, and without it the windows before it would be kept. Only a program with very
  // many queues has its idle ones forgotten.
  if (queues_.size() > kMaxIdleQueues) {
    std::erase_if(queues_, [](const auto& entry) { return entry.second.running == 0; });
  }
}

bool AskPolicy::due(const SampledLaunches& books, std::uint64_t now_ns) {
  if (books.in_flight() >= kAskPast) {
    if (++launches_since_ask_ < kAskEvery) return false;
    launches_since_ask_ = 0;
    return true;
  }
  // None running: oldest_api_ns()'s 0 is not a launch that waited for ever.
  if (books.in_flight() == 0 || now_ns < books.oldest_api_ns() + kAskAfterNs ||
      now_ns < last_age_ask_ns_ + kAskAgainNs) {
    return false;
  }
  last_age_ask_ns_ = now_ns;
  return true;
}

}  // namespace oaprof::attach
