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

// Gen8–11: a plain write, watched when the register is context-saved.
PlanStep write_gen8(std::uint32_t address, std::uint32_t value) {
  const bool saved = is_context_saved(address);
  return {PlanStep::Kind::kWrite, address, value, {}, saved, saved};
}

PlanStep write_watched(std::uint32_t address, std::uint32_t value, bool watched) {
  return {PlanStep::Kind::kWrite, address, value, {}, false, watched};
}

// A mux write as i915 applies it: the masked ones (HALF_SLICE_CHICKEN2, WAIT_FOR_RC6_EXIT) as
// masked writes without the kernel's workaround bits, so a configuration can neither undo a
// workaround nor be restored by a plain write the hardware ignores.
PlanStep mux_write(const oa::RegisterWrite& w) {
  if (!reg::is_masked_config_register(w.address)) return write_gen8(w.address, w.value);
  return {PlanStep::Kind::kMaskedWrite, w.address, reg::strip_workaround_bits(w.address, w.value)};
}

PlanStep settle_step() {
  PlanStep settle;
  settle.kind = PlanStep::Kind::kSettle;
  settle.settle = kNoaSettle;
  return settle;
}

void check_generation_and_format(const oa::Platform& platform, oa::ReportFormat format) {
  const oa::Generation gen = platform.gen;
  if (gen == oa::Generation::kGen7_5) {
    throw std::invalid_argument(fmt::format(
        "{} is {}: oaprof programs the OA unit over MMIO on Gen8 to Xe-LPG only; use --access "
        "perf",
        platform.codename, oa::generation_name(gen)));
  }
  const oa::FormatLayout& layout = oa::layout_of(format);
  if (!oa::format_exists_on(format, gen)) {
    throw std::invalid_argument(fmt::format("{} has no report format {}; see --format help",
                                            oa::generation_name(gen), layout.name));
  }
  if (layout.header64) {  // Xe-LPG's MPEC formats
    throw std::invalid_argument(fmt::format(
        "report format {} is the media OA unit's (OAM, in {}'s media GT), which oaprof does not "
        "read; the render unit (OAG) writes {}: use --format 101",
        layout.name, platform.codename, oa::formats_for(gen).front().name));
  }
}

// i915 accepts media-GT registers in an Xe-LPG configuration (its OAM unit's triggers and MPES,
// VISACTL) for media streams; oaprof's read-outs program and read the render OAG unit, where
// such a set would count nothing it reports.
void refuse_media_gt(const oa::Platform& platform, const OaConfig& config) {
  if (platform.gen != oa::Generation::kXeLpg) return;
  for (const auto* list : {&config.mux, &config.boolean, &config.flex}) {
    for (const auto& w : *list) {
      if (w.address < reg::kMediaGsiBase) continue;
      throw std::invalid_argument(fmt::format(
          "metric set {} writes register 0x{:06X} in {}'s media GT (0x{:X} on: the media OA unit "
          "OAM and its VISACTL): it counts media engines through OAM reports, which oaprof does "
          "not read (it reads the render unit OAG); choose a render or compute set (`oaprof "
          "metrics list`, e.g. ComputeBasic)",
          config.guid.empty() ? "(no guid)" : config.guid, w.address, platform.codename,
          reg::kMediaGsiBase));
    }
  }
}

void check_whitelist(const oa::Platform& platform, const OaConfig& config) {
  for (const auto& w : config.mux) check_whitelisted(platform, ConfigRegisterKind::kMux, w);
  for (const auto& w : config.boolean) {
    check_whitelisted(platform, ConfigRegisterKind::kBoolean, w);
  }
  for (const auto& w : config.flex) check_whitelisted(platform, ConfigRegisterKind::kFlex, w);
}

std::uint32_t enable_value(oa::ReportFormat format) {
  return (static_cast<std::uint32_t>(oa::layout_of(format).select_code)
          << reg::kOaControlSelectShift) |
         reg::kOaControlEnable;
}

// Gen8–11, as i915's gen8_enable_metric_set and gen8_oa_enable (i915_perf.c @ Kingxukai/linux
// 0291023e7330da28f2f7453c87c2ab7082d8360f).
std::vector<PlanStep> plan_gen8(const oa::Platform& platform, oa::ReportFormat format,
                                const OaConfig& config) {
  std::vector<PlanStep> plan;
  plan.push_back(write_gen8(reg::kOaControl, 0));
  if (platform.gen != oa::Generation::kGen8) {
    plan.push_back({PlanStep::Kind::kMaskedWrite, reg::kOaDebug,
                    reg::masked_enable(reg::kOaDebugDisableClockRatioReports |
                                       reg::kOaDebugIncludeClockRatio)});
  }
  for (const auto& w : config.mux) plan.push_back(mux_write(w));
  if (!config.mux.empty()) plan.push_back(settle_step());
  for (const auto& w : config.boolean) plan.push_back(write_gen8(w.address, w.value));
  for (const auto& w : config.flex) plan.push_back(write_gen8(w.address, w.value));
  plan.push_back(write_gen8(reg::kOaCtxControl, reg::kOaCtxControlCounterResume));
  plan.push_back(write_gen8(reg::kOaControl, enable_value(format)));
  return plan;
}

// Gen12 and Xe-LPG, as i915's gen12_enable_metric_set and gen12_oa_enable (same file):
// - OAG_OA_DEBUG: clock-ratio reports off and the ratio in RPT_ID, as i915; and, because no
//   OA buffer of oaprof's receives reports, context-switch and GO 1->0 reports off too (i915
//   turns the former off only for streams without SAMPLE_OA);
// - OAG_OAGLBCTXCTRL 0: no periodic timer (i915 writes 0 for a stream without a period);
// - SQCNT1: PMON enable ("in order to collect valid metrics"), and bytes-per-clock reporting
//   where HAS_OA_BPC_REPORTING (Xe-LPG: XE_HP_FEATURES in i915_pci.c, same commit), set with a
//   read-modify-write as intel_uncore_rmw;
// - the configuration (mux, settle, boolean, flex: i915's emit_oa_config order), all global;
// - OAG_OACONTROL with the format's select code last.
// Nothing of the per-context OAR unit or OACTXCONTROL (gen12_configure_oar_context): that is the
// context image's, i915's alone.
std::vector<PlanStep> plan_gen12(const oa::Platform& platform, oa::ReportFormat format,
                                 const OaConfig& config) {
  const reg::OaRegisterBlock& block = reg::oa_block(platform.gen);
  std::vector<PlanStep> plan;
  plan.push_back(write_watched(block.oa_control, 0, false));
  plan.push_back(
      {PlanStep::Kind::kMaskedWrite, block.oa_debug,
       reg::masked_enable(reg::kOaDebugDisableClockRatioReports | reg::kOaDebugIncludeClockRatio |
                          reg::kOaDebugDisableCtxSwitchReports | reg::kOaDebugDisableGoReports)});
  plan.push_back(write_watched(block.ctx_control, 0, false));
  std::uint32_t sqcnt1 = reg::kSqCnt1PmonEnable;
  if (oa::is_xehp_oa(platform.gen)) sqcnt1 |= reg::kSqCnt1OaBpc;  // HAS_OA_BPC_REPORTING
  plan.push_back({PlanStep::Kind::kSetBits, reg::kSqCnt1, sqcnt1, {}, false, true});
  for (const auto& w : config.mux) {
    PlanStep s = mux_write(w);
    s.context_saved = s.watched = false;
    plan.push_back(s);
  }
  if (!config.mux.empty()) plan.push_back(settle_step());
  for (const auto& w : config.boolean) plan.push_back(write_watched(w.address, w.value, true));
  for (const auto& w : config.flex) plan.push_back(write_watched(w.address, w.value, true));
  plan.push_back(write_watched(block.oa_control, enable_value(format), true));
  return plan;
}

}  // namespace

std::vector<PlanStep> plan_oa_programming(const oa::Platform& platform, oa::ReportFormat format,
                                          const OaConfig& config) {
  check_generation_and_format(platform, format);
  refuse_media_gt(platform, config);
  check_whitelist(platform, config);
  return oa::is_gen12_family(platform.gen) ? plan_gen12(platform, format, config)
                                           : plan_gen8(platform, format, config);
}

namespace {

// The OA control register a plan starts its unit with: its first step (the stop).
std::uint32_t plan_control_register(const std::vector<PlanStep>& plan) {
  return plan.empty() ? reg::kOaControl : plan.front().address;
}

}  // namespace

OaProgrammer::OaProgrammer(Mmio& mmio, Sleep sleep)
    : mmio_(mmio), sleep_(std::move(sleep)), saved_(mmio) {
  if (!sleep_) sleep_ = [](std::chrono::microseconds d) { std::this_thread::sleep_for(d); };
}

OaProgrammer::~OaProgrammer() { restore(); }

void OaProgrammer::program(std::vector<PlanStep> plan) {
  restore();
  // Someone else's OA session (an i915 perf stream, another profiler) would silently lose its
  // configuration, and this one would count with whatever that one changes next.
  if (const std::uint32_t control = mmio_.read32(plan_control_register(plan));
      (control & reg::kOaControlEnable) != 0) {
    throw std::runtime_error(fmt::format(
        "{}: the OA unit is already counting (OACONTROL 0x{:X}), so another profiler or an i915 "
        "perf stream is using it; close the other profiler (gputop, another oaprof, a program "
        "using GL_INTEL_performance_query) and try again, or use --access perf, which asks i915 "
        "for the OA unit instead of taking it",
        mmio_.describe(), control));
  }
  try {
    for (const PlanStep& s : plan) {
      switch (s.kind) {
        case PlanStep::Kind::kWrite:
          saved_.write(s.address, s.value);
          break;
        case PlanStep::Kind::kMaskedWrite:
          saved_.write_masked(s.address, s.value);
          break;
        case PlanStep::Kind::kSetBits:
          saved_.write(s.address, mmio_.read32(s.address) | s.value);
          break;
        case PlanStep::Kind::kSettle:
          sleep_(s.settle);
          break;
      }
    }
  } catch (...) {
    saved_.restore();
    throw;
  }
  plan_ = std::move(plan);
  signal_guard_ = std::make_unique<SignalRestoreGuard>(saved_);
}

std::vector<oa::RegisterWrite> OaProgrammer::lost_watched_registers() {
  std::vector<oa::RegisterWrite> lost;
  for (const PlanStep& s : plan_) {
    if (!s.watched) continue;
    const std::uint32_t now = mmio_.read32(s.address);
    const bool intact =
        s.kind == PlanStep::Kind::kSetBits ? (now & s.value) == s.value : now == s.value;
    if (!intact) lost.push_back({s.address, s.value});
  }
  return lost;
}

void OaProgrammer::reprogram_watched_registers() {
  for (const PlanStep& s : plan_) {
    if (!s.watched) continue;
    if (s.kind == PlanStep::Kind::kSetBits) {
      saved_.write(s.address, mmio_.read32(s.address) | s.value);
    } else {
      saved_.write(s.address, s.value);
    }
  }
}

void OaProgrammer::restore() {
  signal_guard_.reset();
  saved_.restore();
  plan_.clear();
}

}  // namespace oaprof::mmio
