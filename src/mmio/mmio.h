// The one seam between oaprof and GPU registers. The real BAR of 0:2.0 and the simulator both
// implement it, so every layer above the register level runs the same code on both.
#pragma once

#include <cstdint>
#include <string>

namespace oaprof::mmio {

class Mmio {
 public:
  virtual ~Mmio() = default;
  virtual std::uint32_t read32(std::uint32_t offset) = 0;
  virtual void write32(std::uint32_t offset, std::uint32_t value) = 0;
  // One line for messages: "simulated Kaby Lake GT2" or "0000:00:02.0 [8086:5916]".
  virtual std::string describe() const = 0;
};

}  // namespace oaprof::mmio
