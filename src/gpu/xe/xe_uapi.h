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

inline const unsigned long kIoctlDeviceQuery =
    _IOWR('d', kDrmCommandBase + kDeviceQueryNr, DeviceQuery);

// drm_xe_device_query.query values.
inline constexpr std::uint32_t kQueryGtTopology = 5;
inline constexpr std::uint32_t kQueryEngineCycles = 6;
inline constexpr std::uint32_t kQueryOaUnits = 8;

// struct drm_xe_query_topology_mask without its flexible mask[]: the GT_TOPOLOGY reply is these
// entries back to back, each followed by its num_bytes of little-endian mask. xe_query.c
// query_gt_topology writes, per GT: DSS_GEOMETRY, DSS_COMPUTE, L3_BANK (left out where xe cannot
// read the mask: XE_WA no_media_l3), then EU_PER_DSS or SIMD16_EU_PER_DSS.
struct TopologyMaskHeader {
  std::uint16_t gt_id;
  std::uint16_t type;
  std::uint32_t num_bytes;
};
static_assert(sizeof(TopologyMaskHeader) == 8);
inline constexpr std::uint16_t kTopoDssGeometry = 1;
inline constexpr std::uint16_t kTopoDssCompute = 2;
inline constexpr std::uint16_t kTopoL3Bank = 3;
inline constexpr std::uint16_t kTopoEuPerDss = 4;
inline constexpr std::uint16_t kTopoSimd16EuPerDss = 5;

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

// struct drm_xe_query_engine_cycles (query 6 and layout also in xe_drm.h @ torvalds/linux
// 06b7ef70b1f29de685ea80f0c1b8f0a0b0e16d18): the caller fills eci and clockid, xe the rest. How xe
// answers (drivers/gpu/drm/xe/xe_query.c query_engine_cycles @ torvalds/linux
// 043254938d2bb8cade5878a2a6ebf9c7a20afcc9): .size must be exactly this struct's (0 asks for
// it), clockid one of CLOCK_MONOTONIC, _RAW, REALTIME, BOOTTIME, TAI, and eci an engine xe has,
// else -EINVAL; -EIO when forcewake fails. engine_cycles is the engine's RING_TIMESTAMP (upper,
// lower, upper again), cpu_timestamp the chosen clock just before the lower dword was read,
// cpu_delta how long that read took; width is 64 on Xe2 and later (GRAPHICS_VER >= 20), 36 before.
struct QueryEngineCycles {
  EngineClassInstance eci;
  std::int32_t clockid = 0;
  std::uint32_t width = 0;
  std::uint64_t engine_cycles = 0;
  std::uint64_t cpu_timestamp = 0;
  std::uint64_t cpu_delta = 0;
};
static_assert(sizeof(QueryEngineCycles) == 40);

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

// The observation interface: DRM_IOCTL_XE_OBSERVATION is DRM_IOW(DRM_COMMAND_BASE +
// DRM_XE_OBSERVATION (0x0b), struct drm_xe_observation_param).
inline constexpr unsigned kObservationNr = 0x0b;

struct ObservationParam {  // struct drm_xe_observation_param
  std::uint64_t extensions = 0;
  std::uint64_t observation_type = 0;  // enum drm_xe_observation_type
  std::uint64_t observation_op = 0;    // enum drm_xe_observation_op
  std::uint64_t param = 0;             // the op's own struct (or the first extension)
};
static_assert(sizeof(ObservationParam) == 32);

inline const unsigned long kIoctlObservation =
    _IOW('d', kDrmCommandBase + kObservationNr, ObservationParam);

inline constexpr std::uint64_t kObservationTypeOa = 0;
inline constexpr std::uint64_t kObservationOpStreamOpen = 0;
inline constexpr std::uint64_t kObservationOpAddConfig = 1;
inline constexpr std::uint64_t kObservationOpRemoveConfig = 2;

// enum drm_xe_observation_ioctls, on the stream descriptor.
inline const unsigned long kIoctlStreamEnable = _IO('i', 0x0);
inline const unsigned long kIoctlStreamDisable = _IO('i', 0x1);
inline const unsigned long kIoctlStreamConfig = _IO('i', 0x2);
inline const unsigned long kIoctlStreamStatus = _IO('i', 0x3);
inline const unsigned long kIoctlStreamInfo = _IO('i', 0x4);

struct UserExtension {  // struct drm_xe_user_extension
  std::uint64_t next_extension = 0;
  std::uint32_t name = 0;
  std::uint32_t pad = 0;
};
static_assert(sizeof(UserExtension) == 16);

struct ExtSetProperty {  // struct drm_xe_ext_set_property
  UserExtension base;
  std::uint32_t property = 0;
  std::uint32_t pad = 0;
  std::uint64_t value = 0;
  std::uint64_t reserved[2] = {};
};
static_assert(sizeof(ExtSetProperty) == 48);  // base 16, property, pad, value, reserved[2]

// DRM_XE_OA_EXTENSION_SET_PROPERTY and enum drm_xe_oa_property_id (from 1).
inline constexpr std::uint32_t kOaExtensionSetProperty = 0;
inline constexpr std::uint32_t kOaPropOaUnitId = 1;
inline constexpr std::uint32_t kOaPropSampleOa = 2;
inline constexpr std::uint32_t kOaPropOaMetricSet = 3;
inline constexpr std::uint32_t kOaPropOaFormat = 4;
inline constexpr std::uint32_t kOaPropOaPeriodExponent = 5;
inline constexpr std::uint32_t kOaPropOaDisabled = 6;
inline constexpr std::uint32_t kOaPropExecQueueId = 7;
inline constexpr std::uint32_t kOaPropOaEngineInstance = 8;
inline constexpr std::uint32_t kOaPropNoPreempt = 9;
inline constexpr std::uint32_t kOaPropNumSyncs = 10;
inline constexpr std::uint32_t kOaPropSyncs = 11;
// Enum values 12 and 13, after SYNCS: xe_drm.h from torvalds/linux 720f63a83873
// (OA_BUFFER_SIZE) and 5637797add2a (WAIT_NUM_REPORTS).
inline constexpr std::uint32_t kOaPropOaBufferSize = 12;
inline constexpr std::uint32_t kOaPropWaitNumReports = 13;

struct OaConfigParam {  // struct drm_xe_oa_config
  std::uint64_t extensions = 0;
  char uuid[36] = {};
  std::uint32_t n_regs = 0;
  std::uint64_t regs_ptr = 0;  // n_regs (address, value) pairs of u32
};
static_assert(sizeof(OaConfigParam) == 56);

struct OaStreamStatus {  // struct drm_xe_oa_stream_status
  std::uint64_t extensions = 0;
  std::uint64_t oa_status = 0;
  std::uint64_t reserved[3] = {};
};
static_assert(sizeof(OaStreamStatus) == 40);

inline constexpr std::uint64_t kOaStatusReportLost = 1u << 0;
inline constexpr std::uint64_t kOaStatusBufferOverflow = 1u << 1;
inline constexpr std::uint64_t kOaStatusCounterOverflow = 1u << 2;
inline constexpr std::uint64_t kOaStatusMmioTrgQFull = 1u << 3;

}  // namespace oaprof::gpu::xe
