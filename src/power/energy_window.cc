#include "power/energy_window.h"

#include <fmt/format.h>

namespace oaprof::power {

std::optional<double> EnergyWindow::igpu_dynamic_w() const {
  if (!igpu_dynamic) return std::nullopt;
  return igpu_dynamic->watts(formula);
}

std::vector<std::string> EnergyWindow::flags() const {
  std::vector<std::string> out;
  if (!unavailable_reason.empty()) out.emplace_back("no-energy");
  if (went_backwards) out.emplace_back("energy-went-backwards");
  if (counters_did_not_move) out.emplace_back("energy-counters-stuck");
  if (shorter_than_min_window) out.emplace_back("energy-window-short");
  if (igpu.dram_missing && formula == IgpuFormula::kPkgPp0Dram) out.emplace_back("no-dram-plane");
  if (idle_counters_did_not_move) out.emplace_back("idle-baseline-stuck");
  return out;
}

namespace {

EnergyWindow backwards_window(std::string reason, std::uint64_t duration_ns = 0) {
  EnergyWindow w = unavailable_energy_window(std::move(reason), duration_ns);
  w.went_backwards = true;
  return w;
}

}  // namespace

EnergyWindow make_energy_window(const EnergyReading& begin, const EnergyReading& end,
                                const WindowOptions& options) {
  if (end.time_ns < begin.time_ns) {
    return backwards_window(fmt::format(
        "energy window: it ends ({} ns) before it begins ({} ns): the readings come from "
        "different clocks or sources",
        end.time_ns, begin.time_ns));
  }
  EnergyWindow w;
  w.formula = options.formula;
  w.duration_ns = end.time_ns - begin.time_ns;
  w.min_window_ns = options.min_window_ns;
  w.shorter_than_min_window = w.duration_ns < options.min_window_ns;
  w.gpu_freq_mhz = options.gpu_freq_mhz;
  if (options.busy_ns && w.duration_ns > 0) {
    w.busy_fraction = static_cast<double>(*options.busy_ns) / static_cast<double>(w.duration_ns);
  }
  bool moved = false;
  for (const auto& [domain, end_uj] : end.energy_uj) {
    const auto it = begin.energy_uj.find(domain);
    if (it == begin.energy_uj.end()) continue;
    if (end_uj < it->second) {
      return backwards_window(
          fmt::format("energy window: the {} energy went backwards ({} -> {} uJ): readings of an "
                      "unwrapped counter never decrease, so they come from different sources or "
                      "the counter was reset",
                      domain_name(domain), it->second, end_uj),
          w.duration_ns);
    }
    w.energy_uj[domain] = end_uj - it->second;
    if (end_uj != it->second) moved = true;
  }
  if (w.energy_uj.empty()) {
    return unavailable_energy_window("the readings share no energy domain", w.duration_ns);
  }
  if (!moved && w.duration_ns >= kStuckCounterWindowNs) {
    // Zeros here would read as a measurement of no power: leave the figures empty.
    w.counters_did_not_move = true;
    w.energy_uj.clear();
    return w;
  }
  if (w.duration_ns == 0) return w;
  const double seconds = static_cast<double>(w.duration_ns) / 1e9;
  for (const auto& [domain, uj] : w.energy_uj) {
    w.power_w[domain] = static_cast<double>(uj) / 1e6 / seconds;
  }
  w.igpu = igpu_power(w.power_w);
  if (options.idle) {
    w.idle_duration_ns = options.idle->duration_ns;
    w.idle_counters_did_not_move = !options.idle->counters_moved;
    if (options.idle->counters_moved) {
      for (const auto& [domain, watts] : w.power_w) {
        const auto it = options.idle->power_w.find(domain);
        if (it != options.idle->power_w.end()) w.dynamic_power_w[domain] = watts - it->second;
      }
      w.igpu_dynamic = igpu_power(w.dynamic_power_w);
    }
  }
  return w;
}

EnergyWindow unavailable_energy_window(std::string reason, std::uint64_t duration_ns) {
  EnergyWindow w;
  w.duration_ns = duration_ns;
  w.unavailable_reason = reason.empty() ? "no energy source" : std::move(reason);
  return w;
}

namespace {

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json igpu_json(const IgpuPower& p) {
  nlohmann::json out = nlohmann::json::array();
  for (IgpuFormula f : kAllIgpuFormulas) {
    nlohmann::json item{{"formula", formula_name(f)},
                        {"label", formula_label(f)},
                        {"power_w", optional_json(p.watts(f))}};
    if (f == IgpuFormula::kPkgPp0Dram && p.pkg_pp0_dram_w) {
      item["dram_counted_as_zero"] = p.dram_missing;
    }
    out.push_back(item);
  }
  return out;
}

}  // namespace

nlohmann::json to_json(const EnergyWindow& w) {
  nlohmann::json j;
  j["measured"] = w.measured();
  j["duration_ns"] = w.duration_ns;
  j["min_window_ns"] = w.min_window_ns;
  j["flags"] = w.flags();
  if (!w.unavailable_reason.empty()) j["unavailable_reason"] = w.unavailable_reason;
  nlohmann::json domains = nlohmann::json::object();
  for (const auto& [domain, uj] : w.energy_uj) {
    nlohmann::json d{{"plane", plane_name(domain)}, {"energy_uj", uj}};
    const auto p = w.power_w.find(domain);
    d["power_w"] = p != w.power_w.end() ? nlohmann::json(p->second) : nlohmann::json(nullptr);
    const auto dyn = w.dynamic_power_w.find(domain);
    if (dyn != w.dynamic_power_w.end()) d["dynamic_power_w"] = dyn->second;
    domains[std::string(domain_name(domain))] = d;
  }
  j["domains"] = domains;
  j["igpu_formula"] = formula_name(w.formula);
  j["igpu_power_w"] = optional_json(w.igpu_w());
  j["igpu"] = igpu_json(w.igpu);
  if (w.igpu_dynamic) {
    j["igpu_dynamic_power_w"] = optional_json(w.igpu_dynamic_w());
    j["igpu_dynamic"] = igpu_json(*w.igpu_dynamic);
  }
  if (w.idle_duration_ns) j["idle_baseline_ns"] = *w.idle_duration_ns;
  j["busy_fraction"] = optional_json(w.busy_fraction);
  j["gpu_freq_mhz"] = optional_json(w.gpu_freq_mhz);
  return j;
}

}  // namespace oaprof::power
