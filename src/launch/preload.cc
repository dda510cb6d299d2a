// liboaprof_preload.so, the way in for OpenCL loaders without layer support: LD_PRELOAD puts
// these definitions of the intercepted entry points in front of libOpenCL's, and the real ones are
// found with dlsym(RTLD_NEXT). Its limit, documented in docs/attach.md: a program that dlopens
// libOpenCL and looks the entry points up with dlsym(handle, …) bypasses it.
#include <dlfcn.h>

#include <cstdio>
#include <mutex>

#include "launch/interceptor.h"

namespace {

using oaprof::launch::next;

template <typename Fn>
void resolve(Fn& slot, const char* name) {
  if (slot == nullptr) slot = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

// The functions the interceptor calls below itself, looked up once, on first use.
_cl_icd_dispatch& real() {
  static std::once_flag once;
  std::call_once(once, [] {
    _cl_icd_dispatch& d = next();
    resolve(d.clEnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
    resolve(d.clEnqueueTask, "clEnqueueTask");
    resolve(d.clCreateCommandQueue, "clCreateCommandQueue");
    resolve(d.clCreateCommandQueueWithProperties, "clCreateCommandQueueWithProperties");
    resolve(d.clGetEventProfilingInfo, "clGetEventProfilingInfo");
    resolve(d.clGetCommandQueueInfo, "clGetCommandQueueInfo");
    resolve(d.clReleaseCommandQueue, "clReleaseCommandQueue");
    resolve(d.clFinish, "clFinish");
    resolve(d.clWaitForEvents, "clWaitForEvents");
    resolve(d.clReleaseEvent, "clReleaseEvent");
    resolve(d.clGetKernelInfo, "clGetKernelInfo");
    resolve(d.clGetEventInfo, "clGetEventInfo");
    resolve(d.clSetEventCallback, "clSetEventCallback");
    oaprof::launch::set_way_in("LD_PRELOAD fallback");
    if (d.clEnqueueNDRangeKernel == nullptr || d.clFinish == nullptr) {
      std::fprintf(stderr, "oaprof preload: libOpenCL's entry points were not found; is the "
                           "program linked with libOpenCL?\n");
    }
  });
  return next();
}

}  // namespace

#define OAPROF_EXPORT extern "C" __attribute__((visibility("default")))

OAPROF_EXPORT cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
                                            const size_t* off, const size_t* gws,
                                            const size_t* lws, cl_uint nwait, const cl_event* wait,
                                            cl_event* event) {
  if (real().clEnqueueNDRangeKernel == nullptr) return CL_INVALID_OPERATION;
  return oaprof::launch::intercept_enqueue_nd_range(q, k, dim, off, gws, lws, nwait, wait, event);
}

OAPROF_EXPORT cl_int clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nwait,
                                   const cl_event* wait, cl_event* event) {
  if (real().clEnqueueTask == nullptr) return CL_INVALID_OPERATION;
  return oaprof::launch::intercept_enqueue_task(q, k, nwait, wait, event);
}

OAPROF_EXPORT cl_command_queue clCreateCommandQueue(cl_context ctx, cl_device_id dev,
                                                    cl_command_queue_properties props,
                                                    cl_int* err) {
  if (real().clCreateCommandQueue == nullptr) {
    if (err) *err = CL_INVALID_OPERATION;
    return nullptr;
  }
  return oaprof::launch::intercept_create_queue(ctx, dev, props, err);
}

OAPROF_EXPORT cl_command_queue clCreateCommandQueueWithProperties(cl_context ctx, cl_device_id dev,
                                                                  const cl_queue_properties* props,
                                                                  cl_int* err) {
  if (real().clCreateCommandQueueWithProperties == nullptr) {
    if (err) *err = CL_INVALID_OPERATION;
    return nullptr;
  }
  return oaprof::launch::intercept_create_queue_with_properties(ctx, dev, props, err);
}

OAPROF_EXPORT cl_int clGetEventProfilingInfo(cl_event event, cl_profiling_info name, size_t size,
                                             void* value, size_t* size_ret) {
  if (real().clGetEventProfilingInfo == nullptr || real().clGetEventInfo == nullptr) {
    return CL_INVALID_OPERATION;
  }
  return oaprof::launch::intercept_get_event_profiling_info(event, name, size, value, size_ret);
}

OAPROF_EXPORT cl_int clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info name,
                                           size_t size, void* value, size_t* size_ret) {
  if (real().clGetCommandQueueInfo == nullptr) return CL_INVALID_OPERATION;
  return oaprof::launch::intercept_get_command_queue_info(q, name, size, value, size_ret);
}

OAPROF_EXPORT cl_int clSetEventCallback(cl_event event, cl_int type,
                                        void(CL_CALLBACK* fn)(cl_event, cl_int, void*),
                                        void* user_data) {
  if (real().clSetEventCallback == nullptr) return CL_INVALID_OPERATION;
  return oaprof::launch::intercept_set_event_callback(event, type, fn, user_data);
}

OAPROF_EXPORT cl_int clReleaseCommandQueue(cl_command_queue q) {
  if (real().clReleaseCommandQueue == nullptr) return CL_INVALID_OPERATION;
  return oaprof::launch::intercept_release_command_queue(q);
}
