#include "attach/ze_events.h"

#include <algorithm>

namespace oaprof::attach::ze {

namespace {

// Device timestamps in ticks of `hz` to nanoseconds, without overflowing for hours of ticks.
std::uint64_t ticks_to_ns(std::uint64_t ticks, std::uint64_t hz) {
  return ticks / hz * 1'000'000'000 + ticks % hz * 1'000'000'000 / hz;
}

}  // namespace

// Host-visible (the layer waits for them and signals gates from the host) and with kernel
// timestamps (the row's kernel times). Created on every device of the context.
bool Events::grow(ze_context_handle_t context) {
  ze_event_pool_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
  desc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;
  desc.count = kPoolEvents;
  ze_event_pool_handle_t pool = nullptr;
  if (next_.pool_create(context, &desc, 0, nullptr, &pool) != ZE_RESULT_SUCCESS) return false;
  pools_[context].push_back(pool);
  std::vector<ze_event_handle_t>& free = free_[context];
  for (std::uint32_t i = 0; i < kPoolEvents; ++i) {
    ze_event_desc_t ed{};
    ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
    ed.index = i;
    ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
    ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
    ze_event_handle_t e = nullptr;
    if (next_.event_create(pool, &ed, &e) != ZE_RESULT_SUCCESS) break;
    free.push_back(e);
    owner_[e] = context;
  }
  return !free.empty();
}

ze_event_handle_t Events::take(ze_context_handle_t context) {
  std::vector<ze_event_handle_t>& free = free_[context];
  if (free.empty() && !grow(context)) return nullptr;
  ze_event_handle_t e = free.back();
  free.pop_back();
  return e;
}

void Events::give_back(ze_event_handle_t event) {
  if (event == nullptr) return;
  const auto it = owner_.find(event);
  if (it == owner_.end()) return;  // its context went
  next_.event_reset(event);
  free_[it->second].push_back(event);
}

bool Events::open_gate(ze_context_handle_t context, LaunchCall& call, Gate& gate) {
  ze_event_handle_t* signal = call.signal;
  ze_command_list_handle_t list = call.list;
  gate = Gate{};
  gate.ready = take(context);
  gate.go = take(context);
  gate.done = take(context);
  gate.program_event = signal != nullptr ? *signal : nullptr;
  const bool made =
      gate.ready != nullptr && gate.go != nullptr && gate.done != nullptr &&
      next_.append_barrier(list, gate.ready, call.wait_count, call.waits) == ZE_RESULT_SUCCESS;
  // Once the barrier is in, the wait must go in too, or the gate would signal nothing.
  if (!made || next_.append_wait(list, 1, &gate.go) != ZE_RESULT_SUCCESS) {
    // A barrier alone in the list is harmless: it orders nothing the list did not order.
    release(gate);
    gate = Gate{};
    return false;
  }
  if (signal != nullptr && *signal == nullptr) {
    *signal = gate.done;
    gate.done_is_kernels = true;
  }
  return true;
}

void Events::close_gate(ze_command_list_handle_t list, bool appended, Gate& gate) {
  if (gate.done_is_kernels && appended) return;
  // The program's own event (or none, when the append failed) signals the kernel's end; oaprof's
  // `done` follows it through a barrier, which waits for everything before it.
  if (next_.append_barrier(list, gate.done, 0, nullptr) != ZE_RESULT_SUCCESS) {
    gate.done = nullptr;  // waited for as long as the layer waits, then the row is flagged
  }
  gate.done_is_kernels = false;
}

void Events::rearm(const Gate& gate) {
  for (ze_event_handle_t e : {gate.ready, gate.go, gate.done}) {
    if (e != nullptr) next_.event_reset(e);
  }
}

void Events::open(const Gate& gate) {
  if (gate.go != nullptr) next_.event_signal(gate.go);
}

void Events::release(const Gate& gate) {
  for (ze_event_handle_t e : {gate.ready, gate.go, gate.done}) give_back(e);
}

const Events::Timer& Events::timer(ze_device_handle_t device) {
  auto [it, fresh] = timers_.try_emplace(device);
  if (!fresh) return it->second;
  // The 1.2 form of the properties gives timerResolution in cycles per second (ze_api.h).
  ze_device_properties_t props{};
  props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
  if (device != nullptr && next_.device_properties(device, &props) == ZE_RESULT_SUCCESS &&
      props.timerResolution > 0) {
    it->second.hz = props.timerResolution;
    const std::uint32_t bits = std::min<std::uint32_t>(props.kernelTimestampValidBits, 64);
    it->second.mask = bits == 0 || bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  }
  return it->second;
}

std::optional<KernelTimes> Events::kernel_times(ze_event_handle_t event,
                                                ze_device_handle_t device) {
  if (event == nullptr) return std::nullopt;
  const Timer& t = timer(device);
  ze_kernel_timestamp_result_t ts{};
  if (t.hz == 0 || next_.event_timestamp(event, &ts) != ZE_RESULT_SUCCESS) return std::nullopt;
  // The end may have wrapped past the valid bits since the start.
  const std::uint64_t start = ts.global.kernelStart & t.mask;
  const std::uint64_t length = (ts.global.kernelEnd - ts.global.kernelStart) & t.mask;
  KernelTimes k;
  k.start_ns = ticks_to_ns(start, t.hz);
  k.end_ns = k.start_ns + ticks_to_ns(length, t.hz);
  return k;
}

// The kernel is complete, so it started before the global timestamp pair read now: its start
// lies `back` ticks before the pair's device time, counted modulo the kernel timestamps' valid
// bits (unambiguous while it is less than their range ago: 343 s at 12.5 MHz and 32 bits). It
// is put on the host's clock by the device's anchor, one pair kept for a second: one line for
// all windows of that second, so that windows apart on the device stay apart on the host (a
// fresh pair per window would move each by up to a timer tick, 80 ns on the simulator).
std::optional<Events::HostWindow> Events::host_window(ze_event_handle_t event,
                                                      ze_device_handle_t device) {
  const std::optional<KernelTimes> k = kernel_times(event, device);
  std::uint64_t host_ns = 0, ticks = 0;
  ze_kernel_timestamp_result_t ts{};
  if (!k || next_.global_timestamps(device, &host_ns, &ticks) != ZE_RESULT_SUCCESS ||
      next_.event_timestamp(event, &ts) != ZE_RESULT_SUCCESS) {
    return std::nullopt;
  }
  Timer& t = timers_[device];
  const std::uint64_t back = ((ticks & t.mask) - (ts.global.kernelStart & t.mask)) & t.mask;
  if (t.anchor_host_ns == 0 || host_ns - t.anchor_host_ns > kAnchorNs) {
    t.anchor_host_ns = host_ns;
    t.anchor_ticks = ticks;
  }
  const auto since_anchor = static_cast<std::int64_t>(ticks - back - t.anchor_ticks);
  const std::uint64_t offset_ns =
      ticks_to_ns(since_anchor < 0 ? -since_anchor : since_anchor, t.hz);
  HostWindow w;
  w.device = *k;
  w.host_start_ns = since_anchor < 0 ? t.anchor_host_ns - offset_ns : t.anchor_host_ns + offset_ns;
  w.host_end_ns = w.host_start_ns + (k->end_ns - k->start_ns);
  return w;
}

void Events::forget() {
  pools_.clear();
  free_.clear();
  owner_.clear();
}

void Events::forget_context(ze_context_handle_t context) {
  for (auto it = owner_.begin(); it != owner_.end();) {
    if (it->second != context) {
      ++it;
      continue;
    }
    next_.event_destroy(it->first);
    it = owner_.erase(it);
  }
  for (ze_event_pool_handle_t pool : pools_[context]) next_.pool_destroy(pool);
  pools_.erase(context);
  free_.erase(context);
}

bool host_visible(const Next& next, ze_context_handle_t context, const void* where) {
  ze_memory_allocation_properties_t props{};
  props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
  if (next.alloc_properties(context, where, &props, nullptr) != ZE_RESULT_SUCCESS) return false;
  return props.type == ZE_MEMORY_TYPE_HOST || props.type == ZE_MEMORY_TYPE_SHARED;
}

}  // namespace oaprof::attach::ze
