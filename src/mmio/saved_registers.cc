#include "mmio/saved_registers.h"

#include "mmio/registers.h"

namespace oaprof::mmio {

void SavedRegisters::save(std::uint32_t offset, RestoreKind kind) {
  if (plan_.has(offset)) return;
  const std::uint32_t prior = mmio_.read32(offset);
  plan_.add({offset, kind == RestoreKind::kMasked ? prior & 0xFFFFu : prior, kind});
}

void SavedRegisters::write(std::uint32_t offset, std::uint32_t value) {
  std::lock_guard lock(mu_);
  save(offset, RestoreKind::kPlain);
  mmio_.write32(offset, value);
}

void SavedRegisters::write_masked(std::uint32_t offset, std::uint32_t value) {
  std::lock_guard lock(mu_);
  save(offset, RestoreKind::kMasked);
  mmio_.write32(offset, value);
}

void SavedRegisters::set_owned_bits(std::uint32_t offset, std::uint32_t bits) {
  std::lock_guard lock(mu_);
  plan_.add({offset, bits, RestoreKind::kOwnedBits});
  mmio_.write32(offset, reg::masked_enable(bits));
}

void SavedRegisters::restore() {
  std::lock_guard lock(mu_);
  restore_locked();
}

void SavedRegisters::restore_and_hold() {
  mu_.lock();  // never unlocked: the process ends with the registers as restored
  restore_locked();
}

void SavedRegisters::restore_locked() {
  plan_.apply(mmio_);
  plan_.clear();
}

}  // namespace oaprof::mmio
