// Fuzzes the parser of xe's OA unit list (the DRM_XE_DEVICE_QUERY_OA_UNITS reply): any bytes must
// parse or be refused with std::runtime_error, never read past the buffer.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

#include "gpu/xe/xe_query.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto units = oaprof::gpu::parse_xe_oa_units(std::span(data, size));
    (void)oaprof::gpu::render_oag(units);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
