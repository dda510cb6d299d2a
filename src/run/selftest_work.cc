// The selftest's checks that counters mean what the metric sets say: the set the read-outs are
// programmed with, evaluated by its own equations in the rows of kernel_runner's profile runs
// (run/selftest_known_work.h), whose work is known beforehand (bench::known_work), and over an
// idle window of the selftest's own read-out. The counter names are those of IGT's
// ComputeBasic sets (lib/i915/perf-configs/oa-kblgt2.xml, oa-tglgt2.xml, oa-mtlgt2.xml at IGT
// commit ecb9eb7f6a22, 2025-10-24; metrics/igt*/NOTICE; KBL's render, GTI and busy equations also
// read in intel-gpu-tools 5b3d63df223a's oa-kblgt2.xml); a set without them is skipped, named.
#include "run/selftest_work.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "bench/known_work.h"
#include "mmio/sim_work.h"
#include "oa/device_facts.h"
#include "oa/metric_set.h"
#include "report/row.h"
#include "run/selftest_load.h"
#include "session/metric_source.h"
#include "session/privilege_drop.h"

namespace oaprof::run::selftest {
namespace {

// How far counted work may be from the known work, as a fraction of it. On hardware the FPUs also
// run a kernel's loop control and GTI also carries prefetches and page walks: a few percent, not
// the factors a misread counter gives.
constexpr double kWorkTolerance = 0.10;
// The largest busy or EU share (percent of GPU clocks) an idle window may show.
constexpr double kIdleSharePercent = 0.1;

// FLOPs of one FPU-active EU-cycle, as oaprof's roofline reads Fpu0Active and Fpu1Active
// (report/roofline_model.cc): a SIMD4 FPU (reference/method.md) doing FP32 multiply-adds, two
// FLOPs a lane, which mad_vect4 and mad_vect8 are made of.
constexpr double kFlopsPerFpuCycle = 4 * 2;

// Several sizes, so that a counter that saturates or misses a fixed amount shows: work-groups of
// 64 from 64 to 1024 by fours, one launch each (kComputeArguments). On PoCL, where the tests run
// them, the host's check of a launch's result costs more than the launch.
constexpr std::size_t kFlopsGlobalSizes[] = {4096, 16384, 65536};
constexpr std::string_view kFlopsKernels[] = {"mad_vect4", "mad_vect8"};
// The compute run: known-work-flops reads its FLOPs, idle-and-render-quiet its render counters.
constexpr std::string_view kComputeRun = "compute";
constexpr std::string_view kComputeArguments[] = {
    "mad_vect4",   "mad_vect8",     "--sweep", "wg=64:1024:x4", "--wi", "64",
    "--no-warmup", "--max-repeats", "1",       "--quiet"};
// kernel_runner's default global size (64 work-groups of 64: bench::RunnerOptions) and buffers
// far beyond the last-level cache of the parts oaprof supports (tens of MiB at most), so that
// every byte load_store moves crosses GTI.
constexpr std::size_t kRunnerGlobalSize = 64 * 64;
constexpr std::size_t kLoadStoreMiB[] = {64, 128};

// The counters each check derives its figure from.
constexpr std::string_view kFlopsNeeds[] = {"Fpu0Active", "Fpu1Active", "GpuCoreClocks"};
constexpr std::string_view kBytesNeeds[] = {"GtiReadThroughput", "GtiWriteThroughput"};
constexpr std::string_view kQuietNeeds[] = {"GpuBusy"};

// The set's EU-active share, percent of EU-cycles: IGT's EuActive (oa-kblgt2.xml: A7 over EUs x
// GpuCoreClocks; oa-tglgt2.xml: A7 + A8 + A9 + A10, its four quarters, the same way), which
// Xe-LPG's ComputeBasic names XveActive (oa-mtlgt2.xml: A7, the same equation and description).
// Xe2's ComputeBasic (oa-lnl.xml, oa-bmg.xml) has neither.
constexpr std::string_view kEuActiveNames[] = {"EuActive", "XveActive"};
// The FPU counters whose busier one is a floor of EU activity, where the set has both (Gen9's).
constexpr std::string_view kFpuCounters[] = {"Fpu0Active", "Fpu1Active"};
// The most FLOPs an EU does in a cycle: both FPUs doing multiply-adds at once (Gen9's two SIMD4
// FPUs, reference/method.md), as oaprof's roofline takes an EU's peak.
constexpr double kPeakFlopsPerEuCycle = 2 * kFlopsPerFpuCycle;

// IGT's ComputeBasic render-pipeline counters (A1-A3, A5, A6, A21-A27 on Gen9, Gen12 and
// Xe-LPG): vertex, hull, domain, geometry and pixel shader threads and pixel-pipeline results,
// which no compute kernel makes. CsThreads (compute) and the sampler's counters (a compute kernel
// may sample) are not among them.
constexpr std::string_view kRenderCounters[] = {"VsThreads",         "HsThreads",
                                                "DsThreads",         "GsThreads",
                                                "PsThreads",         "RasterizedPixels",
                                                "HiDepthTestFails",  "EarlyDepthTestFails",
                                                "SamplesKilledInPs", "PixelsFailingPostPsTests",
                                                "SamplesWritten",    "SamplesBlended"};

// The set the read-outs are programmed with and the device variables its equations read.
struct SetOnDevice {
  oa::MetricSet set;
  oa::DeviceVariables vars;
};

// Loaded as selftest.cc's choose_config loads it for the read-outs: under sudo the metric file is
// the invoking user's to name and read.
std::optional<SetOnDevice> programmed_set(const Context& c, std::string& why) {
  const auto user = session::credentials_from_sudo(session::process_environment(), ::geteuid());
  try {
    return SetOnDevice{session::load_metric_set(c.device.platform, c.options.metric_set,
                                                c.options.metrics_xml, user),
                       oa::device_variables(c.device.platform, c.device.facts)};
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
}

// The set's counters over one window, by symbol, as a row evaluates them: nullopt for a counter
// the set lacks, the device cannot compute, or whose equation divided by zero.
class WindowValues {
 public:
  WindowValues(const SetOnDevice& s, const oa::CounterDeltas& deltas)
      : set_(s.set),
        available_(s.set.available_counters(s.vars)),
        values_(s.set.evaluate(deltas, s.vars)) {}

  std::optional<double> operator()(std::string_view symbol) const {
    const std::optional<int> i = set_.counter_index(symbol);
    if (!i) return std::nullopt;
    const auto at = static_cast<std::size_t>(*i);
    if (!available_[at] || values_[at].div_by_zero) return std::nullopt;
    return values_[at].as_double();
  }

 private:
  const oa::MetricSet& set_;
  std::vector<bool> available_;
  std::vector<oa::EquationValue> values_;
};

// Those of `symbols` that `set` lacks or this device cannot compute.
std::vector<std::string_view> missing_counters(const SetOnDevice& set,
                                               std::span<const std::string_view> symbols) {
  const std::vector<bool> available = set.set.available_counters(set.vars);
  std::vector<std::string_view> missing;
  for (const std::string_view n : symbols) {
    const std::optional<int> i = set.set.counter_index(n);
    if (!i || !available[static_cast<std::size_t>(*i)]) missing.push_back(n);
  }
  return missing;
}

// Why a check cannot measure with the loaded `set`, or nullopt. `needs`: the counters it derives
// its figure from; `known_work`: whether it runs kernels whose work the simulator must model
// (idle and plain busy windows need no model).
std::optional<std::string> why_not_measured_with(const Context& c, const SetOnDevice& set,
                                                 std::span<const std::string_view> needs,
                                                 bool known_work) {
  if (const auto missing = missing_counters(set, needs); !missing.empty()) {
    return fmt::format("{} of {} has no {} on this device: nothing to derive the figure from",
                       set.set.symbol(), c.device.platform.codename, fmt::join(missing, ", "));
  }
  if (c.accesses.empty()) return std::string("no read-out to measure through");
  const oa::Generation gen = c.device.platform.gen;
  if (known_work && c.device.simulated() && !mmio::sim_models_known_work(gen)) {
    return fmt::format(
        "the simulator models no known work on {} (mmio/sim_work.h): its counters follow the "
        "workload's fractions whatever kernel runs",
        oa::generation_name(gen));
  }
  return std::nullopt;
}

// Why a check cannot measure here, or nullopt; loads the set into `set`.
std::optional<std::string> why_not_measured(const Context& c,
                                            std::span<const std::string_view> needs,
                                            bool known_work, std::optional<SetOnDevice>& set) {
  std::string why;
  set = programmed_set(c, why);
  if (!set) return "no metric set to evaluate: " + why;
  return why_not_measured_with(c, *set, needs, known_work);
}

// The set's counters in one launch's row, by symbol, as the profile run evaluated them: nullopt
// for a counter the set lacks, or whose cell is empty (not on this device, divided by zero).
class RowValues {
 public:
  RowValues(const SetOnDevice& s, const std::vector<report::Field>& row) : set_(s.set), row_(row) {}

  std::optional<double> operator()(std::string_view symbol) const {
    const std::optional<int> i = set_.counter_index(symbol);
    if (!i) return std::nullopt;
    const std::string column = report::metric_column(set_.counters()[static_cast<std::size_t>(*i)]);
    for (const report::Field& f : row_) {
      if (f.name != column) continue;
      if (const auto* d = std::get_if<double>(&f.value)) return *d;
      if (const auto* u = std::get_if<std::uint64_t>(&f.value)) return static_cast<double>(*u);
      return std::nullopt;
    }
    return std::nullopt;
  }

 private:
  const oa::MetricSet& set_;
  const std::vector<report::Field>& row_;
};

// A text cell of a row ("kernel", "global_size"); "" where it has none.
std::string text_field(const std::vector<report::Field>& row, std::string_view name) {
  for (const report::Field& f : row) {
    if (f.name != name) continue;
    const auto* text = std::get_if<std::string>(&f.value);
    return text != nullptr ? *text : std::string();
  }
  return {};
}

// Why a check cannot read the known work's run `name`, as its outcome: a skip where nothing ran
// (no kernel_runner, or no launch measured: why), a failure where kernel_runner or its profile
// run failed after launching. nullopt: its rows are there to read.
std::optional<Outcome> unmeasured(const Context& c, std::string_view name) {
  const KnownWork& known = *c.known_work;
  if (!known.kernel_runner) return skip(known.why_none);
  const KernelRun* run = known.find(name);
  if (run == nullptr || run->status < 0) {
    return skip(fmt::format("the known work's {} run did not run", name));
  }
  const std::string said = run->last_line.empty() ? "" : "; its last line: " + run->last_line;
  if (run->rows.rows.empty()) {
    return skip(
        fmt::format("no launch of `{}` was measured: its profile run ended with status {}{}",
                    command_text(*run), run->status, said));
  }
  if (run->status != 0) {
    return fail(
        fmt::format("{} launches of `{}` measured", run->rows.rows.size(), command_text(*run)),
        fmt::format("its profile run ended with status {}{}", run->status, said));
  }
  return std::nullopt;
}

// One kernel at one size: the work it does and the work its counters say.
struct KnownWorkRun {
  std::string label;  // "mad_vect4_4096"
  double known = 0;
  double counted = 0;
  double ratio() const { return known > 0 ? counted / known : 0; }
};

struct Judgement {
  std::string what;     // "FLOPs"
  std::string unit;     // "FLOP"
  std::string counted;  // how the counted figure was derived, and through which read-out
  std::string wrong;    // what a failure means
};

// Pass when every run counted its known work within kWorkTolerance; every figure goes to the
// report.
Outcome judge(const std::vector<KnownWorkRun>& runs, const Judgement& j) {
  std::vector<Figure> figures;
  std::vector<std::string> ratios;
  const KnownWorkRun* worst = nullptr;
  for (const KnownWorkRun& r : runs) {
    figures.push_back({r.label + "_known", r.known, j.unit});
    figures.push_back({r.label + "_counted", r.counted, j.unit});
    figures.push_back({r.label + "_ratio", r.ratio(), ""});
    ratios.push_back(fmt::format("{} {:.4f}", r.label, r.ratio()));
    if (worst == nullptr || std::abs(r.ratio() - 1) > std::abs(worst->ratio() - 1)) worst = &r;
  }
  std::string measured =
      fmt::format("{} / known {}: {}", j.counted, j.what, fmt::join(ratios, ", "));
  if (worst == nullptr || std::abs(worst->ratio() - 1) <= kWorkTolerance) {
    return pass(std::move(measured), std::move(figures));
  }
  return fail(std::move(measured),
              fmt::format("{}: the counters say {:.4g} {} where the kernel does {:.4g}: {}",
                          worst->label, worst->counted, j.what, worst->known, j.wrong),
              std::move(figures));
}

// The set's name for the EU-active share: the first of kEuActiveNames it has (EuActive where it
// has none, so that the skip names it).
std::string_view eu_active_symbol(const SetOnDevice& set) {
  for (const std::string_view name : kEuActiveNames) {
    if (set.set.counter_index(name)) return name;
  }
  return kEuActiveNames[0];
}

// Why known-work-eu-active cannot measure here, or nullopt; loads the set into `set`.
std::optional<std::string> eu_active_not_measured(const Context& c,
                                                  std::optional<SetOnDevice>& set) {
  std::string why;
  set = programmed_set(c, why);
  if (!set) return "no metric set to evaluate: " + why;
  const std::string_view needs[] = {eu_active_symbol(*set), "GpuCoreClocks"};
  return why_not_measured_with(c, *set, needs, true);
}

// "load_store_64MiB": the run of load_store_vect4 through buffers of `mib` MiB.
std::string load_store_run(std::size_t mib) { return fmt::format("load_store_{}MiB", mib); }

// The buffer sizes load_store runs with, a run each: the first alone with --quick.
std::span<const std::size_t> load_store_sizes(const Context& c) {
  return std::span(kLoadStoreMiB).first(c.options.quick ? 1 : std::size(kLoadStoreMiB));
}

// The row of `kernel`'s launch over `global` work-items in `run`, or the failure saying it is
// missing.
std::variant<const std::vector<report::Field>*, Outcome> row_of(const KernelRun& run,
                                                                std::string_view kernel,
                                                                std::size_t global) {
  for (const std::vector<report::Field>& row : run.rows.rows) {
    if (text_field(row, "kernel") == kernel &&
        text_field(row, "global_size") == std::to_string(global)) {
      return &row;
    }
  }
  return fail(fmt::format("{} launches of `{}` measured", run.rows.rows.size(), command_text(run)),
              fmt::format("no launch of {} over {} work-items among them", kernel, global));
}

// `make(values, kernel, global)` of each launch of the compute run that known-work-flops reads
// (mad_vect4 and mad_vect8 at kFlopsGlobalSizes), or the failure saying which is missing.
template <typename T, typename Make>
std::variant<std::vector<T>, Outcome> per_mad_launch(const KernelRun& run, const SetOnDevice& set,
                                                     const Make& make) {
  std::vector<T> out;
  for (const std::string_view kernel : kFlopsKernels) {
    for (const std::size_t global : kFlopsGlobalSizes) {
      auto row = row_of(run, kernel, global);
      if (auto* missing = std::get_if<Outcome>(&row)) return std::move(*missing);
      out.push_back(
          make(RowValues(set, *std::get<const std::vector<report::Field>*>(row)), kernel, global));
    }
  }
  return out;
}

// Why idle-and-render-quiet cannot measure here, or nullopt; loads the set into `set`.
std::optional<std::string> quiet_not_measured(const Context& c, std::optional<SetOnDevice>& set) {
  if (auto why = why_not_measured(c, kQuietNeeds, false, set)) return why;
  const bool any = std::any_of(std::begin(kRenderCounters), std::end(kRenderCounters),
                               [&](std::string_view n) { return set->set.counter_index(n); });
  if (any) return std::nullopt;
  return fmt::format("{} of {} has none of IGT's render-pipeline counters ({})", set->set.symbol(),
                     c.device.platform.codename, fmt::join(kRenderCounters, ", "));
}

}  // namespace

void plan_known_work(Context& c, KnownWork& known) {
  const auto wanted = [&c](std::string_view check) {
    return !c.options.skip_checks.contains(check);
  };
  std::optional<SetOnDevice> set;
  const bool flops = wanted("known-work-flops") && !why_not_measured(c, kFlopsNeeds, true, set);
  const bool eu_active = wanted("known-work-eu-active") && !eu_active_not_measured(c, set);
  if (flops || eu_active || (wanted("idle-and-render-quiet") && !quiet_not_measured(c, set))) {
    known.runs.push_back(
        {.name = std::string(kComputeRun),
         .arguments = {std::begin(kComputeArguments), std::end(kComputeArguments)}});
  }
  if (wanted("known-work-bytes") && !why_not_measured(c, kBytesNeeds, true, set)) {
    for (const std::size_t mib : load_store_sizes(c)) {
      KernelRun run{.name = load_store_run(mib),
                    .arguments = {"load_store_vect4", "--size", fmt::format("{}M", mib),
                                  "--no-warmup", "--max-repeats", "1"}};
      run.params.size_bytes = mib << 20;
      known.runs.push_back(std::move(run));
    }
  }
  // On the device under test (its PCI address), not on whichever OpenCL lists first.
  for (KernelRun& run : known.runs) {
    for (std::string& a : opencl_device_arguments(opencl_device_under_test(c.device))) {
      run.arguments.push_back(std::move(a));
    }
  }
  if (!c.accesses.empty()) known.access = c.accesses.front();
  known.metric_set = c.options.metric_set;
  known.metrics_xml = c.options.metrics_xml;
}

// counters: FLOPs from the FPU counters, as the set's equations and oaprof's roofline read them,
// in the rows of mad_vect4's and mad_vect8's launches at several sizes, against their known FLOPs.
Outcome check_known_work_flops(Context& c) {
  std::optional<SetOnDevice> set;
  if (auto why = why_not_measured(c, kFlopsNeeds, true, set)) return skip(std::move(*why));
  if (auto o = unmeasured(c, kComputeRun)) return std::move(*o);
  const KernelRun& run = *c.known_work->find(kComputeRun);
  auto launches = per_mad_launch<KnownWorkRun>(
      run, *set, [&](const RowValues& v, std::string_view kernel, std::size_t global) {
        // Fpu0Active and Fpu1Active are percent of EU-cycles (A10, A11 over EUs x
        // GpuCoreClocks): back to FPU-active EU-cycles, each kFlopsPerFpuCycle FLOPs.
        const double fpu_cycles = (v("Fpu0Active").value_or(0) + v("Fpu1Active").value_or(0)) /
                                  100 * v("GpuCoreClocks").value_or(0) *
                                  static_cast<double>(set->vars.eu_cores_total);
        return KnownWorkRun{fmt::format("{}_{}", kernel, global),
                            bench::known_work(kernel, global).value().flops,
                            fpu_cycles * kFlopsPerFpuCycle};
      });
  if (auto* missing = std::get_if<Outcome>(&launches)) return std::move(*missing);
  return judge(std::get<std::vector<KnownWorkRun>>(launches),
               {"FLOPs", "FLOP",
                fmt::format("FLOPs from Fpu0Active + Fpu1Active in the rows of `{}` through {}",
                            command_text(run), c.known_work->access),
                "the FPU counters do not count the FPU cycles the metric set's equations "
                "read them as"});
}

namespace {

// One kernel at one size: the EU-cycles its EU-active share counts and the bounds its known work
// sets them, all in EU-cycles.
struct EuActiveRun {
  std::string label;  // "mad_vect4_4096"
  double share = 0;   // the row's EU-active share, percent of EU-cycles
  double eu_cycles = 0;
  double capacity = 0;     // EUs x GpuCoreClocks: every EU-cycle of the launch
  double flops_floor = 0;  // its known FLOPs at an EU's peak
  // The busier FPU's active EU-cycles, where the set has both FPU counters.
  std::optional<double> fpu_floor = {};
  double floor() const { return std::max(flops_floor, fpu_floor.value_or(0)); }
  double ratio() const { return floor() > 0 ? eu_cycles / floor() : 0; }
};

// The row's percent shares back to EU-cycles, as known-work-flops reads the FPU shares.
EuActiveRun eu_active_run(const SetOnDevice& set, const RowValues& v, std::string_view kernel,
                          std::size_t global) {
  const double capacity =
      v("GpuCoreClocks").value_or(0) * static_cast<double>(set.vars.eu_cores_total);
  EuActiveRun r{
      .label = fmt::format("{}_{}", kernel, global),
      .share = v(eu_active_symbol(set)).value_or(0),
      .capacity = capacity,
      .flops_floor = bench::known_work(kernel, global).value().flops / kPeakFlopsPerEuCycle};
  r.eu_cycles = r.share / 100 * capacity;
  // Each EU is active in every cycle either of its FPUs is, so over all EUs the EU-active cycles
  // are at least each FPU's: at least the busier one's (and so at least half their sum).
  if (missing_counters(set, kFpuCounters).empty()) {
    r.fpu_floor =
        std::max(v("Fpu0Active").value_or(0), v("Fpu1Active").value_or(0)) / 100 * capacity;
  }
  return r;
}

std::vector<Figure> eu_active_figures(const std::vector<EuActiveRun>& runs) {
  std::vector<Figure> figures;
  for (const EuActiveRun& r : runs) {
    figures.push_back({r.label + "_eu_active", r.eu_cycles, "EU-cycles"});
    figures.push_back({r.label + "_flops_floor", r.flops_floor, "EU-cycles"});
    if (r.fpu_floor) figures.push_back({r.label + "_fpu_floor", *r.fpu_floor, "EU-cycles"});
    figures.push_back({r.label + "_ratio", r.ratio(), ""});
    figures.push_back({r.label + "_share", r.share, "percent"});
  }
  return figures;
}

// Pass when every run's EU-active EU-cycles are within kWorkTolerance above both floors and its
// share within it of 100%.
Outcome judge_eu_active(const std::vector<EuActiveRun>& runs, const std::string& measured_how) {
  std::vector<std::string> ratios;
  const EuActiveRun* lowest = nullptr;
  const EuActiveRun* fullest = nullptr;
  for (const EuActiveRun& r : runs) {
    ratios.push_back(fmt::format("{} {:.4f} ({:.3g}%)", r.label, r.ratio(), r.share));
    if (lowest == nullptr || r.ratio() < lowest->ratio()) lowest = &r;
    if (fullest == nullptr || r.share > fullest->share) fullest = &r;
  }
  std::string measured = fmt::format("{}: per launch, over the larger floor (the share): {}",
                                     measured_how, fmt::join(ratios, ", "));
  if (lowest != nullptr && lowest->ratio() < 1 - kWorkTolerance) {
    const bool fpu = lowest->fpu_floor && *lowest->fpu_floor > lowest->flops_floor;
    return fail(std::move(measured),
                fmt::format("{}: the counters say {:.4g} EU-active EU-cycles where {} needs at "
                            "least {:.4g}: the EU-active counter misses cycles the EUs worked",
                            lowest->label, lowest->eu_cycles,
                            fpu ? "the busier FPU's active cycles" : "the kernel's known FLOPs",
                            lowest->floor()),
                eu_active_figures(runs));
  }
  if (fullest != nullptr && fullest->share > 100 * (1 + kWorkTolerance)) {
    return fail(std::move(measured),
                fmt::format("{}: the counters say the EUs were active {:.4g}% of their cycles: "
                            "the EU-active counter counts more than EU-cycles",
                            fullest->label, fullest->share),
                eu_active_figures(runs));
  }
  return pass(std::move(measured), eu_active_figures(runs));
}

}  // namespace

// counters: the set's EU-active share in the rows of mad_vect4's and mad_vect8's launches (those
// known-work-flops reads) against the EU-cycles their known FLOPs and the FPU counters imply.
Outcome check_known_work_eu_active(Context& c) {
  std::optional<SetOnDevice> set;
  if (auto why = eu_active_not_measured(c, set)) return skip(std::move(*why));
  if (auto o = unmeasured(c, kComputeRun)) return std::move(*o);
  const KernelRun& run = *c.known_work->find(kComputeRun);
  auto launches = per_mad_launch<EuActiveRun>(
      run, *set, [&](const RowValues& v, std::string_view kernel, std::size_t global) {
        return eu_active_run(*set, v, kernel, global);
      });
  if (auto* missing = std::get_if<Outcome>(&launches)) return std::move(*missing);
  const bool fpu = missing_counters(*set, kFpuCounters).empty();
  return judge_eu_active(
      std::get<std::vector<EuActiveRun>>(launches),
      fmt::format("EU-active EU-cycles from {} in the rows of `{}` through {}; floors: known "
                  "FLOPs / {}{}",
                  eu_active_symbol(*set), command_text(run), c.known_work->access,
                  kPeakFlopsPerEuCycle,
                  fpu ? " and the busier FPU's active EU-cycles (Fpu0Active, Fpu1Active)"
                      : " (the set has no Fpu0Active, Fpu1Active)"));
}

// counters: GTI bytes from the set's GtiReadThroughput and GtiWriteThroughput in the rows of
// load_store's launches through buffers the last-level cache cannot hold.
Outcome check_known_work_bytes(Context& c) {
  std::optional<SetOnDevice> set;
  if (auto why = why_not_measured(c, kBytesNeeds, true, set)) return skip(std::move(*why));
  std::vector<KnownWorkRun> runs;
  for (const std::size_t mib : load_store_sizes(c)) {
    if (auto o = unmeasured(c, load_store_run(mib))) return std::move(*o);
    const KernelRun& run = *c.known_work->find(load_store_run(mib));
    auto row = row_of(run, "load_store_vect4", kRunnerGlobalSize);
    if (auto* missing = std::get_if<Outcome>(&row)) return std::move(*missing);
    const RowValues v(*set, *std::get<const std::vector<report::Field>*>(row));
    runs.push_back(
        {fmt::format("load_store_vect4_{}MiB", mib),
         bench::known_work("load_store_vect4", kRunnerGlobalSize, run.params).value().global_bytes,
         v("GtiReadThroughput").value_or(0) + v("GtiWriteThroughput").value_or(0)});
  }
  return judge(runs,
               {"bytes", "B",
                fmt::format("bytes from GtiReadThroughput + GtiWriteThroughput in the rows of "
                            "`kernel_runner load_store_vect4 --size N` through {}",
                            c.known_work->access),
                "the GTI counters do not count the bytes between the GPU and memory the "
                "metric set's equations read them as"});
}

namespace {

// The largest busy or EU share (the set's percent counters) of an idle window, and its name.
std::pair<std::string, double> loudest_share(const SetOnDevice& set, const WindowValues& idle) {
  std::pair<std::string, double> loudest = {"", 0.0};
  for (const oa::MetricCounter& counter : set.set.counters()) {
    if (counter.units != "percent") continue;
    const double share = idle(counter.symbol).value_or(0);
    if (loudest.first.empty() || share > loudest.second) loudest = {counter.symbol, share};
  }
  return loudest;
}

// What kernel_runner's compute launches counted: the render-pipeline counters that moved and
// their sum over every launch, and the least GPU-busy share of a launch.
struct ComputeCounts {
  std::vector<std::string> rendered;
  double events = 0;
  double least_busy = 0;
};

ComputeCounts compute_counts(const SetOnDevice& set, const KernelRun& run) {
  ComputeCounts out;
  for (std::size_t i = 0; i < run.rows.rows.size(); ++i) {
    const RowValues v(set, run.rows.rows[i]);
    const double busy = v("GpuBusy").value_or(0);
    out.least_busy = i == 0 ? busy : std::min(out.least_busy, busy);
    for (const std::string_view name : kRenderCounters) {
      const double n = v(name).value_or(0);
      if (n > 0 &&
          std::find(out.rendered.begin(), out.rendered.end(), name) == out.rendered.end()) {
        out.rendered.emplace_back(name);
      }
      out.events += n;
    }
  }
  return out;
}

}  // namespace

// counters: an idle window keeps every busy and EU share still, and kernel_runner's compute
// launches make no render-pipeline event.
Outcome check_idle_and_render_quiet(Context& c) {
  std::optional<SetOnDevice> set;
  if (auto why = quiet_not_measured(c, set)) return skip(std::move(*why));
  if (auto o = unmeasured(c, kComputeRun)) return std::move(*o);
  const KernelRun& run = *c.known_work->find(kComputeRun);
  const auto render_in_set =
      std::count_if(std::begin(kRenderCounters), std::end(kRenderCounters),
                    [&](std::string_view n) { return set->set.counter_index(n).has_value(); });
  StartedSource source(c, c.accesses.front());
  const WindowValues idle(*set, measure_window(c, *source, c.window_ns, false).deltas);
  const auto [loudest, share] = loudest_share(*set, idle);
  const ComputeCounts compute = compute_counts(*set, run);
  std::vector<Figure> figures = {{"idle_largest_share", share, "percent"},
                                 {"compute_gpu_busy", compute.least_busy, "percent"},
                                 {"compute_render_events", compute.events, "events"},
                                 {"render_counters", double(render_in_set), ""},
                                 {"compute_launches", double(run.rows.rows.size()), ""}};
  const std::string measured = fmt::format(
      "idle through {}: the largest busy or EU share {} {:.4g}%; {} launches of `{}` through {} "
      "(the least {:.3g}% busy): {} render-pipeline counters sum to {:.4g}",
      c.accesses.front(), loudest, share, run.rows.rows.size(), command_text(run),
      c.known_work->access, compute.least_busy, render_in_set, compute.events);
  if (compute.least_busy <= 0) {
    return fail(measured, "a compute launch counted no GPU-busy clock: nothing was measured",
                std::move(figures));
  }
  if (share > kIdleSharePercent) {
    return fail(
        measured,
        fmt::format("{} counts without work: busy and EU figures of every row carry it", loudest),
        std::move(figures));
  }
  if (compute.events > 0) {
    return fail(measured,
                fmt::format("{} counted during compute: these counters do not count what the "
                            "metric set says",
                            fmt::join(compute.rendered, ", ")),
                std::move(figures));
  }
  return pass(measured, std::move(figures));
}

}  // namespace oaprof::run::selftest
