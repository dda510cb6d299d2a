// Fuzzes the parsing of the kubelet's pod list (daemon/kubelet_pods.h), which anyone who can
// answer on its address writes and whose fields become Prometheus labels. Whatever the bytes:
// no crash, at most kMaxPods pods, and each a pod UID in one of its two shapes with a namespace
// and name of lowercase letters, digits, '-' and '.', that the bytes named.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/kubelet_pods.h"
#include "daemon/pod_identity.h"

namespace {

bool is_label_text(const std::string& s, std::size_t max_chars) {
  if (s.empty() || s.size() > max_chars) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto pods = oaprof::daemon::parse_pod_list(text);
  if (!pods) return 0;
  if (pods->size() > oaprof::daemon::kMaxPods) std::abort();
  for (const auto& [uid, name] : *pods) {
    if (!oaprof::daemon::is_pod_uid(uid) || text.find(uid) == std::string_view::npos) std::abort();
    if (!is_label_text(name.pod_namespace, 63) || name.pod_namespace.find('.') != std::string::npos)
      std::abort();
    if (!is_label_text(name.name, 253)) std::abort();
  }
  return 0;
}
