#include "power/energy_sampler.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace oaprof::power {

std::uint64_t safe_sample_period_ns(std::optional<std::uint64_t> wrap_range_uj,
                                    double max_power_w) {
  constexpr std::uint64_t kMinPeriodNs = 1'000'000;
  if (!wrap_range_uj || *wrap_range_uj == 0 || !(max_power_w > 0)) return kMaxSamplePeriodNs;
  // range µJ / (power W · 1e6 µJ/s) seconds to wrap once; half of it, in ns.
  const double wrap_ns = static_cast<double>(*wrap_range_uj) / max_power_w * 1e3;
  const double half = wrap_ns / 2;
  if (half >= static_cast<double>(kMaxSamplePeriodNs)) return kMaxSamplePeriodNs;
  return std::max(kMinPeriodNs, static_cast<std::uint64_t>(half));
}

EnergySampler::EnergySampler(std::unique_ptr<EnergySource> inner,
                             std::optional<std::uint64_t> period_ns)
    : inner_(std::move(inner)),
      period_ns_(period_ns.value_or(safe_sample_period_ns(inner_->wrap_range_uj()))) {
  if (period_ns_ == 0) {
    throw std::invalid_argument("energy sampler: the period must be positive");
  }
  thread_ = std::thread([this] { run(); });
}

EnergySampler::~EnergySampler() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void EnergySampler::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (wake_.wait_for(lock, std::chrono::nanoseconds(period_ns_), [this] { return stop_; })) {
      break;
    }
    try {
      inner_->read();
      ++background_reads_;
    } catch (const std::exception& e) {
      if (background_error_.empty()) background_error_ = e.what();
    }
  }
}

EnergyReading EnergySampler::read() {
  std::lock_guard lock(mu_);
  if (!background_error_.empty()) {
    throw std::runtime_error(
        "energy sampler: a background read failed, so a counter may have "
        "wrapped unseen: " +
        background_error_);
  }
  return inner_->read();
}

std::uint64_t EnergySampler::background_reads() const {
  std::lock_guard lock(mu_);
  return background_reads_;
}

EnergyWindow measure_energy_window(std::unique_ptr<EnergySource> source, std::uint64_t duration_ns,
                                   const WindowOptions& options, const Sleeper& wait) {
  EnergySampler sampler(std::move(source));
  const EnergyReading begin = sampler.read();
  wait(duration_ns);
  const EnergyReading end = sampler.read();
  return make_energy_window(begin, end, options);
}

}  // namespace oaprof::power
