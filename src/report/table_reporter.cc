// The terminal summary: one line per kernel name, with the headline figures and their units.
#include <cmath>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model/energy_model.h"
#include "report/exact_median.h"
#include "report/reporter.h"
#include "report/text_escape.h"

namespace oaprof::report {
namespace {

std::string fixed(double v, int digits) {
  return std::isnan(v) ? std::string("-") : fmt::format("{:.{}f}", v, digits);
}

class TableReporter final : public Reporter {
 public:
  explicit TableReporter(std::ostream& out) : out_(out) {}

  void begin(const RunInfo& info) override {
    info_ = info;
    shares_.clear();
    if (info.metrics == nullptr) return;
    // The EU shares are the chosen set's own counters, found by name: which A counter holds EU
    // active or both-FPUs-active depends on the set's programming, so no fixed index is right.
    for (const auto& [header, symbol] : kShareColumns) {
      const auto index = info.metrics->counter_index(symbol);
      if (!index || !info.metrics->available(*index, info.device_variables)) continue;
      if (info.metrics->counters()[static_cast<std::size_t>(*index)].units != "percent") continue;
      shares_.push_back({std::string(header), *index});
    }
    std::vector<int> counters;
    for (const Share& share : shares_) counters.push_back(share.counter);
    if (!counters.empty()) {
      share_program_ = oa::MetricProgram(*info.metrics, info.device_variables,
                                         info.metrics->order_for(counters));
    }
  }

  void add(const oa::LaunchRecord& r, const RowEnergy& energy) override {
    auto [it, inserted] = kernels_.try_emplace(r.launch.kernel_name);
    if (inserted) order_.push_back(r.launch.kernel_name);
    Aggregate& a = it->second;
    a.launches++;
    if (!std::isnan(kernel_time_ns(r))) a.kernel_ns.add(r.launch.end_ns - r.launch.start_ns);
    a.gpu_ticks.add(r.deltas.timestamp);
    a.timestamp += r.deltas.timestamp;
    a.ticks += r.deltas.gpu_ticks;
    a.busy += r.deltas.a[0];
    add_shares(r, a);
    if (!r.flags.empty()) a.flagged++;
    // The kernel's energy window runs from its first launch's start to its last launch's end
    // (the method: energy read before the first and after the last launch of the window).
    if (energy.begin && energy.end) {
      if (!a.energy_begin) a.energy_begin = energy.begin;
      a.energy_end = energy.end;
      a.busy_ns += oa::gpu_busy_ns(r.deltas, info_.timestamp_hz);
    } else {
      a.energy_missing = true;
      if (!energy.window.unavailable_reason.empty())
        energy_reason_ = energy.window.unavailable_reason;
    }
    if (energy.modelled) {
      a.model_j += energy.modelled->energy_j;
      a.model_err_j += energy.modelled->error_j;  // linearly: the rows share coefficients
      a.model_s += energy.modelled->duration_s;
    }
  }

  void end() override {
    out_ << fmt::format("oaprof: device: {} ({}), format {}, access {}\n", info_.device,
                        info_.device_detail, info_.format, info_.access);
    out_ << fmt::format("oaprof: energy: {}{}\n",
                        info_.energy_backend.empty() ? "none" : info_.energy_backend,
                        info_.energy_simulated ? " (simulated: a model, not a measurement)" : "");
    if (order_.empty()) {
      out_ << "oaprof: no kernel launches were recorded\n";
      return;
    }
    std::string header = fmt::format("{:<24} {:>8} {:>12} {:>12} {:>9} {:>8}", "kernel", "launches",
                                     "kernel_us", "gpu_us", "freq_MHz", "busy_%");
    for (const Share& share : shares_) header += fmt::format(" {:>10}", share.header);
    out_ << header
         << fmt::format(" {:>10} {:>8} {:>8} {:>7}\n", "window_ms", power_header(), "dyn_W",
                        "flagged");
    for (const auto& name : order_) {
      const Aggregate& a = kernels_.at(name);
      // The same conversions as the rows' (kernel_time_ns, gpu_time_ns), so that the medians
      // are the rows' medians.
      const auto as_ns = [](std::uint64_t ns) { return static_cast<double>(ns); };
      const auto ticks_as_ns = [this](std::uint64_t ticks) {
        oa::CounterDeltas d;
        d.timestamp = ticks;
        return oa::gpu_time_ns(d, info_.timestamp_hz);
      };
      const double ticks = static_cast<double>(a.ticks);
      const double freq = a.timestamp
                              ? ticks * info_.timestamp_hz / static_cast<double>(a.timestamp) / 1e6
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
      // No measured figure: the energy model's, marked, where the run has one.
      if (igpu == "-" && a.model_s > 0) {
        igpu = fixed(a.model_j / a.model_s, 2) + "~";
        any_modelled_ = true;
      }
      // The name is the program's: its control bytes shown, never sent to the terminal.
      std::string line = fmt::format(
          "{:<24} {:>8} {:>12} {:>12} {:>9} {:>8}", visible_text(name), a.launches,
          fixed(a.kernel_ns.median(as_ns) / 1e3, 1),
          fixed(a.gpu_ticks.median(ticks_as_ns) / 1e3, 1), fixed(freq, 0),
          fixed(ticks > 0 ? 100.0 * static_cast<double>(a.busy) / ticks : std::nan(""), 1));
      for (std::size_t i = 0; i < shares_.size(); ++i) {
        const auto& [weighted, clocks] = a.shares[i];
        line += fmt::format(" {:>10}", fixed(clocks > 0 ? weighted / clocks : std::nan(""), 1));
      }
      out_ << line << fmt::format(" {:>10} {:>8} {:>8} {:>7}\n", window_ms, igpu, dyn, a.flagged);
    }
    out_ << "(kernel_us and gpu_us are medians over launches; busy is a share of GPU clocks across "
            "all launches";
    for (const Share& share : shares_) {
      const auto& counter = info_.metrics->counters()[static_cast<std::size_t>(share.counter)];
      out_ << fmt::format("; {} is the set's {}, weighted by each launch's GPU clocks",
                          share.header, visible_text(counter.symbol));
    }
    out_ << ")\n";
    out_ << fmt::format(
        "({}: {} over each kernel's window, first launch to last; dyn_W: above "
        "the idle baseline; * window shorter than {} ms)\n",
        power_header(), power::formula_label(info_.energy_options.formula),
        info_.energy_options.min_window_ns / 1'000'000);
    if (any_modelled_) out_ << model_legend();
    if (!energy_reason_.empty()) out_ << "energy: " << energy_reason_ << "\n";
    if (!energy_flags_.empty()) {
      std::string flags;
      for (const auto& f : energy_flags_) flags += (flags.empty() ? "" : ", ") + f;
      out_ << "energy flags: " << flags << "\n";
    }
  }

  std::size_t durations_kept() const {
    std::size_t kept = 0;
    for (const auto& [name, a] : kernels_) kept += a.kernel_ns.distinct() + a.gpu_ticks.distinct();
    return kept;
  }

 private:
  // The metric-set counters the table shows as shares, by their column header.
  static constexpr std::pair<std::string_view, std::string_view> kShareColumns[] = {
      {"EU_act_%", "EuActive"}, {"FPU2_%", "EuFpuBothActive"}};
  struct Share {
    std::string header;
    int counter = 0;  // index in the set
  };
  struct Aggregate {
    std::uint64_t launches = 0, flagged = 0;
    // For the medians: kernel times (ns, OpenCL profiling) and GPU times (timestamp ticks),
    // counted per distinct value rather than kept per launch, so that memory stays flat.
    ExactMedian kernel_ns, gpu_ticks;
    std::uint64_t timestamp = 0, ticks = 0, busy = 0;
    // Per share column: the sum of value × GPU clocks, and of the clocks, over the launches
    // whose value is defined.
    std::vector<std::pair<double, double>> shares;
    std::optional<power::EnergyReading> energy_begin, energy_end;
    std::uint64_t busy_ns = 0;
    bool energy_missing = false;
    // --energy-model: the launches' modelled energy, its error and the time it covers, summed.
    double model_j = 0, model_err_j = 0, model_s = 0;
  };

  // The power column's header: a discrete card's own package sensor (gpu-pkg) is its GPU's
  // power, not an integrated GPU's share of the CPU package.
  std::string_view power_header() const {
    return info_.energy_options.formula == power::IgpuFormula::kGpuPkg ? "GPU_W" : "iGPU_W";
  }
  // What a `~` figure is: modelled, by which model, and how far to trust it.
  std::string model_legend() const {
    const model::EnergyModel& m = *info_.energy_model;
    return fmt::format(
        "(~ {} modelled, not measured: the energy model of {} ({}, {:.0f}-{:.0f} MHz, {:.1f} "
        "% leave-one-kernel-out error) applied to the launches' counters, where no window was "
        "measured; each row's figure and error bar are in energy_model_j, energy_model_err_j)\n",
        power_header(), visible_text(m.platform), visible_text(m.metric_set), m.freq_min_mhz,
        m.freq_max_mhz, 100 * m.loo_rms_relative);
  }
  // A launch's share values, weighted by its GPU clocks so that the kernel's figure is the
  // share of all its clocks; a value whose equation divided by zero is left out.
  // Only the share counters and those they reference are evaluated (compiled once, begin()),
  // into a vector kept between rows: the whole set on every row cost as much as the CSV row.
  void add_shares(const oa::LaunchRecord& r, Aggregate& a) {
    if (shares_.empty()) return;
    a.shares.resize(shares_.size());
    if (!r.deltas.has_gpu_ticks || r.deltas.gpu_ticks == 0) return;
    std::vector<oa::EquationValue>& values = share_values_;
    share_program_.evaluate_into(r.deltas, values);
    const double clocks = static_cast<double>(r.deltas.gpu_ticks);
    for (std::size_t i = 0; i < shares_.size(); ++i) {
      const oa::EquationValue& v = values[static_cast<std::size_t>(shares_[i].counter)];
      if (v.div_by_zero) continue;
      a.shares[i].first += v.as_double() * clocks;
      a.shares[i].second += clocks;
    }
  }

  std::vector<Share> shares_;
  // The counters the shares need, in evaluation order, compiled for the device.
  oa::MetricProgram share_program_;
  std::vector<oa::EquationValue> share_values_;
  std::string energy_reason_;
  bool any_modelled_ = false;
  std::set<std::string> energy_flags_;
  std::ostream& out_;
  RunInfo info_;
  std::map<std::string, Aggregate> kernels_;
  std::vector<std::string> order_;
};

}  // namespace

std::size_t table_durations_kept(const Reporter& table) {
  return dynamic_cast<const TableReporter&>(table).durations_kept();
}

std::unique_ptr<Reporter> make_table_reporter(std::ostream& out) {
  return std::make_unique<TableReporter>(out);
}

}  // namespace oaprof::report
