// The simulated driver's entry points, handed to the loader table by table: each fill_table()
// sets the slots the simulator implements; ddi_tables.cc exports the zeGet*ProcAddrTable
// functions and makes every other slot answer ZE_RESULT_ERROR_UNSUPPORTED_FEATURE.
#pragma once

#include <level_zero/ze_ddi.h>

#include <mutex>
#include <new>
#include <type_traits>

#include "gpu/sim/level_zero/driver_state.h"

namespace oaprof::gpu::level_zero_sim {

void fill_table(ze_global_dditable_t& t);
void fill_table(ze_driver_dditable_t& t);
void fill_table(ze_device_dditable_t& t);
void fill_table(ze_context_dditable_t& t);
void fill_table(ze_mem_dditable_t& t);
void fill_table(ze_module_dditable_t& t);
void fill_table(ze_module_build_log_dditable_t& t);
void fill_table(ze_kernel_dditable_t& t);
void fill_table(ze_kernel_exp_dditable_t& t);
void fill_table(ze_command_queue_dditable_t& t);
void fill_table(ze_command_list_dditable_t& t);
void fill_table(ze_event_pool_dditable_t& t);
void fill_table(ze_event_dditable_t& t);
void fill_table(ze_fence_dditable_t& t);

// Runs `body(state, lock)` under the driver's mutex and turns any exception into a result code:
// nothing is thrown into the program.
template <typename Body>
ze_result_t locked(Body&& body) noexcept {
  try {
    State& s = State::get();
    std::unique_lock lock(s.mu);
    if (!s.initialised) return ZE_RESULT_ERROR_UNINITIALIZED;
    return body(s, lock);
  } catch (const std::bad_alloc&) {
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  } catch (...) {
    return ZE_RESULT_ERROR_UNKNOWN;
  }
}

// Looks `handle` up as a live object of `out`'s type, or returns the bad handle's result.
#define OAPROF_ZE_FIND(state, handle, out)                                                       \
  do {                                                                                           \
    if (const ze_result_t found_ = (state).find((handle), (out)); found_ != ZE_RESULT_SUCCESS) { \
      return found_;                                                                             \
    }                                                                                            \
  } while (0)

// The common shape of an entry point: under the lock, `handle` looked up as a live T, then
// `body(state, object)` (or `body(state, object, lock)` for one that waits).
template <typename T, typename Handle, typename Body>
ze_result_t with(Handle handle, Body&& body) noexcept {
  return locked([&](State& s, std::unique_lock<std::mutex>& lock) {
    T* object = nullptr;
    OAPROF_ZE_FIND(s, handle, object);
    if constexpr (std::is_invocable_v<Body, State&, T*, std::unique_lock<std::mutex>&>) {
      return body(s, object, lock);
    } else {
      return body(s, object);
    }
  });
}

// The count-then-array protocol for a property list of one entry, which `describe` fills.
template <typename Properties, typename Describe>
ze_result_t one_property(std::uint32_t* count, Properties* out, Describe describe) {
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count > 0 && out != nullptr) describe(out[0]);
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

// The count/array protocol of the zeXGet calls: with *count 0 or no array, says how many there
// are; else writes up to *count of them and says how many it wrote.
template <typename T>
ze_result_t list_out(std::uint32_t* count, T* out, const T* items, std::uint32_t n) {
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || out == nullptr) {
    *count = n;
    return ZE_RESULT_SUCCESS;
  }
  *count = std::min(*count, n);
  for (std::uint32_t i = 0; i < *count; ++i) out[i] = items[i];
  return ZE_RESULT_SUCCESS;
}

}  // namespace oaprof::gpu::level_zero_sim
