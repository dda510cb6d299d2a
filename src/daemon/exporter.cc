#include "daemon/exporter.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>

#include <fmt/format.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "ipc/wire.h"
#include "oa/builtin_metric_set.h"
#include "oa/device_facts.h"
#include "oa/report_format.h"
#include "session/trusted_metrics.h"

namespace oaprof::daemon {
namespace {

namespace fs = std::filesystem;
namespace wire = ipc::wire;

// The DRM card and kernel driver of a PCI device, as sysfs names them ("card0", "i915");
// "sim" for the simulator, "" where sysfs does not say.
std::pair<std::string, std::string> card_and_driver(const fs::path& sysfs, const std::string& label,
                                                    bool simulated) {
  if (simulated) return {"sim", "sim"};
  const fs::path dev = sysfs / "bus/pci/devices" / label;
  std::error_code ec;
  std::string card, driver;
  for (const auto& e : fs::directory_iterator(dev / "drm", ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("card")) card = name;
  }
  const fs::path link = fs::read_symlink(dev / "driver", ec);
  if (!ec) driver = link.filename().string();
  return {card, driver};
}

// Parts xe drives have no built-in set (xe takes only a set with a UUID, and Xe2's PEC counters
// are assigned by the set): the exporter samples an IGT set from oaprofd's metric directories
// instead, through xe's observation stream, the only read-out xe allows: ComputeBasic on Xe2,
// RenderBasic on Gen12 and Xe-LPG (igt-xe's files for them hold RenderBasic and TestOa only).
std::string_view xe_exporter_set(const oa::Platform& platform) {
  return platform.gen == oa::Generation::kXe2 ? "ComputeBasic" : "RenderBasic";
}

// The set the daemon programmed for the exporter: the built-in one, or a file's set by name.
oa::MetricSet exporter_metric_set(const oa::Platform& platform, const wire::Opened& opened) {
  if (opened.metrics_file.empty()) return oa::builtin_metric_set(platform);
  const oa::MetricFile file = session::read_metric_file(opened.metrics_file);
  const oa::MetricSet* set = file.find(opened.metric_set);
  if (set == nullptr) {
    throw std::runtime_error(
        fmt::format("{} has no set {}", opened.metrics_file, opened.metric_set));
  }
  return *set;
}

// The first of `symbols` the set has and could compute: the built-in sets and IGT's Xe2 sets
// name the same figures differently (GpuBusy / GPU_BUSY, EuActive / XVE_ACTIVE).
std::optional<double> first_value(const oa::MetricSet& set,
                                  const std::vector<oa::EquationValue>& values,
                                  std::initializer_list<std::string_view> symbols) {
  for (std::string_view symbol : symbols) {
    const auto i = set.counter_index(symbol);
    if (!i || values[*i].div_by_zero) continue;
    return values[*i].is_float ? values[*i].f : static_cast<double>(values[*i].u);
  }
  return std::nullopt;
}

// civetweb's options: a request that does not arrive whole within kRequestTimeout (a scraper
// on this host sends it at once) frees its thread, no connection stays open between requests,
// and a flood waits in first-come order in civetweb's queue and then the kernel's backlog, sized
// so that a scraper's connection is queued behind it rather than refused.
std::vector<std::string> civetweb_options(const ListenAddress& listen) {
  return {"listening_ports",    listen.civetweb(),
          "num_threads",        std::to_string(Exporter::kHttpThreads),
          "request_timeout_ms", std::to_string(Exporter::kRequestTimeout.count()),
          "enable_keep_alive",  "no",
          "connection_queue",   std::to_string(Exporter::kHttpThreads),
          "listen_backlog",     "4096"};
}

}  // namespace

// What the exporter learned when it took the unit.
struct Exporter::OpenSession {
  oa::Platform platform;
  oa::ReportFormat format{};
  oa::MetricSet metrics;
  oa::DeviceVariables vars;
  double max_interval_ns = 0;
  std::optional<oa::Report> previous;
  std::optional<power::EnergyReading> previous_energy;
  bool energy = false;
};

struct Exporter::Metrics {
  explicit Metrics(prometheus::Registry& r)
      : info(prometheus::BuildGauge()
                 .Name("oaprof_info")
                 .Help("oaprof's version and the GPU it samples; always 1")
                 .Register(r)),
        sampling(prometheus::BuildGauge()
                     .Name("oaprof_exporter_sampling")
                     .Help("1 while the exporter holds the OA unit, 0 while a profiling session "
                           "holds it (the exporter's figures then stand still)")
                     .Register(r)
                     .Add({})),
        sessions(
            prometheus::BuildCounter()
                .Name("oaprof_profiling_sessions_total")
                .Help(
                    "Profiling sessions clients opened (each takes the OA unit from the exporter)")
                .Register(r)
                .Add({})),
        errors(prometheus::BuildCounter()
                   .Name("oaprof_scrape_errors_total")
                   .Help("Samples the exporter could not take (the device, the energy source)")
                   .Register(r)
                   .Add({})),
        gpu_time(prometheus::BuildCounter()
                     .Name("oaprof_gpu_time_seconds_total")
                     .Help("GPU time the exporter sampled, by the GPU's own timestamp")
                     .Register(r)
                     .Add({})),
        busy(prometheus::BuildGauge()
                 .Name("oaprof_gpu_busy_ratio")
                 .Help("Share of GPU clocks the GPU was busy, over the last sample period")
                 .Register(r)
                 .Add({})),
        frequency(prometheus::BuildGauge()
                      .Name("oaprof_gpu_frequency_hertz")
                      .Help("Average GPU core frequency over the last sample period")
                      .Register(r)
                      .Add({})),
        eu(prometheus::BuildGauge()
               .Name("oaprof_eu_ratio")
               .Help("Share of EU clocks by state (active, stall, idle), averaged over all EUs, "
                     "over the last sample period")
               .Register(r)),
        counters(prometheus::BuildCounter()
                     .Name("oaprof_oa_events_total")
                     .Help("Events an OA counter of the built-in set counted while the exporter "
                           "sampled (counter: A<n>, gpu_clocks)")
                     .Register(r)),
        builtin(prometheus::BuildGauge()
                    .Name("oaprof_builtin_metric")
                    .Help("Each metric of oaprof's built-in set over the last sample period, in "
                          "its own unit (label units)")
                    .Register(r)),
        energy(prometheus::BuildCounter()
                   .Name("oaprof_energy_joules_total")
                   .Help("RAPL energy per plane while the exporter sampled")
                   .Register(r)),
        igpu(prometheus::BuildGauge()
                 .Name("oaprof_igpu_power_watts")
                 .Help("iGPU power by each formula (label formula) over the last sample period")
                 .Register(r)),
        kernel_launches(prometheus::BuildCounter()
                            .Name("oaprof_kernel_launches_total")
                            .Help("Launches measured per kernel in the profiling sessions that "
                                  "ended, as their clients reported them; kernel=\"(private)\" "
                                  "sums those of clients that did not share kernel names")
                            .Register(r)),
        kernel_gpu(prometheus::BuildCounter()
                       .Name("oaprof_kernel_gpu_seconds_total")
                       .Help("GPU time per kernel in the profiling sessions that ended, as their "
                             "clients reported it")
                       .Register(r)),
        kernel_energy(prometheus::BuildCounter()
                          .Name("oaprof_kernel_energy_joules_total")
                          .Help("iGPU energy per kernel (each client's --igpu-power formula) in "
                                "the profiling sessions that ended, as their clients reported it")
                          .Register(r)) {}

  prometheus::Family<prometheus::Gauge>& info;
  prometheus::Gauge& sampling;
  prometheus::Counter& sessions;
  prometheus::Counter& errors;
  prometheus::Counter& gpu_time;
  prometheus::Gauge& busy;
  prometheus::Gauge& frequency;
  prometheus::Family<prometheus::Gauge>& eu;
  prometheus::Family<prometheus::Counter>& counters;
  prometheus::Family<prometheus::Gauge>& builtin;
  prometheus::Family<prometheus::Counter>& energy;
  prometheus::Family<prometheus::Gauge>& igpu;
  prometheus::Family<prometheus::Counter>& kernel_launches;
  prometheus::Family<prometheus::Counter>& kernel_gpu;
  prometheus::Family<prometheus::Counter>& kernel_energy;
  bool info_set = false;
};

Exporter::Exporter(DaemonService& service, ExporterOptions options)
    : service_(service),
      options_(std::move(options)),
      registry_(std::make_shared<prometheus::Registry>()),
      metrics_(std::make_unique<Metrics>(*registry_)) {
  service_.set_background_client(kExporterClient);
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(civetweb_options(options_.listen));
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("cannot serve metrics on {}: {}", options_.listen.civetweb(), e.what()));
  }
  exposer_->RegisterCollectable(registry_);
  if (options_.kubelet_pods) pods_ = std::make_unique<KubeletPods>(*options_.kubelet_pods);
}

Exporter::~Exporter() {
  exposer_.reset();  // no scrape reads the metrics while they go
  if (open_) service_.client_gone(kExporterClient);
}

int Exporter::port() const {
  const std::vector<int> ports = exposer_->GetListeningPorts();
  return ports.empty() ? -1 : ports.front();
}

std::chrono::milliseconds Exporter::period() const {
  if (safe_period_.count() <= 0) return options_.period;
  return std::min(options_.period, safe_period_);
}

void Exporter::error(const std::string& what) {
  metrics_->errors.Increment();
  if (what == last_error_) return;
  last_error_ = what;
  service_.log_line(4, "exporter: " + what);
}

void Exporter::let_go(const std::string& why) {
  open_.reset();
  service_.client_gone(kExporterClient);
  if (!why.empty()) error(why);
}

void Exporter::tick() {
  publish_summaries();
  // Counted by the service as they open: a session shorter than a period is counted too.
  if (const std::uint64_t opened = service_.client_sessions_opened(); opened > sessions_seen_) {
    metrics_->sessions.Increment(static_cast<double>(opened - sessions_seen_));
    sessions_seen_ = opened;
  }
  if (service_.session_open() && !service_.session_held_by(kExporterClient)) {
    // A profiling session took the unit (the service ended ours as it opened).
    open_.reset();
    metrics_->sampling.Set(0);
    return;
  }
  // A session that came and went since the last period ended ours too: take the unit afresh.
  if (open_ && !service_.session_held_by(kExporterClient)) open_.reset();
  if (!open_ && !take_unit()) return;
  metrics_->sampling.Set(1);
  read_unit();
}

bool Exporter::take_unit() {
  wire::Open request;
  request.pid = static_cast<std::uint32_t>(::getpid());
  request.metric_set = std::string(oa::kBuiltinMetricSetSymbol);
  const std::optional<oa::Platform> served = service_.served_platform();
  if (served && served->driver == oa::KernelDriver::kXe) {
    request.access = "perf";
    request.format = "auto";
    request.metric_set = std::string(xe_exporter_set(*served));
  }
  const wire::Body reply = service_.handle(kExporterClient, Peer{0, 0, ::getpid()}, request);
  if (const auto* e = std::get_if<wire::Error>(&reply)) {
    if (e->code != wire::ErrorCode::kBusy) error("cannot take the OA unit: " + e->message);
    return false;
  }
  const auto& opened = std::get<wire::Opened>(reply);
  try {
    oa::Platform platform =
        oa::apply_facts(oa::require_platform_for_pci_id(opened.pci_id), opened.facts);
    const oa::ReportFormat format = oa::parse_format(opened.format, platform.gen);
    open_ = std::make_unique<OpenSession>(OpenSession{
        platform, format, exporter_metric_set(platform, opened),
        oa::device_variables(platform, opened.facts),
        oa::max_safe_read_interval_ns(platform.max_freq_mhz, platform.eus, platform.timestamp_hz),
        std::nullopt, std::nullopt, !opened.energy_backend.empty()});
  } catch (const std::exception& e) {
    let_go(fmt::format("cannot sample {}: {}", opened.label, e.what()));
    return false;
  }
  safe_period_ = std::chrono::milliseconds(
      std::max<std::int64_t>(1, static_cast<std::int64_t>(open_->max_interval_ns / 2e6)));
  if (!metrics_->info_set) {
    const auto [card, driver] =
        card_and_driver(service_.sysfs_root(), opened.label, opened.simulated);
    metrics_->info
        .Add({{"version", OAPROF_VERSION},
              {"pci_bdf", opened.simulated ? std::string("sim") : opened.label},
              {"card", card},
              {"driver", driver},
              {"platform", std::string(open_->platform.metrics_file)},
              {"simulated", opened.simulated ? "true" : "false"},
              {"energy", opened.energy_backend.empty() ? "none" : opened.energy_backend},
              {"Hostname", options_.hostname}})
        .Set(1);
    metrics_->info_set = true;
  }
  if (options_.sim_busy && opened.simulated) {
    service_.handle(kExporterClient, Peer{0, 0, ::getpid()}, wire::Body{wire::Kernel{true}});
  }
  return true;
}

void Exporter::read_unit() {
  wire::Sample request;
  request.report_id = ++report_id_;
  request.what = wire::kSampleReport | (open_->energy ? wire::kSampleEnergy : 0);
  const wire::Body reply = service_.handle(kExporterClient, Peer{0, 0, ::getpid()}, request);
  if (const auto* e = std::get_if<wire::Error>(&reply)) {
    let_go("sampling failed: " + e->message);
    return;
  }
  const auto& sampled = std::get<wire::Sampled>(reply);
  try {
    if (sampled.report) {
      oa::Report report = oa::decode(open_->format, *sampled.report);
      if (open_->previous) {
        const oa::CounterDeltas d = oa::compute_deltas_checked(
            *open_->previous, report, open_->platform.timestamp_hz, open_->max_interval_ns);
        if (d.interval_too_long) {
          error("a sample came too late for exact counters; that period is left out");
        } else {
          publish_counters(d);
        }
      }
      open_->previous = report;
    }
    if (sampled.energy) {
      power::EnergyReading now{sampled.energy->time_ns, {}};
      for (const auto& [domain, uj] : sampled.energy->energy_uj) {
        now.energy_uj[static_cast<power::Domain>(domain)] = uj;
      }
      publish_energy(now);
    }
  } catch (const std::exception& e) {
    let_go(fmt::format("a sample could not be decoded: {}", e.what()));
  }
}

void Exporter::publish_counters(const oa::CounterDeltas& d) {
  last_error_.clear();  // sampling works again: the next error is news
  metrics_->gpu_time.Increment(oa::gpu_time_ns(d, open_->platform.timestamp_hz) / 1e9);
  if (d.has_gpu_ticks) {
    metrics_->counters.Add({{"counter", "gpu_clocks"}}).Increment(static_cast<double>(d.gpu_ticks));
  }
  for (std::size_t i = 0; i < d.a.size(); ++i) {
    if (!d.a_present[i]) continue;
    metrics_->counters.Add({{"counter", fmt::format("A{}", i)}})
        .Increment(static_cast<double>(d.a[i]));
  }
  const oa::MetricSet& set = open_->metrics;
  const std::vector<oa::EquationValue> values = set.evaluate(d, open_->vars);
  const auto value_of = [&](std::initializer_list<std::string_view> symbols) {
    return first_value(set, values, symbols);
  };
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].div_by_zero) continue;
    const oa::MetricCounter& c = set.counters()[i];
    metrics_->builtin.Add({{"symbol", c.symbol}, {"units", c.units}})
        .Set(values[i].is_float ? values[i].f : static_cast<double>(values[i].u));
  }
  // GPU_BUSY and GPU_TICKS come from one report but may differ by a clock: never above 1.
  if (auto busy = value_of({"GpuBusy", "GPU_BUSY"})) {
    metrics_->busy.Set(std::clamp(*busy / 100.0, 0.0, 1.0));
  }
  if (auto hz = value_of({"AvgGpuCoreFrequency"})) metrics_->frequency.Set(*hz);
  const auto active = value_of({"EuActive", "XVE_ACTIVE"}),
             stall = value_of({"EuStall", "XVE_STALL"});
  if (active && stall) {
    metrics_->eu.Add({{"state", "active"}}).Set(*active / 100.0);
    metrics_->eu.Add({{"state", "stall"}}).Set(*stall / 100.0);
    metrics_->eu.Add({{"state", "idle"}}).Set(std::max(0.0, 1.0 - (*active + *stall) / 100.0));
  }
}

std::string Exporter::kernel_label(uid_t uid, const std::string& pod_uid, const std::string& name) {
  std::string label;
  for (char c : name) label += (c >= 0x20 && c < 0x7F) ? c : '?';
  if (label.empty()) label = "?";
  if (kernel_labels_.contains(label)) return label;
  if (label == kOtherKernels || label == kPrivateKernels) return std::string(kOtherKernels);
  const auto mine = kernel_labels_by_uid_.find(uid);
  const auto pods = kernel_labels_by_pod_.find(pod_uid);
  if (kernel_labels_.size() >= kMaxKernelSeries ||
      (mine != kernel_labels_by_uid_.end() && mine->second >= kMaxKernelSeriesPerUid) ||
      (pods != kernel_labels_by_pod_.end() && pods->second >= kMaxKernelSeriesPerPod)) {
    return std::string(kOtherKernels);
  }
  kernel_labels_.insert(label);
  ++kernel_labels_by_uid_[uid];
  if (!pod_uid.empty()) ++kernel_labels_by_pod_[pod_uid];
  return label;
}

PodIdentity Exporter::pod_labels(const PodIdentity& pod) {
  std::pair<std::string, std::string> key{pod.pod_uid, pod.container_id};
  if (pod_labels_.contains(key)) return pod;
  if (pod_labels_.size() >= kMaxPodLabels) {
    return PodIdentity{std::string(kOtherPod), std::string(kOtherPod)};
  }
  pod_labels_.insert(std::move(key));
  return pod;
}

void Exporter::publish_summaries() {
  for (ClientSummary& s : service_.take_summaries()) {
    const std::uint64_t list = pods_ && !s.pod.pod_uid.empty() ? pods_->next_list() : 0;
    waiting_.push_back({std::move(s), list});
  }
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    PodName name;
    if (!ready(*it, name)) {
      ++it;
      continue;
    }
    publish(it->summary, name);
    it = waiting_.erase(it);
  }
}

bool Exporter::ready(const WaitingSummary& w, PodName& name) {
  if (!pods_ || w.summary.pod.pod_uid.empty()) return true;
  KubeletPods::Lookup found = pods_->find(w.summary.pod.pod_uid);
  if (found.name) {
    name = std::move(*found.name);
    return true;
  }
  return found.lists_done >= w.list || waiting_.size() > kMaxWaitingSummaries;
}

void Exporter::publish(const ClientSummary& s, const PodName& name) {
  const bool named = s.summary.share_names && options_.kernel_names;
  // Validated ids and names only (pod_identity.h, kubelet_pods.h): no client's text, and no
  // text of the pod list but a pod's namespace and name, reaches these labels.
  const PodIdentity pod = pod_labels(s.pod);
  const bool other = pod.pod_uid == kOtherPod;
  for (const ipc::wire::KernelSummary& k : s.summary.kernels) {
    const prometheus::Labels labels{{"kernel", named ? kernel_label(s.uid, s.pod.pod_uid, k.kernel)
                                                     : std::string(kPrivateKernels)},
                                    {"pod_uid", pod.pod_uid},
                                    {"container_id", pod.container_id},
                                    {"namespace", other ? std::string() : name.pod_namespace},
                                    {"pod", other ? std::string() : name.name}};
    metrics_->kernel_launches.Add(labels).Increment(static_cast<double>(k.launches));
    metrics_->kernel_gpu.Add(labels).Increment(static_cast<double>(k.gpu_ns) / 1e9);
    metrics_->kernel_energy.Add(labels).Increment(static_cast<double>(k.energy_uj) / 1e6);
  }
}

void Exporter::publish_energy(const power::EnergyReading& now) {
  if (open_->previous_energy && now.time_ns > open_->previous_energy->time_ns) {
    const power::EnergyReading& before = *open_->previous_energy;
    for (const auto& [domain, uj] : now.energy_uj) {
      auto it = before.energy_uj.find(domain);
      if (it == before.energy_uj.end() || uj < it->second) continue;  // a reset, not energy
      metrics_->energy.Add({{"plane", std::string(power::domain_name(domain))}})
          .Increment(static_cast<double>(uj - it->second) / 1e6);
    }
    const power::IgpuPower p = power::igpu_power(before, now);
    for (power::IgpuFormula f : power::kAllIgpuFormulas) {
      if (auto w = p.watts(f)) {
        metrics_->igpu.Add({{"formula", std::string(power::formula_name(f))}}).Set(*w);
      }
    }
  }
  open_->previous_energy = now;
}

}  // namespace oaprof::daemon
