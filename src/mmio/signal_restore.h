// What SIGINT, SIGTERM, SIGHUP and SIGQUIT do to a process that holds GPU registers, so that a
// profiler stopped with Ctrl-C never leaves the OA unit programmed nor the GPU held awake, and
// never loses the rows it measured. The signals are blocked in every thread and taken by one
// signal thread (sigwaitinfo), so what runs on a signal is ordinary code that may lock and
// allocate: a command's own handler (oaprof's profile run forwards the signal to the program and
// finishes its outputs) or, without one, the restore plan: every guarded SavedRegisters put back,
// newest first, before the process ends by the signal. SIGKILL cannot be caught: that case is the
// register journal's (docs/daemon.md).
#pragma once

#include <signal.h>

#include <functional>

#include "mmio/saved_registers.h"

namespace oaprof::mmio {

// While alive, `saved` is part of the restore plan the signal thread carries out when a signal
// arrives with no handler set. Guards nest, the newest restored first (registers before the
// forcewake taken before them); at most kMaxGuards at once.
class SignalRestoreGuard {
 public:
  static constexpr int kMaxGuards = 16;

  explicit SignalRestoreGuard(SavedRegisters& saved);
  ~SignalRestoreGuard();
  SignalRestoreGuard(const SignalRestoreGuard&) = delete;
  SignalRestoreGuard& operator=(const SignalRestoreGuard&) = delete;

 private:
  SavedRegisters* saved_ = nullptr;
};

// Puts back every guarded SavedRegisters, newest first, and keeps each one locked afterwards, so
// that no thread writes a register between the restore and the end of the process. Only for a
// process about to end.
void restore_all_and_hold();

// The process's signal thread. start() is called first thing in main, before any other thread,
// by every program that may hold registers (oaprof); a process that never starts it keeps the
// signal dispositions it had (oaprofd's handler, for one, ends its loop and restores).
class SignalThread {
 public:
  // Runs on the signal thread for each signal while set; `count` is 1 for the first signal since
  // the handler was set, 2 for the second, ...
  using Handler = std::function<void(const siginfo_t& info, int count)>;

  static void start();
  static bool running();
  // Set: signals go to `handler`. Cleared: the default, the restore plan and then the end of the
  // process by the signal (so the exit status says which one).
  static void set_handler(Handler handler);
  static void clear_handler();
  // The signal mask a program started by this process must run with: the one the process had
  // before start() blocked the signals (or the current one when the thread never started). Take
  // it before fork(); apply it with sigprocmask in the child.
  static sigset_t mask_for_programs();
};

// Sets a handler for as long as it lives.
class ScopedSignalHandler {
 public:
  explicit ScopedSignalHandler(SignalThread::Handler handler) {
    SignalThread::set_handler(std::move(handler));
  }
  ~ScopedSignalHandler() { SignalThread::clear_handler(); }
  ScopedSignalHandler(const ScopedSignalHandler&) = delete;
  ScopedSignalHandler& operator=(const ScopedSignalHandler&) = delete;
};

}  // namespace oaprof::mmio
