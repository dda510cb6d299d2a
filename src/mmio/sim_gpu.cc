#include "mmio/sim_gpu.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mmio/commands.h"
#include "mmio/counter_registers.h"
#include "mmio/registers.h"
#include "mmio/whitelist.h"
#include "oa/energy_events.h"

namespace oaprof::mmio {

std::uint64_t SteadyClock::now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

namespace {

// --sim-platform NAME -> the PCI id whose table row it simulates.
struct SimPlatformChoice {
  std::string_view name;
  std::uint16_t pci_id;
  bool xe = false;  // driven by xe instead of the id's default driver
};
constexpr SimPlatformChoice kSimPlatforms[] = {
    {"kblgt2", oa::kSimulatedPciId},  // Kaby Lake GT2, 24 EUs (Gen9)
    {"tglgt2", 0x9A49},               // Tiger Lake GT2, 96 EUs in 6 dual subslices (Gen12)
    {"mtlgt2", 0x7D45},               // Meteor Lake GT2, 4 Xe-cores (Xe-LPG)
    // Arc Alchemist (DG2, Xe-HPG), discrete, by IGT's file names: A380 (G11, 8 Xe-cores), Pro
    // A60 (G12, 16) and A770 (G10, 32).
    {"acmgt1", 0x56A5},
    {"acmgt2", 0x56B3},
    {"acmgt3", 0x56A0},
    // Lunar Lake, 8 Xe2 cores, driven by xe: its OA unit is simulated at xe's observation uapi
    // (gpu::SimXeDevice), not at the registers.
    {"lnl", 0x64A0},
    // Battlemage G21 (Arc B580), 20 Xe2 cores, a discrete card driven by xe, simulated as lnl
    // is; its energy is a simulated hwmon (power/sim_hwmon.h), as a card's is.
    {"bmg", 0xE20B},
    // The same Tiger Lake and Meteor Lake parts bound to xe (xe.force_probe): read through xe's
    // observation uapi, whose simulated kernel side programs the simulated registers as xe_oa.c
    // does.
    {"tglgt2-xe", 0x9A49, true},
    {"mtlgt2-xe", 0x7D45, true},
};
constexpr std::array<std::string_view, std::size(kSimPlatforms)> kSimPlatformNames = [] {
  std::array<std::string_view, std::size(kSimPlatforms)> names{};
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = kSimPlatforms[i].name;
  return names;
}();

}  // namespace

std::span<const std::string_view> sim_platform_names() { return kSimPlatformNames; }

oa::Platform sim_platform_by_name(std::string_view name) {
  for (const SimPlatformChoice& c : kSimPlatforms) {
    if (c.name != name) continue;
    oa::Platform p = oa::require_platform_for_pci_id(c.pci_id);
    if (c.xe) p.driver = oa::KernelDriver::kXe;
    return p;
  }
  throw std::invalid_argument(fmt::format("--sim-platform {}: the simulator models {}", name,
                                          fmt::join(kSimPlatformNames, ", ")));
}

std::uint16_t sim_pci_id(const oa::Platform& platform) {
  for (const SimPlatformChoice& c : kSimPlatforms) {
    const oa::PciId* id = oa::find_pci_id(c.pci_id);
    if (id != nullptr && id->platform->codename == platform.codename &&
        id->platform->gen == platform.gen && id->platform->gt == platform.gt) {
      return c.pci_id;
    }
  }
  return oa::kSimulatedPciId;
}

int simulated_eus(const SimConfig& config) {
  if (config.eus == 0) return config.platform.eus;
  if (config.eus < 1 || config.eus > config.platform.eus) {
    throw std::invalid_argument(fmt::format("--sim-eus {}: a simulated {} GT{} has 1 to {} EUs",
                                            config.eus, config.platform.codename,
                                            config.platform.gt, config.platform.eus));
  }
  return config.eus;
}

SimGpu::SimGpu(SimConfig config, Clock& clock)
    : config_(config),
      block_(reg::oa_block(config_.platform.gen)),
      eus_(simulated_eus(config_)),
      forcewake_domains_(all_forcewake_domains(config_.platform)),
      never_acking_request_(config_.faults.forcewake_never_acks
                                ? oa_forcewake_domains(config_.platform).front().request
                                : 0),
      clock_(clock),
      regs_(kRegisterFileBytes / 4, 0),
      energy_model_(config_.energy_model ? config_.energy_model
                                         : sim_energy_model(config_.platform.gen)),
      noise_rng_(energy_model_ ? energy_model_->seed : 1) {
  last_ns_ = clock_.now_ns();
  const auto freq_units = static_cast<std::uint32_t>(std::lround(config_.freq_mhz * 3.0 / 50.0));
  const reg::FrequencyRegister* freq = reg::frequency_register(config_.platform.gen);
  if (freq == nullptr) freq = &reg::kFreqGen9;
  regs_[freq->offset / 4] = (freq_units & freq->mask) << freq->shift;
  const std::optional<TimestampRegisters> clock_regs =
      config_.timestamp_registers
          ? config_.timestamp_registers
          : crystal_registers_for(config_.platform, config_.platform.timestamp_hz);
  if (clock_regs) {
    regs_[reg::kCtcMode / 4] = clock_regs->ctc_mode;
    regs_[reg::kRpmConfig0 / 4] = clock_regs->rpm_config0;
    regs_[reg::kTimestampOverride / 4] = clock_regs->timestamp_override;
  }
}

std::string SimGpu::describe() const {
  return fmt::format("simulated {} {} ({} EUs, {} MHz)", config_.platform.codename,
                     oa::gt_label(config_.platform), eus_, config_.freq_mhz);
}

void SimGpu::set_kernel_running(bool running, const oa::KernelWork* work) {
  std::lock_guard lock(mu_);
  advance_locked();
  if (kernel_running_ && !running) finish_known_work_locked();
  if (running && !kernel_running_) {
    known_work_.reset();
    if (work != nullptr && sim_models_known_work(config_.platform.gen)) {
      known_work_ = sim_kernel_events(*work, config_.platform.gen, eus_, config_.freq_mhz);
      apply_known_work_faults(known_work_->counts);
    }
    known_progress_ = 0;
    const double noise = energy_model_ ? energy_model_->noise : 0;
    launch_noise_ = std::max(0.0, 1 + noise * std::normal_distribution<double>()(noise_rng_));
  }
  kernel_running_ = running;
}

void SimGpu::apply_known_work_faults(SimCounts& counts) const {
  if (config_.faults.fpu_count_halved && config_.platform.gen == oa::Generation::kGen9) {
    for (const std::size_t fpu : {9, 10, 11}) counts.a[fpu] /= 2;
  }
  if (config_.faults.gti_bytes_lost) {
    for (double& c : counts.c) c /= 2;
  }
  if (config_.faults.eu_active_undercount) {
    // EU active: A7 on Gen9, its four quarters A7-A10 on Gen12 (mmio/sim_work.h).
    const std::size_t last = config_.platform.gen == oa::Generation::kGen12 ? 10 : 7;
    for (std::size_t a = 7; a <= last; ++a) counts.a[a] /= 4;
  }
}

// A kernel ends with all of its work counted, however long it ran (PoCL runs it on the CPU at
// its own pace; a test's clock may not move at all).
void SimGpu::finish_known_work_locked() {
  if (!known_work_) return;
  SimCounts rest;
  rest.add(known_work_->counts, 1 - known_progress_);
  known_progress_ = 1;
  record_events_locked(rest, 0);
  known_work_.reset();
}

std::optional<double> SimGpu::gpu_energy_j() {
  std::lock_guard lock(mu_);
  advance_locked();
  if (!energy_model_) return std::nullopt;
  return energy_j_;
}

const reg::ForcewakeDomain* SimGpu::forcewake_domain_of(std::uint32_t offset, bool ack) const {
  for (const reg::ForcewakeDomain& d : forcewake_domains_) {
    if ((ack ? d.ack : d.request) == offset) return &d;
  }
  return nullptr;
}

bool SimGpu::is_masked_locked(std::uint32_t offset) const {
  return offset == block_.oa_debug || reg::is_masked_config_register(offset) ||
         forcewake_domain_of(offset, false) != nullptr;
}

std::uint64_t SimGpu::context_switches() {
  std::lock_guard lock(mu_);
  advance_locked();
  return context_switches_;
}

void SimGpu::advance_locked() { advance_locked(clock_.now_ns()); }

void SimGpu::advance_locked(std::uint64_t now) {
  const std::uint64_t period = config_.context_switch_period_ns;
  // Events (context switches, timer reports) happen at their own instants, in order, with the
  // counters counted up to each one first.
  while (last_ns_ < now) {
    std::uint64_t next = now;
    if (period != 0) next = std::min(next, (last_ns_ / period + 1) * period);
    const std::uint64_t timer = next_timer_ns_locked();
    next = std::min(next, timer);
    count_locked(static_cast<double>(next - last_ns_));
    last_ns_ = next;
    if (next == timer) write_periodic_report_locked();
    if (period != 0 && next % period == 0) {
      context_switch_locked();
      // Further switches before `now` load the same image again; without timer reports in
      // between, skip to the last one in one step so long gaps stay cheap.
      const std::uint64_t last_switch = now / period * period;
      if (last_switch > last_ns_ &&
          next_timer_ns_locked() == std::numeric_limits<std::uint64_t>::max()) {
        count_locked(static_cast<double>(last_switch - last_ns_));
        context_switches_ += (last_switch - last_ns_) / period;
        last_ns_ = last_switch;
      }
    }
  }
}

void SimGpu::switch_context() {
  std::lock_guard lock(mu_);
  advance_locked();
  context_switch_locked();
}

void SimGpu::context_switch_locked() {
  ++context_switches_;
  auto image_value = [this](std::uint32_t offset) {
    for (const auto& w : context_image_) {
      if (w.address == offset) return w.value;
    }
    return config_.context_image_value;
  };
  regs_[reg::kOaCtxControl / 4] = image_value(reg::kOaCtxControl);
  if (!oa::is_gen12_family(config_.platform.gen)) {
    for (std::uint32_t r : reg::kEuPerfCntl) regs_[r / 4] = image_value(r);
  }
}

void SimGpu::count_locked(double dt_ns) {
  const double clocks = dt_ns * config_.freq_mhz / 1e3;
  if ((regs_[block_.oa_control / 4] & reg::kOaControlEnable) != 0) {
    counted_[kTicks] += clocks * config_.faults.gpu_ticks_per_clock;
    count_unsettled_noa_locked(dt_ns);
  }
  SimCounts events;
  if (kernel_running_) kernel_events_locked(dt_ns, clocks, events);
  record_events_locked(events, dt_ns);
}

void SimGpu::kernel_events_locked(double dt_ns, double clocks, SimCounts& out) {
  out.a[0] = clocks;  // A0: GPU busy
  if (config_.faults.render_counter_leak) {
    out.a[6] += clocks * kRenderLeakPerClock;   // PsThreads
    out.a[21] += clocks * kRenderLeakPerClock;  // RasterizedPixels
  }
  if (!known_work_) {
    count_eu_events_locked(clocks * eus_, out);
    return;
  }
  // The known work's events at the rate the part would do them; the rest when the kernel ends.
  const double step = known_work_->duration_ns > 0
                          ? std::min(1 - known_progress_, dt_ns / known_work_->duration_ns)
                          : 1 - known_progress_;
  out.add(known_work_->counts, step);
  known_progress_ += step;
  // Stalls and thread occupancy stay the workload's fractions of the busy time.
  SimCounts fractions;
  count_eu_events_locked(clocks * eus_, fractions);
  const auto keep_time_based = [&](int counter) { out.a[counter] = fractions.a[counter]; };
  if (config_.platform.gen == oa::Generation::kGen12) {
    for (int q = 0; q < 4; ++q) {
      keep_time_based(11 + q);
      keep_time_based(15 + q);
    }
  } else {
    keep_time_based(8);
    keep_time_based(13);
  }
}

void SimGpu::record_events_locked(const SimCounts& events, double dt_ns) {
  if (energy_model_) {
    const oa::EnergyEventSet* set = oa::energy_events(config_.platform.gen);
    double dynamic = 0;
    for (std::size_t k = 0; set != nullptr && k < set->events.size(); ++k) {
      const double value = oa::event_sum(set->events[k], [&](oa::CounterKind kind, int i) {
        const auto at = static_cast<std::size_t>(i);
        return kind == oa::CounterKind::kA   ? events.a[at]
               : kind == oa::CounterKind::kB ? events.b[at]
                                             : events.c[at];
      });
      if (k < energy_model_->joules_per_event.size()) {
        dynamic += value * energy_model_->joules_per_event[k];
      }
    }
    energy_j_ += energy_model_->static_w * dt_ns * 1e-9 + dynamic * launch_noise_;
  }
  if ((regs_[block_.oa_control / 4] & reg::kOaControlEnable) == 0) return;
  counted_[0] += events.a[0];
  // Gen12+: what the NOA network feeds counts only with SQCNT1's PMON enable (i915 sets it in
  // gen12_enable_metric_set "in order to collect valid metrics").
  if (oa::is_gen12_family(config_.platform.gen) &&
      (regs_[reg::kSqCnt1 / 4] & reg::kSqCnt1PmonEnable) == 0) {
    return;
  }
  for (int i = 1; i < kSimA; ++i) counted_[i] += events.a[static_cast<std::size_t>(i)];
  for (int i = 0; i < oa::kNumB; ++i) counted_[kB0 + i] += events.b[static_cast<std::size_t>(i)];
  for (int i = 0; i < oa::kNumC; ++i) counted_[kC0 + i] += events.c[static_cast<std::size_t>(i)];
}

void SimGpu::count_unsettled_noa_locked(double dt_ns) {
  if (!mux_written_ns_ || config_.faults.noa_settle_ns == 0) return;
  const double settled = static_cast<double>(*mux_written_ns_ + config_.faults.noa_settle_ns);
  const double from = static_cast<double>(last_ns_);
  const double unsettled_ns = std::clamp(settled - from, 0.0, dt_ns);
  for (int i = 0; i < oa::kNumB + oa::kNumC; ++i)
    counted_[kB0 + i] += unsettled_ns * kNoaGarbagePerNs;
}

// The EU counters as IGT's ComputeBasic of each generation reads them (oa-kblgt2.xml,
// oa-tglgt2.xml, oa-mtlgt2.xml; RenderBasic of oa-acmgt*.xml, the only EU set IGT's cut DG2 files
// hold): the fractions of SimWorkload, in the generation's layout.
void SimGpu::count_eu_events_locked(double eu_clocks, SimCounts& out) {
  const SimWorkload& w = config_.workload;
  auto add = [&](int counter, double fraction) {
    const double n = eu_clocks * fraction;
    if (counter < kSimA) {
      out.a[static_cast<std::size_t>(counter)] += n;
    } else {
      out.c[static_cast<std::size_t>(counter - kC0)] += n;
    }
  };
  add(32, w.shader_memory);
  switch (config_.platform.gen) {
    case oa::Generation::kGen12:
      // EuActive = (A7+A8+A9+A10) / EUs; EuStall A11-A14; EuThreadOccupancy =
      // 8 (A15+..+A18) / threads / EUs; GtiReadThroughput 64 (C4+..+C7), write 64 (C2+C3).
      for (int q = 0; q < 4; ++q) {
        add(7 + q, w.eu_active / 4);
        add(11 + q, w.eu_stall / 4);
        add(15 + q, w.thread_occupancy / 8 / 4);
        add(kC0 + 4 + q, w.shader_memory / 4);
      }
      add(kC0 + 2, w.shader_memory / 8);
      add(kC0 + 3, w.shader_memory / 8);
      return;
    case oa::Generation::kXeLpg:
      // XveActive A7, XveStall A8, FpuActive A9, EmActive A10, XveFpuEmActive A12, SendActive
      // A14, XveThreadOccupancy 8 A15 / threads / EUs, XveFpuFlt32 A17; GtiRead/Write 32 A36/A37.
      add(7, w.eu_active);
      add(8, w.eu_stall);
      add(9, w.fpu0);
      add(10, w.fpu1);
      add(12, w.fpu_both);
      add(14, w.send);
      add(15, w.thread_occupancy / 8);
      add(17, w.fpu0);
      add(36, w.shader_memory * 2);
      add(37, w.shader_memory);
      return;
    case oa::Generation::kXeHpg:
      // RenderBasic of oa-acmgt1/2/3.xml: XveActive A7, XveStall A8, XveThreadOccupancy 8 A9 /
      // threads / EUs, XveFpuEmActive A10, VsFpuActive A11, VsEmActive A12, VsSendActive A13;
      // GtiReadThroughput 128 A36, GtiWriteThroughput 128 (C6+C7).
      add(7, w.eu_active);
      add(8, w.eu_stall);
      add(9, w.thread_occupancy / 8);
      add(10, w.fpu_both);
      add(11, w.fpu0);
      add(12, w.fpu1);
      add(13, w.send);
      add(36, w.shader_memory / 2);
      add(kC0 + 6, w.shader_memory / 8);
      add(kC0 + 7, w.shader_memory / 8);
      return;
    default: {
      const double flex_default[7] = {w.eu_active, w.eu_stall, w.fpu_both,        w.fpu0,
                                      w.fpu1,      w.send,     w.thread_occupancy};
      for (int i = 0; i < 7; ++i) {
        const std::uint32_t select = regs_[reg::kEuPerfCntl[i] / 4];
        const int fed = config_.faults.flex_misrouted ? 7 + (i + 1) % 7 : 7 + i;
        add(fed, !config_.flex_events || select == 0
                     ? flex_default[i]
                     : static_cast<double>((select & 0xFF) + 1) / 256.0);
      }
      return;
    }
  }
}

int SimGpu::oa_cs_shift_locked() const {
  return oa_timestamp_cs_shift(config_.platform, regs_[reg::kRpmConfig0 / 4]);
}

std::uint64_t SimGpu::next_timer_ns_locked() const {
  constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
  const std::uint32_t ctx = regs_[block_.ctx_control / 4];
  if (oa_buffer_bytes_ == 0 || (regs_[block_.oa_control / 4] & reg::kOaControlEnable) == 0 ||
      (ctx & kOaCtxControlTimerEnable) == 0) {
    return kNever;
  }
  const int exponent =
      static_cast<int>((ctx & kOaCtxControlTimerPeriodMask) >> kOaCtxControlTimerPeriodShift);
  const double hz = std::ldexp(config_.platform.timestamp_hz, oa_cs_shift_locked());
  const double period_ticks = std::ldexp(2.0, exponent);
  const double ticks_now = std::floor(static_cast<double>(last_ns_) * hz / 1e9);
  const double next_tick = (std::floor(ticks_now / period_ticks) + 1) * period_ticks;
  const double ns = std::ceil(next_tick * 1e9 / hz);
  if (ns >= 1.8e19) return kNever;
  auto at = static_cast<std::uint64_t>(ns);
  // The report fires once the timestamp the registers show has reached the tick.
  while (std::floor(static_cast<double>(at) * hz / 1e9) < next_tick) ++at;
  return std::max(at, last_ns_ + 1);
}

void SimGpu::write_periodic_report_locked() {
  const oa::FormatLayout* layout =
      format_for_select(config_.platform.gen, regs_[block_.oa_control / 4]);
  if (layout == nullptr) return;
  const auto bytes = static_cast<std::size_t>(layout->size_bytes);
  if (oa_buffer_used_bytes_ + bytes > oa_buffer_bytes_) {
    regs_[block_.oa_status / 4] |= kOaStatusReportLost | kOaStatusBufferOverflow;
    return;
  }
  oa::RawReport raw;
  raw.size = layout->size_bytes;
  write_oa_report_locked(*layout, kTimerReportId, raw.bytes.data());
  oa_buffer_.push_back(raw);
  oa_buffer_used_bytes_ += bytes;
}

// A report of the OA unit's counters in `layout`, as the unit writes it.
void SimGpu::write_oa_report_locked(const oa::FormatLayout& layout, std::uint32_t rpt_id,
                                    std::uint8_t* out) {
  oa::Report r = read_counter_registers(block_, layout.format, oa_cs_shift_locked(),
                                        [this](std::uint32_t off) { return read_locked(off); });
  r.rpt_id = rpt_id;
  r.timestamp <<= config_.faults.oa_timestamp_extra_shift;
  if (rpt_id == kTimerReportId && config_.faults.periodic_counts_doubled) {
    // Modulo each field's width: encode() keeps the low bits, so deltas double too.
    for (int i = 1; i < oa::kMaxNumA; ++i) r.a[i] <<= 1;
  }
  const oa::RawReport raw = oa::encode(layout.format, r);
  std::memcpy(out, raw.bytes.data(), static_cast<std::size_t>(raw.size));
}

void SimGpu::set_context_image(std::vector<oa::RegisterWrite> image) {
  std::lock_guard lock(mu_);
  advance_locked();
  if (config_.faults.context_image_stale) return;
  context_image_ = std::move(image);
}

void SimGpu::init_oa_buffer(std::size_t bytes) {
  std::lock_guard lock(mu_);
  advance_locked();
  oa_buffer_.clear();
  oa_buffer_used_bytes_ = 0;
  oa_buffer_bytes_ = bytes;
  regs_[block_.oa_status / 4] = 0;
}

std::size_t SimGpu::oa_buffer_bytes() {
  std::lock_guard lock(mu_);
  return oa_buffer_bytes_;
}

std::vector<oa::RawReport> SimGpu::read_oa_reports(std::size_t max_reports) {
  std::lock_guard lock(mu_);
  advance_locked();
  std::vector<oa::RawReport> out;
  while (!oa_buffer_.empty() && out.size() < max_reports) {
    oa_buffer_used_bytes_ -= static_cast<std::size_t>(oa_buffer_.front().size);
    out.push_back(oa_buffer_.front());
    oa_buffer_.pop_front();
  }
  return out;
}

std::size_t SimGpu::oa_reports_pending() {
  std::lock_guard lock(mu_);
  advance_locked();
  return oa_buffer_.size();
}

std::uint64_t SimGpu::counter_value_locked(int counter) const {
  const bool is40 = counter < oa::kNumA40;
  const std::uint64_t mask = is40 ? (std::uint64_t{1} << 40) - 1 : 0xFFFFFFFFu;
  const auto events = static_cast<std::uint64_t>(counted_[counter]);
  return (config_.counter_start + events) & mask;
}

// When `offset` is one of the block's counter registers: its value, and true.
bool SimGpu::counter_register_locked(std::uint32_t offset, std::uint32_t& value) const {
  auto low = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
  if (offset >= block_.a_low(0) && offset < block_.a_low(oa::kNumA40)) {
    const std::uint64_t v = counter_value_locked(static_cast<int>((offset - block_.a_base) / 8));
    value = (offset - block_.a_base) % 8 == 0 ? low(v) : low(v >> 32);
    return true;
  }
  for (int i = 32; i < kSimA; ++i) {
    if (block_.a_upper(i) != 0 && offset == block_.a_upper(i)) {
      value = low(counter_value_locked(i));
      return true;
    }
  }
  if (offset == block_.gpu_ticks) {
    value = low(counter_value_locked(kTicks));
    return true;
  }
  for (int i = 0; i < oa::kNumB; ++i) {
    if (offset == block_.b(i)) {
      value = low(counter_value_locked(kB0 + i));
      return true;
    }
  }
  for (int i = 0; i < oa::kNumC; ++i) {
    if (offset == block_.c(i)) {
      value = low(counter_value_locked(kC0 + i));
      return true;
    }
  }
  return false;
}

std::uint32_t SimGpu::read32(std::uint32_t offset) {
  if (offset % 4 != 0 || offset >= kRegisterFileBytes) {
    throw std::out_of_range(
        fmt::format("SimGpu: read of 0x{:X} outside the register file", offset));
  }
  std::lock_guard lock(mu_);
  const std::uint64_t now = clock_.now_ns();
  if (now >= last_ns_ + clock_.read_quantum_ns()) advance_locked(now);
  return read_locked(offset);
}

std::vector<std::uint32_t> SimGpu::read_all() {
  std::lock_guard lock(mu_);
  advance_locked();
  std::vector<std::uint32_t> values(regs_.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = read_locked(static_cast<std::uint32_t>(i * 4));
  }
  return values;
}

std::uint32_t SimGpu::read_locked(std::uint32_t offset) {
  if (std::uint32_t value = 0; counter_register_locked(offset, value)) return value;
  if (offset == reg::kRingTimestamp || offset == reg::kRingTimestampUdw) {
    const auto ts = static_cast<std::uint64_t>(static_cast<double>(last_ns_) *
                                               config_.platform.timestamp_hz / 1e9);
    return offset == reg::kRingTimestamp ? static_cast<std::uint32_t>(ts)
                                         : static_cast<std::uint32_t>(ts >> 32);
  }
  return regs_[offset / 4];
}

void SimGpu::write32(std::uint32_t offset, std::uint32_t value) {
  if (offset % 4 != 0 || offset >= kRegisterFileBytes) {
    throw std::out_of_range(
        fmt::format("SimGpu: write of 0x{:X} outside the register file", offset));
  }
  std::lock_guard lock(mu_);
  advance_locked();  // events so far count under the old OACONTROL
  write_locked(offset, value);
}

void SimGpu::write_locked(std::uint32_t offset, std::uint32_t value) {
  if (std::uint32_t ignored = 0; counter_register_locked(offset, ignored)) return;  // read-only
  if (offset == reg::kRingTimestamp || offset == reg::kRingTimestampUdw) return;
  if (forcewake_domain_of(offset, true) != nullptr) return;  // acks are the hardware's
  if (is_masked_locked(offset)) {
    value = reg::apply_masked(regs_[offset / 4], value);
    const auto* d = forcewake_domain_of(offset, false);
    if (d != nullptr && d->request != never_acking_request_) regs_[d->ack / 4] = value;
  }
  if (config_.faults.oa_debug_not_restored && offset == block_.oa_debug && value == 0) return;
  if (is_whitelisted(config_.platform, ConfigRegisterKind::kMux, offset))
    mux_written_ns_ = last_ns_;
  regs_[offset / 4] = value;
}

// MI_REPORT_PERF_COUNT: Gen8–11 report the global OA unit in the format OACONTROL selects. Gen12
// and Xe-LPG report the per-context OAR unit (i915_perf.c: "For Gen12+ we gain a new OAR unit
// that only monitors the RCS on a per context basis"): enabled, in the format OAR_OACONTROL
// selects (format in bits 3:1), it counts this one context's work, which is all the model has;
// not enabled (only i915 enables it, in a context image), the report carries the header and no
// counts.
void SimGpu::write_rpc_report_locked(std::size_t at, std::uint32_t rpt_id,
                                     const std::function<std::uint8_t*(std::size_t)>& target) {
  const oa::Generation gen = config_.platform.gen;
  if (!oa::is_gen12_family(gen)) {
    const oa::FormatLayout* layout = format_for_select(gen, regs_[block_.oa_control / 4]);
    if (layout == nullptr) {
      throw std::invalid_argument(fmt::format(
          "batch: MI_REPORT_PERF_COUNT at dword {} with OACONTROL 0x{:X}, whose counter select "
          "names no report format",
          at, regs_[block_.oa_control / 4]));
    }
    write_oa_report_locked(*layout, rpt_id, target(static_cast<std::size_t>(layout->size_bytes)));
    return;
  }
  const std::uint32_t oar = regs_[reg::kOarOaControl / 4];
  const oa::FormatLayout* layout =
      format_for_select(gen, ((oar >> 1) & 0x7u) << reg::kOaControlSelectShift);
  if ((oar & reg::kOaControlEnable) != 0 && layout != nullptr) {
    write_oa_report_locked(*layout, rpt_id, target(static_cast<std::size_t>(layout->size_bytes)));
    return;
  }
  const oa::FormatLayout& fallback = oa::formats_for(gen).front().size_bytes == 256
                                         ? oa::formats_for(gen).front()
                                         : oa::layout_of(oa::ReportFormat::kA32u40_A4u32_B8_C8);
  oa::Report r;
  r.rpt_id = rpt_id;
  r.timestamp = report_timestamp_from_cs(read_locked(reg::kRingTimestamp), oa_cs_shift_locked())
                << config_.faults.oa_timestamp_extra_shift;
  const oa::RawReport raw = oa::encode(fallback.format, r);
  std::memcpy(target(static_cast<std::size_t>(raw.size)), raw.bytes.data(),
              static_cast<std::size_t>(raw.size));
}

namespace {

// The length check every command makes before reading its operands.
void require_dwords(std::span<const std::uint32_t> batch, std::size_t at, std::size_t dwords,
                    const char* what) {
  if (at + dwords > batch.size()) {
    throw std::invalid_argument(
        fmt::format("batch: {} at dword {} needs {} dwords but the batch ends after {}", what, at,
                    dwords, batch.size()));
  }
}

// MI_STORE_DWORD_IMM at batch[at]: touches no register, so it needs no SimGpu state. Returns the
// dwords it takes.
std::size_t store_dword_imm(std::span<const std::uint32_t> batch, std::size_t at,
                            GpuAddressSpace& memory) {
  const std::uint32_t dw0 = batch[at];
  if ((dw0 & 0xFF) != 2) {
    throw std::invalid_argument(fmt::format(
        "batch: MI_STORE_DWORD_IMM at dword {} has length field {}; the simulator runs the "
        "Gen4+ one-dword form (2)",
        at, dw0 & 0xFF));
  }
  require_dwords(batch, at, 4, "MI_STORE_DWORD_IMM");
  const std::uint64_t address =
      (static_cast<std::uint64_t>(batch[at + 2]) << 32) | (batch[at + 1] & ~3u);
  std::memcpy(memory.resolve(address, 4), &batch[at + 3], 4);
  return 4;
}

}  // namespace

std::size_t SimGpu::load_register_imm_locked(std::span<const std::uint32_t> batch, std::size_t at) {
  const std::uint32_t dw0 = batch[at];
  const std::size_t len = (dw0 & 0xFF) + 2;
  if (len % 2 == 0) {
    throw std::invalid_argument(fmt::format(
        "batch: MI_LOAD_REGISTER_IMM at dword {} has length field {}, which is not an odd "
        "number of (register, value) dwords",
        at, dw0 & 0xFF));
  }
  require_dwords(batch, at, len, "MI_LOAD_REGISTER_IMM");
  for (std::size_t k = at + 1; k + 1 < at + len; k += 2) {
    const std::uint32_t offset = batch[k] & 0x7FFFFC;
    if (offset >= kRegisterFileBytes) {
      throw std::invalid_argument(
          fmt::format("batch: MI_LOAD_REGISTER_IMM at dword {} names register 0x{:X} "
                      "outside the register file",
                      at, offset));
    }
    write_locked(offset, batch[k + 1]);
  }
  return len;
}

std::size_t SimGpu::store_register_mem_locked(std::span<const std::uint32_t> batch, std::size_t at,
                                              GpuAddressSpace& memory) {
  const std::uint32_t dw0 = batch[at];
  if ((dw0 & 0xFF) != 2) {
    throw std::invalid_argument(
        fmt::format("batch: MI_STORE_REGISTER_MEM at dword {} has length field {}; Gen8+ expects 2",
                    at, dw0 & 0xFF));
  }
  require_dwords(batch, at, 4, "MI_STORE_REGISTER_MEM");
  const std::uint32_t offset = batch[at + 1] & 0x7FFFFC;
  if (offset >= kRegisterFileBytes) {
    throw std::invalid_argument(
        fmt::format("batch: MI_STORE_REGISTER_MEM at dword {} names register 0x{:X} outside the "
                    "register file",
                    at, offset));
  }
  const std::uint64_t address =
      (static_cast<std::uint64_t>(batch[at + 3]) << 32) | (batch[at + 2] & ~3u);
  const std::uint32_t value = read_locked(offset);
  std::memcpy(memory.resolve(address, 4), &value, 4);
  return 4;
}

std::size_t SimGpu::report_perf_count_locked(std::span<const std::uint32_t> batch, std::size_t at,
                                             GpuAddressSpace& memory) {
  const std::uint32_t dw0 = batch[at];
  if ((dw0 & 0xFF) != 2) {
    throw std::invalid_argument(fmt::format(
        "batch: MI_REPORT_PERF_COUNT at dword {} has length field {}: that is the Gen6/7 "
        "form, and this device is {}",
        at, dw0 & 0xFF, oa::generation_name(config_.platform.gen)));
  }
  require_dwords(batch, at, 4, "MI_REPORT_PERF_COUNT");
  const std::uint64_t address =
      (static_cast<std::uint64_t>(batch[at + 2]) << 32) | (batch[at + 1] & ~1u);
  if (address % cmd::kReportAlignment != 0) {
    throw std::invalid_argument(
        fmt::format("batch: MI_REPORT_PERF_COUNT at dword {} targets 0x{:X}, which is not 64-byte "
                    "aligned",
                    at, address));
  }
  write_rpc_report_locked(at, batch[at + 3],
                          [&](std::size_t n) { return memory.resolve(address, n); });
  return 4;
}

void SimGpu::execute_batch(std::span<const std::uint32_t> batch, GpuAddressSpace& memory) {
  std::lock_guard lock(mu_);
  advance_locked();
  std::size_t i = 0;
  while (i < batch.size()) {
    const std::uint32_t dw0 = batch[i];
    if (dw0 == cmd::kMiNoop) {
      ++i;
      continue;
    }
    if (!cmd::is_mi(dw0)) {
      throw std::invalid_argument(fmt::format(
          "batch: dword {} (0x{:08X}) is not an MI command; the simulator runs only MI_NOOP, "
          "MI_LOAD_REGISTER_IMM, MI_STORE_REGISTER_MEM, MI_STORE_DWORD_IMM, "
          "MI_REPORT_PERF_COUNT and MI_BATCH_BUFFER_END",
          i, dw0));
    }
    switch (cmd::opcode_of(dw0)) {
      case cmd::kOpBatchBufferEnd:
        return;
      case cmd::kOpLoadRegisterImm:
        i += load_register_imm_locked(batch, i);
        break;
      case cmd::kOpStoreRegisterMem:
        i += store_register_mem_locked(batch, i, memory);
        break;
      case cmd::kOpReportPerfCount:
        i += report_perf_count_locked(batch, i, memory);
        break;
      case cmd::kOpStoreDataImm:
        i += store_dword_imm(batch, i, memory);
        break;
      default:
        throw std::invalid_argument(fmt::format(
            "batch: dword {} (0x{:08X}) is MI opcode 0x{:02X}, which the simulator does not run; "
            "it runs MI_NOOP, MI_LOAD_REGISTER_IMM, MI_STORE_REGISTER_MEM, MI_STORE_DWORD_IMM, "
            "MI_REPORT_PERF_COUNT and MI_BATCH_BUFFER_END",
            i, dw0, cmd::opcode_of(dw0)));
    }
  }
  throw std::invalid_argument(
      fmt::format("batch: {} dwords without MI_BATCH_BUFFER_END", batch.size()));
}

void SimGpu::serve(std::span<std::uint32_t> bar) {
  if (bar.size() < kRegisterFileBytes / 4) {
    throw std::invalid_argument(
        fmt::format("SimGpu::serve: the mapping holds {} bytes, fewer "
                    "than the register file's {}",
                    bar.size() * 4, kRegisterFileBytes));
  }
  std::lock_guard lock(mu_);
  advance_locked();
  const std::size_t n = kRegisterFileBytes / 4;
  if (published_.empty()) {
    // First call: whatever the mapping holds was never published; take ours as the truth.
    published_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i)
      published_[i] = bar[i] = read_locked(static_cast<std::uint32_t>(i * 4));
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (bar[i] != published_[i]) write_locked(static_cast<std::uint32_t>(i * 4), bar[i]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    published_[i] = bar[i] = read_locked(static_cast<std::uint32_t>(i * 4));
  }
}

}  // namespace oaprof::mmio
