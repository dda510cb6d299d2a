// oaprofd as a Prometheus exporter (--metrics-listen): while no profiling session holds the OA
// unit, oaprofd samples the whole GPU itself (a session of its own, taken through the same
// DaemonService as any client's, so the lock, journal and energy policy apply), and serves what
// it measured as Prometheus text on /metrics with Debian's prometheus-cpp. A client's session
// takes the unit from the exporter at once; the exporter resumes when the unit is free again.
// tick() runs on oaprofd's loop, so the service is only ever used from one thread; the HTTP
// server (civetweb, inside prometheus-cpp) only reads the metric values. docs/exporter.md lists
// every metric and what a scrape can learn.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/daemon_service.h"
#include "daemon/kubelet_pods.h"
#include "daemon/listen_address.h"
#include "oa/delta.h"
#include "oa/metric_set.h"
#include "oa/platform.h"
#include "oa/report.h"
#include "power/energy_source.h"

namespace prometheus {
class Counter;
class Exposer;
class Gauge;
template <typename T>
class Family;
class Registry;
}  // namespace prometheus

namespace oaprof::daemon {

// The connection number the exporter's own session uses with the DaemonService: never a
// socket's (Oaprofd numbers its clients from 1 upwards).
inline constexpr std::uint64_t kExporterClient = ~std::uint64_t{0};

struct ExporterOptions {
  ListenAddress listen;
  std::chrono::milliseconds period{1000};  // how often the exporter samples (tick)
  std::string hostname;                    // the Hostname label
  // --device sim only: the exporter's session tells the simulated GPU a kernel runs, so that its
  // counters and simulated power move (tests check the exported values against the model).
  bool sim_busy = false;
  // oaprofd --kernel-names: whether the kernel names a client chose to share (oaprof
  // --share-kernel-names) get series of their own (opt-in, the default); false counts every
  // client's figures under Exporter::kPrivateKernels alone (off).
  bool kernel_names = true;
  // oaprofd --kubelet-pods: where the node's pod list is, for the per-kernel series' namespace
  // and pod labels (kubelet_pods.h); without it both labels are empty.
  std::optional<KubeletPodsOptions> kubelet_pods;
};

class Exporter {
 public:
  // Every local user can read the page, so a client's kernel names appear on it only when the
  // client shared them (wire::Summary::share_names) and oaprofd allows it; the figures of every
  // other client count towards one series without names, kPrivateKernels. Shared names get at
  // most kMaxKernelSeries series, at most kMaxKernelSeriesPerUid of them for one uid (one
  // summary's worth), so that neither a client nor one member of the group can take them all;
  // names past either bound count under kOtherKernels. A pod's names (all its containers', all
  // uids') are bounded as one uid's are, kMaxKernelSeriesPerPod.
  static constexpr std::size_t kMaxKernelSeries = 64;
  static constexpr std::size_t kMaxKernelSeriesPerUid = 16;
  static constexpr std::size_t kMaxKernelSeriesPerPod = 16;
  // Per-kernel series are also labelled with the client's pod_uid and container_id (empty
  // outside a pod or container, pod_identity.h): the first kMaxPodLabels distinct pairs for the
  // daemon's life get theirs, later ones count under kOtherPod in both labels. So the per-kernel
  // families hold at most (kMaxKernelSeries + 2) x (kMaxPodLabels + 2) series each.
  // With a pod list, they also get the pod's namespace and pod (its name), empty for a pod the
  // list does not name and under kOtherPod: each pod_uid has one of each, so the bound holds
  // (twice over at most, for a pod first published before the list named it).
  // A summary of a pod the list does not name waits, for at most kMaxWaitingSummaries, until a
  // list fetched after it arrived has come (or failed to), so that a new pod's first series
  // already carry its name.
  static constexpr std::size_t kMaxPodLabels = 64;
  static constexpr std::size_t kMaxWaitingSummaries = 64;
  static constexpr std::string_view kOtherPod = "other";
  static constexpr std::string_view kPrivateKernels = "(private)";
  static constexpr std::string_view kOtherKernels = "other";
  // The HTTP server's bounds against a local user who holds connections open (civetweb gives
  // each connection a thread of its own until it is served): threads, and the longest one
  // connection may take to send its request or read the reply. Any user can reach a loopback
  // page, so these set how fast the page drains a flood: kHttpThreads / kRequestTimeout
  // connections a second (docs/exporter.md, Security).
  static constexpr int kHttpThreads = 32;
  static constexpr std::chrono::milliseconds kRequestTimeout{250};

  // Starts serving at once. Throws std::runtime_error when the address cannot be bound.
  Exporter(DaemonService& service, ExporterOptions options);
  ~Exporter();
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  // One sampling step: take the unit if it is free, read it, publish. Never throws: a failure is
  // counted in oaprof_scrape_errors_total and logged through the service's log.
  void tick();
  // How long oaprofd waits between ticks: the option, or less where a counter of the device
  // could wrap twice in that time.
  std::chrono::milliseconds period() const;
  // The port actually bound (for port 0).
  int port() const;
  // Whether the exporter holds the OA unit now.
  bool sampling() const { return open_ != nullptr; }

 private:
  struct OpenSession;
  struct Metrics;
  bool take_unit();
  void read_unit();
  void publish_counters(const oa::CounterDeltas& d);
  void publish_energy(const power::EnergyReading& now);
  // A client's summary waiting for a pod list fetched after `list` (KubeletPods::next_list).
  struct WaitingSummary {
    ClientSummary summary;
    std::uint64_t list = 0;
  };
  void publish_summaries();
  // Whether `w` may be published now, with its pod's name (when the list names it) in `name`.
  bool ready(const WaitingSummary& w, PodName& name);
  void publish(const ClientSummary& s, const PodName& name);
  // The kernel label a name `uid` in pod `pod_uid` shared gets: printable ASCII, and
  // kOtherKernels once kMaxKernelSeries names, or kMaxKernelSeriesPerUid of this uid's, or
  // kMaxKernelSeriesPerPod of this pod's, have their own series.
  std::string kernel_label(uid_t uid, const std::string& pod_uid, const std::string& name);
  // The pod_uid and container_id labels of `pod`: its own, or kOtherPod past kMaxPodLabels.
  PodIdentity pod_labels(const PodIdentity& pod);
  void let_go(const std::string& why);
  // Counts a scrape error; logs it unless it repeats the last one logged (a unit that cannot be
  // taken fails the same way every period, and the journal needs it once).
  void error(const std::string& what);

  DaemonService& service_;
  ExporterOptions options_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::unique_ptr<OpenSession> open_;  // declared after the metrics it fills
  std::uint32_t report_id_ = 0;
  std::uint64_t sessions_seen_ = 0;           // the service's client sessions already counted
  std::chrono::milliseconds safe_period_{0};  // 0 until a session says how fast counters wrap
  std::set<std::string> kernel_labels_;       // kernel names with series of their own
  std::map<uid_t, std::size_t> kernel_labels_by_uid_;         // how many of them each uid added
  std::map<std::string, std::size_t> kernel_labels_by_pod_;   // and each pod (by its uid)
  std::set<std::pair<std::string, std::string>> pod_labels_;  // (pod_uid, container_id) shown
  std::string last_error_;               // the last error logged; cleared once a period is sampled
  std::unique_ptr<KubeletPods> pods_;    // with options_.kubelet_pods
  std::vector<WaitingSummary> waiting_;  // in the order they came
};

}  // namespace oaprof::daemon
