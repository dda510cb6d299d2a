// A lock that serves its callers in the order they asked (a ticket lock). std::mutex is not
// fair: a thread that unlocks and locks again at once nearly always wins over one the kernel
// must first wake, so a thread that takes a lock back to back (a client's channel answering
// request after request) can keep everyone else out for as long as it goes on. Here each
// lock() takes the next ticket and waits until that ticket is served, so a caller waits for at
// most the callers that asked before it, one turn each. Meets Lockable's lock/unlock
// (std::lock_guard, std::unique_lock), not try_lock.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace oaprof::base {

class FairMutex {
 public:
  void lock() {
    std::unique_lock guard(mu_);
    const std::uint64_t ticket = next_ticket_++;
    turn_.wait(guard, [&] { return serving_ == ticket; });
  }
  void unlock() {
    {
      std::lock_guard guard(mu_);
      ++serving_;
    }
    // Every waiter checks whether its ticket is next: one condition for all keeps this small,
    // and the waiters are a server's threads (tens), not thousands.
    turn_.notify_all();
  }
  // Callers holding or waiting for the lock (for tests and diagnostics).
  std::uint64_t queued() const {
    std::lock_guard guard(mu_);
    return next_ticket_ - serving_;
  }

 private:
  mutable std::mutex mu_;  // held only to take a ticket or pass the turn, never while waiting
  std::condition_variable turn_;
  std::uint64_t next_ticket_ = 0;
  std::uint64_t serving_ = 0;
};

}  // namespace oaprof::base
