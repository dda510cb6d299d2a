// Puts saved registers back when the process is ended by SIGINT or SIGTERM, so that a profiler
// stopped with Ctrl-C never leaves the OA unit programmed nor the GPU held awake. SIGKILL cannot be caught: that case
// is the privileged side's (oaprofd restores when its client disappears).
#pragma once

#include "mmio/saved_registers.h"

namespace oaprof::mmio {

// While alive, SIGINT and SIGTERM first restore `saved`, then take their previous action (or
// the default one, which ends the process). Guards nest, the newest restored first; at most
// kMaxGuards at once (a device's forcewake and a session's programming take one each).
class SignalRestoreGuard {
 public:
  static constexpr int kMaxGuards = 16;

  explicit SignalRestoreGuard(SavedRegisters& saved);
  ~SignalRestoreGuard();
  SignalRestoreGuard(const SignalRestoreGuard&) = delete;
  SignalRestoreGuard& operator=(const SignalRestoreGuard&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace oaprof::mmio
