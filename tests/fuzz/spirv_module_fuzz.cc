// The simulated Level Zero driver's SPIR-V reader on arbitrary bytes: a program's module is
// untrusted input, so the reader must never crash, read out of bounds or loop.
#include <cstddef>
#include <cstdint>
#include <span>

#include "gpu/sim/level_zero/spirv_module.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  oaprof::gpu::level_zero_sim::SpirvError error;
  const auto module = oaprof::gpu::level_zero_sim::read_spirv_module({data, size}, error);
  // A module read has only kernels with names; a refusal always says why.
  if (!module && error.message.empty()) __builtin_trap();
  return 0;
}
