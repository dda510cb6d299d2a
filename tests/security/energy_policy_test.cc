// RAPL through oaprofd (daemon/energy_gate.h): only to the client whose session holds the OA
// unit, no finer in time than the gate's interval, and not at all under --energy off.
#include "daemon/energy_gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/daemon_service.h"
#include "tests/common/daemon_test_util.h"

namespace oaprof::session {
namespace {

namespace wire = ipc::wire;
using ::testing::HasSubstr;

// Counts its reads; each reading is one µJ more and one ns later than the last.
class CountingSource final : public power::EnergySource {
 public:
  std::string_view name() const override { return "counting"; }
  std::vector<power::Domain> domains() const override { return {power::Domain::kPackage}; }
  power::EnergyReading read() override {
    ++reads;
    return {reads, {{power::Domain::kPackage, reads}}};
  }
  std::uint64_t reads = 0;
};

TEST(EnergyGateTest, NoTwoDistinctReadingsAreCloserThanTheInterval) {
  CountingSource source;
  daemon::EnergyGate gate(1'000'000);
  const auto first = gate.reading(source, 5'000'000);
  // A flood within the millisecond learns nothing new.
  for (std::uint64_t t = 5'000'000; t < 6'000'000; t += 10'000) {
    const auto again = gate.reading(source, t);
    EXPECT_EQ(again.time_ns, first.time_ns);
    EXPECT_EQ(again.energy_uj, first.energy_uj);
  }
  EXPECT_EQ(source.reads, 1u);
  EXPECT_EQ(gate.reading(source, 6'000'000).time_ns, 2u) << "a millisecond later: fresh";
  EXPECT_EQ(gate.fresh_readings(), 2u);
  EXPECT_EQ(gate.repeated_readings(), 100u);
  EXPECT_EQ(daemon::kEnergyMinIntervalNs, 1'000'000u) << "the documented policy";
}

class EnergyPolicyTest : public ::testing::Test {
 protected:
  EnergyPolicyTest() { test_support::create_sim_file(regs_); }

  std::unique_ptr<daemon::DaemonService> service(bool lend, std::uint64_t interval_ns) {
    daemon::ServiceOptions o;
    o.device.spec = oaprof::gpu::DeviceSpec::sim_file(regs_);
    o.state_dir = dir_.path();
    o.lend_energy = lend;
    o.energy_min_interval_ns = interval_ns;
    return std::make_unique<daemon::DaemonService>(o);
  }
  static wire::Open open_request() {
    wire::Open o;
    o.pid = 1;
    o.energy = "sim";
    return o;
  }
  static wire::Body energy(daemon::DaemonService& s, std::uint64_t client) {
    return s.handle(client, alice_, wire::Sample{0, wire::kSampleEnergy});
  }

  test_support::ScratchDir dir_;
  std::filesystem::path regs_ = dir_.path() / "regs";
  static inline const daemon::Peer alice_{1000, 1000, 4321, nullptr};
};

TEST_F(EnergyPolicyTest, OnlyTheSessionsOwnClientGetsEnergy) {
  auto s = service(true, daemon::kEnergyMinIntervalNs);
  const wire::Body without = energy(*s, 1);
  ASSERT_TRUE(std::holds_alternative<wire::Error>(without));
  EXPECT_EQ(std::get<wire::Error>(without).code, wire::ErrorCode::kNoSession);
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(s->handle(1, alice_, open_request())));
  EXPECT_TRUE(std::holds_alternative<wire::Sampled>(energy(*s, 1)));
  const wire::Body other = energy(*s, 2);  // another connection, while the session is open
  ASSERT_TRUE(std::holds_alternative<wire::Error>(other));
  EXPECT_EQ(std::get<wire::Error>(other).code, wire::ErrorCode::kNoSession);
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(s->handle(1, alice_, wire::Close{})));
  EXPECT_EQ(std::get<wire::Error>(energy(*s, 1)).code, wire::ErrorCode::kNoSession)
      << "a closed session's client gets no more";
}

TEST_F(EnergyPolicyTest, ASessionsReadingsAreRateLimited) {
  // An interval no test outlasts: every reading of the session is its first.
  auto s = service(true, 3'600'000'000'000ull);
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(s->handle(1, alice_, open_request())));
  const auto first = std::get<wire::Sampled>(energy(*s, 1)).energy;
  ASSERT_TRUE(first.has_value());
  for (int i = 0; i < 200; ++i) {
    const auto again = std::get<wire::Sampled>(energy(*s, 1)).energy;
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->time_ns, first->time_ns);
    EXPECT_EQ(again->energy_uj, first->energy_uj);
  }
  s.reset();  // its session holds the lock of the state directory
  // Without the limit the readings move (the control: the sampler reads afresh).
  auto free = service(true, 0);
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(free->handle(1, alice_, open_request())));
  const auto a = std::get<wire::Sampled>(energy(*free, 1)).energy;
  const auto b = std::get<wire::Sampled>(energy(*free, 1)).energy;
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->time_ns, b->time_ns);
}

TEST_F(EnergyPolicyTest, EnergyOffLendsNone) {
  auto s = service(false, daemon::kEnergyMinIntervalNs);
  const wire::Body opened = s->handle(1, alice_, open_request());
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(opened));
  EXPECT_EQ(std::get<wire::Opened>(opened).energy_backend, "");
  EXPECT_THAT(std::get<wire::Opened>(opened).energy_reason,
              HasSubstr("oaprofd lends no energy readings: its administrator started it with "
                        "--energy off"));
  const wire::Body refused = energy(*s, 1);
  ASSERT_TRUE(std::holds_alternative<wire::Error>(refused));
  EXPECT_THAT(std::get<wire::Error>(refused).message, HasSubstr("no energy source"));
}

}  // namespace
}  // namespace oaprof::session
