// The selftest's checks that counters mean what the metric sets say: the set the read-outs are
// programmed with is evaluated by its own equations over windows whose work is known beforehand
// (bench::known_work), as a profile's rows evaluate it. The counter names are those of IGT's
// ComputeBasic sets (lib/i915/perf-configs/oa-kblgt2.xml, oa-tglgt2.xml, oa-mtlgt2.xml at IGT
// commit ecb9eb7f6a22, 2025-10-24; metrics/igt*/NOTICE; KBL's render, GTI and busy equations also
// read in intel-gpu-tools 5b3d63df223a's oa-kblgt2.xml); a set without them is skipped, named.
#include "run/selftest_work.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <span>
#include <thread>

#include "bench/known_work.h"
#include "mmio/sim_work.h"
#include "oa/device_facts.h"
#include "oa/metric_set.h"
#include "oa/report.h"
#include "session/metric_source.h"
#include "session/privilege_drop.h"

namespace oaprof::run::selftest {
namespace {

constexpr std::string_view kNeedsKernelRunner =
    "real hardware: known GPU work needs kernel_runner launched as the invoking user through the "
    "path a profile uses (oaprof -- kernel_runner), which the selftest does not start yet "
    "(docs/selftest.md, \"Not yet checked\")";

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

// Several sizes, so that a counter that saturates or misses a fixed amount shows.
constexpr std::size_t kFlopsGlobalSizes[] = {4096, 65536, 1048576};
// kernel_runner's default global size (64 work-groups of 64: bench::RunnerOptions) and buffers
// far beyond the last-level cache of the integrated parts oaprof supports (tens of MiB at most),
// so that every byte load_store moves crosses GTI.
constexpr std::size_t kRunnerGlobalSize = 64 * 64;
constexpr std::size_t kLoadStoreMiB[] = {64, 256};

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

// Why a check cannot measure here, or nullopt; loads the set into `set`. `needs`: the counters it
// derives its figure from; `known_work`: whether it runs kernels whose work the simulator must
// model (idle and plain busy windows need no model).
std::optional<std::string> why_not_measured(const Context& c,
                                            std::span<const std::string_view> needs,
                                            bool known_work, std::optional<SetOnDevice>& set) {
  std::string why;
  set = programmed_set(c, why);
  if (!set) return "no metric set to evaluate: " + why;
  const std::vector<bool> available = set->set.available_counters(set->vars);
  std::vector<std::string_view> missing;
  for (const std::string_view n : needs) {
    const std::optional<int> i = set->set.counter_index(n);
    if (!i || !available[static_cast<std::size_t>(*i)]) missing.push_back(n);
  }
  if (!missing.empty()) {
    return fmt::format("{} of {} has no {} on this device: nothing to derive the figure from",
                       set->set.symbol(), c.device.platform.codename, fmt::join(missing, ", "));
  }
  if (!c.device.simulated()) return std::string(kNeedsKernelRunner);
  if (c.accesses.empty()) return std::string("no read-out to measure through");
  const oa::Generation gen = c.device.platform.gen;
  if (known_work && !mmio::sim_models_known_work(gen)) {
    return fmt::format(
        "the simulator models no known work on {} (mmio/sim_work.h): its counters follow the "
        "workload's fractions whatever kernel runs",
        oa::generation_name(gen));
  }
  return std::nullopt;
}

// The counter deltas of one launch of `work` on the simulator. SimGpu is told the work before the
// read-out says a kernel runs (it keeps the work of a kernel already running) and has counted all
// of it once the kernel ends, however short the window; the window lasts the model's kernel time,
// at most a window, so that the shares per GPU clock are those of the kernel.
oa::CounterDeltas known_work_deltas(Context& c, gpu::CounterSource& source,
                                    const oa::KernelWork& work) {
  mmio::SimGpu& sim = *c.device.sim;
  const double kernel_ns =
      mmio::sim_kernel_events(work, sim.config().platform.gen, sim.eus(), sim.config().freq_mhz)
          .duration_ns;
  const auto wait = static_cast<std::int64_t>(std::min(kernel_ns, double(c.window_ns)));
  const oa::RawReport r0 = source.snapshot(1);
  sim.set_kernel_running(true, &work);
  source.kernel_running(true);
  std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
  source.kernel_running(false);
  const oa::RawReport r1 = source.snapshot(2);
  return oa::compute_deltas(oa::decode(c.format, r0.bytes), oa::decode(c.format, r1.bytes));
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

}  // namespace

// counters: FLOPs from the FPU counters, as the set's equations and oaprof's roofline read them,
// against mad_vect4's and mad_vect8's known FLOPs at several sizes.
Outcome check_known_work_flops(Context& c) {
  constexpr std::string_view kNeeds[] = {"Fpu0Active", "Fpu1Active", "GpuCoreClocks"};
  std::optional<SetOnDevice> set;
  if (auto why = why_not_measured(c, kNeeds, true, set)) return skip(std::move(*why));
  StartedSource source(c, c.accesses.front());
  std::vector<KnownWorkRun> runs;
  for (const std::string_view kernel : {"mad_vect4", "mad_vect8"}) {
    for (const std::size_t global : kFlopsGlobalSizes) {
      const oa::KernelWork work = bench::known_work(kernel, global).value();
      const WindowValues v(*set, known_work_deltas(c, *source, work));
      // Fpu0Active and Fpu1Active are percent of EU-cycles (A10, A11 over EUs x GpuCoreClocks):
      // back to FPU-active EU-cycles, each kFlopsPerFpuCycle FLOPs.
      const double fpu_cycles = (v("Fpu0Active").value_or(0) + v("Fpu1Active").value_or(0)) / 100 *
                                v("GpuCoreClocks").value_or(0) *
                                static_cast<double>(set->vars.eu_cores_total);
      runs.push_back(
          {fmt::format("{}_{}", kernel, global), work.flops, fpu_cycles * kFlopsPerFpuCycle});
    }
  }
  return judge(runs,
               {"FLOPs", "FLOP",
                fmt::format("FLOPs from Fpu0Active + Fpu1Active through {}", c.accesses.front()),
                "the FPU counters do not count the FPU cycles the metric set's equations "
                "read them as"});
}

// counters: GTI bytes from the set's GtiReadThroughput and GtiWriteThroughput against the bytes
// load_store moves through buffers the last-level cache cannot hold.
Outcome check_known_work_bytes(Context& c) {
  constexpr std::string_view kNeeds[] = {"GtiReadThroughput", "GtiWriteThroughput"};
  std::optional<SetOnDevice> set;
  if (auto why = why_not_measured(c, kNeeds, true, set)) return skip(std::move(*why));
  StartedSource source(c, c.accesses.front());
  std::vector<KnownWorkRun> runs;
  for (const std::size_t mib : kLoadStoreMiB) {
    bench::WorkParams params;
    params.size_bytes = mib << 20;
    const oa::KernelWork work =
        bench::known_work("load_store_vect4", kRunnerGlobalSize, params).value();
    const WindowValues v(*set, known_work_deltas(c, *source, work));
    runs.push_back({fmt::format("load_store_vect4_{}MiB", mib), work.global_bytes,
                    v("GtiReadThroughput").value_or(0) + v("GtiWriteThroughput").value_or(0)});
  }
  return judge(runs, {"bytes", "B",
                      fmt::format("bytes from GtiReadThroughput + GtiWriteThroughput through {}",
                                  c.accesses.front()),
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

// The render-pipeline counters of the set that counted during compute, and their sum.
std::pair<std::vector<std::string>, double> render_events(const WindowValues& busy) {
  std::pair<std::vector<std::string>, double> out;
  for (const std::string_view name : kRenderCounters) {
    const double n = busy(name).value_or(0);
    if (n > 0) out.first.emplace_back(name);
    out.second += n;
  }
  return out;
}

}  // namespace

// counters: an idle window keeps every busy and EU share still, and a compute window makes no
// render-pipeline event.
Outcome check_idle_and_render_quiet(Context& c) {
  constexpr std::string_view kNeeds[] = {"GpuBusy"};
  std::optional<SetOnDevice> set;
  if (auto why = why_not_measured(c, kNeeds, false, set)) return skip(std::move(*why));
  const std::size_t render_in_set =
      std::count_if(std::begin(kRenderCounters), std::end(kRenderCounters),
                    [&](std::string_view n) { return set->set.counter_index(n).has_value(); });
  if (render_in_set == 0) {
    return skip(fmt::format("{} of {} has none of IGT's render-pipeline counters ({})",
                            set->set.symbol(), c.device.platform.codename,
                            fmt::join(kRenderCounters, ", ")));
  }
  StartedSource source(c, c.accesses.front());
  const WindowValues idle(*set, measure_window(c, *source, c.window_ns, false).deltas);
  const WindowValues busy(*set, measure_window(c, *source, c.window_ns, true).deltas);
  const auto [loudest, share] = loudest_share(*set, idle);
  const auto [rendered, events] = render_events(busy);
  const double busy_percent = busy("GpuBusy").value_or(0);
  std::vector<Figure> figures = {{"idle_largest_share", share, "percent"},
                                 {"compute_gpu_busy", busy_percent, "percent"},
                                 {"compute_render_events", events, "events"},
                                 {"render_counters", double(render_in_set), ""}};
  const std::string measured = fmt::format(
      "through {}: idle, the largest busy or EU share {} {:.4g}%; compute ({:.3g}% busy), {} "
      "render-pipeline counters sum to {:.4g}",
      c.accesses.front(), loudest, share, busy_percent, render_in_set, events);
  if (busy_percent <= 0) {
    return fail(measured, "the compute window counted no GPU-busy clock: nothing was measured",
                std::move(figures));
  }
  if (share > kIdleSharePercent) {
    return fail(
        measured,
        fmt::format("{} counts without work: busy and EU figures of every row carry it", loudest),
        std::move(figures));
  }
  if (events > 0) {
    return fail(measured,
                fmt::format("{} counted during compute: these counters do not count what the "
                            "metric set says",
                            fmt::join(rendered, ", ")),
                std::move(figures));
  }
  return pass(measured, std::move(figures));
}

}  // namespace oaprof::run::selftest
