#include "session/server.h"

#include <grp.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <thread>
#include <variant>
#include <vector>

#include "ipc/client.h"
#include "tests/common/sim_fixture.h"

namespace oaprof::session {
namespace {
namespace wire = ipc::wire;

class ServerTest : public ::testing::Test {
 protected:
  ServerTest() {
    dir_ = std::filesystem::temp_directory_path() / ("oaprof-server-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "s.sock").string();
    session_.start();
    server_ = std::make_unique<Server>(path_, session_, std::vector<uid_t>{::getuid()});
    server_->start();
  }
  ~ServerTest() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  int raw_connect() {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path_.c_str());
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    return fd;
  }

  wire::Message raw_call(int fd, const std::vector<std::uint8_t>& bytes) {
    EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
    std::uint8_t buf[wire::kMaxMessageBytes];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    EXPECT_GT(n, 0);
    auto d = wire::decode({buf, static_cast<std::size_t>(n > 0 ? n : 0)});
    EXPECT_TRUE(std::holds_alternative<wire::Message>(d));
    return std::get<wire::Message>(d);
  }

  std::filesystem::path dir_;
  std::string path_;
  test_support::SimFixture sim_;
  std::atomic<int> rows_{0};
  // While set, a row holds up the thread that hands it over (a privileged side that is behind).
  std::atomic<bool> hold_rows_{false};
  Session session_{
      *sim_.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
      [this](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {
        while (hold_rows_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        rows_++;
      }};
  std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, AClientMeasuresALaunchOverTheRealSocket) {
  std::string error;
  auto client = ipc::Client::connect(path_, error);
  ASSERT_TRUE(client) << error;
  ASSERT_TRUE(client->call(wire::Hello{1, 0}, error)) << error;
  ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kBefore}, error)) << error;
  ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kAfter}, error)) << error;
  wire::Launch l;
  l.work_dim = 1;
  l.kernel_name = "k";
  l.flags = wire::kLaunchProgramIndex;
  ASSERT_TRUE(client->call(l, error)) << error;
  EXPECT_EQ(rows_.load(), 1);
  // An error reply reaches the client as a failed call with the reason.
  EXPECT_FALSE(client->call(l, error));
  EXPECT_NE(error.find("not snapshotted"), std::string::npos) << error;
}

TEST_F(ServerTest, MalformedMessagesGetErrorsAndTheServerKeepsServing) {
  const int fd = raw_connect();
  const auto garbage = raw_call(fd, {1, 2, 3});
  ASSERT_TRUE(std::holds_alternative<wire::Error>(garbage.body));
  EXPECT_EQ(std::get<wire::Error>(garbage.body).code, wire::ErrorCode::kBadMessage);

  auto wrong_version = wire::encode({42, wire::Hello{1, 0}});
  wrong_version[4] = 7;
  const auto v = raw_call(fd, wrong_version);
  EXPECT_EQ(v.request_id, 42u);
  EXPECT_EQ(std::get<wire::Error>(v.body).code, wire::ErrorCode::kUnsupportedVersion);

  const auto oversized = raw_call(fd, std::vector<std::uint8_t>(wire::kMaxMessageBytes + 10, 0));
  EXPECT_NE(std::get<wire::Error>(oversized.body).message.find("exceeds"), std::string::npos);

  const auto ok = raw_call(fd, wire::encode({43, wire::Hello{1, 0}}));
  EXPECT_EQ(ok.request_id, 43u);
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(ok.body));
  EXPECT_EQ(server_->messages_rejected(), 3u);
  ::close(fd);
}

TEST_F(ServerTest, AClientThatDiesMidLaunchIsCleanedUp) {
  {
    std::string error;
    auto client = ipc::Client::connect(path_, error);
    ASSERT_TRUE(client);
    ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kBefore}, error));
  }  // closes the socket without finishing the launch
  for (int i = 0; i < 200 && session_.launches_dropped() == 0; ++i) ::usleep(5000);
  EXPECT_EQ(session_.launches_dropped(), 1u);
  // A new client is served normally.
  std::string error;
  auto client = ipc::Client::connect(path_, error);
  ASSERT_TRUE(client);
  EXPECT_TRUE(client->call(wire::Hello{2, 0}, error)) << error;
}

wire::Launch finished_launch(std::uint64_t id) {
  wire::Launch l;
  l.launch_id = id;
  l.work_dim = 1;
  l.kernel_name = "k";
  l.flags = wire::kLaunchProgramIndex;
  return l;
}

// The layer's fast path: the hello brings a shared-memory channel and every further message of
// the launch goes through it, answered exactly as over the socket.
TEST_F(ServerTest, AClientWithAChannelMeasuresLaunchesThroughIt) {
  std::string error;
  auto client = ipc::Client::connect(path_, error);
  ASSERT_TRUE(client) << error;
  ASSERT_TRUE(client->hello(1, true, error)) << error;
  ASSERT_TRUE(client->has_channel());
  EXPECT_EQ(server_->channels_opened(), 1u);
  for (std::uint64_t id = 0; id < 50; ++id) {
    ASSERT_TRUE(client->call(wire::Snapshot{id, wire::Phase::kBefore}, error)) << error;
    ASSERT_TRUE(client->call(wire::Snapshot{id, wire::Phase::kAfter}, error)) << error;
    ASSERT_TRUE(client->post(finished_launch(id), error)) << error;
  }
  // The last record's reply comes with the next call; an error still reaches the caller.
  EXPECT_FALSE(client->call(wire::Snapshot{99, wire::Phase::kAfter}, error));
  EXPECT_NE(error.find("no 'before'"), std::string::npos) << error;
  EXPECT_EQ(rows_.load(), 50);
  EXPECT_EQ(server_->messages_rejected(), 0u);
}

TEST_F(ServerTest, AClientThatAsksForNoChannelStaysOnTheSocket) {
  std::string error;
  auto client = ipc::Client::connect(path_, error);
  ASSERT_TRUE(client) << error;
  ASSERT_TRUE(client->hello(1, false, error)) << error;
  EXPECT_FALSE(client->has_channel());
  ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kBefore}, error)) << error;
  ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kAfter}, error)) << error;
  ASSERT_TRUE(client->call(finished_launch(0), error)) << error;
  EXPECT_EQ(rows_.load(), 1);
  EXPECT_EQ(server_->channels_opened(), 0u);
}

// A program that posts its last launch record and exits at once: the record is still in the
// ring when the socket closes, and must become a row all the same.
TEST_F(ServerTest, ARecordLeftInTheChannelByAnExitingClientIsKept) {
  for (std::uint64_t id = 0; id < 20; ++id) {
    std::string error;
    auto client = ipc::Client::connect(path_, error);
    ASSERT_TRUE(client) << error;
    ASSERT_TRUE(client->hello(1, true, error)) << error;
    ASSERT_TRUE(client->call(wire::Snapshot{id, wire::Phase::kBefore}, error)) << error;
    ASSERT_TRUE(client->call(wire::Snapshot{id, wire::Phase::kAfter}, error)) << error;
    ASSERT_TRUE(client->post(finished_launch(id), error)) << error;
  }                 // each client goes right after its post
  server_.reset();  // stopping drains whatever the channels still hold
  EXPECT_EQ(rows_.load(), 20);
  EXPECT_EQ(session_.launches_dropped(), 0u);
}

// A client that speaks the channel's rings itself: it sees every reply the server publishes.
struct RawChannel {
  int fd = -1;
  int mapping_fd = -1;
  void* mapping = MAP_FAILED;
  ipc::channel::ChannelLayout* layout = nullptr;
  ~RawChannel() {
    if (mapping != MAP_FAILED) ::munmap(mapping, ipc::channel::kChannelBytes);
    if (mapping_fd >= 0) ::close(mapping_fd);
    if (fd >= 0) ::close(fd);
  }
};

// Says hello on `fd` with `flags` and maps the channel its reply hands over.
void open_raw_channel(RawChannel& c, std::uint32_t flags) {
  const auto hello = wire::encode({1, wire::Hello{1, flags}});
  ASSERT_EQ(::send(c.fd, hello.data(), hello.size(), 0), static_cast<ssize_t>(hello.size()));
  std::uint8_t buf[wire::kMaxMessageBytes];
  ASSERT_GT(ipc::channel::receive_with_fd(c.fd, buf, &c.mapping_fd), 0);
  ASSERT_GE(c.mapping_fd, 0);
  c.mapping = ::mmap(nullptr, ipc::channel::kChannelBytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                     c.mapping_fd, 0);
  ASSERT_NE(c.mapping, MAP_FAILED);
  c.layout = ipc::channel::attach(c.mapping, ipc::channel::kChannelBytes);
  ASSERT_NE(c.layout, nullptr);
}

// The replies a channel opened with `flags` publishes for two bracketed launches, their records
// and a record the session refuses (launch 99, never snapshotted), in order.
std::vector<wire::Message> replies_to_two_launches(RawChannel& c) {
  ipc::channel::Producer out(c.layout->to_server, c.layout->to_server_slots);
  ipc::channel::Consumer in(c.layout->to_client, c.layout->to_client_slots);
  std::vector<wire::Message> replies;
  std::uint8_t buf[wire::kMaxMessageBytes];
  // Waits for the replies to reach `request_id` (generously: milliseconds are expected).
  auto read_until = [&](std::uint32_t request_id) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      std::size_t n = 0;
      if (in.try_pop(buf, &n) != ipc::channel::RingStatus::kOk) {
        in.wait_for_message({});
        continue;
      }
      replies.push_back(std::get<wire::Message>(wire::decode({buf, n})));
      if (replies.back().request_id == request_id) return;
    }
    ADD_FAILURE() << "no reply to request " << request_id;
  };
  std::uint32_t id = 2;
  for (std::uint64_t launch = 0; launch < 2; ++launch) {
    for (const wire::Body& b : std::vector<wire::Body>{wire::Snapshot{launch, wire::Phase::kBefore},
                                                       wire::Snapshot{launch, wire::Phase::kAfter},
                                                       finished_launch(launch)}) {
      EXPECT_EQ(out.try_push(wire::encode({id++, b})), ipc::channel::RingStatus::kOk);
    }
  }
  EXPECT_EQ(out.try_push(wire::encode({id, finished_launch(99)})), ipc::channel::RingStatus::kOk);
  read_until(id);
  return replies;
}

// Issue 33: a layer that asked for error replies only gets none for an accepted launch record,
// so neither side waits for room for one per launch; a refused record still gets its error.
TEST_F(ServerTest, ALaunchRecordIsAnsweredOnlyWhenRefusedIfTheHelloAskedSo) {
  RawChannel c;
  c.fd = raw_connect();
  ASSERT_NO_FATAL_FAILURE(
      open_raw_channel(c, ipc::channel::kHelloWantsChannel | ipc::channel::kHelloLaunchErrorsOnly));
  const std::vector<wire::Message> replies = replies_to_two_launches(c);
  std::vector<std::uint32_t> ids;
  for (const wire::Message& m : replies) ids.push_back(m.request_id);
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{2, 3, 5, 6, 8})) << "the records 4 and 7 got replies";
  ASSERT_FALSE(replies.empty());
  EXPECT_TRUE(std::holds_alternative<wire::Error>(replies.back().body));
  EXPECT_EQ(rows_.load(), 2);
}

// A layer that predates the flag (or an old privileged side's peer) gets a kOk per record as ever.
TEST_F(ServerTest, ALaunchRecordIsAnsweredWhenTheHelloDidNotAskForErrorsOnly) {
  RawChannel c;
  c.fd = raw_connect();
  ASSERT_NO_FATAL_FAILURE(open_raw_channel(c, ipc::channel::kHelloWantsChannel));
  const std::vector<wire::Message> replies = replies_to_two_launches(c);
  ASSERT_EQ(replies.size(), 7u);
  EXPECT_EQ(replies[2].request_id, 4u);
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(replies[2].body));
  EXPECT_TRUE(std::holds_alternative<wire::Error>(replies.back().body));
  EXPECT_EQ(rows_.load(), 2);
}

// The client keeps to its word: with error replies only, a launch record cannot wait for a kOk.
TEST_F(ServerTest, AClientThatAskedForErrorsOnlyPostsItsLaunchRecords) {
  std::string error;
  auto client = ipc::Client::connect(path_, error);
  ASSERT_TRUE(client) << error;
  ASSERT_TRUE(client->hello(1, true, error, nullptr, true)) << error;
  ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kBefore}, error)) << error;
  ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kAfter}, error)) << error;
  EXPECT_FALSE(client->call(finished_launch(0), error));
  EXPECT_NE(error.find("posted"), std::string::npos) << error;
  ASSERT_TRUE(client->post(finished_launch(0), error)) << error;
  // Its refusal of a record no snapshot announced still reaches the layer.
  ASSERT_TRUE(client->post(finished_launch(7), error)) << error;
  ASSERT_TRUE(client->call(wire::Snapshot{1, wire::Phase::kBefore}, error)) << error;
  EXPECT_NE(client->take_post_error().find("not snapshotted"), std::string::npos);
}

// A privileged side that is behind does not hold up a client that posts only what fits: with
// the server's channel thread held up by a row, the ring fills, post_if_room says so at once
// (nothing sent), and once the server moves again the next post goes.
TEST_F(ServerTest, PostingIfRoomNeverWaitsForAServerThatIsBehind) {
  std::string error;
  auto client = ipc::Client::connect(path_, error);
  ASSERT_TRUE(client) << error;
  ASSERT_TRUE(client->hello(1, true, error, nullptr, true)) << error;
  ASSERT_TRUE(client->has_channel());
  ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kBefore}, error)) << error;
  ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kAfter}, error)) << error;
  hold_rows_ = true;
  ASSERT_EQ(client->post_if_room(finished_launch(0), error), ipc::Client::Posted::kSent) << error;
  // Records no snapshot announced (refused, once the server takes them): each fills a slot.
  std::size_t sent = 0;
  ipc::Client::Posted posted = ipc::Client::Posted::kSent;
  for (std::uint64_t id = 1; id <= 4 * ipc::channel::kRingSlots; ++id) {
    posted = client->post_if_room(finished_launch(id), error);
    if (posted != ipc::Client::Posted::kSent) break;
    ++sent;
  }
  EXPECT_EQ(posted, ipc::Client::Posted::kFull) << error;
  EXPECT_LE(sent, ipc::channel::kRingSlots);
  EXPECT_EQ(rows_.load(), 0);
  hold_rows_ = false;
  for (int i = 0; i < 10'000 && posted == ipc::Client::Posted::kFull; ++i) {
    ASSERT_TRUE(client->read_arrived_replies(error)) << error;
    posted = client->post_if_room(finished_launch(1000), error);
    if (posted == ipc::Client::Posted::kFull)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(posted, ipc::Client::Posted::kSent) << error;
  for (int i = 0; i < 10'000 && rows_.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(rows_.load(), 1);
}

// The client owns half of the mapping: when it scribbles over the ring's counters the server
// cuts it off (its socket is shut down) and goes on serving everyone else.
TEST_F(ServerTest, AClientThatCorruptsItsChannelIsCutOffAndOthersAreServed) {
  RawChannel c;
  c.fd = raw_connect();
  ASSERT_NO_FATAL_FAILURE(open_raw_channel(c, ipc::channel::kHelloWantsChannel));
  // Sealed: the client cannot shrink the mapping under the server.
  EXPECT_NE(::ftruncate(c.mapping_fd, 16), 0);
  c.layout->to_server.tail.store(1000);  // far more messages than there are slots
  ipc::channel::wake_consumer(c.layout->to_server);
  pollfd p{c.fd, POLLIN, 0};
  bool hung_up = false;
  for (int i = 0; i < 400 && !hung_up; ++i) {
    hung_up = ::poll(&p, 1, 10) > 0 && (p.revents & POLLHUP) != 0;
  }
  EXPECT_TRUE(hung_up) << "the server kept a client that corrupted its channel";

  std::string error;
  auto client = ipc::Client::connect(path_, error);
  ASSERT_TRUE(client) << error;
  ASSERT_TRUE(client->hello(2, true, error)) << error;
  ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kBefore}, error)) << error;
  ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kAfter}, error)) << error;
  ASSERT_TRUE(client->call(finished_launch(0), error)) << error;
  EXPECT_EQ(rows_.load(), 1);
}

TEST(ServerRefusalTest, AUidNotAllowedIsToldItIsNotAuthorised) {
  // The client is the test itself when it is not root (root is always let in), else a child
  // that becomes nobody. Either way its uid is not the one allowed.
  const uid_t client_uid = ::geteuid() == 0 ? 65534 : ::geteuid();
  const auto dir =
      std::filesystem::temp_directory_path() / ("oaprof-refuse-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ::chmod(dir.c_str(), 0755);
  const std::string path = (dir / "s.sock").string();
  test_support::SimFixture sim;
  Session session(
      *sim.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
      [](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {});
  session.start();
  auto server = std::make_unique<Server>(path, session, std::vector<uid_t>{client_uid + 1});
  ::chmod(path.c_str(), 0777);  // the kernel lets nobody connect; the server must refuse
  server->start();

  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only system calls between fork and _exit: the test process has threads.
    if (::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      ::_exit(90);
    }
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ::_exit(91);
    std::uint8_t buf[wire::kMaxMessageBytes];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0 || ::write(pipe_fds[1], buf, static_cast<std::size_t>(n)) != n) ::_exit(92);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::vector<std::uint8_t> reply(wire::kMaxMessageBytes);
  const ssize_t n = ::read(pipe_fds[0], reply.data(), reply.size());
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "client status " << status;
  ASSERT_GT(n, 0);
  reply.resize(static_cast<std::size_t>(n));
  const auto decoded = wire::decode(reply);
  ASSERT_TRUE(std::holds_alternative<wire::Message>(decoded));
  const auto& error = std::get<wire::Error>(std::get<wire::Message>(decoded).body);
  EXPECT_EQ(error.code, wire::ErrorCode::kNotAuthorised);
  EXPECT_NE(error.message.find("uid " + std::to_string(client_uid) + " may not use"),
            std::string::npos)
      << error.message;
  EXPECT_EQ(server->clients_refused(), 1u);
  server.reset();
  std::filesystem::remove_all(dir);
}

// A run's socket is an abstract name (no file for a user to swap under root), and a run serves a
// bounded number of connections, refusing the next one with a reply that says so.
TEST(ServerSetupTest, ARunListensOnAnAbstractNameAndBoundsItsClients) {
  test_support::SimFixture sim;
  Session s(
      *sim.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
      [](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {});
  s.start();
  const std::string address = private_socket_address();
  EXPECT_EQ(address.rfind("@oaprof-", 0), 0u) << address;
  EXPECT_EQ(address.size(), 8u + 32u);
  EXPECT_NE(address, private_socket_address());
  Server server(address, s, {::getuid()}, 2);
  server.start();
  std::string error;
  auto a = ipc::Client::connect(address, error);
  ASSERT_TRUE(a) << error;
  EXPECT_TRUE(a->hello(1, false, error)) << error;
  auto b = ipc::Client::connect(address, error);
  ASSERT_TRUE(b) << error;
  EXPECT_TRUE(b->hello(2, false, error)) << error;
  // The third is told at once, before it asks anything.
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, address.data() + 1, address.size() - 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr),
                      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address.size())),
            0);
  std::uint8_t buf[wire::kMaxMessageBytes];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  ::close(fd);
  ASSERT_GT(n, 0);
  const auto decoded = wire::decode({buf, static_cast<std::size_t>(n)});
  ASSERT_TRUE(std::holds_alternative<wire::Message>(decoded));
  const auto& refused = std::get<wire::Error>(std::get<wire::Message>(decoded).body);
  EXPECT_EQ(refused.code, wire::ErrorCode::kBusy);
  EXPECT_NE(refused.message.find("serves at most 2 connections at once"), std::string::npos)
      << refused.message;
  EXPECT_EQ(server.clients_refused(), 1u);
  server.stop();
}

TEST(ServerSetupTest, AnExistingPathIsAClearError) {
  test_support::SimFixture sim;
  Session s(
      *sim.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
      [](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {});
  try {
    Server server("/proc/version", s, {});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on /proc/version"), std::string::npos);
  }
}

}  // namespace
}  // namespace oaprof::session
