#include "session/session.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>

#include <fmt/format.h>

#include "base/monotonic_clock.h"

namespace oaprof::session {

using base::monotonic_ns;
using ipc::wire::Body;
using ipc::wire::Error;
using ipc::wire::ErrorCode;

void add_stream_loss_flags(const gpu::PerfStreamCounts& begin, const gpu::PerfStreamCounts& end,
                           std::vector<std::string>& flags) {
  if (end.reports_lost > begin.reports_lost) flags.emplace_back("reports_lost");
  if (end.buffer_lost > begin.buffer_lost) flags.emplace_back("oa_buffer_lost");
}

LaunchReadOptions launch_read_options(double timestamp_hz, double max_freq_mhz, int eus) {
  LaunchReadOptions o;
  o.timestamp_hz = timestamp_hz;
  o.max_interval_ns = oa::max_safe_read_interval_ns(max_freq_mhz, eus, timestamp_hz);
  constexpr std::chrono::milliseconds kLongest{500};
  const auto quarter =
      std::chrono::milliseconds(static_cast<std::int64_t>(o.max_interval_ns / 4e6));
  o.read_period = std::clamp(quarter, std::chrono::milliseconds(1), kLongest);
  return o;
}

Session::Session(gpu::CounterSource& source, oa::ReportFormat format, Sink sink,
                 mmio::OaConfig config)
    : source_(source), format_(format), sink_(std::move(sink)) {
  sets_.push_back({std::string(), std::move(config)});
}

Session::Session(gpu::CounterSource& source, oa::ReportFormat format, Sink sink,
                 SessionOptions options)
    : Session(source, format, std::move(sink), std::move(options.config)) {
  if (!options.pass_sets.empty()) {
    set_pass_configs(std::move(options.pass_sets), options.passes_per_set);
  }
  set_energy_source(options.energy);
  set_energy_reuse(options.energy_reuse);
  set_busy_listener(std::move(options.busy_listener));
  set_work_resolver(std::move(options.work_resolver));
  if (options.launch_reads) set_launch_reads(*options.launch_reads);
  if (options.sampled) set_sampled(*options.sampled);
}

void Session::set_pass_configs(std::vector<PassSet> sets, std::uint32_t passes_per_set) {
  std::lock_guard lock(mu_);
  if (started_) throw std::logic_error("set_pass_configs after start()");
  if (sets.empty() || passes_per_set == 0) {
    throw std::invalid_argument("kernel replay across sets needs a set and a pass per set");
  }
  sets_ = std::move(sets);
  passes_per_set_ = passes_per_set;
}

Session::SwitchCost Session::switch_cost() const {
  std::lock_guard lock(mu_);
  return switch_cost_;
}

void Session::program_pass_set_locked(Pending& p) {
  const std::size_t sets = sets_.size();
  // A launch starts with the set the unit holds, so back-to-back launches switch sets - 1
  // times each, not sets times.
  if (p.pairs == 0) p.first_set = programmed_ < sets ? programmed_ : 0;
  const std::size_t step = std::min<std::size_t>(p.pairs / passes_per_set_, sets - 1);
  p.pass_set = (p.first_set + step) % sets;
  if (p.pass_set == programmed_) return;
  // Another launch's open pass counts across the switch: its deltas mix two configurations.
  for (auto& entry : pending_) {
    if (&entry.second != &p && entry.second.before) entry.second.disturbed = true;
  }
  const auto begin = std::chrono::steady_clock::now();
  programmed_ = sets;  // none, until the switch below succeeds
  const PassSet& next = sets_[p.pass_set];
  source_.switch_set(format_, next.config, next.symbol);
  programmed_ = p.pass_set;
  switch_cost_.switches += 1;
  switch_cost_.total += std::chrono::steady_clock::now() - begin;
}

void Session::add_set_pass(Pending& p, std::size_t sets) {
  if (p.set_deltas.empty()) {
    p.set_deltas.resize(sets);
    p.set_pairs.resize(sets, 0);
  }
  if (p.set_pairs[p.pass_set]++ == 0) {
    p.set_deltas[p.pass_set] = p.pass;
  } else {
    oa::accumulate(p.set_deltas[p.pass_set], p.pass);
  }
}

void Session::emit_per_set_locked(const oa::LaunchRecord& record, const Pending& p) {
  const bool energy = p.energy_before && p.energy_after;
  for (std::size_t k = 0; k < sets_.size(); ++k) {
    oa::LaunchRecord r = record;
    r.pass_set = k;
    const bool counted = k < p.set_pairs.size() && p.set_pairs[k] > 0;
    r.deltas = counted ? p.set_deltas[k] : oa::CounterDeltas{};
    if (!counted) r.flags.emplace_back("pass_missing");
    if (p.disturbed) r.flags.emplace_back("pass_disturbed");
    sink_(std::move(r), energy ? &*p.energy_before : nullptr, energy ? &*p.energy_after : nullptr);
  }
}

Session::~Session() {
  // A destructor must not throw: one that runs while an exception unwinds would end the program.
  // The caller that cares (oaprof's finish()) calls stop() itself and reports a failure; here
  // the fallbacks remain: the source's own destructor, oaprofd restoring on disconnect, and the
  // state file the next start restores.
  try {
    stop();
  } catch (const std::exception&) {
  }
}

void Session::start() {
  std::lock_guard lock(mu_);
  programmed_ = 0;
  source_.start(format_, sets_.front().config);
  started_ = true;
  if (reader_.joinable()) return;
  reader_stop_ = false;
  if (sampled_) {
    timeline_totals_.emplace(reads_.timestamp_hz, reads_.max_interval_ns);
    read_timeline_locked();  // the timeline starts before any launch can
    reader_ = std::thread([this] { reader_loop(sampled_->period, &Session::read_timeline); });
  } else if (reads_.read_period.count() > 0) {
    reader_ =
        std::thread([this] { reader_loop(reads_.read_period, &Session::read_open_launches); });
  }
}

void Session::stop() {
  stop_reader();  // first, and without mu_: its reads take mu_
  std::lock_guard lock(mu_);
  stop_locked();
}

void Session::stop_reader() {
  {
    std::lock_guard lock(reader_mu_);
    reader_stop_ = true;
  }
  reader_wake_.notify_all();
  if (reader_.joinable()) reader_.join();
}

void Session::reader_loop(std::chrono::microseconds period, void (Session::*read)()) {
  std::unique_lock lock(reader_mu_);
  while (!reader_wake_.wait_for(lock, period, [this] { return reader_stop_; })) {
    lock.unlock();
    try {
      (this->*read)();
    } catch (const std::exception&) {
      // The source failed (oaprofd gone): the open passes then span a longer interval, which
      // their rows are flagged for when it is too long; the 'after' reports the failure itself.
    }
    lock.lock();
  }
}

void Session::set_launch_reads(const LaunchReadOptions& options) {
  std::lock_guard lock(mu_);
  reads_ = options;
}

Session::Read Session::read_locked() {
  Read r;
  r.freq_mhz = source_.gpu_freq_mhz();
  r.report = oa::decode(format_, source_.snapshot(next_report_id_++).bytes);
  return r;
}

void Session::note_freq(Pending& p, const std::optional<double>& freq_mhz) {
  if (!freq_mhz) return;
  if (!p.freq_mhz) {
    p.freq_mhz = freq_mhz;
  } else if (*p.freq_mhz != *freq_mhz) {
    p.freq_changed = true;
  }
}

void Session::fold_locked(Pending& p, const Read& read) {
  oa::accumulate(p.pass, oa::compute_deltas_checked(*p.before, read.report, reads_.timestamp_hz,
                                                    reads_.max_interval_ns));
  p.before = read.report;
  p.before_at = std::chrono::steady_clock::now();
  note_freq(p, read.freq_mhz);
}

void Session::read_open_launches() {
  std::lock_guard lock(mu_);
  if (!started_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool due = std::any_of(pending_.begin(), pending_.end(), [&](const auto& entry) {
    return entry.second.before && now - entry.second.before_at >= reads_.read_period;
  });
  if (!due) return;
  const Read read = read_locked();
  const bool config_lost = source_.config_lost();
  for (auto& entry : pending_) {
    Pending& p = entry.second;
    if (!p.before) continue;
    p.config_lost = p.config_lost || config_lost;
    fold_locked(p, read);
  }
}

void Session::stop_locked() {
  if (!started_) return;
  if (sampled_) {
    // Every launch has arrived (the server has stopped): one last read covers their windows.
    try {
      read_timeline_locked();
    } catch (const std::exception&) {
      // The source is gone: the windows past the last read are flagged not_attributed.
    }
    attribute_waiting_locked(true);
  }
  started_ = false;
  deferred_.clear();  // no launch finishes after this: its energy readings have no row to go to
  // The kernel signal may fail (oaprofd gone); the source is stopped, and its registers
  // restored, all the same.
  std::exception_ptr busy_failure;
  if (running_client_) {
    running_client_.reset();
    try {
      busy_locked(false);
    } catch (const std::exception&) {
      busy_failure = std::current_exception();
    }
  }
  source_.stop();
  if (busy_failure) std::rethrow_exception(busy_failure);
}

void Session::set_energy_source(power::EnergySource* energy) {
  std::lock_guard lock(mu_);
  energy_ = energy;
}

void Session::set_energy_reuse(std::chrono::nanoseconds window) {
  std::lock_guard lock(mu_);
  energy_reuse_ = window;
}

void Session::set_busy_listener(std::function<void(bool)> listener) {
  std::lock_guard lock(mu_);
  busy_listener_ = std::move(listener);
}

std::optional<power::EnergyReading> Session::read_energy_locked() {
  if (energy_ == nullptr) return std::nullopt;
  try {
    return energy_->read();
  } catch (const std::exception&) {
    return std::nullopt;  // the row then says its energy is missing; counters still count
  }
}

void Session::set_work_resolver(WorkResolver resolver) {
  std::lock_guard lock(mu_);
  work_resolver_ = std::move(resolver);
}

void Session::busy_locked(bool busy, const oa::KernelWork* work) {
  source_.kernel_running(busy, work);
  if (busy_listener_) busy_listener_(busy);
}

oa::Report Session::sample(std::optional<power::EnergyReading>* energy, SampleNotes* notes) {
  std::lock_guard lock(mu_);
  if (!started_) throw std::runtime_error("the session is not started");
  if (energy) *energy = read_energy_locked();
  oa::Report report = oa::decode(format_, source_.snapshot(next_report_id_++).bytes);
  if (notes) *notes = {source_.config_lost(), source_.readout_interrupted()};
  return report;
}

void Session::emit(oa::LaunchRecord record, const power::EnergyReading* begin,
                   const power::EnergyReading* end) {
  std::lock_guard lock(mu_);
  record.index = next_index_++;
  sink_(std::move(record), begin, end);
}

void Session::set_busy(bool busy) {
  std::lock_guard lock(mu_);
  if (started_) busy_locked(busy);
}

std::uint64_t Session::launches_recorded() const {
  std::lock_guard lock(mu_);
  return next_index_;
}

std::uint64_t Session::launches_dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

void Session::settle(std::uint64_t client_id) {
  std::lock_guard lock(mu_);
  settle_locked(client_id);
}

void Session::settle_locked(std::uint64_t client_id) {
  if (deferred_.empty()) return;
  for (auto it = deferred_.begin(); it != deferred_.end();) {
    if (it->client_id != client_id) {
      ++it;
      continue;
    }
    const Deferred d = *it;
    it = deferred_.erase(it);
    const bool before = d.phase == ipc::wire::Phase::kBefore;
    if (!d.read_energy) continue;
    // Read even when the launch has gone meanwhile (its client vanished): the last 'after'
    // reading serves the next launch either way.
    const auto now = std::chrono::steady_clock::now();
    std::optional<power::EnergyReading> reading;
    if (before && last_after_ && now - last_after_at_ < energy_reuse_) {
      reading = last_after_;
    } else {
      reading = read_energy_locked();
      if (!before && reading) {
        last_after_ = reading;
        last_after_at_ = now;
      }
    }
    auto p = pending_.find({d.client_id, d.launch_id});
    if (p == pending_.end()) continue;
    (before ? p->second.energy_before : p->second.energy_after) = std::move(reading);
  }
}

gpu::PerfStreamCounts Session::perf_stream_counts() const {
  std::lock_guard lock(mu_);
  return source_.perf_stream_counts();
}

std::optional<gpu::ReadoutSkew> Session::readout_skew() const {
  std::lock_guard lock(mu_);
  return source_.readout_skew();
}

Body Session::handle(std::uint64_t client_id, std::uint32_t pid, const Body& request) {
  std::lock_guard lock(mu_);
  try {
    settle_locked(client_id);
    if (const auto* s = std::get_if<ipc::wire::Snapshot>(&request)) return snapshot(client_id, *s);
    if (const auto* l = std::get_if<oa::Launch>(&request)) return launch(client_id, pid, *l);
    if (std::holds_alternative<ipc::wire::Hello>(request)) return ipc::wire::Ok{};
    return Error{ErrorCode::kUnknownType, "the session accepts hello, snapshot and launch"};
  } catch (const std::exception& e) {
    return Error{ErrorCode::kDeviceError, e.what()};
  }
}

Body Session::snapshot(std::uint64_t client_id, const ipc::wire::Snapshot& s) {
  if (!started_) return Error{ErrorCode::kDeviceError, "the session is not started"};
  const std::pair key{client_id, s.launch_id};
  if (pending_.size() >= kMaxOpenLaunches && !pending_.contains(key)) {
    ++dropped_;
    return Error{ErrorCode::kBadRequest,
                 fmt::format("{} launches are open (snapshotted, never ended): launch {} is not "
                             "measured until some end",
                             pending_.size(), s.launch_id)};
  }
  Pending& p = pending_[key];
  // The energy is read in settle(), just after the reply: a few microseconds after the counters,
  // far inside RAPL's own update interval (about 1 ms), and off the program's path.
  if (s.phase == ipc::wire::Phase::kBefore) {
    const bool read_energy = energy_ != nullptr && p.pairs == 0;
    if (read_energy && s.energy_first) p.energy_before = read_energy_locked();
    if (sets_.size() > 1) program_pass_set_locked(p);
    const Read read = read_locked();
    p.readout_interrupted = p.readout_interrupted || source_.readout_interrupted();
    p.before = read.report;
    p.before_at = std::chrono::steady_clock::now();
    p.pass = {};
    note_freq(p, read.freq_mhz);
    if (p.pairs == 0) p.stream_before = source_.perf_stream_counts();
    running_client_ = client_id;
    // In order with the other clients' kernel signals: the simulated RAPL tree follows it.
    std::optional<oa::KernelWork> work;
    if (s.work && work_resolver_) work = work_resolver_(*s.work);
    busy_locked(true, work ? &*work : nullptr);
    deferred_.push_back({client_id, s.launch_id, s.phase, read_energy && !s.energy_first});
  } else {
    if (!p.before) {
      pending_.erase({client_id, s.launch_id});
      return Error{ErrorCode::kUnknownLaunch,
                   fmt::format("launch {} has no 'before' snapshot", s.launch_id)};
    }
    running_client_.reset();  // first: a signal that fails (oaprofd gone) must not leave it set
    busy_locked(false);
    const Read after = read_locked();
    p.config_lost = p.config_lost || source_.config_lost();
    p.readout_interrupted = p.readout_interrupted || source_.readout_interrupted();
    p.stream_after = source_.perf_stream_counts();
    deferred_.push_back({client_id, s.launch_id, s.phase, energy_ != nullptr});
    // The pass's last interval, checked for wraps like the periodic reads before it.
    fold_locked(p, after);
    if (sets_.size() > 1) add_set_pass(p, sets_.size());
    if (p.pairs++ == 0) {
      p.deltas = p.pass;
    } else {
      oa::accumulate(p.deltas, p.pass);
    }
    p.before.reset();
  }
  return ipc::wire::Ok{};
}

Body Session::launch(std::uint64_t client_id, std::uint32_t pid, const oa::Launch& l) {
  if ((l.flags & oa::kLaunchProgramIndex) == 0) {
    // An older layer: its ids count measured launches only, which no row may show as the
    // program's launch.
    pending_.erase({client_id, l.launch_id});
    ++dropped_;
    return Error{ErrorCode::kBadRequest,
                 "this launch comes from an oaprof layer older than oaprof, whose launch ids are "
                 "not the program's launch index; run the program with the layer installed "
                 "beside this oaprof"};
  }
  if (l.sampled) return sampled_launch(pid, l);
  auto it = pending_.find({client_id, l.launch_id});
  // A pass left open (a 'before' without its 'after') means the counters miss part of a pass.
  if (it == pending_.end() || it->second.pairs == 0 || it->second.before) {
    if (it != pending_.end()) pending_.erase(it);
    ++dropped_;
    return Error{ErrorCode::kUnknownLaunch,
                 fmt::format("launch {} was not snapshotted before and after", l.launch_id)};
  }
  oa::LaunchRecord record;
  record.index = next_index_++;
  record.pid = pid;
  record.launch = l;
  record.program_launch = l.launch_id;
  record.deltas = it->second.deltas;
  if (!l.profiled) record.flags.emplace_back("no_profiling");
  if (l.flags & oa::kLaunchDrainFailed) record.flags.emplace_back("drain_failed");
  if (l.flags & oa::kLaunchLayerError) record.flags.emplace_back("layer_error");
  // Its snapshots lie around more than its kernel (a Level Zero launch the host held).
  if (l.flags & oa::kLaunchNotBracketed) record.flags.emplace_back("not_bracketed");
  // The layer says how many passes it ran; the counters cover the pairs that arrived.
  if (it->second.pairs != std::max<std::uint32_t>(l.passes, 1)) {
    record.flags.emplace_back("pass_count_mismatch");
  }
  // A context switch reloaded the context-saved registers (Gen8–11 flex, OACTXCONTROL) while the
  // kernel ran: flex-dependent counters of this row may be wrong (--access perf keeps them).
  if (it->second.config_lost) record.flags.emplace_back("config_lost");
  // An interval between two reads of this launch was long enough for a 32-bit counter to wrap
  // twice unseen: its counts may be short by multiples of 2^32.
  if (record.deltas.interval_too_long) record.flags.emplace_back("interval_too_long");
  // The registers of a 'before' or 'after' were read over a span that no retry could bring
  // under the tolerance: figures per time may be off by that span.
  if (it->second.readout_interrupted) record.flags.emplace_back("readout_interrupted");
  // The GPU frequency read beside the launch's snapshots was not the same at all of them.
  if (it->second.freq_changed) record.flags.emplace_back("freq_changed");
  add_stream_loss_flags(it->second.stream_before, it->second.stream_after, record.flags);
  const Pending p = std::move(it->second);
  pending_.erase(it);
  if (sets_.size() > 1) {
    emit_per_set_locked(record, p);
    return ipc::wire::Ok{};
  }
  const bool energy = p.energy_before && p.energy_after;
  sink_(std::move(record), energy ? &*p.energy_before : nullptr,
        energy ? &*p.energy_after : nullptr);
  return ipc::wire::Ok{};
}

void Session::client_gone(std::uint64_t client_id) {
  std::lock_guard lock(mu_);
  settle_locked(client_id);
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->first.first == client_id) {
      ++dropped_;
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  if (running_client_ == client_id) {
    running_client_.reset();
    try {
      busy_locked(false);
    } catch (const std::exception&) {
      // The source is gone (oaprofd died); its kernel signal has nobody to reach. This runs on
      // the server's thread, which must go on serving the other clients.
    }
  }
}

void Session::set_sampled(const SampledOptions& options) {
  std::lock_guard lock(mu_);
  if (started_) throw std::logic_error("set_sampled after start()");
  if (options.period.count() <= 0) throw std::invalid_argument("the sampling period must be > 0");
  sampled_ = options;
  if (!sampled_->clock) sampled_->clock = monotonic_ns;
}

std::size_t Session::sampled_waiting() const {
  std::lock_guard lock(mu_);
  return sampled_waiting_.size();
}

void Session::read_timeline() {
  std::lock_guard lock(mu_);
  if (!started_) return;
  read_timeline_locked();
  attribute_waiting_locked(false);
}

void Session::read_timeline_locked() {
  const std::uint64_t t0 = sampled_->clock();
  const Read read = read_locked();
  const std::uint64_t t1 = sampled_->clock();
  // On the host's clock the read happened somewhere between t0 and t1 (a preempted read-out,
  // a periodic report that came later than asked); the report's own timestamp says exactly when
  // on the GPU's. The timeline runs on the GPU's time (from the first read's host time on), and
  // a line fitted through the reads' (host, GPU) pairs puts windows onto it: one late read
  // moves a window by a share of its lateness, not by all of it.
  const std::uint64_t host = std::max(t0 + (t1 - t0) / 2, last_read_ns_ + 1);
  timeline_totals_->add(read.report);
  const oa::CounterDeltas& total = timeline_totals_->total();
  if (clock_pairs_.empty()) timeline_origin_ns_ = host;
  const auto gpu_ns = static_cast<std::uint64_t>(
      std::llround(static_cast<double>(total.timestamp) * 1e9 / reads_.timestamp_hz));
  // A timestamp that did not move between two reads gives the timeline nothing new but order.
  const std::uint64_t at = std::max(timeline_origin_ns_ + gpu_ns, last_timeline_ns_ + 1);
  timeline_.add(at, total, timeline_totals_->untrusted_intervals());
  last_read_ns_ = host;
  last_timeline_ns_ = at;
  clock_pairs_.emplace_back(host, at);
  if (clock_pairs_.size() > kClockPairs) clock_pairs_.pop_front();
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs(clock_pairs_.begin(),
                                                                   clock_pairs_.end());
  host_to_timeline_ = oa::ClockMap::fit(pairs);
  // Keep what a launch arriving late can need: `history` back, and at most kMaxTimelineReads
  // reads (a short period keeps less time).
  const std::uint64_t history_ns = std::min<std::uint64_t>(
      static_cast<std::uint64_t>(std::chrono::nanoseconds(sampled_->history).count()),
      static_cast<std::uint64_t>(std::chrono::nanoseconds(sampled_->period).count()) *
          kMaxTimelineReads);
  timeline_.forget_before(at - std::min(at, history_ns));
}

oa::Window Session::to_timeline(const oa::SampledWindow& w) const {
  std::uint64_t start = host_to_timeline_.to_host(w.host_start_ns);
  std::uint64_t end = std::max(start, host_to_timeline_.to_host(w.host_end_ns));
  // The line passes near the reads, not through them: a window that ended by the last read is
  // never put past it. It moves back whole: clamping each edge would pull both edges of a window
  // shorter than the line's miss onto the last read, a window of no length that claims exact
  // zero counts.
  if (w.host_end_ns <= last_read_ns_ && end > last_timeline_ns_) {
    const std::uint64_t past = end - last_timeline_ns_;
    end = last_timeline_ns_;
    start -= std::min(start, past);
  }
  return {start, end};
}

Body Session::sampled_launch(std::uint32_t pid, const oa::Launch& l) {
  if (!sampled_) {
    return Error{ErrorCode::kBadRequest,
                 "a sampled launch came to a session that brackets launches (--attribution)"};
  }
  if (!started_) return Error{ErrorCode::kDeviceError, "the session is not started"};
  // Bounded: a window the timeline has passed is attributed at once, so only launches that
  // claim to end in the future wait; a client that sends too many is refused.
  if (sampled_waiting_.size() >= kMaxSampledWaiting) {
    ++dropped_;
    return Error{ErrorCode::kBadRequest, "too many sampled launches wait for their window's end"};
  }
  oa::LaunchRecord record;
  record.pid = pid;
  record.launch = l;
  record.program_launch = l.launch_id;
  if (l.flags & oa::kLaunchLayerError) record.flags.emplace_back("layer_error");
  if (l.sampled->clock == oa::ClockCalibration::kMarker) {
    record.flags.emplace_back("clock_from_marker");
  }
  // A window the timeline has passed is attributed now; one that ends after the last read waits
  // for the next.
  if (l.sampled->host_end_ns <= last_read_ns_) {
    emit_sampled_locked(std::move(record));
  } else {
    sampled_waiting_.push_back(std::move(record));
  }
  return ipc::wire::Ok{};
}

void Session::emit_sampled_locked(oa::LaunchRecord r) {
  const oa::SampledWindow& w = *r.launch.sampled;
  const std::optional<oa::SampledDeltas> d = timeline_.attribute(to_timeline(w));
  if (d) {
    r.deltas = d->deltas;
    if (d->deltas.interval_too_long) r.flags.emplace_back("interval_too_long");
    // No read inside the window: its counts are a share of one read period's, interpolated.
    if (d->between_reads) r.flags.emplace_back("between_reads");
  } else {
    // Its window starts before the oldest read kept, or ends after the last one.
    r.flags.emplace_back("not_attributed");
  }
  if (w.overlap_ppm > 0) r.flags.emplace_back("overlapped");
  r.sampled = oa::LaunchRecord::Sampled{d ? d->error_bound : 0.0, w.overlap_ppm / 1e6};
  r.index = next_index_++;
  sink_(std::move(r), nullptr, nullptr);
}

void Session::attribute_waiting_locked(bool final) {
  std::vector<oa::LaunchRecord> still;
  for (oa::LaunchRecord& r : sampled_waiting_) {
    if (r.launch.sampled->host_end_ns > last_read_ns_ && !final) {
      still.push_back(std::move(r));
    } else {
      emit_sampled_locked(std::move(r));
    }
  }
  sampled_waiting_ = std::move(still);
}

}  // namespace oaprof::session
