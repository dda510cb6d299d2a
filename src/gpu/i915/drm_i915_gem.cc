// I915Gem on a real render node: each call one ioctl (drmIoctl retries EINTR), or mmap() of the
// DRM file at the fake offset.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>
#include <i915_drm.h>
#include <xf86drm.h>

#include "gpu/drm_node.h"
#include "gpu/i915/i915_gem.h"

namespace oaprof::gpu {
namespace {

class DrmI915Gem final : public I915Gem {
 public:
  explicit DrmI915Gem(const std::string& path) : path_(path), fd_(open_i915_render_node(path)) {}
  ~DrmI915Gem() override {
    if (fd_ >= 0) close(fd_);
  }
  DrmI915Gem(const DrmI915Gem&) = delete;
  DrmI915Gem& operator=(const DrmI915Gem&) = delete;

  std::string describe() const override { return fmt::format("render node {}", path_); }
  int get_param(drm_i915_getparam& p) override { return call(DRM_IOCTL_I915_GETPARAM, &p); }
  int create(drm_i915_gem_create& c) override { return call(DRM_IOCTL_I915_GEM_CREATE, &c); }
  int pread(const drm_i915_gem_pread& r) override {
    auto copy = r;
    return call(DRM_IOCTL_I915_GEM_PREAD, &copy);
  }
  int pwrite(const drm_i915_gem_pwrite& w) override {
    auto copy = w;
    return call(DRM_IOCTL_I915_GEM_PWRITE, &copy);
  }
  int mmap_offset(drm_i915_gem_mmap_offset& m) override {
    return call(DRM_IOCTL_I915_GEM_MMAP_OFFSET, &m);
  }
  int map(std::uint64_t fake_offset, std::size_t size, std::uint8_t** bytes) override {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                   static_cast<off_t>(fake_offset));
    if (p == MAP_FAILED) return -errno;
    *bytes = static_cast<std::uint8_t*>(p);
    return 0;
  }
  void unmap(std::uint8_t* bytes, std::size_t size) override { munmap(bytes, size); }
  int execbuffer2(drm_i915_gem_execbuffer2& e) override {
    return call(DRM_IOCTL_I915_GEM_EXECBUFFER2, &e);
  }
  int wait(drm_i915_gem_wait& w) override { return call(DRM_IOCTL_I915_GEM_WAIT, &w); }
  void close_handle(std::uint32_t handle) override {
    drm_gem_close c{};
    c.handle = handle;
    drmIoctl(fd_, DRM_IOCTL_GEM_CLOSE, &c);
  }

 private:
  int call(unsigned long request, void* arg) {
    return drmIoctl(fd_, request, arg) != 0 ? -errno : 0;
  }

  std::string path_;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<I915Gem> open_i915_gem(const std::string& path) {
  return std::make_unique<DrmI915Gem>(path);
}

bool i915_refuses_relocations(const oa::Platform& platform) {
  return static_cast<int>(platform.gen) >= static_cast<int>(oa::Generation::kGen12) &&
         platform.codename != "TGL";
}

}  // namespace oaprof::gpu
