#include "mmio/saved_registers.h"

#include <algorithm>

namespace oaprof::mmio {

void SavedRegisters::write(std::uint32_t offset, std::uint32_t value) {
  const bool known = std::any_of(saved_.begin(), saved_.end(),
                                 [offset](const auto& s) { return s.first == offset; });
  if (!known) saved_.emplace_back(offset, mmio_.read32(offset));
  mmio_.write32(offset, value);
}

void SavedRegisters::restore() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) mmio_.write32(it->first, it->second);
  saved_.clear();
}

}  // namespace oaprof::mmio
