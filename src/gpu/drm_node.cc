#include "gpu/drm_node.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <xf86drm.h>

namespace oaprof::gpu {
namespace {

bool is_i915(int fd) {
  drmVersionPtr v = drmGetVersion(fd);
  if (v == nullptr) return false;
  const bool i915 = std::string(v->name, static_cast<std::size_t>(v->name_len)) == "i915";
  drmFreeVersion(v);
  return i915;
}

}  // namespace

int open_i915_render_node(const std::string& render_node) {
  if (render_node != "auto") {
    const int fd = open(render_node.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      throw std::runtime_error(fmt::format(
          "cannot open render node {}: {}; check that it exists and that you are in its group "
          "(usually 'render')",
          render_node, std::strerror(errno)));
    }
    if (!is_i915(fd)) {
      close(fd);
      throw std::runtime_error(fmt::format(
          "{} is not driven by i915; --access rpc needs an Intel GPU on the i915 driver",
          render_node));
    }
    return fd;
  }
  for (int minor = 128; minor < 192; ++minor) {
    const std::string path = fmt::format("/dev/dri/renderD{}", minor);
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;
    if (is_i915(fd)) return fd;
    close(fd);
  }
  throw std::runtime_error(
      "no i915 render node in /dev/dri (renderD128–191) could be opened; is i915 loaded and are "
      "you in the 'render' group? Use --access mmio meanwhile");
}

}  // namespace oaprof::gpu
