// oaprofd's socket against a flood: more connections than its bound (all together and of one
// uid), a client that sends requests without reading the replies (none may be dropped unsaid),
// and one that never reads again (hung up on, with a log line, its session restored).
#include "daemon/oaprofd.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "session/remote_source.h"
#include "tests/common/daemon_test_util.h"

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
    thread_ = std::thread([this] { daemon_->run(); });
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
  // A connection the daemon has taken in: its hello is answered kOk.
  int served_client() {
    const int fd = test_support::connect_unix(socket());
    EXPECT_GE(fd, 0);
    fds_.push_back(fd);
    EXPECT_TRUE(send_hello(fd, 1));
    const auto reply = next_message(fd);
    EXPECT_TRUE(reply && std::holds_alternative<wire::Ok>(reply->body));
    return fd;
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
    ASSERT_TRUE(send_hello(fd, 1));
    const auto m = next_message(fd);
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

}  // namespace
}  // namespace oaprof::session
