// The namespace and name of each pod on this node, from the kubelet's pod list (its read-only
// /pods endpoint, or a file in the same format), for the exporter's `namespace` and `pod` labels
// beside pod_uid. The list is fetched on a thread of its own, only when a pod it does not name
// is looked up and no sooner than min_interval after the last fetch, so a slow or dead kubelet
// never holds up oaprofd's loop or a scrape: its pods are simply without the two labels. The
// list is hostile input (anyone who can answer on its address writes it): it is read up to
// kMaxPodListBytes, and only entries whose uid, namespace and name have the shapes Kubernetes
// gives them are kept (kMaxPods at most), so no other text becomes a label.
//
// Format: a v1 PodList, {"items": [{"metadata": {"uid", "namespace", "name"}}, ...]}; the
// kubelet's /pods answers with it (pkg/kubelet/server/server.go, getPods). Static pods appear
// under the UID the kubelet gave them (the hash of their manifest, 32 hex digits), as in their
// cgroup (pod_identity.h).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace oaprof::daemon {

struct PodName {
  std::string pod_namespace;  // a DNS-1123 label
  std::string name;           // a DNS-1123 subdomain
  bool operator==(const PodName&) const = default;
};

using PodNames = std::map<std::string, PodName>;  // by pod UID, as pod_identity.h writes it

inline constexpr std::size_t kMaxPodListBytes = 16 * 1024 * 1024;
inline constexpr std::size_t kMaxPods = 1024;  // the kubelet runs 110 by default, 250 advised

// The pods `json` names: nullopt when it is not JSON of the shape above; entries whose fields do
// not have Kubernetes' shapes are left out, and so is a uid named twice with different names.
// Nesting deeper than the format needs is not built. No I/O; never throws.
std::optional<PodNames> parse_pod_list(std::string_view json);

struct KubeletPodsOptions {
  // http://IP:PORT/PATH (a numeric address: no name is looked up; plain HTTP, as the kubelet's
  // read-only port serves) or the absolute path of a file.
  std::string source;
  std::chrono::milliseconds min_interval{10'000};  // between the starts of two fetches
  std::chrono::milliseconds timeout{2'000};        // for one fetch over HTTP, connect to end
  // One line per failure that is news (the first after a success); level 4 (warning).
  std::function<void(int level, const std::string& line)> log;
};

// Whether `source` is one KubeletPodsOptions::source takes; the reason when not.
std::optional<std::string> kubelet_pods_source_error(std::string_view source);

// The body `source` gives (bounded by kMaxPodListBytes); throws std::runtime_error saying what
// failed.
std::string fetch_pod_list(const std::string& source, std::chrono::milliseconds timeout);

class KubeletPods {
 public:
  // Starts the fetching thread; fetches nothing until a lookup asks.
  explicit KubeletPods(KubeletPodsOptions options);
  ~KubeletPods();
  KubeletPods(const KubeletPods&) = delete;
  KubeletPods& operator=(const KubeletPods&) = delete;

  // What the latest list says of `pod_uid`, and how many lists had come when it was read (one
  // answer, so that a list that comes between the two cannot be counted without being read).
  // When it does not name the pod, a new list is asked for.
  struct Lookup {
    std::optional<PodName> name;
    std::uint64_t lists_done = 0;
  };
  Lookup find(const std::string& pod_uid);
  // A number that Lookup::lists_done reaches once a list fetched after this call has come (or
  // its fetch failed): a caller that must not wait forever compares the two.
  std::uint64_t next_list();

 private:
  void fetch_loop();
  void fetch_once();

  KubeletPodsOptions options_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  PodNames pods_;
  bool wanted_ = false;
  bool stopping_ = false;
  bool failing_ = false;                  // the last fetch failed (its failure was logged)
  std::uint64_t started_ = 0, done_ = 0;  // fetches started and ended
  std::thread thread_;
};

}  // namespace oaprof::daemon
