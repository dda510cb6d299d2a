// The GPU's actual slice/subslice/EU layout, from the i915 query DRM_I915_QUERY_TOPOLOGY_INFO,
// and the device variables ($EuCoresTotalCount, $SliceMask, …) that metric equations read. Parsing
// is pure so tests feed it synthetic buffers; the gpu layer does the ioctl.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

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

// The platform with its slice/subslice/EU counts replaced by the device's.
Platform apply_topology(Platform platform, const Topology& topology);

// Device variables for equations: from the topology when there is one, else from the platform's
// defaults (subslices spread evenly over slices).
DeviceVariables device_variables(const Platform& platform,
                                 const std::optional<Topology>& topology = std::nullopt);

}  // namespace oaprof::oa
