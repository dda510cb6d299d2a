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

namespace oaprof::launch {

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
                                                    cl_command_queue_properties props,
                                                    cl_int* err);
cl_command_queue CL_API_CALL intercept_create_queue_with_properties(
    cl_context ctx, cl_device_id dev, const cl_queue_properties* props, cl_int* err);
cl_int CL_API_CALL intercept_get_event_profiling_info(cl_event event, cl_profiling_info name,
                                                      size_t size, void* value, size_t* size_ret);
cl_int CL_API_CALL intercept_get_command_queue_info(cl_command_queue q, cl_command_queue_info name,
                                                    size_t size, void* value, size_t* size_ret);
cl_int CL_API_CALL intercept_release_command_queue(cl_command_queue q);
// Marks the program's event callbacks, where blocking calls are undefined behaviour (OpenCL
// spec, clSetEventCallback), so launches made there pass through unmeasured.
cl_int CL_API_CALL intercept_set_event_callback(cl_event event, cl_int type,
                                                void(CL_CALLBACK* fn)(cl_event, cl_int, void*),
                                                void* user_data);

// Replaces the entries above in `table` (a copy of next()).
void install(_cl_icd_dispatch& table);

}  // namespace oaprof::launch
