// The part of the xe driver's uapi oaprof uses, defined here because Debian 12's kernel and libdrm
// headers predate xe. Every number and layout is from linux include/uapi/drm/xe_drm.h @
// torvalds/linux c8507a25cebd179db935dd266a33c51bef1b1e80; the static_asserts hold the layouts to
// the sizes the kernel copies.
#pragma once

#include <sys/ioctl.h>

#include <cstdint>

namespace oaprof::gpu::xe {

// DRM_COMMAND_BASE (drm.h) + DRM_XE_DEVICE_QUERY (0x00); DRM_IOWR is _IOWR('d', nr, type).
inline constexpr unsigned kDrmCommandBase = 0x40;
inline constexpr unsigned kDeviceQueryNr = 0x00;

struct DeviceQuery {  // struct drm_xe_device_query
  std::uint64_t extensions = 0;
  std::uint32_t query = 0;
  std::uint32_t size = 0;
  std::uint64_t data = 0;
  std::uint64_t reserved[2] = {};
};
static_assert(sizeof(DeviceQuery) == 40);

inline const unsigned long kIoctlDeviceQuery = _IOWR('d', kDrmCommandBase + kDeviceQueryNr, DeviceQuery);

// drm_xe_device_query.query values.
inline constexpr std::uint32_t kQueryGtTopology = 5;
inline constexpr std::uint32_t kQueryOaUnits = 8;

// struct drm_xe_engine_class_instance and its classes.
struct EngineClassInstance {
  std::uint16_t engine_class = 0;
  std::uint16_t engine_instance = 0;
  std::uint16_t gt_id = 0;
  std::uint16_t pad = 0;
};
static_assert(sizeof(EngineClassInstance) == 8);
inline constexpr std::uint16_t kEngineClassRender = 0;
inline constexpr std::uint16_t kEngineClassCopy = 1;
inline constexpr std::uint16_t kEngineClassVideoDecode = 2;
inline constexpr std::uint16_t kEngineClassVideoEnhance = 3;
inline constexpr std::uint16_t kEngineClassCompute = 4;

// enum drm_xe_oa_unit_type
inline constexpr std::uint32_t kOaUnitTypeOag = 0;
inline constexpr std::uint32_t kOaUnitTypeOam = 1;

// drm_xe_oa_unit.capabilities bits
inline constexpr std::uint64_t kOaCapsBase = 1u << 0;
inline constexpr std::uint64_t kOaCapsSyncs = 1u << 1;

// struct drm_xe_oa_unit without its flexible eci[]: extensions, oa_unit_id, oa_unit_type,
// capabilities, oa_timestamp_freq, reserved[4], num_engines. Units follow each other in
// drm_xe_query_oa_units.oa_units, each this size plus num_engines engine entries.
struct OaUnitHeader {
  std::uint64_t extensions;
  std::uint32_t oa_unit_id;
  std::uint32_t oa_unit_type;
  std::uint64_t capabilities;
  std::uint64_t oa_timestamp_freq;
  std::uint64_t reserved[4];
  std::uint64_t num_engines;
};
static_assert(sizeof(OaUnitHeader) == 72);

// struct drm_xe_query_oa_units without its flexible oa_units[]: extensions, num_oa_units, pad.
struct QueryOaUnitsHeader {
  std::uint64_t extensions;
  std::uint32_t num_oa_units;
  std::uint32_t pad;
};
static_assert(sizeof(QueryOaUnitsHeader) == 16);

}  // namespace oaprof::gpu::xe
