// The Level Zero layer's own events: host-visible, with kernel timestamps, from pools of
// oaprof's per context, reset and reused. They are the drains of immediate launches, the
// signal events of launches that had none (for the row's kernel times), and the gates of
// regular lists (ze_interceptor.h): the program never sees them.
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "attach/ze_interceptor.h"

namespace oaprof::attach::ze {

// A launch's place in a regular list: a barrier before it signals `ready` (what came before
// in the list, and the events the launch waits on, are done), a wait holds it until `go`, and
// `done` is signalled at its end: by the kernel itself when it is the launch's signal event
// (`done_is_kernels`: its kernel timestamps are the kernel's), else by a barrier after it (the
// program passed `program_event`).
struct Gate {
  ze_event_handle_t ready = nullptr, go = nullptr, done = nullptr;
  bool done_is_kernels = false;
  ze_event_handle_t program_event = nullptr;
};

struct KernelTimes {
  std::uint64_t start_ns = 0, end_ns = 0;  // on the device's timer, in nanoseconds
};

class Events {
 public:
  explicit Events(const Next& next) : next_(next) {}

  // A reset event of `context`; null when none can be made.
  ze_event_handle_t take(ze_context_handle_t context);
  // Reset, to be taken again.
  void give_back(ze_event_handle_t event);

  // Before a regular list's launch: the barrier (which also waits for the launch's own waits,
  // so that once `ready` is signalled only the kernel is left) and the wait. A launch without a
  // signal event (`*call.signal` null) gets `done` as its own. False (nothing appended) when it
  // cannot be made.
  bool open_gate(ze_context_handle_t context, LaunchCall& call, Gate& gate);
  // After the launch's append: a barrier signals `done` when the program had its own event.
  void close_gate(ze_command_list_handle_t list, bool appended, Gate& gate);
  // Before an execution: every event of the gate unsignalled.
  void rearm(const Gate& gate);
  // Lets the launch (and what follows it in the list) run.
  void open(const Gate& gate);
  // The list was reset or destroyed: the gate's events come back.
  void release(const Gate& gate);

  // The kernel's window from a kernel-timestamp event, on `device`'s timer; nullopt when the
  // event has none (a pool without ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP).
  std::optional<KernelTimes> kernel_times(ze_event_handle_t event, ze_device_handle_t device);
  // Sampled attribution: a complete event's kernel window, also on CLOCK_MONOTONIC (the host
  // time zeDeviceGetGlobalTimestamps pairs with the device's timer); nullopt as kernel_times.
  struct HostWindow {
    KernelTimes device;
    std::uint64_t host_start_ns = 0, host_end_ns = 0;
  };
  std::optional<HostWindow> host_window(ze_event_handle_t event, ze_device_handle_t device);

  // A forked child: the parent's events are the parent's driver's; dropped, not destroyed.
  void forget();
  // Before the program destroys `context`: oaprof's pools of it go.
  void forget_context(ze_context_handle_t context);

 private:
  struct Timer {
    std::uint64_t hz = 0;
    std::uint64_t mask = 0;  // the kernel timestamps' valid bits
    // Sampled attribution: a zeDeviceGetGlobalTimestamps pair, renewed every kAnchorNs.
    std::uint64_t anchor_host_ns = 0, anchor_ticks = 0;
  };
  static constexpr std::uint64_t kAnchorNs = 1'000'000'000;
  bool grow(ze_context_handle_t context);
  const Timer& timer(ze_device_handle_t device);

  static constexpr std::uint32_t kPoolEvents = 64;
  const Next& next_;
  std::map<ze_context_handle_t, std::vector<ze_event_pool_handle_t>> pools_;
  std::map<ze_context_handle_t, std::vector<ze_event_handle_t>> free_;
  std::map<ze_event_handle_t, ze_context_handle_t> owner_;
  std::map<ze_device_handle_t, Timer> timers_;
};

// Whether the driver knows `where` as host or shared memory (readable here): not device memory.
bool host_visible(const Next& next, ze_context_handle_t context, const void* where);
// `*where` into `out` when host_visible; false otherwise.
template <typename T>
bool read_host_visible(const Next& next, ze_context_handle_t context, const T* where, T& out) {
  if (where == nullptr || !host_visible(next, context, where)) return false;
  out = *where;
  return true;
}

}  // namespace oaprof::attach::ze
