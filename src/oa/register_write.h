// One register write of an OA configuration: what metric sets carry (NOA/mux, boolean and flex
// lists) and what the programming plan turns into MMIO writes or an i915 ADD_CONFIG.
#pragma once

#include <cstdint>

namespace oaprof::oa {

struct RegisterWrite {
  std::uint32_t address = 0;
  std::uint32_t value = 0;
  friend bool operator==(const RegisterWrite&, const RegisterWrite&) = default;
};

}  // namespace oaprof::oa
