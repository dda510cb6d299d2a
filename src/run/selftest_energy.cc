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
#include "run/selftest_load.h"

namespace oaprof::run::selftest {
namespace {

// The driver's hwmon sum is a signed `long` (hwmon.h): the top of its range.
constexpr std::uint64_t kHwmonRangeUj = std::uint64_t{1} << 63;

struct EnergyWindow {
  std::map<power::Domain, double> uj;  // per plane over the window
  double seconds = 0;
  std::optional<double> gpu_w;  // the GPU's power by the backend's default formula
};

EnergyWindow energy_window(Context& c, std::uint64_t ns, bool busy) {
  const power::EnergyReading before = c.energy->read();
  if (busy) set_planes_busy(c, true);
  std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
  if (busy) set_planes_busy(c, false);
  const power::EnergyReading after = c.energy->read();
  EnergyWindow w;
  w.seconds = static_cast<double>(after.time_ns - before.time_ns) / 1e9;
  for (const auto& [domain, uj] : after.energy_uj) {
    const auto it = before.energy_uj.find(domain);
    if (it != before.energy_uj.end()) w.uj[domain] = static_cast<double>(uj - it->second);
  }
  w.gpu_w =
      power::igpu_power(before, after).watts(power::default_igpu_formula(c.energy->domains()));
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
  // The GPU's power by the default formula, summed over the idle and over the busy windows.
  double idle_gpu_w = 0, busy_gpu_w = 0;
  int idle_windows = 0, busy_windows = 0;
  bool load_judged = false;  // the busy windows ran under a load (or told the simulator)
  std::string load_note;     // what ran the busy windows, or why they were not judged
  double mean_idle_gpu_w() const { return idle_gpu_w / std::max(idle_windows, 1); }
  double mean_busy_gpu_w() const { return busy_gpu_w / std::max(busy_windows, 1); }
  // A GPU load must raise the GPU's power: by 0.2 W and a tenth of its idle power at least.
  bool no_rise() const {
    return load_judged &&
           mean_busy_gpu_w() < mean_idle_gpu_w() + std::max(0.2, 0.1 * mean_idle_gpu_w());
  }
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

void judge_window(const EnergyWindow& w, bool card, bool busy, EnergyFindings& f) {
  (busy ? f.busy_gpu_w : f.idle_gpu_w) += w.gpu_w.value_or(0);
  ++(busy ? f.busy_windows : f.idle_windows);
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
  if (f.no_rise()) {
    return fmt::format(
        "the GPU load did not raise the GPU's power ({:.2f} W idle, {:.2f} W busy): the planes "
        "do not measure this GPU",
        f.mean_idle_gpu_w(), f.mean_busy_gpu_w());
  }
  return fmt::format(
      "a plane drew {:.0f} W over a window, above the {:.0f} W the sampler reads often enough "
      "for: a wrap was miscounted, or long runs can lose one",
      f.peak_w, power::kGenerousPowerBoundW);
}

// Idle windows, then busy ones under a GPU load (real hardware: kernel_runner as the invoking
// user; the simulator: the model told), judged as they come; the first of each in `figures`.
void measure_windows(Context& c, bool card, EnergyFindings& found, std::vector<Figure>& figures) {
  auto measure = [&](bool busy, int i) {
    const EnergyWindow w = energy_window(c, c.window_ns, busy);
    judge_window(w, card, busy, found);
    if (i > 0) return;
    for (const auto& [domain, uj] : w.uj) {
      figures.push_back(
          {fmt::format("{}_{}_uj", busy ? "busy" : "idle", power::domain_name(domain)), uj, "uJ"});
    }
  };
  const int per_kind = std::max(c.windows / 4, 1);
  for (int i = 0; i < per_kind; ++i) measure(false, i);
  std::string no_load;
  const std::unique_ptr<GpuLoad> load = start_load(c, no_load);
  found.load_judged = load != nullptr || (c.device.simulated() && no_load.empty());
  found.load_note = no_load.empty() ? load_text(load.get())
                                    : fmt::format("; busy windows not judged: {}", no_load);
  for (int i = 0; i < per_kind; ++i) measure(true, i);
  figures.push_back({"idle_gpu_w", found.mean_idle_gpu_w(), "W"});
  figures.push_back({"busy_gpu_w", found.mean_busy_gpu_w(), "W"});
}

std::string energy_text(const Context& c, const EnergyFindings& found, bool card,
                        std::uint64_t range) {
  std::vector<std::string> planes;
  for (const power::Domain d : c.energy->domains()) planes.emplace_back(power::plane_name(d));
  return fmt::format(
      "{}: planes {}; {} still; {}; GPU {:.2f} W idle, {:.2f} W busy; peak {:.1f} W; wraps at "
      "{}{}",
      c.energy->name(), fmt::join(planes, ", "),
      found.still.empty() ? "none" : fmt::format("{}", fmt::join(found.still, ", ")),
      card ? (found.whole_short ? "CARD < GPU_PKG" : "CARD >= GPU_PKG")
           : (found.whole_short ? "PKG < PP0 + PP1" : "PKG >= PP0 + PP1"),
      found.mean_idle_gpu_w(), found.mean_busy_gpu_w(), found.peak_w,
      range > 0 ? fmt::format("{} uJ", range) : std::string("no range given"), found.load_note);
}

}  // namespace

// energy: every plane the backend offers moves, the whole covers its parts, a GPU load raises the
// GPU's power, and no window holds more than the power bound the sampler's wrap handling assumes
// at the backend's range.
Outcome check_energy(Context& c) {
  if (c.sim_card) reopen_sim_card_near_wrap(c);
  if (!c.energy) return skip("no energy source: " + c.energy_missing);
  const bool card = measures_card(*c.energy);
  EnergyFindings found;
  std::vector<Figure> figures;
  measure_windows(c, card, found, figures);
  const std::uint64_t range = c.energy->wrap_range_uj().value_or(card ? kHwmonRangeUj : 0);
  figures.push_back({"peak_w", found.peak_w, "W"});
  if (range > 0) figures.push_back({"wrap_range_uj", static_cast<double>(range), "uJ"});
  const std::vector<power::Domain> domains = c.energy->domains();
  const power::Domain needed = card ? power::Domain::kGpuPackage : power::Domain::kPackage;
  const bool has_needed = std::find(domains.begin(), domains.end(), needed) != domains.end();
  const std::string measured = energy_text(c, found, card, range);
  const bool ok = has_needed && found.still.empty() && !found.whole_short && !found.no_rise() &&
                  found.peak_w <= power::kGenerousPowerBoundW;
  if (ok) return pass(measured, std::move(figures));
  return fail(measured,
              failure_reason(found, has_needed ? "" : std::string(power::plane_name(needed)), card),
              std::move(figures));
}

}  // namespace oaprof::run::selftest
