// The i915 perf uapi as the perf read-out uses it, behind one interface, so that one read-out
// runs on a real GPU (ioctls on the render node) and on the simulator (SimI915Perf, which checks
// what i915 checks and drives SimGpu as the kernel drives the hardware). Calls mirror the system
// calls: they return the result or -errno, and the caller turns that into a message.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include <i915_drm.h>

#include "gpu/i915/report_batch.h"
#include "mmio/oa_programmer.h"

namespace oaprof::gpu {

class I915Perf {
 public:
  virtual ~I915Perf() = default;
  // What the calls go to, for messages: "render node /dev/dri/renderD128", "simulated i915".
  virtual std::string describe() const = 0;
  // Opens the render node. Throws std::runtime_error saying what to do.
  virtual void open_node() = 0;
  // Closes it (and nothing else). Safe when not open.
  virtual void close_node() = 0;
  // The id of a configuration i915 already holds: sysfs metrics/<guid>/id. nullopt when absent.
  virtual std::optional<std::uint64_t> find_config_id(const std::string& guid) = 0;
  // DRM_IOCTL_I915_PERF_ADD_CONFIG: the new config id, or -errno.
  virtual int add_config(const drm_i915_perf_oa_config& config) = 0;
  // DRM_IOCTL_I915_PERF_REMOVE_CONFIG: 0 or -errno.
  virtual int remove_config(std::uint64_t config_id) = 0;
  // DRM_IOCTL_I915_PERF_OPEN: a stream descriptor, or -errno.
  virtual int open_stream(const drm_i915_perf_open_param& param) = 0;
  // read() of the stream: bytes of whole records, or -errno (-EAGAIN: nothing yet, on a
  // non-blocking stream; -ENOSPC: `buf` cannot hold the next record).
  virtual ssize_t read_stream(int stream, std::span<std::uint8_t> buf) = 0;
  // I915_PERF_IOCTL_ENABLE / _DISABLE on the stream: 0 or -errno. A stream opened with
  // I915_PERF_FLAG_DISABLED counts and samples from ENABLE on.
  virtual int enable_stream(int stream, bool enable) = 0;
  // close() of the stream: i915 disables OA and releases the configuration.
  virtual void close_stream(int stream) = 0;
  // MI_REPORT_PERF_COUNT batches on the same GPU, for snapshots at kernel boundaries, the way
  // i915 takes them on `platform` (make_gem_batch_runner).
  virtual std::unique_ptr<BatchRunner> make_batch_runner(const oa::Platform& platform) = 0;
};

// DRM_IOCTL_I915_PERF_ADD_CONFIG of a metric set's registers (its mux, boolean and flex lists, as
// struct drm_i915_perf_oa_config carries them) under its guid (up to 36 characters): the new id,
// or -errno.
int add_oa_config(I915Perf& perf, const mmio::OaConfig& config);

// The real interface: `render_node` is a path or "auto"; configs are looked up under
// `card_sysfs` (e.g. /sys/class/drm/card0).
std::unique_ptr<I915Perf> make_drm_i915_perf(const std::string& render_node,
                                             const std::string& card_sysfs);

}  // namespace oaprof::gpu
