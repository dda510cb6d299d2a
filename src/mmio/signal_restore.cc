#include "mmio/signal_restore.h"

#include <atomic>
#include <cstdint>
#include <csignal>
#include <mutex>
#include <stdexcept>

namespace oaprof::mmio {
namespace {

std::atomic<SavedRegisters*> g_guarded[SignalRestoreGuard::kMaxGuards];
// When each slot's guard was made: the handler restores the newest first, as destructors would,
// so registers are put back while the forcewake taken before them is still held.
std::atomic<std::uint64_t> g_made[SignalRestoreGuard::kMaxGuards];
std::uint64_t g_next_made = 0;  // guarded by g_install_mu
std::mutex g_install_mu;
int g_installed = 0;
struct sigaction g_previous_int {}, g_previous_term {};

// Restoring is a handful of volatile stores on real hardware. The saved list is complete
// before a guard is registered and only read here, so the handler sees a consistent list.
void on_signal(int sig) {
  for (;;) {
    int newest = -1;
    for (int i = 0; i < SignalRestoreGuard::kMaxGuards; ++i) {
      if (g_guarded[i].load() != nullptr && (newest < 0 || g_made[i] > g_made[newest])) newest = i;
    }
    if (newest < 0) break;
    if (SavedRegisters* saved = g_guarded[newest].exchange(nullptr)) saved->restore();
  }
  const struct sigaction& prev = sig == SIGINT ? g_previous_int : g_previous_term;
  sigaction(sig, &prev, nullptr);
  raise(sig);
}

}  // namespace

SignalRestoreGuard::SignalRestoreGuard(SavedRegisters& saved) {
  std::lock_guard lock(g_install_mu);
  // Slots are taken and freed under the mutex; the handler only ever empties one.
  for (int i = 0; i < kMaxGuards; ++i) {
    if (g_guarded[i].load() != nullptr) continue;
    g_made[i] = ++g_next_made;
    g_guarded[i].store(&saved);
    slot_ = i;
    break;
  }
  if (slot_ < 0) {
    throw std::runtime_error("too many OA sessions in one process to restore on a signal");
  }
  if (g_installed++ == 0) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &g_previous_int);
    sigaction(SIGTERM, &sa, &g_previous_term);
  }
}

SignalRestoreGuard::~SignalRestoreGuard() {
  std::lock_guard lock(g_install_mu);
  g_guarded[slot_].store(nullptr);
  if (--g_installed == 0) {
    sigaction(SIGINT, &g_previous_int, nullptr);
    sigaction(SIGTERM, &g_previous_term, nullptr);
  }
}

}  // namespace oaprof::mmio
