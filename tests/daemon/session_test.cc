#include "daemon/session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "daemon/sampler.h"
#include "tests/daemon/sim_fixture.h"
#include "mmio/registers.h"

namespace oaprof::daemon {
namespace {
namespace wire = oa::wire;

wire::Launch launch_record(std::uint64_t id) {
  wire::Launch l;
  l.launch_id = id;
  l.work_dim = 1;
  l.global = {4096, 0, 0};
  l.kernel_name = "k";
  l.profiled = true;
  l.start_ns = 10;
  l.end_ns = 1'000'010;
  return l;
}

// A fake energy source on the simulator's virtual clock; tests set the energy it reports.
class FakeEnergy final : public power::EnergySource {
 public:
  explicit FakeEnergy(mmio::ManualClock& clock) : clock_(clock) {}
  std::string_view name() const override { return "fake"; }
  std::vector<power::Domain> domains() const override { return {power::Domain::kPackage}; }
  power::EnergyReading read() override {
    power::EnergyReading r;
    r.time_ns = clock_.now_ns() + 1;
    r.energy_uj[power::Domain::kPackage] = busy_uj_;
    return r;
  }
  mmio::ManualClock& clock_;
  std::uint64_t busy_uj_ = 0;
};

class SessionTest : public ::testing::Test {
 protected:
  testing::SimFixture sim_;
  std::vector<oa::LaunchRecord> rows_;
  Session session_{*sim_.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
                   [this](const oa::LaunchRecord& r, const power::EnergyReading* begin,
                          const power::EnergyReading* end) {
                     rows_.push_back(r);
                     energy_.emplace_back(begin ? std::optional(*begin) : std::nullopt,
                                          end ? std::optional(*end) : std::nullopt);
                   }};
  std::vector<std::pair<std::optional<power::EnergyReading>, std::optional<power::EnergyReading>>>
      energy_;
};

TEST_F(SessionTest, BeforeAfterLaunchGivesOneRowWithTheKernelsDeltas) {
  session_.start();
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(session_.handle(1, 99, wire::Snapshot{0, wire::Phase::kBefore})));
  sim_.clock->advance_ns(2'000'000);
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(session_.handle(1, 99, wire::Snapshot{0, wire::Phase::kAfter})));
  sim_.clock->advance_ns(5'000'000);  // idle time after the launch does not count as busy
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(session_.handle(1, 99, launch_record(0))));
  ASSERT_EQ(rows_.size(), 1u);
  EXPECT_EQ(rows_[0].index, 0u);
  EXPECT_EQ(rows_[0].pid, 99u);
  EXPECT_EQ(rows_[0].deltas.gpu_ticks, 2'300'000u);
  EXPECT_EQ(rows_[0].deltas.a[0], 2'300'000u);
  EXPECT_EQ(rows_[0].deltas.timestamp, 24'000u);
  EXPECT_TRUE(rows_[0].flags.empty());
}

TEST_F(SessionTest, EnergyIsReadBesideTheSnapshotsAndFollowsTheBusySignal) {
  // 1 µJ per ns busy, nothing idle.
  FakeEnergy energy(*sim_.clock);
  std::vector<bool> busy_calls;
  session_.set_energy_source(&energy);
  session_.set_busy_listener([&](bool b) { busy_calls.push_back(b); });
  session_.start();
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  sim_.clock->advance_ns(1000);
  energy.busy_uj_ = 1000;
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  session_.handle(1, 1, launch_record(0));
  ASSERT_EQ(energy_.size(), 1u);
  ASSERT_TRUE(energy_[0].first && energy_[0].second);
  EXPECT_EQ(energy_[0].second->energy_uj.at(power::Domain::kPackage) -
                energy_[0].first->energy_uj.at(power::Domain::kPackage),
            1000u);
  EXPECT_EQ(busy_calls, (std::vector<bool>{true, false}));
}

TEST_F(SessionTest, WithoutAnEnergySourceRowsHaveNoReadings) {
  session_.start();
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  session_.handle(1, 1, launch_record(0));
  ASSERT_EQ(energy_.size(), 1u);
  EXPECT_FALSE(energy_[0].first.has_value());
}

TEST_F(SessionTest, LaunchWithoutSnapshotsIsAnErrorAndCountsAsDropped) {
  session_.start();
  const auto reply = session_.handle(1, 1, launch_record(5));
  ASSERT_TRUE(std::holds_alternative<wire::Error>(reply));
  EXPECT_EQ(std::get<wire::Error>(reply).code, wire::ErrorCode::kUnknownLaunch);
  EXPECT_EQ(session_.launches_dropped(), 1u);
  const auto after_only = session_.handle(1, 1, wire::Snapshot{6, wire::Phase::kAfter});
  EXPECT_TRUE(std::holds_alternative<wire::Error>(after_only));
  EXPECT_TRUE(rows_.empty());
}

TEST_F(SessionTest, ReplayedPassesSumTheirPairsAndTheEnergyWindowSpansThemAll) {
  FakeEnergy energy(*sim_.clock);
  session_.set_energy_source(&energy);
  session_.start();
  // Single-pass reference: 1 ms of kernel.
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  sim_.clock->advance_ns(1'000'000);
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  session_.handle(1, 1, launch_record(0));
  // Three passes of 1 ms each, with 4 ms of restores between them that the counters must not see.
  const std::uint64_t t0 = sim_.clock->now_ns();
  for (int pass = 0; pass < 3; ++pass) {
    if (pass > 0) sim_.clock->advance_ns(4'000'000);
    ASSERT_TRUE(std::holds_alternative<wire::Ok>(session_.handle(1, 1, wire::Snapshot{1, wire::Phase::kBefore})));
    sim_.clock->advance_ns(1'000'000);
    ASSERT_TRUE(std::holds_alternative<wire::Ok>(session_.handle(1, 1, wire::Snapshot{1, wire::Phase::kAfter})));
  }
  wire::Launch replayed = launch_record(1);
  replayed.passes = 3;
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(session_.handle(1, 1, replayed)));
  ASSERT_EQ(rows_.size(), 2u);
  EXPECT_EQ(rows_[1].deltas.gpu_ticks, 3 * rows_[0].deltas.gpu_ticks);
  EXPECT_EQ(rows_[1].deltas.a[0], 3 * rows_[0].deltas.a[0]);
  EXPECT_EQ(rows_[1].deltas.timestamp, 3 * rows_[0].deltas.timestamp);
  EXPECT_TRUE(rows_[1].flags.empty());
  ASSERT_TRUE(energy_[1].first && energy_[1].second);
  EXPECT_EQ(energy_[1].first->time_ns, t0 + 1);
  EXPECT_EQ(energy_[1].second->time_ns - energy_[1].first->time_ns, 3'000'000u + 2 * 4'000'000u);
}

TEST_F(SessionTest, APassCountTheCountersDoNotMatchIsFlagged) {
  session_.start();
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  wire::Launch l = launch_record(0);
  l.passes = 2;
  session_.handle(1, 1, l);
  ASSERT_EQ(rows_.size(), 1u);
  EXPECT_EQ(rows_[0].flags, std::vector<std::string>{"pass_count_mismatch"});
}

TEST_F(SessionTest, ALoneBeforeIsDroppedAlsoAfterFinishedPasses) {
  session_.start();
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  EXPECT_TRUE(std::holds_alternative<wire::Error>(session_.handle(1, 1, launch_record(0))));
  // A replay whose last pass never got its 'after': its counters miss a pass.
  session_.handle(1, 1, wire::Snapshot{1, wire::Phase::kBefore});
  session_.handle(1, 1, wire::Snapshot{1, wire::Phase::kAfter});
  session_.handle(1, 1, wire::Snapshot{1, wire::Phase::kBefore});
  wire::Launch l = launch_record(1);
  l.passes = 2;
  EXPECT_TRUE(std::holds_alternative<wire::Error>(session_.handle(1, 1, l)));
  EXPECT_EQ(session_.launches_dropped(), 2u);
  EXPECT_TRUE(rows_.empty());
}

TEST_F(SessionTest, ClientsAreKeptApartAndAVanishedClientStopsTheBusyModel) {
  session_.start();
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  session_.client_gone(1);  // died mid-kernel
  EXPECT_EQ(session_.launches_dropped(), 1u);
  // Client 2 reuses launch id 0: it must not pair with client 1's snapshot.
  EXPECT_TRUE(std::holds_alternative<wire::Error>(session_.handle(2, 2, launch_record(0))));
  // The busy counter no longer advances once the dead client's kernel was ended.
  const std::uint32_t a0 = sim_.device.mmio->read32(mmio::reg::a_low(0));
  sim_.clock->advance_ns(1'000'000);
  EXPECT_EQ(sim_.device.mmio->read32(mmio::reg::a_low(0)), a0);
}

TEST_F(SessionTest, StopRestoresTheRegistersAndSnapshotsThenFail) {
  sim_.device.mmio->write32(mmio::reg::kOaControl, 0x3);
  session_.start();
  EXPECT_EQ(sim_.device.mmio->read32(mmio::reg::kOaControl), (5u << 2) | 1u);
  session_.stop();
  EXPECT_EQ(sim_.device.mmio->read32(mmio::reg::kOaControl), 0x3u);
  EXPECT_TRUE(std::holds_alternative<wire::Error>(session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kBefore})));
}

TEST(SessionLifetimeTest, DestructorRestoresWhenStopWasNeverCalled) {
  testing::SimFixture sim;
  sim.device.mmio->write32(mmio::reg::kOaControl, 0);
  {
    Session s(*sim.source, oa::ReportFormat::kA32u40_A4u32_B8_C8, [](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {});
    s.start();
  }
  EXPECT_EQ(sim.device.mmio->read32(mmio::reg::kOaControl), 0u);
}

// The simulator's source until gone() is set; then every call fails as one through a vanished
// oaprofd does. stop() is counted either way, for the tests to see it was reached.
class VanishingSource final : public gpu::CounterSource {
 public:
  explicit VanishingSource(gpu::CounterSource& inner) : inner_(inner) {}
  std::string_view name() const override { return "vanishing"; }
  void start(oa::ReportFormat format) override { inner_.start(format); }
  oa::RawReport snapshot(std::uint32_t id) override {
    fail_if_gone();
    return inner_.snapshot(id);
  }
  void stop() override {
    ++stops;
    inner_.stop();
    fail_if_gone();
  }
  void kernel_running(bool running) override {
    fail_if_gone();
    inner_.kernel_running(running);
  }
  bool gone = false;
  int stops = 0;

 private:
  void fail_if_gone() const {
    if (gone) throw std::runtime_error("oaprofd at /run/oaprof/oaprofd.sock went away");
  }
  gpu::CounterSource& inner_;
};

TEST(SessionLifetimeTest, AFailedKernelSignalStillStopsTheSource) {
  testing::SimFixture sim;
  VanishingSource source(*sim.source);
  Session s(source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
            [](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {});
  s.start();
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(s.handle(1, 1, wire::Snapshot{0, wire::Phase::kBefore})));
  source.gone = true;  // the kernel is marked running: stop() must end it first
  EXPECT_THROW(s.stop(), std::runtime_error);
  EXPECT_EQ(source.stops, 1);
}

TEST(SessionLifetimeTest, ADestructorWhoseStopFailsDoesNotThrow) {
  testing::SimFixture sim;
  VanishingSource source(*sim.source);
  {
    Session s(source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
              [](const oa::LaunchRecord&, const power::EnergyReading*,
                 const power::EnergyReading*) {});
    s.start();
    source.gone = true;
  }  // an exception out of here would end the test program
  EXPECT_EQ(source.stops, 1);
}

TEST(SamplerTest, ASourceThatGoesAwayEndsSamplingWithAFlaggedRow) {
  testing::SimFixture sim;
  VanishingSource source(*sim.source);
  std::vector<oa::LaunchRecord> rows;
  Session s(source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
            [&rows](const oa::LaunchRecord& r, const power::EnergyReading*,
                    const power::EnergyReading*) { rows.push_back(r); });
  s.start();
  SamplerOptions o;
  o.label = "(application)";
  {
    Sampler sampler(s, o);
    sampler.start();
    source.gone = true;
    sampler.stop();  // its last snapshot fails: no throw, a row with what was read
    EXPECT_EQ(sampler.failure(), "oaprofd at /run/oaprof/oaprofd.sock went away");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].launch.kernel_name, "(application)");
    EXPECT_NE(std::find(rows[0].flags.begin(), rows[0].flags.end(), "sampling_failed"),
              rows[0].flags.end());
  }  // nor from its destructor
  EXPECT_EQ(rows.size(), 1u);
  source.gone = false;
}

}  // namespace
}  // namespace oaprof::daemon
