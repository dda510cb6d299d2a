// The cgroup lines below are written from the naming the kubelet and the runtimes document and
// use: the kubelet's pod cgroup "pod<UID>" under kubepods[/<qos>] and its systemd form, which
// writes the UID's '-' as '_' (pkg/kubelet/cm/pod_container_manager_linux.go and
// ConvertCgroupNameToSystemd in pkg/kubelet/cm/cgroup_manager_linux.go); containerd's systemd
// scope "cri-containerd-<id>.scope", CRI-O's "crio-<id>.scope" (and "crio-<id>" on cgroupfs),
// docker's "docker-<id>.scope" under system.slice and /docker/<id> on cgroupfs.
#include "daemon/pod_identity.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "base/ignore_result.h"
#include "tests/common/daemon_test_util.h"

namespace oaprof::daemon {
namespace {

const std::string kId = "4c9e1a2b3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8";
const std::string kPodUid = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const std::string kUidEscaped = "0a1b2c3d_4e5f_4a6b_8c7d_9e0f1a2b3c4d";
const PodIdentity kPod{kPodUid, kId};

TEST(PodIdentity, CgroupV2SystemdContainerd) {
  EXPECT_EQ(
      parse_pod_identity("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                         kUidEscaped + ".slice/cri-containerd-" + kId + ".scope\n"),
      kPod);
}

TEST(PodIdentity, CgroupV2SystemdGuaranteedPodHasNoQosSlice) {
  EXPECT_EQ(parse_pod_identity("0::/kubepods.slice/kubepods-pod" + kUidEscaped +
                               ".slice/cri-containerd-" + kId + ".scope\n"),
            kPod);
}

TEST(PodIdentity, CgroupV2SystemdCrio) {
  EXPECT_EQ(
      parse_pod_identity("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" +
                         kUidEscaped + ".slice/crio-" + kId + ".scope"),
      kPod);
}

TEST(PodIdentity, CgroupV1CgroupfsContainerdEveryController) {
  const std::string path = "/kubepods/burstable/pod" + kPodUid + "/" + kId;
  const std::string text = "12:pids:" + path + "\n11:memory:" + path + "\n10:cpu,cpuacct:" + path +
                           "\n1:name=systemd:" + path + "\n0::/\n";
  EXPECT_EQ(parse_pod_identity(text), kPod);
}

TEST(PodIdentity, CgroupV1CgroupfsGuaranteedAndCrio) {
  EXPECT_EQ(parse_pod_identity("4:memory:/kubepods/pod" + kPodUid + "/crio-" + kId + "\n"), kPod);
}

TEST(PodIdentity, CgroupV1SystemdDriver) {
  const std::string path = "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" +
                           kUidEscaped + ".slice/cri-containerd-" + kId + ".scope";
  EXPECT_EQ(parse_pod_identity("7:cpuset:" + path + "\n1:name=systemd:" + path + "\n"), kPod);
}

TEST(PodIdentity, SeenFromAnotherCgroupNamespace) {
  // oaprofd in a pod of its own sees another pod's cgroup from where their paths meet, e.g.
  // kubepods.slice for two pods of different QoS classes, or kubepods-burstable.slice.
  EXPECT_EQ(parse_pod_identity("0::/../../../kubepods-burstable.slice/kubepods-burstable-pod" +
                               kUidEscaped + ".slice/cri-containerd-" + kId + ".scope\n"),
            kPod);
  EXPECT_EQ(parse_pod_identity("0::/../../kubepods-burstable-pod" + kUidEscaped + ".slice/crio-" +
                               kId + ".scope\n"),
            kPod);
  EXPECT_EQ(parse_pod_identity("0::/../../pod" + kPodUid + "/" + kId + "\n"), kPod);
  // Where they meet at the root, the path names user.slice: a user's own cgroups stay unknown.
  EXPECT_EQ(parse_pod_identity("0::/../../../../user.slice/user-1000.slice/user@1000.service/"
                               "kubepods-pod" +
                               kUidEscaped + ".slice/crio-" + kId + ".scope\n"),
            PodIdentity{});
}

TEST(PodIdentity, CgroupsAContainerMadeBelowItsOwnKeepItsLabels) {
  EXPECT_EQ(parse_pod_identity("0::/kubepods/pod" + kPodUid + "/" + kId + "/init.scope\n"), kPod);
}

TEST(PodIdentity, DockerWithoutKubernetesGivesAContainerOnly) {
  const PodIdentity container{"", kId};
  EXPECT_EQ(parse_pod_identity("0::/system.slice/docker-" + kId + ".scope\n"), container);
  EXPECT_EQ(parse_pod_identity("9:devices:/docker/" + kId + "\n"), container);
}

TEST(PodIdentity, OrdinaryProcessesHaveNone) {
  EXPECT_EQ(parse_pod_identity("0::/user.slice/user-1000.slice/session-3.scope\n"), PodIdentity{});
  EXPECT_EQ(parse_pod_identity("0::/\n"), PodIdentity{});
  EXPECT_EQ(parse_pod_identity(""), PodIdentity{});
}

TEST(PodIdentity, ACgroupAUserDelegatedNamesNoPod) {
  // systemd delegates user@UID.service to its user, who may name cgroups there at will: only a
  // path from the root of the hierarchy counts.
  EXPECT_EQ(parse_pod_identity("0::/user.slice/user-1000.slice/user@1000.service/kubepods/pod" +
                               kPodUid + "/" + kId + "\n"),
            PodIdentity{});
}

// A static pod's UID is the kubelet's hash of its manifest, 32 hex digits without dashes
// (applyDefaults, pkg/kubelet/config/common.go), in its cgroup name as any pod's UID is (and so
// the same under systemd, having no '-' to escape).
TEST(PodIdentity, StaticPodsUidsAreTheKubeletsHash) {
  const std::string hash = "6f1b9c0e2d3a4b5c6d7e8f9012345678";
  const PodIdentity static_pod{hash, kId};
  EXPECT_EQ(
      parse_pod_identity("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                         hash + ".slice/cri-containerd-" + kId + ".scope\n"),
      static_pod);
  EXPECT_EQ(parse_pod_identity("0::/kubepods/pod" + hash + "/" + kId + "\n"), static_pod);
  EXPECT_EQ(parse_pod_identity("0::/kubepods/besteffort/pod" + hash + "/crio-" + kId + "\n"),
            static_pod);
  EXPECT_TRUE(is_pod_uid(hash));
  for (const std::string& bad :
       std::vector<std::string>{hash.substr(1), hash + "0", "6F1B9C0E2D3A4B5C6D7E8F9012345678",
                                "6f1b9c0e2d3a4b5c6d7e8f901234567g"}) {
    EXPECT_EQ(parse_pod_identity("0::/kubepods/pod" + bad + "/" + kId), PodIdentity{}) << bad;
    EXPECT_FALSE(is_pod_uid(bad)) << bad;
  }
}

TEST(PodIdentity, MalformedIdsAreRefused) {
  const std::string pod = "0::/kubepods/pod" + kPodUid + "/";
  EXPECT_EQ(parse_pod_identity(pod + kId.substr(1) + "\n"), PodIdentity{});        // 63 digits
  EXPECT_EQ(parse_pod_identity(pod + kId + "0\n"), PodIdentity{});                 // 65 digits
  EXPECT_EQ(parse_pod_identity(pod + "G" + kId.substr(1) + "\n"), PodIdentity{});  // not hex
  std::string upper = kId;
  upper[0] = 'C';
  EXPECT_EQ(parse_pod_identity(pod + upper + "\n"), PodIdentity{});
  // UIDs: the wrong separator for the driver, a group too long, label-breaking text.
  EXPECT_EQ(parse_pod_identity("0::/kubepods/pod" + kUidEscaped + "/" + kId), PodIdentity{});
  EXPECT_EQ(parse_pod_identity("0::/kubepods.slice/kubepods-pod" + kPodUid + ".slice/crio-" + kId +
                               ".scope"),
            PodIdentity{});
  EXPECT_EQ(parse_pod_identity("0::/kubepods/pod0a1b2c3d0-4e5f-4a6b-8c7d-9e0f1a2b3c4d/" + kId),
            PodIdentity{});
  EXPECT_EQ(parse_pod_identity("0::/kubepods/pod" + kPodUid + "\"}x/" + kId), PodIdentity{});
  EXPECT_EQ(parse_pod_identity("0::/kubepods/pod" + kPodUid), PodIdentity{});  // no container
  EXPECT_EQ(parse_pod_identity("0::/kubepods.slice/kubepods-pod" + kUidEscaped +
                               ".slice/crio-conmon-" + kId + ".scope"),
            PodIdentity{});  // CRI-O's monitor, not the container
  EXPECT_EQ(parse_pod_identity("x::/kubepods/pod" + kPodUid + "/" + kId), PodIdentity{});
}

TEST(PodIdentity, LinesThatDisagreeGiveNone) {
  const std::string other(64, 'a');
  EXPECT_EQ(parse_pod_identity("4:memory:/kubepods/pod" + kPodUid + "/" + kId +
                               "\n3:cpu:/kubepods/pod" + kPodUid + "/" + other + "\n"),
            PodIdentity{});
}

TEST(PodIdentity, ReadsThroughAFakeProc) {
  test_support::ScratchDir dir;
  ::mkdir((dir.path() / "4242").c_str(), 0755);
  std::ofstream(dir.path() / "4242" / "cgroup")
      << "0::/kubepods/pod" << kPodUid << "/" << kId << "\n";
  EXPECT_EQ(read_pod_identity(dir.path(), 4242), kPod);
  EXPECT_EQ(read_pod_identity(dir.path(), 4243), PodIdentity{});  // gone
  EXPECT_EQ(read_pod_identity(dir.path(), 0), PodIdentity{});     // not in oaprofd's pid namespace
}

// The pid-reuse race: a client connects, hands its socket on and exits, and its pid is given to
// a process in some pod before oaprofd reads /proc/PID/cgroup. Here the fake /proc says the pid
// is in a pod throughout (as the new owner's file would); the held process decides: labels while
// it runs, none once it has exited, reaped or not.
TEST(PodIdentity, AClientThatExitedBeforeTheReadNamesNoPod) {
  test_support::ScratchDir dir;
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[1]);
    char c;
    base::ignore_result(::read(pipe_fds[0], &c, 1));  // until the test closes the pipe
    ::_exit(0);
  }
  ::close(pipe_fds[0]);
  const auto process = PeerProcess::of_pid(child);
  ASSERT_NE(process, nullptr) << "pidfd_open is missing (Linux < 5.3)";
  const std::filesystem::path pid_dir = dir.path() / std::to_string(child);
  std::filesystem::create_directories(pid_dir);
  std::ofstream(pid_dir / "cgroup") << "0::/kubepods/pod" << kPodUid << "/" << kId << "\n";
  EXPECT_TRUE(process->running());
  EXPECT_EQ(read_pod_identity(dir.path(), child, process.get()), kPod);
  ::close(pipe_fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_FALSE(process->running());
  EXPECT_EQ(read_pod_identity(dir.path(), child, process.get()), PodIdentity{});
  EXPECT_EQ(read_pod_identity(dir.path(), child), kPod);  // what a pid alone would have said
}

TEST(PodIdentity, NeverFollowsALinkAtThePidOrTheFile) {
  test_support::ScratchDir dir;
  ::mkdir((dir.path() / "real").c_str(), 0755);
  std::ofstream(dir.path() / "real" / "cgroup")
      << "0::/kubepods/pod" << kPodUid << "/" << kId << "\n";
  std::filesystem::create_directory_symlink(dir.path() / "real", dir.path() / "7");
  ::mkdir((dir.path() / "8").c_str(), 0755);
  std::filesystem::create_symlink(dir.path() / "real" / "cgroup", dir.path() / "8" / "cgroup");
  EXPECT_EQ(read_pod_identity(dir.path(), 7), PodIdentity{});
  EXPECT_EQ(read_pod_identity(dir.path(), 8), PodIdentity{});
}

}  // namespace
}  // namespace oaprof::daemon
