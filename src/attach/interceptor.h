// The measurement logic of oaprof's OpenCL interception, shared by its two ways in: the OpenCL
// layer (OPENCL_LAYERS, layer.cc) and the LD_PRELOAD fallback (preload.cc). Each way in fills
// `next()` — the functions below us — and routes the intercepted calls here.
//
// Around each selected clEnqueueNDRangeKernel / clEnqueueTask it drains the queue and the launch's
// wait list, asks the privileged side for a snapshot, enqueues, waits, asks for a second snapshot
// and sends the launch record. Queues get profiling enabled underneath; a program that did not ask
// for it still sees CL_PROFILING_INFO_NOT_AVAILABLE and queue properties without the bit. It never
// throws into the program: on an internal failure it logs once and passes every call through.
#pragma once

#include <CL/cl_icd.h>

namespace oaprof::attach {

// The next layer down (or the real library). Filled once by the way in, before any call.
_cl_icd_dispatch& next();

// How the interceptor was loaded, for its one-line start-up note.
void set_way_in(const char* name);

cl_int CL_API_CALL intercept_enqueue_nd_range(cl_command_queue q, cl_kernel k, cl_uint dim,
                                              const size_t* off, const size_t* gws,
                                              const size_t* lws, cl_uint nwait,
                                              const cl_event* wait, cl_event* event);
cl_int CL_API_CALL intercept_enqueue_task(cl_command_queue q, cl_kernel k, cl_uint nwait,
                                          const cl_event* wait, cl_event* event);
cl_command_queue CL_API_CALL intercept_create_queue(cl_context ctx, cl_device_id dev,
                                                    cl_command_queue_properties props, cl_int* err);
cl_command_queue CL_API_CALL intercept_create_queue_with_properties(
    cl_context ctx, cl_device_id dev, const cl_queue_properties* props, cl_int* err);
cl_int CL_API_CALL intercept_get_event_profiling_info(cl_event event, cl_profiling_info name,
                                                      size_t size, void* value, size_t* size_ret);
cl_int CL_API_CALL intercept_get_command_queue_info(cl_command_queue q, cl_command_queue_info name,
                                                    size_t size, void* value, size_t* size_ret);
cl_int CL_API_CALL intercept_release_command_queue(cl_command_queue q);
// Sampled attribution only: the program's sync points, where its completed launches are
// collected (after the call below returns, so the program waits no longer than it would).
cl_int CL_API_CALL intercept_finish(cl_command_queue q);
cl_int CL_API_CALL intercept_wait_for_events(cl_uint n, const cl_event* events);
// Marks the program's event callbacks, where blocking calls are undefined behaviour (OpenCL
// spec, clSetEventCallback), so launches made there pass through unmeasured.
cl_int CL_API_CALL intercept_set_event_callback(cl_event event, cl_int type,
                                                void(CL_CALLBACK* fn)(cl_event, cl_int, void*),
                                                void* user_data);

// Kernel replay's bookkeeping (installed only when OAPROF_REPLAY asks for replay): which memory
// objects exist, with their sizes and flags, and which of them each kernel argument holds.
cl_mem CL_API_CALL intercept_create_buffer(cl_context ctx, cl_mem_flags flags, size_t size,
                                           void* host, cl_int* err);
cl_mem CL_API_CALL intercept_create_buffer_with_properties(cl_context ctx,
                                                           const cl_mem_properties* props,
                                                           cl_mem_flags flags, size_t size,
                                                           void* host, cl_int* err);
cl_mem CL_API_CALL intercept_create_sub_buffer(cl_mem parent, cl_mem_flags flags,
                                               cl_buffer_create_type type, const void* info,
                                               cl_int* err);
cl_mem CL_API_CALL intercept_create_image(cl_context ctx, cl_mem_flags flags,
                                          const cl_image_format* format, const cl_image_desc* desc,
                                          void* host, cl_int* err);
cl_mem CL_API_CALL intercept_create_image_with_properties(
    cl_context ctx, const cl_mem_properties* props, cl_mem_flags flags,
    const cl_image_format* format, const cl_image_desc* desc, void* host, cl_int* err);
cl_mem CL_API_CALL intercept_create_image_2d(cl_context ctx, cl_mem_flags flags,
                                             const cl_image_format* format, size_t w, size_t h,
                                             size_t pitch, void* host, cl_int* err);
cl_mem CL_API_CALL intercept_create_image_3d(cl_context ctx, cl_mem_flags flags,
                                             const cl_image_format* format, size_t w, size_t h,
                                             size_t d, size_t row_pitch, size_t slice_pitch,
                                             void* host, cl_int* err);
cl_mem CL_API_CALL intercept_create_pipe(cl_context ctx, cl_mem_flags flags, cl_uint packet_size,
                                         cl_uint packets, const cl_pipe_properties* props,
                                         cl_int* err);
cl_int CL_API_CALL intercept_release_mem_object(cl_mem mem);
cl_int CL_API_CALL intercept_set_kernel_arg(cl_kernel k, cl_uint index, size_t size,
                                            const void* value);
cl_int CL_API_CALL intercept_set_kernel_arg_svm_pointer(cl_kernel k, cl_uint index,
                                                        const void* value);
cl_int CL_API_CALL intercept_set_kernel_exec_info(cl_kernel k, cl_kernel_exec_info name,
                                                  size_t size, const void* value);
cl_kernel CL_API_CALL intercept_clone_kernel(cl_kernel k, cl_int* err);
// Installed in every mode (the kernel-name cache forgets the handle), replay or not.
cl_int CL_API_CALL intercept_release_kernel(cl_kernel k);
// Whether replay is on for this process (OAPROF_REPLAY), for the preload way in, whose tracking
// entry points exist either way.
bool replay_enabled();

// Replaces the entries above in `table` (a copy of next()).
void install(_cl_icd_dispatch& table);

// Test seam: a hook called at these points of a measured launch; a hook that throws there plays
// an internal failure of the layer (tests/attach/interceptor_test.cc). Null (the default): none.
enum class FailurePoint { kAfterEnqueue, kBeforeRecord };
using FailureHook = void (*)(FailurePoint);
void set_failure_hook(FailureHook hook);

}  // namespace oaprof::attach
