#include "mmio/signal_restore.h"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace oaprof::mmio {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

struct Registry {
  std::mutex mu;
  std::vector<SavedRegisters*> guarded;  // oldest first
};
Registry& registry() {
  static Registry r;
  return r;
}

struct ThreadState {
  std::mutex mu;
  bool running = false;
  sigset_t original_mask{};
  SignalThread::Handler handler;
  int count = 0;
};
ThreadState& state() {
  static ThreadState s;
  return s;
}

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kSignals) sigaddset(&set, sig);
  return set;
}

// The default: the restore plan, then the end the signal would have given.
[[noreturn]] void restore_and_end(int sig) {
  restore_all_and_hold();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(sig);
  ::_exit(128 + sig);  // a signal whose default is to be ignored would not end the process
}

void wait_for_signals() {
  const sigset_t set = handled_signals();
  for (;;) {
    siginfo_t info{};
    const int sig = ::sigwaitinfo(&set, &info);
    if (sig < 0) continue;  // EINTR
    SignalThread::Handler handler;
    int count = 0;
    {
      std::lock_guard lock(state().mu);
      handler = state().handler;
      count = ++state().count;
    }
    if (!handler) restore_and_end(sig);
    handler(info, count);
  }
}

}  // namespace

SignalRestoreGuard::SignalRestoreGuard(SavedRegisters& saved) {
  std::lock_guard lock(registry().mu);
  if (registry().guarded.size() >= kMaxGuards) {
    throw std::runtime_error("too many OA sessions in one process to restore on a signal");
  }
  registry().guarded.push_back(&saved);
  saved_ = &saved;
}

SignalRestoreGuard::~SignalRestoreGuard() {
  std::lock_guard lock(registry().mu);
  auto& g = registry().guarded;
  std::erase(g, saved_);
}

void restore_all_and_hold() {
  registry().mu.lock();  // held to the end: no guard comes or goes after the restore
  auto& g = registry().guarded;
  for (auto it = g.rbegin(); it != g.rend(); ++it) (*it)->restore_and_hold();
}

void SignalThread::start() {
  std::lock_guard lock(state().mu);
  if (state().running) return;
  const sigset_t set = handled_signals();
  if (::pthread_sigmask(SIG_BLOCK, &set, &state().original_mask) != 0) {
    throw std::runtime_error("cannot block the signals for the signal thread");
  }
  std::thread(wait_for_signals).detach();
  state().running = true;
}

bool SignalThread::running() {
  std::lock_guard lock(state().mu);
  return state().running;
}

void SignalThread::set_handler(Handler handler) {
  std::lock_guard lock(state().mu);
  state().handler = std::move(handler);
  state().count = 0;
}

void SignalThread::clear_handler() { set_handler(nullptr); }

sigset_t SignalThread::mask_for_programs() {
  std::lock_guard lock(state().mu);
  if (state().running) return state().original_mask;
  sigset_t current;
  ::pthread_sigmask(SIG_BLOCK, nullptr, &current);
  return current;
}

}  // namespace oaprof::mmio
