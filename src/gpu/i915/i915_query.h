// What oaprof asks i915 about the device when it opens it — its topology
// (DRM_I915_QUERY_TOPOLOGY_INFO) and its timestamp frequency (I915_PARAM_CS_TIMESTAMP_FREQUENCY)
// — behind one interface, so the same code runs on a real render node and on the simulated
// i915, which answers as i915_query.c does. Calls mirror the ioctls: 0 or -errno.
#pragma once

#include <memory>
#include <string>

#include "mmio/mmio.h"
#include "mmio/sim_gpu.h"
#include "oa/device_facts.h"
#include "oa/platform.h"
#include "oa/topology.h"

// From i915_drm.h (libdrm), which only src/gpu includes.
struct drm_i915_query;
struct drm_i915_getparam;

namespace oaprof::gpu {

class I915Query {
 public:
  virtual ~I915Query() = default;
  // "render node /dev/dri/renderD128", "simulated i915"
  virtual std::string describe() const = 0;
  // DRM_IOCTL_I915_QUERY: 0 or -errno; each item's result in its length, as i915 writes it.
  virtual int query(drm_i915_query& query) = 0;
  // DRM_IOCTL_I915_GETPARAM: 0 or -errno.
  virtual int get_param(drm_i915_getparam& param) = 0;
};

// The render node at `path`, checked to be i915's. Throws std::runtime_error saying what to do.
std::unique_ptr<I915Query> open_i915_query(const std::string& path);
// The simulated i915 of `sim`: its topology (SimConfig::eus fused) and timestamp frequencies,
// the OA one from `sim`'s RPM_CONFIG0 at each call, as i915 reads it.
std::unique_ptr<I915Query> make_sim_i915_query(mmio::SimGpu& sim);

// The topology query in the two steps the uapi describes (the length, then the data), parsed.
// Throws std::runtime_error naming the node and what failed.
oa::Topology query_topology(I915Query& i915);
// I915_PARAM_CS_TIMESTAMP_FREQUENCY in Hz. Throws std::runtime_error naming the node.
double query_cs_timestamp_hz(I915Query& i915);

// I915_PARAM_OA_TIMESTAMP_FREQUENCY, include/uapi/drm/i915_drm.h (Linux 6.2, "drm/i915/perf:
// Apply Wa_18013179988"); Debian's libdrm 2.4.114 header stops at 56.
inline constexpr int kI915ParamOaTimestampFrequency = 57;

// The rate the OA unit's report timestamps count at, and where it came from.
struct OaTimestampRate {
  double hz = 0;
  std::string how;  // "I915_PARAM_OA_TIMESTAMP_FREQUENCY on …", or why param 51 stood in
};
// I915_PARAM_OA_TIMESTAMP_FREQUENCY in Hz. A kernel before 6.2 answers EINVAL: it has no such
// parameter and no Meteor Lake OA either (i915 adjusts the rate only on DG2 and IP 12.70-12.74),
// so its OA timestamps count at the CS rate, which is returned instead and `how` says so.
// Throws std::runtime_error naming the node for any other failure.
OaTimestampRate query_oa_timestamp_hz(I915Query& i915);

// The device's facts: topology and timestamp frequency from `i915` when it answers (else
// `no_i915` says why it was not asked), the timestamp frequency from `registers` (a mapped
// register window, forcewake held) when i915 gave none, else the platform table's.
oa::DeviceFacts read_device_facts(const oa::Platform& platform, I915Query* i915,
                                  const std::string& no_i915, mmio::Mmio* registers);

}  // namespace oaprof::gpu
