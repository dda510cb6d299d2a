#include "daemon/pod_identity.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <optional>
#include <utility>
#include <vector>

// The socket option that gives a connected peer's pidfd: include/uapi/asm-generic/socket.h
// (added in Linux 6.5), for the architectures that take asm-generic's numbers
// (x86, arm64); absent from older libc headers.
#if !defined(SO_PEERPIDFD) && (defined(__x86_64__) || defined(__aarch64__) || defined(__i386__))
#define SO_PEERPIDFD 77
#endif

namespace oaprof::daemon {
namespace {

constexpr std::size_t kContainerIdDigits = 64;
constexpr std::size_t kStaticPodUidDigits = 32;
constexpr std::array<std::size_t, 5> kUuidGroups{8, 4, 4, 4, 12};
constexpr std::array<std::string_view, 2> kQosClasses{"burstable", "besteffort"};

bool is_lower_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return !s.empty();
}

std::optional<std::string> container_id(std::string_view s) {
  if (s.size() != kContainerIdDigits || !is_lower_hex(s)) return std::nullopt;
  return std::string(s);
}

// A pod UID with `separator` between its groups ('-' on cgroupfs, '_' where systemd escaped it),
// in the canonical dashed form; or a static pod's, 32 hex digits without groups, as it is.
std::optional<std::string> pod_uid(std::string_view s, char separator) {
  if (s.size() == kStaticPodUidDigits && is_lower_hex(s)) return std::string(s);
  std::string uid;
  for (std::size_t g = 0; g < kUuidGroups.size(); ++g) {
    if (g > 0) {
      if (s.empty() || s.front() != separator) return std::nullopt;
      s.remove_prefix(1);
      uid += '-';
    }
    const std::string_view group = s.substr(0, kUuidGroups[g]);
    if (group.size() != kUuidGroups[g] || !is_lower_hex(group)) return std::nullopt;
    uid += group;
    s.remove_prefix(group.size());
  }
  if (!s.empty()) return std::nullopt;
  return uid;
}

// `s` without `prefix` and `suffix`; nullopt unless it has both.
std::optional<std::string_view> between(std::string_view s, std::string_view prefix,
                                        std::string_view suffix) {
  if (s.size() < prefix.size() + suffix.size() || !s.starts_with(prefix) || !s.ends_with(suffix)) {
    return std::nullopt;
  }
  return s.substr(prefix.size(), s.size() - prefix.size() - suffix.size());
}

using Parts = std::vector<std::string_view>;

// The path's components without the leading "..", and whether it had any: a cgroup outside
// oaprofd's cgroup namespace (oaprofd in a pod of its own) is shown relative to that namespace's
// root, from an ancestor the path does not name.
std::pair<Parts, bool> components(std::string_view path) {
  Parts parts;
  bool relative = false;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (part == ".." && parts.empty()) {
      relative = true;
    } else if (!part.empty()) {
      parts.push_back(part);
    }
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return {parts, relative};
}

// The container id of a systemd scope "<runtime>-<id>.scope".
std::optional<std::string> scope_container_id(std::string_view scope) {
  for (std::string_view runtime : {"cri-containerd-", "crio-", "docker-"}) {
    if (auto id = between(scope, runtime, ".scope")) return container_id(*id);
  }
  return std::nullopt;
}

std::optional<PodIdentity> pod_and_container(std::optional<std::string> uid,
                                             std::optional<std::string> id) {
  if (!uid || !id) return std::nullopt;
  return PodIdentity{std::move(*uid), std::move(*id)};
}

// /kubepods[/<qos>]/pod<uid>/<id> or .../crio-<id>
std::optional<PodIdentity> from_cgroupfs(const Parts& p) {
  std::size_t i = 1;
  if (p.size() > i && (p[i] == kQosClasses[0] || p[i] == kQosClasses[1])) ++i;
  if (p.size() < i + 2) return std::nullopt;
  const auto uid = between(p[i], "pod", "");
  const std::string_view leaf = p[i + 1];
  const auto crio = between(leaf, "crio-", "");
  return pod_and_container(uid ? pod_uid(*uid, '-') : std::nullopt,
                           container_id(crio ? *crio : leaf));
}

// /kubepods.slice[/kubepods-<qos>.slice]/kubepods[-<qos>]-pod<uid>.slice/<runtime>-<id>.scope
std::optional<PodIdentity> from_systemd(const Parts& p) {
  std::size_t i = 1;
  std::string pod_prefix = "kubepods-pod";
  for (std::string_view qos : kQosClasses) {
    if (p.size() > i && p[i] == "kubepods-" + std::string(qos) + ".slice") {
      pod_prefix = "kubepods-" + std::string(qos) + "-pod";
      ++i;
      break;
    }
  }
  if (p.size() < i + 2) return std::nullopt;
  const auto uid = between(p[i], pod_prefix, ".slice");
  return pod_and_container(uid ? pod_uid(*uid, '_') : std::nullopt, scope_container_id(p[i + 1]));
}

// A container outside Kubernetes: /docker/<id> or /system.slice/docker-<id>.scope.
std::optional<PodIdentity> from_docker(const Parts& p) {
  if (p.size() < 2) return std::nullopt;
  const auto scope = between(p[1], "docker-", ".scope");
  auto id = p[0] == "docker" ? container_id(p[1]) : scope ? container_id(*scope) : std::nullopt;
  if (!id) return std::nullopt;
  return PodIdentity{{}, std::move(*id)};
}

std::optional<PodIdentity> from_absolute(const Parts& p) {
  if (p.empty()) return std::nullopt;
  if (p[0] == "kubepods") return from_cgroupfs(p);
  if (p[0] == "kubepods.slice") return from_systemd(p);
  if (p[0] == "docker" || p[0] == "system.slice") return from_docker(p);
  return std::nullopt;
}

// The cgroups the kubelet and docker create, from the root down, that a path relative to an
// unnamed ancestor may start below. The ancestor is where oaprofd's cgroup and the client's
// meet, so a path a user named under a cgroup delegated to them (under user.slice) cannot start
// below one of these.
const std::array<Parts, 8> kRootOwnedAncestors{{
    {"kubepods"},
    {"kubepods", "burstable"},
    {"kubepods", "besteffort"},
    {"kubepods.slice"},
    {"kubepods.slice", "kubepods-burstable.slice"},
    {"kubepods.slice", "kubepods-besteffort.slice"},
    {"docker"},
    {"system.slice"},
}};

std::optional<PodIdentity> from_path(std::string_view path) {
  if (!path.starts_with('/')) return std::nullopt;
  const auto [parts, relative] = components(path);
  if (!relative) return from_absolute(parts);
  for (const Parts& ancestor : kRootOwnedAncestors) {
    Parts whole = ancestor;
    whole.insert(whole.end(), parts.begin(), parts.end());
    if (auto identity = from_absolute(whole)) return identity;
  }
  return std::nullopt;
}

// The path of one line "hierarchy-ID:controllers:path"; nullopt for a line of another shape.
std::optional<std::string_view> line_path(std::string_view line) {
  const std::size_t first = line.find(':');
  if (first == std::string_view::npos || first == 0) return std::nullopt;
  for (char c : line.substr(0, first)) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  const std::size_t second = line.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  return line.substr(second + 1);
}

}  // namespace

bool is_pod_uid(std::string_view s) { return pod_uid(s, '-').has_value(); }

PodIdentity parse_pod_identity(std::string_view cgroup_text) {
  std::optional<PodIdentity> found;
  while (!cgroup_text.empty()) {
    const std::size_t nl = cgroup_text.find('\n');
    const std::string_view line = cgroup_text.substr(0, nl);
    cgroup_text.remove_prefix(nl == std::string_view::npos ? cgroup_text.size() : nl + 1);
    const auto path = line_path(line);
    const auto identity = path ? from_path(*path) : std::nullopt;
    if (!identity) continue;
    if (found && *found != *identity) return {};  // one process, two containers: trust neither
    found = identity;
  }
  return found.value_or(PodIdentity{});
}

std::shared_ptr<const PeerProcess> PeerProcess::of_socket(int fd, pid_t pid) {
#ifdef SO_PEERPIDFD
  int pidfd = -1;
  socklen_t len = sizeof pidfd;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 && pidfd >= 0) {
    return std::make_shared<const PeerProcess>(pidfd);
  }
#else
  (void)fd;
#endif
  return of_pid(pid);
}

std::shared_ptr<const PeerProcess> PeerProcess::of_pid(pid_t pid) {
  if (pid <= 0) return nullptr;
  const long pidfd = ::syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) return nullptr;
  ::fcntl(static_cast<int>(pidfd), F_SETFD, FD_CLOEXEC);  // pidfd_open sets it; say so anyway
  return std::make_shared<const PeerProcess>(static_cast<int>(pidfd));
}

PeerProcess::~PeerProcess() { ::close(pidfd_); }

bool PeerProcess::running() const {
  pollfd p{pidfd_, POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;
}

PodIdentity read_pod_identity(const std::filesystem::path& proc_root, pid_t pid,
                              const PeerProcess* process) {
  if (pid <= 0) return {};
  const int root = ::open(proc_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return {};
  const std::string pid_name = std::to_string(pid);
  const int dir = ::openat(root, pid_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  ::close(root);
  if (dir < 0) return {};
  const int fd = ::openat(dir, "cgroup", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  ::close(dir);
  if (fd < 0) return {};
  std::string text(kMaxCgroupFileBytes, '\0');
  std::size_t have = 0;
  while (have < text.size()) {
    const ssize_t n = ::read(fd, text.data() + have, text.size() - have);
    if (n <= 0) break;
    have += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(have);
  if (process != nullptr && !process->running()) return {};  // the pid may be another's now
  return parse_pod_identity(text);
}

}  // namespace oaprof::daemon
