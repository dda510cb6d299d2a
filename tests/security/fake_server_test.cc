// A privileged client steered to a server it should not trust: a socket served by another user
// (the path came from an environment variable that sudo kept), and a server that hands over a
// shared-memory channel it can still shrink under the client (a SIGBUS in root). Both clients,
// the layer's (ipc::Client) and oaprof's end to oaprofd (session::DaemonClient), refuse.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <thread>
#include <variant>

#include "base/ignore_result.h"
#include "ipc/client.h"
#include "ipc/shm_channel.h"
#include "ipc/unix_address.h"
#include "ipc/wire.h"
#include "session/remote_source.h"
#include "tests/security/hostile.h"

namespace oaprof::security {
namespace {

using ::testing::HasSubstr;

// Answers one hello on `fd` with kOk and `memfd` attached.
void answer_hello(int fd, int memfd) {
  std::vector<std::uint8_t> buf(ipc::wire::kMaxMessageBytes);
  const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
  ASSERT_GT(n, 0);
  const auto decoded = ipc::wire::decode({buf.data(), static_cast<std::size_t>(n)});
  const auto* hello = std::get_if<ipc::wire::Message>(&decoded);
  ASSERT_NE(hello, nullptr);
  const auto reply = ipc::wire::encode({hello->request_id, ipc::wire::Ok{}});
  ASSERT_TRUE(ipc::channel::send_with_fd(fd, reply, memfd));
}

// A memfd of a channel's size, with `seals` added.
int channel_memfd(int seals) {
  const int fd = ::memfd_create("fake-channel", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::ftruncate(fd, ipc::channel::kChannelBytes), 0);
  void* m = ::mmap(nullptr, ipc::channel::kChannelBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  EXPECT_NE(m, MAP_FAILED);
  ipc::channel::initialise(m);
  ::munmap(m, ipc::channel::kChannelBytes);
  if (seals != 0) {
    EXPECT_EQ(::fcntl(fd, F_ADD_SEALS, seals), 0);
  }
  return fd;
}

// Whether a client greeting a server that passes `memfd` ends up using it as its channel.
bool client_maps(int memfd) {
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  auto client = ipc::Client::adopt(sv[0], 5000);
  std::thread server([&] { answer_hello(sv[1], memfd); });
  std::string error;
  const bool greeted = client->hello(1, true, error);
  server.join();
  ::close(sv[1]);
  ::close(memfd);
  EXPECT_TRUE(greeted) << error;
  return client->has_channel();
}

TEST(FakeServerTest, AChannelTheServerCouldShrinkIsNotMapped) {
  // Unsealed, the server could truncate it after the client mapped it: the next access past the
  // new end would kill the client (root, under sudo) with SIGBUS.
  EXPECT_FALSE(client_maps(channel_memfd(0)));
  EXPECT_FALSE(client_maps(channel_memfd(F_SEAL_GROW)));
  // Sealed as oaprof's own servers seal it (ipc/channel_server.cc), it is used.
  EXPECT_TRUE(client_maps(channel_memfd(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)));
}

// A server listening at `address` as uid/gid 65534, in a child; killed by the destructor.
class ForeignServer {
 public:
  explicit ForeignServer(const std::string& address) {
    int ready[2];
    EXPECT_EQ(::pipe(ready), 0);
    pid_ = ::fork();
    if (pid_ == 0) serve(address, ready[1]);
    ::close(ready[1]);
    char c = 0;
    listening_ = ::read(ready[0], &c, 1) == 1;
    ::close(ready[0]);
  }
  ~ForeignServer() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  bool listening() const { return listening_; }

 private:
  [[noreturn]] static void serve(const std::string& address, int ready) {
    if (::setgid(kUserGroup) != 0 || ::setuid(kUser) != 0) ::_exit(1);
    const int s = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un addr{};
    const socklen_t len = ipc::unix_address(address, addr);
    if (::bind(s, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(s, 4) != 0) ::_exit(1);
    base::ignore_result(::write(ready, "r", 1));
    for (;;) (void)::accept(s, nullptr, nullptr);  // connections wait, unanswered
  }
  pid_t pid_ = -1;
  bool listening_ = false;
};

class ForeignServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "a server of another user needs root";
  }
};

TEST_F(ForeignServerTest, TheLayersClientRefusesAServerOfAnotherUser) {
  const std::string address = "@oaprof-foreign-" + std::to_string(::getpid());
  ForeignServer server(address);
  ASSERT_TRUE(server.listening());
  std::string error;
  EXPECT_EQ(ipc::Client::connect(address, error, 2000), nullptr);
  EXPECT_THAT(error, HasSubstr("served by uid 65534"));
}

TEST_F(ForeignServerTest, OaprofsEndToOaprofdRefusesAServerOfAnotherUser) {
  HostileTree tree;
  const std::string path = (tree.work() / "oaprofd.sock").string();
  ForeignServer server(path);
  ASSERT_TRUE(server.listening());
  try {
    session::DaemonClient client(path);
    ADD_FAILURE() << "connected to a socket served by uid 65534";
  } catch (const session::DaemonUnavailable& e) {
    EXPECT_THAT(e.what(), HasSubstr("will not talk to " + path));
    EXPECT_THAT(e.what(), HasSubstr("served by uid 65534"));
  }
}

}  // namespace
}  // namespace oaprof::security
