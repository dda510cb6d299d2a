#include "report/selftest_flags.h"

#include "report/reporter.h"

namespace oaprof::report {
namespace {

// Whether the row reports what a failure covering `covers` puts in doubt.
bool row_reports(SelftestCovers covers, const oa::LaunchRecord& r, const power::EnergyWindow& w,
                 const RunInfo& info) {
  switch (covers) {
    case SelftestCovers::kEveryRow:
      return true;
    case SelftestCovers::kGpuTicks:
      return r.deltas.has_gpu_ticks;
    case SelftestCovers::kMetrics:
      return info.metrics != nullptr;
    case SelftestCovers::kEnergy:
      return w.measured();
    case SelftestCovers::kEnergyModel:
      return info.energy_model != nullptr;
    case SelftestCovers::kRegisterReadouts:
      return info.access == "mmio" || info.access == "rpc";
    case SelftestCovers::kNoRow:
      return false;
  }
  return true;
}

}  // namespace

void add_selftest_flags(const oa::LaunchRecord& record, const power::EnergyWindow& window,
                        const RunInfo& info, const std::function<void(const std::string&)>& add) {
  for (const SelftestFailure& f : info.selftest_failed) {
    if (row_reports(f.covers, record, window, info)) add("selftest_failed:" + f.check);
  }
}

}  // namespace oaprof::report
