// Issue 32: the selftest through oaprofd, both ends without the daemon's socket loop: what
// oaprofd runs for a client (the checks it skips, saying they need root; the result it keeps),
// the report read back into the same table, and a client facing an oaprofd that predates it.
#include "run/selftest_daemon.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <thread>

#include "base/errors.h"
#include "run/selftest_result.h"
#include "tests/common/daemon_test_util.h"

namespace oaprof::run::selftest {
namespace {

namespace wire = ipc::wire;
using ::testing::HasSubstr;
using ::testing::StartsWith;

daemon::SelftestJob sim_job(const std::filesystem::path& state_dir) {
  daemon::SelftestJob job;
  job.device.spec = gpu::DeviceSpec::sim();
  job.quick = true;
  job.metrics_xml = OAPROF_METRICS_DIR "/igt/oa-kblgt2.xml";
  job.state_dir = state_dir;
  job.open_device = [](gpu::DeviceOptions d) { return gpu::open_device(d); };
  return job;
}

const nlohmann::json& check_named(const nlohmann::json& report, const std::string& name) {
  for (const nlohmann::json& c : report.at("checks")) {
    if (c.at("name") == name) return c;
  }
  throw std::out_of_range(name);
}

TEST(SelftestDaemonTest, OaprofdRunsTheChecksItsSessionsGrantAndKeepsTheResult) {
  test_support::ScratchDir dir;
  daemon::SelftestJob job = sim_job(dir.path());
  int opened = 0;  // through oaprofd's opener (its lock and journal), never around it
  job.open_device = [&opened](gpu::DeviceOptions d) {
    ++opened;
    return gpu::open_device(d);
  };
  const daemon::SelftestOutcome outcome = serve_selftest(job);
  EXPECT_EQ(opened, 1);
  const nlohmann::json report = nlohmann::json::parse(outcome.report_json);
  EXPECT_EQ(outcome.failed, 0u) << report.dump(2);
  EXPECT_EQ(outcome.checks, report.at("checks").size());
  EXPECT_FALSE(report.at("failed").get<bool>());
  EXPECT_EQ(report.at("accesses"), nlohmann::json({"mmio", "rpc", "perf"}));
  EXPECT_EQ(check_named(report, "clocks").at("verdict"), "pass");
  EXPECT_EQ(check_named(report, "readouts-agree").at("verdict"), "pass");  // the model's load
  for (const char* root_only : {"driver-accepts-configs", "energy-model"}) {
    const nlohmann::json& c = check_named(report, root_only);
    EXPECT_EQ(c.at("verdict"), "skip") << root_only;
    EXPECT_THAT(c.at("reason").get<std::string>(), StartsWith("needs root: ")) << root_only;
  }
  // Kept as `sudo oaprof selftest` keeps it: in oaprofd's state directory, for profile runs.
  const std::filesystem::path kept = result_path(dir.path(), "sim-5916-i915");
  EXPECT_TRUE(std::filesystem::exists(kept)) << outcome.kept;
  EXPECT_THAT(outcome.kept, HasSubstr(kept.string()));
}

TEST(SelftestDaemonTest, RealHardwaresLoadAndEnergyOffSkipSayingTheyNeedRoot) {
  daemon::SelftestJob job;
  job.device.spec = gpu::DeviceSpec::parse("0000:00:02.0");
  job.lend_energy = false;
  const auto skip = daemon_skipped_checks(job);
  for (const char* check : {"readouts-agree", "rpc-vs-periodic", "noa-counting", "flex-routing",
                            "context-switch", "energy", "driver-accepts-configs", "energy-model"}) {
    ASSERT_TRUE(skip.contains(check)) << check;
    EXPECT_THAT(skip.at(check), StartsWith("needs root: ")) << check;
  }
  EXPECT_FALSE(skip.contains("clocks"));
  // On the simulator the busy windows need no load, and energy is lent by default.
  job.device.spec = gpu::DeviceSpec::sim();
  job.lend_energy = true;
  EXPECT_FALSE(daemon_skipped_checks(job).contains("readouts-agree"));
  EXPECT_FALSE(daemon_skipped_checks(job).contains("context-switch"));
  EXPECT_FALSE(daemon_skipped_checks(job).contains("energy"));
  // The counters checks read kernel_runner's profile runs, which oaprofd never starts: on the
  // simulator too.
  for (const char* check :
       {"known-work-flops", "known-work-eu-active", "known-work-bytes", "idle-and-render-quiet"}) {
    ASSERT_TRUE(daemon_skipped_checks(job).contains(check)) << check;
    EXPECT_THAT(daemon_skipped_checks(job).at(check), HasSubstr("kernel_runner")) << check;
  }
}

TEST(SelftestDaemonTest, TheReportReadBackPrintsTheSameTable) {
  SelftestReport r;
  r.device = "simulated TGL GT2 \x1b[31m";  // escaped in the table either way
  r.platform = "TGL GT2 (Gen12)";
  r.pci_id = 0x9a49;
  r.simulated = true;
  r.accesses = {"mmio", "perf"};
  r.faults = {};
  r.quick = true;
  r.checks.push_back(CheckResult{
      .name = "clocks",
      .group = "clocks",
      .assumes = "a",
      .tolerance = "t",
      .verdict = Verdict::kFail,
      .measurement = "m",
      .reason = "why",
      // A figure that is no number goes as null, and comes back.
      .figures = {{"ratio", 1.5, ""}, {"share", std::numeric_limits<double>::quiet_NaN(), ""}}});
  r.checks.push_back(CheckResult{.name = "energy",
                                 .group = "energy",
                                 .assumes = "b",
                                 .tolerance = "u",
                                 .verdict = Verdict::kSkip,
                                 .reason = "needs root: x"});
  const nlohmann::json json = report_json(r, "0.9.0");
  // Through its text, as the client reads what oaprofd sent.
  const SelftestReport back = report_from_json(nlohmann::json::parse(json.dump()));
  EXPECT_EQ(report_table(back), report_table(r));
  // As text: the NaN figure is null in both (NaN itself equals nothing).
  EXPECT_EQ(report_json(back, "0.9.0").dump(), json.dump());
  EXPECT_TRUE(any_failed(back));

  nlohmann::json other = json;
  other["schema_version"] = kSchemaVersion + 1;
  EXPECT_THROW(report_from_json(other), std::runtime_error);
  other = json;
  other["checks"][0]["verdict"] = "maybe";
  EXPECT_THROW(report_from_json(other), std::runtime_error);
  other = json;
  other["device"].erase("label");
  EXPECT_THROW(report_from_json(other), std::runtime_error);
}

// An oaprofd from before the selftest: its decoder does not know the request's type.
class OldOaprofd {
 public:
  explicit OldOaprofd(const std::string& path) {
    listen_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(::bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listen_, 1), 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~OldOaprofd() {
    ::shutdown(listen_, SHUT_RDWR);
    thread_.join();
    ::close(listen_);
  }

 private:
  void serve() {
    const int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    std::uint8_t buf[wire::kMaxMessageBytes];
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      const auto decoded = wire::decode({buf, static_cast<std::size_t>(n)});
      const auto& m = std::get<wire::Message>(decoded);
      const wire::Body reply =
          std::holds_alternative<wire::Hello>(m.body)
              ? wire::Body{wire::Ok{}}
              : wire::Body{wire::Error{wire::ErrorCode::kUnknownType, "unknown message type 10"}};
      const auto bytes = wire::encode({m.request_id, reply});
      (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    }
    ::close(fd);
  }

  int listen_ = -1;
  std::thread thread_;
};

TEST(SelftestDaemonTest, AnOaprofdThatPredatesTheSelftestIsNamedAsSuch) {
  test_support::ScratchDir dir;
  const std::string socket = (dir.path() / "old.sock").string();
  OldOaprofd old(socket);
  try {
    (void)selftest_through_daemon(socket, wire::Selftest{}, nullptr);
    FAIL() << "an old oaprofd's refusal was taken for a report";
  } catch (const base::SetupError& e) {
    EXPECT_THAT(e.what(), HasSubstr("this oaprofd does not run the selftest: upgrade"));
    EXPECT_EQ(base::exit_status_for(e), base::kExitSetup);
  }
}

}  // namespace
}  // namespace oaprof::run::selftest
