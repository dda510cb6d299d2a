// What the selftest's in-process tests share: the metric search path (each platform's IGT file,
// which the perf read-out and the driver check need) and a short simulated run.
#pragma once

#include <stdlib.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mmio/sim_gpu.h"
#include "run/selftest.h"

namespace oaprof::run::selftest {

inline void use_shared_metrics_path() {
  const std::string metrics = std::string(OAPROF_METRICS_DIR);
  ::setenv("OAPROF_METRICS_PATH",
           (metrics + "/igt:" + metrics + "/igt-mtl:" + metrics + "/igt-xe").c_str(), 1);
}

// Short windows: every bound a check applies holds for any window length.
inline SelftestOptions sim_options(std::string_view platform, std::vector<SimFault> faults = {}) {
  SelftestOptions o;
  o.device.spec = gpu::DeviceSpec::sim();
  o.device.sim.platform = mmio::sim_platform_by_name(platform);
  o.faults = std::move(faults);
  o.windows = 3;
  o.window_ns = 5'000'000;
  return o;
}

// The check of that name in a report.
inline const CheckResult& check(const SelftestReport& report, std::string_view name) {
  for (const CheckResult& r : report.checks) {
    if (r.name == name) return r;
  }
  throw std::logic_error("no check " + std::string(name));
}

// The names of the checks that failed, in the report's order.
inline std::vector<std::string> failed(const SelftestReport& report) {
  std::vector<std::string> names;
  for (const CheckResult& r : report.checks) {
    if (r.verdict == Verdict::kFail) names.push_back(r.name);
  }
  return names;
}

}  // namespace oaprof::run::selftest
