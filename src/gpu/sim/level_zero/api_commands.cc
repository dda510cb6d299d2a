// The command queue, command list, event and fence entry points of the simulated driver: appends
// become Commands; an immediate list submits each at once, a regular list records them until a
// queue executes it (as often as the program likes, until it is reset).
#include <cstring>

#include "gpu/sim/level_zero/entry_points.h"

namespace oaprof::gpu::level_zero_sim {
namespace {

// The signal event and the wait list every append takes, checked and attached to `c`.
ze_result_t attach_events(State& s, Command& c, ze_event_handle_t signal, std::uint32_t n,
                          ze_event_handle_t* waits) {
  if (signal != nullptr) OAPROF_ZE_FIND(s, signal, c.signal);
  if (n > 0 && waits == nullptr) return ZE_RESULT_ERROR_INVALID_SIZE;
  for (std::uint32_t i = 0; i < n; ++i) {
    Event* e = nullptr;
    OAPROF_ZE_FIND(s, waits[i], e);
    c.waits.push_back(e);
  }
  return ZE_RESULT_SUCCESS;
}

// Records `c` on a regular list, or runs it now on an immediate one (and waits for it there
// when the list is synchronous).
ze_result_t append(State& s, std::unique_lock<std::mutex>& lock, ze_command_list_handle_t h,
                   Command c) {
  CommandList* list = nullptr;
  OAPROF_ZE_FIND(s, h, list);
  if (!list->immediate) {
    if (list->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // closed: reset it first
    list->recorded.push_back(std::move(c));
    return ZE_RESULT_SUCCESS;
  }
  std::vector<Command> one;
  one.push_back(std::move(c));
  s.submit(list->executor, std::move(one));
  if (!list->executor.synchronous) return ZE_RESULT_SUCCESS;
  Executor& e = list->executor;
  return s.wait(
      lock, UINT64_MAX, [&] { return s.executor_idle(e); },
      [&] { return e.pending.empty() ? std::optional{e.last_end_ns} : std::nullopt; });
}

// Checks `h` as a list and its events, then appends the command `make` builds.
template <typename Make>
ze_result_t append_with_events(ze_command_list_handle_t h, ze_event_handle_t signal,
                               std::uint32_t n, ze_event_handle_t* waits, Make make) {
  return with<CommandList>(h, [&](State& s, CommandList*, std::unique_lock<std::mutex>& lock) {
    Command c;
    if (const ze_result_t r = attach_events(s, c, signal, n, waits); r != ZE_RESULT_SUCCESS) {
      return r;
    }
    if (const ze_result_t r = make(s, c); r != ZE_RESULT_SUCCESS) return r;
    return append(s, lock, h, std::move(c));
  });
}

// The context, device and queue description a queue or an immediate list is created with.
ze_result_t check_queue_desc(State& s, ze_context_handle_t hc, ze_device_handle_t hd,
                             const ze_command_queue_desc_t* desc, const void* out) {
  Context* c = nullptr;
  Device* d = nullptr;
  OAPROF_ZE_FIND(s, hc, c);
  OAPROF_ZE_FIND(s, hd, d);
  if (desc == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->ordinal != 0 || desc->index != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  return ZE_RESULT_SUCCESS;
}

ze_result_t queue_create(ze_context_handle_t hc, ze_device_handle_t hd,
                         const ze_command_queue_desc_t* desc, ze_command_queue_handle_t* out) {
  return locked([&](State& s, auto&) {
    if (const ze_result_t r = check_queue_desc(s, hc, hd, desc, out); r != ZE_RESULT_SUCCESS) {
      return r;
    }
    auto q = std::make_unique<Queue>();
    q->executor.synchronous = desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    s.add_executor(&q->executor);
    *out = reinterpret_cast<ze_command_queue_handle_t>(s.adopt(std::move(q)));
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t queue_destroy(ze_command_queue_handle_t h) {
  return with<Queue>(h, [&](State& s, Queue* q) {
    s.remove_executor(&q->executor);
    s.destroy(q);
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t wait_idle(State& s, std::unique_lock<std::mutex>& lock, Executor& e,
                      std::uint64_t timeout_ns) {
  return s.wait(
      lock, timeout_ns, [&] { return s.executor_idle(e); },
      [&] { return e.pending.empty() ? std::optional{e.last_end_ns} : std::nullopt; });
}

// The commands of `n` closed regular lists, in order, then the fence's signal.
ze_result_t gather(State& s, std::uint32_t n, ze_command_list_handle_t* lists, Fence* fence,
                   std::vector<Command>& out) {
  for (std::uint32_t i = 0; i < n; ++i) {
    CommandList* list = nullptr;
    OAPROF_ZE_FIND(s, lists[i], list);
    if (list->immediate || !list->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    out.insert(out.end(), list->recorded.begin(), list->recorded.end());
  }
  if (fence != nullptr) {
    Command c;
    c.op = Command::Op::kFence;
    c.fence = fence;
    out.push_back(std::move(c));
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t queue_execute(ze_command_queue_handle_t h, std::uint32_t n,
                          ze_command_list_handle_t* lists, ze_fence_handle_t hf) {
  return locked([&](State& s, std::unique_lock<std::mutex>& lock) {
    Queue* q = nullptr;
    Fence* fence = nullptr;
    OAPROF_ZE_FIND(s, h, q);
    if (hf != nullptr) OAPROF_ZE_FIND(s, hf, fence);
    if (fence != nullptr && fence->queue != q) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (n == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (lists == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    std::vector<Command> commands;
    if (const ze_result_t r = gather(s, n, lists, fence, commands); r != ZE_RESULT_SUCCESS) {
      return r;
    }
    if (fence != nullptr) fence->signal_ns.reset();
    s.submit(q->executor, std::move(commands));
    return q->executor.synchronous ? wait_idle(s, lock, q->executor, UINT64_MAX)
                                   : ZE_RESULT_SUCCESS;
  });
}

ze_result_t queue_synchronize(ze_command_queue_handle_t h, std::uint64_t timeout_ns) {
  return with<Queue>(h, [&](State& s, Queue* q, std::unique_lock<std::mutex>& lock) {
    return wait_idle(s, lock, q->executor, timeout_ns);
  });
}

ze_result_t list_create(ze_context_handle_t hc, ze_device_handle_t hd,
                        const ze_command_list_desc_t* desc, ze_command_list_handle_t* out) {
  return locked([&](State& s, auto&) {
    Context* c = nullptr;
    Device* d = nullptr;
    OAPROF_ZE_FIND(s, hc, c);
    OAPROF_ZE_FIND(s, hd, d);
    if (desc == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->commandQueueGroupOrdinal != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = reinterpret_cast<ze_command_list_handle_t>(s.adopt(std::make_unique<CommandList>()));
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t list_create_immediate(ze_context_handle_t hc, ze_device_handle_t hd,
                                  const ze_command_queue_desc_t* desc,
                                  ze_command_list_handle_t* out) {
  return locked([&](State& s, auto&) {
    if (const ze_result_t r = check_queue_desc(s, hc, hd, desc, out); r != ZE_RESULT_SUCCESS) {
      return r;
    }
    auto list = std::make_unique<CommandList>();
    list->immediate = true;
    list->executor.synchronous = desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    s.add_executor(&list->executor);
    *out = reinterpret_cast<ze_command_list_handle_t>(s.adopt(std::move(list)));
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t list_destroy(ze_command_list_handle_t h) {
  return with<CommandList>(h, [&](State& s, CommandList* list) {
    if (list->immediate) s.remove_executor(&list->executor);
    s.destroy(list);
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t list_close(ze_command_list_handle_t h) {
  return with<CommandList>(h, [&](State&, CommandList* list) {
    list->closed = true;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t list_reset(ze_command_list_handle_t h) {
  return with<CommandList>(h, [&](State&, CommandList* list) {
    list->recorded.clear();
    list->closed = false;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t append_global_timestamp(ze_command_list_handle_t h, std::uint64_t* dst,
                                    ze_event_handle_t signal, std::uint32_t n,
                                    ze_event_handle_t* waits) {
  return append_with_events(h, signal, n, waits, [&](State&, Command& c) {
    if (dst == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    c.op = Command::Op::kGlobalTimestamp;
    c.dst = dst;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t append_barrier(ze_command_list_handle_t h, ze_event_handle_t signal, std::uint32_t n,
                           ze_event_handle_t* waits) {
  return append_with_events(h, signal, n, waits, [](State&, Command& c) {
    c.op = Command::Op::kBarrier;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t append_ranges_barrier(ze_command_list_handle_t h, std::uint32_t, const size_t*,
                                  const void**, ze_event_handle_t signal, std::uint32_t n,
                                  ze_event_handle_t* waits) {
  return append_barrier(h, signal, n, waits);  // every range: the whole of memory is coherent
}

ze_result_t append_copy(ze_command_list_handle_t h, void* dst, const void* src, size_t size,
                        ze_event_handle_t signal, std::uint32_t n, ze_event_handle_t* waits) {
  return append_with_events(h, signal, n, waits, [&](State&, Command& c) {
    if (dst == nullptr || src == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    c.op = Command::Op::kCopy;
    c.dst = dst;
    c.src = src;
    c.bytes = size;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t append_copy_from_context(ze_command_list_handle_t h, void* dst, ze_context_handle_t,
                                     const void* src, size_t size, ze_event_handle_t signal,
                                     std::uint32_t n, ze_event_handle_t* waits) {
  return append_copy(h, dst, src, size, signal, n, waits);  // one address space
}

ze_result_t append_fill(ze_command_list_handle_t h, void* ptr, const void* pattern,
                        size_t pattern_size, size_t size, ze_event_handle_t signal, std::uint32_t n,
                        ze_event_handle_t* waits) {
  return append_with_events(h, signal, n, waits, [&](State&, Command& c) {
    if (ptr == nullptr || pattern == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    // A power of two up to the queue group's maxMemoryFillPatternSize (128).
    if (pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)) != 0) {
      return ZE_RESULT_ERROR_INVALID_SIZE;
    }
    c.op = Command::Op::kFill;
    c.dst = ptr;
    c.bytes = size;
    const auto* bytes = static_cast<const std::uint8_t*>(pattern);
    c.pattern.assign(bytes, bytes + pattern_size);
    return ZE_RESULT_SUCCESS;
  });
}

// Prefetches and advice change nothing in plain memory: accepted for a live list.
ze_result_t append_prefetch(ze_command_list_handle_t h, const void* ptr, size_t) {
  return with<CommandList>(h, [&](State&, CommandList*) {
    return ptr == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_POINTER : ZE_RESULT_SUCCESS;
  });
}

ze_result_t append_advise(ze_command_list_handle_t h, ze_device_handle_t, const void* ptr,
                          size_t size, ze_memory_advice_t) {
  return append_prefetch(h, ptr, size);
}

ze_result_t append_signal(ze_command_list_handle_t h, ze_event_handle_t event) {
  if (event == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return append_with_events(h, event, 0, nullptr, [](State&, Command& c) {
    c.op = Command::Op::kSignal;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t append_wait(ze_command_list_handle_t h, std::uint32_t n, ze_event_handle_t* events) {
  return append_with_events(h, nullptr, n, events, [](State&, Command& c) {
    c.op = Command::Op::kWait;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t append_event_reset(ze_command_list_handle_t h, ze_event_handle_t event) {
  return append_with_events(h, nullptr, 0, nullptr, [&](State& s, Command& c) {
    Event* e = nullptr;
    OAPROF_ZE_FIND(s, event, e);
    c.op = Command::Op::kReset;
    c.events.push_back(e);
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t append_query_timestamps(ze_command_list_handle_t h, std::uint32_t count,
                                    ze_event_handle_t* events, void* dst, const size_t* offsets,
                                    ze_event_handle_t signal, std::uint32_t n,
                                    ze_event_handle_t* waits) {
  return append_with_events(h, signal, n, waits, [&](State& s, Command& c) {
    if (events == nullptr || dst == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (offsets != nullptr) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;  // packed results only
    for (std::uint32_t i = 0; i < count; ++i) {
      Event* e = nullptr;
      OAPROF_ZE_FIND(s, events[i], e);
      c.events.push_back(e);
    }
    c.op = Command::Op::kQueryTimestamps;
    c.dst = dst;
    return ZE_RESULT_SUCCESS;
  });
}

// A launch of `k` as it stands, every argument set.
ze_result_t launch_of(const Kernel& k, Launch& out) {
  for (const bool set : k.argument_set) {
    if (!set) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // a kernel argument was never set
  }
  out.name = k.spirv->name;
  out.group_size = k.group_size;
  return ZE_RESULT_SUCCESS;
}

// One launch of `hk`: its group counts now, or (indirect) read from `groups` when it runs, as
// the device would.
ze_result_t append_one_launch(ze_command_list_handle_t h, ze_kernel_handle_t hk,
                              const ze_group_count_t* groups, ze_event_handle_t signal,
                              std::uint32_t n, ze_event_handle_t* waits, bool indirect) {
  return append_with_events(h, signal, n, waits, [&](State& s, Command& c) {
    Kernel* k = nullptr;
    OAPROF_ZE_FIND(s, hk, k);
    if (groups == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    Launch launch;
    if (const ze_result_t r = launch_of(*k, launch); r != ZE_RESULT_SUCCESS) return r;
    if (indirect) {
      launch.indirect = groups;
    } else {
      launch.groups = *groups;
    }
    c.op = Command::Op::kLaunch;
    c.launches.push_back(std::move(launch));
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t append_launch(ze_command_list_handle_t h, ze_kernel_handle_t hk,
                          const ze_group_count_t* groups, ze_event_handle_t signal, std::uint32_t n,
                          ze_event_handle_t* waits) {
  return append_one_launch(h, hk, groups, signal, n, waits, false);
}

ze_result_t append_launch_indirect(ze_command_list_handle_t h, ze_kernel_handle_t hk,
                                   const ze_group_count_t* groups, ze_event_handle_t signal,
                                   std::uint32_t n, ze_event_handle_t* waits) {
  return append_one_launch(h, hk, groups, signal, n, waits, true);
}

ze_result_t append_launch_multiple(ze_command_list_handle_t h, std::uint32_t kernels,
                                   ze_kernel_handle_t* hks, const std::uint32_t* count,
                                   const ze_group_count_t* groups, ze_event_handle_t signal,
                                   std::uint32_t n, ze_event_handle_t* waits) {
  return append_with_events(h, signal, n, waits, [&](State& s, Command& c) {
    if (hks == nullptr || count == nullptr || groups == nullptr) {
      return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    for (std::uint32_t i = 0; i < kernels; ++i) {
      Kernel* k = nullptr;
      OAPROF_ZE_FIND(s, hks[i], k);
      Launch launch;
      if (const ze_result_t r = launch_of(*k, launch); r != ZE_RESULT_SUCCESS) return r;
      launch.indirect = groups + i;
      c.launches.push_back(std::move(launch));
    }
    c.op = Command::Op::kLaunch;
    c.launch_count = count;
    return ZE_RESULT_SUCCESS;
  });
}

}  // namespace

void fill_table(ze_command_queue_dditable_t& t) {
  t.pfnCreate = queue_create;
  t.pfnDestroy = queue_destroy;
  t.pfnExecuteCommandLists = queue_execute;
  t.pfnSynchronize = queue_synchronize;
}

void fill_table(ze_command_list_dditable_t& t) {
  t.pfnCreate = list_create;
  t.pfnCreateImmediate = list_create_immediate;
  t.pfnDestroy = list_destroy;
  t.pfnClose = list_close;
  t.pfnReset = list_reset;
  t.pfnAppendWriteGlobalTimestamp = append_global_timestamp;
  t.pfnAppendBarrier = append_barrier;
  t.pfnAppendMemoryRangesBarrier = append_ranges_barrier;
  t.pfnAppendMemoryCopy = append_copy;
  t.pfnAppendMemoryFill = append_fill;
  t.pfnAppendMemoryCopyFromContext = append_copy_from_context;
  t.pfnAppendMemoryPrefetch = append_prefetch;
  t.pfnAppendMemAdvise = append_advise;
  t.pfnAppendSignalEvent = append_signal;
  t.pfnAppendWaitOnEvents = append_wait;
  t.pfnAppendEventReset = append_event_reset;
  t.pfnAppendQueryKernelTimestamps = append_query_timestamps;
  t.pfnAppendLaunchKernel = append_launch;
  t.pfnAppendLaunchCooperativeKernel = append_launch;
  t.pfnAppendLaunchKernelIndirect = append_launch_indirect;
  t.pfnAppendLaunchMultipleKernelsIndirect = append_launch_multiple;
}

}  // namespace oaprof::gpu::level_zero_sim
