// SimGpu: a TEST DOUBLE of the OA unit on plain memory, so that every path above the register
// level runs on machines without an Intel GPU. Its numbers are a model, never a measurement;
// everything that shows them labels them "device: simulated". It simulates the platform of its
// SimConfig: a Kaby Lake GT2 (Gen9) by default, or a Gen12 (Tiger Lake GT2) or Xe-LPG (Meteor
// Lake GT2) part, each with its generation's register block (reg::oa_block), formats, forcewake
// domains, frequency register, topology and timestamp clock.
//
// Model: while the OA unit's OACONTROL enable bit is set, GPU_TICKS advance at the configured
// frequency; while a kernel runs (set_kernel_running), A0 (GPU busy) advances with the clock and
// the EU counters advance by EU count × activity fraction, laid out as IGT's ComputeBasic of the
// generation reads them: Gen9 A7 EU active, A8 stall, A9–A11 FPU, A12 send, A13 thread occupancy;
// Gen12 A7–A10 EU active, A11–A14 stall and A15–A18 occupancy in four quarters, C2–C7 memory
// traffic; Xe-LPG A7 active, A8 stall, A9 FPU, A10 EM, A12 FPU+EM, A14 send, A15 occupancy, A17
// FP32, A36/A37 memory traffic; A32 shader memory everywhere. A kernel whose work is known
// (set_kernel_running with an oa::KernelWork) drives the EU, FPU, send, L3, SLM and GTI counters
// by that work instead (mmio/sim_work.h), and every event feeds a per-event energy model
// (mmio/sim_energy.h) the simulated RAPL tree draws from. On Gen12 and Xe-LPG the counters
// fed by the NOA network (all but A0 and GPU_TICKS) count only while SQCNT1's PMON enable is
// set, the bit i915 sets before every OA stream. RING_TIMESTAMP runs at the platform's timestamp
// frequency regardless of OA. Counters wrap at 40 bits (A0–A31) and 32 bits (rest).
// OA_DEBUG, the forcewake requests and the masked mux registers (HALF_SLICE_CHICKEN2,
// WAIT_FOR_RC6_EXIT) are masked registers. The forcewake domains are the platform's generation's
// (reg::kForcewakeDomains*): each acks its request at once, and a request register of another
// generation is plain memory that nothing acks. The timestamp clock registers (CTC_MODE,
// RPM_CONFIG0) hold values that give the platform's timestamp frequency, unless the test sets
// others; the frequency register (reg::frequency_register) holds the configured frequency. With
// context_switch_period_ns set, a context switch every period reloads the context-saved
// registers from another context's image: OACTXCONTROL and EU_PERF_CNTL0–6 on Gen8–11, as that
// hardware does; only OACTXCONTROL (the per-context OAR unit's) on Gen12 and Xe-LPG, whose global
// OAG registers and flex counters i915 writes once, globally (i915_perf.c
// gen12_enable_metric_set). execute_batch() interprets the commands the rpc read-out emits.
// serve() mirrors the register file into a shared mapping, so the same model backs a fake PCI
// device whose resource0 is a file. Registers that are not modelled behave as plain memory.
//
// MI_REPORT_PERF_COUNT on Gen12 and Xe-LPG reports the per-context OAR unit, which only i915
// enables (in the context image, GEN12_OAR_OACONTROL and RING_CONTEXT_CONTROL's OAR enable):
// the model writes the report's header and zero counters unless OAR_OACONTROL's enable bit is
// set, and then the OAG counters (there is one context).
//
// For i915's perf stream (the simulated i915 in src/gpu drives these as the kernel drives the
// hardware): the OA timer writes a periodic report every (2 << exponent) timestamp ticks into the
// OA buffer while OACONTROL counts and the timer (OACTXCONTROL; OAG_OAGLBCTXCTRL on Gen12) is
// enabled — and OACTXCONTROL is context-saved on Gen8–11, so a switch to a context whose image
// lacks it stops the timer there. A full buffer drops the report and sets OASTATUS's report-lost
// and buffer-overflow bits. set_context_image() is what i915 writes into every context image, so
// switches restore the configuration.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mmio/forcewake.h"
#include "mmio/mmio.h"
#include "mmio/registers.h"
#include "mmio/sim_energy.h"
#include "mmio/sim_work.h"
#include "mmio/timestamp_clock.h"
#include "oa/kernel_work.h"
#include "oa/platform.h"
#include "oa/register_write.h"
#include "oa/report.h"
#include "oa/report_format.h"

namespace oaprof::mmio {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::uint64_t now_ns() = 0;
  // A register read this close to the model's last step reads that step (SimGpu::read32).
  virtual std::uint64_t read_quantum_ns() const { return 0; }
};

// CLOCK_MONOTONIC, for live runs. A read within 1 µs of the model's last step reads that step:
// a read-out's hundred-odd register reads would otherwise each run the model for the 100 ns since
// the last one, which made the simulator's bookkeeping most of a snapshot's cost (issue 33's
// profile). The counters and the timestamp are read at that one step together, so a read-out
// stays consistent; a read-out taking more than 1 µs still sees time move within it.
class SteadyClock final : public Clock {
 public:
  std::uint64_t now_ns() override;
  std::uint64_t read_quantum_ns() const override { return 1000; }
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

// Faults `oaprof selftest --sim-fault` gives the simulator, each the hardware behaving unlike one
// assumption oaprof makes, so that the selftest's check of that assumption is shown to fail
// (docs/selftest.md). All off by default.
struct SimFaults {
  // Reports the OA unit writes (MI_REPORT_PERF_COUNT, periodic) carry a timestamp shifted left
  // by this many bits more than their format's: the unit's clock is not the rate oaprof assumes.
  int oa_timestamp_extra_shift = 0;
  // With flex_events: EU_PERF_CNTLi feeds A(7 + (i + 1) % 7), not A(7 + i).
  bool flex_misrouted = false;
  // The first power domain whose forcewake the OA registers need never acknowledges a request.
  bool forcewake_never_acks = false;
  // OA_DEBUG ignores a write that would bring back its power-on value: it keeps what oaprof
  // programmed after oaprof restored it.
  bool oa_debug_not_restored = false;
  // GPU_TICKS advance at this multiple of the clock the frequency register reports.
  double gpu_ticks_per_clock = 1.0;
  // The simulated i915 and xe refuse ADD_CONFIG of the configuration with this UUID with EINVAL,
  // as a kernel whose register lists lack one of its registers would. Empty: none.
  std::string rejected_config_uuid = {};
  // The NOA mux takes this long after each mux register write to settle (0: settled before the
  // plan's delay ends): until then the B and C counters count kNoaGarbagePerNs events that follow
  // no work, whether the GPU is busy or not.
  std::uint64_t noa_settle_ns = 0;
  // What i915 writes into the context images is dropped: a context switch loads another
  // context's values into the context-saved registers (OACTXCONTROL, EU_PERF_CNTL0-6 on Gen8-11),
  // as if i915 had not put oaprof's configuration into every image.
  bool context_image_stale = false;
  // Periodic (timer) reports carry every A counter but A0 at twice its count: the unit's own
  // reports disagree with MI_REPORT_PERF_COUNT's and the registers'.
  bool periodic_counts_doubled = false;
  // A known kernel's FPU events (Gen9's EuFpuBothActive A9, Fpu0Active A10, Fpu1Active A11: the
  // only FPU counters mmio/sim_work.h models) count half: the FPU counters miss every other
  // active cycle, so FLOPs derived from them are half the kernel's.
  bool fpu_count_halved = false;
  // A known kernel's C-counter events (where ComputeBasic's GtiRead/WriteThroughput read, Gen9
  // and Gen12) count half: GTI loses half the bytes the kernel moved.
  bool gti_bytes_lost = false;
  // A known kernel's EU-active events (Gen9's EuActive A7, Gen12's A7-A10: where ComputeBasic's
  // EuActive reads) count a quarter: the EUs miss three of every four cycles they were active,
  // fewer than the kernel's FPU cycles alone need.
  bool eu_active_undercount = false;
  // While a kernel runs, PsThreads (A6) and RasterizedPixels (A21), render-pipeline counters at
  // the same place in every generation's ComputeBasic, count kRenderLeakPerClock a GPU clock.
  bool render_counter_leak = false;
};

// What render_counter_leak makes each leaking counter count per busy GPU clock.
inline constexpr double kRenderLeakPerClock = 0.01;

// The garbage rate of an unsettled NOA mux (SimFaults::noa_settle_ns), per B or C counter: small
// beside the busy GPU's clock (1e-4 of it at 500 MHz), so per-busy-clock ratios barely move, but
// far above nothing in an idle window.
inline constexpr double kNoaGarbagePerNs = 5e-5;  // 50 per ms

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
  // Gen9–11 only: which A counter each flex register feeds on Gen12 and Xe-LPG is not modelled.
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
  SimFaults faults;
  // The per-event energy model (mmio/sim_energy.h); nullopt: the platform's table
  // (sim_energy_model), which Xe-LPG, Xe-HPG and Xe2 lack.
  std::optional<SimEnergyModel> energy_model;
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

// The platforms `--sim-platform` offers: kblgt2 (the default), tglgt2, mtlgt2, acmgt1, acmgt2,
// acmgt3 (DG2 G11, G12, G10), lnl, bmg, and tglgt2-xe and mtlgt2-xe (those parts with xe bound:
// driver kXe). Throws
// std::invalid_argument listing them for another name.
oa::Platform sim_platform_by_name(std::string_view name);
std::span<const std::string_view> sim_platform_names();
// The PCI id a simulated platform presents (KBL GT2 0x5916, TGL GT2 0x9A49, MTL GT2 0x7D45).
std::uint16_t sim_pci_id(const oa::Platform& platform);

class SimGpu final : public Mmio {
 public:
  // Large enough for every register oaprof touches (Gen12's GEN12_RPSTAT1 is at 0x1381B4). Xe-LPG's
  // media GT (0x380000 on) is beyond it: oaprof programs no register there (oa_programmer.h).
  static constexpr std::uint32_t kRegisterFileBytes = 0x200000;

  SimGpu(SimConfig config, Clock& clock);

  std::uint32_t read32(std::uint32_t offset) override;
  // Every register of the file at one instant, as read32 would read each (one advance of the
  // model for all of them, not one a register: a file-mirrored device reads them all at open).
  std::vector<std::uint32_t> read_all();
  void write32(std::uint32_t offset, std::uint32_t value) override;
  std::string describe() const override;

  // The workload signal: the model counts GPU busy and EU activity only while this is true.
  // With `work` (a kernel whose work is known, bench::known_work) on a part that models it
  // (sim_models_known_work), the EU, send, L3, SLM and GTI counters advance by that work's events
  // (sim_kernel_events), spread over the time the part would take and completed when the kernel
  // stops; otherwise by the workload fractions.
  void set_kernel_running(bool running, const oa::KernelWork* work = nullptr);

  // The GPU's energy since the simulator started, by the per-event model (static power over the
  // time plus each event's energy, with a launch's noise); nullopt without a model. A model,
  // never a measurement: the simulated RAPL tree and hwmon draw from it.
  std::optional<double> gpu_energy_j();
  const std::optional<SimEnergyModel>& energy_model() const { return energy_model_; }

  const SimConfig& config() const { return config_; }
  int eus() const { return eus_; }  // the part's, fused ones excluded
  std::uint64_t context_switches();
  // A context switch now, as another context's work would cause one: the context-saved
  // registers are reloaded from the image (set_context_image) or context_image_value.
  void switch_context();

  // Executes a batch as the render command streamer would: MI_NOOP, MI_LOAD_REGISTER_IMM,
  // MI_STORE_REGISTER_MEM, MI_STORE_DWORD_IMM (Gen4+ form), MI_REPORT_PERF_COUNT (Gen8 form; the
  // report has the format OACONTROL selects, at a 64-byte aligned address; OAR's on Gen12+, see
  // above) up to MI_BATCH_BUFFER_END. Anything else, a truncated command or a missing end throws
  // std::invalid_argument naming the dword.
  void execute_batch(std::span<const std::uint32_t> batch, GpuAddressSpace& memory);

  // Mirrors the register file into `bar` (kRegisterFileBytes / 4 dwords, e.g. a shared file
  // mapping): dwords changed since the last serve() are taken as writes by whoever maps it,
  // then every register's current value is published. Call it whenever the other side must
  // see time pass. A write of the value last published is not seen.
  void serve(std::span<std::uint32_t> bar);

  // OASTATUS bits (Gen8–11; OAG_OASTATUS the same on Gen12) and OACTXCONTROL's timer fields
  // (OAG_OAGLBCTXCTRL's on Gen12), as i915 names them.
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
  // A0..A37 (Xe-LPG's last), GPU_TICKS, B, C.
  static constexpr int kSimA = kSimACounters;
  enum Counter : int {
    kTicks = kSimA,
    kB0 = kTicks + 1,
    kC0 = kB0 + oa::kNumB,
    kCounterCount = kC0 + oa::kNumC
  };

  void advance_locked();
  void advance_locked(std::uint64_t now);
  void count_locked(double dt_ns);
  // This interval's events, by the known work or the workload fractions, into `out`.
  void kernel_events_locked(double dt_ns, double clocks, SimCounts& out);
  void count_eu_events_locked(double eu_clocks, SimCounts& out);
  // Adds the events to the counters (where the OA unit counts them) and their energy.
  void record_events_locked(const SimCounts& events, double dt_ns);
  void finish_known_work_locked();
  // SimFaults that change what a known kernel's work counts (fpu_count_halved, gti_bytes_lost,
  // eu_active_undercount).
  void apply_known_work_faults(SimCounts& counts) const;
  // SimFaults::noa_settle_ns: garbage in B and C over the part of [last_ns_, last_ns_ + dt_ns]
  // before the mux settles.
  void count_unsettled_noa_locked(double dt_ns);
  bool counter_register_locked(std::uint32_t offset, std::uint32_t& value) const;
  void write_oa_report_locked(const oa::FormatLayout& layout, std::uint32_t rpt_id,
                              std::uint8_t* out);
  void write_rpc_report_locked(std::size_t at, std::uint32_t rpt_id,
                               const std::function<std::uint8_t*(std::size_t)>& target);
  // execute_batch's commands: each checks the command at batch[at], runs it and returns the
  // dwords it takes.
  std::size_t load_register_imm_locked(std::span<const std::uint32_t> batch, std::size_t at);
  std::size_t store_register_mem_locked(std::span<const std::uint32_t> batch, std::size_t at,
                                        GpuAddressSpace& memory);
  std::size_t report_perf_count_locked(std::span<const std::uint32_t> batch, std::size_t at,
                                       GpuAddressSpace& memory);
  void context_switch_locked();
  // The OA unit's timestamp against RING_TIMESTAMP, from the simulated RPM_CONFIG0 as i915 reads
  // it (timestamp_clock.h oa_timestamp_cs_shift): its reports' timestamps and its timer count
  // 2^shift per CS tick, the timer's period being (2 << exponent) of those ticks.
  int oa_cs_shift_locked() const;
  // Simulated-clock time of the next periodic report; UINT64_MAX while the timer is off.
  std::uint64_t next_timer_ns_locked() const;
  void write_periodic_report_locked();
  std::uint32_t read_locked(std::uint32_t offset);
  void write_locked(std::uint32_t offset, std::uint32_t value);
  std::uint64_t counter_value_locked(int counter) const;
  bool is_masked_locked(std::uint32_t offset) const;
  const reg::ForcewakeDomain* forcewake_domain_of(std::uint32_t offset, bool ack) const;

  SimConfig config_;
  const reg::OaRegisterBlock& block_;
  int eus_ = 0;  // the part's, fused ones excluded
  std::span<const reg::ForcewakeDomain> forcewake_domains_;
  std::uint32_t never_acking_request_ = 0;  // SimFaults::forcewake_never_acks: its request register
  Clock& clock_;
  std::mutex mu_;
  std::vector<std::uint32_t> regs_;
  std::array<double, kCounterCount> counted_{};  // events since start, before the start offset
  std::uint64_t last_ns_ = 0;
  bool kernel_running_ = false;
  std::optional<SimKernelEvents> known_work_;  // the running kernel's, when known
  double known_progress_ = 0;                  // the share of its events counted so far
  std::optional<SimEnergyModel> energy_model_;
  std::mt19937_64 noise_rng_;
  double launch_noise_ = 1;  // the running launch's factor on its dynamic energy
  double energy_j_ = 0;
  std::uint64_t context_switches_ = 0;
  std::optional<std::uint64_t> mux_written_ns_;  // the last mux write (SimFaults::noa_settle_ns)
  std::vector<std::uint32_t> published_;         // what serve() last put in the mapping
  std::vector<oa::RegisterWrite> context_image_;
  std::size_t oa_buffer_bytes_ = 0;
  std::size_t oa_buffer_used_bytes_ = 0;
  std::deque<oa::RawReport> oa_buffer_;
};

}  // namespace oaprof::mmio
