// Writes registers through an Mmio and remembers each register's value from before its first
// write, so that everything a session touched can be put back bit-identical, in reverse order.
#pragma once

#include <cstdint>
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
  // For masked registers (OA_DEBUG, forcewake): `value` is a masked write; the prior low 16
  // bits are saved and restored with a full mask, since a plain write of the read-back value
  // would change nothing.
  void write_masked(std::uint32_t offset, std::uint32_t value);
  // Puts back every saved value, last written first. Idempotent.
  void restore();
  std::size_t saved_count() const { return saved_.size(); }

 private:
  Mmio& mmio_;
  struct Saved {
    std::uint32_t offset;
    std::uint32_t prior;
    bool masked;
  };
  void save(std::uint32_t offset, bool masked);

  std::vector<Saved> saved_;
};

}  // namespace oaprof::mmio
