// The terminal summary: one line per kernel name, with the headline figures and their units.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <ostream>
#include <vector>

#include <fmt/format.h>

#include "report/reporter.h"

namespace oaprof::report {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string fixed(double v, int digits) {
  return std::isnan(v) ? std::string("-") : fmt::format("{:.{}f}", v, digits);
}

class TableReporter final : public Reporter {
 public:
  explicit TableReporter(std::ostream& out) : out_(out) {}

  void begin(const RunInfo& info) override { info_ = info; }

  void add(const oa::LaunchRecord& r, const RowEnergy& energy) override {
    auto [it, inserted] = kernels_.try_emplace(r.launch.kernel_name);
    if (inserted) order_.push_back(r.launch.kernel_name);
    Aggregate& a = it->second;
    a.launches++;
    const double kns = kernel_time_ns(r);
    if (!std::isnan(kns)) a.kernel_ns.push_back(kns);
    a.gpu_ns.push_back(oa::gpu_time_ns(r.deltas, info_.timestamp_hz));
    a.timestamp += r.deltas.timestamp;
    a.ticks += r.deltas.gpu_ticks;
    a.busy += r.deltas.a[0];
    a.eu_active += r.deltas.a[7];
    a.fpu_both += r.deltas.a[9];
    if (!r.flags.empty()) a.flagged++;
    // The kernel's energy window runs from its first launch's start to its last launch's end
    // (the method: energy read before the first and after the last launch of the window).
    if (energy.begin && energy.end) {
      if (!a.energy_begin) a.energy_begin = energy.begin;
      a.energy_end = energy.end;
      a.busy_ns += static_cast<std::uint64_t>(oa::gpu_time_ns(r.deltas, info_.timestamp_hz));
    } else {
      a.energy_missing = true;
      if (!energy.window.unavailable_reason.empty()) energy_reason_ = energy.window.unavailable_reason;
    }
  }

  void end() override {
    out_ << fmt::format("oaprof: device: {} ({}), format {}, access {}\n", info_.device,
                        info_.device_detail, info_.format, info_.access);
    if (order_.empty()) {
      out_ << "oaprof: no kernel launches were recorded\n";
      return;
    }
    out_ << fmt::format("{:<24} {:>8} {:>12} {:>12} {:>9} {:>8} {:>10} {:>9} {:>10} {:>8} {:>8} {:>7}\n",
                        "kernel", "launches", "kernel_us", "gpu_us", "freq_MHz", "busy_%",
                        "EU_act_%", "FPU2_%", "window_ms", "iGPU_W", "dyn_W", "flagged");
    for (const auto& name : order_) {
      const Aggregate& a = kernels_.at(name);
      const double ticks = static_cast<double>(a.ticks);
      const double eu_ticks = ticks * info_.eus;
      const double freq = a.timestamp ? ticks * info_.timestamp_hz / static_cast<double>(a.timestamp) / 1e6
                                      : std::nan("");
      std::string window_ms = "-", igpu = "-", dyn = "-";
      if (a.energy_begin && a.energy_end && !a.energy_missing) {
        power::WindowOptions wo = info_.energy_options;
        wo.busy_ns = a.busy_ns;
        const auto w = power::make_energy_window(*a.energy_begin, *a.energy_end, wo);
        window_ms = fixed(static_cast<double>(w.duration_ns) / 1e6, 1);
        if (w.measured()) {
          igpu = w.igpu_w() ? fixed(*w.igpu_w(), 2) : "-";
          dyn = w.igpu_dynamic_w() ? fixed(*w.igpu_dynamic_w(), 2) : "-";
          if (w.shorter_than_min_window) igpu += "*";
        }
        for (const auto& f : w.flags()) energy_flags_.insert(f);
      }
      out_ << fmt::format("{:<24} {:>8} {:>12} {:>12} {:>9} {:>8} {:>10} {:>9} {:>10} {:>8} {:>8} {:>7}\n", name,
                          a.launches, fixed(median(a.kernel_ns) / 1e3, 1),
                          fixed(median(a.gpu_ns) / 1e3, 1), fixed(freq, 0),
                          fixed(ticks > 0 ? 100.0 * static_cast<double>(a.busy) / ticks : std::nan(""), 1),
                          fixed(eu_ticks > 0 ? 100.0 * static_cast<double>(a.eu_active) / eu_ticks : std::nan(""), 1),
                          fixed(eu_ticks > 0 ? 100.0 * static_cast<double>(a.fpu_both) / eu_ticks : std::nan(""), 1),
                          window_ms, igpu, dyn, a.flagged);
    }
    out_ << "(kernel_us and gpu_us are medians over launches; busy, EU active and both-FPUs-active "
            "are shares of GPU clocks across all launches)\n";
    out_ << fmt::format("(iGPU_W: {} over each kernel's window, first launch to last; dyn_W: above "
                        "the idle baseline; * window shorter than {} ms)\n",
                        power::formula_label(info_.energy_options.formula),
                        info_.energy_options.min_window_ns / 1'000'000);
    if (!energy_reason_.empty()) out_ << "energy: " << energy_reason_ << "\n";
    if (!energy_flags_.empty()) {
      std::string flags;
      for (const auto& f : energy_flags_) flags += (flags.empty() ? "" : ", ") + f;
      out_ << "energy flags: " << flags << "\n";
    }
  }

 private:
  struct Aggregate {
    std::uint64_t launches = 0, flagged = 0;
    std::vector<double> kernel_ns, gpu_ns;
    std::uint64_t timestamp = 0, ticks = 0, busy = 0, eu_active = 0, fpu_both = 0;
    std::optional<power::EnergyReading> energy_begin, energy_end;
    std::uint64_t busy_ns = 0;
    bool energy_missing = false;
  };
  std::string energy_reason_;
  std::set<std::string> energy_flags_;
  std::ostream& out_;
  RunInfo info_;
  std::map<std::string, Aggregate> kernels_;
  std::vector<std::string> order_;
};

}  // namespace

std::unique_ptr<Reporter> make_table_reporter(std::ostream& out) {
  return std::make_unique<TableReporter>(out);
}

}  // namespace oaprof::report
