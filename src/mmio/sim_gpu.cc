#include "mmio/sim_gpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "mmio/commands.h"
#include "mmio/counter_registers.h"
#include "mmio/registers.h"

namespace oaprof::mmio {

std::uint64_t SteadyClock::now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

int simulated_eus(const SimConfig& config) {
  if (config.eus == 0) return config.platform.eus;
  if (config.eus < 1 || config.eus > config.platform.eus) {
    throw std::invalid_argument(fmt::format(
        "--sim-eus {}: a simulated {} GT{} has 1 to {} EUs", config.eus,
        config.platform.codename, config.platform.gt, config.platform.eus));
  }
  return config.eus;
}

SimGpu::SimGpu(SimConfig config, Clock& clock)
    : config_(std::move(config)),
      eus_(simulated_eus(config_)),
      forcewake_domains_(all_forcewake_domains(config_.platform)),
      clock_(clock),
      regs_(kRegisterFileBytes / 4, 0) {
  last_ns_ = clock_.now_ns();
  const auto freq_units = static_cast<std::uint32_t>(std::lround(config_.freq_mhz * 3.0 / 50.0));
  regs_[reg::kRpStat / 4] = freq_units << reg::kRpStatFreqShift;
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
  return fmt::format("simulated {} GT{} ({} EUs, {} MHz)", config_.platform.codename,
                     config_.platform.gt, eus_, config_.freq_mhz);
}

void SimGpu::set_kernel_running(bool running) {
  std::lock_guard lock(mu_);
  advance_locked();
  kernel_running_ = running;
}

const reg::ForcewakeDomain* SimGpu::forcewake_domain_of(std::uint32_t offset, bool ack) const {
  for (const reg::ForcewakeDomain& d : forcewake_domains_) {
    if ((ack ? d.ack : d.request) == offset) return &d;
  }
  return nullptr;
}

bool SimGpu::is_masked_locked(std::uint32_t offset) const {
  return offset == reg::kOaDebug || reg::is_masked_config_register(offset) ||
         forcewake_domain_of(offset, false) != nullptr;
}

std::uint64_t SimGpu::context_switches() {
  std::lock_guard lock(mu_);
  advance_locked();
  return context_switches_;
}

void SimGpu::advance_locked() {
  const std::uint64_t now = clock_.now_ns();
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

void SimGpu::context_switch_locked() {
  ++context_switches_;
  auto image_value = [this](std::uint32_t offset) {
    for (const auto& w : context_image_) {
      if (w.address == offset) return w.value;
    }
    return config_.context_image_value;
  };
  regs_[reg::kOaCtxControl / 4] = image_value(reg::kOaCtxControl);
  for (std::uint32_t r : reg::kEuPerfCntl) regs_[r / 4] = image_value(r);
}

void SimGpu::count_locked(double dt_ns) {
  if ((regs_[reg::kOaControl / 4] & reg::kOaControlEnable) == 0) return;
  const double clocks = dt_ns * config_.freq_mhz / 1e3;
  counted_[kTicks] += clocks;
  if (!kernel_running_) return;
  const double eu_clocks = clocks * eus_;
  const SimWorkload& w = config_.workload;
  const double flex_default[7] = {w.eu_active, w.eu_stall, w.fpu_both, w.fpu0,
                                  w.fpu1,      w.send,     w.thread_occupancy};
  counted_[0] += clocks;  // A0: GPU busy
  for (int i = 0; i < 7; ++i) {
    const std::uint32_t select = regs_[reg::kEuPerfCntl[i] / 4];
    const double fraction = !config_.flex_events || select == 0
                                ? flex_default[i]
                                : static_cast<double>((select & 0xFF) + 1) / 256.0;
    counted_[7 + i] += eu_clocks * fraction;
  }
  counted_[32] += eu_clocks * w.shader_memory;
}

std::uint64_t SimGpu::next_timer_ns_locked() const {
  constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
  const std::uint32_t ctx = regs_[reg::kOaCtxControl / 4];
  if (oa_buffer_bytes_ == 0 || (regs_[reg::kOaControl / 4] & reg::kOaControlEnable) == 0 ||
      (ctx & kOaCtxControlTimerEnable) == 0) {
    return kNever;
  }
  const int exponent =
      static_cast<int>((ctx & kOaCtxControlTimerPeriodMask) >> kOaCtxControlTimerPeriodShift);
  const double hz = config_.platform.timestamp_hz;
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
      format_for_select(config_.platform.gen, regs_[reg::kOaControl / 4]);
  if (layout == nullptr) return;
  const auto bytes = static_cast<std::size_t>(layout->size_bytes);
  if (oa_buffer_used_bytes_ + bytes > oa_buffer_bytes_) {
    regs_[reg::kOaStatus / 4] |= kOaStatusReportLost | kOaStatusBufferOverflow;
    return;
  }
  oa::Report r = read_counter_registers(layout->format,
                                        [this](std::uint32_t off) { return read_locked(off); });
  r.rpt_id = kTimerReportId;
  oa_buffer_.push_back(oa::encode(layout->format, r));
  oa_buffer_used_bytes_ += bytes;
}

void SimGpu::set_context_image(std::vector<oa::RegisterWrite> image) {
  std::lock_guard lock(mu_);
  advance_locked();
  context_image_ = std::move(image);
}

void SimGpu::init_oa_buffer(std::size_t bytes) {
  std::lock_guard lock(mu_);
  advance_locked();
  oa_buffer_.clear();
  oa_buffer_used_bytes_ = 0;
  oa_buffer_bytes_ = bytes;
  regs_[reg::kOaStatus / 4] = 0;
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

std::uint32_t SimGpu::read_counter_register_locked(std::uint32_t offset) const {
  if (offset < reg::a32(32)) {  // A0..A31, low and high dwords
    const int i = static_cast<int>((offset - reg::kCounterFirst) / 8);
    const std::uint64_t v = counter_value_locked(i);
    return (offset % 8 == 0) ? static_cast<std::uint32_t>(v) : static_cast<std::uint32_t>(v >> 32);
  }
  if (offset < reg::kGpuTicks) {
    return static_cast<std::uint32_t>(counter_value_locked(32 + static_cast<int>((offset - reg::a32(32)) / 4)));
  }
  if (offset == reg::kGpuTicks) return static_cast<std::uint32_t>(counter_value_locked(kTicks));
  if (offset < reg::c(0)) {
    return static_cast<std::uint32_t>(counter_value_locked(kB0 + static_cast<int>((offset - reg::b(0)) / 4)));
  }
  return static_cast<std::uint32_t>(counter_value_locked(kC0 + static_cast<int>((offset - reg::c(0)) / 4)));
}

std::uint32_t SimGpu::read32(std::uint32_t offset) {
  if (offset % 4 != 0 || offset >= kRegisterFileBytes) {
    throw std::out_of_range(fmt::format("SimGpu: read of 0x{:X} outside the register file", offset));
  }
  std::lock_guard lock(mu_);
  advance_locked();
  return read_locked(offset);
}

std::uint32_t SimGpu::read_locked(std::uint32_t offset) {
  // 0x2914–0x291C, between GPU_TICKS and B0, hold no counter.
  const bool hole = offset > reg::kGpuTicks && offset < reg::b(0);
  if (offset >= reg::kCounterFirst && offset <= reg::kCounterLast && !hole) {
    return read_counter_register_locked(offset);
  }
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
    throw std::out_of_range(fmt::format("SimGpu: write of 0x{:X} outside the register file", offset));
  }
  std::lock_guard lock(mu_);
  advance_locked();  // events so far count under the old OACONTROL
  write_locked(offset, value);
}

void SimGpu::write_locked(std::uint32_t offset, std::uint32_t value) {
  if (offset >= reg::kCounterFirst && offset <= reg::kCounterLast) return;  // read-only
  if (offset == reg::kRingTimestamp || offset == reg::kRingTimestampUdw) return;
  if (forcewake_domain_of(offset, true) != nullptr) return;  // acks are the hardware's
  if (is_masked_locked(offset)) {
    value = reg::apply_masked(regs_[offset / 4], value);
    if (const auto* d = forcewake_domain_of(offset, false)) regs_[d->ack / 4] = value;
  }
  regs_[offset / 4] = value;
}

void SimGpu::execute_batch(std::span<const std::uint32_t> batch, GpuAddressSpace& memory) {
  std::lock_guard lock(mu_);
  advance_locked();
  auto need = [&](std::size_t at, std::size_t dwords, const char* what) {
    if (at + dwords > batch.size()) {
      throw std::invalid_argument(fmt::format(
          "batch: {} at dword {} needs {} dwords but the batch ends after {}", what, at, dwords,
          batch.size()));
    }
  };
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
          "MI_LOAD_REGISTER_IMM, MI_STORE_REGISTER_MEM, MI_REPORT_PERF_COUNT and "
          "MI_BATCH_BUFFER_END", i, dw0));
    }
    switch (cmd::opcode_of(dw0)) {
      case cmd::kOpBatchBufferEnd: return;
      case cmd::kOpLoadRegisterImm: {
        const std::size_t len = (dw0 & 0xFF) + 2;
        if (len % 2 == 0) {
          throw std::invalid_argument(fmt::format(
              "batch: MI_LOAD_REGISTER_IMM at dword {} has length field {}, which is not an odd "
              "number of (register, value) dwords", i, dw0 & 0xFF));
        }
        need(i, len, "MI_LOAD_REGISTER_IMM");
        for (std::size_t k = i + 1; k + 1 < i + len; k += 2) {
          const std::uint32_t offset = batch[k] & 0x7FFFFC;
          if (offset >= kRegisterFileBytes) {
            throw std::invalid_argument(
                fmt::format("batch: MI_LOAD_REGISTER_IMM at dword {} names register 0x{:X} "
                            "outside the register file", i, offset));
          }
          write_locked(offset, batch[k + 1]);
        }
        i += len;
        break;
      }
      case cmd::kOpStoreRegisterMem: {
        if ((dw0 & 0xFF) != 2) {
          throw std::invalid_argument(fmt::format(
              "batch: MI_STORE_REGISTER_MEM at dword {} has length field {}; Gen8+ expects 2", i,
              dw0 & 0xFF));
        }
        need(i, 4, "MI_STORE_REGISTER_MEM");
        const std::uint32_t offset = batch[i + 1] & 0x7FFFFC;
        if (offset >= kRegisterFileBytes) {
          throw std::invalid_argument(fmt::format(
              "batch: MI_STORE_REGISTER_MEM at dword {} names register 0x{:X} outside the "
              "register file", i, offset));
        }
        const std::uint64_t address =
            (static_cast<std::uint64_t>(batch[i + 3]) << 32) | (batch[i + 2] & ~3u);
        const std::uint32_t value = read_locked(offset);
        std::memcpy(memory.resolve(address, 4), &value, 4);
        i += 4;
        break;
      }
      case cmd::kOpReportPerfCount: {
        if ((dw0 & 0xFF) != 2) {
          throw std::invalid_argument(fmt::format(
              "batch: MI_REPORT_PERF_COUNT at dword {} has length field {}: that is the Gen6/7 "
              "form, and this device is {}", i, dw0 & 0xFF,
              oa::generation_name(config_.platform.gen)));
        }
        need(i, 4, "MI_REPORT_PERF_COUNT");
        const std::uint64_t address =
            (static_cast<std::uint64_t>(batch[i + 2]) << 32) | (batch[i + 1] & ~1u);
        if (address % cmd::kReportAlignment != 0) {
          throw std::invalid_argument(fmt::format(
              "batch: MI_REPORT_PERF_COUNT at dword {} targets 0x{:X}, which is not 64-byte "
              "aligned", i, address));
        }
        const oa::FormatLayout* layout =
            format_for_select(config_.platform.gen, regs_[reg::kOaControl / 4]);
        if (layout == nullptr) {
          throw std::invalid_argument(fmt::format(
              "batch: MI_REPORT_PERF_COUNT at dword {} with OACONTROL 0x{:X}, whose counter "
              "select names no report format", i, regs_[reg::kOaControl / 4]));
        }
        oa::Report r = read_counter_registers(
            layout->format, [this](std::uint32_t off) { return read_locked(off); });
        r.rpt_id = batch[i + 3];
        const oa::RawReport raw = oa::encode(layout->format, r);
        std::memcpy(memory.resolve(address, static_cast<std::size_t>(raw.size)), raw.bytes.data(),
                    static_cast<std::size_t>(raw.size));
        i += 4;
        break;
      }
      default:
        throw std::invalid_argument(fmt::format(
            "batch: dword {} (0x{:08X}) is MI opcode 0x{:02X}, which the simulator does not run; "
            "it runs MI_NOOP, MI_LOAD_REGISTER_IMM, MI_STORE_REGISTER_MEM, MI_REPORT_PERF_COUNT "
            "and MI_BATCH_BUFFER_END", i, dw0, cmd::opcode_of(dw0)));
    }
  }
  throw std::invalid_argument(
      fmt::format("batch: {} dwords without MI_BATCH_BUFFER_END", batch.size()));
}

void SimGpu::serve(std::span<std::uint32_t> bar) {
  if (bar.size() < kRegisterFileBytes / 4) {
    throw std::invalid_argument(fmt::format("SimGpu::serve: the mapping holds {} bytes, fewer "
                                            "than the register file's {}", bar.size() * 4,
                                            kRegisterFileBytes));
  }
  std::lock_guard lock(mu_);
  advance_locked();
  const std::size_t n = kRegisterFileBytes / 4;
  if (published_.empty()) {
    // First call: whatever the mapping holds was never published; take ours as the truth.
    published_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) published_[i] = bar[i] = read_locked(static_cast<std::uint32_t>(i * 4));
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
