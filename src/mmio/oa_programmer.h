// Turns (platform, report format, metric-set registers) into the ordered register writes that
// start the OA unit, applies them with every prior value saved, and watches the ones something
// else may rewrite behind oaprof's back. The order follows i915's: stop, OA_DEBUG, the timer
// control (OACTXCONTROL; OAG_OAGLBCTXCTRL and SQCNT1 on Gen12), mux then a 500 µs settle,
// boolean, flex, and OACONTROL with the counter select last, so nothing counts half-configured.
//
// What "programming behind i915's back" means per generation (docs/hardware-access.md):
// - Gen8–11: the global OA unit; OACTXCONTROL and the flex registers are saved in every context
//   image and a context switch reloads them, so they are watched (config_lost) and rewritten.
// - Gen12 and Xe-LPG: the global OAG unit, whose registers (and the flex registers, which i915
//   writes once, globally: i915_perf.c gen12_enable_metric_set) no context switch reloads, with
//   execlists or GuC submission alike. What is per context there — the OAR unit behind
//   MI_REPORT_PERF_COUNT and OACTXCONTROL — lives in the context image, which only i915 (or the
//   GuC it drives) writes: oaprof never touches it, and its rpc read-out reads the OAG registers
//   with MI_STORE_REGISTER_MEM instead. Another OA stream i915 opens or closes meanwhile (a GL
//   application's performance query) rewrites the OAG configuration and clears SQCNT1, so the
//   global registers are watched the same way. Registers of Xe-LPG's media GT (the OAM unit at
//   0x380000 on) are refused: oaprof reads the render OAG unit only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "mmio/mmio.h"
#include "mmio/saved_registers.h"
#include "mmio/signal_restore.h"
#include "oa/platform.h"
#include "oa/register_write.h"
#include "oa/report_format.h"

namespace oaprof::mmio {

// The register part of a metric set, as IGT's XML and i915's ADD_CONFIG carry it.
struct OaConfig {
  std::string guid;  // hw_config_guid; empty for the bare counters
  std::vector<oa::RegisterWrite> mux;
  std::vector<oa::RegisterWrite> boolean;
  std::vector<oa::RegisterWrite> flex;
};

struct PlanStep {
  // kSetBits: read-modify-write setting `value`'s bits (SQCNT1), as i915's intel_uncore_rmw.
  enum class Kind { kWrite, kMaskedWrite, kSetBits, kSettle };
  Kind kind = Kind::kWrite;
  std::uint32_t address = 0;
  std::uint32_t value = 0;
  std::chrono::microseconds settle{0};  // kSettle only
  bool context_saved = false;           // reloaded from the context image at a switch (Gen8–11)
  // Checked at every snapshot and written again when something changed it: the context-saved
  // registers on Gen8–11, the global OAG control, SQCNT1, boolean and flex registers on Gen12+.
  bool watched = false;
  friend bool operator==(const PlanStep&, const PlanStep&) = default;
};

inline constexpr std::chrono::microseconds kNoaSettle{500};

// Throws std::invalid_argument when the generation is Gen7.5, the format is not one the
// generation's global OA unit writes (Xe-LPG's OAM formats are the media unit's), a
// configuration write is outside the whitelist, or (Xe-LPG) in the media GT.
std::vector<PlanStep> plan_oa_programming(const oa::Platform& platform, oa::ReportFormat format,
                                          const OaConfig& config);

class OaProgrammer {
 public:
  using Sleep = std::function<void(std::chrono::microseconds)>;

  explicit OaProgrammer(Mmio& mmio, Sleep sleep = {});
  ~OaProgrammer();
  OaProgrammer(const OaProgrammer&) = delete;
  OaProgrammer& operator=(const OaProgrammer&) = delete;

  // Applies the plan. Refuses (std::runtime_error saying what to do, nothing written) while the
  // OA unit is already counting for someone else. On an exception everything written so far is
  // restored before it propagates. While programmed, part of the signal thread's restore plan.
  void program(std::vector<PlanStep> plan);

  // The watched writes (PlanStep::watched) whose registers no longer hold the programmed value
  // (for kSetBits: no longer have those bits set).
  std::vector<oa::RegisterWrite> lost_watched_registers();
  // Writes the watched registers again.
  void reprogram_watched_registers();

  // Puts every touched register back bit-identical. Idempotent.
  void restore();
  bool programmed() const { return !plan_.empty(); }

 private:
  Mmio& mmio_;
  Sleep sleep_;
  SavedRegisters saved_;
  std::vector<PlanStep> plan_;
  std::unique_ptr<SignalRestoreGuard> signal_guard_;
};

}  // namespace oaprof::mmio
