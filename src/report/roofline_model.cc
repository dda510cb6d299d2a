#include "report/roofline_model.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace oaprof::report {
namespace {

// The FLOP estimate assumes every active FPU cycle is a 4-lane multiply-add (2 operations a
// lane): an upper bound that the tooltip states. Source of the 2 FPUs × 4 lanes: method.md.
constexpr double kFlopsPerFpuCycle = 4 * 2;
constexpr double kBytesPerMessage = 64;  // one cache line per shader memory message

bool matches(const std::regex* re, const std::string& name) {
  return re == nullptr || std::regex_search(name, *re);
}

// Bytes a kernel_runner compute kernel moves: it reads its start values and writes its results,
// `global` vectors of `width` elements each (bench/catalogue.h's name grammar).
double compute_kernel_bytes(const RunnerResult& r) {
  const std::string& k = r.kernel;
  const double elem = k.find("_dp_") != std::string::npos ? 8 : 4;
  double width = 1;
  for (int w : {16, 8, 4, 2}) {
    if (k.ends_with(fmt::format("vect{}", w))) {
      width = w;
      break;
    }
  }
  return 2 * r.global * width * elem;
}

// One point and one table row per kernel (and variant): its best run, so a sweep's steps do not
// crowd the roofline; the steps themselves go to the sweeps.
void add_runner_kernel(const RunnerRun& run, const std::vector<const RunnerResult*>& rows,
                       RooflineModel& m) {
  const RunnerResult& r = **std::max_element(rows.begin(), rows.end(),
                                             [](auto* a, auto* b) { return a->rate < b->rate; });
  if (r.unit == "GFLOP/s" && r.rate > 0) {
    const double bytes = compute_kernel_bytes(r);
    m.points.push_back(
        {r.kernel, r.work / bytes, r.rate, false, false,
         fmt::format("{}: {:.4g} GFLOP/s, {:.4g} FLOP over {:.4g} bytes (kernel_runner, "
                     "known work), global {:g} local {:g}{}",
                     r.kernel, r.rate, r.work, bytes, r.global, r.local,
                     rows.size() > 1 ? ", the best of its sweep" : ""),
         ""});
  }
  KernelRow row;
  row.kernel = r.kernel;
  row.source = run.source;
  row.launches = rows.size();
  row.time_ns = r.median_ns;
  if (r.unit == "GFLOP/s") row.gflops = r.rate;
  if (r.unit == "GB/s") row.gbps = r.rate;
  m.kernels.push_back(std::move(row));
  if (r.kernel == "mad_vect4" || r.kernel == "load_store_vect4" || r.kernel == "pchase_bw") {
    m.ceilings.push_back({"measured " + r.kernel, run.device, r.rate, r.unit == "GFLOP/s", true});
  }
  if (rows.size() < 2) return;
  const bool same_local =
      std::all_of(rows.begin(), rows.end(), [&](auto* x) { return x->local == rows[0]->local; });
  Sweep sw{r.kernel, same_local ? "work-groups" : "work-items", r.unit, {}};
  for (const RunnerResult* x : rows) {
    const double v = same_local ? (x->local > 0 ? x->global / x->local : 0) : x->local;
    sw.points.push_back({v, x->rate, x->fills_hw_threads});
  }
  std::sort(sw.points.begin(), sw.points.end(), [](auto& a, auto& b) { return a.x < b.x; });
  m.sweeps.push_back(std::move(sw));
}

void add_runner(const RunnerRun& run, const std::regex* re, RooflineModel& m) {
  m.runs.push_back({run.source, "kernel_runner", run.device, false, {{"device", run.device}}});
  std::vector<std::pair<std::string, std::vector<const RunnerResult*>>> groups;  // in input order
  for (const RunnerResult& r : run.results) {
    if (!matches(re, r.kernel)) continue;
    const std::string key = r.kernel + "/" + r.variant;
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == key; });
    if (it == groups.end()) it = groups.insert(groups.end(), {key, {}});
    it->second.push_back(&r);
  }
  for (const auto& [key, rows] : groups) add_runner_kernel(run, rows, m);
}

std::optional<double> num(const OaprofLaunch& l, const std::string& key) {
  auto it = l.numbers.find(key);
  return it == l.numbers.end() ? std::nullopt : std::optional<double>(it->second);
}

// Bytes of one launch from the metric set's memory counters: GTI read/write throughput where the
// set has it (IGT's sets), else shader memory messages of a cache line each (the built-in set).
std::optional<double> launch_bytes(const OaprofLaunch& l, std::string& counters) {
  double gti = 0;
  bool any = false;
  for (const auto& [key, v] : l.numbers) {
    if (key.starts_with("Gti") && key.ends_with("_bytes") &&
        (key.find("Read") != std::string::npos || key.find("Write") != std::string::npos)) {
      gti += v;
      any = true;
      if (counters.find(key) == std::string::npos) counters += (counters.empty() ? "" : ", ") + key;
    }
  }
  if (any) return gti;
  if (auto msgs = num(l, "ShaderMemoryAccesses_messages")) {
    counters = "ShaderMemoryAccesses_messages × 64 B";
    return *msgs * kBytesPerMessage;
  }
  return std::nullopt;
}

std::optional<double> launch_flops(const OaprofLaunch& l, int eus) {
  const auto f0 = num(l, "Fpu0Active_percent"), f1 = num(l, "Fpu1Active_percent");
  const auto clocks = num(l, "GpuCoreClocks_cycles");
  if (!f0 || !f1 || !clocks || eus <= 0) return std::nullopt;
  return (*f0 + *f1) / 100 * *clocks * eus * kFlopsPerFpuCycle;
}

void add_flags(std::set<std::string>& into, const std::string& flags) {
  std::size_t pos = 0;
  while (pos <= flags.size()) {
    const std::size_t end = std::min(flags.find(';', pos), flags.size());
    if (end > pos) into.insert(flags.substr(pos, end - pos));
    pos = end + 1;
  }
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ";") + x;
  return out;
}

// The run's metadata, as the report's run table shows it.
RunMeta oaprof_meta(const OaprofRun& run) {
  RunMeta meta{run.source,
               "oaprof",
               run.device_detail.empty() ? run.device : run.device_detail,
               run.simulated(),
               {}};
  meta.fields = {
      {"device", run.device},
      {"device detail", run.device_detail},
      {"simulated", run.simulated() ? "yes: the figures are a model, not measurements" : "no"},
      {"platform", run.platform},
      {"access (driver path)", run.access},
      {"EUs", std::to_string(run.eus)},
      {"clocks",
       fmt::format("{:g}–{:g} MHz (start {})", run.min_freq_mhz, run.max_freq_mhz,
                   run.start_freq_mhz ? fmt::format("{:g} MHz", *run.start_freq_mhz) : "unknown")},
      {"energy source", run.energy_backend.empty() ? "none" : run.energy_backend},
      {"metric set", run.metric_set.empty() ? "none (raw counters)" : run.metric_set},
      {"mode", run.mode},
      {"oaprof", run.oaprof_version}};
  return meta;
}

// One kernel's launches of a run, summed.
struct KernelSums {
  std::size_t launches = 0;
  double time_ns = 0, flops = 0, bytes = 0, power_sum = 0;
  std::size_t power_n = 0;
  // --energy-model's figures of the launches without a measured power, and their GPU time.
  double model_j = 0, model_ns = 0;
  bool have_flops = true, have_bytes = true;
  std::string counters;
  std::set<std::string> flags;
};

std::map<std::string, KernelSums> sum_by_kernel(const OaprofRun& run, const std::regex* re) {
  std::map<std::string, KernelSums> by_kernel;
  for (const OaprofLaunch& l : run.launches) {
    if (!matches(re, l.kernel)) continue;
    KernelSums& a = by_kernel[l.kernel];
    ++a.launches;
    // The GPU time of the counters' own window, so that clocks and time come from the same
    // snapshots (the OpenCL kernel time is the table's, where the window is not there).
    a.time_ns += l.gpu_time_ns.value_or(l.kernel_ns.value_or(0));
    const auto f = launch_flops(l, run.eus);
    const auto b = launch_bytes(l, a.counters);
    a.have_flops = a.have_flops && f;
    a.have_bytes = a.have_bytes && b;
    a.flops += f.value_or(0);
    a.bytes += b.value_or(0);
    if (l.igpu_power_w) {
      a.power_sum += *l.igpu_power_w;
      ++a.power_n;
    } else if (l.energy_model_j && l.gpu_time_ns && *l.gpu_time_ns > 0) {
      a.model_j += *l.energy_model_j;  // over the counters' window, which gpu_time_ns measures
      a.model_ns += *l.gpu_time_ns;
    }
    add_flags(a.flags, l.flags);
  }
  return by_kernel;
}

KernelRow kernel_row(const OaprofRun& run, const std::string& kernel, KernelSums& a) {
  if (run.simulated()) a.flags.insert("simulated");
  KernelRow row;
  row.kernel = kernel;
  row.source = run.source;
  row.launches = a.launches;
  row.time_ns = a.time_ns;
  row.estimate = true;
  row.simulated = run.simulated();
  row.flags = join(a.flags);
  if (a.time_ns > 0 && a.have_flops) row.gflops = a.flops / a.time_ns;
  if (a.time_ns > 0 && a.have_bytes) row.gbps = a.bytes / a.time_ns;
  // Measured power wins; the energy model's stands in only where no launch was measured.
  if (a.power_n == 0 && a.model_ns > 0) {
    row.power_w = a.model_j / a.model_ns * 1e9;
    row.power_modelled = true;
  } else if (a.power_n > 0) {
    row.power_w = a.power_sum / static_cast<double>(a.power_n);
  }
  if (row.power_w) {
    row.energy_per_launch_j = *row.power_w * a.time_ns / static_cast<double>(a.launches) * 1e-9;
    if (row.gflops && *row.power_w > 0) row.gflops_per_w = *row.gflops / *row.power_w;
  }
  return row;
}

// The kernel's point on the roofline, with how its figures were estimated.
RooflinePoint estimate_point(const OaprofRun& run, const KernelRow& row, const KernelSums& a) {
  return RooflinePoint{row.kernel,
                       a.flops / a.bytes,
                       *row.gflops,
                       true,
                       run.simulated(),
                       fmt::format("{} (estimate{}): {:.4g} GFLOP/s from Fpu0Active_percent, "
                                   "Fpu1Active_percent, GpuCoreClocks_cycles and {} EUs (every "
                                   "active FPU cycle counted as a 4-lane MAD: an upper bound); "
                                   "{:.4g} GB/s from {}; {} launches",
                                   row.kernel, run.simulated() ? ", simulated device" : "",
                                   *row.gflops, run.eus, *row.gbps, a.counters, a.launches),
                       row.flags};
}

void add_oaprof(const OaprofRun& run, const std::regex* re, RooflineModel& m) {
  m.runs.push_back(oaprof_meta(run));
  m.any_simulated = m.any_simulated || run.simulated();
  for (auto& [kernel, a] : sum_by_kernel(run, re)) {
    KernelRow row = kernel_row(run, kernel, a);
    if (row.power_w) m.any_energy = true;
    if (row.power_modelled) m.any_modelled_energy = true;
    if (row.gflops && row.gbps && *row.gflops > 0 && *row.gbps > 0) {
      m.points.push_back(estimate_point(run, row, a));
    }
    m.kernels.push_back(std::move(row));
  }
}

// Kernels with power, placed by GFLOP/s per W; the ceilings are the best efficiencies seen.
void add_power_roofline(RooflineModel& m) {
  const KernelRow* best_flops = nullptr;
  const KernelRow* best_bytes = nullptr;
  auto gbps_per_w = [](const KernelRow& k) { return *k.gbps / *k.power_w; };
  for (const KernelRow& k : m.kernels) {
    if (!k.power_w || *k.power_w <= 0) continue;
    if (k.gflops_per_w && (!best_flops || *k.gflops_per_w > *best_flops->gflops_per_w))
      best_flops = &k;
    if (k.gbps && *k.gbps > 0 && (!best_bytes || gbps_per_w(k) > gbps_per_w(*best_bytes)))
      best_bytes = &k;
    if (!k.gflops_per_w || !k.gbps || *k.gbps <= 0 || *k.gflops_per_w <= 0) continue;
    m.power_points.push_back(
        {k.kernel, *k.gflops / *k.gbps, *k.gflops_per_w, k.estimate, k.simulated,
         fmt::format("{}: {:.4g} GFLOP/s per W ({:.4g} GFLOP/s at {:.4g} W{}){}", k.kernel,
                     *k.gflops_per_w, *k.gflops, *k.power_w,
                     k.power_modelled ? " modelled by the energy model, not measured" : "",
                     k.estimate ? ", an estimate from counters" : ""),
         k.flags, k.power_modelled});
  }
  if (best_flops) {
    m.power_ceilings.push_back({"best GFLOP/s per W: " + best_flops->kernel, "these inputs",
                                *best_flops->gflops_per_w, true, true});
  }
  if (best_bytes) {
    m.power_ceilings.push_back({"best GB/s per W: " + best_bytes->kernel, "these inputs",
                                gbps_per_w(*best_bytes), false, true});
  }
}

}  // namespace

RooflineModel build_roofline_model(const std::vector<RunInput>& inputs,
                                   const std::vector<TheoreticalPeaks>& peaks,
                                   const std::regex* kernels) {
  RooflineModel m;
  for (const TheoreticalPeaks& p : peaks) {
    auto add = [&](const char* what, double v, bool compute) {
      if (v > 0) m.ceilings.push_back({std::string("peak ") + what, p.device, v, compute, false});
    };
    add("MAD SP", p.mad_sp_gflops, true);
    add("ADD SP", p.add_sp_gflops, true);
    add("MAD DP", p.mad_dp_gflops, true);
    add("ADD DP", p.add_dp_gflops, true);
    add("L3", p.l3_gbps, false);
  }
  for (const RunInput& in : inputs) {
    if (const auto* o = std::get_if<OaprofRun>(&in)) add_oaprof(*o, kernels, m);
    if (const auto* r = std::get_if<RunnerRun>(&in)) add_runner(*r, kernels, m);
  }
  add_power_roofline(m);
  return m;
}

}  // namespace oaprof::report
