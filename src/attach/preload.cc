// liboaprof_preload.so, the way in for OpenCL loaders without layer support: LD_PRELOAD puts
// these definitions of the intercepted entry points in front of libOpenCL's, and the real ones are
// found with dlsym(RTLD_NEXT), or in the libOpenCL already loaded where that finds nothing (a
// library dlopened with RTLD_LOCAL links it outside the global scope: Python's pyopencl). Its
// limit, documented in docs/attach.md: a program that dlopens libOpenCL and looks the entry
// points up with dlsym(handle, …) bypasses it.
#include <dlfcn.h>

#include <cstdio>
#include <mutex>

#include "attach/interceptor.h"

namespace {

using oaprof::attach::next;

// The libOpenCL this process has loaded, wherever it was loaded (RTLD_NOLOAD: never loads one),
// looked up once; null when none is. The handle is never closed: the library stays for the
// process's life.
void* loaded_opencl() {
  static void* const handle = [] {
    for (const char* name : {"libOpenCL.so.1", "libOpenCL.so"}) {
      if (void* h = ::dlopen(name, RTLD_NOW | RTLD_NOLOAD)) return h;
    }
    return static_cast<void*>(nullptr);
  }();
  return handle;
}

// The real entry point: the next definition in the global scope, else libOpenCL's own. A handle
// search never finds ours, which is not among libOpenCL's dependencies.
template <typename Fn>
void resolve(Fn& slot, const char* name) {
  if (slot != nullptr) return;
  slot = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
  if (slot != nullptr) return;
  if (void* opencl = loaded_opencl()) slot = reinterpret_cast<Fn>(::dlsym(opencl, name));
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
    // Sampled attribution: keeping events, and calibrating each device's clock.
    resolve(d.clRetainEvent, "clRetainEvent");
    resolve(d.clGetDeviceAndHostTimer, "clGetDeviceAndHostTimer");
    resolve(d.clGetHostTimer, "clGetHostTimer");
    resolve(d.clEnqueueMarkerWithWaitList, "clEnqueueMarkerWithWaitList");
    // Kernel replay: saving and restoring buffers, and the bookkeeping entry points below.
    resolve(d.clCreateBuffer, "clCreateBuffer");
    resolve(d.clCreateBufferWithProperties, "clCreateBufferWithProperties");
    resolve(d.clCreateSubBuffer, "clCreateSubBuffer");
    resolve(d.clCreateImage, "clCreateImage");
    resolve(d.clCreateImageWithProperties, "clCreateImageWithProperties");
    resolve(d.clCreateImage2D, "clCreateImage2D");
    resolve(d.clCreateImage3D, "clCreateImage3D");
    resolve(d.clCreatePipe, "clCreatePipe");
    resolve(d.clReleaseMemObject, "clReleaseMemObject");
    resolve(d.clGetMemObjectInfo, "clGetMemObjectInfo");
    resolve(d.clEnqueueCopyBuffer, "clEnqueueCopyBuffer");
    resolve(d.clSetKernelArg, "clSetKernelArg");
    resolve(d.clSetKernelArgSVMPointer, "clSetKernelArgSVMPointer");
    resolve(d.clSetKernelExecInfo, "clSetKernelExecInfo");
    resolve(d.clCloneKernel, "clCloneKernel");
    resolve(d.clReleaseKernel, "clReleaseKernel");
    oaprof::attach::set_way_in("LD_PRELOAD fallback");
    if (d.clEnqueueNDRangeKernel == nullptr || d.clFinish == nullptr) {
      std::fprintf(stderr,
                   "oaprof preload: libOpenCL's entry points were not found; is the "
                   "program linked with libOpenCL?\n");
    }
  });
  return next();
}

}  // namespace

#define OAPROF_EXPORT extern "C" __attribute__((visibility("default")))

OAPROF_EXPORT cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
                                            const size_t* off, const size_t* gws, const size_t* lws,
                                            cl_uint nwait, const cl_event* wait, cl_event* event) {
  if (real().clEnqueueNDRangeKernel == nullptr) return CL_INVALID_OPERATION;
  return oaprof::attach::intercept_enqueue_nd_range(q, k, dim, off, gws, lws, nwait, wait, event);
}

OAPROF_EXPORT cl_int clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nwait,
                                   const cl_event* wait, cl_event* event) {
  if (real().clEnqueueTask == nullptr) return CL_INVALID_OPERATION;
  return oaprof::attach::intercept_enqueue_task(q, k, nwait, wait, event);
}

OAPROF_EXPORT cl_command_queue clCreateCommandQueue(cl_context ctx, cl_device_id dev,
                                                    cl_command_queue_properties props,
                                                    cl_int* err) {
  if (real().clCreateCommandQueue == nullptr) {
    if (err) *err = CL_INVALID_OPERATION;
    return nullptr;
  }
  return oaprof::attach::intercept_create_queue(ctx, dev, props, err);
}

OAPROF_EXPORT cl_command_queue clCreateCommandQueueWithProperties(cl_context ctx, cl_device_id dev,
                                                                  const cl_queue_properties* props,
                                                                  cl_int* err) {
  if (real().clCreateCommandQueueWithProperties == nullptr) {
    if (err) *err = CL_INVALID_OPERATION;
    return nullptr;
  }
  return oaprof::attach::intercept_create_queue_with_properties(ctx, dev, props, err);
}

OAPROF_EXPORT cl_int clGetEventProfilingInfo(cl_event event, cl_profiling_info name, size_t size,
                                             void* value, size_t* size_ret) {
  if (real().clGetEventProfilingInfo == nullptr || real().clGetEventInfo == nullptr) {
    return CL_INVALID_OPERATION;
  }
  return oaprof::attach::intercept_get_event_profiling_info(event, name, size, value, size_ret);
}

OAPROF_EXPORT cl_int clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info name,
                                           size_t size, void* value, size_t* size_ret) {
  if (real().clGetCommandQueueInfo == nullptr) return CL_INVALID_OPERATION;
  return oaprof::attach::intercept_get_command_queue_info(q, name, size, value, size_ret);
}

OAPROF_EXPORT cl_int clSetEventCallback(cl_event event, cl_int type,
                                        void(CL_CALLBACK* fn)(cl_event, cl_int, void*),
                                        void* user_data) {
  if (real().clSetEventCallback == nullptr) return CL_INVALID_OPERATION;
  return oaprof::attach::intercept_set_event_callback(event, type, fn, user_data);
}

// The program's sync points, where sampled attribution collects completed launches.
OAPROF_EXPORT cl_int clFinish(cl_command_queue q) {
  if (real().clFinish == nullptr) return CL_INVALID_OPERATION;
  return oaprof::attach::intercept_finish(q);
}

OAPROF_EXPORT cl_int clWaitForEvents(cl_uint n, const cl_event* events) {
  if (real().clWaitForEvents == nullptr) return CL_INVALID_OPERATION;
  return oaprof::attach::intercept_wait_for_events(n, events);
}

OAPROF_EXPORT cl_int clReleaseCommandQueue(cl_command_queue q) {
  if (real().clReleaseCommandQueue == nullptr) return CL_INVALID_OPERATION;
  return oaprof::attach::intercept_release_command_queue(q);
}

// Kernel replay's bookkeeping: through the interceptor when OAPROF_REPLAY asks for replay, else
// straight to libOpenCL. `fallback` is what a missing entry point returns, as the others above.
#define OAPROF_TRACKED(ret, name, fallback, params, args)               \
  OAPROF_EXPORT ret cl##name params {                                   \
    if (real().cl##name == nullptr) return fallback;                    \
    if (!oaprof::attach::replay_enabled()) return real().cl##name args; \
    return oaprof::attach::intercept_##name args;                       \
  }

namespace oaprof::attach {
// The interceptor's names, in the macro's CamelCase.
inline constexpr auto& intercept_CreateBuffer = intercept_create_buffer;
inline constexpr auto& intercept_CreateBufferWithProperties =
    intercept_create_buffer_with_properties;
inline constexpr auto& intercept_CreateSubBuffer = intercept_create_sub_buffer;
inline constexpr auto& intercept_CreateImage = intercept_create_image;
inline constexpr auto& intercept_CreateImageWithProperties = intercept_create_image_with_properties;
inline constexpr auto& intercept_CreateImage2D = intercept_create_image_2d;
inline constexpr auto& intercept_CreateImage3D = intercept_create_image_3d;
inline constexpr auto& intercept_CreatePipe = intercept_create_pipe;
inline constexpr auto& intercept_ReleaseMemObject = intercept_release_mem_object;
inline constexpr auto& intercept_SetKernelArg = intercept_set_kernel_arg;
inline constexpr auto& intercept_SetKernelArgSVMPointer = intercept_set_kernel_arg_svm_pointer;
inline constexpr auto& intercept_SetKernelExecInfo = intercept_set_kernel_exec_info;
inline constexpr auto& intercept_CloneKernel = intercept_clone_kernel;
}  // namespace oaprof::attach

namespace {
// A null handle with CL_INVALID_OPERATION: what a missing creating entry point returns.
template <typename Handle>
Handle missing(cl_int* err) {
  if (err) *err = CL_INVALID_OPERATION;
  return nullptr;
}
}  // namespace

OAPROF_TRACKED(cl_mem, CreateBuffer, missing<cl_mem>(err),
               (cl_context ctx, cl_mem_flags flags, size_t size, void* host, cl_int* err),
               (ctx, flags, size, host, err))
OAPROF_TRACKED(cl_mem, CreateBufferWithProperties, missing<cl_mem>(err),
               (cl_context ctx, const cl_mem_properties* props, cl_mem_flags flags, size_t size,
                void* host, cl_int* err),
               (ctx, props, flags, size, host, err))
OAPROF_TRACKED(cl_mem, CreateSubBuffer, missing<cl_mem>(err),
               (cl_mem parent, cl_mem_flags flags, cl_buffer_create_type type, const void* info,
                cl_int* err),
               (parent, flags, type, info, err))
OAPROF_TRACKED(cl_mem, CreateImage, missing<cl_mem>(err),
               (cl_context ctx, cl_mem_flags flags, const cl_image_format* format,
                const cl_image_desc* desc, void* host, cl_int* err),
               (ctx, flags, format, desc, host, err))
OAPROF_TRACKED(cl_mem, CreateImageWithProperties, missing<cl_mem>(err),
               (cl_context ctx, const cl_mem_properties* props, cl_mem_flags flags,
                const cl_image_format* format, const cl_image_desc* desc, void* host, cl_int* err),
               (ctx, props, flags, format, desc, host, err))
OAPROF_TRACKED(cl_mem, CreateImage2D, missing<cl_mem>(err),
               (cl_context ctx, cl_mem_flags flags, const cl_image_format* format, size_t w,
                size_t h, size_t pitch, void* host, cl_int* err),
               (ctx, flags, format, w, h, pitch, host, err))
OAPROF_TRACKED(cl_mem, CreateImage3D, missing<cl_mem>(err),
               (cl_context ctx, cl_mem_flags flags, const cl_image_format* format, size_t w,
                size_t h, size_t d, size_t row_pitch, size_t slice_pitch, void* host, cl_int* err),
               (ctx, flags, format, w, h, d, row_pitch, slice_pitch, host, err))
OAPROF_TRACKED(cl_mem, CreatePipe, missing<cl_mem>(err),
               (cl_context ctx, cl_mem_flags flags, cl_uint packet_size, cl_uint packets,
                const cl_pipe_properties* props, cl_int* err),
               (ctx, flags, packet_size, packets, props, err))
OAPROF_TRACKED(cl_int, ReleaseMemObject, CL_INVALID_OPERATION, (cl_mem mem), (mem))
OAPROF_TRACKED(cl_int, SetKernelArg, CL_INVALID_OPERATION,
               (cl_kernel k, cl_uint index, size_t size, const void* value),
               (k, index, size, value))
OAPROF_TRACKED(cl_int, SetKernelArgSVMPointer, CL_INVALID_OPERATION,
               (cl_kernel k, cl_uint index, const void* value), (k, index, value))
OAPROF_TRACKED(cl_int, SetKernelExecInfo, CL_INVALID_OPERATION,
               (cl_kernel k, cl_kernel_exec_info name, size_t size, const void* value),
               (k, name, size, value))
OAPROF_TRACKED(cl_kernel, CloneKernel, missing<cl_kernel>(err), (cl_kernel k, cl_int* err),
               (k, err))
// In every mode: the interceptor caches kernel names per handle until the program releases it.
OAPROF_EXPORT cl_int clReleaseKernel(cl_kernel k) {
  if (real().clReleaseKernel == nullptr) return CL_INVALID_OPERATION;
  return oaprof::attach::intercept_release_kernel(k);
}
