#include "power/energy_sampler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "power/sim_power.h"

namespace oaprof::power {
namespace {
using ::testing::HasSubstr;

// Waits (without asserting on time) until the sampler has read `n` more times.
void wait_for_reads(const EnergySampler& s, std::uint64_t n) {
  const std::uint64_t target = s.background_reads() + n;
  for (int i = 0; i < 20000 && s.background_reads() < target; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  ASSERT_GE(s.background_reads(), target) << "the sampler thread never read";
}

TEST(EnergySamplerTest, PeriodKeepsTwoReadsInsideOneWrap) {
  // 262143328850 µJ at 1000 W wraps in 262 s: capped at 1 s.
  EXPECT_EQ(safe_sample_period_ns(262143328850u), kMaxSamplePeriodNs);
  // 1 J at 1000 W wraps in 1 ms: read every 0.5 ms would be too often; the floor is 1 ms.
  EXPECT_EQ(safe_sample_period_ns(1'000'000u), 1'000'000u);
  // 100 J at 1000 W wraps in 100 ms: read every 50 ms.
  EXPECT_EQ(safe_sample_period_ns(100'000'000u), 50'000'000u);
  EXPECT_EQ(safe_sample_period_ns(100'000'000u, 10.0), kMaxSamplePeriodNs);
  EXPECT_EQ(safe_sample_period_ns(std::nullopt), kMaxSamplePeriodNs);
}

TEST(EnergySamplerTest, BackgroundReadsCatchEveryWrapOfALongRun) {
  std::atomic<std::uint64_t> now{0};
  SimPowerModel model;
  model.max_energy_range_uj = 1'000'000;  // 1 J: the idle package (2 W) wraps twice a second
  auto sim =
      std::make_unique<SimEnergySource>(std::filesystem::path{}, model, [&] { return now.load(); });
  SimEnergySource* sim_ptr = sim.get();
  EnergySampler sampler(std::move(sim), 1'000'000);
  EXPECT_EQ(sampler.name(), "sim");
  const EnergyReading a = sampler.read();
  // 40 steps of 0.4 s (0.8 J each, below the range): 16 s at 2 W, 32 J, 32 wraps of the 1 J
  // counter, none of them read by the caller.
  for (int i = 0; i < 40; ++i) {
    now += 400'000'000;
    wait_for_reads(sampler, 1);
  }
  const EnergyReading b = sampler.read();
  EXPECT_EQ(b.energy_uj.at(Domain::kPackage) - a.energy_uj.at(Domain::kPackage), 32'000'000u);
  EXPECT_EQ(&sampler.inner(), sim_ptr);
}

class FailingSource final : public EnergySource {
 public:
  std::string_view name() const override { return "failing"; }
  std::vector<Domain> domains() const override { return {Domain::kPackage}; }
  EnergyReading read() override {
    if (++reads_ > 1) throw std::runtime_error("energy_uj vanished");
    return {};
  }

 private:
  std::atomic<int> reads_{0};
};

TEST(EnergySamplerTest, ABackgroundFailureIsReportedNotSwallowed) {
  auto source = std::make_unique<FailingSource>();
  EnergySampler sampler(std::move(source), 1'000'000);
  for (int i = 0; i < 20000; ++i) {
    try {
      sampler.read();
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("energy_uj vanished"));
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  FAIL() << "the failure never surfaced";
}

// `oaprof power`'s window on a package counter of a 2 J range at 10 W: it wraps every 200 ms, so
// 700 ms span three wraps, which two reads alone cannot see (they would read what is left of the
// last wrap). The simulated tree follows the real clock here, because the sampler's thread does;
// the wait is real for the same reason (700 ms: long enough for three wraps, and each wrap is
// 200 ms, far longer than any pause of the sampler's thread on a loaded machine).
TEST(EnergySamplerTest, APowerMeterWindowCountsEveryWrapOfItsDuration) {
  SimPowerModel model;
  model.package_idle_w = 10.0;
  model.max_energy_range_uj = 2'000'000;
  model.update_interval_ns = 0;  // the counter follows the clock exactly
  auto sim = std::make_unique<SimEnergySource>(std::filesystem::path{}, model);
  const EnergyWindow w = measure_energy_window(std::move(sim), 700'000'000);
  ASSERT_TRUE(w.measured()) << w.unavailable_reason;
  EXPECT_GE(w.duration_ns, 700'000'000u);
  EXPECT_NEAR(w.power_w.at(Domain::kPackage), 10.0, 0.2);
  EXPECT_GT(w.energy_uj.at(Domain::kPackage), 3 * model.max_energy_range_uj);
}

}  // namespace
}  // namespace oaprof::power
