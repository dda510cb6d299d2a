// Issue 32: a hostile group member against oaprofd's selftest. It cannot slip a simulator fault
// knob, a file or anything else into the request (the request has no room for one, and a byte
// more is refused), cannot make the daemon read a huge field or past its report, cannot start a
// second selftest or open a session while one runs (whoever asks, however often), and cannot read
// another client's report. The runner here records what the daemon hands it: only the daemon's
// own device, files and policy, and the client's quick flag and read-out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "daemon/daemon_service.h"
#include "tests/common/daemon_test_util.h"

namespace oaprof::daemon {
namespace {

namespace wire = ipc::wire;
using ::testing::HasSubstr;

class HostileSelftestTest : public ::testing::Test {
 protected:
  HostileSelftestTest() {
    test_support::create_sim_file(dir_.path() / "regs");
    ServiceOptions o;
    o.device.spec = gpu::DeviceSpec::sim_file(dir_.path() / "regs");
    o.state_dir = dir_.path();
    o.lend_energy = false;
    o.selftest = [this](const SelftestJob& job) {
      std::unique_lock lock(mu_);
      ++runs_;
      job_ = job;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
      return SelftestOutcome{std::string(5000, 'j'), "", 0, 0};
    };
    service_ = std::make_unique<DaemonService>(o);
  }
  ~HostileSelftestTest() override {
    release();
    service_.reset();  // waits for the runner
  }
  void release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  int runs() {
    std::lock_guard lock(mu_);
    return runs_;
  }
  // The reply to raw bytes, decoded.
  wire::Body send(std::uint64_t client, std::span<const std::uint8_t> bytes) {
    const auto reply = wire::decode(
        service_->handle(client, Peer{1000 + static_cast<uid_t>(client), 1000, 4000}, bytes));
    return std::get<wire::Message>(reply).body;
  }
  wire::Body send(std::uint64_t client, const wire::Body& body) {
    return send(client, wire::encode({7, body}));
  }
  static wire::ErrorCode code(const wire::Body& reply) { return std::get<wire::Error>(reply).code; }

  test_support::ScratchDir dir_;
  std::unique_ptr<DaemonService> service_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  int runs_ = 0;
  std::optional<SelftestJob> job_;
};

// The request with its payload length fixed after `payload` replaced what encode() wrote.
std::vector<std::uint8_t> with_payload(std::vector<std::uint8_t> bytes,
                                       const std::vector<std::uint8_t>& payload) {
  bytes.resize(wire::kHeaderBytes);
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  const auto len = static_cast<std::uint32_t>(payload.size());
  std::memcpy(&bytes[12], &len, 4);
  return bytes;
}

TEST_F(HostileSelftestTest, AFaultKnobOrAnyExtraFieldIsRefusedAndStartsNothing) {
  const auto plain = wire::encode({7, wire::Selftest{true, "sim", "mmio"}});
  std::vector<std::uint8_t> payload(plain.begin() + wire::kHeaderBytes, plain.end());
  // A fault's name after the access, as a client that hoped for --sim-fault would send it.
  std::vector<std::uint8_t> fault = payload;
  for (const char c : std::string("\x0a\x00rapl-stuck", 12))
    fault.push_back(static_cast<std::uint8_t>(c));
  EXPECT_EQ(code(send(1, with_payload(plain, fault))), wire::ErrorCode::kBadMessage);
  // Every flag but quick: whatever a later oaprof might mean by them, this one refuses them.
  for (int bit = 1; bit < 8; ++bit) {
    std::vector<std::uint8_t> flags = payload;
    flags[0] = static_cast<std::uint8_t>(1u << bit);
    EXPECT_EQ(code(send(1, with_payload(plain, flags))), wire::ErrorCode::kBadMessage) << bit;
  }
  EXPECT_EQ(runs(), 0);
  EXPECT_FALSE(service_->selftest_running());
  // Nothing held: the unit is free.
  wire::Open open;
  open.energy = "none";
  EXPECT_TRUE(std::holds_alternative<wire::Opened>(send(2, open)));
}

TEST_F(HostileSelftestTest, HugeOrStrangeFieldsAreRefusedWithinTheirBounds) {
  // A string whose length says more than the datagram holds, and one past the protocol's bound.
  const auto plain = wire::encode({7, wire::Selftest{}});
  std::vector<std::uint8_t> longer = {0, 0xff, 0xff, 'a', 'u', 't', 'o', 0, 0};
  EXPECT_EQ(code(send(1, with_payload(plain, longer))), wire::ErrorCode::kBadMessage);
  std::vector<std::uint8_t> big = {0};
  const auto n = static_cast<std::uint16_t>(wire::kMaxTextBytes + 1);
  big.push_back(static_cast<std::uint8_t>(n & 0xff));
  big.push_back(static_cast<std::uint8_t>(n >> 8));
  big.insert(big.end(), n, 'a');
  big.insert(big.end(), {0, 0});
  EXPECT_EQ(code(send(1, with_payload(plain, big))), wire::ErrorCode::kBadMessage);
  // Names the daemon does not serve: the simulator's own read-out, a path, another device.
  for (const char* access : {"sim", "../../../etc/shadow", "mmio,perf"}) {
    const auto reply = send(1, wire::Selftest{false, "auto", access});
    EXPECT_EQ(code(reply), wire::ErrorCode::kBadRequest) << access;
  }
  EXPECT_EQ(code(send(1, wire::Selftest{false, "0000:03:00.0", ""})), wire::ErrorCode::kBadRequest);
  EXPECT_EQ(runs(), 0);

  // Past the report's end: refused, and the report is still there to fetch.
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(send(1, wire::Selftest{})));
  release();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (service_->selftest_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(code(send(1, wire::SelftestFetch{0xffffffff})), wire::ErrorCode::kBadRequest);
  EXPECT_EQ(code(send(1, wire::SelftestFetch{5001})), wire::ErrorCode::kBadRequest);
  const auto last = std::get<wire::SelftestReport>(send(1, wire::SelftestFetch{4999}));
  EXPECT_EQ(last.chunk, "j");
}

TEST_F(HostileSelftestTest, WhileOneRunsNobodyStartsAnotherOrTakesTheUnitOrReadsItsReport) {
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(send(1, wire::Selftest{true, "auto", "perf"})));
  wire::Open open;
  open.energy = "none";
  for (int round = 0; round < 50; ++round) {
    for (std::uint64_t client = 2; client < 10; ++client) {
      EXPECT_EQ(code(send(client, wire::Selftest{})), wire::ErrorCode::kBusy);
      EXPECT_EQ(code(send(client, open)), wire::ErrorCode::kBusy);
      EXPECT_EQ(code(send(client, wire::SelftestFetch{0})), wire::ErrorCode::kNoSession);
    }
    EXPECT_EQ(code(send(1, wire::Selftest{})), wire::ErrorCode::kBadRequest);  // its own again
  }
  // What the runner was handed, once: the daemon's device and policy, the client's flag and
  // read-out.
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::seconds(30), [this] { return job_.has_value(); });
  EXPECT_EQ(runs_, 1);
  ASSERT_TRUE(job_.has_value());
  EXPECT_EQ(job_->device.spec.str(), "sim:" + (dir_.path() / "regs").string());
  EXPECT_TRUE(job_->quick);
  EXPECT_EQ(job_->accesses, std::vector<std::string>{"perf"});
  EXPECT_FALSE(job_->lend_energy);
  EXPECT_TRUE(job_->metrics_xml.empty());  // the daemon has no metric directory here
  EXPECT_EQ(job_->state_dir, dir_.path());
}

}  // namespace
}  // namespace oaprof::daemon
