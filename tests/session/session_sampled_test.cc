// Sampled attribution in the session: a timeline of periodic reads on a host clock, and the
// launches the layer sends with their windows on it (session/session.h, SampledOptions). The host
// clock here is the simulator's virtual one, so every read lands where the test puts it.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include "session/session.h"
#include "tests/common/sim_fixture.h"

namespace oaprof::session {
namespace {
namespace wire = ipc::wire;

constexpr double kTimestampHz = 12e6;  // the simulated Kaby Lake's
constexpr std::uint64_t kMs = 1'000'000;

class SessionSampledTest : public ::testing::Test {
 protected:
  SessionSampledTest() {
    SampledOptions o;
    o.period = std::chrono::hours(1);  // the test reads; the session's thread never does
    o.clock = [this] { return sim_.clock->now_ns() + host_late_ns_; };
    session_.set_sampled(o);
  }

  wire::Launch sampled_launch(std::uint64_t id, std::uint64_t start_ns, std::uint64_t end_ns,
                              std::uint32_t overlap_ppm = 0) {
    wire::Launch l;
    l.launch_id = id;
    l.work_dim = 1;
    l.global = {64, 0, 0};
    l.kernel_name = "k";
    l.profiled = true;
    l.flags = wire::kLaunchSampled | wire::kLaunchProgramIndex;
    l.sampled = wire::SampledWindow{start_ns, end_ns, overlap_ppm,
                                    wire::ClockCalibration::kDeviceAndHostTimer};
    return l;
  }
  // Reads every `period` for `reads` reads, the GPU busy throughout.
  void read_every(std::uint64_t period, int reads) {
    for (int i = 0; i < reads; ++i) {
      sim_.clock->advance_ns(period);
      session_.read_timeline();
    }
  }

  test_support::SimFixture sim_;
  std::uint64_t host_late_ns_ = 0;  // how late the host's clock says the reads are
  std::vector<oa::LaunchRecord> rows_;
  Session session_{*sim_.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
                   [this](const oa::LaunchRecord& r, const power::EnergyReading*,
                          const power::EnergyReading*) { rows_.push_back(r); }};
};

// A window between reads gets the counters' growth over exactly its length, each edge
// interpolated in its period, and says how much of it was interpolated.
TEST_F(SessionSampledTest, AWindowGetsTheGrowthBetweenItsEdgesAndItsErrorBound) {
  session_.start();
  const std::uint64_t t0 = sim_.clock->now_ns();
  session_.set_busy(true);
  read_every(kMs, 10);
  // 2.5 ms to 7.5 ms after the first read: both edges in the middle of a 1 ms period.
  const std::uint64_t start = t0 + 2 * kMs + kMs / 2, end = t0 + 7 * kMs + kMs / 2;
  ASSERT_TRUE(
      std::holds_alternative<wire::Ok>(session_.handle(1, 7, sampled_launch(12, start, end))));
  ASSERT_EQ(rows_.size(), 1u);
  const oa::LaunchRecord& r = rows_[0];
  // The program's own index of the launch, not the session's count (issue 29, item 13).
  EXPECT_EQ(r.index, 0u);
  EXPECT_EQ(r.program_launch, std::optional<std::uint64_t>{12});
  // 5 ms of a 12 MHz timestamp, and of the 1150 MHz GPU clock, the counters' rounding aside.
  EXPECT_NEAR(static_cast<double>(r.deltas.timestamp), 5e-3 * kTimestampHz, 1.0);
  EXPECT_NEAR(static_cast<double>(r.deltas.gpu_ticks), 5e-3 * 1150e6, 2.0);
  ASSERT_TRUE(r.sampled.has_value());
  EXPECT_DOUBLE_EQ(r.sampled->error_bound, 2.0 / 5.0);  // two 1 ms edge periods over 5 ms
  EXPECT_EQ(r.sampled->overlap_share, 0.0);
  EXPECT_EQ(r.pid, 7u);
  EXPECT_TRUE(r.flags.empty());
}

// A read the host saw late (a preempted read-out, a periodic report that came after it was asked
// for) is placed by the report's own GPU timestamp: the window's counters stay right, where
// timing the reads by the host's clock alone would move the window's edges by the lateness.
TEST(SessionSampledClockTest, ReadsTheHostSawLateAreTimedByTheGpusTimestamp) {
  test_support::SimFixture sim;
  std::vector<oa::LaunchRecord> rows;
  Session session(*sim.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
                  [&](const oa::LaunchRecord& r, const power::EnergyReading*,
                      const power::EnergyReading*) { rows.push_back(r); });
  // The host's clock is asked twice a read: every third read looks 400 us long, as if
  // preempted, so its middle is 200 us after the GPU's moment.
  int asked = 0;
  SampledOptions o;
  o.period = std::chrono::hours(1);
  o.clock = [&] { return sim.clock->now_ns() + (++asked % 6 == 0 ? 400'000 : 0); };
  session.set_sampled(o);
  session.start();
  const std::uint64_t t0 = sim.clock->now_ns();
  session.set_busy(true);
  for (int i = 0; i < 10; ++i) {
    sim.clock->advance_ns(kMs);
    session.read_timeline();
  }
  session.handle(1, 7, [&] {
    wire::Launch l;
    l.work_dim = 1;
    l.kernel_name = "k";
    l.flags = wire::kLaunchSampled | wire::kLaunchProgramIndex;
    l.sampled = wire::SampledWindow{t0 + 2 * kMs + kMs / 2, t0 + 7 * kMs + kMs / 2, 0,
                                    wire::ClockCalibration::kDeviceAndHostTimer};
    return l;
  }());
  ASSERT_EQ(rows.size(), 1u);
  // 5 ms of GPU time within 0.5 %; timed by the host alone the edges would move by up to 200 us
  // each, 4 % of the window.
  EXPECT_NEAR(static_cast<double>(rows[0].deltas.timestamp), 5e-3 * kTimestampHz,
              0.005 * 5e-3 * kTimestampHz);
  session.stop();
}

// The line from host to timeline misses the reads by a little (here the last read's host time
// looks 200 µs late). A 1 µs window that ended by the last read, but that the line puts past it,
// is moved back whole to end on it (issue 29, item 12): it keeps its length, gets its share of
// the period it then lies in, that period over its length as its bound, and between_reads. It
// never becomes a window of no length on the read, with no counts and an error of 0.
TEST_F(SessionSampledTest, AShortWindowNearTheLastReadKeepsItsLengthAndItsPeriodsBound) {
  session_.start();
  session_.set_busy(true);
  read_every(kMs, 9);
  host_late_ns_ = 200'000;
  read_every(kMs, 1);
  const std::uint64_t last_read_host = sim_.clock->now_ns() + host_late_ns_;
  session_.handle(1, 7, sampled_launch(0, last_read_host - 51'000, last_read_host - 50'000));
  ASSERT_EQ(rows_.size(), 1u);
  const oa::LaunchRecord& r = rows_[0];
  ASSERT_TRUE(r.sampled.has_value());
  EXPECT_EQ(r.flags, std::vector<std::string>{"between_reads"});
  // 1 µs of the busy 1150 MHz GPU clock, interpolated; the 1 ms period over the 1 µs window
  // (give or take the line's slope on its length).
  EXPECT_NEAR(static_cast<double>(r.deltas.gpu_ticks), 1150.0, 25.0);
  EXPECT_NEAR(r.sampled->error_bound, 1000.0, 20.0);
}

// A window that ends after the last read waits for the next one; stop() reads once more, so a
// launch that arrived before it is never lost.
TEST_F(SessionSampledTest, AWindowPastTheLastReadWaitsAndStopAttributesIt) {
  session_.start();
  const std::uint64_t t0 = sim_.clock->now_ns();
  read_every(kMs, 2);
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(
      session_.handle(1, 7, sampled_launch(0, t0 + kMs, t0 + 3 * kMs))));
  EXPECT_TRUE(rows_.empty());
  EXPECT_EQ(session_.sampled_waiting(), 1u);
  read_every(kMs, 1);
  ASSERT_EQ(rows_.size(), 1u);
  EXPECT_EQ(session_.sampled_waiting(), 0u);
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(
      session_.handle(1, 7, sampled_launch(1, t0 + 3 * kMs, t0 + 4 * kMs))));
  sim_.clock->advance_ns(kMs);
  session_.stop();
  ASSERT_EQ(rows_.size(), 2u);
  EXPECT_NEAR(static_cast<double>(rows_[1].deltas.timestamp), 1e-3 * kTimestampHz, 1.0);
  EXPECT_EQ(rows_[1].index, 1u);
}

// What the layer says about overlap is on the row (the counters are the GPU's, shared); a window
// from before the timeline began cannot be attributed and says so, with no counters.
TEST_F(SessionSampledTest, OverlapIsFlaggedAndAWindowBeforeTheTimelineIsNotAttributed) {
  sim_.clock->advance_ns(10 * kMs);
  session_.start();
  const std::uint64_t t0 = sim_.clock->now_ns();
  read_every(kMs, 4);
  session_.handle(1, 7, sampled_launch(0, t0 + kMs, t0 + 3 * kMs, 250'000));
  session_.handle(1, 7, sampled_launch(1, t0 - 5 * kMs, t0 + kMs));
  ASSERT_EQ(rows_.size(), 2u);
  EXPECT_EQ(rows_[0].flags, std::vector<std::string>{"overlapped"});
  EXPECT_DOUBLE_EQ(rows_[0].sampled->overlap_share, 0.25);
  EXPECT_EQ(rows_[1].flags, std::vector<std::string>{"not_attributed"});
  EXPECT_EQ(rows_[1].deltas.timestamp, 0u);
}

// The program's layer is untrusted: windows anywhere on the clock, up to its end, give rows
// flagged not_attributed (never a crash, never counters from nowhere), and the launches that
// claim to end in the future wait only until stop().
TEST_F(SessionSampledTest, WindowsAnywhereOnTheClockAreNotAttributedAndNeverHang) {
  session_.start();
  read_every(kMs, 3);
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  session_.handle(1, 7, sampled_launch(0, 0, max));
  session_.handle(1, 7, sampled_launch(1, max - 1, max));
  session_.handle(1, 7, sampled_launch(2, 0, 1));
  EXPECT_EQ(rows_.size(), 1u);  // the one that ended long ago
  EXPECT_EQ(session_.sampled_waiting(), 2u);
  sim_.clock->advance_ns(kMs);
  session_.stop();
  ASSERT_EQ(rows_.size(), 3u);
  for (const oa::LaunchRecord& r : rows_) {
    EXPECT_EQ(r.flags, std::vector<std::string>{"not_attributed"}) << r.launch.launch_id;
    EXPECT_EQ(r.deltas.timestamp, 0u);
  }
}

// A layer that floods the session with windows that end in the future is refused past the bound
// (each refusal counted as a dropped launch); the ones taken still become rows at stop().
TEST_F(SessionSampledTest, AFloodOfFutureWindowsIsBounded) {
  session_.start();
  const std::uint64_t far = std::numeric_limits<std::uint64_t>::max() / 2;
  for (std::uint64_t id = 0; id < Session::kMaxSampledWaiting; ++id) {
    ASSERT_TRUE(
        std::holds_alternative<wire::Ok>(session_.handle(1, 7, sampled_launch(id, far, far + 1))));
  }
  const wire::Body refused = session_.handle(1, 7, sampled_launch(0, far, far + 1));
  ASSERT_TRUE(std::holds_alternative<wire::Error>(refused));
  EXPECT_EQ(std::get<wire::Error>(refused).code, wire::ErrorCode::kBadRequest);
  EXPECT_EQ(session_.sampled_waiting(), Session::kMaxSampledWaiting);
  EXPECT_EQ(session_.launches_dropped(), 1u);
  sim_.clock->advance_ns(kMs);
  session_.stop();
  EXPECT_EQ(rows_.size(), Session::kMaxSampledWaiting);
  EXPECT_EQ(session_.sampled_waiting(), 0u);
}

// A sampled launch is refused by a session that brackets launches, and a bracketed session's
// option check refuses a period of zero.
TEST(SessionSampledOptionsTest, ASampledLaunchNeedsASampledSession) {
  test_support::SimFixture sim;
  Session session(*sim.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
                  [](const oa::LaunchRecord&, const power::EnergyReading*,
                     const power::EnergyReading*) { FAIL() << "no row expected"; });
  session.start();
  wire::Launch l;
  l.work_dim = 1;
  l.kernel_name = "k";
  l.flags = wire::kLaunchSampled | wire::kLaunchProgramIndex;
  l.sampled = wire::SampledWindow{1, 2, 0, wire::ClockCalibration::kMarker};
  const wire::Body reply = session.handle(1, 7, l);
  ASSERT_TRUE(std::holds_alternative<wire::Error>(reply));
  EXPECT_EQ(std::get<wire::Error>(reply).code, wire::ErrorCode::kBadRequest);
  session.stop();
  Session other(*sim.source, oa::ReportFormat::kA32u40_A4u32_B8_C8, {});
  SampledOptions zero;
  zero.period = std::chrono::microseconds(0);
  EXPECT_THROW(other.set_sampled(zero), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::session
