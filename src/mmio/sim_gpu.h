// SimGpu: a TEST DOUBLE of the Gen9 OA unit on plain memory, so that every path above the
// register level runs on machines without an Intel GPU. Its numbers are a model, never a
// measurement; everything that shows them labels them "device: simulated".
//
// Model: while OACONTROL's enable bit is set, GPU_TICKS advance at the configured frequency;
// while a kernel runs (set_kernel_running), A0 (GPU busy) advances with the clock and the EU
// counters (A7 EU active, A8 stall, A9–A11 FPU, A12 send, A13 thread occupancy, A32 shader
// memory) advance by EU count × activity fraction. RING_TIMESTAMP runs at the platform's
// timestamp frequency regardless of OA. Counters wrap at 40 bits (A0–A31) and 32 bits (rest).
// Registers that are not modelled behave as plain memory.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <vector>

#include "mmio/mmio.h"
#include "oa/platform.h"
#include "oa/report_format.h"

namespace oaprof::mmio {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::uint64_t now_ns() = 0;
};

// CLOCK_MONOTONIC, for live runs.
class SteadyClock final : public Clock {
 public:
  std::uint64_t now_ns() override;
};

// A virtual clock for deterministic tests.
class ManualClock final : public Clock {
 public:
  std::uint64_t now_ns() override { return now_; }
  void advance_ns(std::uint64_t ns) { now_ += ns; }

 private:
  std::uint64_t now_ = 0;
};

// Fractions of the busy EUs' clocks that each counter counts, per EU.
struct SimWorkload {
  double eu_active = 0.85;
  double eu_stall = 0.05;
  double fpu_both = 0.55;
  double fpu0 = 0.80;
  double fpu1 = 0.60;
  double send = 0.03;
  double thread_occupancy = 6.0;  // of 7 hardware threads per EU
  double shader_memory = 0.02;
};

struct SimConfig {
  oa::Platform platform = oa::simulated_platform();
  double freq_mhz = 1150.0;
  SimWorkload workload;
  // Raw value every counter starts from, to put wraps within reach of a test.
  std::uint64_t counter_start = 0;
};

class SimGpu final : public Mmio {
 public:
  static constexpr std::uint32_t kRegisterFileBytes = 0x80000;

  SimGpu(SimConfig config, Clock& clock);

  std::uint32_t read32(std::uint32_t offset) override;
  void write32(std::uint32_t offset, std::uint32_t value) override;
  std::string describe() const override;

  // The workload signal: the model counts GPU busy and EU activity only while this is true.
  void set_kernel_running(bool running);

  const SimConfig& config() const { return config_; }

 private:
  enum Counter : int { kTicks = oa::kNumA, kB0 = kTicks + 1, kC0 = kB0 + oa::kNumB,
                       kCounterCount = kC0 + oa::kNumC };

  void advance_locked();
  std::uint64_t counter_value_locked(int counter) const;
  std::uint32_t read_counter_register_locked(std::uint32_t offset) const;

  SimConfig config_;
  Clock& clock_;
  std::mutex mu_;
  std::vector<std::uint32_t> regs_;
  std::array<double, kCounterCount> counted_{};  // events since start, before the start offset
  std::uint64_t last_ns_ = 0;
  bool kernel_running_ = false;
};

}  // namespace oaprof::mmio
