// Writes registers through an Mmio and remembers each register's value from before its first
// write in a RestorePlan (restore_plan.h), so that everything a session touched can be put back
// bit-identical, in reverse order. Bits oaprof owns in a register that others share (its
// forcewake request bit) are the exception: only they are cleared again, so whatever the driver
// set meanwhile stays.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "mmio/mmio.h"
#include "mmio/restore_plan.h"

namespace oaprof::mmio {

class SavedRegisters {
 public:
  explicit SavedRegisters(Mmio& mmio) : mmio_(mmio) {}
  SavedRegisters(const SavedRegisters&) = delete;
  SavedRegisters& operator=(const SavedRegisters&) = delete;
  ~SavedRegisters() { restore(); }

  void write(std::uint32_t offset, std::uint32_t value);
  // For masked registers (OA_DEBUG, HALF_SLICE_CHICKEN2, WAIT_FOR_RC6_EXIT): `value` is a masked
  // write; the prior low 16 bits are saved and restored with a full mask, since a plain write of
  // the read-back value would change nothing.
  void write_masked(std::uint32_t offset, std::uint32_t value);
  // For a masked register whose other bits belong to someone else (the forcewake requests, where
  // i915 sets its own bit whenever it likes): sets `bits` with a masked write, and restore()
  // clears just them with a masked write, never putting back a stale copy of the other bits.
  void set_owned_bits(std::uint32_t offset, std::uint32_t bits);
  // Puts back every saved value, last written first. Idempotent. Writes and restores are
  // serialised, so the signal thread may restore while another thread writes.
  void restore();
  // restore(), then keeps the lock: nothing is written through this object again. For the signal
  // thread's restore plan just before the process ends (signal_restore.h).
  void restore_and_hold();
  std::size_t saved_count() const {
    std::lock_guard lock(mu_);
    return plan_.steps().size();
  }
  // What restore() would undo, in first-write order.
  std::vector<RestoreStep> steps() const {
    std::lock_guard lock(mu_);
    return {plan_.steps().begin(), plan_.steps().end()};
  }

 private:
  void save(std::uint32_t offset, RestoreKind kind);
  void restore_locked();

  Mmio& mmio_;
  mutable std::mutex mu_;
  RestorePlan plan_;
};

}  // namespace oaprof::mmio
