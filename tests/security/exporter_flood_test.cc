// oaprofd's Prometheus exporter against a local user who floods it with half-sent requests: more
// connections than its HTTP threads, each reopened as soon as the server drops it. Every user of
// the machine can reach the loopback page, so one of them must not be able to keep a scrape from
// being answered (issue 29, item 2: with civetweb's defaults, 2 threads and 30 s per request,
// six such connections made every scrape time out).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "daemon/exporter.h"
#include "tests/common/exporter_fixture.h"

namespace oaprof::daemon {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// A loopback TCP connection to `port`, or -1. Connecting waits at most `timeout`.
int connect_loopback(int port, std::chrono::seconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const timeval tv{static_cast<time_t>(timeout.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The attacker: `connections` connections that each send the start of a request and never its
// end; one the server drops (a timeout) is opened again at once, so the flood never thins.
class HalfSentRequestFlood {
 public:
  HalfSentRequestFlood(int port, int connections) : port_(port) {
    for (int i = 0; i < connections; ++i) fds_.push_back(open_one());
    thread_ = std::thread([this] { keep_up(); });
  }
  ~HalfSentRequestFlood() {
    stop_ = true;
    thread_.join();
    for (const int fd : fds_) ::close(fd);
  }
  HalfSentRequestFlood(const HalfSentRequestFlood&) = delete;
  HalfSentRequestFlood& operator=(const HalfSentRequestFlood&) = delete;

  // Connections the server dropped and the flood opened again.
  int reopened() const { return reopened_; }
  bool all_connected() const {
    return std::none_of(fds_.begin(), fds_.end(), [](int fd) { return fd < 0; });
  }

 private:
  int open_one() const {
    const int fd = connect_loopback(port_, std::chrono::seconds(5));
    static constexpr std::string_view kHalf = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (fd >= 0) (void)::send(fd, kHalf.data(), kHalf.size(), MSG_NOSIGNAL);
    return fd;
  }
  // Reads whatever the server says (an error page, then the end) and reopens what it closed.
  void keep_up() {
    std::vector<pollfd> polled(fds_.size());
    while (!stop_) {
      for (std::size_t i = 0; i < fds_.size(); ++i) polled[i] = {fds_[i], POLLIN, 0};
      if (::poll(polled.data(), polled.size(), 50) <= 0) continue;
      for (std::size_t i = 0; i < fds_.size(); ++i) {
        if (polled[i].revents == 0) continue;
        char buf[4096];
        if (::recv(fds_[i], buf, sizeof buf, MSG_DONTWAIT) > 0) continue;
        ::close(fds_[i]);
        fds_[i] = open_one();
        ++reopened_;
      }
    }
  }

  int port_;
  std::vector<int> fds_;
  std::atomic<bool> stop_ = false;
  std::atomic<int> reopened_ = 0;
  std::thread thread_;
};

// One scrape of /metrics that gives up at `deadline`: the body, or "" when none came by then.
std::string scrape_by(int port, Clock::time_point deadline) {
  const int fd = connect_loopback(port, std::chrono::seconds(30));
  if (fd < 0) return "";
  static constexpr std::string_view kRequest = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  std::string reply;
  if (::send(fd, kRequest.data(), kRequest.size(), MSG_NOSIGNAL) ==
      static_cast<ssize_t>(kRequest.size())) {
    for (auto left = deadline - Clock::now(); left > Clock::duration::zero();
         left = deadline - Clock::now()) {
      pollfd p{fd, POLLIN, 0};
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
      if (::poll(&p, 1, static_cast<int>(ms) + 1) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      reply.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  const auto body = reply.find("\r\n\r\n");
  return body == std::string::npos ? std::string() : reply.substr(body + 4);
}

// Three times as many half-sent requests as the exporter has threads, all queued before the
// scrape: each scrape is still answered, because no connection holds a thread for longer than
// the request timeout. The deadline is a generous bound (the flood costs a scrape about four
// request timeouts at most; 0.5 to 0.75 s measured), not a speed claim; without the bounds a
// scrape waits for minutes.
TEST(ExporterFloodTest, AFloodOfHalfSentRequestsCannotKeepAScrapeFromBeingAnswered) {
  test_support::SimulatedExporter exporter;
  HalfSentRequestFlood flood(exporter.port(), 3 * Exporter::kHttpThreads);
  ASSERT_TRUE(flood.all_connected());
  for (int scrape = 0; scrape < 3; ++scrape) {
    const std::string page = scrape_by(exporter.port(), Clock::now() + std::chrono::seconds(30));
    ASSERT_THAT(page, HasSubstr("oaprof_exporter_sampling")) << "scrape " << scrape;
  }
  // The server dropped the flood's requests (the bound at work) and the flood came back.
  EXPECT_GT(flood.reopened(), 0);
}

}  // namespace
}  // namespace oaprof::daemon
