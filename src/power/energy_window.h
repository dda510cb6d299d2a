// One measured window: the energy read at its start and end turned into per-plane energy and
// power, the iGPU power by each formula (labelled), the dynamic power above an idle baseline, and
// every reason the figures may not be trusted. A window whose energy could not be measured has
// empty figures and the reason, never zeros.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "power/energy_source.h"
#include "power/idle_baseline.h"

namespace oaprof::power {

inline constexpr std::uint64_t kDefaultMinWindowNs = 50'000'000;
// RAPL updates about every millisecond: over this long, a counter that did not advance is stuck.
inline constexpr std::uint64_t kStuckCounterWindowNs = 10'000'000;

struct WindowOptions {
  std::uint64_t min_window_ns = kDefaultMinWindowNs;
  IgpuFormula formula = IgpuFormula::kPkgPp0Dram;  // the headline figure
  std::optional<IdleBaseline> idle;                // none: no dynamic power
  std::optional<std::uint64_t> busy_ns;            // kernel-busy time inside the window
  std::optional<double> gpu_freq_mhz;              // the GPU frequency seen during the window
};

struct EnergyWindow {
  std::uint64_t duration_ns = 0;
  std::map<Domain, std::uint64_t> energy_uj;
  std::map<Domain, double> power_w;          // total
  std::map<Domain, double> dynamic_power_w;  // total − idle, with a baseline
  IgpuPower igpu;                            // total, by every formula that can be computed
  std::optional<IgpuPower> igpu_dynamic;     // the same above the idle baseline
  IgpuFormula formula = IgpuFormula::kPkgPp0Dram;
  std::optional<double> busy_fraction;
  std::optional<double> gpu_freq_mhz;
  std::optional<std::uint64_t> idle_duration_ns;

  // Validity. Short windows keep their figures (flagged, not hidden); the others empty them.
  bool shorter_than_min_window = false;
  std::uint64_t min_window_ns = 0;
  bool counters_did_not_move = false;
  bool idle_counters_did_not_move = false;
  // The end reading is before the begin reading (in time, or a counter went down): the two do
  // not make a window. unavailable_reason then says which.
  bool went_backwards = false;
  std::string unavailable_reason;  // non-empty: no energy could be read at all

  bool measured() const { return unavailable_reason.empty() && !counters_did_not_move; }
  // The headline iGPU figure (total, by `formula`).
  std::optional<double> igpu_w() const { return igpu.watts(formula); }
  std::optional<double> igpu_dynamic_w() const;
  // Stable tokens for a CSV flags column: "energy-window-short", "no-dram-plane",
  // "energy-counters-stuck", "idle-baseline-stuck", "energy-went-backwards", "no-energy".
  std::vector<std::string> flags() const;
};

// Never throws: readings that go backwards (the end before the begin, or a counter lower at the
// end: readings from different sources, or a counter that was reset) give a window without
// figures, flagged went_backwards, so one bad window costs its own row and nothing else.
EnergyWindow make_energy_window(const EnergyReading& begin, const EnergyReading& end,
                                const WindowOptions& options = {});
// A window without energy: why, and what to do (e.g. the message of make_energy_source()).
EnergyWindow unavailable_energy_window(std::string reason, std::uint64_t duration_ns = 0);

// Every figure that can be computed, each iGPU figure with its formula; absent figures are null.
nlohmann::json to_json(const EnergyWindow& window);

}  // namespace oaprof::power
