// An unsigned 128-bit integer, for products of two 64-bit values kept whole (the sampled
// interpolation's significands, the decimal writer's mantissa times a power of ten).
#pragma once

namespace oaprof::base {

// gcc and clang; __extension__ keeps -Wpedantic quiet about the type.
__extension__ typedef unsigned __int128 UInt128;

}  // namespace oaprof::base
