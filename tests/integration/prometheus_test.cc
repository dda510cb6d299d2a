// oaprofd's exporter scraped by a real Prometheus (Debian's `prometheus`), loopback only: oaprofd
// samples the simulated GPU, which it keeps busy (--sim-busy), Prometheus scrapes it every second,
// and PromQL over its HTTP API must give what the simulator's model was driven to. Bounded: both
// processes are stopped within the test's own deadline. Skipped, saying why, where Prometheus is
// not installed.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "mmio/sim_energy.h"
#include "mmio/sim_gpu.h"
#include "power/sim_power.h"
#include "tests/common/http_get.h"

namespace {
namespace fs = std::filesystem;
using oaprof::testing::http_get;

constexpr const char* kPrometheus = "/usr/bin/prometheus";

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs argv with stdout and stderr to `log`; returns the pid.
pid_t spawn(const std::vector<std::string>& argv, const fs::path& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

void stop(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

// A loopback port free now (the kernel's pick, released for the server to take).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string url_encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// The first value of an instant PromQL query, or nullopt when it has none yet.
std::optional<double> query(int port, const std::string& promql) {
  const std::string body = http_get(port, "/api/v1/query?query=" + url_encode(promql));
  const auto doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_discarded() || doc.value("status", "") != "success") return std::nullopt;
  const auto& result = doc["data"]["result"];
  if (!result.is_array() || result.empty()) return std::nullopt;
  return std::stod(result[0]["value"][1].get<std::string>());
}

const std::string kPodUid = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const std::string kContainerId(64, 'c');

// Runs `command` (through sh) as oaprofd's client at dir/d.sock, and returns its exit status. In
// a pod: the fake /proc under `dir` says first that this pid is in the pod's container (as the
// containerd runtime with the systemd driver names it), and exec keeps the pid.
int run_as_client(const std::string& command, const fs::path& dir, bool in_pod) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (in_pod) {
      std::string uid = kPodUid;
      std::replace(uid.begin(), uid.end(), '-', '_');
      const fs::path proc = dir / "proc" / std::to_string(::getpid());
      fs::create_directories(proc);
      std::ofstream(proc / "cgroup") << fmt::format(
          "0::/kubepods.slice/kubepods-pod{}.slice/cri-containerd-{}.scope\n", uid, kContainerId);
    }
    ::setenv("OAPROF_DAEMON_SOCKET", (dir / "d.sock").c_str(), 1);
    ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class PrometheusTest : public ::testing::Test {
 protected:
  PrometheusTest() {
    dir_ = fs::temp_directory_path() / fmt::format("oaprof-prom-{}", ::getpid());
    fs::create_directories(dir_);
  }
  ~PrometheusTest() override {
    stop(prometheus_);
    stop(oaprofd_);
    fs::remove_all(dir_);
  }
  fs::path dir_;
  pid_t oaprofd_ = -1, prometheus_ = -1;
};

// The simulated GPU's power while busy with no kernel it knows (the workload fractions) under its
// per-event energy model (mmio/sim_energy.h), as oaprofd's simulated RAPL draws it: driven here
// for one second of a manual clock.
double simulated_busy_gpu_w() {
  using namespace oaprof;
  mmio::SimConfig config;
  config.energy_model = mmio::sim_energy_model(config.platform.gen);
  mmio::ManualClock clock;
  mmio::SimGpu gpu(config, clock);
  gpu.set_kernel_running(true);
  clock.advance_ns(1'000'000'000);
  gpu.set_kernel_running(false);
  return gpu.gpu_energy_j().value_or(0);
}

TEST_F(PrometheusTest, PromQlOverARealScrapeGivesWhatTheSimulatorWasDrivenTo) {
  if (!fs::exists(kPrometheus))
    GTEST_SKIP() << kPrometheus << " is missing (apt-get install prometheus)";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const fs::path oaprofd_log = dir_ / "oaprofd.log";
  // The pod a run below is in: the cgroup its pid names under the fake /proc, and the pod list.
  std::ofstream(dir_ / "pods.json") << fmt::format(
      R"({{"kind":"PodList","items":[{{"metadata":{{"uid":"{}","namespace":"team-a",)"
      R"("name":"trainer-0"}}}}]}})",
      kPodUid);
  oaprofd_ = spawn({OAPROFD_BIN,
                    "--device",
                    "sim",
                    "--socket",
                    (dir_ / "d.sock").string(),
                    "--state-dir",
                    (dir_ / "state").string(),
                    "--group",
                    std::to_string(::getgid()),
                    "--metrics-listen",
                    "127.0.0.1:0",
                    "--metrics-period",
                    "250",
                    "--sim-busy",
                    "--proc-root",
                    (dir_ / "proc").string(),
                    "--kubelet-pods",
                    (dir_ / "pods.json").string(),
                    "--kubelet-pods-interval",
                    "0s"},
                   oaprofd_log);
  int exporter_port = -1;
  const std::regex serving(R"(metrics on http://127\.0\.0\.1:(\d+)/metrics)");
  while (exporter_port < 0 && std::chrono::steady_clock::now() < deadline) {
    std::smatch m;
    const std::string log = read_text(oaprofd_log);
    if (std::regex_search(log, m, serving)) exporter_port = std::stoi(m[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GT(exporter_port, 0) << read_text(oaprofd_log);

  const int prom_port = free_port();
  std::ofstream(dir_ / "prometheus.yml") << fmt::format(
      "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
      "scrape_configs:\n  - job_name: oaprof\n    honor_labels: true\n    static_configs:\n"
      "      - targets: ['127.0.0.1:{}']\n"
      // What the Prometheus Operator puts on a target: oaprofd's own namespace and pod.
      "        labels: {{namespace: oaprof, pod: oaprofd-x}}\n",
      exporter_port);
  const fs::path prom_log = dir_ / "prometheus.log";
  prometheus_ = spawn({kPrometheus, "--config.file=" + (dir_ / "prometheus.yml").string(),
                       "--storage.tsdb.path=" + (dir_ / "data").string(),
                       fmt::format("--web.listen-address=127.0.0.1:{}", prom_port)},
                      prom_log);
  // Four scrapes at least, so that increase() has an interval.
  std::optional<double> scrapes;
  while (std::chrono::steady_clock::now() < deadline) {
    scrapes = query(prom_port, "count_over_time(oaprof_exporter_sampling[1m])");
    if (scrapes && *scrapes >= 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_TRUE(scrapes && *scrapes >= 4) << read_text(prom_log) << read_text(oaprofd_log);

  EXPECT_EQ(query(prom_port, "up{job=\"oaprof\"}"), 1.0);
  // The simulated package draws its cores' idle power plus the GPU's, which the per-event model
  // gives (power/sim_power.h, mmio/sim_energy.h; its noise is 3 % of a launch's dynamic part).
  // Energy over GPU time: both counters move at the same samples, so the scrape's timing (and
  // rate()'s extrapolation) cancels out.
  const auto package_w =
      query(prom_port,
            "increase(oaprof_energy_joules_total{plane=\"package\"}[1m]) / ignoring(plane) "
            "increase(oaprof_gpu_time_seconds_total[1m])");
  ASSERT_TRUE(package_w);
  EXPECT_NEAR(*package_w, oaprof::power::SimPowerModel{}.cores_idle_w + simulated_busy_gpu_w(),
              0.5);
  const auto busy = query(prom_port, "avg_over_time(oaprof_gpu_busy_ratio[1m])");
  ASSERT_TRUE(busy);
  EXPECT_NEAR(*busy, 1.0, 0.02);
  const auto eu_active = query(prom_port, "oaprof_eu_ratio{state=\"active\"}");
  ASSERT_TRUE(eu_active);
  EXPECT_NEAR(*eu_active, 0.85, 0.01);  // the simulator's workload (mmio/sim_gpu.h)
  const auto hz = query(prom_port, "oaprof_gpu_frequency_hertz");
  ASSERT_TRUE(hz);
  EXPECT_NEAR(*hz, 1150e6, 1150e6 * 0.01);
  EXPECT_EQ(query(prom_port, "oaprof_info{simulated=\"true\",platform=\"kblgt2\"}"), 1.0);

  // A profile through oaprofd takes the unit from the exporter, and its per-kernel summary
  // reaches Prometheus: as many launches as the run wrote rows, under its kernel's name only
  // with --share-kernel-names, under kernel="(private)" without.
  const auto rows_of_run = [&](const std::string& option, const std::string& name,
                               bool in_pod = false) {
    const fs::path csv = dir_ / (name + ".csv");
    const std::string command = fmt::format(
        "{} --daemon always --device sim --energy none --idle-baseline off {} -q -o {} -- {} "
        "mad_vect4 --min-time 1",
        OAPROF_BIN, option, csv.string(), KERNEL_RUNNER_BIN);
    EXPECT_EQ(run_as_client(command, dir_, in_pod), 0) << command;
    std::ifstream rows(csv);
    return std::count(std::istreambuf_iterator<char>(rows), {}, '\n') - 1;  // less the header
  };
  const auto launches_of = [&](const std::string& kernel) {
    std::optional<double> launches;
    while (!launches && std::chrono::steady_clock::now() < deadline) {
      launches =
          query(prom_port, fmt::format("oaprof_kernel_launches_total{{kernel=\"{}\"}}", kernel));
      if (!launches) std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return launches;
  };
  const auto private_rows = rows_of_run("", "private");
  ASSERT_GT(private_rows, 0);
  const auto private_launches = launches_of("(private)");
  ASSERT_TRUE(private_launches) << read_text(oaprofd_log);
  EXPECT_EQ(*private_launches, static_cast<double>(private_rows));
  const auto shared_rows = rows_of_run("--share-kernel-names", "shared");
  ASSERT_GT(shared_rows, 0);
  const auto shared_launches = launches_of("mad_vect4");
  ASSERT_TRUE(shared_launches) << read_text(oaprofd_log);
  EXPECT_EQ(*shared_launches, static_cast<double>(shared_rows));
  // The private runs came from no pod: no namespace, not oaprofd's from the target.
  EXPECT_EQ(query(prom_port, "count(oaprof_kernel_launches_total{namespace!=\"\"})"), std::nullopt);

  // A run from the pod: its series carry the pod's UID, container, namespace and name.
  const auto pod_rows = rows_of_run("--share-kernel-names", "pod", true);
  ASSERT_GT(pod_rows, 0);
  const auto pod_launches = launches_of(fmt::format(
      "mad_vect4\",namespace=\"team-a\",pod=\"trainer-0\",pod_uid=\"{}\",container_id=\"{}",
      kPodUid, kContainerId));
  ASSERT_TRUE(pod_launches) << read_text(oaprofd_log);
  EXPECT_EQ(*pod_launches, static_cast<double>(pod_rows));
  EXPECT_GE(query(prom_port, "oaprof_profiling_sessions_total").value_or(0), 3.0);
}

}  // namespace
