// oaprofd as the system runs it: a process on a simulated register file, killed and restarted,
// stopped by SIGTERM mid-session, and serving an `oaprof` run by a user who is not root.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "session/register_journal.h"
#include "session/remote_source.h"
#include "tests/common/daemon_test_util.h"
#include "tests/common/known_work_rows.h"
#include "tests/common/run_util.h"

namespace oaprof::daemon {
namespace {

namespace fs = std::filesystem;
namespace wire = ipc::wire;
using test_support::ScratchDir;
using ::testing::HasSubstr;

constexpr gid_t kTestGroup = 4242;
constexpr uid_t kNobody = 65534;

// Starts oaprofd on `socket` with the scratch directory as its state directory, its stderr
// appended to `log`; returns its pid.
// `extra` goes after the usual arguments.
pid_t start_oaprofd(const ScratchDir& dir, const std::string& device, const std::string& group,
                    const std::string& socket, const fs::path& log,
                    const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {
      OAPROFD_BIN, "--socket", socket,    "--state-dir", dir.path().string(),
      "--device",  device,     "--group", group,         "--foreground"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, STDERR_FILENO);
    ::execv(OAPROFD_BIN, argv.data());
    ::_exit(127);
  }
  return pid;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class Daemon {
 public:
  // The default group is the test's own, so that its clients are let in with or without root.
  Daemon(const ScratchDir& dir, const std::string& device,
         const std::string& group = std::to_string(::getgid()),
         const std::string& socket_name = "d.sock", const std::vector<std::string>& extra = {})
      : socket_((dir.path() / socket_name).string()), log_(dir.path() / (socket_name + ".log")) {
    pid_ = start_oaprofd(dir, device, group, socket_, log_, extra);
    // Ready once it answers a hello: a connect alone may land in the backlog while it is still
    // recovering, which it does after binding the socket and before serving.
    for (int i = 0; i < 500; ++i) {
      try {
        session::DaemonClient probe(socket_);
        (void)probe.call(wire::Hello{});
        return;
      } catch (const session::DaemonUnavailable&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    ADD_FAILURE() << "oaprofd did not come up: " << log();
  }
  ~Daemon() {
    if (pid_ > 0) stop(SIGKILL);
  }
  // Returns the exit status (or 128 + signal).
  int stop(int sig) {
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  const std::string& socket() const { return socket_; }
  pid_t pid() const { return pid_; }
  std::string log() const { return read_text(log_); }

 private:
  std::string socket_;
  fs::path log_;
  pid_t pid_ = -1;
};

// A simulated oaprofd on `sim_platform` whose --metrics-dir holds `file` (copied where the daemon
// trusts it, when it can be), and oaprof run through it.
struct SimDaemon {
  SimDaemon(const fs::path& file, const std::string& sim_platform, const std::string& socket_name)
      : metrics(file),
        daemon(dir, "sim", std::to_string(::getgid()), socket_name,
               {"--sim-platform", sim_platform, "--metrics-dir", metrics.path().string()}) {}
  // oaprof --daemon always --device sim, without energy or idle baseline, with `args`.
  oaprof::testing::CommandResult profile(const std::string& args) const {
    return oaprof::testing::run(fmt::format(
        "OAPROF_DAEMON_SOCKET={} {} --daemon always --device sim --energy none --idle-baseline "
        "off {}",
        daemon.socket(), OAPROF_BIN, args));
  }
  // Where the build directory cannot hold a file the daemon trusts, the tests skip.
  static bool untrusted(const oaprof::testing::CommandResult& r) {
    return r.output.find("refuses the metric file") != std::string::npos;
  }
  const test_support::TrustedMetricsDir metrics;
  ScratchDir dir;
  Daemon daemon;
};

wire::Open open_request() {
  wire::Open o;
  o.pid = static_cast<std::uint32_t>(::getpid());
  o.energy = "none";
  return o;
}

TEST(OaprofdProcessTest, ARestartAfterACrashRestoresTheRegisters) {
  ScratchDir dir;
  const fs::path regs = dir.path() / "regs";
  test_support::create_sim_file(regs);
  const auto before = test_support::file_bytes(regs);
  {
    Daemon d(dir, "sim:" + regs.string());
    session::DaemonClient c(d.socket());
    (void)c.open(open_request());
    EXPECT_EQ(d.stop(SIGKILL), 128 + SIGKILL);
  }
  const auto programmed = test_support::differing_registers(before, test_support::file_bytes(regs));
  EXPECT_FALSE(programmed.empty()) << "the killed daemon left the OA unit programmed";
  const auto state = session::read_state_file(dir.path() / "state");
  ASSERT_TRUE(state.has_value());
  EXPECT_GE(state->entries.size(), programmed.size());

  Daemon again(dir, "sim:" + regs.string());
  EXPECT_EQ(test_support::differing_registers(before, test_support::file_bytes(regs)),
            std::vector<std::size_t>{});
  EXPECT_FALSE(fs::exists(dir.path() / "state"));
  EXPECT_EQ(again.stop(SIGTERM), 0);
  EXPECT_THAT(again.log(), HasSubstr(fmt::format("that a crashed session of uid {}", ::getuid())));
  EXPECT_FALSE(fs::exists(again.socket())) << "a clean stop removes its socket";
}

TEST(OaprofdProcessTest, ASecondDaemonLeavesALiveSessionsRegistersAlone) {
  ScratchDir dir;
  const fs::path regs = dir.path() / "regs";
  test_support::create_sim_file(regs);
  const auto before = test_support::file_bytes(regs);
  const std::string device = "sim:" + regs.string();
  Daemon first(dir, device);
  session::DaemonClient c(first.socket());
  (void)c.open(open_request());
  const auto programmed = test_support::file_bytes(regs);
  ASSERT_FALSE(test_support::differing_registers(before, programmed).empty());
  ASSERT_TRUE(fs::exists(dir.path() / "state"));

  // On the same socket: refused, and nothing of the live session is touched on the way out.
  const fs::path log = dir.path() / "same-socket.log";
  const pid_t pid = start_oaprofd(dir, device, std::to_string(::getgid()), first.socket(), log);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == oaprof::base::kExitSetup)
      << read_text(log);
  EXPECT_THAT(read_text(log), HasSubstr("another oaprofd already answers"));
  EXPECT_EQ(test_support::differing_registers(programmed, test_support::file_bytes(regs)),
            std::vector<std::size_t>{});
  EXPECT_TRUE(fs::exists(dir.path() / "state"));

  // On another socket but the same state directory: it serves, and leaves the journal to the
  // session that is writing it.
  Daemon second(dir, device, std::to_string(::getgid()), "second.sock");
  EXPECT_EQ(test_support::differing_registers(programmed, test_support::file_bytes(regs)),
            std::vector<std::size_t>{});
  EXPECT_TRUE(fs::exists(dir.path() / "state"));
  EXPECT_THAT(second.log(), HasSubstr("left alone: the OA unit is held by uid"));
  session::DaemonClient other(second.socket());
  EXPECT_THROW((void)other.open(open_request()), std::runtime_error);  // busy

  c.close();
  EXPECT_EQ(test_support::differing_registers(before, test_support::file_bytes(regs)),
            std::vector<std::size_t>{});
  EXPECT_FALSE(fs::exists(dir.path() / "state"));
}

TEST(OaprofdProcessTest, SigtermMidSessionRestoresAndExitsZero) {
  ScratchDir dir;
  const fs::path regs = dir.path() / "regs";
  test_support::create_sim_file(regs);
  const auto before = test_support::file_bytes(regs);
  Daemon d(dir, "sim:" + regs.string());
  session::DaemonClient c(d.socket());
  (void)c.open(open_request());
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(c.call(wire::Kernel{true})));
  EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
  EXPECT_EQ(test_support::differing_registers(before, test_support::file_bytes(regs)),
            std::vector<std::size_t>{});
  EXPECT_FALSE(fs::exists(dir.path() / "state"));
  EXPECT_THAT(d.log(), HasSubstr("oaprofd is stopping"));
}

// A world-enterable scratch directory, and in it `work`, where uid 65534 may write.
fs::path member_work_dir(const ScratchDir& dir) {
  ::chmod(dir.path().c_str(), 0755);
  const fs::path work = dir.path() / "work";
  fs::create_directories(work / "pocl");
  fs::create_directories(work / "tmp");
  for (const fs::path& p : {work, work / "pocl", work / "tmp"}) ::chmod(p.c_str(), 0777);
  return work;
}

// Runs `args` as uid 65534 in kTestGroup alone (a member of the daemon's group, not root) against
// the oaprofd at `socket`, with its home and temporary files in `work`: its exit status (or 128 +
// signal) and its stdout and stderr together.
oaprof::testing::CommandResult run_as_member(std::vector<std::string> args, const fs::path& work,
                                             const std::string& socket) {
  const fs::path out = work / "member.out";
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const gid_t groups[] = {kTestGroup};
    if (::setgroups(1, groups) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) {
      ::_exit(90);
    }
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::setenv("OAPROF_DAEMON_SOCKET", socket.c_str(), 1);
    ::setenv("TMPDIR", (work / "tmp").c_str(), 1);
    ::setenv("POCL_CACHE_DIR", (work / "pocl").c_str(), 1);
    ::setenv("HOME", work.c_str(), 1);
    ::unsetenv("SUDO_UID");
    ::unsetenv("SUDO_GID");
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), read_text(out)};
}

TEST(OaprofdProcessTest, AnUnprivilegedOaprofProfilesThroughTheDaemon) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run oaprof as another user";
  ScratchDir dir;
  const fs::path work = member_work_dir(dir);
  Daemon d(dir, "sim", std::to_string(kTestGroup));
  const fs::path csv = work / "out.csv";
  const auto r = run_as_member(
      {OAPROF_BIN, "--daemon", "always", "--device", "sim", "--idle-baseline", "off", "--format",
       "101", "-o", csv.string(), "--", KERNEL_RUNNER_BIN, "mad_vect4", "--min-time", "20"},
      work, d.socket());
  ASSERT_EQ(r.status, 0) << r.output << d.log();
  EXPECT_THAT(r.output, HasSubstr("via oaprofd"));
  std::ifstream csv_in(csv);
  std::string header, row;
  ASSERT_TRUE(std::getline(csv_in, header)) << r.output;
  ASSERT_TRUE(std::getline(csv_in, row));
  EXPECT_THAT(header, HasSubstr("kernel"));
  EXPECT_THAT(row, HasSubstr("mad_vect4"));
  EXPECT_THAT(row, HasSubstr("simulated"));
  struct stat st {};
  ASSERT_EQ(::stat(csv.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kNobody) << "the CSV is the user's";
  EXPECT_THAT(d.log(), HasSubstr(fmt::format("session opened for uid {}", kNobody)));
  EXPECT_THAT(d.log(), HasSubstr("registers restored"));
}

// Issue 32: `oaprof selftest` for a member of oaprofd's group (uid 65534, not root): oaprofd runs
// the checks its sessions' grant covers on its simulated device, with its own metric file, keeps
// the result in its state directory, and the member gets the table and the --json report, which
// it writes as itself. Options a local run alone takes never reach the daemon.
TEST(OaprofdProcessTest, AGroupMemberRunsTheSelftestThroughTheDaemon) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run oaprof as another user";
  const test_support::TrustedMetricsDir metrics(fs::path(OAPROF_IGT_METRICS_DIR) / "oa-kblgt2.xml");
  ScratchDir dir;
  const fs::path work = member_work_dir(dir);
  Daemon d(dir, "sim", std::to_string(kTestGroup), "st.sock",
           {"--metrics-dir", metrics.path().string()});
  const fs::path json = work / "selftest.json";
  const auto r = run_as_member({OAPROF_BIN, "selftest", "--daemon", "always", "--device", "sim",
                                "--quick", "--json", json.string()},
                               work, d.socket());
  ASSERT_EQ(r.status, 0) << r.output << d.log();
  if (d.log().find("refuses the metric file") != std::string::npos) {
    GTEST_SKIP() << "the build directory cannot hold a trusted metric file: " << d.log();
  }
  EXPECT_THAT(r.output, HasSubstr("read-outs mmio, rpc, perf"));  // oaprofd's file was used
  EXPECT_THAT(r.output, HasSubstr(" 0 failed, "));
  EXPECT_THAT(r.output, ::testing::ContainsRegex("skip +driver-accepts-configs"));
  EXPECT_THAT(r.output, HasSubstr("needs root: it adds every metric set"));
  struct stat st {};
  ASSERT_EQ(::stat(json.c_str(), &st), 0) << r.output;
  EXPECT_EQ(st.st_uid, kNobody) << "the report is the member's";
  const nlohmann::json report = nlohmann::json::parse(read_text(json));
  EXPECT_FALSE(report.at("failed").get<bool>());
  EXPECT_TRUE(report.at("device").at("simulated").get<bool>());
  std::size_t passed = 0;
  for (const auto& c : report.at("checks")) passed += c.at("verdict") == "pass";
  EXPECT_GE(passed, 12u) << report.dump(2);
  // Kept by the daemon, as root, where profile runs through it look.
  const fs::path kept = dir.path() / "selftest-sim-5916-i915.json";
  ASSERT_EQ(::stat(kept.c_str(), &st), 0) << d.log();
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_THAT(d.log(), HasSubstr(fmt::format("selftest started for uid {}", kNobody)));
  EXPECT_THAT(d.log(), HasSubstr(" checks, 0 failed; result kept in " + kept.string()));

  // A fault knob is the simulator's for a local run only: refused before anything is sent.
  const auto fault = run_as_member({OAPROF_BIN, "selftest", "--daemon", "always", "--device", "sim",
                                    "--quick", "--sim-fault", "rapl-stuck"},
                                   work, d.socket());
  EXPECT_EQ(fault.status, 2) << fault.output;
  EXPECT_THAT(fault.output, HasSubstr("--sim-fault is not sent to oaprofd"));
  const std::string log = d.log();
  const auto first = log.find("selftest started");
  EXPECT_EQ(log.find("selftest started", first + 1), std::string::npos) << log;
}

// Issue 16: a part xe drives, through oaprofd. The daemon serves a simulated Lunar Lake with
// IGT's oa-lnl.xml from its own metric directory; oaprof asks for ComputeBasic over xe's stream,
// and gets PEC rows with the set's metrics and the Xe-cores xe's query gave.
TEST(OaprofdProcessTest, AnXe2PartProfilesThroughTheDaemon) {
  const SimDaemon sim(fs::path(OAPROF_IGT_XE_METRICS_DIR) / "oa-lnl.xml", "lnl", "xe.sock");
  const Daemon& d = sim.daemon;
  const fs::path csv = sim.dir.path() / "lnl.csv";
  const auto profile = [&](const std::string& access) {
    return sim.profile(
        fmt::format("--access {} --format auto --metric-set ComputeBasic -o {} -- "
                    "{} mad_vect4 --min-time 0",
                    access, csv.string(), KERNEL_RUNNER_BIN));
  };
  const auto r = profile("perf");
  if (SimDaemon::untrusted(r)) {
    GTEST_SKIP() << "the build directory cannot hold a trusted metric file: " << r.output;
  }
  ASSERT_EQ(r.status, 0) << r.output << d.log();
  EXPECT_THAT(r.output, HasSubstr("via oaprofd"));
  const auto rows = oaprof::testing::read_csv(csv);
  ASSERT_FALSE(rows.empty()) << r.output;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("kernel"), "mad_vect4");
    EXPECT_GT(std::stoull(row.at("A63")), 0u);  // the 64th PEC counter crossed the protocol
    EXPECT_FALSE(row.at("GPU_BUSY_percent").empty());
    EXPECT_THAT(row.at("flags"), HasSubstr("xe_periodic"));
    EXPECT_THAT(row.at("flags"), ::testing::Not(HasSubstr("topology_from_table")));
  }
  EXPECT_THAT(d.log(), HasSubstr("format PEC64u64, metric set ComputeBasic"));
  // The register read-outs are refused by the daemon with the reason.
  const auto mmio = profile("mmio");
  EXPECT_EQ(mmio.status, 2) << mmio.output;
  EXPECT_THAT(mmio.output, HasSubstr("use --access perf"));
}

// Issue 16: a Tiger Lake bound to xe, through oaprofd: the daemon's reply says xe drives it, so
// the client's rows are flagged as its snapshots are (periodic reports), though the PCI id alone
// is i915's by default.
TEST(OaprofdProcessTest, ATigerLakeBoundToXeProfilesThroughTheDaemonAsAnXePart) {
  const SimDaemon sim(fs::path(OAPROF_IGT_XE_METRICS_DIR) / "oa-tglgt2.xml", "tglgt2-xe",
                      "xe.sock");
  const Daemon& d = sim.daemon;
  const fs::path csv = sim.dir.path() / "tgl.csv";
  const auto r = sim.profile(fmt::format(
      "--access perf --format auto --metric-set RenderBasic -o {} -- {} mad_vect4 --min-time 0",
      csv.string(), KERNEL_RUNNER_BIN));
  if (SimDaemon::untrusted(r)) {
    GTEST_SKIP() << "the build directory cannot hold a trusted metric file: " << r.output;
  }
  ASSERT_EQ(r.status, 0) << r.output << d.log();
  const auto rows = oaprof::testing::read_csv(csv);
  ASSERT_FALSE(rows.empty()) << r.output;
  for (const auto& row : rows) {
    EXPECT_GT(std::stoull(row.at("A7")), 0u);
    EXPECT_THAT(row.at("flags"), HasSubstr("xe_periodic"));
  }
  EXPECT_THAT(d.log(), HasSubstr("format A32u40_A4u32_B8_C8, metric set RenderBasic"));
}

// Issue 17's sampled attribution through oaprofd: the session's periodic reads are the daemon's
// snapshots, one per period whatever the launches; the launches' records stay in the client.
// Issue 35: through oaprofd too, the simulated counters of a catalogue kernel follow its known
// work: oaprof resolves the layer's hint and hands the work to oaprofd with the kernel signal.
TEST(OaprofdProcessTest, SimulatedCountersThroughOaprofdMatchTheKernelsKnownWork) {
  const SimDaemon sim(fs::path(OAPROF_IGT_METRICS_DIR) / "oa-kblgt2.xml", "kblgt2", "work.sock");
  for (const std::string kernel : {"mad_vect4", "load_store_vect4"}) {
    const fs::path csv = sim.dir.path() / (kernel + ".csv");
    const auto r =
        sim.profile(fmt::format("--format 101 -q -o {} -- {} {} --min-time 1 "
                                "--max-repeats 2",
                                csv.string(), KERNEL_RUNNER_BIN, kernel));
    ASSERT_EQ(r.status, 0) << r.output << sim.daemon.log();
    const auto rows = oaprof::testing::read_csv(csv);
    ASSERT_FALSE(rows.empty()) << r.output;
    for (const auto& row : rows) oaprof::testing::expect_counts_match_known_work(row);
  }
}

TEST(OaprofdProcessTest, SampledAttributionThroughOaprofdAttributesEveryLaunch) {
  const SimDaemon sim(fs::path(OAPROF_IGT_METRICS_DIR) / "oa-tglgt2.xml", "tglgt2", "samp.sock");
  const fs::path csv = sim.dir.path() / "sampled.csv";
  const auto r = sim.profile(fmt::format(
      "--metric-set ComputeBasic --attribution sampled --sample-period 500us -o {} -- {} "
      "--min-time 20000 --max-repeats 4 mad_vect4",
      csv.string(), KERNEL_RUNNER_BIN));
  if (SimDaemon::untrusted(r)) {
    GTEST_SKIP() << "the build directory cannot hold a trusted metric file: " << r.output;
  }
  ASSERT_EQ(r.status, 0) << r.output << sim.daemon.log();
  const auto rows = oaprof::testing::read_csv(csv);
  ASSERT_GE(rows.size(), 2u) << r.output;
  for (const auto& row : rows) {
    EXPECT_THAT(row.at("flags"), ::testing::Not(HasSubstr("not_attributed")));
    EXPECT_FALSE(row.at("attribution_error").empty());
    EXPECT_GT(std::stod(row.at("gpu_time_ns")), 0);
    EXPECT_FALSE(row.at("EuActive_percent").empty());
  }
}

// Issue 20's kernel replay across sets, by a user through oaprofd: the client's session asks the
// daemon to switch sets by name between a launch's passes (the daemon reads the set's registers
// from the file the session opened), and the rows of three sets join as a local run's do.
TEST(OaprofdProcessTest, KernelReplayAcrossSetsSwitchesTheDaemonsSetByName) {
  const SimDaemon sim(fs::path(OAPROF_IGT_METRICS_DIR) / "oa-tglgt2.xml", "tglgt2", "sets.sock");
  const Daemon& d = sim.daemon;
  const fs::path csv = sim.dir.path() / "sets.csv";
  const auto r = sim.profile(fmt::format(
      "--metric-set ComputeBasic,L3_1,Sampler_1 -o {} -- {} --min-time 100000 --max-repeats 2 "
      "mad_vect4",
      csv.string(), KERNEL_RUNNER_BIN));
  if (SimDaemon::untrusted(r)) {
    GTEST_SKIP() << "the build directory cannot hold a trusted metric file: " << r.output;
  }
  ASSERT_EQ(r.status, 0) << r.output << d.log();
  const auto joined = oaprof::testing::read_csv(csv);
  ASSERT_EQ(joined.size(), 3u) << r.output;  // a warm-up and two repeats
  for (const auto& row : joined) {
    EXPECT_EQ(row.at("replay_passes"), "3");
    for (const char* set : {"ComputeBasic", "L3_1", "Sampler_1"}) {
      EXPECT_GT(std::stod(row.at(fmt::format("{}.gpu_time_ns", set))), 0) << set;
      EXPECT_THAT(row.at(fmt::format("{}.flags", set)), ::testing::Not(HasSubstr("pass_")));
    }
    EXPECT_FALSE(row.at("L3_1.L30Bank0InputAvailable_percent").empty());
  }
  EXPECT_THAT(r.output, HasSubstr("reprogrammed 6 times between passes"));
  EXPECT_THAT(d.log(), HasSubstr("switches among metric sets, now also L3_1"));
}

#ifndef ZE_SIM_APP  // not built here (libze-dev, clang-15 or llvm-spirv-15): the tests skip
#define ZE_SIM_APP ""
#define ZE_SIM_SPIRV ""
#endif

// Level Zero programs (issue 31) through a simulated oaprofd.
class OaprofdLevelZeroTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(ZE_SIM_APP).empty()) {
      GTEST_SKIP() << "no Level Zero test program here (libze-dev, clang-15 or llvm-spirv-15)";
    }
    daemon_.emplace(dir_, "sim");
  }
  // `ze_sim_app scenario` under oaprof through the daemon, with `env` before it; its rows in the
  // program's order of launches.
  std::vector<oaprof::testing::CsvRow> profile(const std::string& scenario,
                                               const std::string& options, const std::string& env,
                                               oaprof::testing::CommandResult& r) {
    r = oaprof::testing::run(fmt::format(
        "{} OAPROF_DAEMON_SOCKET={} {} --daemon always --device sim --energy none --idle-baseline "
        "off {} -q -o {} -- {} {} {}",
        env, daemon_->socket(), OAPROF_BIN, options, csv_.string(), ZE_SIM_APP, scenario,
        ZE_SIM_SPIRV));
    auto rows = oaprof::testing::read_csv(csv_);
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return std::stoull(a.at("launch")) < std::stoull(b.at("launch"));
    });
    return rows;
  }

  ScratchDir dir_;
  std::optional<Daemon> daemon_;
  fs::path csv_ = dir_.path() / "ze.csv";
};

// A Level Zero program's regular list through oaprofd, in both attributions as locally:
// bracketed kernel by kernel, sampled by kernel timestamps with an error bound; one row per
// execution of each kernel, named, with its group counts, in the program's order.
TEST_F(OaprofdLevelZeroTest, ALevelZeroProgramIsProfiledThroughTheDaemon) {
  for (const std::string attribution : {"bracketed", "sampled"}) {
    SCOPED_TRACE(attribution);
    oaprof::testing::CommandResult r;
    const auto rows = profile("regular", "--attribution " + attribution, "", r);
    ASSERT_EQ(r.status, 0) << r.output << daemon_->log();
    std::vector<std::string> launches;
    for (const auto& row : rows) {
      launches.push_back(row.at("kernel") + " " + row.at("global_size"));
      EXPECT_EQ(row.at("api"), "level-zero");
      EXPECT_GT(std::stod(row.at("gpu_time_ns")), 0);
      const auto error = row.find("attribution_error");  // sampled rows' column
      EXPECT_EQ(error != row.end() && !error->second.empty(), attribution == "sampled");
    }
    // The program's groups (2 of scale, 3 of add_one; after the reset 2 of add_one) of 32.
    EXPECT_EQ(launches, (std::vector<std::string>{"scale 64x1x1", "add_one 96x1x1", "scale 64x1x1",
                                                  "add_one 96x1x1", "scale 64x1x1",
                                                  "add_one 96x1x1", "add_one 64x1x1"}))
        << r.output;
  }
}

// Through oaprofd as locally, a Level Zero launch held by an event the host signals after the
// call (`barriers`: one on an immediate list, one on a regular list) has its one row, counted
// over a window wider than its kernel and flagged not_bracketed; the others are not.
TEST_F(OaprofdLevelZeroTest, ALaunchHeldByTheHostIsFlaggedThroughTheDaemon) {
  oaprof::testing::CommandResult r;
  // The layer's wait for a launch's waits, shortened for the test (a testing knob).
  const auto rows = profile("barriers", "", "OAPROF_ZE_HOST_WAIT_MS=1000", r);
  ASSERT_EQ(r.status, 0) << r.output << daemon_->log();
  EXPECT_THAT(r.output, HasSubstr("check held-until-signalled ok"));
  EXPECT_THAT(r.output, HasSubstr("check regular-held-until-signalled ok"));
  // The program's launches in order, `held=1` on those the host held.
  std::vector<bool> held;
  std::istringstream out(r.output);
  for (std::string line; std::getline(out, line);) {
    if (line.starts_with("launch ")) held.push_back(line.ends_with(" held=1"));
  }
  ASSERT_EQ(rows.size(), held.size()) << r.output;
  ASSERT_EQ(std::count(held.begin(), held.end(), true), 3) << r.output;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(fmt::format("launch {}: {}", i, rows[i].at("flags")));
    EXPECT_EQ(rows[i].at("flags").find("not_bracketed") != std::string::npos, held[i]);
    EXPECT_GT(std::stod(rows[i].at("gpu_ticks")), 0);
    EXPECT_FALSE(rows[i].at("kernel_ns").empty());
  }
}

TEST(OaprofdProcessTest, OaprofKeepsItsRowsAndSaysSoWhenOaprofdDiesMidRun) {
  ScratchDir dir;
  Daemon d(dir, "sim");
  const fs::path csv = dir.path() / "rows.csv";
  // The program measures some launches, kills the daemon, and launches again: the second
  // kernel_runner must run as if unprofiled, and oaprof must end with what it has. In a
  // sanitizer build the program's own leak check is off: LeakSanitizer crashes scanning the
  // thread-local storage of a program with the layer loaded (it does so with any oaprof run
  // there), and the program's status would hide oaprof's.
  const std::string program = fmt::format(
      "export ASAN_OPTIONS=${{ASAN_OPTIONS:+$ASAN_OPTIONS:}}detect_leaks=0; {0} mad_vect4 "
      "--max-repeats 20 && kill -9 {1} && {0} mad_vect4 --max-repeats 20",
      KERNEL_RUNNER_BIN, d.pid());
  const auto r = oaprof::testing::run(fmt::format(
      "OAPROF_DAEMON_SOCKET={} {} --daemon always --device sim --energy none --idle-baseline off "
      "-o {} -- /bin/sh -c '{}'",
      d.socket(), OAPROF_BIN, csv.string(), program));
  EXPECT_EQ(r.status, 5) << r.output;  // kExitSession: the program succeeded, the session broke
  EXPECT_THAT(r.output, HasSubstr("oaprof: warning: the session with oaprofd could not be "
                                  "closed: oaprofd at " +
                                  d.socket()));
  const auto rows = oaprof::testing::read_csv(csv);
  ASSERT_FALSE(rows.empty()) << r.output;
  for (const auto& row : rows) EXPECT_EQ(row.at("kernel"), "mad_vect4");
  // Every row written before the break is whole, and the summary counts them.
  EXPECT_THAT(r.output,
              HasSubstr(fmt::format("oaprof: {} rows written to {}", rows.size(), csv.string())));
  const std::string text = read_text(csv);
  EXPECT_TRUE(text.ends_with("\n"));
  EXPECT_EQ(d.stop(SIGKILL), 128 + SIGKILL);  // already dead: reaped
}

TEST(OaprofdProcessTest, ARelativeMetricsXmlReachesTheDaemonAsAnAbsolutePath) {
  ScratchDir dir;
  Daemon d(dir, "sim");
  std::ofstream(dir.path() / "mine.xml") << "<metrics/>";
  const auto run_oaprof = [&](const std::string& xml) {
    return oaprof::testing::run(fmt::format(
        "cd {} && OAPROF_DAEMON_SOCKET={} {} --daemon always --device sim --energy none "
        "--idle-baseline off --metric-set ComputeBasic --metrics-xml {} -q -o x.csv -- /bin/true",
        dir.path().string(), d.socket(), OAPROF_BIN, xml));
  };
  // The daemon judges the file the user meant (and refuses it: it is under /tmp, or the user's).
  const auto relative = run_oaprof("mine.xml");
  EXPECT_EQ(relative.status, 2) << relative.output;
  EXPECT_THAT(relative.output,
              HasSubstr("oaprofd refuses the metric file " + (dir.path() / "mine.xml").string()));
  EXPECT_THAT(relative.output, ::testing::Not(HasSubstr("needs an absolute path")));
  // A path longer than the protocol carries is refused here, never cut to another file.
  const std::string long_path = "/" + std::string(wire::kMaxTextBytes + 40, 'x') + ".xml";
  const auto too_long = run_oaprof(long_path);
  EXPECT_EQ(too_long.status, 2) << too_long.output;
  EXPECT_THAT(too_long.output,
              HasSubstr(fmt::format("cannot send the request to oaprofd: its metrics XML path is "
                                    "{} bytes, more than the {} the protocol carries",
                                    long_path.size(), wire::kMaxTextBytes)));
  EXPECT_THAT(d.log(), ::testing::Not(HasSubstr("xxxx")));
}

// A local run (no oaprofd) on the simulator with its registers in `regs`, journaling into the
// state directory `state_dir`, whose program writes its pid to `ready` once the unit is
// programmed and then waits. Returns oaprof's pid.
pid_t start_local_run(const fs::path& regs, const fs::path& state_dir, const fs::path& ready) {
  const std::string program =
      fmt::format("echo $$ > {0}.tmp && mv {0}.tmp {0} && exec sleep 600", ready.string());
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("OAPROF_STATE_DIR", state_dir.c_str(), 1);
    const std::string device = "sim:" + regs.string();
    const std::string csv = (state_dir / "killed.csv").string();
    ::execl(OAPROF_BIN, OAPROF_BIN, "--daemon", "never", "--device", device.c_str(), "--mode",
            "app", "--energy", "none", "--idle-baseline", "off", "-q", "-o", csv.c_str(), "--",
            "/bin/sh", "-c", program.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// A scratch directory (the state directory too) with a simulated register file in it, and the
// file as it was before anything programmed it.
struct SimRegisters {
  SimRegisters() {
    test_support::create_sim_file(regs);
    before = test_support::file_bytes(regs);
  }
  // The offsets that differ from `before`: none once every register is back.
  std::vector<std::size_t> changed() const {
    return test_support::differing_registers(before, test_support::file_bytes(regs));
  }
  bool has_state_file() const { return fs::exists(dir.path() / "state"); }
  // `oaprof --device sim:REGS` on its own, journaling into the scratch directory.
  std::string local_oaprof(const std::string& csv_name) const {
    return fmt::format(
        "OAPROF_STATE_DIR={} {} --daemon never --device sim:{} --mode app --energy none "
        "--idle-baseline off -q -o {}/{} -- /bin/true",
        dir.path().string(), OAPROF_BIN, regs.string(), dir.path().string(), csv_name);
  }

  ScratchDir dir;
  fs::path regs = dir.path() / "regs";
  std::vector<char> before;
};

// Starts a local run, checks that it keeps a second one out, and kills it with SIGKILL once it
// has programmed the unit.
void kill_a_local_run(const SimRegisters& sim) {
  const fs::path ready = sim.dir.path() / "ready";
  const pid_t oaprof_pid = start_local_run(sim.regs, sim.dir.path(), ready);
  for (int i = 0; i < 3000 && !fs::exists(ready); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(fs::exists(ready)) << "the local run never started its program";
  const auto busy = oaprof::testing::run(sim.local_oaprof("busy.csv"));
  EXPECT_EQ(busy.status, 3) << busy.output;
  EXPECT_THAT(busy.output, HasSubstr(fmt::format("busy: the OA unit is held by uid {}, pid {}",
                                                 ::getuid(), oaprof_pid)));
  ::kill(oaprof_pid, SIGKILL);
  ::waitpid(oaprof_pid, nullptr, 0);
  const std::string program_pid = read_text(ready);
  if (!program_pid.empty()) ::kill(std::stoi(program_pid), SIGKILL);
  EXPECT_FALSE(sim.changed().empty()) << "the killed run left nothing programmed";
  EXPECT_TRUE(sim.has_state_file()) << "the killed run journaled nothing";
}

TEST(LocalRunTest, TheNextLocalRunRestoresWhatASigkilledOneLeft) {
  SimRegisters sim;
  kill_a_local_run(sim);
  // The next run restores first; had it not, its own restore at the end would put back the
  // killed run's programming, not the registers as they were.
  const auto next = oaprof::testing::run(sim.local_oaprof("next.csv"));
  EXPECT_EQ(next.status, 0) << next.output;
  EXPECT_THAT(next.output, HasSubstr(fmt::format("that a crashed session of uid {}", ::getuid())));
  EXPECT_EQ(sim.changed(), std::vector<std::size_t>{});
  EXPECT_FALSE(sim.has_state_file());
}

TEST(LocalRunTest, OaprofdStartingAfterASigkilledLocalRunRestoresIt) {
  SimRegisters sim;
  kill_a_local_run(sim);
  Daemon d(sim.dir, "sim:" + sim.regs.string());
  EXPECT_EQ(sim.changed(), std::vector<std::size_t>{});
  EXPECT_FALSE(sim.has_state_file());
  EXPECT_THAT(d.log(), HasSubstr(fmt::format("that a crashed session of uid {}", ::getuid())));
}

TEST(OaprofdProcessTest, OaprofSaysHowToStartAnAbsentDaemon) {
  ScratchDir dir;
  const std::string cmd = fmt::format(
      "OAPROF_DAEMON_SOCKET={}/none.sock {} --daemon always --device sim -q -o "
      "{}/x.csv -- /bin/true 2>&1",
      dir.path().string(), OAPROF_BIN, dir.path().string());
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) text += buf;
  const int status = ::pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 3) << text;  // kExitSetup
  EXPECT_THAT(text, HasSubstr(fmt::format("oaprofd is not running at {}/none.sock: start it with "
                                          "`systemctl start oaprofd.socket` or run `sudo oaprof "
                                          "...`; see `oaprof doctor`",
                                          dir.path().string())));
}

TEST(OaprofdProcessTest, SocketActivationReadinessAndJournalLevels) {
  ScratchDir dir;
  // What systemd does: bind and listen, pass the socket as fd 3 with LISTEN_PID/LISTEN_FDS, and
  // wait for READY=1 on NOTIFY_SOCKET.
  const std::string sock = (dir.path() / "activated.sock").string();
  const int listen_fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, sock.c_str());
  ASSERT_EQ(::bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listen_fd, 4), 0);
  const std::string notify = (dir.path() / "notify").string();
  const int notify_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un naddr{};
  naddr.sun_family = AF_UNIX;
  std::strcpy(naddr.sun_path, notify.c_str());
  ASSERT_EQ(::bind(notify_fd, reinterpret_cast<sockaddr*>(&naddr), sizeof naddr), 0);
  timeval tv{10, 0};
  ::setsockopt(notify_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const fs::path log = dir.path() / "journal.log";

  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(listen_fd, 3);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDERR_FILENO);
    ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
    ::setenv("LISTEN_FDS", "1", 1);
    ::setenv("NOTIFY_SOCKET", notify.c_str(), 1);
    ::setenv("JOURNAL_STREAM", "8:1234", 1);
    // --socket names a path nobody binds: the passed socket is used instead.
    ::execl(OAPROFD_BIN, OAPROFD_BIN, "--socket", (dir.path() / "unused.sock").c_str(),
            "--state-dir", dir.path().c_str(), "--device", "sim", "--group",
            std::to_string(::getgid()).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(listen_fd);
  char buf[64] = {};
  ASSERT_EQ(::recv(notify_fd, buf, sizeof buf - 1, 0), 7) << "no READY=1";
  EXPECT_STREQ(buf, "READY=1");
  {
    session::DaemonClient c(sock);
    EXPECT_EQ(c.open(open_request()).label, "simulated");
    c.close();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "unused.sock"));
  ::kill(pid, SIGTERM);
  std::memset(buf, 0, sizeof buf);
  ASSERT_EQ(::recv(notify_fd, buf, sizeof buf - 1, 0), 10) << "no STOPPING=1";
  EXPECT_STREQ(buf, "STOPPING=1");
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ::close(notify_fd);
  std::ifstream in(log);
  std::string first;
  ASSERT_TRUE(std::getline(in, first));
  EXPECT_THAT(first, ::testing::StartsWith("<6>serving --device sim on the socket systemd passed"));
  EXPECT_TRUE(fs::exists(sock)) << "the socket is systemd's to remove";
}

}  // namespace
}  // namespace oaprof::daemon
