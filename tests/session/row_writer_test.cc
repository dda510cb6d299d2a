#include "session/row_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "report/reporter.h"
#include "report/row.h"

namespace oaprof::session {
namespace {
using ::testing::HasSubstr;

oa::LaunchRecord row(std::uint64_t index) {
  oa::LaunchRecord r;
  r.index = index;
  return r;
}

// What the writer's thread did, in order: "w<index>" for a write, "f" for a flush.
struct Log {
  std::mutex mu;
  std::vector<std::string> events;
  void note(const std::string& e) {
    std::lock_guard lock(mu);
    events.push_back(e);
  }
  std::vector<std::string> take() {
    std::lock_guard lock(mu);
    return events;
  }
};

// A writer that falls behind holds the rows back, not the memory: past its bound add() waits, and
// once the writer goes on every row is written, in order.
TEST(RowWriterTest, AddWaitsForRoomInsteadOfQueueingWithoutBound) {
  constexpr std::size_t kBound = 8, kRows = 5 * kBound;
  std::mutex gate;  // held: the writer's first write waits, as a slow disk would make it
  std::unique_lock hold(gate);
  std::atomic<std::size_t> added{0};
  std::vector<std::uint64_t> written;
  {
    RowWriter writer(
        [&](const oa::LaunchRecord& r, const power::EnergyReading*, const power::EnergyReading*) {
          std::lock_guard pass(gate);
          written.push_back(r.index);
        },
        [] {}, kBound);
    std::thread producer([&] {
      for (std::size_t i = 0; i < kRows; ++i) {
        writer.add(row(i), nullptr, nullptr);
        ++added;
      }
    });
    // The first batch is in the writer's hands and the queue is full: no further add() returns.
    for (int i = 0; i < 10'000 && added.load() < kBound; ++i) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // room to run past the bound
    EXPECT_LE(added.load(), 2 * kBound) << "rows queued past the bound while the writer waits";
    hold.unlock();
    producer.join();
    writer.drain();
  }
  ASSERT_EQ(written.size(), kRows);
  for (std::size_t i = 0; i < kRows; ++i) EXPECT_EQ(written[i], i);
}

TEST(RowWriterTest, WritesRowsInOrderWithTheirReadingsAndFlushesBeforeDrainReturns) {
  Log log;
  std::vector<std::uint64_t> begin_uj;
  RowWriter writer(
      [&](const oa::LaunchRecord& r, const power::EnergyReading* begin,
          const power::EnergyReading*) {
        log.note("w" + std::to_string(r.index));
        begin_uj.push_back(begin ? begin->energy_uj.at(power::Domain::kPackage) : 0);
      },
      [&] { log.note("f"); });
  power::EnergyReading reading;
  reading.energy_uj[power::Domain::kPackage] = 42;
  auto sink = writer.sink();
  for (std::uint64_t i = 0; i < 100; ++i) sink(row(i), i == 7 ? &reading : nullptr, nullptr);
  writer.drain();
  const auto events = log.take();
  std::vector<std::string> writes;
  for (const auto& e : events) {
    if (e != "f") writes.push_back(e);
  }
  ASSERT_EQ(writes.size(), 100u);
  for (std::size_t i = 0; i < writes.size(); ++i) EXPECT_EQ(writes[i], "w" + std::to_string(i));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(), "f") << "the last row was not flushed before drain() returned";
  EXPECT_EQ(begin_uj[7], 42u);
  EXPECT_EQ(begin_uj[8], 0u);
  EXPECT_EQ(writer.rows_written(), 100u);
}

TEST(RowWriterTest, AFailedFlushIsReportedByDrainAndRefusesLaterRows) {
  std::atomic<int> writes{0};
  RowWriter writer([&](const oa::LaunchRecord&, const power::EnergyReading*,
                       const power::EnergyReading*) { ++writes; },
                   [] { throw std::runtime_error("writing the CSV file failed: disk full"); });
  writer.add(row(0), nullptr, nullptr);
  try {
    writer.drain();
    FAIL() << "drain() hid the failed flush";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("disk full"));
  }
  EXPECT_THROW(writer.add(row(1), nullptr, nullptr), std::runtime_error);
  EXPECT_EQ(writes.load(), 1);
}

// oaprof's row path: each row's energy window, then the CSV. A pair of readings in which a counter
// went backwards costs that row its figures (flagged), never the rows after it, and every row
// handed over is written.
TEST(RowWriterTest, AnEnergyCounterThatWentBackwardsFlagsItsRowAndLaterRowsAreWritten) {
  report::RunInfo info;
  info.device = "simulated";
  info.timestamp_hz = 12e6;
  std::ostringstream csv;
  auto reporter = report::make_csv_reporter(csv);
  reporter->begin(info);
  std::atomic<int> written{0};
  RowWriter writer(
      [&](const oa::LaunchRecord& r, const power::EnergyReading* begin,
          const power::EnergyReading* end) {
        reporter->add(r, report::row_energy(r, begin, end, info, "no energy source"));
        ++written;
      },
      [&] { reporter->flush(); });
  auto reading = [](std::uint64_t ms, std::uint64_t uj) {
    power::EnergyReading e;
    e.time_ns = ms * 1'000'000;
    e.energy_uj[power::Domain::kPackage] = uj;
    return e;
  };
  const power::EnergyReading a = reading(0, 5'000'000), back = reading(100, 1'000'000),
                             b = reading(200, 6'000'000), c = reading(300, 7'000'000);
  writer.add(row(0), &a, &back);  // the package counter went down
  writer.add(row(1), &back, &b);
  writer.add(row(2), &b, &c);
  ASSERT_NO_THROW(writer.drain());
  EXPECT_EQ(written.load(), 3);
  EXPECT_EQ(writer.rows_written(), 3u);
  std::istringstream lines(csv.str());
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 4u) << csv.str();  // the header and three rows
  EXPECT_THAT(rows[1], HasSubstr("energy-went-backwards"));
  EXPECT_THAT(rows[2], ::testing::Not(HasSubstr("energy-went-backwards")));
  EXPECT_THAT(rows[3], HasSubstr(",1000000,"));  // package energy of the last window, in uJ
}

TEST(RowWriterTest, TheDestructorWritesWhatIsStillQueued) {
  std::atomic<int> writes{0};
  std::atomic<int> flushes{0};
  {
    RowWriter writer([&](const oa::LaunchRecord&, const power::EnergyReading*,
                         const power::EnergyReading*) { ++writes; },
                     [&] { ++flushes; });
    for (int i = 0; i < 1000; ++i) writer.add(row(static_cast<std::uint64_t>(i)), nullptr, nullptr);
  }
  EXPECT_EQ(writes.load(), 1000);
  EXPECT_GE(flushes.load(), 1);
}

}  // namespace
}  // namespace oaprof::session
