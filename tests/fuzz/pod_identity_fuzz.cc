// Fuzzes the parsing of /proc/PID/cgroup into a pod and container (daemon/pod_identity.h), whose
// results become Prometheus labels. Whatever the bytes, a result is either empty or exactly the
// shapes a label may take: a UUID of lowercase hex digits or a static pod's 32, 64 lowercase hex
// digits; a pod never
// comes without its container; and the bytes must have named it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/pod_identity.h"

namespace {

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

bool is_container_id(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!is_lower_hex(c)) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const oaprof::daemon::PodIdentity id = oaprof::daemon::parse_pod_identity(text);
  if (!id.container_id.empty()) {
    if (!is_container_id(id.container_id)) std::abort();
    if (text.find(id.container_id) == std::string_view::npos) std::abort();
  }
  if (!id.pod_uid.empty()) {
    if (!oaprof::daemon::is_pod_uid(id.pod_uid) || id.container_id.empty()) std::abort();
    std::string escaped = id.pod_uid;
    for (char& c : escaped) c = c == '-' ? '_' : c;
    if (text.find(id.pod_uid) == std::string_view::npos &&
        text.find(escaped) == std::string_view::npos) {
      std::abort();
    }
  }
  return 0;
}
