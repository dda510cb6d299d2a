// Fuzzes the parser of i915's topology query answer (drm_i915_query_topology_info), which sizes
// and indexes by offsets and strides the buffer itself gives: any input must parse or be refused,
// never read outside the buffer, and what parses must be consistent with its masks.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "oa/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const oaprof::oa::Topology t = oaprof::oa::parse_topology({data, size});
    if (std::popcount(t.slice_mask) != t.slices || std::popcount(t.subslice_mask) != t.subslices) {
      std::abort();
    }
    if (t.eus < 0 || t.eus > t.subslices * t.max_eus_per_subslice) std::abort();
  } catch (const std::invalid_argument&) {
    // refused with a message: fine
  }
  return 0;
}
