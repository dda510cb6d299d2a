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

// Reads `proc_root`/PID/cgroup (at most kMaxCgroupFileBytes) without following a symbolic link
// at the pid's directory or the file, and parses it; none when the file cannot be read (the
// process has gone, or oaprofd cannot see its pid: pid 0 from SO_PEERCRED).
inline constexpr std::size_t kMaxCgroupFileBytes = 64 * 1024;
PodIdentity read_pod_identity(const std::filesystem::path& proc_root, pid_t pid);

}  // namespace oaprof::daemon
