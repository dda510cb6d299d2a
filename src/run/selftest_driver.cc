// The selftest's checks of the driver's and the OA unit's side of oaprof's programming. Each goes
// through the code a profile uses (the read-outs of gpu::counter_sources, the I915Perf and
// XeObservation interfaces the perf read-out adds its configurations through), so that a pass
// vouches for that code on this device.
#include "run/selftest_driver.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <tuple>

#include "gpu/i915/i915_perf.h"
#include "gpu/sim/sim_i915_perf.h"
#include "gpu/sim/sim_xe_observation.h"
#include "gpu/xe/xe_observation.h"
#include "mmio/oa_programmer.h"
#include "oa/report.h"
#include "run/selftest_load.h"
#include "session/metric_source.h"
#include "session/privilege_drop.h"
#include "session/trusted_metrics.h"

namespace oaprof::run::selftest {
namespace {

// The platform's IGT metric file, read as the invoking user (as choose_config reads it).
std::optional<oa::MetricFile> platform_metric_file(const oa::Platform& platform,
                                                   const SelftestOptions& options) {
  const auto path = session::find_metric_file(platform, options.metrics_xml);
  if (!path) return std::nullopt;
  const auto user = session::credentials_from_sudo(session::process_environment(), ::geteuid());
  return session::load_metric_file(*path, user);
}

// The driver's config calls, on i915 or xe alike: what the perf read-out adds its set through.
struct DriverConfigs {
  std::string describe;
  std::function<std::optional<std::uint64_t>(const std::string& guid)> find;
  std::function<int(const mmio::OaConfig&)> add;  // the new id or -errno
  std::function<int(std::uint64_t id)> remove;    // 0 or -errno
};

// xe's one list: NOA, boolean and flex writes together.
std::vector<std::uint32_t> flat_pairs(const mmio::OaConfig& config) {
  std::vector<std::uint32_t> out;
  for (const auto* list : {&config.mux, &config.boolean, &config.flex}) {
    for (const oa::RegisterWrite& w : *list) out.insert(out.end(), {w.address, w.value});
  }
  return out;
}

// DRM_IOCTL_I915_PERF_ADD_CONFIG / REMOVE_CONFIG (include/uapi/drm/i915_drm.h: 0x37 and 0x38,
// struct drm_i915_perf_oa_config with separate mux, boolean and flex lists; libdrm's header, which
// gpu/i915/perf_stream.h checks against the mainline mirror it names).
DriverConfigs i915_configs(std::shared_ptr<gpu::I915Perf> perf) {
  perf->open_node();
  return {perf->describe(), [perf](const std::string& guid) { return perf->find_config_id(guid); },
          [perf](const mmio::OaConfig& config) { return gpu::add_oa_config(*perf, config); },
          [perf](std::uint64_t id) { return perf->remove_config(id); }};
}

// xe's DRM_XE_OBSERVATION ops ADD_CONFIG (1) and REMOVE_CONFIG (2) with struct drm_xe_oa_config:
// one flat list (gpu/xe/xe_uapi.h, from include/uapi/drm/xe_drm.h at the commits it names).
DriverConfigs xe_configs(std::shared_ptr<gpu::XeObservation> xe) {
  return {xe->describe(), [xe](const std::string& guid) { return xe->find_config_id(guid); },
          [xe](const mmio::OaConfig& config) {
            const auto regs = flat_pairs(config);
            gpu::xe::OaConfigParam c;
            std::memcpy(c.uuid, config.guid.data(), std::min(config.guid.size(), sizeof c.uuid));
            c.n_regs = static_cast<std::uint32_t>(regs.size() / 2);
            c.regs_ptr = reinterpret_cast<std::uintptr_t>(regs.data());
            return xe->add_config(c);
          },
          [xe](std::uint64_t id) { return xe->remove_config(id); }};
}

DriverConfigs driver_configs(gpu::Device& d) {
  if (d.platform.driver == oa::KernelDriver::kXe) {
    return xe_configs(d.sim_xe ? gpu::make_sim_xe_observation(*d.sim_xe)
                               : gpu::make_drm_xe_observation(gpu::resolve_render_node(d),
                                                              gpu::resolve_card_sysfs(d)));
  }
  return i915_configs(d.simulated() ? gpu::make_sim_i915_perf(*d.sim)
                                    : gpu::make_drm_i915_perf(gpu::resolve_render_node(d),
                                                              gpu::resolve_card_sysfs(d)));
}

struct ConfigTally {
  int tried = 0;
  int accepted = 0;
  std::vector<std::string> held;            // a config of that UUID was loaded already
  std::vector<std::string> rejected;        // "Symbol (Invalid argument)"
  std::vector<std::string> not_removed;     // added, and REMOVE_CONFIG failed
  std::vector<std::string> unprogrammable;  // oaprof cannot build its register list here
  bool refused_privilege = false;
};

// Adds one set's list and removes it at once, so that a later failure leaves nothing behind. A
// UUID the driver already holds was not added by us and is left alone.
void try_config(DriverConfigs& driver, const oa::MetricSet& set, const mmio::OaConfig& config,
                ConfigTally& t) {
  if (driver.find(config.guid)) {
    t.held.push_back(set.symbol());
    return;
  }
  ++t.tried;
  const int id = driver.add(config);
  if (id == -EACCES) t.refused_privilege = true;
  if (id < 0) {
    t.rejected.push_back(fmt::format("{} ({})", set.symbol(), std::strerror(-id)));
    return;
  }
  ++t.accepted;
  const int removed = driver.remove(static_cast<std::uint64_t>(id));
  if (removed != 0) {
    t.not_removed.push_back(
        fmt::format("{} (id {}: {})", set.symbol(), id, std::strerror(-removed)));
  }
}

ConfigTally add_every_set(Context& c, const oa::MetricFile& file) {
  DriverConfigs driver = driver_configs(c.device);
  ConfigTally t;
  for (const oa::MetricSet& set : file.sets) {
    if (set.guid().empty()) continue;  // nothing to name it by in ADD_CONFIG
    mmio::OaConfig config;
    try {
      config = session::oa_config_for(set, c.device.platform, c.device.facts);
    } catch (const std::exception&) {
      t.unprogrammable.push_back(set.symbol());
      continue;
    }
    if (config.mux.empty() && config.boolean.empty() && config.flex.empty()) continue;
    try_config(driver, set, config, t);
    if (t.refused_privilege) break;
  }
  return t;
}

}  // namespace

// programming: the driver takes every IGT register list for this part (as oaprof builds it for
// the device's topology), and lets each go again.
Outcome check_driver_accepts_configs(Context& c) {
  const std::optional<oa::MetricFile> file = platform_metric_file(c.device.platform, c.options);
  if (!file) {
    return skip(
        "no IGT metric file for this platform on the search path (--metrics-xml, "
        "docs/metrics.md)");
  }
  const ConfigTally t = add_every_set(c, *file);
  if (t.refused_privilege) {
    return skip(
        "the driver refused ADD_CONFIG for lack of privilege: run as root (or with "
        "CAP_PERFMON, or perf_stream_paranoid / observation_paranoid 0)");
  }
  std::vector<Figure> figures = {{"sets_added", double(t.tried), ""},
                                 {"accepted", double(t.accepted), ""},
                                 {"rejected", double(t.rejected.size()), ""},
                                 {"not_removed", double(t.not_removed.size()), ""},
                                 {"already_loaded", double(t.held.size()), ""},
                                 {"unprogrammable", double(t.unprogrammable.size()), ""}};
  const std::string measured = fmt::format(
      "{} sets of {} added: {} accepted and removed, {} rejected, {} not removed; {} already "
      "loaded (left alone), {} oaprof cannot program here",
      t.tried, file->source, t.accepted - static_cast<int>(t.not_removed.size()), t.rejected.size(),
      t.not_removed.size(), t.held.size(), t.unprogrammable.size());
  if (t.rejected.empty() && t.not_removed.empty()) return pass(measured, std::move(figures));
  std::vector<std::string> wrong = t.rejected;
  for (const std::string& s : t.not_removed) wrong.push_back("not removed: " + s);
  return fail(measured,
              fmt::format("the driver refuses IGT's register lists oaprof would program: {}; "
                          "--access perf cannot stream those sets here (report it with the JSON)",
                          fmt::join(wrong, ", ")),
              std::move(figures));
}

void apply_driver_fault(SimFault fault, const SelftestOptions& options, mmio::SimConfig& sim) {
  switch (fault) {
    case SimFault::kConfigRejected: {
      const std::optional<oa::MetricFile> file = platform_metric_file(sim.platform, options);
      for (const oa::MetricSet& set : file ? file->sets : std::vector<oa::MetricSet>{}) {
        if (!set.guid().empty() && set.symbol() != options.metric_set) {
          sim.faults.rejected_config_uuid = set.guid();
          return;
        }
      }
      throw std::invalid_argument(
          "--sim-fault config-rejected: the platform's metric file has no set besides " +
          options.metric_set + " for the driver to refuse");
    }
    case SimFault::kNoaSlowSettle:
      sim.faults.noa_settle_ns =
          50 * static_cast<std::uint64_t>(std::chrono::nanoseconds(mmio::kNoaSettle).count());
      return;
    case SimFault::kCtxImageStale:
      sim.faults.context_image_stale = true;
      return;
    case SimFault::kPeriodicCountsDoubled:
      sim.faults.periodic_counts_doubled = true;
      return;
    default:
      return;
  }
}

namespace {

// B and C counter rates (events per ms of report time) over one window.
std::vector<double> bc_rates(const Context& c, const Window& w) {
  const double ms =
      std::max(static_cast<double>(w.deltas.timestamp) * 1e3 / c.device.facts.timestamp_hz, 1e-3);
  std::vector<double> rates;
  for (const std::uint64_t b : w.deltas.b) rates.push_back(static_cast<double>(b) / ms);
  for (const std::uint64_t v : w.deltas.c) rates.push_back(static_cast<double>(v) / ms);
  return rates;
}

std::string bc_name(std::size_t i) {
  return i < oa::kNumB ? fmt::format("B{}", i) : fmt::format("C{}", i - oa::kNumB);
}

// A set that programs the NOA mux: the selftest's own where it does, else the last of the
// platform's file that does (MTL's ComputeBasic has no NOA registers). The last, so that
// config-rejected's set (the file's first other) is not it.
std::optional<mmio::OaConfig> mux_config(const Context& c) {
  if (!c.config.mux.empty()) return c.config;
  const std::optional<oa::MetricFile> file = platform_metric_file(c.device.platform, c.options);
  if (!file) return std::nullopt;
  for (auto it = file->sets.rbegin(); it != file->sets.rend(); ++it) {
    try {
      mmio::OaConfig config = session::oa_config_for(*it, c.device.platform, c.device.facts);
      if (config.mux.empty() || config.guid.empty()) continue;
      mmio::plan_oa_programming(c.device.platform, c.format, config);  // a render (OAG) set
      return config;
    } catch (const std::exception&) {
      // a set oaprof cannot program on this device (media GT): the next
    }
  }
  return std::nullopt;
}

}  // namespace

// programming: idle B and C rates in the first sub-window after programming (the plan's delay
// already over) match those of a sub-window long after it.
Outcome check_noa_settle(Context& c) {
  if (c.accesses.empty()) return skip("no read-out to measure through");
  const oa::FormatLayout& layout = oa::layout_of(c.format);
  if (layout.b_count + layout.c_count == 0) {
    return skip(fmt::format("the {} format has no B or C counters", layout.name));
  }
  const std::string& access = c.accesses.front();
  const std::optional<mmio::OaConfig> config = mux_config(c);
  if (!config) return skip("no metric set of the platform's file programs the NOA mux");
  const std::uint64_t sub_ns = std::max<std::uint64_t>(c.window_ns / 4, 1'000'000);
  // Long after any settle time a part could plausibly need (the plan allows 500 us).
  const std::uint64_t span_ns =
      std::max<std::uint64_t>(static_cast<std::uint64_t>(c.windows) * c.window_ns, 60'000'000);
  StartedSource source(c, access, &*config);  // mux, the plan's delay, the rest
  const Window first = measure_window(c, *source, sub_ns, false);
  measure_window(c, *source, span_ns - 2 * sub_ns, false);
  const Window last = measure_window(c, *source, sub_ns, false);
  const std::vector<double> early = bc_rates(c, first), late = bc_rates(c, last);
  double worst = 0;
  std::size_t worst_at = 0;
  std::vector<std::string> unsettled;
  for (std::size_t i = 0; i < early.size(); ++i) {
    const double diff = std::abs(early[i] - late[i]);
    if (diff > worst) std::tie(worst, worst_at) = std::pair(diff, i);
    if (diff > 0.05 * std::max(early[i], late[i]) + 2.0) {
      unsettled.push_back(fmt::format("{} {:.4g} vs {:.4g}", bc_name(i), early[i], late[i]));
    }
  }
  const double sub_ms = static_cast<double>(sub_ns) / 1e6;
  const double later_ms = static_cast<double>(span_ns - sub_ns) / 1e6;
  std::vector<Figure> figures = {{"worst_difference", worst, "events/ms"},
                                 {"first_window", sub_ms, "ms"},
                                 {"last_window_after", later_ms, "ms"}};
  const std::string measured = fmt::format(
      "idle B/C rates through {} in the first {} ms after programming and {} ms later: worst "
      "difference {:.4g} events/ms ({})",
      access, sub_ms, later_ms, worst, bc_name(worst_at));
  if (unsettled.empty()) return pass(measured, std::move(figures));
  return fail(measured,
              fmt::format("the counters had not settled when the plan's {} us delay was over "
                          "(first vs last, events/ms): {}; the first launches of a profile "
                          "count garbage",
                          mmio::kNoaSettle.count(), fmt::join(unsettled, ", ")),
              std::move(figures));
}

namespace {

// A(7+i) per A0 over a busy window: the flex-fed EU counters of Gen8-11; empty where A0 counted
// too little to divide by (a load the counters missed).
std::vector<double> flex_fed_rates(const Window& w) {
  const auto busy = static_cast<double>(w.deltas.a[0]);
  std::vector<double> rates;
  if (busy < 1e4) return rates;
  for (int i = 7; i < 14; ++i) rates.push_back(static_cast<double>(w.deltas.a[i]) / busy);
  return rates;
}

// The GPU work on either side of the switch: on real hardware two kernel_runner loads, one after
// the other, each a process of its own and so a GPU context of its own; none on the simulator's
// model, which is told of the work (set_busy) and forced to switch.
struct SwitchLoads {
  std::unique_ptr<GpuLoad> before, after;
  std::string why;  // why a load could not be had: the check skips with it

  std::string text() const {
    if (!before || !after) return {};
    return fmt::format("; load: kernel_runner {} (pid {}, then a new one: pid {})",
                       before->started(), before->pid(), after->pid());
  }
};

// Another context's work: the load before is stopped and a new one started, whose context the
// driver creates after oaprof programmed the unit, so the GPU switches to an image that held
// none of it then; the simulated GPU (which sees no process) is forced to switch. False with
// loads.why where the new load could not be had.
bool switch_context(Context& c, SwitchLoads& loads) {
  if (loads.before) loads.before->stop();
  loads.after = start_load(c, loads.why);
  if (!loads.why.empty()) return false;
  if (c.device.sim != nullptr && model_told_of_load(c)) c.device.sim->switch_context();
  return true;
}

// perf: what counts after a switch (i915's image reloaded) against what counted before.
std::optional<std::string> perf_survives_switch(Context& c, SwitchLoads& loads, double& worst) {
  // The load before is started first: its context exists when the stream opens (i915 writes the
  // configuration into every existing image then) and the one after is created later (i915
  // writes it into a new image as it creates it), so the two windows see both paths.
  loads.before = start_load(c, loads.why);
  if (!loads.why.empty()) return std::nullopt;
  StartedSource source(c, "perf");
  const std::vector<double> before = flex_fed_rates(measure_window(c, *source, c.window_ns, true));
  if (!switch_context(c, loads)) return std::nullopt;
  const std::vector<double> after = flex_fed_rates(measure_window(c, *source, c.window_ns, true));
  if (before.empty() || after.empty()) {
    return fmt::format(
        "perf: A0 (GPU busy) counted fewer than 10^4 clocks in the busy window {} "
        "the switch: A0 does not count this GPU's work",
        before.empty() ? "before" : "after");
  }
  std::vector<std::string> moved;
  for (std::size_t i = 0; i < before.size(); ++i) {
    const double diff = std::abs(after[i] - before[i]) / std::max(before[i], 1e-6);
    worst = std::max(worst, diff);
    if (diff > 0.02)
      moved.push_back(fmt::format("A{} {:.4g} -> {:.4g}", 7 + i, before[i], after[i]));
  }
  if (moved.empty()) return std::nullopt;
  return fmt::format("perf: the switch changed {}", fmt::join(moved, ", "));
}

// mmio and rpc keep nothing in the image: the snapshot after a switch must say config_lost.
std::optional<std::string> loss_noticed(Context& c, const std::string& access, SwitchLoads& loads) {
  loads.before = start_load(c, loads.why);
  if (!loads.why.empty()) return std::nullopt;
  StartedSource source(c, access);
  source->snapshot(1);
  if (!switch_context(c, loads)) return std::nullopt;
  source->snapshot(2);
  if (source->config_lost()) return std::nullopt;
  return access + ": the snapshot after a switch did not flag config_lost";
}

}  // namespace

// programming: i915 keeps the configuration across a context switch for its stream, and the
// register read-outs notice when one undid theirs.
Outcome check_context_switch(Context& c) {
  const oa::Generation gen = c.device.platform.gen;
  // i915_perf.c (@ torvalds/linux 002c6ca75289): i915_perf_init_info gives the context image
  // offsets of OACTXCONTROL and EU_PERF_CNTL0 for GRAPHICS_VER 8, 9 and 11, which
  // gen8_configure_context writes for a stream; gen12_enable_metric_set programs OAG and the flex
  // registers globally, the image carrying only the per-context OAR unit's state (and xe_oa.c
  // likewise).
  if (gen == oa::Generation::kGen7_5 || oa::is_gen12_family(gen) || gen == oa::Generation::kXe2 ||
      gen == oa::Generation::kXeHpg) {
    return skip(
        fmt::format("nothing oaprof programs is context-saved on {}: the driver writes "
                    "OAG and the flex registers globally",
                    oa::generation_name(gen)));
  }
  if (c.accesses.empty()) return skip("no read-out to measure through");
  std::vector<std::string> wrong, measured;
  double worst = 0;
  for (const std::string& access : c.accesses) {
    SwitchLoads loads;
    const std::optional<std::string> w =
        access == "perf" ? perf_survives_switch(c, loads, worst) : loss_noticed(c, access, loads);
    if (!loads.why.empty()) return skip(loads.why);
    const std::string_view verdict = w                  ? " did not (see the reason)"
                                     : access == "perf" ? " kept it"
                                                        : " flagged the loss";
    measured.push_back(fmt::format("{}{}{}", access, verdict, loads.text()));
    if (w) wrong.push_back(*w);
  }
  std::vector<Figure> figures = {{"perf_worst_relative_difference", worst, ""}};
  const std::string text =
      fmt::format("{} under {}: {}",
                  c.device.simulated() ? "a context switch forced" : "another GPU context's work",
                  fmt::join(c.accesses, ", "), fmt::join(measured, "; "));
  if (wrong.empty()) return pass(text, std::move(figures));
  return fail(text,
              fmt::format("{}: flex-fed metrics (EU activity, FPU) are wrong after a switch",
                          fmt::join(wrong, "; ")),
              std::move(figures));
}

namespace {

// Sets the device's perf period exponent for one check, so that a window holds many periodic
// reports, and puts it back.
class PeriodExponent {
 public:
  PeriodExponent(gpu::Device& d, int exponent) : d_(d), saved_(d.perf_period_exponent) {
    d_.perf_period_exponent = exponent;
  }
  ~PeriodExponent() { d_.perf_period_exponent = saved_; }
  PeriodExponent(const PeriodExponent&) = delete;
  PeriodExponent& operator=(const PeriodExponent&) = delete;

 private:
  gpu::Device& d_;
  int saved_;
};

// The exponent whose period, (2 << e) timestamp ticks, is about 1/16 of a window.
int exponent_for(const Context& c) {
  const double ticks = static_cast<double>(c.window_ns) * c.device.facts.timestamp_hz / 1e9 / 16;
  return std::clamp(static_cast<int>(std::floor(std::log2(std::max(ticks, 2.0)))) - 1, 4, 20);
}

// Every counter per A0 (GPU busy) between two reports.
std::map<std::string, double> per_busy_clock(const oa::CounterDeltas& d) {
  std::map<std::string, double> ratios;
  const double busy = std::max(static_cast<double>(d.a[0]), 1.0);
  for (int i = 1; i < oa::kMaxNumA; ++i) {
    if (d.a_present[i]) ratios[fmt::format("A{}", i)] = static_cast<double>(d.a[i]) / busy;
  }
  for (std::size_t i = 0; i < oa::kNumB + oa::kNumC; ++i) {
    const std::uint64_t v = i < oa::kNumB ? d.b[i] : d.c[i - oa::kNumB];
    ratios[bc_name(i)] = static_cast<double>(v) / busy;
  }
  return ratios;
}

struct PairedWindow {
  oa::CounterDeltas snapshots;  // between the two snapshots' own reports
  oa::CounterDeltas periodic;   // between the newest periodic report before each
  bool had_periodic = false;
};

PairedWindow paired_window(Context& c, gpu::CounterSource& source) {
  // Two periods (exponent_for) after the stream opened, so a periodic report precedes s0.
  std::this_thread::sleep_for(std::chrono::nanoseconds(c.window_ns / 8));
  const oa::RawReport s0 = source.snapshot(1);
  const std::optional<oa::RawReport> p0 = source.last_periodic_report();
  set_busy(c, source, true);
  std::this_thread::sleep_for(std::chrono::nanoseconds(c.window_ns));
  set_busy(c, source, false);
  const oa::RawReport s1 = source.snapshot(2);
  const std::optional<oa::RawReport> p1 = source.last_periodic_report();
  PairedWindow w;
  w.snapshots = oa::compute_deltas(oa::decode(c.format, s0.bytes), oa::decode(c.format, s1.bytes));
  if (p0 && p1) {
    w.periodic =
        oa::compute_deltas(oa::decode(c.format, p0->bytes), oa::decode(c.format, p1->bytes));
    w.had_periodic = w.periodic.timestamp > 0;
  }
  return w;
}

}  // namespace

// read-outs agree: the unit's periodic reports (sampled attribution) and the snapshots that
// bracket a window (bracketed attribution) count the same busy work alike.
Outcome check_rpc_vs_periodic(Context& c) {
  if (c.device.platform.driver == oa::KernelDriver::kXe) {
    return skip("under xe every snapshot is one of the unit's periodic reports: one path");
  }
  if (std::find(c.accesses.begin(), c.accesses.end(), "perf") == c.accesses.end()) {
    return skip(
        "needs the perf read-out: only an i915 stream has the unit write periodic "
        "reports");
  }
  std::string no_load;
  const std::unique_ptr<GpuLoad> load = start_load(c, no_load);
  if (!no_load.empty()) return skip(no_load);
  const PeriodExponent exponent(c.device, exponent_for(c));
  StartedSource source(c, "perf");
  const PairedWindow w = paired_window(c, *source);
  const char* path =
      oa::is_gen12_family(c.device.platform.gen) ? "register snapshots" : "MI_REPORT_PERF_COUNT";
  if (!w.had_periodic || w.snapshots.a[0] < 10'000) {
    return fail(fmt::format("through perf at exponent {}: no periodic report or no busy clocks "
                            "in the window{}",
                            c.device.perf_period_exponent, load_text(load.get())),
                "the OA unit wrote no periodic reports beside the snapshots: sampled "
                "attribution has nothing to place");
  }
  const auto snap = per_busy_clock(w.snapshots), periodic = per_busy_clock(w.periodic);
  double worst = 0;
  std::vector<std::string> differ;
  for (const auto& [counter, ratio] : snap) {
    const double theirs = periodic.at(counter);
    const double diff = std::abs(theirs - ratio) / std::max(std::abs(ratio), 0.01);
    worst = std::max(worst, diff);
    if (diff > 0.02) differ.push_back(fmt::format("{} {:.4g} vs {:.4g}", counter, ratio, theirs));
  }
  std::vector<Figure> figures = {{"worst_relative_difference", worst, ""},
                                 {"periodic_busy_clocks", double(w.periodic.a[0]), "clocks"},
                                 {"snapshot_busy_clocks", double(w.snapshots.a[0]), "clocks"}};
  const std::string measured = fmt::format(
      "counters per GPU-busy clock, {} vs periodic reports (exponent {}): worst relative "
      "difference {:.4f}{}",
      path, exponent_for(c), worst, load_text(load.get()));
  if (differ.empty()) return pass(measured, std::move(figures));
  return fail(measured,
              fmt::format("the unit's periodic reports disagree with the {} (snapshot vs "
                          "periodic): {}; sampled and bracketed rows would differ",
                          path, fmt::join(differ, "; ")),
              std::move(figures));
}

}  // namespace oaprof::run::selftest
