// Turns (platform, report format, metric-set registers) into the ordered register writes that
// start the OA unit, applies them with every prior value saved, and watches the context-saved
// ones. The order follows i915's: stop, OA_DEBUG, mux then a 500 µs settle, boolean, flex,
// OACTXCONTROL, and OACONTROL with the counter select last, so nothing counts half-configured.
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
  enum class Kind { kWrite, kMaskedWrite, kSettle };
  Kind kind = Kind::kWrite;
  std::uint32_t address = 0;
  std::uint32_t value = 0;
  std::chrono::microseconds settle{0};  // kSettle only
  bool context_saved = false;           // reloaded from the context image at a switch (Gen8–11)
  friend bool operator==(const PlanStep&, const PlanStep&) = default;
};

inline constexpr std::chrono::microseconds kNoaSettle{500};

// Throws std::invalid_argument when the generation is outside Gen8–11, the format is not one
// of the generation's, or a configuration write is outside the whitelist.
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
  // restored before it propagates. While programmed, SIGINT/SIGTERM restore too.
  void program(std::vector<PlanStep> plan);

  // The context-saved writes whose registers no longer hold the programmed value.
  std::vector<oa::RegisterWrite> lost_context_registers();
  // Writes the context-saved registers again.
  void reprogram_context_registers();

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
