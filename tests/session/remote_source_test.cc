// oaprof's counter source through oaprofd (session/remote_source.cc) against an oaprofd that
// predates the kernel's known work (issue 35): such a daemon's decoder refuses a kernel signal
// that carries work as malformed. The source must then fall back to the plain signal, for that
// launch and every later one, and the run go on.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "ipc/wire.h"
#include "session/remote_source.h"

namespace oaprof::session {
namespace {
namespace wire = ipc::wire;

// What the fake daemon received: "hello", "kernel on", "kernel on+work", "kernel off".
std::string describe(const wire::Body& body) {
  if (std::holds_alternative<wire::Hello>(body)) return "hello";
  if (const auto* k = std::get_if<wire::Kernel>(&body)) {
    return std::string("kernel ") + (k->running ? "on" : "off") + (k->work ? "+work" : "");
  }
  return "other";
}

// An oaprofd that predates WorkHint's resolved work, on a socket of its own: it greets without a
// channel, refuses a kernel signal with work as its decoder would (kBadMessage, malformed), and
// takes every other request.
class OldDaemon {
 public:
  OldDaemon() {
    dir_ = std::filesystem::temp_directory_path() /
           ("oaprof-old-daemon-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "sock").string();
    listener_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
    const bool listening =
        ::bind(listener_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 &&
        ::listen(listener_, 1) == 0;
    EXPECT_TRUE(listening) << std::strerror(errno);
    if (listening) thread_ = std::thread([this] { serve(); });
  }
  ~OldDaemon() {
    if (thread_.joinable()) thread_.join();  // the client has hung up by now
    ::close(listener_);
    std::filesystem::remove_all(dir_);
  }
  const std::string& path() const { return path_; }
  // Read once the client is gone (the thread has ended).
  std::vector<std::string> received() {
    if (thread_.joinable()) thread_.join();
    return received_;
  }

 private:
  void serve() {
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    std::vector<std::uint8_t> buf(wire::kMaxMessageBytes);
    for (ssize_t n; (n = ::recv(fd, buf.data(), buf.size(), 0)) > 0;) {
      const auto decoded = wire::decode({buf.data(), static_cast<std::size_t>(n)});
      const auto* m = std::get_if<wire::Message>(&decoded);
      if (m == nullptr) break;
      received_.push_back(describe(m->body));
      const auto* k = std::get_if<wire::Kernel>(&m->body);
      const wire::Body reply =
          k != nullptr && k->work
              ? wire::Body{wire::Error{wire::ErrorCode::kBadMessage, "malformed kernel payload"}}
              : wire::Body{wire::Ok{}};
      const auto bytes = wire::encode({m->request_id, reply});
      if (::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) < 0) break;
    }
    ::close(fd);
  }

  std::filesystem::path dir_;
  std::string path_;
  int listener_ = -1;
  std::thread thread_;
  std::vector<std::string> received_;
};

TEST(RemoteSourceTest, AnOlderDaemonThatRefusesTheWorkGetsThePlainSignalFromThenOn) {
  OldDaemon daemon;
  {
    auto client = std::make_shared<DaemonClient>(daemon.path());
    auto source = make_remote_counter_source(client, oa::ReportFormat::kA32u40_A4u32_B8_C8,
                                             /*simulated=*/true);
    oa::KernelWork work;
    work.work_items = 4096;
    work.fp32_ops = 8'000'000;
    EXPECT_NO_THROW(source->kernel_running(true, &work));
    EXPECT_NO_THROW(source->kernel_running(false, nullptr));
    EXPECT_NO_THROW(source->kernel_running(true, &work));  // not offered the work again
    EXPECT_NO_THROW(source->kernel_running(false, nullptr));
  }
  EXPECT_EQ(daemon.received(), (std::vector<std::string>{"hello", "kernel on+work", "kernel on",
                                                         "kernel off", "kernel on", "kernel off"}));
}

}  // namespace
}  // namespace oaprof::session
