#include "mmio/signal_restore.h"

#include <atomic>
#include <csignal>
#include <mutex>
#include <stdexcept>

namespace oaprof::mmio {
namespace {

std::atomic<SavedRegisters*> g_guarded[SignalRestoreGuard::kMaxGuards];
std::mutex g_install_mu;
int g_installed = 0;
struct sigaction g_previous_int {}, g_previous_term {};

// Restoring is a handful of volatile stores on real hardware. The saved list is complete
// before a guard is registered and only read here, so the handler sees a consistent list.
void on_signal(int sig) {
  for (auto& slot : g_guarded) {
    if (SavedRegisters* saved = slot.exchange(nullptr)) saved->restore();
  }
  const struct sigaction& prev = sig == SIGINT ? g_previous_int : g_previous_term;
  sigaction(sig, &prev, nullptr);
  raise(sig);
}

}  // namespace

SignalRestoreGuard::SignalRestoreGuard(SavedRegisters& saved) {
  std::lock_guard lock(g_install_mu);
  for (int i = 0; i < kMaxGuards; ++i) {
    SavedRegisters* expected = nullptr;
    if (g_guarded[i].compare_exchange_strong(expected, &saved)) {
      slot_ = i;
      break;
    }
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
