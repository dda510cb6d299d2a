// What oaprof asks xe about a device: its OA units (DRM_XE_DEVICE_QUERY_OA_UNITS), behind one
// interface so that the same code runs on a real render node and on a simulated xe. The reply
// is the kernel's, but parsed as untrusted bytes: every count is bounded and every length checked
// against the buffer before anything is read (tests/fuzz/xe_oa_units_fuzz.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpu/xe_uapi.h"

namespace oaprof::gpu {

class XeQuery {
 public:
  virtual ~XeQuery() = default;
  virtual std::string describe() const = 0;
  // DRM_IOCTL_XE_DEVICE_QUERY: 0 or -errno. With size 0 the driver writes the size it needs.
  virtual int device_query(xe::DeviceQuery& query) = 0;
};

// The render node at `path`. Throws std::runtime_error saying what failed.
std::unique_ptr<XeQuery> open_xe_query(const std::string& path);

struct XeOaUnit {
  std::uint32_t id = 0;
  std::uint32_t type = 0;  // xe::kOaUnitType*
  std::uint64_t capabilities = 0;
  std::uint64_t timestamp_hz = 0;
  std::vector<xe::EngineClassInstance> engines;
};

// At most this many units, and engines per unit, are accepted in a reply.
inline constexpr std::size_t kMaxXeOaUnits = 64;
inline constexpr std::size_t kMaxXeOaEngines = 256;

// The units of a DRM_XE_DEVICE_QUERY_OA_UNITS reply. Throws std::runtime_error when the bytes are
// not a well-formed reply (too short for its counts, counts past the bounds, trailing bytes).
std::vector<XeOaUnit> parse_xe_oa_units(std::span<const std::uint8_t> bytes);

// The query in the two steps the uapi describes (the size, then the data), parsed. Throws
// std::runtime_error naming the node and what failed.
std::vector<XeOaUnit> query_xe_oa_units(XeQuery& xe);

// The OAG unit whose engines include a render or compute engine: the one that counts what
// OpenCL kernels do. nullptr when there is none.
const XeOaUnit* render_oag(const std::vector<XeOaUnit>& units);

}  // namespace oaprof::gpu
