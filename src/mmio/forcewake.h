// Keeps the GPU's power wells awake for a whole session, as i915 does for its own OA streams:
// counters in a sleeping (RC6) domain stop and read back as zero. The preferred way is i915's
// debugfs file i915_forcewake_user, held open; without debugfs (no root, not mounted) oaprof
// sets its own request bit in the forcewake registers of the domains its OA registers sit in
// (which differ per generation: oa_forcewake_domains) and polls for their acks.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "mmio/mmio.h"
#include "mmio/registers.h"
#include "mmio/saved_registers.h"
#include "mmio/signal_restore.h"
#include "oa/platform.h"

namespace oaprof::mmio {

enum class ForcewakeMode { kAuto, kDebugfs, kRegisters, kNone };

// The power domains whose forcewake the OA registers of `platform` need (what oaprof holds).
std::span<const reg::ForcewakeDomain> oa_forcewake_domains(const oa::Platform& platform);
// Every domain i915 initialises on `platform` (what a simulated GPU of it acks).
std::span<const reg::ForcewakeDomain> all_forcewake_domains(const oa::Platform& platform);

// Parses --forcewake: auto | debugfs | registers | none.
ForcewakeMode parse_forcewake_mode(const std::string& text);

struct ForcewakeOptions {
  ForcewakeMode mode = ForcewakeMode::kAuto;
  std::string debugfs_root = "/sys/kernel/debug";  // injectable for tests
  // dri/<minor>/ under debugfs: the DRM card minor of the device (mmio::find_drm_nodes).
  // nullopt when it has none (no i915 bound): no debugfs file is its own, so auto goes straight
  // to the registers.
  std::optional<int> dri_minor = 0;
  std::chrono::milliseconds ack_timeout{50};
};

// Held forcewake; releases on destruction. How it is held is in `method()`.
class Forcewake {
 public:
  // Throws std::runtime_error with what to do when the chosen mode cannot take forcewake.
  // kAuto tries debugfs, then the registers of `platform`'s OA domains. `mmio` must outlive the
  // returned object.
  static std::unique_ptr<Forcewake> acquire(Mmio& mmio, const oa::Platform& platform,
                                            const ForcewakeOptions& options);

  ~Forcewake();
  Forcewake(const Forcewake&) = delete;
  Forcewake& operator=(const Forcewake&) = delete;

  // "debugfs /sys/kernel/debug/dri/0/i915_forcewake_user", "registers" or "none".
  const std::string& method() const { return method_; }
  void release();

 private:
  Forcewake(std::string method, int fd, Mmio* mmio);
  static std::unique_ptr<Forcewake> take_registers(Mmio& mmio, const oa::Platform& platform,
                                                   const ForcewakeOptions& options);

  std::string method_;
  int fd_ = -1;
  Mmio* mmio_ = nullptr;                   // set when held through the registers
  std::unique_ptr<SavedRegisters> saved_;  // oaprof's request bit, cleared on release
  // While held through the registers: part of the signal thread's restore plan (signal_restore.h).
  std::unique_ptr<SignalRestoreGuard> signal_guard_;
};

}  // namespace oaprof::mmio
