#include "mmio/oa_programmer.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "mmio/registers.h"
#include "mmio/whitelist.h"

namespace oaprof::mmio {
namespace {

bool is_context_saved(std::uint32_t address) {
  return address == reg::kOaCtxControl ||
         std::find(std::begin(reg::kEuPerfCntl), std::end(reg::kEuPerfCntl), address) !=
             std::end(reg::kEuPerfCntl);
}

PlanStep write(std::uint32_t address, std::uint32_t value) {
  return {PlanStep::Kind::kWrite, address, value, {}, is_context_saved(address)};
}

// A mux write as i915 applies it: the masked ones (HALF_SLICE_CHICKEN2, WAIT_FOR_RC6_EXIT) as
// masked writes without the kernel's workaround bits, so a configuration can neither undo a
// workaround nor be restored by a plain write the hardware ignores.
PlanStep mux_write(const oa::RegisterWrite& w) {
  if (!reg::is_masked_config_register(w.address)) return write(w.address, w.value);
  return {PlanStep::Kind::kMaskedWrite, w.address, reg::strip_workaround_bits(w.address, w.value)};
}

}  // namespace

std::vector<PlanStep> plan_oa_programming(const oa::Platform& platform, oa::ReportFormat format,
                                          const OaConfig& config) {
  const oa::Generation gen = platform.gen;
  if (gen != oa::Generation::kGen8 && gen != oa::Generation::kGen9 &&
      gen != oa::Generation::kGen11) {
    throw std::invalid_argument(fmt::format(
        "{} is {}: oaprof programs the OA unit over MMIO on Gen8, Gen9 and Gen11 only; use "
        "--access perf", platform.codename, oa::generation_name(gen)));
  }
  const auto formats = oa::formats_for(gen);
  const oa::FormatLayout& layout = oa::layout_of(format);
  if (std::none_of(formats.begin(), formats.end(),
                   [format](const oa::FormatLayout& l) { return l.format == format; })) {
    throw std::invalid_argument(fmt::format("{} has no report format {}; see --format help",
                                            oa::generation_name(gen), layout.name));
  }
  for (const auto& w : config.mux) check_whitelisted(platform, ConfigRegisterKind::kMux, w);
  for (const auto& w : config.boolean) {
    check_whitelisted(platform, ConfigRegisterKind::kBoolean, w);
  }
  for (const auto& w : config.flex) check_whitelisted(platform, ConfigRegisterKind::kFlex, w);

  std::vector<PlanStep> plan;
  plan.push_back(write(reg::kOaControl, 0));
  if (gen != oa::Generation::kGen8) {
    plan.push_back({PlanStep::Kind::kMaskedWrite, reg::kOaDebug,
                    reg::masked_enable(reg::kOaDebugDisableClockRatioReports |
                                       reg::kOaDebugIncludeClockRatio)});
  }
  for (const auto& w : config.mux) plan.push_back(mux_write(w));
  if (!config.mux.empty()) {
    PlanStep settle;
    settle.kind = PlanStep::Kind::kSettle;
    settle.settle = kNoaSettle;
    plan.push_back(settle);
  }
  for (const auto& w : config.boolean) plan.push_back(write(w.address, w.value));
  for (const auto& w : config.flex) plan.push_back(write(w.address, w.value));
  plan.push_back(write(reg::kOaCtxControl, reg::kOaCtxControlCounterResume));
  plan.push_back(write(reg::kOaControl,
                       (static_cast<std::uint32_t>(layout.select_code)
                        << reg::kOaControlSelectShift) | reg::kOaControlEnable));
  return plan;
}

OaProgrammer::OaProgrammer(Mmio& mmio, Sleep sleep)
    : mmio_(mmio), sleep_(std::move(sleep)), saved_(mmio) {
  if (!sleep_) sleep_ = [](std::chrono::microseconds d) { std::this_thread::sleep_for(d); };
}

OaProgrammer::~OaProgrammer() { restore(); }

void OaProgrammer::program(std::vector<PlanStep> plan) {
  restore();
  // Someone else's OA session (an i915 perf stream, another profiler) would silently lose its
  // configuration, and this one would count with whatever that one changes next.
  if (const std::uint32_t control = mmio_.read32(reg::kOaControl);
      (control & reg::kOaControlEnable) != 0) {
    throw std::runtime_error(fmt::format(
        "{}: the OA unit is already counting (OACONTROL 0x{:X}), so another profiler or an i915 "
        "perf stream is using it; close the other profiler (gputop, another oaprof, a program "
        "using GL_INTEL_performance_query) and try again, or use --access perf, which asks i915 "
        "for the OA unit instead of taking it", mmio_.describe(), control));
  }
  try {
    for (const PlanStep& s : plan) {
      switch (s.kind) {
        case PlanStep::Kind::kWrite: saved_.write(s.address, s.value); break;
        case PlanStep::Kind::kMaskedWrite: saved_.write_masked(s.address, s.value); break;
        case PlanStep::Kind::kSettle: sleep_(s.settle); break;
      }
    }
  } catch (...) {
    saved_.restore();
    throw;
  }
  plan_ = std::move(plan);
  signal_guard_ = std::make_unique<SignalRestoreGuard>(saved_);
}

std::vector<oa::RegisterWrite> OaProgrammer::lost_context_registers() {
  std::vector<oa::RegisterWrite> lost;
  for (const PlanStep& s : plan_) {
    if (s.context_saved && mmio_.read32(s.address) != s.value) lost.push_back({s.address, s.value});
  }
  return lost;
}

void OaProgrammer::reprogram_context_registers() {
  for (const PlanStep& s : plan_) {
    if (s.context_saved) saved_.write(s.address, s.value);
  }
}

void OaProgrammer::restore() {
  signal_guard_.reset();
  saved_.restore();
  plan_.clear();
}

}  // namespace oaprof::mmio
