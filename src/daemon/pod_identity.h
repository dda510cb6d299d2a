// Which Kubernetes pod and container a client of oaprofd runs in, from the cgroup its process is
// in (/proc/PID/cgroup), for the exporter's per-pod labels. The cgroup path is named by the
// kubelet and the container runtime, in directories only root may create, so a client cannot
// choose it; the parser still accepts only the exact shapes below (a 64-digit hex container id,
// a UUID pod uid, or a static pod's 32 hex digits) and returns nothing for anything else, so no
// other text becomes a label.
//
// Shapes, per line `hierarchy-ID:controllers:path` (cgroup v1; `0::path` on v2), after any
// leading `/..` (oaprofd in a cgroup namespace of its own, as in a pod, sees other cgroups so):
//   cgroupfs driver  /kubepods[/burstable|/besteffort]/pod<uid>/<id> (containerd, cri-dockerd)
//                    .../pod<uid>/crio-<id> (CRI-O)
//   systemd driver   /kubepods.slice[/kubepods-<qos>.slice]/kubepods[-<qos>]-pod<uid, '-' as
//                    '_'>.slice/{cri-containerd,crio,docker}-<id>.scope
//   docker alone     /docker/<id>, /system.slice/docker-<id>.scope (container id, no pod)
// Sources: the kubelet's pod cgroup name ("pod" + UID, pkg/kubelet/cm/pod_container_manager_
// linux.go) and its systemd conversion, which writes '-' as '_' because systemd reads '-' as a
// step in the slice hierarchy (ConvertCgroupNameToSystemd, pkg/kubelet/cm/cgroup_manager_linux.go,
// kubernetes 00ac878e); containerd's "cri-containerd" systemd prefix and CRI-O's "crio" scope
// prefix; docker's "docker-<id>.scope" under system.slice (moby's systemd cgroup driver).
// Static pods (from manifest files on the node) have no UID from the API server: the kubelet
// gives each the MD5 of its object, node and file as 32 lowercase hex digits without dashes
// (applyDefaults, pkg/kubelet/config/common.go), and names its cgroup "pod" + that UID like any
// other's (GetPodCgroupNameSuffix, pkg/kubelet/cm/cgroup_manager_linux.go; podCgroupNamePrefix).
// Levels below the container's own cgroup (a container that made cgroups of its own) are allowed:
// they cannot move it out of the cgroups above, which decide the labels.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace oaprof::daemon {

// Both empty when the process is in no pod or container the parser knows; container_id alone
// for a container outside Kubernetes.
struct PodIdentity {
  std::string pod_uid;       // 8-4-4-4-12 lowercase hex digits, or 32 for a static pod (is_pod_uid)
  std::string container_id;  // 64 lowercase hex digits
  bool operator==(const PodIdentity&) const = default;
};

// Whether `s` is a pod UID as this file writes them: 8-4-4-4-12 lowercase hex digits (the API
// server's UUIDs), or 32 lowercase hex digits (a static pod's, which the kubelet names by its
// manifest's hash).
bool is_pod_uid(std::string_view s);

// The identity /proc/PID/cgroup's text names. Every line that names one must name the same one
// (they do: a process is in one container); lines that disagree give none. No I/O.
PodIdentity parse_pod_identity(std::string_view cgroup_text);

// A client's process, held by a pidfd from the moment oaprofd accepted its connection. A pid
// alone names whichever process has it now: a client that connects, hands its socket to a child
// and exits leaves its pid free for another process, perhaps in another pod, before oaprofd
// reads /proc/PID/cgroup. Holding the process keeps its pid from being given to another while it
// runs, so a read of /proc/PID that the process outlived was of that process.
class PeerProcess {
 public:
  // The process at the other end of the connected socket `fd`: the kernel's own reference
  // (SO_PEERPIDFD, Linux 6.5), else the process that has `pid` now (pidfd_open, Linux 5.3: as
  // good as the pid was at accept). Null where neither is available.
  static std::shared_ptr<const PeerProcess> of_socket(int fd, pid_t pid);
  // The process that has `pid` now (pidfd_open); null where it cannot be held.
  static std::shared_ptr<const PeerProcess> of_pid(pid_t pid);
  explicit PeerProcess(int pidfd) : pidfd_(pidfd) {}
  ~PeerProcess();
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;
  // False once the process has exited (the pidfd polls readable), reaped or not.
  bool running() const;

 private:
  int pidfd_;
};

// Reads `proc_root`/PID/cgroup (at most kMaxCgroupFileBytes) without following a symbolic link
// at the pid's directory or the file, and parses it; none when the file cannot be read (the
// process has gone, or oaprofd cannot see its pid: pid 0 from SO_PEERCRED), and none when
// `process` (the client's, when held) had exited by the end of the read: the file may then have
// been another process's that was given the pid.
inline constexpr std::size_t kMaxCgroupFileBytes = 64 * 1024;
PodIdentity read_pod_identity(const std::filesystem::path& proc_root, pid_t pid,
                              const PeerProcess* process = nullptr);

}  // namespace oaprof::daemon
