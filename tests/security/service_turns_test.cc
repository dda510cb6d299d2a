// Issue 29: the lock oaprofd's service sits behind (and the run server's turns) against a thread
// that takes it back to back, as a client's channel thread does while the client floods its
// ring. With std::mutex the thread that unlocks and asks again at once nearly always wins over
// those the kernel must first wake, so the loop (every socket client, the exporter) waits as long
// as the flood goes on. base::FairMutex serves in the order asked: those already waiting go first.
#include "base/fair_mutex.h"

#include <pthread.h>
#include <sched.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace oaprof::security {
namespace {

// Keeps the calling thread on the `index`th CPU it may use (counting round), where it may use two
// or more: a server's loop and a client's channel thread usually run on different cores, where a
// thread woken from the lock's wait comes too late for one that asks again at once.
void keep_to_cpu(int index) {
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return;
  const int wanted = index % CPU_COUNT(&allowed);
  for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed) || seen++ != wanted) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    (void)::pthread_setaffinity_np(::pthread_self(), sizeof one, &one);
    return;
  }
}

// Waits (bounded) until `n` callers hold or wait for `lock`; false when they never did.
bool until_queued(const base::FairMutex& lock, std::uint64_t n) {
  for (int i = 0; i < 20'000 && lock.queued() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return lock.queued() == n;
}

// The flooding client's channel thread: holds the lock, lets `waiters` queue behind it, then
// unlocks and asks again at once; how many of them had their turn before it got the lock back.
int served_before_retaking(base::FairMutex& lock, int waiters) {
  lock.lock();
  std::atomic<int> served{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < waiters; ++i) {
    threads.emplace_back([&, i] {
      keep_to_cpu(1 + i);
      lock.lock();
      served.fetch_add(1);
      lock.unlock();
    });
  }
  const bool queued = until_queued(lock, 1u + waiters);
  lock.unlock();
  lock.lock();
  const int before = served.load();
  lock.unlock();
  for (auto& t : threads) t.join();
  return queued ? before : -1;
}

TEST(ServiceTurnsTest, AThreadThatRetakesTheLockBackToBackCannotPassThoseWaiting) {
  constexpr int kWaiters = 3;  // the loop and two other clients' channels
  base::FairMutex lock;
  std::thread flood([&] {
    keep_to_cpu(0);
    for (int round = 0; round < 50; ++round) {
      const int served = served_before_retaking(lock, kWaiters);
      ASSERT_NE(served, -1) << "the waiters never asked";
      EXPECT_EQ(served, kWaiters) << "round " << round << ": the lock was taken back before "
                                  << kWaiters - served << " waiting callers had a turn";
    }
  });
  flood.join();
}

TEST(ServiceTurnsTest, EachCallerIsServedInTheOrderItAsked) {
  base::FairMutex lock;
  lock.lock();
  std::vector<int> order;  // written under the lock
  std::vector<std::thread> callers;
  for (int i = 0; i < 8; ++i) {
    callers.emplace_back([&, i] {
      lock.lock();
      order.push_back(i);
      lock.unlock();
    });
    ASSERT_TRUE(until_queued(lock, 2u + i)) << "caller " << i << " never asked";
  }
  lock.unlock();
  for (auto& t : callers) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

}  // namespace
}  // namespace oaprof::security
