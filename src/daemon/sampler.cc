#include "daemon/sampler.h"

#include <ctime>

namespace oaprof::daemon {
namespace {

std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

void add_deltas(oa::CounterDeltas& total, const oa::CounterDeltas& d) {
  total.timestamp += d.timestamp;
  total.gpu_ticks += d.gpu_ticks;
  total.has_gpu_ticks = d.has_gpu_ticks;
  for (int i = 0; i < oa::kNumA; ++i) {
    total.a[i] += d.a[i];
    total.a_present[i] = d.a_present[i];
  }
  for (int i = 0; i < oa::kNumB; ++i) total.b[i] += d.b[i];
  for (int i = 0; i < oa::kNumC; ++i) total.c[i] += d.c[i];
}

Sampler::Sampler(Session& session, SamplerOptions options)
    : session_(session), options_(std::move(options)) {}

Sampler::~Sampler() { stop(); }

void Sampler::start() {
  std::lock_guard lock(mu_);
  last_ = session_.sample(&row_energy_);
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
  emit_row();
  running_ = false;
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
    if (timeline && now >= next_row) {
      emit_row();
      next_row += row_interval;
    } else {
      read_and_fold();
    }
  }
}

void Sampler::read_and_fold() {
  const oa::Report now = session_.sample();
  ++reads_;
  add_deltas(total_, oa::compute_deltas(*last_, now));
  last_ = now;
}

void Sampler::emit_row() {
  // The row ends with a snapshot of its own, read together with the energy; the next row starts
  // from both.
  std::optional<power::EnergyReading> end;
  const oa::Report now = session_.sample(&end);
  ++reads_;
  add_deltas(total_, oa::compute_deltas(*last_, now));
  last_ = now;
  oa::LaunchRecord r;
  r.pid = options_.pid;
  r.launch.kernel_name = options_.label;
  r.launch.api_ns = row_start_ns_;
  r.deltas = total_;
  const bool energy = row_energy_ && end;
  session_.emit(std::move(r), energy ? &*row_energy_ : nullptr, energy ? &*end : nullptr);
  row_energy_ = end;
  total_ = oa::CounterDeltas{};
  row_start_ns_ = monotonic_ns();
}

}  // namespace oaprof::daemon
