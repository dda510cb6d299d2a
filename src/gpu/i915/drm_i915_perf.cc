// I915Perf on a real GPU: each call is the ioctl or system call it names, on the render node.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

#include <xf86drm.h>

#include "gpu/drm_node.h"
#include "gpu/i915/i915_perf.h"
#include "gpu/i915/perf_stream.h"

namespace oaprof::gpu {
namespace {

class DrmI915Perf final : public I915Perf {
 public:
  DrmI915Perf(std::string render_node, std::string card_sysfs)
      : render_node_(std::move(render_node)), card_sysfs_(std::move(card_sysfs)) {}
  ~DrmI915Perf() override { close_node(); }

  std::string describe() const override { return "render node " + render_node_; }

  void open_node() override {
    close_node();
    fd_ = open_i915_render_node(render_node_);
  }

  void close_node() override {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  std::optional<std::uint64_t> find_config_id(const std::string& guid) override {
    return find_metrics_config_id(card_sysfs_, guid);
  }

  int add_config(const drm_i915_perf_oa_config& config) override {
    auto c = config;
    const int id = drmIoctl(fd_, DRM_IOCTL_I915_PERF_ADD_CONFIG, &c);
    return id < 0 ? -errno : id;
  }

  int remove_config(std::uint64_t config_id) override {
    return drmIoctl(fd_, DRM_IOCTL_I915_PERF_REMOVE_CONFIG, &config_id) < 0 ? -errno : 0;
  }

  int open_stream(const drm_i915_perf_open_param& param) override {
    auto p = param;
    const int stream = drmIoctl(fd_, DRM_IOCTL_I915_PERF_OPEN, &p);
    return stream < 0 ? -errno : stream;
  }

  ssize_t read_stream(int stream, std::span<std::uint8_t> buf) override {
    const ssize_t n = read(stream, buf.data(), buf.size());
    return n < 0 ? -errno : n;
  }

  int enable_stream(int stream, bool enable) override {
    const auto request = enable ? I915_PERF_IOCTL_ENABLE : I915_PERF_IOCTL_DISABLE;
    return ioctl(stream, request, 0) < 0 ? -errno : 0;
  }

  void close_stream(int stream) override { close(stream); }

  std::unique_ptr<BatchRunner> make_batch_runner(const oa::Platform& platform) override {
    return make_drm_batch_runner(render_node_, platform);
  }

 private:
  std::string render_node_;
  std::string card_sysfs_;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<I915Perf> make_drm_i915_perf(const std::string& render_node,
                                             const std::string& card_sysfs) {
  return std::make_unique<DrmI915Perf>(render_node, card_sysfs);
}

}  // namespace oaprof::gpu
