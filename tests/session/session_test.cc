#include "session/session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "mmio/registers.h"
#include "session/sampler.h"
#include "tests/common/sim_fixture.h"

namespace oaprof::session {
namespace {
namespace wire = ipc::wire;
using ::testing::HasSubstr;

wire::Launch launch_record(std::uint64_t id) {
  wire::Launch l;
  l.launch_id = id;
  l.flags = wire::kLaunchProgramIndex;  // as every layer of this version sends it
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
  test_support::SimFixture sim_;
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

  // What the server does with a request: answer it, send the reply, settle what the answer left.
  wire::Body answer(std::uint64_t client, std::uint32_t pid, const wire::Body& request) {
    wire::Body reply = session_.handle(client, pid, request);
    session_.settle(client);
    return reply;
  }
  // A launch's 'before' and 'after', `ns` apart.
  void snapshot_pair(std::uint64_t client, std::uint32_t pid, std::uint64_t id,
                     std::uint64_t ns = 1'000'000) {
    answer(client, pid, wire::Snapshot{id, wire::Phase::kBefore});
    sim_.clock->advance_ns(ns);
    answer(client, pid, wire::Snapshot{id, wire::Phase::kAfter});
  }
};

TEST_F(SessionTest, BeforeAfterLaunchGivesOneRowWithTheKernelsDeltas) {
  session_.start();
  ASSERT_TRUE(
      std::holds_alternative<wire::Ok>(answer(1, 99, wire::Snapshot{0, wire::Phase::kBefore})));
  sim_.clock->advance_ns(2'000'000);
  ASSERT_TRUE(
      std::holds_alternative<wire::Ok>(answer(1, 99, wire::Snapshot{0, wire::Phase::kAfter})));
  sim_.clock->advance_ns(5'000'000);  // idle time after the launch does not count as busy
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(answer(1, 99, launch_record(0))));
  ASSERT_EQ(rows_.size(), 1u);
  EXPECT_EQ(rows_[0].index, 0u);
  EXPECT_EQ(rows_[0].pid, 99u);
  EXPECT_EQ(rows_[0].deltas.gpu_ticks, 2'300'000u);
  EXPECT_EQ(rows_[0].deltas.a[0], 2'300'000u);
  EXPECT_EQ(rows_[0].deltas.timestamp, 24'000u);
  EXPECT_TRUE(rows_[0].flags.empty());
}

// Issue 35: a 'before' that names its kernel hands the simulator the kernel's known work (the
// resolver, bench::known_work in a run), so the row counts that work instead of the workload
// fractions; a name the resolver does not know, or a session without a resolver (a real device),
// keeps the fractions.
TEST_F(SessionTest, ABeforeThatNamesAKnownKernelMakesTheSimulatorCountItsWork) {
  oa::KernelWork work;
  work.work_items = 4096;
  work.fp32_ops = 8'000'000;  // both FPUs, 8 an EU-cycle: 1e6 EU-cycles on each
  std::vector<std::string> asked;
  const auto launch_named = [&](std::uint64_t id, const std::string& name) {
    answer(1, 99, wire::Snapshot{id, wire::Phase::kBefore, false, wire::WorkHint{name, 4096}});
    sim_.clock->advance_ns(1'000'000);
    answer(1, 99, wire::Snapshot{id, wire::Phase::kAfter});
    answer(1, 99, launch_record(id));
  };
  session_.start();
  launch_named(0, "mad_vect4");  // no resolver yet: as on a real device
  session_.set_work_resolver([&](const wire::WorkHint& hint) -> std::optional<oa::KernelWork> {
    asked.push_back(hint.kernel_name);
    if (hint.kernel_name != "mad_vect4" || hint.global_size != 4096) return std::nullopt;
    return work;
  });
  launch_named(1, "mad_vect4");
  launch_named(2, "[2Jnot_a_kernel");
  ASSERT_EQ(rows_.size(), 3u);
  EXPECT_EQ(asked, (std::vector<std::string>{"mad_vect4", "[2Jnot_a_kernel"}));
  EXPECT_EQ(rows_[1].deltas.a[10], 1'000'000u);
  EXPECT_EQ(rows_[1].deltas.a[11], 1'000'000u);
  for (int unknown : {0, 2}) {
    EXPECT_NE(rows_[unknown].deltas.a[10], 1'000'000u) << "row " << unknown;
    EXPECT_GT(rows_[unknown].deltas.a[10], 0u) << "the workload fractions, row " << unknown;
  }
}

// Issue 29, item 13: the row carries the program's own index of the launch (its launch_id: the
// layer counts every launch, measured or not), not the session's count, which starts at 0.
TEST_F(SessionTest, ARowCarriesTheProgramsOwnIndexOfItsLaunch) {
  session_.start();
  snapshot_pair(1, 99, 7);
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(answer(1, 99, launch_record(7))));
  ASSERT_EQ(rows_.size(), 1u);
  EXPECT_EQ(rows_[0].index, 0u);
  EXPECT_EQ(rows_[0].program_launch, std::optional<std::uint64_t>{7});
}

// A layer older than oaprof counts only measured launches in its ids, which would show as the
// program's launch: its launches are refused with an error that says so, and counted dropped.
TEST_F(SessionTest, ALaunchFromAnOlderLayerIsRefusedAndSaysWhy) {
  session_.start();
  snapshot_pair(1, 99, 0);
  wire::Launch older = launch_record(0);
  older.flags = 0;
  const wire::Body reply = answer(1, 99, older);
  ASSERT_TRUE(std::holds_alternative<wire::Error>(reply));
  EXPECT_EQ(std::get<wire::Error>(reply).code, wire::ErrorCode::kBadRequest);
  EXPECT_THAT(std::get<wire::Error>(reply).message, HasSubstr("older than oaprof"));
  EXPECT_TRUE(rows_.empty());
  EXPECT_EQ(session_.launches_dropped(), 1u);
}

bool has_flag(const oa::LaunchRecord& r, const std::string& flag) {
  return std::find(r.flags.begin(), r.flags.end(), flag) != r.flags.end();
}

// Issue 31: a Level Zero launch held by the host is measured from when the layer gave up
// waiting to when it saw the launch complete, a window other launches' brackets may lie in. Its
// row counts the whole window and is flagged not_bracketed; the launch bracketed alone inside it
// keeps its own exact, unflagged row.
TEST_F(SessionTest, AHeldLaunchCountsItsWholeWindowAndIsFlaggedNotBracketed) {
  session_.start();
  answer(1, 99, wire::Snapshot{0, wire::Phase::kBefore});  // the held launch
  sim_.clock->advance_ns(1'000'000);
  snapshot_pair(1, 99, 1, 2'000'000);  // another launch, bracketed alone
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(answer(1, 99, launch_record(1))));
  sim_.clock->advance_ns(1'000'000);
  answer(1, 99, wire::Snapshot{0, wire::Phase::kAfter});
  wire::Launch held = launch_record(0);
  held.flags |= wire::kLaunchNotBracketed;
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(answer(1, 99, held)));
  ASSERT_EQ(rows_.size(), 2u);
  EXPECT_TRUE(rows_[0].flags.empty());
  EXPECT_EQ(rows_[0].deltas.timestamp, 24'000u);  // its 2 ms at 12 MHz
  EXPECT_EQ(rows_[1].flags, std::vector<std::string>{"not_bracketed"});
  EXPECT_EQ(rows_[1].deltas.timestamp, 48'000u);  // the whole 4 ms
  EXPECT_EQ(rows_[1].deltas.gpu_ticks, 4'600'000u);
}

// A 5 s kernel at 1150 MHz runs 5.75e9 GPU clocks: GPU_TICKS (32 bits) wraps once in 3.73 s, so
// between two reads 5 s apart it may have wrapped twice, and the delta cannot be trusted.
TEST_F(SessionTest, ALaunchLongerThanACountersWrapWithoutReadsInsideIsFlagged) {
  session_.start();
  answer(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  sim_.clock->advance_ns(5'000'000'000);
  answer(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  answer(1, 1, launch_record(0));
  ASSERT_EQ(rows_.size(), 1u);
  EXPECT_TRUE(rows_[0].deltas.interval_too_long);
  EXPECT_TRUE(has_flag(rows_[0], "interval_too_long"));
}

// With the session's periodic reads inside the launch, the same kernel is exact: every interval
// is shorter than a wrap, and the folded delta counts every clock.
TEST_F(SessionTest, PeriodicReadsInsideALongLaunchKeepItExact) {
  LaunchReadOptions reads;
  reads.read_period = std::chrono::milliseconds(0);  // read whenever asked (the test asks)
  session_.set_launch_reads(reads);
  session_.start();
  session_.read_open_launches();  // no pass open: nothing to read
  answer(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  for (int i = 0; i < 10; ++i) {
    sim_.clock->advance_ns(500'000'000);
    session_.read_open_launches();
  }
  answer(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  answer(1, 1, launch_record(0));
  ASSERT_EQ(rows_.size(), 1u);
  EXPECT_EQ(rows_[0].deltas.gpu_ticks, 5'750'000'000u);
  EXPECT_EQ(rows_[0].deltas.a[0], 5'750'000'000u);  // busy, 40 bits: no wrap there
  EXPECT_EQ(rows_[0].deltas.timestamp, 60'000'000u);
  EXPECT_GE(rows_[0].deltas.wraps_corrected, 1);
  EXPECT_FALSE(rows_[0].deltas.interval_too_long);
  EXPECT_TRUE(rows_[0].flags.empty());
}

TEST(LaunchReadOptionsTest, ReadsWellInsideTheExactInterval) {
  const LaunchReadOptions o = launch_read_options(12e6, 1150.0, 24);
  EXPECT_NEAR(o.max_interval_ns, 1.867e9, 1e6);
  EXPECT_EQ(o.read_period, std::chrono::milliseconds(466));
  EXPECT_EQ(launch_read_options(12e6, 2400.0, 96).read_period, std::chrono::milliseconds(223));
}

// freq_changed: the GPU frequency (RPSTAT) read beside the launch's snapshots differed.
TEST_F(SessionTest, AFrequencyChangeDuringALaunchFlagsItsRow) {
  session_.start();
  auto set_freq_mhz = [&](std::uint32_t units) {  // units of 50/3 MHz
    sim_.device.mmio->write32(mmio::reg::kRpStat, units << mmio::reg::kRpStatFreqShift);
  };
  answer(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  sim_.clock->advance_ns(1'000'000);
  answer(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  answer(1, 1, launch_record(0));
  answer(1, 1, wire::Snapshot{1, wire::Phase::kBefore});
  set_freq_mhz(30);  // 500 MHz
  sim_.clock->advance_ns(1'000'000);
  answer(1, 1, wire::Snapshot{1, wire::Phase::kAfter});
  answer(1, 1, launch_record(1));
  ASSERT_EQ(rows_.size(), 2u);
  EXPECT_FALSE(has_flag(rows_[0], "freq_changed"));
  EXPECT_TRUE(has_flag(rows_[1], "freq_changed"));
}

TEST_F(SessionTest, EnergyIsReadBesideTheSnapshotsAndFollowsTheBusySignal) {
  // 1 µJ per ns busy, nothing idle.
  FakeEnergy energy(*sim_.clock);
  std::vector<bool> busy_calls;
  session_.set_energy_source(&energy);
  session_.set_busy_listener([&](bool b) { busy_calls.push_back(b); });
  session_.start();
  answer(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  sim_.clock->advance_ns(1000);
  energy.busy_uj_ = 1000;
  answer(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  answer(1, 1, launch_record(0));
  ASSERT_EQ(energy_.size(), 1u);
  ASSERT_TRUE(energy_[0].first && energy_[0].second);
  EXPECT_EQ(energy_[0].second->energy_uj.at(power::Domain::kPackage) -
                energy_[0].first->energy_uj.at(power::Domain::kPackage),
            1000u);
  EXPECT_EQ(busy_calls, (std::vector<bool>{true, false}));
}

// The reply to a snapshot waits for the counters and the kernel signal only: the energy beside
// it is read once the reply is sent (settle), or before the client's next request at the latest.
TEST_F(SessionTest, TheEnergyBesideASnapshotIsReadAfterTheReply) {
  FakeEnergy energy(*sim_.clock);
  std::vector<bool> busy_calls;
  session_.set_energy_source(&energy);
  session_.set_busy_listener([&](bool b) { busy_calls.push_back(b); });
  session_.start();
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  EXPECT_EQ(busy_calls, (std::vector<bool>{true}));  // the kernel signal is part of the answer
  energy.busy_uj_ = 7;  // what the source holds when the reply has gone
  session_.settle(2);   // another client's settle leaves this one's work alone
  session_.settle(1);
  energy.busy_uj_ = 50;
  // Without a settle, the next request of the same client does it before its own answer.
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  energy.busy_uj_ = 90;
  session_.handle(1, 1, launch_record(0));
  ASSERT_EQ(energy_.size(), 1u);
  ASSERT_TRUE(energy_[0].first && energy_[0].second);
  EXPECT_EQ(energy_[0].first->energy_uj.at(power::Domain::kPackage), 7u);
  EXPECT_EQ(energy_[0].second->energy_uj.at(power::Domain::kPackage), 90u);
  EXPECT_EQ(busy_calls, (std::vector<bool>{true, false}));
}

// Two programs' launches interleave: the busy signal must follow the requests' order, whenever
// each client's deferred work is settled, or the simulated RAPL tree would idle under a kernel.
TEST_F(SessionTest, TheBusySignalFollowsTheRequestsInOrderAcrossClients) {
  std::vector<bool> busy_calls;
  session_.set_busy_listener([&](bool b) { busy_calls.push_back(b); });
  session_.start();
  answer(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kAfter});  // A's settle comes late
  session_.handle(2, 2, wire::Snapshot{0, wire::Phase::kBefore});
  session_.settle(2);
  session_.settle(1);
  EXPECT_EQ(busy_calls, (std::vector<bool>{true, false, true}));
  session_.set_busy_listener({});  // B's kernel is still on: the session's end must not call us
}

TEST_F(SessionTest, EnergyFirstReadsTheEnergyBeforeTheAnswer) {
  FakeEnergy energy(*sim_.clock);
  session_.set_energy_source(&energy);
  session_.start();
  energy.busy_uj_ = 3;
  session_.handle(1, 1, wire::Snapshot{0, wire::Phase::kBefore, true});
  energy.busy_uj_ = 40;  // a deferred read would see this
  answer(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  answer(1, 1, launch_record(0));
  ASSERT_EQ(energy_.size(), 1u);
  ASSERT_TRUE(energy_[0].first.has_value());
  EXPECT_EQ(energy_[0].first->energy_uj.at(power::Domain::kPackage), 3u);
}

// Back to back, a launch's 'before' takes the previous 'after' reading (RAPL could not tell the
// two instants apart), so the energy is read once per launch and the windows tile the run.
TEST_F(SessionTest, BackToBackLaunchesShareTheReadingBetweenThem) {
  FakeEnergy energy(*sim_.clock);
  session_.set_energy_source(&energy);
  session_.start();
  auto launch = [&](std::uint64_t id, std::uint64_t at_before, std::uint64_t at_after) {
    energy.busy_uj_ = at_before;
    answer(1, 1, wire::Snapshot{id, wire::Phase::kBefore});
    energy.busy_uj_ = at_after;
    answer(1, 1, wire::Snapshot{id, wire::Phase::kAfter});
    answer(1, 1, launch_record(id));
  };
  launch(0, 0, 10);
  launch(1, 25, 40);  // 25: what a fresh read would see
  ASSERT_EQ(energy_.size(), 2u);
  EXPECT_EQ(energy_[1].first->energy_uj.at(power::Domain::kPackage), 10u);
  EXPECT_EQ(energy_[1].first->time_ns, energy_[0].second->time_ns);
  session_.set_energy_reuse(std::chrono::nanoseconds(0));
  launch(2, 55, 70);
  ASSERT_EQ(energy_.size(), 3u);
  EXPECT_EQ(energy_[2].first->energy_uj.at(power::Domain::kPackage), 55u);
}

TEST_F(SessionTest, WithoutAnEnergySourceRowsHaveNoReadings) {
  session_.start();
  answer(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  answer(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  answer(1, 1, launch_record(0));
  ASSERT_EQ(energy_.size(), 1u);
  EXPECT_FALSE(energy_[0].first.has_value());
}

TEST_F(SessionTest, LaunchWithoutSnapshotsIsAnErrorAndCountsAsDropped) {
  session_.start();
  const auto reply = answer(1, 1, launch_record(5));
  ASSERT_TRUE(std::holds_alternative<wire::Error>(reply));
  EXPECT_EQ(std::get<wire::Error>(reply).code, wire::ErrorCode::kUnknownLaunch);
  EXPECT_EQ(session_.launches_dropped(), 1u);
  const auto after_only = answer(1, 1, wire::Snapshot{6, wire::Phase::kAfter});
  EXPECT_TRUE(std::holds_alternative<wire::Error>(after_only));
  EXPECT_TRUE(rows_.empty());
}

// A client that snapshots launches and never ends them (a hostile program under sudo): the
// privileged side keeps at most kMaxOpenLaunches of them, refuses the 'before' of any further
// launch, counts it as dropped, and still measures the launches it kept.
TEST_F(SessionTest, LaunchesOpenedAndNeverEndedAreBoundedAndCountedAsDropped) {
  session_.start();
  for (std::uint64_t id = 0; id < Session::kMaxOpenLaunches; ++id) {
    ASSERT_TRUE(
        std::holds_alternative<wire::Ok>(answer(1, 1, wire::Snapshot{id, wire::Phase::kBefore})));
    ASSERT_TRUE(
        std::holds_alternative<wire::Ok>(answer(1, 1, wire::Snapshot{id, wire::Phase::kAfter})));
  }
  const std::uint64_t one_more = Session::kMaxOpenLaunches;
  const auto refused = answer(2, 2, wire::Snapshot{one_more, wire::Phase::kBefore});
  ASSERT_TRUE(std::holds_alternative<wire::Error>(refused));
  EXPECT_EQ(std::get<wire::Error>(refused).code, wire::ErrorCode::kBadRequest);
  EXPECT_THAT(std::get<wire::Error>(refused).message, HasSubstr("launches are open"));
  EXPECT_EQ(session_.launches_dropped(), 1u);
  // A launch already open is still measured, and its end makes room for the next.
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(answer(1, 1, launch_record(7))));
  EXPECT_EQ(rows_.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(
      answer(2, 2, wire::Snapshot{one_more, wire::Phase::kBefore})));
}

TEST_F(SessionTest, ReplayedPassesSumTheirPairsAndTheEnergyWindowSpansThemAll) {
  FakeEnergy energy(*sim_.clock);
  session_.set_energy_source(&energy);
  session_.start();
  // Single-pass reference: 1 ms of kernel.
  answer(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  sim_.clock->advance_ns(1'000'000);
  answer(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  answer(1, 1, launch_record(0));
  // Three passes of 1 ms each, with 4 ms of restores between them that the counters must not see.
  const std::uint64_t t0 = sim_.clock->now_ns();
  for (int pass = 0; pass < 3; ++pass) {
    if (pass > 0) sim_.clock->advance_ns(4'000'000);
    ASSERT_TRUE(
        std::holds_alternative<wire::Ok>(answer(1, 1, wire::Snapshot{1, wire::Phase::kBefore})));
    sim_.clock->advance_ns(1'000'000);
    ASSERT_TRUE(
        std::holds_alternative<wire::Ok>(answer(1, 1, wire::Snapshot{1, wire::Phase::kAfter})));
  }
  wire::Launch replayed = launch_record(1);
  replayed.passes = 3;
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(answer(1, 1, replayed)));
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
  answer(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  answer(1, 1, wire::Snapshot{0, wire::Phase::kAfter});
  wire::Launch l = launch_record(0);
  l.passes = 2;
  answer(1, 1, l);
  ASSERT_EQ(rows_.size(), 1u);
  EXPECT_EQ(rows_[0].flags, std::vector<std::string>{"pass_count_mismatch"});
}

// A flex register set (EU_PERF_CNTL0: context-saved, as OACTXCONTROL) on a SimGpu that switches
// contexts at 1, 2, 3 … ms, each switch loading another context's image.
class SessionConfigLostTest : public ::testing::Test {
 protected:
  static mmio::SimConfig switching() {
    mmio::SimConfig config;
    config.context_switch_period_ns = 1'000'000;
    return config;
  }
  static mmio::OaConfig flex() {
    mmio::OaConfig c;
    c.flex = {{0xE458, 0x5}};
    return c;
  }
  test_support::SimFixture sim{switching()};
  std::vector<oa::LaunchRecord> rows;
  Session s{*sim.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
            [this](const oa::LaunchRecord& r, const power::EnergyReading*,
                   const power::EnergyReading*) { rows.push_back(r); },
            flex()};
};

TEST_F(SessionConfigLostTest, OnlyTheLaunchDuringWhichAContextSwitchUndidTheSetIsFlagged) {
  s.start();
  auto pass = [&](std::uint64_t id, std::uint64_t from_ns, std::uint64_t to_ns) {
    sim.clock->advance_ns(from_ns - sim.clock->now_ns());
    s.handle(1, 1, wire::Snapshot{id, wire::Phase::kBefore});
    sim.clock->advance_ns(to_ns - from_ns);
    s.handle(1, 1, wire::Snapshot{id, wire::Phase::kAfter});
  };
  pass(0, 100'000, 500'000);  // no switch inside
  s.handle(1, 1, launch_record(0));
  pass(1, 600'000, 1'400'000);  // the switch at 1 ms reloads another context's image
  s.handle(1, 1, launch_record(1));
  pass(2, 1'500'000, 1'900'000);  // repaired at launch 1's 'after': right again
  s.handle(1, 1, launch_record(2));
  // Replayed: the first pass sees the switch at 2 ms, the second none; the row covers both.
  pass(3, 1'950'000, 2'100'000);
  pass(3, 2'200'000, 2'400'000);
  wire::Launch replayed = launch_record(3);
  replayed.passes = 2;
  s.handle(1, 1, replayed);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(sim.device.sim->context_switches(), 2u);
  EXPECT_TRUE(rows[0].flags.empty());
  EXPECT_EQ(rows[1].flags, std::vector<std::string>{"config_lost"});
  EXPECT_TRUE(rows[2].flags.empty());
  EXPECT_EQ(rows[3].flags, std::vector<std::string>{"config_lost"});
}

TEST_F(SessionConfigLostTest, ASamplersRowIsFlaggedWhenAContextSwitchUndidTheSetInside) {
  s.start();
  SamplerOptions so;
  so.read_period = std::chrono::hours(1);  // only the reads at start and stop
  auto sample = [&](std::uint64_t from_ns, std::uint64_t to_ns) {
    sim.clock->advance_ns(from_ns - sim.clock->now_ns());
    Sampler sampler(s, so);
    sampler.start();
    sim.clock->advance_ns(to_ns - from_ns);
    sampler.stop();
  };
  sample(100'000, 900'000);      // no switch inside
  sample(950'000, 1'500'000);    // the switch at 1 ms reloads another context's image
  sample(1'600'000, 1'900'000);  // put back by the previous row's last read
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(sim.device.sim->context_switches(), 1u);
  EXPECT_TRUE(rows[0].flags.empty());
  EXPECT_EQ(rows[1].flags, std::vector<std::string>{"config_lost"});
  EXPECT_TRUE(rows[2].flags.empty());
}

// Kernel replay across two sets that differ in one flex event: EU_PERF_CNTL0 selecting 0x3F
// counts A7 at 64/256 of the busy EU clocks on the simulated part, 0xBF at 192/256.
class SessionPassSetsTest : public ::testing::Test {
 protected:
  static mmio::SimConfig flex_part() {
    mmio::SimConfig config;
    config.flex_events = true;
    return config;
  }
  static mmio::OaConfig flex(std::uint32_t select) {
    mmio::OaConfig c;
    c.flex = {{mmio::reg::kEuPerfCntl[0], select}};
    return c;
  }
  SessionPassSetsTest() { s.set_pass_configs({{"A", flex(0x3F)}, {"B", flex(0xBF)}}, 1); }
  // One pass of launch `id` for `client`: 1 ms of kernel between its snapshots.
  void pass(std::uint64_t client, std::uint64_t id) {
    s.handle(client, 1, wire::Snapshot{id, wire::Phase::kBefore});
    sim.clock->advance_ns(1'000'000);
    s.handle(client, 1, wire::Snapshot{id, wire::Phase::kAfter});
  }
  wire::Launch passes(std::uint64_t id, std::uint32_t n) {
    wire::Launch l = launch_record(id);
    l.passes = n;
    return l;
  }
  static double a7_per_busy_eu_clock(const oa::LaunchRecord& r) {
    return static_cast<double>(r.deltas.a[7]) / static_cast<double>(r.deltas.a[0]) / 24.0;
  }
  test_support::SimFixture sim{flex_part()};
  std::vector<oa::LaunchRecord> rows;
  Session s{*sim.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
            [this](const oa::LaunchRecord& r, const power::EnergyReading*,
                   const power::EnergyReading*) { rows.push_back(r); }};
};

TEST_F(SessionPassSetsTest, EachPassCountsItsOwnSetAndTheLaunchGivesARecordPerSet) {
  s.start();
  for (std::uint64_t id = 0; id < 2; ++id) {
    pass(1, id);
    pass(1, id);
    s.handle(1, 1, passes(id, 2));
  }
  ASSERT_EQ(rows.size(), 4u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(rows[i].index, i / 2) << "a launch's records share its index";
    EXPECT_EQ(rows[i].pass_set, i % 2);
    EXPECT_TRUE(rows[i].flags.empty());
    EXPECT_EQ(rows[i].deltas.gpu_ticks, 1'150'000u) << "one pass of 1 ms at 1150 MHz";
    EXPECT_NEAR(a7_per_busy_eu_clock(rows[i]), i % 2 == 0 ? 0.25 : 0.75, 1e-6);
  }
  // Set 0 was programmed at start: the first launch switched to set 1 for its second pass, and
  // the second launch started with set 1 and switched back to 0; sets - 1 switches a launch.
  EXPECT_EQ(s.switch_cost().switches, 2u);
}

TEST_F(SessionPassSetsTest, ASetWithoutAPassAndAPassCutBySwitchingAreFlagged) {
  s.start();
  pass(1, 0);  // launch 0 ran once: set 1 got nothing
  s.handle(1, 1, passes(0, 1));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].flags.empty());
  EXPECT_EQ(rows[1].flags, std::vector<std::string>{"pass_missing"});
  EXPECT_EQ(rows[1].deltas.gpu_ticks, 0u);
  rows.clear();
  // Client 2's launch is open in set 0 when client 1's second pass switches the unit to set 1.
  pass(1, 1);
  s.handle(2, 2, wire::Snapshot{7, wire::Phase::kBefore});
  pass(1, 1);
  s.handle(2, 2, wire::Snapshot{7, wire::Phase::kAfter});
  pass(2, 7);
  s.handle(1, 1, passes(1, 2));
  s.handle(2, 2, passes(7, 2));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_TRUE(rows[0].flags.empty());
  EXPECT_TRUE(rows[1].flags.empty());
  EXPECT_THAT(rows[2].flags, ::testing::Contains("pass_disturbed"));
  EXPECT_THAT(rows[3].flags, ::testing::Contains("pass_disturbed"));
}

TEST(SessionPassSetsOptionsTest, SetsAreGivenBeforeStartWithAPassEach) {
  test_support::SimFixture sim;
  Session s(
      *sim.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
      [](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {});
  EXPECT_THROW(s.set_pass_configs({}, 1), std::invalid_argument);
  EXPECT_THROW(s.set_pass_configs({{"A", {}}}, 0), std::invalid_argument);
  s.start();
  EXPECT_THROW(s.set_pass_configs({{"A", {}}, {"B", {}}}, 1), std::logic_error);
}

// --access perf on the simulated i915, with losses injected the way the OA unit reports them:
// OASTATUS bits that the stream's read() turns into OA_REPORT_LOST / OA_BUFFER_LOST records.
class SessionStreamLossTest : public ::testing::Test {
 protected:
  SessionStreamLossTest() {
    auto c = std::make_unique<mmio::ManualClock>();
    clock_ = c.get();
    device_ = gpu::make_sim_device(std::move(c));
    source_ = gpu::make_counter_source("perf", device_);
    config_.guid = "db41edd4-d8e7-4730-ad11-b9a2d6833503";  // i915 streams only a named set
    config_.flex = {{0xE458, 0x5}};
  }
  void lose(std::uint32_t status_bits) {
    device_.sim->write32(mmio::reg::kOaStatus,
                         device_.sim->read32(mmio::reg::kOaStatus) | status_bits);
  }
  Session::Sink sink() {
    return [this](const oa::LaunchRecord& r, const power::EnergyReading*,
                  const power::EnergyReading*) { rows_.push_back(r); };
  }
  mmio::ManualClock* clock_ = nullptr;
  gpu::Device device_;
  std::unique_ptr<gpu::CounterSource> source_;
  mmio::OaConfig config_;
  std::vector<oa::LaunchRecord> rows_;
};

TEST_F(SessionStreamLossTest, EachRowIsFlaggedForTheLossesInItsOwnWindow) {
  Session s(*source_, oa::ReportFormat::kA32u40_A4u32_B8_C8, sink(), config_);
  s.start();
  auto launch = [&](std::uint64_t id, std::uint32_t lost_during) {
    s.handle(1, 1, wire::Snapshot{id, wire::Phase::kBefore});
    clock_->advance_ns(100'000);
    if (lost_during != 0) lose(lost_during);
    clock_->advance_ns(100'000);
    s.handle(1, 1, wire::Snapshot{id, wire::Phase::kAfter});
    clock_->advance_ns(50'000);
    s.handle(1, 1, launch_record(id));
  };
  launch(0, 0);
  launch(1, mmio::SimGpu::kOaStatusReportLost);
  launch(2, mmio::SimGpu::kOaStatusBufferOverflow | mmio::SimGpu::kOaStatusReportLost);
  launch(3, 0);
  lose(mmio::SimGpu::kOaStatusReportLost);  // between launches: no row's window
  launch(4, 0);
  ASSERT_EQ(rows_.size(), 5u);
  EXPECT_TRUE(rows_[0].flags.empty());
  EXPECT_EQ(rows_[1].flags, std::vector<std::string>{"reports_lost"});
  EXPECT_EQ(rows_[2].flags, std::vector<std::string>{"oa_buffer_lost"});
  EXPECT_TRUE(rows_[3].flags.empty());
  EXPECT_TRUE(rows_[4].flags.empty());
  const gpu::PerfStreamCounts counts = s.perf_stream_counts();
  EXPECT_EQ(counts.reports_lost, 2);
  EXPECT_EQ(counts.buffer_lost, 1);
  s.stop();
  // The end-of-run warning still has them after the stream closed.
  const std::string warning = gpu::perf_stream_loss_warning(s.perf_stream_counts());
  EXPECT_THAT(warning, HasSubstr("lost reports 2 times"));
  EXPECT_THAT(warning, HasSubstr("OA buffer 1 times"));
  EXPECT_THAT(warning, HasSubstr("--oa-exponent"));
}

TEST_F(SessionStreamLossTest, ASamplersRowIsFlaggedToo) {
  Session s(*source_, oa::ReportFormat::kA32u40_A4u32_B8_C8, sink(), config_);
  s.start();
  EXPECT_EQ(gpu::perf_stream_loss_warning(s.perf_stream_counts()), "");
  SamplerOptions so;
  so.read_period = std::chrono::hours(1);  // only the reads at start and stop
  Sampler sampler(s, so);
  sampler.start();
  clock_->advance_ns(100'000);
  lose(mmio::SimGpu::kOaStatusBufferOverflow);
  clock_->advance_ns(100'000);
  sampler.stop();
  ASSERT_EQ(rows_.size(), 1u);
  EXPECT_EQ(rows_[0].flags, std::vector<std::string>{"oa_buffer_lost"});
}

TEST_F(SessionTest, ALoneBeforeIsDroppedAlsoAfterFinishedPasses) {
  session_.start();
  answer(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  EXPECT_TRUE(std::holds_alternative<wire::Error>(answer(1, 1, launch_record(0))));
  // A replay whose last pass never got its 'after': its counters miss a pass.
  answer(1, 1, wire::Snapshot{1, wire::Phase::kBefore});
  answer(1, 1, wire::Snapshot{1, wire::Phase::kAfter});
  answer(1, 1, wire::Snapshot{1, wire::Phase::kBefore});
  wire::Launch l = launch_record(1);
  l.passes = 2;
  EXPECT_TRUE(std::holds_alternative<wire::Error>(answer(1, 1, l)));
  EXPECT_EQ(session_.launches_dropped(), 2u);
  EXPECT_TRUE(rows_.empty());
}

TEST_F(SessionTest, ClientsAreKeptApartAndAVanishedClientStopsTheBusyModel) {
  session_.start();
  answer(1, 1, wire::Snapshot{0, wire::Phase::kBefore});
  session_.client_gone(1);  // died mid-kernel
  EXPECT_EQ(session_.launches_dropped(), 1u);
  // Client 2 reuses launch id 0: it must not pair with client 1's snapshot.
  EXPECT_TRUE(std::holds_alternative<wire::Error>(answer(2, 2, launch_record(0))));
  // The busy counter no longer advances once the dead client's kernel was ended.
  const std::uint32_t a0 = sim_.device.mmio->read32(mmio::reg::a_low(0));
  sim_.clock->advance_ns(1'000'000);
  EXPECT_EQ(sim_.device.mmio->read32(mmio::reg::a_low(0)), a0);
}

TEST_F(SessionTest, StopRestoresTheRegistersAndSnapshotsThenFail) {
  // Left behind by an earlier user, not counting (a counting unit is refused).
  sim_.device.mmio->write32(mmio::reg::kOaControl, 0x1E);
  session_.start();
  EXPECT_EQ(sim_.device.mmio->read32(mmio::reg::kOaControl), (5u << 2) | 1u);
  session_.stop();
  EXPECT_EQ(sim_.device.mmio->read32(mmio::reg::kOaControl), 0x1Eu);
  EXPECT_TRUE(
      std::holds_alternative<wire::Error>(answer(1, 1, wire::Snapshot{0, wire::Phase::kBefore})));
}

TEST(SessionLifetimeTest, DestructorRestoresWhenStopWasNeverCalled) {
  test_support::SimFixture sim;
  sim.device.mmio->write32(mmio::reg::kOaControl, 0);
  {
    Session s(
        *sim.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
        [](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {});
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
  void signal_kernel(bool running, const oa::KernelWork* work) override {
    fail_if_gone();
    inner_.kernel_running(running, work);
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
  test_support::SimFixture sim;
  VanishingSource source(*sim.source);
  Session s(
      source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
      [](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {});
  s.start();
  ASSERT_TRUE(
      std::holds_alternative<wire::Ok>(s.handle(1, 1, wire::Snapshot{0, wire::Phase::kBefore})));
  source.gone = true;  // the kernel is marked running: stop() must end it first
  EXPECT_THROW(s.stop(), std::runtime_error);
  EXPECT_EQ(source.stops, 1);
}

// oaprofd dies between a launch's 'before' and 'after': the 'after' fails with an error reply,
// and when the program's connection closes, the server thread's client_gone must not throw.
TEST(SessionLifetimeTest, AClientGoneAfterAFailedAfterDoesNotThrow) {
  test_support::SimFixture sim;
  VanishingSource source(*sim.source);
  Session s(
      source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
      [](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {});
  s.start();
  ASSERT_TRUE(
      std::holds_alternative<wire::Ok>(s.handle(1, 1, wire::Snapshot{0, wire::Phase::kBefore})));
  source.gone = true;
  EXPECT_TRUE(
      std::holds_alternative<wire::Error>(s.handle(1, 1, wire::Snapshot{0, wire::Phase::kAfter})));
  EXPECT_NO_THROW(s.client_gone(1));
  EXPECT_EQ(s.launches_dropped(), 1u);
}

TEST(SessionLifetimeTest, ADestructorWhoseStopFailsDoesNotThrow) {
  test_support::SimFixture sim;
  VanishingSource source(*sim.source);
  {
    Session s(
        source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
        [](const oa::LaunchRecord&, const power::EnergyReading*, const power::EnergyReading*) {});
    s.start();
    source.gone = true;
  }  // an exception out of here would end the test program
  EXPECT_EQ(source.stops, 1);
}

// The simulator's source, whose snapshots numbered in `interrupted_at` (from 0) say their
// read-out was interrupted on every attempt, as the mmio read-out says under a preemption it
// could not get around. Set before the session starts; snapshots may come from another thread.
class InterruptedSource final : public gpu::CounterSource {
 public:
  InterruptedSource(gpu::CounterSource& inner, std::set<int> interrupted_at)
      : inner_(inner), interrupted_at_(std::move(interrupted_at)) {}
  std::string_view name() const override { return "interrupted"; }
  void start(oa::ReportFormat format) override { inner_.start(format); }
  oa::RawReport snapshot(std::uint32_t id) override {
    last_interrupted_ = interrupted_at_.count(snapshots_++) != 0;
    return inner_.snapshot(id);
  }
  void stop() override { inner_.stop(); }
  void signal_kernel(bool running, const oa::KernelWork* work) override {
    inner_.kernel_running(running, work);
  }
  bool readout_interrupted() const override { return last_interrupted_; }

 private:
  gpu::CounterSource& inner_;
  const std::set<int> interrupted_at_;
  std::atomic<int> snapshots_{0};
  std::atomic<bool> last_interrupted_{false};
};

bool readout_flagged(const oa::LaunchRecord& r) {
  return std::find(r.flags.begin(), r.flags.end(), "readout_interrupted") != r.flags.end();
}

// A launch's counts are skewed by an interrupted 'before' or 'after'; a periodic read inside
// moves counts from one interval to the next and leaves the launch's total as it was.
TEST(SessionReadoutTest, ALaunchWhoseBeforeOrAfterWasInterruptedIsFlagged) {
  test_support::SimFixture sim;
  // Launch k reads 3k (before), 3k + 1 (inside) and 3k + 2 (after).
  InterruptedSource source(*sim.source, {3, 7, 11});
  std::vector<oa::LaunchRecord> rows;
  Session s(source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
            [&](const oa::LaunchRecord& r, const power::EnergyReading*,
                const power::EnergyReading*) { rows.push_back(r); });
  LaunchReadOptions reads;
  reads.read_period = std::chrono::milliseconds(0);
  s.set_launch_reads(reads);
  s.start();
  for (std::uint64_t id = 0; id < 4; ++id) {
    s.handle(1, 1, wire::Snapshot{id, wire::Phase::kBefore});
    sim.clock->advance_ns(100'000);
    s.read_open_launches();
    sim.clock->advance_ns(100'000);
    s.handle(1, 1, wire::Snapshot{id, wire::Phase::kAfter});
    s.handle(1, 1, launch_record(id));
  }
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_FALSE(readout_flagged(rows[0]));
  EXPECT_TRUE(readout_flagged(rows[1])) << "its 'before'";
  EXPECT_FALSE(readout_flagged(rows[2])) << "a read inside the launch does not skew its total";
  EXPECT_TRUE(readout_flagged(rows[3])) << "its 'after'";
}

// A sampler's rows share their boundary reads: one interrupted read skews the row it ends and
// the row it starts.
TEST(SessionReadoutTest, ASamplersRowsOnBothSidesOfAnInterruptedReadAreFlagged) {
  test_support::SimFixture sim;
  // Read 0 starts the first row; read 1 ends it and starts the second (no reads inside rows).
  InterruptedSource source(*sim.source, {1});
  std::mutex mu;
  std::vector<oa::LaunchRecord> rows;
  Session s(
      source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
      [&](const oa::LaunchRecord& r, const power::EnergyReading*, const power::EnergyReading*) {
        std::lock_guard lock(mu);
        rows.push_back(r);
      });
  s.start();
  SamplerOptions so;
  so.read_period = std::chrono::hours(1);
  so.row_interval = std::chrono::milliseconds(1);
  Sampler sampler(s, so);
  sampler.start();
  auto count = [&] {
    std::lock_guard lock(mu);
    return rows.size();
  };
  while (count() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  sampler.stop();
  std::lock_guard lock(mu);
  EXPECT_TRUE(readout_flagged(rows[0]));
  EXPECT_TRUE(readout_flagged(rows[1]));
  EXPECT_FALSE(readout_flagged(rows[2]));
}

TEST(SamplerTest, ASourceThatGoesAwayEndsSamplingWithAFlaggedRow) {
  test_support::SimFixture sim;
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
}  // namespace oaprof::session
