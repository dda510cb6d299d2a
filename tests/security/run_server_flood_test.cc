// The run server of `sudo oaprof` (session/server.h) against a client of its shared-memory
// channel that hangs up and keeps refilling its ring (it keeps the mapping): before issue 29 the
// server's loop, dropping it, waited for the ring to be empty, which it never was, so no other
// process of the program was served and the run could not stop.
#include "session/server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "ipc/client.h"
#include "tests/common/sim_fixture.h"
#include "tests/security/hostile_channel.h"

namespace oaprof::session {
namespace {

namespace wire = ipc::wire;

class RunServerFloodTest : public ::testing::Test {
 protected:
  RunServerFloodTest() {
    session_.start();
    server_ = std::make_unique<Server>(address_, session_, std::vector<uid_t>{::getuid()});
    server_->start();
  }

  // A client that left a launch half-measured, floods its ring with launches (each one a row,
  // which takes the sink a while, so the ring is never seen empty) and hangs up; null (and a
  // failure) where it could not be set up.
  std::unique_ptr<security::RingFlooder> flooder_that_hung_up() {
    auto hostile = std::make_unique<security::RingFlooder>(address_);
    EXPECT_TRUE(hostile->ready()) << "no channel";
    if (!hostile->ready()) return nullptr;
    const auto before = wire::encode({2, wire::Snapshot{0, wire::Phase::kBefore}});
    EXPECT_EQ(::send(hostile->socket(), before.data(), before.size(), 0),
              static_cast<ssize_t>(before.size()));
    std::uint8_t buf[wire::kMaxMessageBytes];
    EXPECT_GT(::recv(hostile->socket(), buf, sizeof buf, 0), 0) << "no reply to the snapshot";
    wire::Launch launch;
    launch.launch_id = 7;
    launch.work_dim = 1;
    launch.kernel_name = "k";
    hostile->flood({wire::encode({3, wire::Snapshot{7, wire::Phase::kBefore}}),
                    wire::encode({4, wire::Snapshot{7, wire::Phase::kAfter}}),
                    wire::encode({5, launch})});
    // Sixteen replies more than the ring holds (the flooder has refilled it): the channel's
    // thread is busy with the flood.
    constexpr std::uint64_t kEnough = ipc::channel::kRingSlots + 16;
    for (int i = 0; i < 6000 && hostile->replies() < kEnough; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GE(hostile->replies(), kEnough) << "the server did not answer the flood";
    hostile->hang_up();
    return hostile;
  }

  std::string address_ = private_socket_address();
  test_support::SimFixture sim_;
  // Rows go to a sink that takes 10 ms each, as a file on a slow disk would.
  Session session_{
      *sim_.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
      [](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }};
  std::unique_ptr<Server> server_;
};

TEST_F(RunServerFloodTest, AClientRefillingItsRingAfterHangingUpHoldsUpNoOtherClient) {
  const auto hostile = flooder_that_hung_up();
  ASSERT_NE(hostile, nullptr);
  std::string error;
  auto other = ipc::Client::connect(address_, error, 20'000);
  ASSERT_TRUE(other) << error;
  EXPECT_TRUE(other->call(wire::Hello{2, 0}, error)) << "another process was not served: " << error;
  // The session heard the hostile client is gone: the launch it left is dropped.
  for (int i = 0; i < 2000 && session_.launches_dropped() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(session_.launches_dropped(), 1u);
}

TEST_F(RunServerFloodTest, AClientRefillingItsRingAfterHangingUpDoesNotKeepTheRunGoing) {
  auto hostile = flooder_that_hung_up();
  ASSERT_NE(hostile, nullptr);
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    server_->stop();
    stopped.store(true);
  });
  for (int i = 0; i < 2000 && !stopped.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(stopped.load()) << "the run server did not stop while a client flooded its ring";
  hostile.reset();  // ends the flood, so that a server that did not stop can stop now
  stopper.join();
}

}  // namespace
}  // namespace oaprof::session
