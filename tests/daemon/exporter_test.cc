// oaprofd's exporter in process: what it serves on /metrics while it samples the simulated GPU,
// and that a client's session takes the OA unit from it and gives it back.
#include "daemon/exporter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "ipc/wire.h"
#include "session/session_lock.h"
#include "tests/common/daemon_test_util.h"
#include "tests/common/exporter_fixture.h"
#include "tests/common/http_get.h"

namespace oaprof::daemon {
namespace {

using ::testing::HasSubstr;
namespace wire = ipc::wire;

using test_support::parse_metrics;

TEST(ListenAddressTest, TakesIpv4AndBracketedIpv6AndSaysWhetherItIsLoopback) {
  const ListenAddress a = parse_listen_address("127.0.0.1:9464");
  EXPECT_EQ(a.civetweb(), "127.0.0.1:9464");
  EXPECT_TRUE(a.loopback);
  EXPECT_FALSE(parse_listen_address("0.0.0.0:9464").loopback);
  EXPECT_FALSE(parse_listen_address("192.168.1.5:1").loopback);
  EXPECT_TRUE(parse_listen_address("[::1]:9464").loopback);
  EXPECT_FALSE(parse_listen_address("[::]:9464").loopback);
  EXPECT_EQ(parse_listen_address("127.0.0.1:0").port, 0);
  for (const char* bad : {"9464", "localhost:9464", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
                          "127.0.0.1:94x", "[::1:9464", "[nope]:1", ":9464"}) {
    EXPECT_THROW((void)parse_listen_address(bad), std::invalid_argument) << bad;
  }
}

class ExporterTest : public ::testing::Test {
 protected:
  ExporterTest() {
    regs_ = dir_.path() / "regs";
    test_support::create_sim_file(regs_);
    ServiceOptions o;
    o.device.spec = oaprof::gpu::DeviceSpec::sim_file(regs_);
    o.state_dir = dir_.path();
    o.log = [this](int, const std::string& line) { log_ += line + "\n"; };
    service_ = std::make_unique<DaemonService>(o);
  }
  std::unique_ptr<Exporter> start_exporter(bool busy) {
    ExporterOptions eo;
    eo.listen = parse_listen_address("127.0.0.1:0");
    eo.hostname = "node7";
    eo.sim_busy = busy;
    return std::make_unique<Exporter>(*service_, eo);
  }
  // Ticks `n` times, 100 ms apart, as oaprofd's loop would.
  static void tick(Exporter& e, int n) {
    for (int i = 0; i < n; ++i) {
      if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      e.tick();
    }
  }
  test_support::ScratchDir dir_;
  std::filesystem::path regs_;
  std::string log_;
  std::unique_ptr<DaemonService> service_;
};

TEST_F(ExporterTest, ABusySimulatedGpuIsExportedAsTheModelDrivesIt) {
  auto exporter = start_exporter(true);
  tick(*exporter, 4);
  ASSERT_TRUE(exporter->sampling());
  const std::string text = oaprof::testing::http_get(exporter->port(), "/metrics");
  const auto m = parse_metrics(text);
  EXPECT_THAT(text, HasSubstr("# TYPE oaprof_energy_joules_total counter"));
  EXPECT_EQ(m.at("oaprof_exporter_sampling"), 1);
  EXPECT_THAT(text, HasSubstr("pci_bdf=\"sim\""));
  EXPECT_THAT(text, HasSubstr("simulated=\"true\""));
  EXPECT_THAT(text, HasSubstr("Hostname=\"node7\""));
  // The simulator's defaults: 1150 MHz, busy throughout, EUs 85 % active and 5 % stalled.
  EXPECT_NEAR(m.at("oaprof_gpu_frequency_hertz"), 1150e6, 1150e6 * 0.01);
  EXPECT_NEAR(m.at("oaprof_gpu_busy_ratio"), 1.0, 0.01);
  EXPECT_NEAR(m.at("oaprof_eu_ratio{state=\"active\"}"), 0.85, 0.01);
  EXPECT_NEAR(m.at("oaprof_eu_ratio{state=\"stall\"}"), 0.05, 0.01);
  EXPECT_NEAR(m.at("oaprof_eu_ratio{state=\"idle\"}"), 0.10, 0.01);
  EXPECT_GT(m.at("oaprof_gpu_time_seconds_total"), 0.2);
  EXPECT_GT(m.at("oaprof_energy_joules_total{plane=\"package\"}"), 0);
  EXPECT_GT(m.at("oaprof_igpu_power_watts{formula=\"pkg-pp0-dram\"}"), 0);
  EXPECT_EQ(m.at("oaprof_scrape_errors_total"), 0);
}

// oaprofd's exporter over a simulated part xe drives, with IGT's `file` of igt-xe in its metric
// directory and the simulated GPU busy, ticked four times 100 ms apart as oaprofd's loop would.
class SampledXePart {
 public:
  SampledXePart(const std::string& sim_platform, const std::string& file)
      : metrics_(std::filesystem::path(OAPROF_IGT_XE_METRICS_DIR) / file) {
    ServiceOptions o =
        test_support::sim_xe_service_options(state_.path(), metrics_.path(), sim_platform);
    o.log = [this](int, const std::string& line) { log += line + "\n"; };
    service_ = std::make_unique<DaemonService>(o);
    ExporterOptions eo;
    eo.listen = parse_listen_address("127.0.0.1:0");
    eo.sim_busy = true;
    exporter = std::make_unique<Exporter>(*service_, eo);
    for (int i = 0; i < 4; ++i) {
      if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      exporter->tick();
    }
  }
  // Where the build directory cannot hold a file oaprofd trusts, the test cannot run.
  bool untrusted_file() const {
    return !exporter->sampling() && log.find("refuses the metric file") != std::string::npos;
  }
  std::string page() const { return oaprof::testing::http_get(exporter->port(), "/metrics"); }

  std::string log;

 private:
  test_support::ScratchDir state_;
  const test_support::TrustedMetricsDir metrics_;
  std::unique_ptr<DaemonService> service_;

 public:
  std::unique_ptr<Exporter> exporter;
};

// A part xe drives has no built-in set: the exporter samples IGT's ComputeBasic (from oaprofd's
// metric directory) through xe's observation stream, and takes busy, frequency and the XVE
// ratios from that set's own counters (GPU_BUSY, XVE_ACTIVE, XVE_STALL).
TEST(ExporterXeTest, AnXe2PartIsSampledThroughXesStreamWithComputeBasic) {
  SampledXePart part("lnl", "oa-lnl.xml");
  if (part.untrusted_file()) GTEST_SKIP() << "no trusted metric file here: " << part.log;
  const std::string& log = part.log;
  ASSERT_TRUE(part.exporter->sampling()) << log;
  const std::string text = part.page();
  EXPECT_THAT(log, HasSubstr("format PEC64u64, metric set ComputeBasic"));
  const auto m = parse_metrics(text);
  EXPECT_THAT(text, HasSubstr("platform=\"lnl\""));
  // The 64th PEC counter is exported, and ComputeBasic's own metrics under their names.
  EXPECT_GT(m.at("oaprof_oa_events_total{counter=\"A63\"}"), 0);
  EXPECT_THAT(text, HasSubstr("symbol=\"XVE_ACTIVE\""));
  // The simulated xe counts every PEC counter k at (k % 4 + 1) / 4 of the GPU clock while busy;
  // ComputeBasic's GPU_BUSY is PEC 32 over the clocks, so a GPU busy throughout reads 0.25.
  EXPECT_NEAR(m.at("oaprof_gpu_busy_ratio"), 0.25, 0.01);
  EXPECT_NEAR(m.at("oaprof_gpu_frequency_hertz"), 1150e6, 1150e6 * 0.01);
  EXPECT_TRUE(m.contains("oaprof_eu_ratio{state=\"active\"}")) << text;
  EXPECT_TRUE(m.contains("oaprof_eu_ratio{state=\"stall\"}")) << text;
  EXPECT_EQ(m.at("oaprof_scrape_errors_total"), 0) << log;
}

// A Tiger Lake bound to xe has no built-in set either (xe takes only a set with a UUID): the
// exporter samples RenderBasic, the set igt-xe's Gen12 files hold, in the part's own format, and
// takes busy and the EU ratios from its GpuBusy and EuActive/EuStall.
TEST(ExporterXeTest, ATigerLakeBoundToXeIsSampledWithRenderBasic) {
  SampledXePart part("tglgt2-xe", "oa-tglgt2.xml");
  if (part.untrusted_file()) GTEST_SKIP() << "no trusted metric file here: " << part.log;
  ASSERT_TRUE(part.exporter->sampling()) << part.log;
  EXPECT_THAT(part.log, HasSubstr("format A32u40_A4u32_B8_C8, metric set RenderBasic"));
  const auto m = parse_metrics(part.page());
  // The simulated registers' model: busy throughout, EUs 85 % active.
  EXPECT_NEAR(m.at("oaprof_gpu_busy_ratio"), 1.0, 0.01);
  EXPECT_NEAR(m.at("oaprof_eu_ratio{state=\"active\"}"), 0.85, 0.01);
  EXPECT_EQ(m.at("oaprof_scrape_errors_total"), 0) << part.log;
}

// Without oa-lnl.xml in oaprofd's metric directory the unit cannot be taken on an xe part: every
// period counts a scrape error, and the journal gets the reason once, not once a period.
TEST(ExporterXeTest, AnXe2PartWithoutItsMetricFileIsCountedEachPeriodAndLoggedOnce) {
  test_support::ScratchDir state, empty;
  std::string log;
  ServiceOptions o = test_support::sim_xe_service_options(state.path(), empty.path());
  o.log = [&log](int, const std::string& line) { log += line + "\n"; };
  DaemonService service(o);
  ExporterOptions eo;
  eo.listen = parse_listen_address("127.0.0.1:0");
  Exporter exporter(service, eo);
  for (int i = 0; i < 3; ++i) exporter.tick();
  EXPECT_FALSE(exporter.sampling());
  const auto m = parse_metrics(oaprof::testing::http_get(exporter.port(), "/metrics"));
  EXPECT_EQ(m.at("oaprof_scrape_errors_total"), 3);
  // Said once, by the exporter: the failed opens wrote no register, so no session line each.
  const std::string line = "exporter: cannot take the OA unit: oaprofd has no metric file for LNL";
  ASSERT_NE(log.find(line), std::string::npos) << log;
  EXPECT_EQ(log.find(line), log.rfind(line)) << log;
  EXPECT_THAT(log, ::testing::Not(HasSubstr("ended (open failed")));
  // No advice to use a built-in set that an Xe2 part does not have.
  EXPECT_THAT(log, HasSubstr("this part has no built-in set"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("--metric-set Builtin")));
}

TEST_F(ExporterTest, AnIdleSimulatedGpuIsNotBusy) {
  auto exporter = start_exporter(false);
  tick(*exporter, 3);
  const auto m = parse_metrics(oaprof::testing::http_get(exporter->port(), "/metrics"));
  EXPECT_NEAR(m.at("oaprof_gpu_busy_ratio"), 0.0, 0.01);
  EXPECT_NEAR(m.at("oaprof_eu_ratio{state=\"idle\"}"), 1.0, 0.01);
}

TEST_F(ExporterTest, AClientsSessionTakesTheUnitAndTheExporterResumesAfterIt) {
  auto exporter = start_exporter(true);
  tick(*exporter, 2);
  ASSERT_TRUE(exporter->sampling());
  wire::Open open;
  open.pid = 42;
  open.energy = "none";
  const Peer peer{1000, 1000, 42};
  const wire::Body opened = service_->handle(1, peer, open);
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(opened)) << log_;
  EXPECT_THAT(log_, HasSubstr("takes the OA unit from the exporter"));
  exporter->tick();
  EXPECT_FALSE(exporter->sampling());
  auto m = parse_metrics(oaprof::testing::http_get(exporter->port(), "/metrics"));
  EXPECT_EQ(m.at("oaprof_exporter_sampling"), 0);
  EXPECT_EQ(m.at("oaprof_profiling_sessions_total"), 1);
  exporter->tick();  // still held: counted once
  service_->client_gone(1);
  tick(*exporter, 2);
  EXPECT_TRUE(exporter->sampling());
  m = parse_metrics(oaprof::testing::http_get(exporter->port(), "/metrics"));
  EXPECT_EQ(m.at("oaprof_exporter_sampling"), 1);
  EXPECT_EQ(m.at("oaprof_profiling_sessions_total"), 1);
  EXPECT_EQ(m.at("oaprof_scrape_errors_total"), 0);
}

// A session that opens and ends between two of the exporter's periods is counted all the same
// (CI saw the Prometheus test's short run go uncounted when it was counted by polling).
TEST_F(ExporterTest, ASessionShorterThanAPeriodIsCounted) {
  auto exporter = start_exporter(true);
  tick(*exporter, 2);
  ASSERT_TRUE(exporter->sampling());
  const Peer peer{1000, 1000, 42};
  for (std::uint64_t client : {1, 2}) {
    wire::Open open;
    open.pid = 42;
    open.energy = "none";
    ASSERT_TRUE(std::holds_alternative<wire::Opened>(service_->handle(client, peer, open))) << log_;
    service_->client_gone(client);
  }
  exporter->tick();
  EXPECT_TRUE(exporter->sampling());  // the unit was free again at the tick
  const auto m = parse_metrics(oaprof::testing::http_get(exporter->port(), "/metrics"));
  EXPECT_EQ(m.at("oaprof_profiling_sessions_total"), 2);
  EXPECT_EQ(m.at("oaprof_scrape_errors_total"), 0);  // its own session ended underneath: no error
}

// A local `sudo oaprof` takes the session lock itself and cannot pre-empt the exporter: it is told
// who holds the unit and how to get it.
TEST_F(ExporterTest, ALocalRunFindingTheExportersLockIsToldToGoThroughTheDaemon) {
  auto exporter = start_exporter(false);
  exporter->tick();
  ASSERT_TRUE(exporter->sampling());
  std::string busy;
  EXPECT_FALSE(session::SessionLock::try_acquire(service_->lock_file(), "uid 1000, pid 9", &busy));
  EXPECT_THAT(busy, HasSubstr("oaprofd's Prometheus exporter"));
  EXPECT_THAT(busy, HasSubstr("--daemon always"));
}

// Summaries come only from a session's holder, as its client measured them; the names it shared
// become labels, printable, and a name the page keeps for itself counts under "other".
TEST_F(ExporterTest, SharedSessionSummariesBecomePerKernelSeries) {
  auto exporter = start_exporter(false);
  const Peer peer{1000, 1000, 42};
  wire::Summary summary{{{"mad_vect4", 28, 1'500'000'000, 2'000'000}}, true};
  EXPECT_TRUE(
      std::holds_alternative<wire::Error>(service_->handle(1, peer, summary)));  // no session
  wire::Open open;
  open.energy = "none";
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(service_->handle(1, peer, open)));
  summary.kernels.push_back({"k0\n\x01", 1, 1'000'000, 0});
  summary.kernels.push_back({std::string(Exporter::kPrivateKernels), 4, 1'000'000, 0});
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(service_->handle(1, peer, summary)));
  service_->client_gone(1);
  exporter->tick();
  const auto m = parse_metrics(oaprof::testing::http_get(exporter->port(), "/metrics"));
  EXPECT_EQ(m.at("oaprof_kernel_launches_total{kernel=\"mad_vect4\"}"), 28);
  EXPECT_DOUBLE_EQ(m.at("oaprof_kernel_gpu_seconds_total{kernel=\"mad_vect4\"}"), 1.5);
  EXPECT_DOUBLE_EQ(m.at("oaprof_kernel_energy_joules_total{kernel=\"mad_vect4\"}"), 2.0);
  EXPECT_EQ(m.at("oaprof_kernel_launches_total{kernel=\"k0??\"}"), 1);  // made printable
  EXPECT_EQ(m.at("oaprof_kernel_launches_total{kernel=\"other\"}"), 4);
  EXPECT_FALSE(m.contains("oaprof_kernel_launches_total{kernel=\"(private)\"}"));
}

// However many users share names, the kernel label takes at most kMaxKernelSeries values (then
// "other"), so the page cannot grow without bound.
TEST(ExporterKernelSeriesTest, SharedNamesOfManyUsersTakeAtMostTheBound) {
  test_support::SimulatedExporter exporter;
  std::size_t sent = 0;
  for (uid_t uid = 2000; sent < Exporter::kMaxKernelSeries + 20; ++uid) {
    wire::Summary summary{{}, true};
    while (summary.kernels.size() < wire::kMaxSummaryKernels) {
      summary.kernels.push_back({fmt::format("k{}", sent++), 1, 1'000'000, 0});
    }
    ASSERT_TRUE(exporter.run_session(uid, uid, summary));
  }
  const auto m = parse_metrics(exporter.page());
  std::size_t series = 0;
  for (const auto& [name, value] : m) series += name.starts_with("oaprof_kernel_launches_total{");
  EXPECT_EQ(series, Exporter::kMaxKernelSeries + 1);  // and "other"
  EXPECT_EQ(m.at("oaprof_kernel_launches_total{kernel=\"other\"}"),
            static_cast<double>(sent - Exporter::kMaxKernelSeries));
}

// A client in a pod: its summary's series carry the pod and container its process was in when
// it opened (read through the fake /proc); one outside any pod gets both labels empty.
const std::string kPodUid = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const std::string kContainerId(64, 'e');

std::string pod_cgroup(int pod) {
  return fmt::format(
      "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{:08x}_4e5f_4a6b_8c7d_"
      "9e0f1a2b3c4d.slice/cri-containerd-{}.scope\n",
      pod, kContainerId);
}

TEST(ExporterPodLabelsTest, ASessionFromAPodIsLabelledWithItsPodAndContainer) {
  test_support::SimulatedExporter exporter;
  exporter.put_in_cgroup(777, pod_cgroup(0x0a1b2c3d));
  ASSERT_TRUE(exporter.run_session(1, 1000, {{{"mad_vect4", 28, 1'500'000'000, 0}}, true}, 777));
  ASSERT_TRUE(exporter.run_session(2, 1001, {{{"secret", 5, 1'000'000, 0}}, false}, 4242));
  const std::string page = exporter.page();
  const auto m = parse_metrics(page);
  EXPECT_EQ(m.at(fmt::format("oaprof_kernel_launches_total{{container_id=\"{}\",kernel=\"mad_"
                             "vect4\",pod_uid=\"{}\"}}",
                             kContainerId, kPodUid)),
            28);
  EXPECT_EQ(m.at("oaprof_kernel_launches_total{kernel=\"(private)\"}"), 5);
  EXPECT_THAT(page, HasSubstr("oaprof_kernel_gpu_seconds_total{container_id=\"\",kernel=\"("
                              "private)\",namespace=\"\",pod=\"\",pod_uid=\"\"}"));
}

// With the kubelet's pod list, a pod's series also carry its namespace and name, from their very
// first sample (the summary waits for a list fetched after it came); a pod the list does not name
// gets neither, once that list has come.
TEST(ExporterPodLabelsTest, WithAPodListSeriesCarryThePodsNamespaceAndName) {
  test_support::ScratchDir dir;
  const std::filesystem::path list = dir.path() / "pods.json";
  std::ofstream(list) << R"({"kind":"PodList","items":[{"metadata":{"uid":")" << kPodUid
                      << R"(","namespace":"team-a","name":"trainer-0"}}]})";
  ExporterOptions eo;
  eo.kubelet_pods =
      KubeletPodsOptions{list.string(), std::chrono::milliseconds(0), std::chrono::seconds(2), {}};
  test_support::SimulatedExporter exporter(eo);
  exporter.put_in_cgroup(777, pod_cgroup(0x0a1b2c3d));
  exporter.put_in_cgroup(778, pod_cgroup(0x1a1b2c3d));  // a pod the list does not name
  ASSERT_TRUE(exporter.run_session(1, 1000, {{{"mad_vect4", 28, 1'000'000, 0}}, true}, 777));
  ASSERT_TRUE(exporter.run_session(2, 1000, {{{"mad_vect4", 3, 1'000'000, 0}}, true}, 778));
  const std::string named = fmt::format(
      "oaprof_kernel_launches_total{{container_id=\"{}\",kernel=\"mad_vect4\",namespace=\"team-"
      "a\",pod=\"trainer-0\",pod_uid=\"{}\"}}",
      kContainerId, kPodUid);
  const std::string unnamed = fmt::format(
      "oaprof_kernel_launches_total{{container_id=\"{}\",kernel=\"mad_vect4\",pod_uid=\"1a1b2c3d-"
      "4e5f-4a6b-8c7d-9e0f1a2b3c4d\"}}",
      kContainerId);
  std::map<std::string, double> m;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!(m.contains(named) && m.contains(unnamed)) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    m = parse_metrics(exporter.page());
  }
  EXPECT_EQ(m[named], 28);
  EXPECT_EQ(m[unnamed], 3);
  std::size_t series = 0;
  for (const auto& [name, value] : m) series += name.starts_with("oaprof_kernel_launches_total{");
  EXPECT_EQ(series, 2u);  // no series of either pod without what the list says of it
}

// Pods come and go for the daemon's life: past kMaxPodLabels distinct ones, they share "other";
// and one pod's users together name at most kMaxKernelSeriesPerPod kernels.
TEST(ExporterPodLabelsTest, PodLabelsAndOnePodsNamesAreBounded) {
  test_support::SimulatedExporter exporter;
  const int pods = static_cast<int>(Exporter::kMaxPodLabels) + 3;
  for (int pod = 0; pod < pods; ++pod) {
    exporter.put_in_cgroup(1000 + pod, pod_cgroup(pod));
    ASSERT_TRUE(exporter.run_session(1, 1000, {{{"k", 1, 1'000'000, 0}}, false}, 1000 + pod));
    // oaprofd keeps only kMaxKeptSummaries for the exporter
    if ((pod + 1) % DaemonService::kMaxKeptSummaries == 0) exporter.exporter().tick();
  }
  exporter.put_in_cgroup(999, pod_cgroup(0x7fffffff));  // a pod already past the bound
  for (uid_t uid : {2000u, 2001u}) {
    wire::Summary summary{{}, true};
    while (summary.kernels.size() < wire::kMaxSummaryKernels) {
      summary.kernels.push_back({fmt::format("u{}k{}", uid, summary.kernels.size()), 1, 1, 0});
    }
    ASSERT_TRUE(exporter.run_session(1, uid, summary, 999));
  }
  std::set<std::string> pod_labels;
  std::size_t named = 0;
  const std::regex pod_label(R"re(pod_uid="([^"]*)")re");
  for (const auto& [series, value] : parse_metrics(exporter.page())) {
    if (!series.starts_with("oaprof_kernel_launches_total{")) continue;
    std::smatch match;
    if (std::regex_search(series, match, pod_label)) pod_labels.insert(match[1]);
    named += series.find("kernel=\"u200") != std::string::npos;
  }
  EXPECT_EQ(pod_labels.size(), Exporter::kMaxPodLabels + 1);  // and "other"
  EXPECT_TRUE(pod_labels.contains("other"));
  EXPECT_EQ(named, Exporter::kMaxKernelSeriesPerPod);
}

TEST_F(ExporterTest, AnAddressInUseIsAClearError) {
  auto first = start_exporter(false);
  ExporterOptions eo;
  eo.listen = parse_listen_address("127.0.0.1:" + std::to_string(first->port()));
  try {
    Exporter second(*service_, eo);
    FAIL() << "a second exporter bound the same port";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot serve metrics on 127.0.0.1:"));
  }
}

}  // namespace
}  // namespace oaprof::daemon
