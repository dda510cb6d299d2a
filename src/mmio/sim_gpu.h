// SimGpu: a TEST DOUBLE of the Gen9 OA unit on plain memory, so that every path above the
// register level runs on machines without an Intel GPU. Its numbers are a model, never a
// measurement; everything that shows them labels them "device: simulated".
//
// Model: while OACONTROL's enable bit is set, GPU_TICKS advance at the configured frequency;
// while a kernel runs (set_kernel_running), A0 (GPU busy) advances with the clock and the EU
// counters (A7 EU active, A8 stall, A9–A11 FPU, A12 send, A13 thread occupancy, A32 shader
// memory) advance by EU count × activity fraction. RING_TIMESTAMP runs at the platform's
// timestamp frequency regardless of OA. Counters wrap at 40 bits (A0–A31) and 32 bits (rest).
// OA_DEBUG, the forcewake requests and the masked mux registers (HALF_SLICE_CHICKEN2,
// WAIT_FOR_RC6_EXIT) are masked registers. The forcewake domains are the platform's generation's
// (reg::kForcewakeDomains*): each acks its request at once, and a request register of another
// generation is plain memory that nothing acks. The timestamp clock registers (CTC_MODE,
// RPM_CONFIG0) hold values that give the platform's timestamp frequency, unless the test sets
// others. With context_switch_period_ns set, a context switch every period reloads the
// context-saved registers (OACTXCONTROL, EU_PERF_CNTL0–6) from another context's image, as
// Gen8–11 hardware does. execute_batch() interprets the commands the rpc read-out emits.
// serve() mirrors the register file into a shared mapping, so the same model backs a fake PCI
// device whose resource0 is a file. Registers that are not modelled behave as plain memory.
//
// For i915's perf stream (the simulated i915 in src/gpu drives these as the kernel drives the
// hardware): the OA timer writes a periodic report every (2 << exponent) timestamp ticks into the
// OA buffer while OACONTROL counts and OACTXCONTROL's timer is enabled — and OACTXCONTROL is
// context-saved, so a switch to a context whose image lacks it stops the timer. A full buffer
// drops the report and sets OASTATUS's report-lost and buffer-overflow bits. set_context_image()
// is what i915 writes into every context image, so switches restore the configuration.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "mmio/forcewake.h"
#include "mmio/mmio.h"
#include "mmio/timestamp_clock.h"
#include "oa/platform.h"
#include "oa/register_write.h"
#include "oa/report.h"
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
  // 0: no context switches. Otherwise one every period, reloading the context-saved registers
  // with context_image_value (another context's image), or with what set_context_image() gave.
  std::uint64_t context_switch_period_ns = 0;
  std::uint32_t context_image_value = 0;
  // When true, the flex EU counters depend on their configuration, so a lost configuration shows
  // in the numbers: A(7+i) counts its default event above while EU_PERF_CNTLi is 0, and
  // otherwise the event the register selects, modelled as ((value & 0xFF) + 1) / 256 of the
  // busy EU clocks. Off by default, keeping every A counter's rate independent of the set.
  bool flex_events = false;
  // The part's enabled EUs, fewer than the platform's when some are fused off (a UHD 630 with
  // 23 of 24: 23); 0 for the platform's. The counters count these EUs, and the simulated i915's
  // topology query reports them (the last subslices lose theirs first).
  int eus = 0;
  // Whether the device has an i915 DRM node to ask (topology query, GETPARAM). Without one,
  // oaprof falls back to the platform table's topology and to the timestamp registers.
  bool i915 = true;
  // CTC_MODE, RPM_CONFIG0 and TIMESTAMP_OVERRIDE as the firmware left them; nullopt for values
  // that give platform.timestamp_hz from the crystal (mmio::crystal_registers_for).
  std::optional<TimestampRegisters> timestamp_registers;
};

// The EUs a simulated part has: config.eus, or the platform's. Throws std::invalid_argument when
// config.eus is outside 1..platform.eus.
int simulated_eus(const SimConfig& config);

// The GPU's view of memory for the batch interpreter: resolves a GPU address range to host
// bytes, or throws std::invalid_argument when nothing is bound there.
class GpuAddressSpace {
 public:
  virtual ~GpuAddressSpace() = default;
  virtual std::uint8_t* resolve(std::uint64_t gpu_address, std::size_t size) = 0;
};

class SimGpu final : public Mmio {
 public:
  // Large enough for every register oaprof touches (the GT forcewake ack is at 0x130044).
  static constexpr std::uint32_t kRegisterFileBytes = 0x200000;

  SimGpu(SimConfig config, Clock& clock);

  std::uint32_t read32(std::uint32_t offset) override;
  void write32(std::uint32_t offset, std::uint32_t value) override;
  std::string describe() const override;

  // The workload signal: the model counts GPU busy and EU activity only while this is true.
  void set_kernel_running(bool running);

  const SimConfig& config() const { return config_; }
  int eus() const { return eus_; }  // the part's, fused ones excluded
  std::uint64_t context_switches();

  // Executes a batch as the render command streamer would: MI_NOOP, MI_LOAD_REGISTER_IMM,
  // MI_STORE_REGISTER_MEM, MI_REPORT_PERF_COUNT (Gen8 form; the report has the format
  // OACONTROL selects, at a 64-byte aligned address) up to MI_BATCH_BUFFER_END. Anything else,
  // a truncated command or a missing end throws std::invalid_argument naming the dword.
  void execute_batch(std::span<const std::uint32_t> batch, GpuAddressSpace& memory);

  // Mirrors the register file into `bar` (kRegisterFileBytes / 4 dwords, e.g. a shared file
  // mapping): dwords changed since the last serve() are taken as writes by whoever maps it,
  // then every register's current value is published. Call it whenever the other side must
  // see time pass. A write of the value last published is not seen.
  void serve(std::span<std::uint32_t> bar);

  // OASTATUS bits (Gen8–11) and OACTXCONTROL's timer fields, as i915 names them.
  static constexpr std::uint32_t kOaStatusReportLost = 1u << 0;
  static constexpr std::uint32_t kOaStatusBufferOverflow = 1u << 1;
  static constexpr std::uint32_t kOaCtxControlTimerEnable = 1u << 1;
  static constexpr int kOaCtxControlTimerPeriodShift = 2;
  static constexpr std::uint32_t kOaCtxControlTimerPeriodMask = 0x3Fu << 2;
  // RPT_ID of a periodic report: reason bit 0 (timer) at bit 19.
  static constexpr std::uint32_t kTimerReportId = 1u << 19;

  // The values every context image holds for the context-saved registers (OACTXCONTROL,
  // EU_PERF_CNTL0–6), as i915 writes them for a perf stream; a context switch loads these, and
  // context_image_value for a context-saved register not listed. Empty: no image was written.
  void set_context_image(std::vector<oa::RegisterWrite> image);

  // (Re)initialises the OA buffer with room for `bytes` (0: no buffer, the timer writes
  // nothing): empties it and clears OASTATUS, as i915 does when it enables OA.
  void init_oa_buffer(std::size_t bytes);
  std::size_t oa_buffer_bytes();
  // Removes and returns up to `max_reports` of the oldest reports in the OA buffer (the reader
  // advancing the head pointer). Reports still there keep taking room.
  std::vector<oa::RawReport> read_oa_reports(std::size_t max_reports);
  // Reports waiting in the OA buffer.
  std::size_t oa_reports_pending();

 private:
  enum Counter : int { kTicks = oa::kNumA, kB0 = kTicks + 1, kC0 = kB0 + oa::kNumB,
                       kCounterCount = kC0 + oa::kNumC };

  void advance_locked();
  void count_locked(double dt_ns);
  void context_switch_locked();
  // Simulated-clock time of the next periodic report; UINT64_MAX while the timer is off.
  std::uint64_t next_timer_ns_locked() const;
  void write_periodic_report_locked();
  std::uint32_t read_locked(std::uint32_t offset);
  void write_locked(std::uint32_t offset, std::uint32_t value);
  std::uint64_t counter_value_locked(int counter) const;
  std::uint32_t read_counter_register_locked(std::uint32_t offset) const;
  bool is_masked_locked(std::uint32_t offset) const;
  const reg::ForcewakeDomain* forcewake_domain_of(std::uint32_t offset, bool ack) const;

  SimConfig config_;
  int eus_ = 0;  // the part's, fused ones excluded
  std::span<const reg::ForcewakeDomain> forcewake_domains_;
  Clock& clock_;
  std::mutex mu_;
  std::vector<std::uint32_t> regs_;
  std::array<double, kCounterCount> counted_{};  // events since start, before the start offset
  std::uint64_t last_ns_ = 0;
  bool kernel_running_ = false;
  std::uint64_t context_switches_ = 0;
  std::vector<std::uint32_t> published_;  // what serve() last put in the mapping
  std::vector<oa::RegisterWrite> context_image_;
  std::size_t oa_buffer_bytes_ = 0;
  std::size_t oa_buffer_used_bytes_ = 0;
  std::deque<oa::RawReport> oa_buffer_;
};

}  // namespace oaprof::mmio
