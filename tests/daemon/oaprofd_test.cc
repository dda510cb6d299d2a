#include "daemon/oaprofd.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <thread>

#include <fmt/format.h>

#include "base/ignore_result.h"
#include "daemon/daemon_log.h"
#include "daemon/systemd.h"
#include "ipc/client.h"
#include "ipc/shm_channel.h"
#include "oa/delta.h"
#include "oa/report.h"
#include "session/remote_source.h"
#include "tests/common/daemon_test_util.h"

namespace oaprof::daemon {
namespace {

namespace wire = ipc::wire;
using test_support::ScratchDir;
using ::testing::HasSubstr;

// The "oaprof" group of these tests, no name needed. Without root the test's own group, so that
// the test (its client) is a member and the daemon can hand the socket to it.
const gid_t kTestGroup = ::geteuid() == 0 ? 4242 : ::getgid();
constexpr uid_t kNobody = 65534;

// oaprofd on a simulated register file, served from a thread of the test.
class OaprofdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    regs_ = dir_.path() / "regs";
    test_support::create_sim_file(regs_);
    ServiceOptions so;
    so.device.spec = oaprof::gpu::DeviceSpec::sim_file(regs_);
    so.state_dir = dir_.path();
    service_ = std::make_unique<DaemonService>(so);
    OaprofdOptions o;
    o.socket_path = (dir_.path() / "d.sock").string();
    o.group = kTestGroup;
    o.group_name = "oaprof-test";
    daemon_ = std::make_unique<Oaprofd>(*service_, o);
    // The scratch directory is root's 0700; others must reach the socket in it.
    ::chmod(dir_.path().c_str(), 0755);
    thread_ = std::thread([this] { daemon_->run(); });
  }
  void TearDown() override {
    daemon_->request_stop();
    thread_.join();
  }
  std::string socket() const { return (dir_.path() / "d.sock").string(); }

  static wire::Open open_request() {
    wire::Open o;
    o.pid = static_cast<std::uint32_t>(::getpid());
    o.energy = "none";
    return o;
  }

  // Runs `body` in a child process as uid/gid nobody with `groups`; returns its exit status.
  static int as_nobody(const std::vector<gid_t>& groups, const std::function<int()>& body) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(kNobody) != 0 ||
          ::setuid(kNobody) != 0) {
        ::_exit(90);
      }
      ::_exit(body());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  // Opens a session, retrying while the daemon is still ending the previous one.
  std::unique_ptr<session::DaemonClient> open_when_free() {
    for (int i = 0; i < 200; ++i) {
      auto c = std::make_unique<session::DaemonClient>(socket());
      try {
        (void)c->open(open_request());
        return c;
      } catch (const std::runtime_error& e) {
        if (std::string(e.what()).find("busy") == std::string::npos) throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "the session never became free";
    return nullptr;
  }

  ScratchDir dir_;
  std::filesystem::path regs_;
  std::unique_ptr<DaemonService> service_;
  std::unique_ptr<Oaprofd> daemon_;
  std::thread thread_;
};

TEST_F(OaprofdTest, TheSocketIsTheGroupsAndNoOneElses) {
  struct stat st {};
  ASSERT_EQ(::stat(socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, kTestGroup);
}

TEST_F(OaprofdTest, AUserOutsideTheGroupIsRefused) {
  if (::geteuid() != 0) {
    // Without root the daemon's group can be one the test is not in: then the test is refused.
    daemon_->request_stop();
    thread_.join();
    daemon_.reset();
    OaprofdOptions o;
    o.socket_path = socket();
    o.group = ::getgid() + 1;
    o.group_name = "oaprof-test";
    daemon_ = std::make_unique<Oaprofd>(*service_, o);
    thread_ = std::thread([this] { daemon_->run(); });
    const int fd = test_support::connect_unix(socket());
    ASSERT_GE(fd, 0);
    std::uint8_t buf[wire::kMaxMessageBytes];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    ASSERT_GT(n, 0);
    const auto m =
        std::get<wire::Message>(wire::decode(std::span(buf, static_cast<std::size_t>(n))));
    EXPECT_EQ(std::get<wire::Error>(m.body).code, wire::ErrorCode::kNotAuthorised);
    ::close(fd);
    return;
  }
  // Even if the socket's mode let everyone connect, the credentials check refuses.
  ::chmod(socket().c_str(), 0666);
  const int rc = as_nobody({}, [&] {
    // The daemon speaks first: one refusal (request id 0), then it hangs up.
    const int fd = test_support::connect_unix(socket());
    if (fd < 0) return 3;
    std::uint8_t buf[wire::kMaxMessageBytes];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return 4;
    const auto decoded = wire::decode(std::span(buf, static_cast<std::size_t>(n)));
    const auto* m = std::get_if<wire::Message>(&decoded);
    const auto* e = m != nullptr ? std::get_if<wire::Error>(&m->body) : nullptr;
    if (e == nullptr || e->code != wire::ErrorCode::kNotAuthorised) return 1;
    if (::recv(fd, buf, sizeof buf, 0) != 0) return 5;  // hung up
    return e->message.find("uid 65534 may not use oaprofd") != std::string::npos &&
                   e->message.find("oaprof-test") != std::string::npos
               ? 0
               : 2;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(daemon_->clients_refused(), 1u);

  ::chmod(socket().c_str(), 0660);
  const int no_access = as_nobody({}, [&] {
    try {
      session::DaemonClient c(socket());
      return 1;
    } catch (const session::DaemonUnavailable& e) {
      return std::string(e.what()).find("does not let you in") != std::string::npos ? 0 : 2;
    }
  });
  EXPECT_EQ(no_access, 0);
}

TEST_F(OaprofdTest, AGroupMemberWhoIsNotRootMayProfile) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another uid";
  const int rc = as_nobody({kTestGroup}, [&] {
    try {
      session::DaemonClient c(socket());
      const wire::Opened o = c.open(open_request());
      const wire::Body s = c.call(wire::Sample{3, wire::kSampleReport});
      if (!std::holds_alternative<wire::Sampled>(s) || !o.simulated) return 1;
      c.close();
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 2;
    }
  });
  EXPECT_EQ(rc, 0);
}

// The kernel signal only drives the simulator's workload model: a remote source sends it when the
// daemon's device is simulated, and leaves out the round trip for a real GPU. Seen through the
// simulated busy counter (A0), which advances only while the daemon was told a kernel runs.
TEST_F(OaprofdTest, TheKernelSignalReachesTheDaemonOnlyForASimulatedDevice) {
  for (const bool simulated : {true, false}) {
    auto client = std::shared_ptr<session::DaemonClient>(open_when_free());
    ASSERT_TRUE(client);
    auto source = session::make_remote_counter_source(client, oa::ReportFormat::kA32u40_A4u32_B8_C8,
                                                      simulated);
    const oa::Report before =
        oa::decode(oa::ReportFormat::kA32u40_A4u32_B8_C8, source->snapshot(1).bytes);
    source->kernel_running(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    source->kernel_running(false);
    const oa::Report after =
        oa::decode(oa::ReportFormat::kA32u40_A4u32_B8_C8, source->snapshot(2).bytes);
    const oa::CounterDeltas d = oa::compute_deltas(before, after);
    if (simulated) {
      EXPECT_GT(d.a[0], 0u) << "the simulated GPU never heard of the kernel";
    } else {
      EXPECT_EQ(d.a[0], 0u) << "a kernel signal went to the daemon for a real device";
    }
    source->stop();
  }
}

TEST_F(OaprofdTest, TwoClientsContendAndTheSecondGetsTheUnitAfterTheFirst) {
  session::DaemonClient first(socket());
  (void)first.open(open_request());
  session::DaemonClient second(socket());
  try {
    (void)second.open(open_request());
    ADD_FAILURE() << "the second open succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), ::testing::MatchesRegex(fmt::format(
                              ".*busy: held by uid {}, pid {} since 20[0-9-]+T[0-9:]+Z.*",
                              ::getuid(), ::getpid())));
  }
  first.close();
  const wire::Opened o = second.open(open_request());
  EXPECT_EQ(o.label, "simulated");
  second.close();
}

TEST_F(OaprofdTest, AClientKilledMidSessionLeavesEveryRegisterAsItWas) {
  const auto before = test_support::file_bytes(regs_);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(ready[0]);
    try {
      session::DaemonClient c(socket());
      (void)c.open(open_request());
      (void)c.call(wire::Kernel{true});
      base::ignore_result(::write(ready[1], "x", 1));
      ::pause();
    } catch (const std::exception&) {
    }
    ::_exit(1);
  }
  ::close(ready[1]);
  char x = 0;
  ASSERT_EQ(::read(ready[0], &x, 1), 1);
  ::close(ready[0]);
  // Mid-session: programmed, journaled.
  EXPECT_FALSE(test_support::differing_registers(before, test_support::file_bytes(regs_)).empty());
  EXPECT_TRUE(std::filesystem::exists(service_->state_file()));
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);

  auto next = open_when_free();  // proves the dead client's session ended
  ASSERT_NE(next, nullptr);
  next->close();
  EXPECT_EQ(test_support::differing_registers(before, test_support::file_bytes(regs_)),
            std::vector<std::size_t>{});
  EXPECT_FALSE(std::filesystem::exists(service_->state_file()));
}

TEST_F(OaprofdTest, MalformedDatagramsGetErrorsAndTheDaemonKeepsServing) {
  const int fd = test_support::connect_unix(socket());
  ASSERT_GE(fd, 0);
  const auto exchange = [&](const std::vector<std::uint8_t>& bytes) {
    EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
    std::uint8_t buf[wire::kMaxMessageBytes];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    EXPECT_GT(n, 0);
    return std::get<wire::Message>(wire::decode(std::span(buf, static_cast<std::size_t>(n))));
  };
  auto hello = wire::encode({3, wire::Hello{1, 0}});
  auto truncated = std::vector<std::uint8_t>(hello.begin(), hello.end() - 2);
  auto version = hello;
  version[4] = 2;
  auto type = hello;
  type[6] = 0x77;
  std::vector<std::uint8_t> huge(wire::kMaxMessageBytes + 100, 0xAB);
  for (const auto& bad : {truncated, version, type, std::vector<std::uint8_t>{0xFF}, huge}) {
    const wire::Message m = exchange(bad);
    ASSERT_TRUE(std::holds_alternative<wire::Error>(m.body));
  }
  EXPECT_EQ(std::get<wire::Error>(exchange(version).body).code,
            wire::ErrorCode::kUnsupportedVersion);
  EXPECT_EQ(std::get<wire::Error>(exchange(type).body).code, wire::ErrorCode::kUnknownType);
  const wire::Message ok = exchange(hello);
  EXPECT_EQ(ok.request_id, 3u);
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(ok.body));
  ::close(fd);
  // Another client is served too.
  session::DaemonClient c(socket());
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(c.call(wire::Hello{})));
}

TEST(OaprofdSocketTest, ALiveDaemonIsNotReplacedAndAStaleSocketIs) {
  ScratchDir dir;
  ServiceOptions so;
  so.device.spec = oaprof::gpu::DeviceSpec::sim();
  so.state_dir = dir.path();
  DaemonService service(so);
  OaprofdOptions o;
  o.socket_path = (dir.path() / "d.sock").string();
  {
    Oaprofd first(service, o);
    EXPECT_THROW(
        {
          try {
            Oaprofd second(service, o);
          } catch (const std::runtime_error& e) {
            EXPECT_THAT(e.what(), HasSubstr("another oaprofd already answers"));
            throw;
          }
        },
        std::runtime_error);
  }
  // A socket file nobody answers on (a killed daemon's) is taken over.
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, o.socket_path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
  EXPECT_NO_THROW(Oaprofd again(service, o));
}

TEST(OaprofdSocketTest, ASocketThatCannotBeTheGroupsIsLoggedAndStaysPrivate) {
  ScratchDir dir;
  const std::string path = (dir.path() / "d.sock").string();
  const auto report = dir.path() / "report";
  // In a user namespace of its own, with no gid mapped, even root cannot take the group as its
  // filesystem gid; unshare needs a process of one thread, so it is a child.
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWUSER) != 0) ::_exit(77);
    std::string log;
    {
      ServiceOptions so;
      so.device.spec = oaprof::gpu::DeviceSpec::sim();
      so.state_dir = dir.path();
      DaemonService service(so);
      OaprofdOptions o;
      o.socket_path = path;
      o.group = 4242;
      o.group_name = "oaprof-test";
      o.log = [&log](int level, const std::string& line) {
        log += fmt::format("<{}>{}\n", level, line);
      };
      Oaprofd d(service, o);
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) ::_exit(2);
      std::ofstream(report) << fmt::format("mode {:o}\n", st.st_mode & 0777) << log;
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "user namespaces are not available here";
  ASSERT_EQ(WEXITSTATUS(status), 0);
  std::ifstream in(report);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, ::testing::StartsWith("mode 600\n"));
  EXPECT_THAT(text, HasSubstr(fmt::format("<4>cannot give the socket {} to the group "
                                          "'oaprof-test' (gid 4242): the kernel refused that "
                                          "group as oaprofd's filesystem gid",
                                          path)));
  EXPECT_THAT(text, HasSubstr("only root can connect and members of 'oaprof-test' are refused"));
}

TEST(RefusalTest, RootAndGroupMembersOnly) {
  const std::vector<gid_t> none;
  const std::vector<gid_t> member{10, 4242};
  EXPECT_EQ(refusal({0, 0, 1}, none, std::nullopt, "oaprof"), std::nullopt);
  EXPECT_EQ(refusal({1000, 1000, 1}, member, 4242, "oaprof"), std::nullopt);
  EXPECT_EQ(refusal({1000, 4242, 1}, none, 4242, "oaprof"), std::nullopt);  // primary group
  const auto no = refusal({1000, 1000, 1}, none, 4242, "oaprof");
  ASSERT_TRUE(no.has_value());
  EXPECT_THAT(*no, HasSubstr("usermod -aG oaprof"));
  EXPECT_THAT(*refusal({1000, 1000, 1}, member, std::nullopt, "oaprof"),
              HasSubstr("does not exist"));
}

TEST(SystemdTest, ActivationNeedsOurPidAndAtLeastOneFd) {
  EXPECT_EQ(activated_socket({{"LISTEN_PID", "42"}, {"LISTEN_FDS", "1"}}, 42), 3);
  EXPECT_EQ(activated_socket({{"LISTEN_PID", "41"}, {"LISTEN_FDS", "1"}}, 42), std::nullopt);
  EXPECT_EQ(activated_socket({{"LISTEN_PID", "42"}, {"LISTEN_FDS", "0"}}, 42), std::nullopt);
  EXPECT_EQ(activated_socket({{"LISTEN_PID", "42x"}, {"LISTEN_FDS", "1"}}, 42), std::nullopt);
  EXPECT_EQ(activated_socket({}, 42), std::nullopt);
}

TEST(SystemdTest, NotifySendsADatagramToAPathOrAnAbstractSocket) {
  ScratchDir dir;
  for (const std::string& name :
       {(dir.path() / "notify").string(), fmt::format("@oaprofd-test-{}", ::getpid())}) {
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, name.data(), name.size());
    if (name[0] == '@') addr.sun_path[0] = '\0';
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() +
                                            (name[0] == '@' ? 0 : 1));
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0) << name;
    EXPECT_TRUE(notify_systemd(name, "READY=1"));
    char buf[32] = {};
    EXPECT_EQ(::recv(fd, buf, sizeof buf, MSG_DONTWAIT), 7);
    EXPECT_STREQ(buf, "READY=1");
    ::close(fd);
  }
  EXPECT_FALSE(notify_systemd("", "READY=1"));
  EXPECT_FALSE(notify_systemd((dir.path() / "nobody").string(), "READY=1"));
}

TEST(DaemonLogTest, JournalLinesCarryTheLevelTerminalLinesAWord) {
  EXPECT_EQ(format_log_line(6, "started", true), "<6>started\n");
  EXPECT_EQ(format_log_line(3, "two\nlines", true), "<3>two lines\n");
  EXPECT_EQ(format_log_line(4, "careful", false), "oaprofd: warning: careful\n");
  EXPECT_EQ(format_log_line(3, "bad", false), "oaprofd: error: bad\n");
  // What a client sends (an access, a format, a metric file's name) cannot forge a line: a CR
  // that would overwrite it on a terminal, an ESC sequence, a NUL, a DEL.
  const std::string hostile = std::string("mmio\r<3>forged\x1b[2K\t") + '\0' + "x\x7f";
  EXPECT_EQ(format_log_line(6, hostile, true), "<6>mmio\\x0d<3>forged\\x1b[2K\\x09\\x00x\\x7f\n");
  for (const char c : format_log_line(6, hostile, false)) {
    EXPECT_TRUE(c == '\n' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f)) << int(c);
  }
}

}  // namespace
}  // namespace oaprof::daemon

namespace oaprof::daemon {
namespace {

// This process's mapping of a channel oaprofd handed it, mapped once more (the client does not
// keep the descriptor, so it is found through /proc), as a hostile client writes it; null where
// /proc does not give it back. The layout is at the start of the mapping (munmap it).
ipc::channel::ChannelLayout* map_own_channel() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/map_files")) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(entry.path(), ec);
    if (ec || target.string().find("oaprof-channel") == std::string::npos) continue;
    const int m_fd = ::open(entry.path().c_str(), O_RDWR);
    if (m_fd < 0) return nullptr;
    void* m =
        ::mmap(nullptr, ipc::channel::kChannelBytes, PROT_READ | PROT_WRITE, MAP_SHARED, m_fd, 0);
    ::close(m_fd);
    if (m == MAP_FAILED) return nullptr;
    auto* layout = ipc::channel::attach(m, ipc::channel::kChannelBytes);
    if (layout == nullptr) ::munmap(m, ipc::channel::kChannelBytes);
    return layout;
  }
  return nullptr;
}

// A connection to the daemon at `path`, its descriptor kept for polling, said hello to with the
// channel asked for.
struct ChannelClient {
  explicit ChannelClient(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return;
    client = ipc::Client::adopt(::dup(fd), 5000);
    std::string error;
    greeted = client->hello(1, true, error) && client->has_channel();
  }
  ~ChannelClient() {
    client.reset();
    ::close(fd);
  }
  bool hung_up() const {
    pollfd p{fd, POLLIN, 0};
    for (int i = 0; i < 400; ++i) {
      if (::poll(&p, 1, 10) > 0 && (p.revents & (POLLHUP | POLLERR)) != 0) return true;
    }
    return false;
  }
  int fd = -1;
  std::unique_ptr<ipc::Client> client;
  bool greeted = false;
};

// Issue 17: a client's requests go through the shared-memory channel after its hello, with the
// same answers as on the socket; OAPROF_CHANNEL=off keeps it on the socket.
TEST_F(OaprofdTest, AClientTalksThroughTheChannelAndCloseRestoresEveryRegister) {
  const auto before = test_support::file_bytes(regs_);
  for (const bool channel : {true, false}) {
    if (!channel) ::setenv("OAPROF_CHANNEL", "off", 1);
    auto c = open_when_free();
    ::unsetenv("OAPROF_CHANNEL");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->has_channel(), channel);
    const wire::Body sampled = c->call(wire::Sample{7, wire::kSampleReport});
    const auto* s = std::get_if<wire::Sampled>(&sampled);
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->report.has_value());
    EXPECT_FALSE(
        test_support::differing_registers(before, test_support::file_bytes(regs_)).empty());
    c->close();
    EXPECT_EQ(test_support::differing_registers(before, test_support::file_bytes(regs_)),
              std::vector<std::size_t>{});
  }
}

// The client owns half of the mapping: one that scribbles over its ring's counters in the middle
// of a session is cut off, its session ends with every register put back, and the daemon serves
// the next client.
TEST_F(OaprofdTest, AClientThatCorruptsItsChannelIsCutOffAndItsSessionRestored) {
  const auto before = test_support::file_bytes(regs_);
  auto hostile = std::make_unique<ChannelClient>(socket());
  ASSERT_TRUE(hostile->greeted);
  std::string error;
  wire::Body opened;
  ASSERT_TRUE(hostile->client->exchange(open_request(), opened, error)) << error;
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(opened));
  EXPECT_FALSE(test_support::differing_registers(before, test_support::file_bytes(regs_)).empty());
  // A second mapping of the same memory, as a hostile client would write it.
  ipc::channel::ChannelLayout* layout = map_own_channel();
  if (layout == nullptr) GTEST_SKIP() << "/proc/self/map_files could not give the mapping back";
  layout->to_server.tail.store(1000);  // far more messages than there are slots
  ipc::channel::wake_consumer(layout->to_server);
  ::munmap(layout, ipc::channel::kChannelBytes);
  EXPECT_TRUE(hostile->hung_up()) << "oaprofd kept a client that corrupted its channel";
  hostile.reset();
  auto next = open_when_free();  // the corrupting client's session has ended
  ASSERT_NE(next, nullptr);
  next->close();
  EXPECT_EQ(test_support::differing_registers(before, test_support::file_bytes(regs_)),
            std::vector<std::size_t>{});
}

// A client that fills its ring with requests and never reads a reply holds only its own channel's
// thread: the daemon's loop and lock go on, and another client opens, samples and closes.
TEST_F(OaprofdTest, AChannelClientThatNeverReadsHoldsUpNoOtherClient) {
  ChannelClient hostile(socket());
  ASSERT_TRUE(hostile.greeted);
  ipc::channel::ChannelLayout* layout = map_own_channel();
  if (layout == nullptr) GTEST_SKIP() << "/proc/self/map_files could not give the mapping back";
  ipc::channel::Producer out(layout->to_server, layout->to_server_slots);
  // Twice the slots of each ring: the daemon answers until its replies fill the client's ring,
  // then waits for room that never comes, with requests still queued behind.
  int pushed = 0;
  for (std::uint32_t id = 2; id < 2 + 2 * ipc::channel::kRingSlots; ++id) {
    const auto bytes = wire::encode({id, wire::Sample{id, wire::kSampleReport}});
    if (out.try_push(bytes) == ipc::channel::RingStatus::kOk) ++pushed;
    ipc::channel::wake_consumer(layout->to_server);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_GT(pushed, static_cast<int>(ipc::channel::kRingSlots));
  const auto started = std::chrono::steady_clock::now();
  auto other = open_when_free();
  ASSERT_NE(other, nullptr);
  const wire::Body sampled = other->call(wire::Sample{1, wire::kSampleReport});
  EXPECT_TRUE(std::holds_alternative<wire::Sampled>(sampled));
  other->close();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  ::munmap(layout, ipc::channel::kChannelBytes);
}

}  // namespace
}  // namespace oaprof::daemon
