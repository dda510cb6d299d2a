// Rows flagged by the device's last `oaprof selftest`: a check that failed there makes every row
// that reports what it covers say `selftest_failed:<check>` (docs/selftest.md, "Results that
// profile runs use"). Which check covers what is the selftest's to say (run/selftest_result.h);
// this side only knows a row's parts.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "oa/launch_record.h"
#include "power/energy_window.h"

namespace oaprof::report {

// The part of a row a failed check puts in doubt.
enum class SelftestCovers {
  kEveryRow,          // the counters or the time every row reports
  kGpuTicks,          // gpu_ticks and avg_freq_mhz: rows that have GPU_TICKS
  kMetrics,           // derived metrics: rows of a run with a metric set
  kEnergy,            // energy columns: rows whose energy window was measured
  kEnergyModel,       // modelled energy: rows of a run with --energy-model
  kRegisterReadouts,  // rows read through the registers (mmio, rpc)
  kNoRow,             // nothing a row reports: said once when the run starts
};

struct SelftestFailure {
  std::string check;  // "clocks"
  SelftestCovers covers = SelftestCovers::kEveryRow;
};

struct RunInfo;

// Calls `add` with `selftest_failed:<check>` for each of `info`'s failures the row reports.
void add_selftest_flags(const oa::LaunchRecord& record, const power::EnergyWindow& window,
                        const RunInfo& info, const std::function<void(const std::string&)>& add);

}  // namespace oaprof::report
