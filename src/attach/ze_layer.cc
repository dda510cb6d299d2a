// liboaprof_ze_layer.so: the Level Zero way in through the loader's tracing layer
// (ZE_ENABLE_TRACING_LAYER=1, which oaprof sets). The library is preloaded for one entry point
// only, zeInit (and zeInitDrivers where the headers have it): the loader's tracing API answers
// ZE_RESULT_ERROR_UNINITIALIZED until zeInit has
// run its one-time initialisation (which loads libze_tracing_layer), so the tracer is created
// right after the program's first successful zeInit (oneapi-src/level-zero v1.8.12,
// source/lib/ze_libapi.cpp zeInit and source/lib/zel_tracing_libapi.cpp zelTracerCreate). Its
// callbacks then see every call the loader routes, also those made through function pointers
// the program took from it. A prologue may change the call's arguments (the tracing layer calls
// the driver with the values its parameter struct points at), and calls made from inside a
// callback bypass the tracers (source/layers/tracing/tracing_imp.h, ZE_HANDLE_TRACER_RECURSION).
#include <dlfcn.h>
#include <level_zero/layers/zel_tracing_api.h>
#include <level_zero/layers/zel_tracing_register_cb.h>
#include <level_zero/ze_api.h>

#include <cstdio>
#include <mutex>

#include "attach/ze_interceptor.h"

namespace {

namespace ze = oaprof::attach::ze;
using oaprof::oa::LaunchApi;

void* next_symbol(const char* name) { return ::dlsym(RTLD_NEXT, name); }

template <typename Fn>
Fn loader(const char* name) {
  return reinterpret_cast<Fn>(next_symbol(name));
}

void ZE_APICALL on_list_created(ze_command_list_create_params_t* p, ze_result_t r, void*, void**) {
  if (r == ZE_RESULT_SUCCESS)
    ze::list_created(*p->phContext, *p->phDevice, **p->pphCommandList, false);
}

void ZE_APICALL on_immediate_created(ze_command_list_create_immediate_params_t* p, ze_result_t r,
                                     void*, void**) {
  if (r == ZE_RESULT_SUCCESS)
    ze::list_created(*p->phContext, *p->phDevice, **p->pphCommandList, true);
}

void ZE_APICALL on_list_reset(ze_command_list_reset_params_t* p, ze_result_t r, void*, void**) {
  if (r == ZE_RESULT_SUCCESS) ze::list_reset(*p->phCommandList);
}

// Prologues: the handle may come back for a new object as soon as the call returns.
void ZE_APICALL before_list_destroy(ze_command_list_destroy_params_t* p, ze_result_t, void*,
                                    void**) {
  ze::list_destroyed(*p->phCommandList);
}
void ZE_APICALL before_kernel_destroy(ze_kernel_destroy_params_t* p, ze_result_t, void*, void**) {
  ze::kernel_destroyed(*p->phKernel);
}
void ZE_APICALL before_context_destroy(ze_context_destroy_params_t* p, ze_result_t, void*, void**) {
  ze::context_destroying(*p->phContext);
}

void ZE_APICALL on_group_size(ze_kernel_set_group_size_params_t* p, ze_result_t r, void*, void**) {
  if (r == ZE_RESULT_SUCCESS) {
    ze::kernel_group_size(*p->phKernel, *p->pgroupSizeX, *p->pgroupSizeY, *p->pgroupSizeZ);
  }
}

// Sampled attribution's books: which events have kernel timestamps, and the program's sync
// points (after a wait that succeeded; before an event or queue goes).
void ZE_APICALL on_pool_created(ze_event_pool_create_params_t* p, ze_result_t r, void*, void**) {
  if (r == ZE_RESULT_SUCCESS) ze::event_pool_created(**p->pphEventPool, *p->pdesc);
}
void ZE_APICALL on_event_created(ze_event_create_params_t* p, ze_result_t r, void*, void**) {
  if (r == ZE_RESULT_SUCCESS) ze::event_created(*p->phEventPool, **p->pphEvent);
}
template <typename Params>
void ZE_APICALL after_wait(Params*, ze_result_t r, void*, void**) {
  if (r == ZE_RESULT_SUCCESS) ze::sync_point();
  if (r == ZE_RESULT_ERROR_DEVICE_LOST) ze::device_lost();
}
void ZE_APICALL before_event_reset(ze_event_host_reset_params_t* p, ze_result_t, void*, void**) {
  ze::sync_point(*p->phEvent);
}
void ZE_APICALL before_event_destroy(ze_event_destroy_params_t* p, ze_result_t, void*, void**) {
  ze::sync_point(*p->phEvent);
  ze::event_destroying(*p->phEvent);
}
void ZE_APICALL before_pool_destroy(ze_event_pool_destroy_params_t* p, ze_result_t, void*, void**) {
  ze::event_pool_destroying(*p->phEventPool);
}
void ZE_APICALL before_queue_destroy(ze_command_queue_destroy_params_t*, ze_result_t, void*,
                                     void**) {
  ze::sync_point();
}

ze::LaunchCall call_of(ze_command_list_append_launch_kernel_params_t* p) {
  return ze::direct_launch(LaunchApi::kZeLaunchKernel, *p->phCommandList, p->phKernel,
                           *p->ppLaunchFuncArgs, p->phSignalEvent, *p->pnumWaitEvents,
                           *p->pphWaitEvents);
}
ze::LaunchCall call_of(ze_command_list_append_launch_cooperative_kernel_params_t* p) {
  return ze::direct_launch(LaunchApi::kZeLaunchCooperativeKernel, *p->phCommandList, p->phKernel,
                           *p->ppLaunchFuncArgs, p->phSignalEvent, *p->pnumWaitEvents,
                           *p->pphWaitEvents);
}
ze::LaunchCall call_of(ze_command_list_append_launch_kernel_indirect_params_t* p) {
  return ze::indirect_launch(*p->phCommandList, p->phKernel, *p->ppLaunchArgumentsBuffer,
                             p->phSignalEvent, *p->pnumWaitEvents, *p->pphWaitEvents);
}
ze::LaunchCall call_of(ze_command_list_append_launch_multiple_kernels_indirect_params_t* p) {
  return ze::multiple_launch(*p->phCommandList, *p->pnumKernels, *p->pphKernels, *p->ppCountBuffer,
                             *p->ppLaunchArgumentsBuffer, p->phSignalEvent, *p->pnumWaitEvents,
                             *p->pphWaitEvents);
}

// Each launch call's prologue and epilogue; the state goes between them in the tracer's
// per-call slot.
template <typename Params>
void ZE_APICALL launch_prologue(Params* p, ze_result_t, void*, void** slot) {
  ze::LaunchCall call = call_of(p);
  *slot = ze::before_launch(call);
}
template <typename Params>
void ZE_APICALL launch_epilogue(Params* p, ze_result_t r, void*, void** slot) {
  ze::after_launch(call_of(p), r, static_cast<ze::CallState*>(*slot));
}

void ZE_APICALL execute_prologue(ze_command_queue_execute_command_lists_params_t* p, ze_result_t,
                                 void*, void** slot) {
  *slot = ze::before_execute(*p->phCommandQueue, *p->pnumCommandLists, *p->pphCommandLists);
}
void ZE_APICALL execute_epilogue(ze_command_queue_execute_command_lists_params_t*, ze_result_t r,
                                 void*, void** slot) {
  ze::after_execute(r, static_cast<ze::CallState*>(*slot));
}

// Registers `fn` through the loader's zelTracer<name>RegisterCallback; false when the loader
// lacks it.
template <typename Cb>
bool reg(zel_tracer_handle_t tracer, const char* name, zel_tracer_reg_t when, Cb fn) {
  using Register = ze_result_t(ZE_APICALL*)(zel_tracer_handle_t, zel_tracer_reg_t, Cb);
  const auto r = loader<Register>(name);
  return r != nullptr && r(tracer, when, fn) == ZE_RESULT_SUCCESS;
}

template <typename Params>
bool reg_launch(zel_tracer_handle_t tracer, const char* name) {
  return reg(tracer, name, ZEL_REGISTER_PROLOGUE, &launch_prologue<Params>) &&
         reg(tracer, name, ZEL_REGISTER_EPILOGUE, &launch_epilogue<Params>);
}

bool register_sync_callbacks(zel_tracer_handle_t t) {
  constexpr auto pro = ZEL_REGISTER_PROLOGUE;
  constexpr auto epi = ZEL_REGISTER_EPILOGUE;
  return reg(t, "zelTracerEventPoolCreateRegisterCallback", epi, &on_pool_created) &&
         reg(t, "zelTracerEventCreateRegisterCallback", epi, &on_event_created) &&
         reg(t, "zelTracerCommandQueueSynchronizeRegisterCallback", epi,
             &after_wait<ze_command_queue_synchronize_params_t>) &&
         reg(t, "zelTracerEventHostSynchronizeRegisterCallback", epi,
             &after_wait<ze_event_host_synchronize_params_t>) &&
         reg(t, "zelTracerEventQueryStatusRegisterCallback", epi,
             &after_wait<ze_event_query_status_params_t>) &&
         reg(t, "zelTracerFenceHostSynchronizeRegisterCallback", epi,
             &after_wait<ze_fence_host_synchronize_params_t>) &&
         reg(t, "zelTracerEventHostResetRegisterCallback", pro, &before_event_reset) &&
         reg(t, "zelTracerEventDestroyRegisterCallback", pro, &before_event_destroy) &&
         reg(t, "zelTracerEventPoolDestroyRegisterCallback", pro, &before_pool_destroy) &&
         reg(t, "zelTracerCommandQueueDestroyRegisterCallback", pro, &before_queue_destroy);
}

bool register_callbacks(zel_tracer_handle_t t) {
  constexpr auto pro = ZEL_REGISTER_PROLOGUE;
  constexpr auto epi = ZEL_REGISTER_EPILOGUE;
  return reg(t, "zelTracerCommandListCreateRegisterCallback", epi, &on_list_created) &&
         reg(t, "zelTracerCommandListCreateImmediateRegisterCallback", epi,
             &on_immediate_created) &&
         reg(t, "zelTracerCommandListResetRegisterCallback", epi, &on_list_reset) &&
         reg(t, "zelTracerCommandListDestroyRegisterCallback", pro, &before_list_destroy) &&
         reg(t, "zelTracerKernelDestroyRegisterCallback", pro, &before_kernel_destroy) &&
         reg(t, "zelTracerContextDestroyRegisterCallback", pro, &before_context_destroy) &&
         reg(t, "zelTracerKernelSetGroupSizeRegisterCallback", epi, &on_group_size) &&
         register_sync_callbacks(t) &&
         reg(t, "zelTracerCommandQueueExecuteCommandListsRegisterCallback", pro,
             &execute_prologue) &&
         reg(t, "zelTracerCommandQueueExecuteCommandListsRegisterCallback", epi,
             &execute_epilogue) &&
         reg_launch<ze_command_list_append_launch_kernel_params_t>(
             t, "zelTracerCommandListAppendLaunchKernelRegisterCallback") &&
         reg_launch<ze_command_list_append_launch_cooperative_kernel_params_t>(
             t, "zelTracerCommandListAppendLaunchCooperativeKernelRegisterCallback") &&
         reg_launch<ze_command_list_append_launch_kernel_indirect_params_t>(
             t, "zelTracerCommandListAppendLaunchKernelIndirectRegisterCallback") &&
         reg_launch<ze_command_list_append_launch_multiple_kernels_indirect_params_t>(
             t, "zelTracerCommandListAppendLaunchMultipleKernelsIndirectRegisterCallback");
}

// The tracer, once the loader is initialised; one line on stderr when it cannot be had.
void start_tracing() {
  const char* missing = nullptr;
  if (!ze::load_next(&next_symbol, &missing)) {
    std::fprintf(stderr, "oaprof layer: the Level Zero loader lacks %s; running unprofiled\n",
                 missing);
    return;
  }
  const auto create = loader<decltype(&zelTracerCreate)>("zelTracerCreate");
  const auto enable = loader<decltype(&zelTracerSetEnabled)>("zelTracerSetEnabled");
  static int user_data = 0;  // the loader refuses a tracer without user data
  zel_tracer_desc_t desc{ZEL_STRUCTURE_TYPE_TRACER_DESC, nullptr, &user_data};
  // The tracer lives as long as the process: its handle is kept where LeakSanitizer (and anyone
  // reading a core) finds it, not dropped with this frame.
  static zel_tracer_handle_t tracer = nullptr;
  const ze_result_t made =
      create != nullptr ? create(&desc, &tracer) : ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
  if (made != ZE_RESULT_SUCCESS || enable == nullptr || !register_callbacks(tracer) ||
      enable(tracer, 1) != ZE_RESULT_SUCCESS) {
    std::fprintf(stderr,
                 "oaprof layer: the Level Zero tracing layer is not available (zelTracerCreate: "
                 "0x%x; is ZE_ENABLE_TRACING_LAYER=1 set and libze_tracing_layer installed?); "
                 "Level Zero launches run unmeasured: try --inject preload\n",
                 static_cast<unsigned>(made));
    return;
  }
  ze::set_way_in("tracing layer");
}

std::once_flag g_started;

}  // namespace

extern "C" __attribute__((visibility("default"))) ze_result_t ZE_APICALL
zeInit(ze_init_flags_t flags) {
  static const auto real = loader<decltype(&zeInit)>("zeInit");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  const ze_result_t r = real(flags);
  if (r == ZE_RESULT_SUCCESS) std::call_once(g_started, start_tracing);
  return r;
}

#ifdef OAPROF_HAVE_ZE_INIT_DRIVERS
// Level Zero 1.10's initialisation (loader 1.18 and later), which newer SYCL runtimes call
// instead of zeInit: it runs the loader's one-time initialisation too. Built only where the
// headers declare it (CMake's check).
extern "C" __attribute__((visibility("default"))) ze_result_t ZE_APICALL
zeInitDrivers(uint32_t* count, ze_driver_handle_t* drivers, ze_init_driver_type_desc_t* desc) {
  static const auto real = loader<decltype(&zeInitDrivers)>("zeInitDrivers");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  const ze_result_t r = real(count, drivers, desc);
  if (r == ZE_RESULT_SUCCESS) std::call_once(g_started, start_tracing);
  return r;
}
#endif
