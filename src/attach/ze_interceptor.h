// The measurement logic of oaprof's Level Zero interception, shared by its two ways in: the
// loader's tracing layer (ze_layer.cc: prologue and epilogue callbacks) and LD_PRELOAD
// interposition (ze_preload.cc: the call between the two). So each intercepted call comes in
// two halves, `before_*` and `after_*`, with an opaque state between them.
//
// Bracketed attribution (docs/level-zero.md):
// - immediate lists: a launch is a submission. Before it, a barrier on the list with the launch's
//   waits is waited for (the drain), and the 'before' snapshot taken; after it, the kernel's
//   event is waited for and the 'after' taken. A launch without a signal event gets one of
//   oaprof's (kernel timestamps: the row's kernel_ns), which the program never sees.
// - regular lists: each launch is recorded at its append with its kernel's name and group
//   size then, between a gate of oaprof's (a barrier that signals 'ready', a wait on 'go') and
//   an event that says it is done. At every zeCommandQueueExecuteCommandLists, a thread of the
//   layer steps through the gates: wait for 'ready' (everything before the kernel is done),
//   snapshot, signal 'go', wait for 'done', snapshot: one exact row per kernel per execution.
//   zeCommandListReset forgets the recorded launches.
// - a launch whose waits (or, on a regular list, whose gate's 'ready') are not done within the
//   layer's wait (the host signals them after the call) is held: its 'before' is taken when the
//   layer gives up waiting, its 'after' once it is seen complete (at the program's next sync
//   point, launch or execution, or at exit), and its record is flagged kLaunchNotBracketed; on
//   a regular list, so is every measured launch after it in that execution.
// Sampled attribution: no barrier, snapshot or wait; each launch is timed by a kernel-timestamp
// event (the program's where its pool has them, else oaprof's), read at the program's sync
// points into SampledLaunches, as OpenCL's sampled launches are.
// It never throws into the program nor changes a call's result; on an internal failure it logs
// once and passes calls through.
#pragma once

#include <level_zero/ze_api.h>

#include <cstddef>
#include <cstdint>

#include "oa/launch_record.h"

namespace oaprof::attach::ze {

// The Level Zero entry points the layer itself calls, found with dlsym (RTLD_NEXT: the loader's,
// behind the preload library; under the tracing layer, calls from inside a callback bypass the
// tracers).
struct Next {
  decltype(&zeInit) init = nullptr;
  decltype(&zeCommandListAppendBarrier) append_barrier = nullptr;
  decltype(&zeCommandListAppendWaitOnEvents) append_wait = nullptr;
  decltype(&zeEventPoolCreate) pool_create = nullptr;
  decltype(&zeEventPoolDestroy) pool_destroy = nullptr;
  decltype(&zeEventCreate) event_create = nullptr;
  decltype(&zeEventDestroy) event_destroy = nullptr;
  decltype(&zeEventHostSignal) event_signal = nullptr;
  decltype(&zeEventHostSynchronize) event_sync = nullptr;
  decltype(&zeEventHostReset) event_reset = nullptr;
  decltype(&zeEventQueryKernelTimestamp) event_timestamp = nullptr;
  decltype(&zeEventQueryStatus) event_status = nullptr;
  decltype(&zeDeviceGetGlobalTimestamps) global_timestamps = nullptr;
  decltype(&zeKernelGetName) kernel_name = nullptr;
  decltype(&zeKernelGetProperties) kernel_properties = nullptr;
  decltype(&zeDeviceGetProperties) device_properties = nullptr;
  decltype(&zeMemGetAllocProperties) alloc_properties = nullptr;
};
Next& next();
// Fills next() from `lookup` (name → address); false, naming the first missing one, when the
// loader lacks one of them.
bool load_next(void* (*lookup)(const char* name), const char** missing);

// How the layer came in, for its start-up line ("tracing layer", "preload").
void set_way_in(const char* name);

// One launch call's arguments. `signal` points at the call's own signal event argument, which
// before_launch may set when the program passed none.
struct LaunchCall {
  ze_command_list_handle_t list = nullptr;
  oa::LaunchApi api = oa::LaunchApi::kZeLaunchKernel;
  std::uint32_t kernel_count = 1;
  const ze_kernel_handle_t* kernels = nullptr;  // kernel_count of them
  const ze_group_count_t* groups = nullptr;     // direct launches: the group counts
  const ze_group_count_t* indirect = nullptr;   // indirect ones: where the device reads them
  const std::uint32_t* count_buffer = nullptr;  // LaunchMultipleKernelsIndirect's count
  ze_event_handle_t* signal = nullptr;
  std::uint32_t wait_count = 0;
  ze_event_handle_t* waits = nullptr;
};

// The calls' arguments as a LaunchCall, for both ways in. `kernel` and `signal` point at the
// call's own arguments.
inline LaunchCall direct_launch(oa::LaunchApi api, ze_command_list_handle_t list,
                                const ze_kernel_handle_t* kernel, const ze_group_count_t* groups,
                                ze_event_handle_t* signal, std::uint32_t wait_count,
                                ze_event_handle_t* waits) {
  LaunchCall c;
  c.list = list;
  c.api = api;
  c.kernels = kernel;
  c.groups = groups;
  c.signal = signal;
  c.wait_count = wait_count;
  c.waits = waits;
  return c;
}
inline LaunchCall indirect_launch(ze_command_list_handle_t list, const ze_kernel_handle_t* kernel,
                                  const ze_group_count_t* where, ze_event_handle_t* signal,
                                  std::uint32_t wait_count, ze_event_handle_t* waits) {
  LaunchCall c = direct_launch(oa::LaunchApi::kZeLaunchKernelIndirect, list, kernel, nullptr,
                               signal, wait_count, waits);
  c.indirect = where;
  return c;
}
inline LaunchCall multiple_launch(ze_command_list_handle_t list, std::uint32_t kernel_count,
                                  const ze_kernel_handle_t* kernels, const std::uint32_t* count,
                                  const ze_group_count_t* where, ze_event_handle_t* signal,
                                  std::uint32_t wait_count, ze_event_handle_t* waits) {
  LaunchCall c = indirect_launch(list, kernels, where, signal, wait_count, waits);
  c.api = oa::LaunchApi::kZeLaunchMultipleKernelsIndirect;
  c.kernel_count = kernel_count;
  c.count_buffer = count;
  return c;
}

struct CallState;  // what the first half hands the second; null: nothing to do

CallState* before_launch(LaunchCall& call) noexcept;
void after_launch(const LaunchCall& call, ze_result_t result, CallState* state) noexcept;

CallState* before_execute(ze_command_queue_handle_t queue, std::uint32_t count,
                          const ze_command_list_handle_t* lists) noexcept;
void after_execute(ze_result_t result, CallState* state) noexcept;

// The books: lists (with their context and device, and kind), kernels' group sizes, contexts
// whose events of oaprof's must go before them.
void list_created(ze_context_handle_t context, ze_device_handle_t device,
                  ze_command_list_handle_t list, bool immediate) noexcept;
void list_reset(ze_command_list_handle_t list) noexcept;
void list_destroyed(ze_command_list_handle_t list) noexcept;
void kernel_group_size(ze_kernel_handle_t kernel, std::uint32_t x, std::uint32_t y,
                       std::uint32_t z) noexcept;
void kernel_destroyed(ze_kernel_handle_t kernel) noexcept;
void context_destroying(ze_context_handle_t context) noexcept;

// Sampled attribution (docs/level-zero.md): which events have kernel timestamps (their pool's
// ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP), and the program's sync points, where the launches that
// completed are collected. `gone`: an event the program is about to reset or destroy (read
// first, then forgotten); `queue_gone`: a queue about to be destroyed.
// Each pool's and event's entry goes at its destruction (`*_destroying`: before the call, as the
// handle may come back at once), so that a program that keeps making and destroying them does
// not grow the books.
void event_pool_created(ze_event_pool_handle_t pool, const ze_event_pool_desc_t* desc) noexcept;
void event_created(ze_event_pool_handle_t pool, ze_event_handle_t event) noexcept;
void event_destroying(ze_event_handle_t event) noexcept;
void event_pool_destroying(ze_event_pool_handle_t pool) noexcept;
// The pools and events in those books (for tests).
std::size_t event_books_size() noexcept;
void sync_point(ze_event_handle_t gone = nullptr) noexcept;
// After a wait of the program's answered ZE_RESULT_ERROR_DEVICE_LOST: what had not completed
// never will.
void device_lost() noexcept;

}  // namespace oaprof::attach::ze
