// The event pool, event and fence entry points of the simulated driver. An event's state is the
// time it is (or will be) signalled: the host sees it signalled once CLOCK_MONOTONIC passes it.
#include "gpu/sim/level_zero/entry_points.h"

namespace oaprof::gpu::level_zero_sim {
namespace {

ze_result_t pool_create(ze_context_handle_t hc, const ze_event_pool_desc_t* desc,
                        std::uint32_t device_count, ze_device_handle_t* devices,
                        ze_event_pool_handle_t* out) {
  return with<Context>(hc, [&](State& s, Context*) {
    for (std::uint32_t i = 0; devices != nullptr && i < device_count; ++i) {
      Device* d = nullptr;
      OAPROF_ZE_FIND(s, devices[i], d);
    }
    if (desc == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if ((desc->flags & ZE_EVENT_POOL_FLAG_IPC) != 0) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    auto pool = std::make_unique<EventPool>();
    pool->flags = desc->flags;
    pool->count = desc->count;
    *out = reinterpret_cast<ze_event_pool_handle_t>(s.adopt(std::move(pool)));
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t pool_destroy(ze_event_pool_handle_t h) {
  return with<EventPool>(h, [&](State& s, EventPool* p) {
    if (p->events_alive > 0) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    s.destroy(p);
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t event_create(ze_event_pool_handle_t h, const ze_event_desc_t* desc,
                         ze_event_handle_t* out) {
  return with<EventPool>(h, [&](State& s, EventPool* p) {
    if (desc == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->index >= p->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    auto e = std::make_unique<Event>();
    e->pool = p;
    e->index = desc->index;
    ++p->events_alive;
    *out = reinterpret_cast<ze_event_handle_t>(s.adopt(std::move(e)));
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t event_destroy(ze_event_handle_t h) {
  return with<Event>(h, [&](State& s, Event* e) {
    --e->pool->events_alive;
    s.destroy(e);
    s.pump_all();  // queues held on it go on (a destroyed event counts as signalled)
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t event_host_signal(ze_event_handle_t h) {
  return with<Event>(h, [&](State& s, Event* e) {
    const std::uint64_t now = monotonic_ns();
    e->signal_ns = e->start_ns = e->end_ns = now;
    s.pump_all();
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t event_host_synchronize(ze_event_handle_t h, std::uint64_t timeout_ns) {
  return with<Event>(h, [&](State& s, Event* e, std::unique_lock<std::mutex>& lock) {
    // The event may be destroyed by another thread while this one waits: look it up again.
    return s.wait(
        lock, timeout_ns, [&] { return !s.alive(h) || s.event_signalled(*e); },
        [&] { return s.alive(h) ? e->signal_ns : std::nullopt; });
  });
}

ze_result_t event_query_status(ze_event_handle_t h) {
  return with<Event>(h, [&](State& s, Event* e) {
    return s.event_signalled(*e) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
  });
}

ze_result_t event_host_reset(ze_event_handle_t h) {
  return with<Event>(h, [&](State&, Event* e) {
    e->signal_ns.reset();
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t event_kernel_timestamp(ze_event_handle_t h, ze_kernel_timestamp_result_t* out) {
  return with<Event>(h, [&](State& s, Event* e) {
    if (out == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!e->timestamps()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // not a timestamp pool's
    if (!s.event_signalled(*e)) return ZE_RESULT_NOT_READY;
    const std::uint64_t mask = (std::uint64_t{1} << kKernelTimestampBits) - 1;
    out->global = {s.ticks(e->start_ns) & mask, s.ticks(e->end_ns) & mask};
    out->context = out->global;  // one context runs at a time in the model
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t fence_create(ze_command_queue_handle_t h, const ze_fence_desc_t* desc,
                         ze_fence_handle_t* out) {
  return with<Queue>(h, [&](State& s, Queue* q) {
    if (desc == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    auto f = std::make_unique<Fence>();
    f->queue = q;
    if ((desc->flags & ZE_FENCE_FLAG_SIGNALED) != 0) f->signal_ns = monotonic_ns();
    *out = reinterpret_cast<ze_fence_handle_t>(s.adopt(std::move(f)));
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t fence_destroy(ze_fence_handle_t h) {
  return with<Fence>(h, [&](State& s, Fence* f) {
    s.destroy(f);
    return ZE_RESULT_SUCCESS;
  });
}

bool fence_signalled(const Fence& f) { return f.signal_ns && *f.signal_ns <= monotonic_ns(); }

ze_result_t fence_host_synchronize(ze_fence_handle_t h, std::uint64_t timeout_ns) {
  return with<Fence>(h, [&](State& s, Fence* f, std::unique_lock<std::mutex>& lock) {
    return s.wait(
        lock, timeout_ns, [&] { return !s.alive(h) || fence_signalled(*f); },
        [&] { return s.alive(h) ? f->signal_ns : std::nullopt; });
  });
}

ze_result_t fence_query_status(ze_fence_handle_t h) {
  return with<Fence>(h, [&](State&, Fence* f) {
    return fence_signalled(*f) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
  });
}

ze_result_t fence_reset(ze_fence_handle_t h) {
  return with<Fence>(h, [&](State&, Fence* f) {
    f->signal_ns.reset();
    return ZE_RESULT_SUCCESS;
  });
}

}  // namespace

void fill_table(ze_event_pool_dditable_t& t) {
  t.pfnCreate = pool_create;
  t.pfnDestroy = pool_destroy;
}

void fill_table(ze_event_dditable_t& t) {
  t.pfnCreate = event_create;
  t.pfnDestroy = event_destroy;
  t.pfnHostSignal = event_host_signal;
  t.pfnHostSynchronize = event_host_synchronize;
  t.pfnQueryStatus = event_query_status;
  t.pfnHostReset = event_host_reset;
  t.pfnQueryKernelTimestamp = event_kernel_timestamp;
}

void fill_table(ze_fence_dditable_t& t) {
  t.pfnCreate = fence_create;
  t.pfnDestroy = fence_destroy;
  t.pfnHostSynchronize = fence_host_synchronize;
  t.pfnQueryStatus = fence_query_status;
  t.pfnReset = fence_reset;
}

}  // namespace oaprof::gpu::level_zero_sim
