#include "mmio/sim_gpu.h"

#include <cmath>
#include <ctime>
#include <stdexcept>

#include <fmt/format.h>

#include "mmio/registers.h"

namespace oaprof::mmio {

std::uint64_t SteadyClock::now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

SimGpu::SimGpu(SimConfig config, Clock& clock)
    : config_(std::move(config)), clock_(clock), regs_(kRegisterFileBytes / 4, 0) {
  last_ns_ = clock_.now_ns();
  const auto freq_units = static_cast<std::uint32_t>(std::lround(config_.freq_mhz * 3.0 / 50.0));
  regs_[reg::kRpStat / 4] = freq_units << reg::kRpStatFreqShift;
}

std::string SimGpu::describe() const {
  return fmt::format("simulated {} GT{} ({} EUs, {} MHz)", config_.platform.codename,
                     config_.platform.gt, config_.platform.eus, config_.freq_mhz);
}

void SimGpu::set_kernel_running(bool running) {
  std::lock_guard lock(mu_);
  advance_locked();
  kernel_running_ = running;
}

void SimGpu::advance_locked() {
  const std::uint64_t now = clock_.now_ns();
  const double dt_ns = static_cast<double>(now - last_ns_);
  last_ns_ = now;
  if ((regs_[reg::kOaControl / 4] & reg::kOaControlEnable) == 0) return;
  const double clocks = dt_ns * config_.freq_mhz / 1e3;
  counted_[kTicks] += clocks;
  if (!kernel_running_) return;
  const double eu_clocks = clocks * config_.platform.eus;
  const SimWorkload& w = config_.workload;
  counted_[0] += clocks;  // A0: GPU busy
  counted_[7] += eu_clocks * w.eu_active;
  counted_[8] += eu_clocks * w.eu_stall;
  counted_[9] += eu_clocks * w.fpu_both;
  counted_[10] += eu_clocks * w.fpu0;
  counted_[11] += eu_clocks * w.fpu1;
  counted_[12] += eu_clocks * w.send;
  counted_[13] += eu_clocks * w.thread_occupancy;
  counted_[32] += eu_clocks * w.shader_memory;
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
  if (offset >= reg::kCounterFirst && offset <= reg::kCounterLast) {
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
  if (offset >= reg::kCounterFirst && offset <= reg::kCounterLast) return;  // read-only
  if (offset == reg::kRingTimestamp || offset == reg::kRingTimestampUdw) return;
  regs_[offset / 4] = value;
}

}  // namespace oaprof::mmio
