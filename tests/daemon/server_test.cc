#include "daemon/server.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>

#include "tests/daemon/sim_fixture.h"
#include "launch/client.h"

namespace oaprof::daemon {
namespace {
namespace wire = oa::wire;

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
  testing::SimFixture sim_;
  std::atomic<int> rows_{0};
  Session session_{*sim_.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
                   [this](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) { rows_++; }};
  std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, AClientMeasuresALaunchOverTheRealSocket) {
  std::string error;
  auto client = launch::Client::connect(path_, error);
  ASSERT_TRUE(client) << error;
  ASSERT_TRUE(client->call(wire::Hello{1, 0}, error)) << error;
  ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kBefore}, error)) << error;
  ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kAfter}, error)) << error;
  wire::Launch l;
  l.work_dim = 1;
  l.kernel_name = "k";
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
    auto client = launch::Client::connect(path_, error);
    ASSERT_TRUE(client);
    ASSERT_TRUE(client->call(wire::Snapshot{0, wire::Phase::kBefore}, error));
  }  // closes the socket without finishing the launch
  for (int i = 0; i < 200 && session_.launches_dropped() == 0; ++i) ::usleep(5000);
  EXPECT_EQ(session_.launches_dropped(), 1u);
  // A new client is served normally.
  std::string error;
  auto client = launch::Client::connect(path_, error);
  ASSERT_TRUE(client);
  EXPECT_TRUE(client->call(wire::Hello{2, 0}, error)) << error;
}

TEST(ServerSetupTest, AnExistingPathIsAClearError) {
  testing::SimFixture sim;
  Session s(*sim.source, oa::ReportFormat::kA32u40_A4u32_B8_C8, [](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {});
  try {
    Server server("/proc/version", s, {});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on /proc/version"), std::string::npos);
  }
}

}  // namespace
}  // namespace oaprof::daemon
