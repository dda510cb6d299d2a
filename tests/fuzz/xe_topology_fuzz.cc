// Fuzzes the parser of xe's GT topology (the DRM_XE_DEVICE_QUERY_GT_TOPOLOGY reply): any bytes
// must parse or be refused with std::runtime_error, never read past the buffer, for either GT.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

#include "gpu/xe/xe_query.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  for (const std::uint16_t gt : {std::uint16_t{0}, std::uint16_t{1}}) {
    try {
      (void)oaprof::gpu::parse_xe_gt_topology(std::span(data, size), gt);
    } catch (const std::runtime_error&) {
    }
  }
  return 0;
}
