// A backend's reading is timed at the middle of the clock reads around its counters, and a read
// that took longer than a quarter of RAPL's update interval (a reader descheduled in between) is
// made again, keeping the quickest.
#include "power/timed_reading.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace oaprof::power {
namespace {

// A clock that answers the given looks in turn, and a read that counts its calls and gives
// 1000 µJ more energy each time.
struct Script {
  std::vector<std::uint64_t> looks;
  std::size_t next = 0;
  int reads = 0;

  std::uint64_t clock() { return looks.at(next++); }
  EnergyReading read() {
    ++reads;
    EnergyReading r;
    r.energy_uj[Domain::kPackage] = 1000u * static_cast<std::uint64_t>(reads);
    return r;
  }
  EnergyReading timed() {
    return timed_reading([this] { return clock(); }, [this] { return read(); });
  }
};

TEST(TimedReadingTest, AReadingIsTimedAtTheMiddleOfItsClockReads) {
  Script s{{1'000'000, 1'000'400}};
  const EnergyReading r = s.timed();
  EXPECT_EQ(s.reads, 1);
  EXPECT_EQ(r.time_ns, 1'000'200u);
  EXPECT_EQ(r.energy_uj.at(Domain::kPackage), 1000u);
}

TEST(TimedReadingTest, AReadLongerThanAQuarterOfRaplsIntervalIsMadeAgain) {
  // Descheduled for 5 ms between the clock and the counters, then a read of 20 µs.
  Script s{{0, 5'000'000, 5'010'000, 5'030'000}};
  const EnergyReading r = s.timed();
  EXPECT_EQ(s.reads, 2);
  EXPECT_EQ(r.time_ns, 5'020'000u);
  EXPECT_EQ(r.energy_uj.at(Domain::kPackage), 2000u);
  // At the bound itself a read stands.
  Script edge{{0, kMaxReadSpanNs}};
  edge.timed();
  EXPECT_EQ(edge.reads, 1);
}

TEST(TimedReadingTest, WhenEveryAttemptIsSlowTheQuickestIsKept) {
  Script s{{0, 5'000'000, 6'000'000, 8'000'000, 9'000'000, 12'000'000}};
  const EnergyReading r = s.timed();
  EXPECT_EQ(s.reads, kReadAttempts);
  EXPECT_EQ(r.time_ns, 7'000'000u);
  EXPECT_EQ(r.energy_uj.at(Domain::kPackage), 2000u);
}

TEST(TimedReadingTest, AClockThatSeemsToGoBackIsASpanOfNothing) {
  Script s{{2'000, 1'000}};
  EXPECT_EQ(s.timed().time_ns, 2'000u);
  EXPECT_EQ(s.reads, 1);
}

}  // namespace
}  // namespace oaprof::power
