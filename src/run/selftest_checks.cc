// The selftest's measurements. Each goes through the code a profile run uses (the read-outs of
// gpu::counter_sources, oa::compute_deltas, the OA programmer's restore, mmio::Forcewake, the
// energy backends), so that a check that passes vouches for that code on this device.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "base/monotonic_clock.h"
#include "mmio/forcewake.h"
#include "mmio/registers.h"
#include "mmio/timestamp_clock.h"
#include "oa/device_facts.h"
#include "oa/report.h"
#include "run/selftest_act_freq.h"
#include "run/selftest_checks.h"
#include "run/selftest_load.h"

namespace oaprof::run::selftest {

Outcome pass(std::string measurement, std::vector<Figure> figures) {
  return {Verdict::kPass, std::move(measurement), {}, std::move(figures)};
}
Outcome fail(std::string measurement, std::string reason, std::vector<Figure> figures) {
  return {Verdict::kFail, std::move(measurement), std::move(reason), std::move(figures)};
}
Outcome skip(std::string reason) { return {Verdict::kSkip, {}, std::move(reason), {}}; }

StartedSource::StartedSource(Context& c, const std::string& access, const mmio::OaConfig* config)
    : source_(gpu::make_counter_source(access, c.device)) {
  source_->start(c.format, config != nullptr ? *config : c.config);
}

StartedSource::~StartedSource() {
  try {
    source_->stop();
  } catch (const std::exception&) {
    // The restore check reads every register back; a destructor must not throw over it.
  }
}

// A load the simulated GPU is not told of (SimLoad::kProcessOnly): what real hardware shows when
// the counters and planes miss it.
bool model_told_of_load(const Context& c) {
  return !(c.device.simulated() && c.options.sim_load == SimLoad::kProcessOnly);
}

void set_busy(Context& c, gpu::CounterSource& source, bool busy) {
  if (!model_told_of_load(c)) return;
  source.kernel_running(busy);
  set_planes_busy(c, busy);
}

void set_planes_busy(Context& c, bool busy) {
  if (model_told_of_load(c) && c.sim_power != nullptr) c.sim_power->set_gpu_active(busy);
}

namespace {

void wait_ns(std::uint64_t ns) { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); }

double ticks_to_ns(const Context& c, std::uint64_t ticks) {
  return static_cast<double>(ticks) * 1e9 / c.device.facts.timestamp_hz;
}

// The first read-out of the context's that programs registers through the BAR, if any.
std::optional<std::string> register_access(const Context& c) {
  for (const std::string& a : c.accesses) {
    if (gpu::access_maps_registers(a)) return a;
  }
  return std::nullopt;
}

std::string unusable_text(const Context& c) {
  std::vector<std::string> parts;
  for (const auto& [access, why] : c.unusable) parts.push_back(access + ": " + why);
  return parts.empty() ? std::string() : fmt::format(" ({})", fmt::join(parts, "; "));
}

}  // namespace

Window measure_window(Context& c, gpu::CounterSource& source, std::uint64_t ns, bool busy) {
  const std::uint64_t t0 = base::monotonic_ns();
  const oa::RawReport r0 = source.snapshot(1);
  const std::uint64_t t1 = base::monotonic_ns();
  if (busy) set_busy(c, source, true);
  wait_ns(ns);
  if (busy) set_busy(c, source, false);
  const std::uint64_t t2 = base::monotonic_ns();
  const oa::RawReport r1 = source.snapshot(2);
  const std::uint64_t t3 = base::monotonic_ns();
  Window w;
  w.deltas = oa::compute_deltas(oa::decode(c.format, r0.bytes), oa::decode(c.format, r1.bytes));
  w.min_ns = t2 - t1;
  w.max_ns = t3 - t0;
  return w;
}

// identity: the device's own topology answer against the platform table's row.
Outcome check_topology(Context& c) {
  const oa::DeviceFacts& f = c.device.facts;
  if (f.topology_from_table()) {
    return skip("the device was not asked for its topology: " + f.topology_note);
  }
  const oa::Topology table = oa::table_topology(c.table);
  const oa::Topology& dev = f.topology;
  std::vector<Figure> figures = {{"device_eus", double(dev.eus), ""},
                                 {"table_eus", double(table.eus), ""},
                                 {"device_subslices", double(dev.subslices), ""},
                                 {"table_subslices", double(table.subslices), ""},
                                 {"device_slices", double(dev.slices), ""},
                                 {"table_slices", double(table.slices), ""}};
  const std::string measured =
      fmt::format("{} says {}; the table {} EUs, {} subslices, {} slices",
                  oa::topology_source_name(f.topology_source), oa::describe_topology(dev),
                  table.eus, table.subslices, table.slices);
  if (dev.eus == table.eus && dev.subslices == table.subslices && dev.slices == table.slices) {
    return pass(measured, std::move(figures));
  }
  return fail(measured,
              fmt::format("the table's {} row is not this part (fused EUs or subslices?): rows "
                          "use the device's own topology, but please report it with the JSON "
                          "report so the table can say so",
                          c.table.codename),
              std::move(figures));
}

// identity: every source of the timestamp frequency oaprof can ask agrees.
Outcome check_timestamp_frequency(Context& c) {
  const oa::DeviceFacts& f = c.device.facts;
  std::vector<std::pair<std::string, double>> sources = {
      {std::string(oa::timestamp_source_name(f.timestamp_source)), f.timestamp_hz}};
  if (c.registers_mapped) {
    if (const auto regs = mmio::read_timestamp_frequency(*c.device.mmio, c.device.platform)) {
      sources.emplace_back("registers (" + regs->how + ")", regs->hz);
    }
  }
  // Where the rule is a fixed rate the table's figure is the truth; on crystal parts only a
  // default that the device's own answer replaces.
  if (c.table.timestamp_rule == oa::TimestampRule::kFixed) {
    sources.emplace_back("platform table", c.table.timestamp_hz);
  }
  if (sources.size() < 2) {
    return skip(fmt::format("only {} gives the frequency ({} Hz): nothing to compare it with",
                            sources.front().first, sources.front().second));
  }
  std::vector<Figure> figures;
  std::vector<std::string> parts;
  bool agree = true;
  for (const auto& [name, hz] : sources) {
    figures.push_back({name, hz, "Hz"});
    parts.push_back(fmt::format("{} {:.6g} MHz", name, hz / 1e6));
    agree = agree && std::abs(hz - f.timestamp_hz) <= 1e-3 * f.timestamp_hz;
  }
  const std::string measured = fmt::format("{}", fmt::join(parts, ", "));
  if (agree) return pass(measured, std::move(figures));
  return fail(measured, "the sources disagree: rows use the first; report which one is right",
              std::move(figures));
}

namespace {

struct ClockRatios {
  double lowest = 1e300;
  double highest = 0;
  int outside = 0;  // windows whose report time fell outside CLOCK_MONOTONIC's bounds
};

// Report-timestamp time over CLOCK_MONOTONIC time, per window, through one read-out.
ClockRatios clock_ratios(Context& c, const std::string& access) {
  StartedSource source(c, access);
  ClockRatios r;
  // Two ticks of slack: each report's timestamp is truncated to a tick.
  const double slack_ns = ticks_to_ns(c, 2);
  for (int i = 0; i < c.windows; ++i) {
    const Window w = measure_window(c, *source, c.window_ns, false);
    const double oa_ns = ticks_to_ns(c, w.deltas.timestamp);
    r.lowest = std::min(r.lowest, oa_ns / static_cast<double>(w.max_ns));
    r.highest = std::max(r.highest, oa_ns / static_cast<double>(w.min_ns));
    const bool inside = oa_ns >= static_cast<double>(w.min_ns) * 0.995 - slack_ns &&
                        oa_ns <= static_cast<double>(w.max_ns) * 1.005 + slack_ns;
    r.outside += inside ? 0 : 1;
  }
  return r;
}

}  // namespace

// clocks: report timestamps, at the frequency oaprof uses, advance with CLOCK_MONOTONIC.
Outcome check_clocks(Context& c) {
  if (c.accesses.empty()) return skip("no read-out to measure through" + unusable_text(c));
  std::vector<Figure> figures;
  std::vector<std::string> parts, wrong;
  for (const std::string& access : c.accesses) {
    const ClockRatios r = clock_ratios(c, access);
    figures.push_back({access + "_ratio_min", r.lowest, ""});
    figures.push_back({access + "_ratio_max", r.highest, ""});
    parts.push_back(fmt::format("{} {:.4f}..{:.4f}", access, r.lowest, r.highest));
    if (r.outside > 0)
      wrong.push_back(fmt::format("{} ({} of {} windows)", access, r.outside, c.windows));
  }
  const std::string measured =
      fmt::format("report time / CLOCK_MONOTONIC at {:.6g} MHz over {} windows of {} ms: {}",
                  c.device.facts.timestamp_hz / 1e6, c.windows, c.window_ns / 1'000'000,
                  fmt::join(parts, ", "));
  if (wrong.empty()) return pass(measured + unusable_text(c), std::move(figures));
  return fail(measured,
              fmt::format("report timestamps do not advance at {:.6g} MHz through {}: every "
                          "time-based figure (GPU time, rates) of those read-outs is off",
                          c.device.facts.timestamp_hz / 1e6, fmt::join(wrong, ", ")),
              std::move(figures));
}

// clocks: GPU_TICKS count the clock the frequency register reports.
namespace {

// GPU_TICKS over windows against one frequency reference: the ratio's range and the windows
// outside 2% of the bounds the reference's readings before and after put on them.
struct TicksAgainst {
  double lowest = 1e300, highest = 0;
  int outside = 0, windows = 0;
  void add(const Window& w, double mhz_before, double mhz_after) {
    const auto ticks = static_cast<double>(w.deltas.gpu_ticks);
    const double fewest = std::min(mhz_before, mhz_after) * static_cast<double>(w.min_ns) / 1e3;
    const double most = std::max(mhz_before, mhz_after) * static_cast<double>(w.max_ns) / 1e3;
    lowest = std::min(lowest, ticks / most);
    highest = std::max(highest, ticks / std::max(fewest, 1.0));
    outside += ticks >= fewest * 0.98 && ticks <= most * 1.02 ? 0 : 1;
    ++windows;
  }
};

}  // namespace

Outcome check_gpu_ticks(Context& c) {
  const std::optional<std::string> access = register_access(c);
  if (!access)
    return skip("needs a read-out with register access (mmio or rpc)" + unusable_text(c));
  if (!gpu::read_gpu_freq_mhz(c.device)) {
    return skip(fmt::format("oaprof reads no frequency register on {}",
                            oa::generation_name(c.device.platform.gen)));
  }
  StartedSource source(c, *access);
  TicksAgainst reg, act;
  ActFreq act_before = read_act_freq(c.card_sysfs, c.device.platform.driver);
  for (int i = 0; i < c.windows; ++i) {
    const double f0 = gpu::read_gpu_freq_mhz(c.device).value_or(0);
    const Window w = measure_window(c, *source, c.window_ns, false);
    const double f1 = gpu::read_gpu_freq_mhz(c.device).value_or(0);
    const ActFreq act_after = read_act_freq(c.card_sysfs, c.device.platform.driver);
    reg.add(w, f0, f1);
    // sysfs says whole MHz: 1 MHz of slack for its rounding.
    if (act_before.mhz && act_after.mhz) act.add(w, *act_before.mhz - 1, *act_after.mhz + 1);
    act_before = act_after;
  }
  std::vector<Figure> figures = {{"ratio_min", reg.lowest, ""}, {"ratio_max", reg.highest, ""}};
  std::string measured = fmt::format(
      "GPU_TICKS / (frequency register × CLOCK_MONOTONIC) through {} over {} windows: "
      "{:.4f}..{:.4f}",
      *access, c.windows, reg.lowest, reg.highest);
  if (act.windows > 0) {
    figures.push_back({"act_freq_ratio_min", act.lowest, ""});
    figures.push_back({"act_freq_ratio_max", act.highest, ""});
    measured += fmt::format("; against sysfs act_freq ({}): {:.4f}..{:.4f}", act_before.source,
                            act.lowest, act.highest);
  } else {
    measured += fmt::format("; sysfs act_freq not compared: {}", act_before.source);
  }
  if (reg.outside == 0 && act.outside == 0) return pass(measured, std::move(figures));
  return fail(
      measured,
      reg.outside > 0
          ? fmt::format("{} of {} windows counted GPU_TICKS unlike the frequency "
                        "register's clock: average frequencies and per-clock figures are off",
                        reg.outside, c.windows)
          : fmt::format("{} of {} windows counted GPU_TICKS unlike sysfs act_freq: the "
                        "driver's frequency and the counters' clock disagree",
                        act.outside, act.windows),
      std::move(figures));
}

namespace {

// Each present A counter (and B, C) per A0 (GPU busy) over one busy window: event ratios that
// no clock or timestamp enters.
std::map<std::string, double> event_ratios(Context& c, const std::string& access) {
  StartedSource source(c, access);
  const Window w = measure_window(c, *source, c.window_ns, true);
  std::map<std::string, double> ratios;
  const auto busy = static_cast<double>(w.deltas.a[0]);
  if (busy < 1e4) return ratios;
  for (int i = 1; i < oa::kMaxNumA; ++i) {
    if (w.deltas.a_present[i]) ratios[fmt::format("A{}", i)] = double(w.deltas.a[i]) / busy;
  }
  for (int i = 0; i < oa::kNumB; ++i) ratios[fmt::format("B{}", i)] = double(w.deltas.b[i]) / busy;
  for (int i = 0; i < oa::kNumC; ++i) ratios[fmt::format("C{}", i)] = double(w.deltas.c[i]) / busy;
  return ratios;
}

}  // namespace

// read-outs agree: the same work counted through every read-out gives the same event ratios.
Outcome check_readouts_agree(Context& c) {
  if (c.accesses.size() < 2) {
    return skip(fmt::format("needs two read-outs; this device has {}{}",
                            fmt::join(c.accesses, ", "), unusable_text(c)));
  }
  std::string no_load;
  const std::unique_ptr<GpuLoad> load = start_load(c, no_load);
  if (!no_load.empty()) return skip(no_load);
  const std::map<std::string, double> first = event_ratios(c, c.accesses.front());
  if (first.empty() && load == nullptr) {
    return skip("A0 (GPU busy) counted no work in the window: give it a load");
  }
  if (first.empty()) {
    return fail(fmt::format("A0 (GPU busy) counted fewer than 10^4 clocks in a busy window "
                            "through {}{}",
                            c.accesses.front(), load_text(load.get())),
                // On real hardware the load ran on this GPU: kernel_runner was given its PCI
                // address (opencl_device_under_test).
                "the GPU-busy counter did not count the load: A0 does not count this GPU's work");
  }
  std::vector<std::string> differ;
  double worst = 0;
  for (std::size_t k = 1; k < c.accesses.size(); ++k) {
    const std::map<std::string, double> other = event_ratios(c, c.accesses[k]);
    for (const auto& [counter, ratio] : first) {
      const auto it = other.find(counter);
      const double theirs = it == other.end() ? 0 : it->second;
      const double diff = std::abs(theirs - ratio) / std::max(std::abs(ratio), 0.01);
      worst = std::max(worst, diff);
      if (diff > 0.02) {
        differ.push_back(fmt::format("{} {} {:.4g} vs {} {:.4g}", counter, c.accesses.front(),
                                     ratio, c.accesses[k], theirs));
      }
    }
  }
  std::vector<Figure> figures = {{"worst_relative_difference", worst, ""}};
  const std::string measured =
      fmt::format("counters per GPU-busy clock through {}: worst relative difference {:.4f}{}",
                  fmt::join(c.accesses, ", "), worst, load_text(load.get()));
  if (differ.empty()) return pass(measured, std::move(figures));
  return fail(measured, "the read-outs disagree: " + fmt::format("{}", fmt::join(differ, "; ")),
              std::move(figures));
}

}  // namespace oaprof::run::selftest
