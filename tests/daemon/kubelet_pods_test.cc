// The kubelet's pod list (daemon/kubelet_pods.h): what the parser keeps of a list (and of hostile
// ones), and the fetcher against a file and a fake kubelet on loopback: a list that names the
// pod gives its namespace and name, a dead or lying kubelet gives none and is logged once, and
// lookups of a pod it does not list cannot make oaprofd ask it again and again.
#include "daemon/kubelet_pods.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "tests/common/daemon_test_util.h"

namespace oaprof::daemon {
namespace {

using ::testing::HasSubstr;

const std::string kUid = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const std::string kStaticUid = "6f1b9c0e2d3a4b5c6d7e8f9012345678";

std::string pod_item(const std::string& uid, const std::string& ns, const std::string& name) {
  return fmt::format(
      R"({{"metadata":{{"name":"{}","namespace":"{}","uid":"{}","labels":{{"a":"b"}}}},)"
      R"("spec":{{"containers":[{{"name":"c","image":"x"}}]}},"status":{{"phase":"Running"}}}})",
      name, ns, uid);
}

std::string pod_list(const std::vector<std::string>& items) {
  std::string json = R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i) json += (i ? "," : "") + items[i];
  return json + "]}";
}

TEST(PodListTest, KeepsEachPodsNamespaceAndNameByUid) {
  const auto pods = parse_pod_list(pod_list({pod_item(kUid, "team-a", "trainer-0"),
                                             pod_item(kStaticUid, "kube-system", "etcd-node1.x")}));
  ASSERT_TRUE(pods);
  EXPECT_EQ(pods->size(), 2u);
  EXPECT_EQ(pods->at(kUid), (PodName{"team-a", "trainer-0"}));
  EXPECT_EQ(pods->at(kStaticUid), (PodName{"kube-system", "etcd-node1.x"}));
}

// Only Kubernetes' shapes become labels: anything else a hostile list sends is left out.
TEST(PodListTest, LeavesOutEntriesWhoseFieldsKubernetesWouldNotWrite) {
  const std::string other = "1a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
  const auto pods = parse_pod_list(pod_list({
      pod_item("not-a-uid", "team-a", "p"),
      pod_item(kUid, "Team-A", "p"),                // upper case
      pod_item(kUid, "team-a", "p\\n# HELP fake"),  // a newline, a space
      pod_item(kUid, std::string(64, 'a'), "p"),    // a namespace too long
      pod_item(kUid, "team-a", "-p"),               // not starting alphanumeric
      pod_item(kUid, "team-a", "p..q"),             // an empty part
      pod_item(kUid, "team-a", "p\\\"} 1\\n"),      // a quote
      R"({"metadata":{"uid":")" + kUid + R"(","namespace":7,"name":"p"}})",  // not a string
      R"({"metadata":[1,2,3]})",
      "42",
      pod_item(other, "ok", "fine"),
  }));
  ASSERT_TRUE(pods);
  EXPECT_EQ(pods->size(), 1u);
  EXPECT_EQ(pods->at(other), (PodName{"ok", "fine"}));
}

TEST(PodListTest, AUidNamedTwiceWithDifferentNamesIsTrustedForNeither) {
  const auto pods = parse_pod_list(
      pod_list({pod_item(kUid, "team-a", "p"), pod_item(kUid, "team-b", "p"),
                pod_item(kStaticUid, "x", "same"), pod_item(kStaticUid, "x", "same")}));
  ASSERT_TRUE(pods);
  EXPECT_FALSE(pods->contains(kUid));
  EXPECT_TRUE(pods->contains(kStaticUid));
}

TEST(PodListTest, WhatIsNotAPodListIsNone) {
  for (const std::string& bad :
       std::vector<std::string>{"", "null", "[]", "{\"items\":{}}", "{\"items\":[", "<html>",
                                std::string(kMaxPodListBytes + 1, ' ')}) {
    EXPECT_FALSE(parse_pod_list(bad)) << bad.substr(0, 20);
  }
  EXPECT_EQ(parse_pod_list("{\"items\":[]}")->size(), 0u);
}

// Nesting a million deep is parsed without recursion and not built: the pod beside it is kept.
TEST(PodListTest, DeepNestingIsNeitherBuiltNorFatal) {
  const std::size_t depth = 1'000'000;
  const std::string deep = std::string(depth, '[') + std::string(depth, ']');
  const auto pods = parse_pod_list(R"({"items":[{"metadata":{"uid":")" + kUid +
                                   R"(","namespace":"n","name":"p","x":)" + deep + "}}]}");
  ASSERT_TRUE(pods);
  EXPECT_EQ(pods->at(kUid), (PodName{"n", "p"}));
}

TEST(PodListTest, KeepsAtMostKMaxPods) {
  std::vector<std::string> items;
  for (std::size_t i = 0; i < kMaxPods + 10; ++i) {
    items.push_back(pod_item(fmt::format("{:032x}", i), "n", fmt::format("p{}", i)));
  }
  EXPECT_EQ(parse_pod_list(pod_list(items))->size(), kMaxPods);
}

TEST(KubeletPodsSourceTest, TakesNumericHttpUrlsAndAbsolutePathsOnly) {
  for (const char* good : {"http://10.0.0.5:10255/pods", "http://[::1]:10255/pods", "/etc/pods"}) {
    EXPECT_FALSE(kubelet_pods_source_error(good)) << good;
  }
  for (const char* bad : {"https://10.0.0.5:10250/pods", "http://kubelet:10255/pods",
                          "http://10.0.0.5/pods", "http://10.0.0.5:10255", "pods.json",
                          "http://10.0.0.5:10255/pods x", "http://10.0.0.5:10255/a\r\nX: y"}) {
    EXPECT_TRUE(kubelet_pods_source_error(bad)) << bad;
  }
}

// A kubelet on loopback: answers every GET with `reply` (after `delay`) and counts them.
class FakeKubelet {
 public:
  explicit FakeKubelet(std::string reply) : reply_(std::move(reply)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 16);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeKubelet() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return fmt::format("http://127.0.0.1:{}/pods", port_); }
  int requests() const { return requests_; }
  std::string last_request() {
    std::lock_guard lock(mu_);
    return last_request_;
  }

 private:
  void serve() {
    for (int c; (c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
      char buf[4096];
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      {
        std::lock_guard lock(mu_);
        last_request_.assign(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
      }
      ++requests_;
      ::send(c, reply_.data(), reply_.size(), MSG_NOSIGNAL);
      ::close(c);
    }
  }
  std::string reply_;
  int fd_ = -1, port_ = 0;
  std::atomic<int> requests_{0};
  std::mutex mu_;
  std::string last_request_;
  std::thread thread_;
};

std::string http_reply(const std::string& status, const std::string& body) {
  return fmt::format("HTTP/1.1 {}\r\nContent-Type: application/json\r\n\r\n{}", status, body);
}

// Looks `uid` up until a list fetched after the first lookup has come; generous deadline.
std::optional<PodName> find_after_a_list(KubeletPods& pods, const std::string& uid) {
  const std::uint64_t list = pods.next_list();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const KubeletPods::Lookup found = pods.find(uid);
    if (found.name || found.lists_done >= list) return found.name;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ADD_FAILURE() << "no list came within 30 s";
  return std::nullopt;
}

KubeletPodsOptions options(const std::string& source, std::chrono::milliseconds interval,
                           std::function<void(int, const std::string&)> log = {}) {
  return {source, interval, std::chrono::seconds(2), std::move(log)};
}

struct Log {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(int, const std::string&)> sink() {
    return [this](int, const std::string& line) {
      std::lock_guard lock(mu);
      lines.push_back(line);
    };
  }
  std::size_t size() {
    std::lock_guard lock(mu);
    return lines.size();
  }
};

TEST(KubeletPodsTest, AFakeKubeletsListNamesThePod) {
  FakeKubelet kubelet(http_reply("200 OK", pod_list({pod_item(kUid, "team-a", "trainer-0")})));
  KubeletPods pods(options(kubelet.url(), std::chrono::milliseconds(0)));
  EXPECT_EQ(find_after_a_list(pods, kUid), (PodName{"team-a", "trainer-0"}));
  EXPECT_THAT(kubelet.last_request(), HasSubstr("GET /pods HTTP/1.0\r\n"));
}

TEST(KubeletPodsTest, AFileListNamesThePod) {
  test_support::ScratchDir dir;
  std::ofstream(dir.path() / "pods.json") << pod_list({pod_item(kStaticUid, "kube-system", "e")});
  KubeletPods pods(options((dir.path() / "pods.json").string(), std::chrono::milliseconds(0)));
  EXPECT_EQ(find_after_a_list(pods, kStaticUid), (PodName{"kube-system", "e"}));
}

// Whatever goes wrong, the pod is simply without a name, and the log says so once, not once a
// fetch.
TEST(KubeletPodsTest, FailuresGiveNoNameAndAreLoggedOnce) {
  for (const std::string& reply : std::vector<std::string>{
           http_reply("403 Forbidden", "no"), http_reply("200 OK", "<html>"),
           "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
           std::string("garbage")}) {
    FakeKubelet kubelet(reply);
    Log log;
    KubeletPods pods(options(kubelet.url(), std::chrono::milliseconds(0), log.sink()));
    for (int i = 0; i < 3; ++i) EXPECT_FALSE(find_after_a_list(pods, kUid)) << reply;
    EXPECT_GE(kubelet.requests(), 3);
    EXPECT_EQ(log.size(), 1u) << reply;
  }
  Log log;
  KubeletPods nobody(options("http://127.0.0.1:1/pods", std::chrono::milliseconds(0), log.sink()));
  EXPECT_FALSE(find_after_a_list(nobody, kUid));
  EXPECT_EQ(log.size(), 1u);
}

// However often a pod the kubelet does not list is looked up, the kubelet is asked once a
// min_interval (an hour here): once in this test.
TEST(KubeletPodsTest, LookupsOfAnUnlistedPodFetchAtMostOnceAnInterval) {
  FakeKubelet kubelet(http_reply("200 OK", pod_list({})));
  KubeletPods pods(options(kubelet.url(), std::chrono::hours(1)));
  EXPECT_FALSE(find_after_a_list(pods, kUid));
  for (int i = 0; i < 50; ++i) {
    EXPECT_FALSE(pods.find(kUid).name);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(kubelet.requests(), 1);
  EXPECT_EQ(pods.find(kUid).lists_done, 1u);
}

}  // namespace
}  // namespace oaprof::daemon
