// liboaprof_ze_preload.so: the Level Zero way in by LD_PRELOAD, where the loader's tracing layer
// is absent (or --inject preload). It defines the entry points the layer needs in front of the
// loader's (the program's calls that the dynamic linker binds: not those of a program that
// dlopens the loader and looks entry points up with dlsym itself) and calls the loader's through
// dlsym(RTLD_NEXT). Nothing is measured before the program's zeInit (or zeInitDrivers, where the
// headers have it) succeeds.
#include <dlfcn.h>
#include <level_zero/ze_api.h>

#include <atomic>
#include <cstdio>

#include "attach/ze_interceptor.h"

namespace {

namespace ze = oaprof::attach::ze;

std::atomic<bool> g_ready{false};  // zeInit succeeded and next() is filled

void* next_symbol(const char* name) { return ::dlsym(RTLD_NEXT, name); }

// The loader's `name`, looked up once per entry point.
template <typename Fn>
Fn loader(const char* name) {
  return reinterpret_cast<Fn>(next_symbol(name));
}

}  // namespace

#define OAPROF_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// After the program's first successful zeInit or zeInitDrivers: the loader's entry points the
// layer calls, then measuring.
void start_after_init() {
  if (g_ready.load()) return;
  const char* missing = nullptr;
  if (!ze::load_next(&next_symbol, &missing)) {
    std::fprintf(stderr, "oaprof layer: the Level Zero loader lacks %s; running unprofiled\n",
                 missing);
    return;
  }
  ze::set_way_in("preload library");
  g_ready.store(true);
}

}  // namespace

OAPROF_EXPORT ze_result_t ZE_APICALL zeInit(ze_init_flags_t flags) {
  static const auto real = loader<decltype(&zeInit)>("zeInit");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  const ze_result_t r = real(flags);
  if (r == ZE_RESULT_SUCCESS) start_after_init();
  return r;
}

#ifdef OAPROF_HAVE_ZE_INIT_DRIVERS
// Level Zero 1.10's initialisation (loader 1.18 and later), which newer SYCL runtimes call
// instead of zeInit; built only where the headers declare it (CMake's check).
OAPROF_EXPORT ze_result_t ZE_APICALL zeInitDrivers(uint32_t* count, ze_driver_handle_t* drivers,
                                                   ze_init_driver_type_desc_t* desc) {
  static const auto real = loader<decltype(&zeInitDrivers)>("zeInitDrivers");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  const ze_result_t r = real(count, drivers, desc);
  if (r == ZE_RESULT_SUCCESS) start_after_init();
  return r;
}
#endif

OAPROF_EXPORT ze_result_t ZE_APICALL zeCommandListCreate(ze_context_handle_t c,
                                                         ze_device_handle_t d,
                                                         const ze_command_list_desc_t* desc,
                                                         ze_command_list_handle_t* list) {
  static const auto real = loader<decltype(&zeCommandListCreate)>("zeCommandListCreate");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  const ze_result_t r = real(c, d, desc, list);
  if (r == ZE_RESULT_SUCCESS && g_ready.load() && list != nullptr) {
    ze::list_created(c, d, *list, false);
  }
  return r;
}

OAPROF_EXPORT ze_result_t ZE_APICALL
zeCommandListCreateImmediate(ze_context_handle_t c, ze_device_handle_t d,
                             const ze_command_queue_desc_t* desc, ze_command_list_handle_t* list) {
  static const auto real =
      loader<decltype(&zeCommandListCreateImmediate)>("zeCommandListCreateImmediate");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  const ze_result_t r = real(c, d, desc, list);
  if (r == ZE_RESULT_SUCCESS && g_ready.load() && list != nullptr) {
    ze::list_created(c, d, *list, true);
  }
  return r;
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeCommandListReset(ze_command_list_handle_t list) {
  static const auto real = loader<decltype(&zeCommandListReset)>("zeCommandListReset");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  const ze_result_t r = real(list);
  if (r == ZE_RESULT_SUCCESS && g_ready.load()) ze::list_reset(list);
  return r;
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeCommandListDestroy(ze_command_list_handle_t list) {
  static const auto real = loader<decltype(&zeCommandListDestroy)>("zeCommandListDestroy");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (g_ready.load()) ze::list_destroyed(list);  // before: the handle may come back at once
  return real(list);
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeKernelSetGroupSize(ze_kernel_handle_t k, uint32_t x,
                                                          uint32_t y, uint32_t z) {
  static const auto real = loader<decltype(&zeKernelSetGroupSize)>("zeKernelSetGroupSize");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  const ze_result_t r = real(k, x, y, z);
  if (r == ZE_RESULT_SUCCESS && g_ready.load()) ze::kernel_group_size(k, x, y, z);
  return r;
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeKernelDestroy(ze_kernel_handle_t k) {
  static const auto real = loader<decltype(&zeKernelDestroy)>("zeKernelDestroy");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (g_ready.load()) ze::kernel_destroyed(k);
  return real(k);
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeContextDestroy(ze_context_handle_t c) {
  static const auto real = loader<decltype(&zeContextDestroy)>("zeContextDestroy");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (g_ready.load()) ze::context_destroying(c);
  return real(c);
}

// Sampled attribution's books: which events have kernel timestamps, and the program's sync
// points (after a wait that succeeded; before an event or queue goes).
OAPROF_EXPORT ze_result_t ZE_APICALL zeEventPoolCreate(ze_context_handle_t c,
                                                       const ze_event_pool_desc_t* desc, uint32_t n,
                                                       ze_device_handle_t* devices,
                                                       ze_event_pool_handle_t* pool) {
  static const auto real = loader<decltype(&zeEventPoolCreate)>("zeEventPoolCreate");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  const ze_result_t r = real(c, desc, n, devices, pool);
  if (r == ZE_RESULT_SUCCESS && g_ready.load() && pool != nullptr) {
    ze::event_pool_created(*pool, desc);
  }
  return r;
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeEventCreate(ze_event_pool_handle_t pool,
                                                   const ze_event_desc_t* desc,
                                                   ze_event_handle_t* event) {
  static const auto real = loader<decltype(&zeEventCreate)>("zeEventCreate");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  const ze_result_t r = real(pool, desc, event);
  if (r == ZE_RESULT_SUCCESS && g_ready.load() && event != nullptr) ze::event_created(pool, *event);
  return r;
}

namespace {

// A call after which what completed is collected (when it succeeded; when it says the device is
// lost, what had not completed is given up), or before which an event (`gone`) is read before the
// program resets or destroys it.
template <typename Real, typename... Args>
ze_result_t synced(Real real, bool before, ze_event_handle_t gone, Args... args) {
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (before && g_ready.load()) ze::sync_point(gone);
  const ze_result_t r = real(args...);
  if (!before && r == ZE_RESULT_SUCCESS && g_ready.load()) ze::sync_point();
  if (!before && r == ZE_RESULT_ERROR_DEVICE_LOST && g_ready.load()) ze::device_lost();
  return r;
}

}  // namespace

OAPROF_EXPORT ze_result_t ZE_APICALL zeCommandQueueSynchronize(ze_command_queue_handle_t q,
                                                               uint64_t timeout) {
  static const auto real =
      loader<decltype(&zeCommandQueueSynchronize)>("zeCommandQueueSynchronize");
  return synced(real, false, nullptr, q, timeout);
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeEventHostSynchronize(ze_event_handle_t e, uint64_t timeout) {
  static const auto real = loader<decltype(&zeEventHostSynchronize)>("zeEventHostSynchronize");
  return synced(real, false, nullptr, e, timeout);
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeEventQueryStatus(ze_event_handle_t e) {
  static const auto real = loader<decltype(&zeEventQueryStatus)>("zeEventQueryStatus");
  return synced(real, false, nullptr, e);
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeFenceHostSynchronize(ze_fence_handle_t f, uint64_t timeout) {
  static const auto real = loader<decltype(&zeFenceHostSynchronize)>("zeFenceHostSynchronize");
  return synced(real, false, nullptr, f, timeout);
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeEventHostReset(ze_event_handle_t e) {
  static const auto real = loader<decltype(&zeEventHostReset)>("zeEventHostReset");
  return synced(real, true, e, e);
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeEventDestroy(ze_event_handle_t e) {
  static const auto real = loader<decltype(&zeEventDestroy)>("zeEventDestroy");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (g_ready.load()) {
    ze::sync_point(e);  // its launch is read before it goes
    ze::event_destroying(e);
  }
  return real(e);
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeEventPoolDestroy(ze_event_pool_handle_t pool) {
  static const auto real = loader<decltype(&zeEventPoolDestroy)>("zeEventPoolDestroy");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (g_ready.load()) ze::event_pool_destroying(pool);  // before: the handle may come back
  return real(pool);
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeCommandQueueDestroy(ze_command_queue_handle_t q) {
  static const auto real = loader<decltype(&zeCommandQueueDestroy)>("zeCommandQueueDestroy");
  return synced(real, true, nullptr, q);
}

namespace {

// A launch between the interceptor's two halves. The program's arguments go down as they came,
// but for a signal event oaprof gives a launch that had none.
template <typename Call>
ze_result_t around(ze::LaunchCall call, Call&& real) {
  if (!g_ready.load()) return real(*call.signal);
  ze::CallState* state = ze::before_launch(call);
  const ze_result_t r = real(*call.signal);
  ze::after_launch(call, r, state);
  return r;
}

}  // namespace

namespace {

// zeCommandListAppendLaunchKernel and …Cooperative…: the same arguments.
template <typename Real>
ze_result_t direct(oaprof::oa::LaunchApi api, Real real, ze_command_list_handle_t list,
                   ze_kernel_handle_t k, const ze_group_count_t* groups, ze_event_handle_t signal,
                   uint32_t nwait, ze_event_handle_t* waits) {
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  return around(ze::direct_launch(api, list, &k, groups, &signal, nwait, waits),
                [&](ze_event_handle_t s) { return real(list, k, groups, s, nwait, waits); });
}

}  // namespace

OAPROF_EXPORT ze_result_t ZE_APICALL zeCommandListAppendLaunchKernel(
    ze_command_list_handle_t list, ze_kernel_handle_t k, const ze_group_count_t* groups,
    ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t* waits) {
  static const auto real =
      loader<decltype(&zeCommandListAppendLaunchKernel)>("zeCommandListAppendLaunchKernel");
  return direct(oaprof::oa::LaunchApi::kZeLaunchKernel, real, list, k, groups, signal, nwait,
                waits);
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeCommandListAppendLaunchCooperativeKernel(
    ze_command_list_handle_t list, ze_kernel_handle_t k, const ze_group_count_t* groups,
    ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t* waits) {
  static const auto real = loader<decltype(&zeCommandListAppendLaunchCooperativeKernel)>(
      "zeCommandListAppendLaunchCooperativeKernel");
  return direct(oaprof::oa::LaunchApi::kZeLaunchCooperativeKernel, real, list, k, groups, signal,
                nwait, waits);
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeCommandListAppendLaunchKernelIndirect(
    ze_command_list_handle_t list, ze_kernel_handle_t k, const ze_group_count_t* where,
    ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t* waits) {
  static const auto real = loader<decltype(&zeCommandListAppendLaunchKernelIndirect)>(
      "zeCommandListAppendLaunchKernelIndirect");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  return around(ze::indirect_launch(list, &k, where, &signal, nwait, waits),
                [&](ze_event_handle_t s) { return real(list, k, where, s, nwait, waits); });
}

OAPROF_EXPORT ze_result_t ZE_APICALL zeCommandListAppendLaunchMultipleKernelsIndirect(
    ze_command_list_handle_t list, uint32_t n, ze_kernel_handle_t* kernels, const uint32_t* count,
    const ze_group_count_t* where, ze_event_handle_t signal, uint32_t nwait,
    ze_event_handle_t* waits) {
  static const auto real = loader<decltype(&zeCommandListAppendLaunchMultipleKernelsIndirect)>(
      "zeCommandListAppendLaunchMultipleKernelsIndirect");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  return around(
      ze::multiple_launch(list, n, kernels, count, where, &signal, nwait, waits),
      [&](ze_event_handle_t s) { return real(list, n, kernels, count, where, s, nwait, waits); });
}

OAPROF_EXPORT ze_result_t ZE_APICALL
zeCommandQueueExecuteCommandLists(ze_command_queue_handle_t q, uint32_t n,
                                  ze_command_list_handle_t* lists, ze_fence_handle_t fence) {
  static const auto real =
      loader<decltype(&zeCommandQueueExecuteCommandLists)>("zeCommandQueueExecuteCommandLists");
  if (real == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (!g_ready.load()) return real(q, n, lists, fence);
  ze::CallState* state = ze::before_execute(q, n, lists);
  const ze_result_t r = real(q, n, lists, fence);
  ze::after_execute(r, state);
  return r;
}
