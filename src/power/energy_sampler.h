// Long runs: a thread that reads the wrapped source often enough that no hardware counter can wrap
// twice between two reads, at the counter's range and a generous power bound, so the 64-bit
// totals the backends accumulate stay right however long the run. It is itself an EnergySource:
// the profiler reads through it, and its reads and the thread's are serialised.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "power/energy_source.h"
#include "power/energy_window.h"
#include "power/idle_baseline.h"

namespace oaprof::power {

// No client or small-server package draws this much; the bound only sets how often to read.
inline constexpr double kGenerousPowerBoundW = 1000.0;
inline constexpr std::uint64_t kMaxSamplePeriodNs = 1'000'000'000;

// Half the time the counter takes to wrap once at `max_power_w`, capped at kMaxSamplePeriodNs
// (and at least 1 ms); the cap alone when the counter does not wrap.
std::uint64_t safe_sample_period_ns(std::optional<std::uint64_t> wrap_range_uj,
                                    double max_power_w = kGenerousPowerBoundW);

class EnergySampler final : public EnergySource {
 public:
  // Starts the thread. `period_ns` defaults to safe_sample_period_ns(inner's wrap range).
  explicit EnergySampler(std::unique_ptr<EnergySource> inner,
                         std::optional<std::uint64_t> period_ns = std::nullopt);
  ~EnergySampler() override;  // stops the thread
  EnergySampler(const EnergySampler&) = delete;
  EnergySampler& operator=(const EnergySampler&) = delete;

  std::string_view name() const override { return inner_->name(); }
  std::vector<Domain> domains() const override { return inner_->domains(); }
  std::optional<std::uint64_t> wrap_range_uj() const override { return inner_->wrap_range_uj(); }
  // Throws what the inner source threw, or the first error the thread met (counters read after
  // a failed background read could have wrapped unseen).
  EnergyReading read() override;

  std::uint64_t period_ns() const { return period_ns_; }
  std::uint64_t background_reads() const;
  EnergySource& inner() { return *inner_; }

 private:
  void run();
  std::unique_ptr<EnergySource> inner_;
  std::uint64_t period_ns_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::uint64_t background_reads_ = 0;
  std::string background_error_;
  std::thread thread_;
};

// A power meter's window (`oaprof power`): reads `source` through an EnergySampler, waits
// `duration_ns` and reads again, so that a counter that wraps several times within the duration
// still counts in full (two reads alone would see at most one of its wraps).
EnergyWindow measure_energy_window(std::unique_ptr<EnergySource> source, std::uint64_t duration_ns,
                                   const WindowOptions& options = {},
                                   const Sleeper& wait = sleep_ns);

}  // namespace oaprof::power
