// Issue 32: oaprofd's selftest for group members (kSelftest, kSelftestFetch), through the
// service with stand-in runners: it holds the OA unit with its journal while it runs, on a
// thread of its own, one at a time; its report comes back in chunks; a client that goes cancels
// it between checks. The real checks through a real oaprofd are oaprofd_process_test's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/daemon_service.h"
#include "session/register_journal.h"
#include "tests/common/daemon_test_util.h"

namespace oaprof::daemon {
namespace {

namespace wire = ipc::wire;
using test_support::ScratchDir;
using ::testing::HasSubstr;

// Holds a runner until the test opens it: a wait on a condition, not a sleep.
class Gate {
 public:
  void open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

constexpr std::uint32_t kRegister = 0x2b04;  // OA_DEBUG on Gen9: any register the runner writes

class DaemonSelftestTest : public ::testing::Test {
 protected:
  DaemonSelftestTest() {
    regs_ = dir_.path() / "regs";
    test_support::create_sim_file(regs_);
  }
  // The service (and a selftest thread it may still wait for) goes before the log it writes to.
  ~DaemonSelftestTest() override {
    gate_.open();
    service_.reset();
  }

  void start_service(SelftestRunner runner) {
    ServiceOptions o;
    o.device.spec = gpu::DeviceSpec::sim_file(regs_);
    o.device.forcewake.mode = mmio::ForcewakeMode::kNone;
    o.state_dir = dir_.path();
    o.log = [this](int, const std::string& line) {
      std::lock_guard lock(log_mu_);
      log_ += line + "\n";
    };
    o.selftest = std::move(runner);
    service_ = std::make_unique<DaemonService>(o);
  }

  // Asks for `offset` until the checks ended (bounded far above the milliseconds they take).
  wire::Body fetch_when_done(std::uint64_t client, const Peer& peer, std::uint32_t offset = 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      wire::Body reply = service_->handle(client, peer, wire::SelftestFetch{offset});
      const auto* r = std::get_if<wire::SelftestReport>(&reply);
      if (r == nullptr || r->done || std::chrono::steady_clock::now() > deadline) return reply;
      std::this_thread::yield();
    }
  }

  ScratchDir dir_;
  std::filesystem::path regs_;
  std::unique_ptr<DaemonService> service_;
  std::mutex log_mu_;
  std::string log_;
  Gate gate_;
  const Peer alice_{1000, 1000, 4321};
  const Peer bob_{1001, 1001, 5555};
};

wire::Open open_request() {
  wire::Open o;
  o.pid = 1;
  o.energy = "none";
  return o;
}

TEST_F(DaemonSelftestTest, ItHoldsTheUnitJournaledAndSendsItsReportInChunks) {
  const std::string report(10'000, 'r');  // four chunks of at most 3072 bytes
  start_service([&](const SelftestJob& job) {
    job.progress("clocks");
    gpu::Device device = job.open_device(job.device);
    const std::uint32_t before = device.mmio->read32(kRegister);
    device.mmio->write32(kRegister, before ^ 0x40);  // journaled before it is written
    gate_.wait();
    device.mmio->write32(kRegister, before);
    return SelftestOutcome{report, "kept nowhere", 18, 0};
  });
  const auto before = test_support::file_bytes(regs_);
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(
      service_->handle(1, alice_, wire::Selftest{true, "sim", "mmio"})));

  // While it runs: its check, the unit held (busy for others, whatever they ask), a journal.
  // The state file exists from the unit's taking, before the write is journaled in it: wait for
  // the entry (a read between the two saw no holder and no entry once in 14 runs).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto state = session::read_state_file(service_->state_file());
  while ((!state || state->entries.empty()) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
    state = session::read_state_file(service_->state_file());
  }
  ASSERT_TRUE(state.has_value()) << "a register written without a journal";
  EXPECT_THAT(state->holder, HasSubstr("uid 1000, pid 4321 since "));
  EXPECT_EQ(state->entries.size(), 1u);
  EXPECT_EQ(std::get<wire::SelftestReport>(service_->handle(1, alice_, wire::SelftestFetch{0})),
            (wire::SelftestReport{false, "clocks"}));
  const auto busy_open = std::get<wire::Error>(service_->handle(2, bob_, open_request()));
  EXPECT_EQ(busy_open.code, wire::ErrorCode::kBusy);
  EXPECT_THAT(busy_open.message, HasSubstr("uid 1000, pid 4321"));
  EXPECT_THAT(busy_open.message, HasSubstr("oaprofd's selftest"));
  EXPECT_EQ(std::get<wire::Error>(service_->handle(2, bob_, wire::Selftest{})).code,
            wire::ErrorCode::kBusy);
  EXPECT_EQ(std::get<wire::Error>(service_->handle(1, alice_, wire::Selftest{})).code,
            wire::ErrorCode::kBadRequest);
  EXPECT_EQ(std::get<wire::Error>(service_->handle(2, bob_, wire::SelftestFetch{0})).code,
            wire::ErrorCode::kNoSession)
      << "one client's report is not another's";

  gate_.open();
  std::string assembled;
  int chunks = 0;
  for (wire::Body reply = fetch_when_done(1, alice_);;
       reply = fetch_when_done(1, alice_, static_cast<std::uint32_t>(assembled.size()))) {
    const auto& r = std::get<wire::SelftestReport>(reply);
    ASSERT_TRUE(r.done);
    EXPECT_EQ(r.total, report.size());
    EXPECT_LE(r.chunk.size(), wire::kMaxSelftestChunkBytes);
    assembled += r.chunk;
    ++chunks;
    if (assembled.size() >= report.size()) break;
  }
  EXPECT_EQ(assembled, report);
  EXPECT_EQ(chunks, 4);
  // Fetched to its end: forgotten, the journal gone with the lock, the registers as before.
  EXPECT_EQ(std::get<wire::Error>(service_->handle(1, alice_, wire::SelftestFetch{0})).code,
            wire::ErrorCode::kNoSession);
  EXPECT_FALSE(std::filesystem::exists(service_->state_file()));
  EXPECT_EQ(test_support::differing_registers(before, test_support::file_bytes(regs_)),
            std::vector<std::size_t>{});
  EXPECT_TRUE(std::holds_alternative<wire::Opened>(service_->handle(2, bob_, open_request())));
  EXPECT_THAT(log_, HasSubstr("ended: 18 checks, 0 failed; kept nowhere"));
}

TEST_F(DaemonSelftestTest, AClientThatGoesCancelsItsSelftestBetweenChecks) {
  std::atomic<int> checks_started = 0;
  std::atomic<bool> cancelled = false;
  start_service([&](const SelftestJob& job) {
    try {
      // A check after another, far more than run before the test's client goes.
      for (int i = 0; i < 100'000'000; ++i) {
        job.progress("check");
        ++checks_started;
        std::this_thread::yield();
      }
    } catch (const std::runtime_error&) {
      cancelled = true;
      throw;
    }
    return SelftestOutcome{"{}", "", 0, 0};
  });
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(service_->handle(1, alice_, wire::Selftest{})));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (checks_started == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  service_->client_gone(1);
  while (service_->selftest_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_FALSE(service_->selftest_running());
  EXPECT_TRUE(cancelled);
  EXPECT_LT(checks_started, 100'000'000);
  // The unit is free for the next client, and the log says where the first run went.
  EXPECT_TRUE(std::holds_alternative<wire::Opened>(service_->handle(2, bob_, open_request())));
  EXPECT_THAT(log_, HasSubstr("ended without its client"));
}

TEST_F(DaemonSelftestTest, AFailedRunIsItsFetchsErrorAndAServiceWithoutARunnerSaysSo) {
  start_service([](const SelftestJob&) -> SelftestOutcome {
    throw std::runtime_error("cannot open the simulated device");
  });
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(service_->handle(1, alice_, wire::Selftest{})));
  const auto error = std::get<wire::Error>(fetch_when_done(1, alice_));
  EXPECT_EQ(error.code, wire::ErrorCode::kDeviceError);
  EXPECT_EQ(error.message, "cannot open the simulated device");
  EXPECT_FALSE(std::filesystem::exists(service_->state_file()));

  // A service given no runner refuses, saying so.
  start_service(nullptr);
  const auto refused = std::get<wire::Error>(service_->handle(1, alice_, wire::Selftest{}));
  EXPECT_EQ(refused.code, wire::ErrorCode::kBadRequest);
  EXPECT_THAT(refused.message, HasSubstr("does not run the selftest"));
}

TEST_F(DaemonSelftestTest, ASessionAndASelftestKeepEachOtherOut) {
  start_service([&](const SelftestJob&) { return SelftestOutcome{"{}", "", 0, 0}; });
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(service_->handle(1, alice_, open_request())));
  EXPECT_EQ(std::get<wire::Error>(service_->handle(1, alice_, wire::Selftest{})).code,
            wire::ErrorCode::kBadRequest);  // close first
  const auto busy = std::get<wire::Error>(service_->handle(2, bob_, wire::Selftest{}));
  EXPECT_EQ(busy.code, wire::ErrorCode::kBusy);
  EXPECT_THAT(busy.message, HasSubstr("busy: held by uid 1000, pid 4321"));
  service_->client_gone(1);
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(service_->handle(2, bob_, wire::Selftest{})));
  EXPECT_EQ(std::get<wire::SelftestReport>(fetch_when_done(2, bob_)).chunk, "{}");
}

}  // namespace
}  // namespace oaprof::daemon
