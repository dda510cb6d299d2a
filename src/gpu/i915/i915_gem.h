// The GEM ioctls the rpc read-out's batches need — buffers, their CPU access, EXECBUFFER2 —
// behind one interface, so the same runner drives a real render node and the simulated i915,
// which refuses what i915 refuses on the same part. Calls mirror the ioctls: 0 or -errno.
//
// i915 refuses relocations and GEM pread/pwrite on every GRAPHICS_VER >= 12 part but Tiger Lake,
// which covers every part with local memory: eb_validate_vma (EXECBUFFER2 with relocation_count,
// EINVAL), i915_gem_pread_ioctl and i915_gem_pwrite_ioctl (EOPNOTSUPP). Source: torvalds/linux
// drivers/gpu/drm/i915/gem/i915_gem_execbuffer.c and drivers/gpu/drm/i915/i915_gem.c @
// 002c6ca75289a4ac4f6738213dd2d258704886e4. There the runner softpins (EXEC_OBJECT_PINNED at
// addresses it chooses) and reaches buffers through DRM_IOCTL_I915_GEM_MMAP_OFFSET, as Mesa's
// iris and anv do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "mmio/sim_gpu.h"
#include "oa/platform.h"

// From i915_drm.h (libdrm), which only src/gpu includes.
struct drm_i915_getparam;
struct drm_i915_gem_create;
struct drm_i915_gem_pread;
struct drm_i915_gem_pwrite;
struct drm_i915_gem_mmap_offset;
struct drm_i915_gem_execbuffer2;
struct drm_i915_gem_wait;

namespace oaprof::gpu {

class I915Gem {
 public:
  virtual ~I915Gem() = default;
  // "render node /dev/dri/renderD128", "simulated i915"
  virtual std::string describe() const = 0;
  virtual int get_param(drm_i915_getparam& param) = 0;
  virtual int create(drm_i915_gem_create& create) = 0;
  virtual int pread(const drm_i915_gem_pread& pread) = 0;
  virtual int pwrite(const drm_i915_gem_pwrite& pwrite) = 0;
  virtual int mmap_offset(drm_i915_gem_mmap_offset& mmap_offset) = 0;
  // mmap() of `size` bytes at the fake offset mmap_offset handed out: 0 and *bytes, or -errno.
  virtual int map(std::uint64_t fake_offset, std::size_t size, std::uint8_t** bytes) = 0;
  virtual void unmap(std::uint8_t* bytes, std::size_t size) = 0;
  virtual int execbuffer2(drm_i915_gem_execbuffer2& execbuffer) = 0;
  virtual int wait(drm_i915_gem_wait& wait) = 0;
  virtual void close_handle(std::uint32_t handle) = 0;
};

// Whether i915 refuses relocations and GEM pread/pwrite on `platform` (above): GRAPHICS_VER 12
// and later, Tiger Lake excepted.
bool i915_refuses_relocations(const oa::Platform& platform);

// The render node at `path` ("auto": the first driven by i915). Throws std::runtime_error.
std::unique_ptr<I915Gem> open_i915_gem(const std::string& path);
// The simulated i915 of `sim`: GEM objects in host memory, EXECBUFFER2 run by SimGpu's batch
// interpreter, and i915's refusals for `sim`'s platform.
std::unique_ptr<I915Gem> make_sim_i915_gem(mmio::SimGpu& sim);

}  // namespace oaprof::gpu
