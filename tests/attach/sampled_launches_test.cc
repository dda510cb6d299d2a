// The layer's books for sampled attribution (attach/sampled_launches.h): when a launch's record
// is ready, what share of its window others shared, and that every event is released once.
#include "attach/sampled_launches.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace oaprof::attach {
namespace {
namespace wire = ipc::wire;
using State = SampledLaunches::Completion::State;

// Fake events: an index into `windows`, complete once the test says so.
class SampledLaunchesTest : public ::testing::Test {
 protected:
  // Each launch on a queue of its own, as a program with several queues launches: any two may
  // run at once.
  void* launch(std::uint64_t api_ns) {
    void* ev = reinterpret_cast<void*>(++next_event_);
    wire::Launch rec;
    rec.launch_id = next_event_;
    rec.api_ns = api_ns;
    rec.queue = 0x1000 + next_event_;
    books_.add(ev, rec);
    return ev;
  }
  void complete(void* ev, std::uint64_t start, std::uint64_t end) {
    events_[ev] = {State::kComplete, start, end, 0, 0, start, end};
  }
  std::vector<wire::Launch> harvest() {
    return books_.harvest(
        [this](void* ev, const wire::Launch&) {
          auto it = events_.find(ev);
          return it == events_.end() ? SampledLaunches::Completion{} : it->second;
        },
        [this](void* ev) { ++released_[ev]; });
  }

  SampledLaunches books_;
  std::map<void*, SampledLaunches::Completion> events_;
  std::map<void*, int> released_;
  std::uintptr_t next_event_ = 0;
};

TEST_F(SampledLaunchesTest, LaunchesOneAfterAnotherAreReadyAtOnceAndShareNothing) {
  void* a = launch(0);
  complete(a, 10, 100);
  auto ready = harvest();
  ASSERT_EQ(ready.size(), 1u);
  void* b = launch(150);
  complete(b, 200, 300);
  const auto more = harvest();
  ASSERT_EQ(more.size(), 1u);
  ready.push_back(more[0]);
  for (const wire::Launch& r : ready) {
    ASSERT_TRUE(r.sampled.has_value());
    EXPECT_EQ(r.sampled->overlap_ppm, 0u);
    EXPECT_NE(r.flags & wire::kLaunchSampled, 0u);
    EXPECT_TRUE(r.profiled);
  }
  EXPECT_EQ(ready[1].sampled->host_start_ns, 200u);
  EXPECT_EQ(ready[1].sampled->host_end_ns, 300u);
  EXPECT_EQ(ready[1].start_ns, 200u);
  EXPECT_EQ(released_, (std::map<void*, int>{{a, 1}, {b, 1}}));
}

// Two launches in flight together: the one that ends first waits for the other, since it may
// have run beside it, and then both say what share of their windows they shared.
TEST_F(SampledLaunchesTest, AnOverlappedLaunchWaitsForItsNeighbourAndBothSaySo) {
  void* a = launch(0);
  void* b = launch(1);
  complete(a, 0, 100);
  EXPECT_TRUE(harvest().empty());
  EXPECT_EQ(books_.waiting(), 1u);
  complete(b, 50, 250);
  const auto ready = harvest();
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[0].launch_id, 1u);                   // in launch order
  EXPECT_EQ(ready[0].sampled->overlap_ppm, 500'000u);  // 50 of its 100 ns
  EXPECT_EQ(ready[1].sampled->overlap_ppm, 250'000u);  // 50 of its 200 ns
  EXPECT_EQ(books_.waiting(), 0u);
}

// A launch whose event failed gives no record, frees its event, and holds up no other; a
// launch still running holds up only those that may have run beside it.
TEST_F(SampledLaunchesTest, AFailedEventIsCountedAndAnOlderRunningLaunchHoldsUpYoungerOnes) {
  void* a = launch(0);
  void* b = launch(1);
  events_[a] = {State::kFailed};
  complete(b, 10, 20);
  auto ready = harvest();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(books_.failed(), 1u);
  EXPECT_EQ(released_[a], 1);
  void* c = launch(30);  // runs long
  void* d = launch(31);
  complete(d, 40, 50);
  EXPECT_TRUE(harvest().empty());
  EXPECT_EQ(books_.in_flight(), 1u);
  EXPECT_EQ(books_.oldest_event(), c);
  complete(c, 35, 500);
  ready = harvest();
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[1].sampled->overlap_ppm, 1'000'000u);  // d ran wholly inside c
  EXPECT_EQ(released_[c], 1);
  EXPECT_EQ(released_[d], 1);
}

// A window the device clock maps to end before it starts is taken as empty, not refused.
TEST_F(SampledLaunchesTest, AWindowMappedBackwardsIsEmpty) {
  void* a = launch(0);
  complete(a, 100, 90);
  const auto ready = harvest();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].sampled->host_start_ns, 100u);
  EXPECT_EQ(ready[0].sampled->host_end_ns, 100u);
}

// On one in-order queue a launch is ready as soon as it completes, however many are queued
// behind it (they start after it ends), and the books keep no more windows than they need.
TEST(SampledLaunchesQueueTest, AnInOrderQueueNeedNotDrainForItsLaunchesToBeReady) {
  SampledLaunches books;
  std::vector<void*> events;
  for (std::uintptr_t i = 1; i <= 100; ++i) {
    wire::Launch rec;
    rec.queue = 0x10;
    rec.api_ns = i;
    events.push_back(reinterpret_cast<void*>(i));
    books.add(events.back(), rec, /*in_order=*/true);
  }
  std::size_t ready = 0;
  for (std::uintptr_t done = 1; done <= 100; ++done) {
    // The first `done` have completed, each 10 ns long, back to back from 1000.
    const auto got = books.harvest(
        [&](void* ev, const wire::Launch&) {
          const auto i = reinterpret_cast<std::uintptr_t>(ev);
          SampledLaunches::Completion c;
          if (i > done) return c;
          c.state = SampledLaunches::Completion::State::kComplete;
          c.host_start_ns = 1000 + 10 * i;
          c.host_end_ns = 1000 + 10 * i + 10;
          return c;
        },
        [](void*) {}, SampledLaunches::Scope::kOldest);
    ready += got.size();
    EXPECT_EQ(ready, done) << "launch " << done << " waited for the queue behind it";
    for (const wire::Launch& r : got) EXPECT_EQ(r.sampled->overlap_ppm, 0u);
  }
  // An out-of-order queue's launch may start at its call: a completed one waits for it.
  wire::Launch ooo;
  ooo.queue = 0x20;
  ooo.api_ns = 0;
  books.add(reinterpret_cast<void*>(0x200), ooo, /*in_order=*/false);
  wire::Launch next;
  next.queue = 0x10;
  next.api_ns = 3000;
  books.add(reinterpret_cast<void*>(0x201), next, /*in_order=*/true);
  const auto got = books.harvest(
      [](void* ev, const wire::Launch&) {
        SampledLaunches::Completion c;
        if (ev != reinterpret_cast<void*>(0x201)) return c;
        c.state = SampledLaunches::Completion::State::kComplete;
        c.host_start_ns = 3000;
        c.host_end_ns = 3100;
        return c;
      },
      [](void*) {});
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(books.waiting(), 1u);
}

// A queue that goes idle between launches (each collected before the next is made) still keeps
// no more windows than the last: its next launch starts after the last one ended.
TEST(SampledLaunchesQueueTest, AQueueThatGoesIdleKeepsItsFloorAndFewWindows) {
  SampledLaunches books;
  const SampledLaunches::Ask done = [](void* ev, const wire::Launch&) {
    const auto i = reinterpret_cast<std::uintptr_t>(ev);
    SampledLaunches::Completion c;
    c.state = SampledLaunches::Completion::State::kComplete;
    c.host_start_ns = 1000 * i;
    c.host_end_ns = 1000 * i + 500;
    return c;
  };
  for (std::uintptr_t i = 1; i <= 200; ++i) {
    wire::Launch rec;
    rec.queue = 0x10;
    rec.api_ns = 1000 * i - 900;
    books.add(reinterpret_cast<void*>(i), rec, /*in_order=*/true);
    // Two launches in flight at each question, both complete by then: the queue goes idle.
    if (i % 2 == 0) {
      EXPECT_EQ(books.harvest(done, [](void*) {}).size(), 2u);
      EXPECT_LE(books.windows_kept(), 2u) << "after launch " << i;
    }
  }
}

// Issue 33: a sync point that completes many launches at once looks, for each one's overlap, at
// the few windows that can share it, not at every window kept: 10,000 launches back to back
// once cost 10,000 windows looked at each. The shares stay exact: the pairs that do overlap say so.
TEST(SampledLaunchesQueueTest, OverlapSharesLookAtTheNeighboursOnlyAndStayExact) {
  SampledLaunches books;
  constexpr std::uintptr_t kLaunches = 10'000;
  for (std::uintptr_t i = 1; i <= kLaunches; ++i) {
    wire::Launch rec;
    rec.queue = 0x10 + i % 2;  // two out-of-order queues: any launch may run beside any other
    rec.api_ns = i;
    books.add(reinterpret_cast<void*>(i), rec, /*in_order=*/false);
  }
  // Back to back, 100 ns each, except that every 100th overlaps the next by half of it.
  const auto ready = books.harvest(
      [](void* ev, const wire::Launch&) {
        const auto i = reinterpret_cast<std::uintptr_t>(ev);
        SampledLaunches::Completion c;
        c.state = SampledLaunches::Completion::State::kComplete;
        c.host_start_ns = 1000 + 100 * i;
        c.host_end_ns = c.host_start_ns + (i % 100 == 0 ? 150 : 100);
        return c;
      },
      [](void*) {});
  ASSERT_EQ(ready.size(), kLaunches);
  for (std::size_t k = 0; k < ready.size(); ++k) {
    const std::uintptr_t i = k + 1;
    const bool shared = (i % 100 == 0 && i < kLaunches) || (i % 100 == 1 && i > 1);
    EXPECT_EQ(ready[k].sampled->overlap_ppm != 0, shared) << "launch " << i;
  }
  EXPECT_EQ(ready[99].sampled->overlap_ppm, 333'333u);  // 50 of its 150 ns shared with the next
  EXPECT_EQ(ready[100].sampled->overlap_ppm, 500'000u);
  EXPECT_LE(books.windows_examined(), 4 * kLaunches);
}

// The policy both layers ask by between sync points (issue 33): launches that wait briefly and
// few are left for the program's next sync point; past AskPolicy::kAskPast waiting, every
// kAskEvery-th launch asks; a launch that waited kAskAfterNs is asked, again at most every
// kAskAgainNs while it still runs.
TEST(AskPolicyTest, AsksPastManyWaitingOrOnceTheOldestWaitedLong) {
  constexpr std::uint64_t kStart = 1'000'000'000;
  auto add = [](SampledLaunches& books, std::uint64_t api_ns) {
    wire::Launch rec;
    rec.queue = 0x10;
    rec.api_ns = api_ns;
    books.add(reinterpret_cast<void*>(books.in_flight() + 1), rec);
  };
  SampledLaunches many;
  AskPolicy policy;
  std::vector<std::size_t> asked_at;  // launches in flight at each question
  for (std::size_t i = 0; i < AskPolicy::kAskPast + 3 * AskPolicy::kAskEvery; ++i) {
    add(many, kStart + i);
    if (policy.due(many, kStart + i)) asked_at.push_back(many.in_flight());
  }
  const std::size_t first = AskPolicy::kAskPast + AskPolicy::kAskEvery - 1;
  EXPECT_EQ(asked_at, (std::vector<std::size_t>{first, first + AskPolicy::kAskEvery,
                                                first + 2 * AskPolicy::kAskEvery}));

  SampledLaunches few;
  AskPolicy aged;
  add(few, kStart);
  EXPECT_FALSE(aged.due(few, kStart + AskPolicy::kAskAfterNs - 1));
  EXPECT_TRUE(aged.due(few, kStart + AskPolicy::kAskAfterNs));
  EXPECT_FALSE(aged.due(few, kStart + AskPolicy::kAskAfterNs + AskPolicy::kAskAgainNs - 1));
  EXPECT_TRUE(aged.due(few, kStart + AskPolicy::kAskAfterNs + AskPolicy::kAskAgainNs));
  // Nothing running: nothing to ask, however late.
  EXPECT_FALSE(AskPolicy{}.due(SampledLaunches{}, kStart + 10 * AskPolicy::kAskAfterNs));
}

}  // namespace
}  // namespace oaprof::attach
