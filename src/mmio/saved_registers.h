// Writes registers through an Mmio and remembers each register's value from before its first
// write, so that everything a session touched can be put back bit-identical, in reverse order.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "mmio/mmio.h"

namespace oaprof::mmio {

class SavedRegisters {
 public:
  explicit SavedRegisters(Mmio& mmio) : mmio_(mmio) {}
  SavedRegisters(const SavedRegisters&) = delete;
  SavedRegisters& operator=(const SavedRegisters&) = delete;
  ~SavedRegisters() { restore(); }

  void write(std::uint32_t offset, std::uint32_t value);
  // Puts back every saved value, last written first. Idempotent.
  void restore();
  std::size_t saved_count() const { return saved_.size(); }

 private:
  Mmio& mmio_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> saved_;  // offset, prior value
};

}  // namespace oaprof::mmio
