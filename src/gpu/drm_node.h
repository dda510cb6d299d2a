// Opening the i915 render node, shared by the rpc and perf read-outs. Private to src/gpu.
#pragma once

#include <string>

namespace oaprof::gpu {

// `render_node` is a path or "auto" (the first /dev/dri/renderD128–191 driven by i915).
// Returns an O_RDWR | O_CLOEXEC descriptor; throws std::runtime_error with what to do.
int open_i915_render_node(const std::string& render_node);

}  // namespace oaprof::gpu
