// oaprofd's socket against a flood: more connections than its bound (all together and of one
// uid), a client that sends requests without reading the replies (none may be dropped unsaid),
// one that never reads again (hung up on, with a log line, its session restored), one that hangs
// up and keeps refilling its shared-memory ring (it holds up no one), and one whose stream of
// slow requests through its ring would keep every other client waiting (each gets its turn).
#include "daemon/oaprofd.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "session/remote_source.h"
#include "tests/common/daemon_test_util.h"
#include "tests/security/hostile_channel.h"

namespace oaprof::session {
namespace {

namespace wire = ipc::wire;
using ::testing::HasSubstr;

// The next datagram on `fd` decoded, or nullopt after `timeout_ms` without one.
std::optional<wire::Message> next_message(int fd, int timeout_ms = 5000) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
  std::uint8_t buf[wire::kMaxMessageBytes];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  if (n <= 0) return std::nullopt;
  auto decoded = wire::decode({buf, static_cast<std::size_t>(n)});
  if (!std::holds_alternative<wire::Message>(decoded)) return std::nullopt;
  return std::get<wire::Message>(decoded);
}

bool send_hello(int fd, std::uint32_t id) {
  const auto bytes = wire::encode({id, wire::Hello{}});
  return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

class OaprofdFloodTest : public ::testing::Test {
 protected:
  void start(daemon::OaprofdOptions o) {
    test_support::create_sim_file(dir_.path() / "regs");
    daemon::ServiceOptions so;
    so.device.spec = oaprof::gpu::DeviceSpec::sim_file((dir_.path() / "regs"));
    so.state_dir = dir_.path();
    service_ = std::make_unique<daemon::DaemonService>(so);
    o.socket_path = socket();
    o.group = ::getgid();
    o.log = [this](int, const std::string& line) {
      std::lock_guard lock(log_mu_);
      log_ += line + "\n";
    };
    daemon_ = std::make_unique<daemon::Oaprofd>(*service_, o);
    thread_ = std::thread([this] {
      daemon_->run();
      returned_.store(true);
    });
  }
  void TearDown() override {
    if (daemon_) {
      daemon_->request_stop();
      thread_.join();
    }
    for (const int fd : fds_) ::close(fd);
  }
  std::string socket() const { return (dir_.path() / "d.sock").string(); }
  std::string log() {
    std::lock_guard lock(log_mu_);
    return log_;
  }
  // A connection the daemon has taken in: its hello is answered kOk (within `timeout_ms`).
  int served_client(int timeout_ms = 5000) {
    const int fd = test_support::connect_unix(socket());
    EXPECT_GE(fd, 0);
    fds_.push_back(fd);
    EXPECT_TRUE(send_hello(fd, 1));
    const auto reply = next_message(fd, timeout_ms);
    EXPECT_TRUE(reply && std::holds_alternative<wire::Ok>(reply->body));
    return fd;
  }
  // The reply to an open on `fd`, retried while the unit is busy, for up to `seconds`.
  std::optional<wire::Message> open_when_free(int fd, int seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    for (std::uint32_t id = 2;; ++id) {
      const auto bytes = wire::encode({id, open_request()});
      if (::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) < 0) return std::nullopt;
      auto m = next_message(fd, seconds * 1000);
      const auto* e = m ? std::get_if<wire::Error>(&m->body) : nullptr;
      if (e == nullptr || e->code != wire::ErrorCode::kBusy) return m;
      if (std::chrono::steady_clock::now() > deadline) return m;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  static wire::Open open_request() {
    wire::Open open;
    open.pid = 1;
    open.energy = "none";
    return open;
  }
  // Issue 29: a client that fills its ring with requests, keeps the mapping and goes on
  // refilling it after it has hung up its socket. Its requests open a session and close it, over
  // and over: each takes the daemon a while, so the ring is never seen empty. Null (and a
  // failure) where it could not be set up.
  std::unique_ptr<security::RingFlooder> flooder_that_hung_up() {
    auto hostile = std::make_unique<security::RingFlooder>(socket());
    EXPECT_TRUE(hostile->ready()) << "no channel";
    if (!hostile->ready()) return nullptr;
    hostile->flood({wire::encode({8, open_request()}), wire::encode({9, wire::Close{}})});
    if (!flood_is_answered(*hostile)) return nullptr;
    hostile->hang_up();
    return hostile;
  }
  // Whether the daemon answers `hostile`'s flood (sixteen replies more than its ring holds, so
  // the flooder has refilled it, within 60 s): its channel's thread is busy with it. Not a
  // multiple of the ring: with 64 slots, three rings of slow requests took 20 s under the
  // sanitizers.
  static bool flood_is_answered(const security::RingFlooder& hostile) {
    constexpr std::uint64_t kEnough = ipc::channel::kRingSlots + 16;
    for (int i = 0; i < 6000 && hostile.replies() < kEnough; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GE(hostile.replies(), kEnough) << "the daemon did not answer the flood";
    return hostile.replies() >= kEnough;
  }
  // Whether run() returned within `seconds` of request_stop(), which is what oaprofd's SIGTERM
  // handler calls.
  bool stops_within(int seconds) {
    daemon_->request_stop();
    for (int i = 0; i < seconds * 100 && !returned_.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return returned_.load();
  }
  // The refusal a connection past the bound gets at once, unasked; "" when it got none.
  std::string refusal_of_new_connection() {
    const int fd = test_support::connect_unix(socket());
    if (fd < 0) return "no connection";
    const auto m = next_message(fd, 2000);
    ::close(fd);
    if (!m || !std::holds_alternative<wire::Error>(m->body)) return "";
    EXPECT_EQ(std::get<wire::Error>(m->body).code, wire::ErrorCode::kBusy);
    return std::get<wire::Error>(m->body).message;
  }

  test_support::ScratchDir dir_;
  std::unique_ptr<daemon::DaemonService> service_;
  std::unique_ptr<daemon::Oaprofd> daemon_;
  std::thread thread_;
  std::atomic<bool> returned_{false};  // run() has returned
  std::vector<int> fds_;
  std::mutex log_mu_;
  std::string log_;
};

TEST_F(OaprofdFloodTest, ConnectionsPastTheBoundAreRefusedClearly) {
  daemon::OaprofdOptions o;
  o.max_clients = 8;
  o.max_clients_per_uid = 8;
  start(o);
  for (int i = 0; i < 8; ++i) (void)served_client();
  for (int i = 0; i < 40; ++i) {
    EXPECT_THAT(refusal_of_new_connection(),
                HasSubstr("busy: oaprofd serves at most 8 connections at once"));
  }
  EXPECT_EQ(daemon_->clients_refused(), 40u);
  // One gone, one more is served.
  ::close(fds_.back());
  fds_.pop_back();
  for (int i = 0; i < 100; ++i) {
    const int fd = test_support::connect_unix(socket());
    ASSERT_GE(fd, 0);
    // Until the daemon has seen the close, it refuses and hangs up at once, which the hello can
    // meet (EPIPE): that is a refusal too.
    const bool sent = send_hello(fd, 1);
    const auto m = sent ? next_message(fd) : std::nullopt;
    const bool ok = m && std::holds_alternative<wire::Ok>(m->body);
    ::close(fd);
    if (ok) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the close not yet seen
  }
  ADD_FAILURE() << "no connection was served after one closed";
}

TEST_F(OaprofdFloodTest, OneUserCannotTakeEveryConnection) {
  daemon::OaprofdOptions o;
  o.max_clients = 8;
  o.max_clients_per_uid = 2;
  start(o);
  (void)served_client();
  (void)served_client();
  EXPECT_THAT(
      refusal_of_new_connection(),
      HasSubstr(fmt::format("busy: uid {} already has 2 connections to oaprofd", ::getuid())));
}

TEST_F(OaprofdFloodTest, NoReplyIsDroppedWhenTheClientReadsLate) {
  start(daemon::OaprofdOptions{});
  const int fd = served_client();
  // Requests without reading until the daemon stops taking them (its replies have filled this
  // socket's queue, and it keeps the one that did not fit instead of dropping it).
  timeval tv{0, 200'000};
  ASSERT_EQ(::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv), 0);
  std::uint32_t sent = 0;
  while (sent < 20'000 && send_hello(fd, 100 + sent)) ++sent;
  ASSERT_LT(sent, 20'000u) << "the daemon never pushed back";
  std::uint32_t received = 0;
  while (received < sent) {
    const auto m = next_message(fd, 5000);
    if (!m) break;
    EXPECT_EQ(m->request_id, 100 + received) << "in order, none skipped";
    ++received;
  }
  EXPECT_EQ(received, sent) << "every request got its reply";
}

TEST_F(OaprofdFloodTest, AClientThatNeverReadsIsHungUpOnAndItsSessionEnds) {
  daemon::OaprofdOptions o;
  o.reply_timeout = std::chrono::milliseconds(300);
  start(o);
  const int fd = served_client();
  wire::Open open;
  open.pid = 1;
  open.energy = "none";
  const auto bytes = wire::encode({2, open});
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  const auto opened = next_message(fd);
  ASSERT_TRUE(opened && std::holds_alternative<wire::Opened>(opened->body));
  timeval tv{0, 200'000};
  ASSERT_EQ(::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv), 0);
  std::uint32_t sent = 0;
  while (sent < 20'000 && send_hello(fd, 100 + sent)) ++sent;
  for (int i = 0; i < 300 && daemon_->clients_dropped() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(daemon_->clients_dropped(), 1u);
  EXPECT_THAT(log(), HasSubstr(fmt::format("hung up on uid {}, pid {}: it did not read its reply "
                                           "for 300 ms",
                                           ::getuid(), ::getpid())));
  for (int i = 0; i < 300 && service_->session_open(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(service_->session_open()) << "the session of a client hung up on is restored";
  (void)served_client();  // and the daemon goes on serving
}

// Before: the daemon's loop, dropping the client, waited for its ring to be empty, which it
// never was: no other client, no exporter tick, no SIGTERM, and the session went on.
TEST_F(OaprofdFloodTest, AClientRefillingItsRingAfterHangingUpHoldsUpNoOtherClient) {
  start(daemon::OaprofdOptions{});
  const auto hostile = flooder_that_hung_up();
  ASSERT_NE(hostile, nullptr);
  // A second client is served, and can open a session: the first one's has ended, its OA unit
  // released, while its flood goes on.
  const int fd = served_client(20'000);
  const auto opened = open_when_free(fd, 20);
  ASSERT_TRUE(opened.has_value()) << "no answer to the second client's open";
  EXPECT_TRUE(std::holds_alternative<wire::Opened>(opened->body))
      << "the OA unit stayed with the client that hung up";
}

TEST_F(OaprofdFloodTest, AClientRefillingItsRingAfterHangingUpDoesNotKeepTheDaemonRunning) {
  start(daemon::OaprofdOptions{});
  const auto hostile = flooder_that_hung_up();
  ASSERT_NE(hostile, nullptr);
  EXPECT_TRUE(stops_within(60)) << "oaprofd did not stop (SIGTERM) while a client flooded its ring";
  EXPECT_FALSE(service_->session_open()) << "the session was not ended and restored";
}

TEST_F(OaprofdFloodTest, AClientRefillingItsRingCannotKeepTheDaemonRunningEither) {
  start(daemon::OaprofdOptions{});
  security::RingFlooder hostile(socket());
  ASSERT_TRUE(hostile.ready());
  hostile.flood({wire::encode({8, open_request()}), wire::encode({9, wire::Close{}})});
  ASSERT_TRUE(flood_is_answered(hostile));
  // Still connected: stopping answers what it queued, a ring's worth, not what it goes on
  // sending.
  EXPECT_TRUE(stops_within(60)) << "oaprofd did not stop (SIGTERM) while a client flooded its ring";
}

// Each request of this flood holds the service for a while (an open that takes the unit, fails
// on a set that does not exist, and restores it), and the channel's thread asks again at once;
// a socket client's requests must still get their turns while it runs. (The daemon-level guard:
// how often a lock that is not fair lets the loop in depends on where the kernel runs the
// threads, so the order itself is proven on the lock, in service_turns_test.cc.)
TEST_F(OaprofdFloodTest, OneClientsStreamOfSlowRequestsCannotStarveTheOthers) {
  start(daemon::OaprofdOptions{});
  security::RingFlooder hostile(socket());
  ASSERT_TRUE(hostile.ready());
  wire::Open slow = open_request();
  slow.metric_set = "NoSuchSet";
  hostile.flood({wire::encode({9, slow})});
  ASSERT_TRUE(flood_is_answered(hostile));
  const int fd = served_client(20'000);
  int answered = 0;
  for (std::uint32_t id = 2; id < 2 + 50; ++id) {
    ASSERT_TRUE(send_hello(fd, id));
    const auto reply = next_message(fd, 20'000);
    if (!reply) break;
    EXPECT_EQ(reply->request_id, id);
    ++answered;
  }
  EXPECT_EQ(answered, 50) << "a socket client was starved by another's flood of requests";
}

}  // namespace
}  // namespace oaprof::session
