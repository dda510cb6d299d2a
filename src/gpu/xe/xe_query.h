// What oaprof asks xe about a device: its OA units (DRM_XE_DEVICE_QUERY_OA_UNITS), its GT
// topology (DRM_XE_DEVICE_QUERY_GT_TOPOLOGY) and an engine's timestamp
// (DRM_XE_DEVICE_QUERY_ENGINE_CYCLES), behind one
// interface so that the same code runs on a real render node and on a simulated xe. The reply
// is the kernel's, but parsed as untrusted bytes: every count is bounded and every length checked
// against the buffer before anything is read (tests/fuzz/xe_oa_units_fuzz.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpu/xe/xe_uapi.h"
#include "oa/device_facts.h"
#include "oa/platform.h"

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

// The bytes xe writes for these units (xe_query.c query_oa_units): for the simulated xe.
std::vector<std::uint8_t> encode_xe_oa_units(const std::vector<XeOaUnit>& units);

// The OAG unit whose engines include a render or compute engine: the one that counts what
// OpenCL kernels do. nullptr when there is none.
const XeOaUnit* render_oag(const std::vector<XeOaUnit>& units);
// The unit's first render or compute engine: the one whose timestamp xe snapshots are placed by.
std::optional<xe::EngineClassInstance> render_engine(const XeOaUnit& unit);

// One GT's masks from DRM_XE_DEVICE_QUERY_GT_TOPOLOGY.
struct XeGtTopology {
  std::uint16_t gt_id = 0;
  std::uint64_t dss_mask = 0;  // geometry | compute DSS (Xe-cores), bit n = Xe-core n, as IGT
  int dss_bits = 0;            // the width xe gave the DSS masks, at most 64 used
  std::uint64_t eu_mask = 0;   // the EUs of each DSS
  int eu_bits = 0;
  bool simd16 = false;                        // SIMD16_EU_PER_DSS (Xe2) rather than EU_PER_DSS
  std::optional<std::uint64_t> l3_bank_mask;  // absent where xe leaves the L3 mask out
};

// At most this many masks in a reply, and bytes in one mask.
inline constexpr std::size_t kMaxXeTopologyMasks = 64;
inline constexpr std::size_t kMaxXeTopologyMaskBytes = 64;

// GT `gt_id`'s masks in a GT_TOPOLOGY reply. Throws std::runtime_error when the bytes are not a
// well-formed reply (a header or mask cut short, too many masks, a mask too wide), when the GT
// has no DSS or EU mask, or when a DSS past the 64th or an EU past the 64th is set. Masks of
// types oaprof does not know are skipped (the uapi may add some).
XeGtTopology parse_xe_gt_topology(std::span<const std::uint8_t> bytes, std::uint16_t gt_id);

// The bytes xe writes for one GT (xe_query.c query_gt_topology), each mask `mask_bytes` wide: for
// the simulated xe and tests.
std::vector<std::uint8_t> encode_xe_gt_topology(const XeGtTopology& gt, std::size_t mask_bytes);

// The query in its two steps, parsed for `gt_id`. Throws std::runtime_error naming the node.
XeGtTopology query_xe_gt_topology(XeQuery& xe, std::uint16_t gt_id);

// One DRM_XE_DEVICE_QUERY_ENGINE_CYCLES answer: the engine's timestamp counter and
// CLOCK_MONOTONIC at the instant xe read it.
struct XeEngineCycles {
  std::uint64_t engine_cycles = 0;  // the engine's timestamp, `width` bits wide
  int width = 0;
  std::uint64_t cpu_ns = 0;        // CLOCK_MONOTONIC just before the read
  std::uint64_t cpu_delta_ns = 0;  // how long the read took: the pairing's uncertainty
};

// The query for `engine` with CLOCK_MONOTONIC. Throws std::runtime_error naming the node when xe
// refuses it (an engine it does not have, forcewake failing) or answers a width outside 1..64.
XeEngineCycles query_xe_engine_cycles(XeQuery& xe, const xe::EngineClassInstance& engine);

// The bits of a timestamp counter `width` bits wide: all 64 for a width not in 1..63.
std::uint64_t timestamp_mask(int width);

// How many ticks timestamp `t` is at or after `from`, on a counter `width` bits wide (64 when
// 0) that may have wrapped once between them; nullopt when `t` is before `from` (less than half
// the counter's range behind it).
std::optional<std::uint64_t> ticks_at_or_after(std::uint64_t t, std::uint64_t from, int width);

// The counts metrics-discovery derives from an Xe2 part's L3 bank mask
// (md_driver_ifc_linux_xe.cpp @ intel/metrics-discovery 80cc115575f1): an L3 node is a group of 4
// banks (MD_MAX_L3_BANK_PER_L3_NODE_XE2) with any enabled, a copy engine a pair of nodes
// (MD_MAX_L3_NODE_PER_COPY_ENGINE) with any enabled, and a SQIDI an L3 node, except on small
// Panther Lake SKUs, which metrics-discovery fixes at 2 by a platform version oaprof cannot tell:
// no SQIDI count on PTL.
struct XeL3Counts {
  std::uint64_t l3_nodes = 0;
  std::uint64_t copy_engines = 0;
  std::optional<std::uint64_t> sqidis;
};
XeL3Counts xe_l3_counts(const oa::Platform& platform, std::uint64_t l3_bank_mask);

// The device's facts from xe: the topology of the render OAG's GT and that unit's timestamp
// frequency, each from the platform table with the reason in its note when xe does not give it.
// `xe` null: `no_xe` says why it was not asked.
oa::DeviceFacts read_xe_device_facts(const oa::Platform& platform, XeQuery* xe,
                                     const std::string& no_xe);

}  // namespace oaprof::gpu
