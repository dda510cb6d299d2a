// liboaprof_layer.so: the OpenCL layer (OPENCL_LAYERS, ocl-icd ≥ 2.3) that measures every kernel
// launch of an unmodified program. Around each clEnqueueNDRangeKernel it drains the queue, asks the
// privileged side (OAPROF_SOCKET) for a snapshot, enqueues, waits, asks for a second snapshot and
// sends the launch record. It never throws or aborts into the program: on an internal failure it
// logs once and from then on passes every call straight through.
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "launch/client.h"
#include "oa/wire.h"

namespace oaprof::launch {
namespace {
namespace wire = oa::wire;

_cl_icd_dispatch g_next{};   // the dispatch table of the layer below us
_cl_icd_dispatch g_ours{};   // ours: g_next with our entries replaced

class Profiler {
 public:
  static Profiler& get() {
    static Profiler* p = new Profiler();  // never destroyed: calls may arrive during exit
    return *p;
  }

  // false once profiling is off for this process (no socket, or an internal error).
  bool active() {
    std::lock_guard lock(mu_);
    return ensure_connected_locked();
  }

  cl_int launch(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t* off, const size_t* gws,
                const size_t* lws, cl_uint nwait, const cl_event* wait, cl_event* event) noexcept;

 private:
  Profiler() {
    const char* path = std::getenv("OAPROF_SOCKET");
    if (path == nullptr || *path == '\0') {
      disable("OAPROF_SOCKET is not set (start the program under oaprof); running unprofiled");
    } else {
      socket_path_ = path;
    }
  }

  bool ensure_connected_locked() {
    if (disabled_) return false;
    const pid_t pid = ::getpid();
    if (client_ && pid == client_pid_) return true;
    // First use, or we are a forked child: the parent's connection is not ours to use.
    std::string error;
    client_ = Client::connect(socket_path_, error);
    if (!client_) {
      disable(error + "; running unprofiled");
      return false;
    }
    client_pid_ = pid;
    if (!client_->call(wire::Hello{static_cast<std::uint32_t>(pid), 0}, error)) {
      disable("the privileged side refused us: " + error + "; running unprofiled");
      return false;
    }
    return true;
  }

  void disable(const std::string& why) {
    disabled_ = true;
    client_.reset();
    if (!warned_.exchange(true)) std::fprintf(stderr, "oaprof layer: %s\n", why.c_str());
  }

  std::mutex mu_;  // one measured launch at a time: snapshots must bracket exactly one kernel
  std::string socket_path_;
  std::unique_ptr<Client> client_;
  pid_t client_pid_ = 0;
  bool disabled_ = false;
  std::atomic<bool> warned_{false};
  std::uint64_t next_launch_ = 0;
};

std::string kernel_name(cl_kernel k) {
  size_t size = 0;
  if (g_next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size) != CL_SUCCESS) {
    return "?";
  }
  std::string name(size, '\0');
  if (g_next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, size, name.data(), nullptr) != CL_SUCCESS) {
    return "?";
  }
  while (!name.empty() && name.back() == '\0') name.pop_back();
  return name;
}

cl_int Profiler::launch(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t* off,
                        const size_t* gws, const size_t* lws, cl_uint nwait, const cl_event* wait,
                        cl_event* event) noexcept {
  std::lock_guard lock(mu_);
  if (!ensure_connected_locked()) {
    return g_next.clEnqueueNDRangeKernel(q, k, dim, off, gws, lws, nwait, wait, event);
  }
  try {
    const std::uint64_t id = next_launch_++;
    // Drain: nothing else of this queue, nor what the launch waits for, may run inside the
    // snapshots.
    g_next.clFinish(q);
    if (nwait > 0) g_next.clWaitForEvents(nwait, wait);
    std::string error;
    if (!client_->call(wire::Snapshot{id, wire::Phase::kBefore}, error)) {
      disable("snapshot failed: " + error + "; running unprofiled from here on");
      return g_next.clEnqueueNDRangeKernel(q, k, dim, off, gws, lws, nwait, wait, event);
    }
    cl_event ev = nullptr;
    const cl_int rc = g_next.clEnqueueNDRangeKernel(q, k, dim, off, gws, lws, nwait, wait, &ev);
    if (rc == CL_SUCCESS) g_next.clWaitForEvents(1, &ev);
    if (!client_->call(wire::Snapshot{id, wire::Phase::kAfter}, error)) {
      disable("snapshot failed: " + error + "; running unprofiled from here on");
    }
    if (rc != CL_SUCCESS) return rc;

    wire::Launch rec;
    rec.launch_id = id;
    rec.work_dim = dim;
    for (cl_uint i = 0; i < dim && i < 3; ++i) {
      rec.global[i] = gws ? gws[i] : 0;
      rec.local[i] = lws ? lws[i] : 0;
      rec.offset[i] = off ? off[i] : 0;
    }
    cl_ulong t[4] = {};
    const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                       CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    bool profiled = true;
    for (int i = 0; i < 4; ++i) {
      profiled = profiled &&
                 g_next.clGetEventProfilingInfo(ev, what[i], sizeof t[i], &t[i], nullptr) == CL_SUCCESS;
    }
    rec.profiled = profiled;
    rec.queued_ns = t[0];
    rec.submit_ns = t[1];
    rec.start_ns = t[2];
    rec.end_ns = t[3];
    rec.kernel_name = kernel_name(k);
    if (client_ && !client_->call(rec, error)) {
      disable("launch record refused: " + error + "; running unprofiled from here on");
    }
    if (event) {
      *event = ev;
    } else {
      g_next.clReleaseEvent(ev);
    }
    return rc;
  } catch (...) {
    disable("internal error; running unprofiled from here on");
    return CL_OUT_OF_HOST_MEMORY;
  }
}

cl_int CL_API_CALL layer_enqueue_nd_range(cl_command_queue q, cl_kernel k, cl_uint dim,
                                          const size_t* off, const size_t* gws, const size_t* lws,
                                          cl_uint nwait, const cl_event* wait, cl_event* event) {
  Profiler& p = Profiler::get();
  if (!p.active()) return g_next.clEnqueueNDRangeKernel(q, k, dim, off, gws, lws, nwait, wait, event);
  return p.launch(q, k, dim, off, gws, lws, nwait, wait, event);
}

// Kernel times come from OpenCL event profiling, so every queue gets it enabled underneath.
cl_command_queue CL_API_CALL layer_create_queue(cl_context ctx, cl_device_id dev,
                                                cl_command_queue_properties props, cl_int* err) {
  return g_next.clCreateCommandQueue(ctx, dev, props | CL_QUEUE_PROFILING_ENABLE, err);
}

cl_command_queue CL_API_CALL layer_create_queue_with_properties(cl_context ctx, cl_device_id dev,
                                                                const cl_queue_properties* props,
                                                                cl_int* err) {
  std::vector<cl_queue_properties> ours;
  bool found = false;
  for (const cl_queue_properties* p = props; p && *p; p += 2) {
    ours.push_back(p[0]);
    ours.push_back(p[0] == CL_QUEUE_PROPERTIES ? (p[1] | CL_QUEUE_PROFILING_ENABLE) : p[1]);
    found = found || p[0] == CL_QUEUE_PROPERTIES;
  }
  if (!found) {
    ours.push_back(CL_QUEUE_PROPERTIES);
    ours.push_back(CL_QUEUE_PROFILING_ENABLE);
  }
  ours.push_back(0);
  return g_next.clCreateCommandQueueWithProperties(ctx, dev, ours.data(), err);
}

}  // namespace
}  // namespace oaprof::launch

extern "C" {

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clGetLayerInfo(cl_layer_info param_name, size_t param_value_size, void* param_value,
               size_t* param_value_size_ret) {
  static const char kName[] = "oaprof";
  const void* src = nullptr;
  size_t size = 0;
  static const cl_layer_api_version kVersion = CL_LAYER_API_VERSION_100;
  switch (param_name) {
    case CL_LAYER_API_VERSION:
      src = &kVersion;
      size = sizeof kVersion;
      break;
    case CL_LAYER_NAME:
      src = kName;
      size = sizeof kName;
      break;
    default:
      return CL_INVALID_VALUE;
  }
  if (param_value) {
    if (param_value_size < size) return CL_INVALID_VALUE;
    std::memcpy(param_value, src, size);
  }
  if (param_value_size_ret) *param_value_size_ret = size;
  return CL_SUCCESS;
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clInitLayer(cl_uint num_entries, const struct _cl_icd_dispatch* target_dispatch,
            cl_uint* num_entries_ret, const struct _cl_icd_dispatch** layer_dispatch_ret) {
  using namespace oaprof::launch;
  constexpr cl_uint kOurEntries = sizeof(_cl_icd_dispatch) / sizeof(void*);
  if (target_dispatch == nullptr || num_entries_ret == nullptr || layer_dispatch_ret == nullptr) {
    return CL_INVALID_VALUE;
  }
  const cl_uint n = num_entries < kOurEntries ? num_entries : kOurEntries;
  std::memcpy(&g_next, target_dispatch, n * sizeof(void*));
  g_ours = g_next;
  g_ours.clEnqueueNDRangeKernel = &layer_enqueue_nd_range;
  g_ours.clCreateCommandQueue = &layer_create_queue;
  if (g_next.clCreateCommandQueueWithProperties != nullptr) {
    g_ours.clCreateCommandQueueWithProperties = &layer_create_queue_with_properties;
  }
  *num_entries_ret = n;
  *layer_dispatch_ret = &g_ours;
  return CL_SUCCESS;
}

}  // extern "C"
