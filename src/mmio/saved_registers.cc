#include "mmio/saved_registers.h"

#include <algorithm>

namespace oaprof::mmio {

void SavedRegisters::save(std::uint32_t offset, bool masked) {
  const bool known = std::any_of(saved_.begin(), saved_.end(),
                                 [offset](const Saved& s) { return s.offset == offset; });
  if (!known) saved_.push_back({offset, mmio_.read32(offset), masked});
}

void SavedRegisters::write(std::uint32_t offset, std::uint32_t value) {
  save(offset, false);
  mmio_.write32(offset, value);
}

void SavedRegisters::write_masked(std::uint32_t offset, std::uint32_t value) {
  save(offset, true);
  mmio_.write32(offset, value);
}

void SavedRegisters::restore() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    mmio_.write32(it->offset, it->masked ? 0xFFFF0000u | (it->prior & 0xFFFFu) : it->prior);
  }
  saved_.clear();
}

}  // namespace oaprof::mmio
