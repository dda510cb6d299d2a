// Builds drm_i915_query_topology_info buffers the way i915 lays them out, for the topology and
// IGT parity tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace oaprof::oa::testing {

// Builds a drm_i915_query_topology_info buffer the way i915 lays it out.
inline std::vector<std::uint8_t> topology_buffer(
    int max_slices, int max_subslices, int max_eus,
    const std::vector<std::vector<std::uint32_t>>& eus) {
  const int ss_stride = (max_subslices + 7) / 8;
  const int eu_stride = (max_eus + 7) / 8;
  const int slice_bytes = (max_slices + 7) / 8;
  const int ss_offset = slice_bytes;
  const int eu_offset = ss_offset + max_slices * ss_stride;
  const int total = eu_offset + max_slices * max_subslices * eu_stride;
  std::vector<std::uint8_t> buf(16 + static_cast<std::size_t>(total), 0);
  const std::uint16_t header[8] = {0,
                                   static_cast<std::uint16_t>(max_slices),
                                   static_cast<std::uint16_t>(max_subslices),
                                   static_cast<std::uint16_t>(max_eus),
                                   static_cast<std::uint16_t>(ss_offset),
                                   static_cast<std::uint16_t>(ss_stride),
                                   static_cast<std::uint16_t>(eu_offset),
                                   static_cast<std::uint16_t>(eu_stride)};
  std::memcpy(buf.data(), header, sizeof header);
  std::uint8_t* data = buf.data() + 16;
  for (std::size_t s = 0; s < eus.size(); ++s) {
    for (std::size_t ss = 0; ss < eus[s].size(); ++ss) {
      if (eus[s][ss] == 0) continue;
      data[s / 8] |= static_cast<std::uint8_t>(1u << (s % 8));
      data[static_cast<std::size_t>(ss_offset) + s * ss_stride + ss / 8] |=
          static_cast<std::uint8_t>(1u << (ss % 8));
      const std::size_t at =
          static_cast<std::size_t>(eu_offset) + (s * max_subslices + ss) * eu_stride;
      for (int b = 0; b < eu_stride; ++b) {
        data[at + static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(eus[s][ss] >> (8 * b));
      }
    }
  }
  return buf;
}

}  // namespace oaprof::oa::testing
