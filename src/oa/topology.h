// The GPU's actual slice/subslice/EU layout, from the i915 query DRM_I915_QUERY_TOPOLOGY_INFO,
// and the device variables ($EuCoresTotalCount, $SliceMask, …) that metric equations read. Parsing
// is pure so tests feed it synthetic buffers; the gpu layer does the ioctl.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "oa/equation.h"
#include "oa/platform.h"

namespace oaprof::oa {

struct Topology {
  int max_slices = 0;
  int max_subslices = 0;  // per slice
  int max_eus_per_subslice = 0;
  std::uint64_t slice_mask = 0;
  std::uint64_t subslice_mask = 0;  // bit s * max_subslices + ss
  int slices = 0;
  int subslices = 0;  // total enabled
  int eus = 0;        // total enabled
};

// Parses struct drm_i915_query_topology_info: eight u16 (flags, max_slices, max_subslices,
// max_eus_per_subslice, subslice_offset, subslice_stride, eu_offset, eu_stride) and the mask
// bytes. Throws std::invalid_argument when a mask lies outside the buffer, a stride is too small
// for its mask, or the layout has more than 64 slices or 64 subslices in all.
Topology parse_topology(std::span<const std::uint8_t> bytes);

// The bytes i915 answers DRM_I915_QUERY_TOPOLOGY_INFO with (i915_query.c query_topology_info):
// the header, a one-byte slice mask, the subslice masks of each slice, the EU masks of each
// subslice. `eu_masks` holds one EU bit mask per subslice, slice by slice (max_slices ×
// max_subslices of them); a subslice with none is fused off, a slice without subslices too.
// For the simulated i915 and tests. Throws std::invalid_argument when the sizes disagree or a
// count exceeds the header's (8 slices, 32 EUs per subslice).
std::vector<std::uint8_t> encode_topology(int max_slices, int max_subslices,
                                          int max_eus_per_subslice,
                                          std::span<const std::uint32_t> eu_masks);

// The platform with its slice/subslice/EU counts replaced by the device's.
Platform apply_topology(Platform platform, const Topology& topology);

// Device variables for equations: from the topology when there is one, else from the platform's
// defaults (subslices spread evenly over slices).
DeviceVariables device_variables(const Platform& platform,
                                 const std::optional<Topology>& topology = std::nullopt);

}  // namespace oaprof::oa
