// The selftest's energy check, on whichever backend a profile of this device reads: the CPU
// package's RAPL planes for an integrated GPU, the card's own hwmon sensors for a discrete one
// (power/hwmon.h), real or simulated.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>
#include <thread>

#include "power/energy_registry.h"
#include "power/energy_sampler.h"
#include "run/selftest_checks.h"

namespace oaprof::run::selftest {
namespace {

// The driver's hwmon sum is a signed `long` (hwmon.h): the top of its range.
constexpr std::uint64_t kHwmonRangeUj = std::uint64_t{1} << 63;

struct EnergyWindow {
  std::map<power::Domain, double> uj;  // per plane over the window
  double seconds = 0;
};

EnergyWindow energy_window(Context& c, std::uint64_t ns, bool busy) {
  const power::EnergyReading before = c.energy->read();
  if (busy && c.sim_power != nullptr) c.sim_power->set_gpu_active(true);
  std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
  if (busy && c.sim_power != nullptr) c.sim_power->set_gpu_active(false);
  const power::EnergyReading after = c.energy->read();
  EnergyWindow w;
  w.seconds = static_cast<double>(after.time_ns - before.time_ns) / 1e9;
  for (const auto& [domain, uj] : after.energy_uj) {
    const auto it = before.energy_uj.find(domain);
    if (it != before.energy_uj.end()) w.uj[domain] = static_cast<double>(uj - it->second);
  }
  return w;
}

bool measures_card(const power::EnergySource& source) {
  for (const power::EnergyBackendInfo& b : power::energy_backends()) {
    if (b.name == source.name()) return b.measures == power::EnergyScope::kGpuCard;
  }
  return false;
}

// What the windows found: planes that did not move, a whole that counted less than its parts
// (PKG < PP0 + PP1; a card's CARD < GPU_PKG), and the highest power of any plane.
struct EnergyFindings {
  std::set<std::string> still;
  bool whole_short = false;
  double peak_w = 0;
};

// `whole` covers `parts`, within 1% and 1 mJ of slack for the planes' update instants.
bool short_of(const EnergyWindow& w, power::Domain whole, std::vector<power::Domain> parts) {
  const auto it = w.uj.find(whole);
  if (it == w.uj.end()) return false;
  double sum = 0;
  for (const power::Domain d : parts) {
    const auto part = w.uj.find(d);
    if (part == w.uj.end()) return false;
    sum += part->second;
  }
  return it->second < sum * 0.99 - 1000;
}

void judge_window(const EnergyWindow& w, bool card, EnergyFindings& f) {
  for (const auto& [domain, uj] : w.uj) {
    if (uj <= 0) f.still.insert(std::string(power::plane_name(domain)));
    if (w.seconds > 0) f.peak_w = std::max(f.peak_w, uj / 1e6 / w.seconds);
  }
  f.whole_short =
      f.whole_short || (card ? short_of(w, power::Domain::kGpuCard, {power::Domain::kGpuPackage})
                             : short_of(w, power::Domain::kPackage,
                                        {power::Domain::kCores, power::Domain::kUncore}));
}

// A simulated card's hwmon reopened with every counter half an idle window below the driver's
// wrap, so that the windows run across it (the printed `long` turns negative).
void reopen_sim_card_near_wrap(Context& c) {
  power::SimHwmonModel model = *c.sim_card;
  const double idle_w = std::min(model.package_idle_w, model.card_idle_w);
  model.start_uj = kHwmonRangeUj -
                   static_cast<std::uint64_t>(idle_w * static_cast<double>(c.window_ns) / 2 / 1000);
  auto source = std::make_unique<power::SimHwmonSource>(std::filesystem::path(), model);
  c.sim_power = source.get();
  c.energy = std::move(source);
}

std::string failure_reason(const EnergyFindings& f, const std::string& missing, bool card) {
  if (!missing.empty()) return "the backend lacks the plane every such device has: " + missing;
  if (!f.still.empty()) return "a plane did not move over a window: its energy figures are 0";
  if (f.whole_short) {
    return card ? "the card counted less than its GPU package"
                : "the package plane counted less than its cores and uncore";
  }
  return fmt::format(
      "a plane drew {:.0f} W over a window, above the {:.0f} W the sampler reads often enough "
      "for: a wrap was miscounted, or long runs can lose one",
      f.peak_w, power::kGenerousPowerBoundW);
}

}  // namespace

// energy: every plane the backend offers moves, the whole covers its parts, and no window holds
// more than the power bound the sampler's wrap handling assumes at the backend's range.
Outcome check_energy(Context& c) {
  if (c.sim_card) reopen_sim_card_near_wrap(c);
  if (!c.energy) return skip("no energy source: " + c.energy_missing);
  const bool card = measures_card(*c.energy);
  EnergyFindings found;
  std::vector<Figure> figures;
  for (int i = 0; i < std::max(c.windows / 2, 2); ++i) {
    const EnergyWindow w = energy_window(c, c.window_ns, i % 2 == 1);
    judge_window(w, card, found);
    if (i >= 2) continue;  // the first idle and busy windows' figures are enough
    for (const auto& [domain, uj] : w.uj) {
      figures.push_back(
          {fmt::format("{}_{}_uj", i == 1 ? "busy" : "idle", power::domain_name(domain)), uj,
           "uJ"});
    }
  }
  const std::uint64_t range = c.energy->wrap_range_uj().value_or(card ? kHwmonRangeUj : 0);
  figures.push_back({"peak_w", found.peak_w, "W"});
  if (range > 0) figures.push_back({"wrap_range_uj", static_cast<double>(range), "uJ"});
  const std::vector<power::Domain> domains = c.energy->domains();
  const power::Domain needed = card ? power::Domain::kGpuPackage : power::Domain::kPackage;
  const bool has_needed = std::find(domains.begin(), domains.end(), needed) != domains.end();
  std::vector<std::string> planes;
  for (const power::Domain d : domains) planes.emplace_back(power::plane_name(d));
  const std::string measured = fmt::format(
      "{}: planes {}; {} still; {}; peak {:.1f} W; wraps at {}", c.energy->name(),
      fmt::join(planes, ", "),
      found.still.empty() ? "none" : fmt::format("{}", fmt::join(found.still, ", ")),
      card ? (found.whole_short ? "CARD < GPU_PKG" : "CARD >= GPU_PKG")
           : (found.whole_short ? "PKG < PP0 + PP1" : "PKG >= PP0 + PP1"),
      found.peak_w, range > 0 ? fmt::format("{} uJ", range) : std::string("no range given"));
  const bool ok = has_needed && found.still.empty() && !found.whole_short &&
                  found.peak_w <= power::kGenerousPowerBoundW;
  if (ok) return pass(measured, std::move(figures));
  return fail(measured,
              failure_reason(found, has_needed ? "" : std::string(power::plane_name(needed)), card),
              std::move(figures));
}

}  // namespace oaprof::run::selftest
