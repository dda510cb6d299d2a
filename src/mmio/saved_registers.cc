#include "mmio/saved_registers.h"

#include <algorithm>

#include "mmio/registers.h"

namespace oaprof::mmio {

void SavedRegisters::save(std::uint32_t offset, Kind kind) {
  const bool known = std::any_of(saved_.begin(), saved_.end(),
                                 [offset](const Saved& s) { return s.offset == offset; });
  if (!known) saved_.push_back({offset, mmio_.read32(offset), kind});
}

void SavedRegisters::write(std::uint32_t offset, std::uint32_t value) {
  std::lock_guard lock(mu_);
  save(offset, Kind::kPlain);
  mmio_.write32(offset, value);
}

void SavedRegisters::write_masked(std::uint32_t offset, std::uint32_t value) {
  std::lock_guard lock(mu_);
  save(offset, Kind::kMasked);
  mmio_.write32(offset, value);
}

void SavedRegisters::set_owned_bits(std::uint32_t offset, std::uint32_t bits) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(saved_.begin(), saved_.end(),
                         [offset](const Saved& s) { return s.offset == offset; });
  if (it == saved_.end()) {
    saved_.push_back({offset, bits, Kind::kOwnedBits});
  } else if (it->kind == Kind::kOwnedBits) {
    it->prior |= bits;
  }
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
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    switch (it->kind) {
      case Kind::kPlain: mmio_.write32(it->offset, it->prior); break;
      case Kind::kMasked: mmio_.write32(it->offset, 0xFFFF0000u | (it->prior & 0xFFFFu)); break;
      case Kind::kOwnedBits: mmio_.write32(it->offset, reg::masked_disable(it->prior)); break;
    }
  }
  saved_.clear();
}

}  // namespace oaprof::mmio
