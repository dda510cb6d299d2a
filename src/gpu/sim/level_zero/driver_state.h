// The simulated Level Zero driver's objects and its model of execution, behind the entry points
// of entry_points.cc. A TEST DOUBLE: memory is plain host memory, copies and fills are done,
// kernels compute nothing; their execution is modelled on one engine per device: a kernel starts
// when the engine is free and its waits are signalled, and lasts a time given by its work-item
// count (kernel_duration_ns). Times are CLOCK_MONOTONIC nanoseconds inside; the device timer the
// program sees counts kTimerHz from the driver's start. Commands run on the host when they are
// submitted (in order, per queue or immediate list) unless they wait for an event nobody has
// signalled yet: then that queue holds them until the event is signalled. The host sees an
// event, fence or queue complete when CLOCK_MONOTONIC passes the modelled end.
//
// Every handle the program passes is looked up among the live objects first: a null handle
// answers ZE_RESULT_ERROR_INVALID_NULL_HANDLE, a destroyed or foreign one
// ZE_RESULT_ERROR_INVALID_ARGUMENT, never a crash. One mutex guards everything; waits release it.
//
// A launch of a kernel named kHangKernel hangs the device, for tests of a lost device: it never
// ends, nothing submitted runs after it, and every host wait (event, fence, queue) for what had
// not completed answers ZE_RESULT_ERROR_DEVICE_LOST, as compute-runtime's EventImp::
// hostSynchronize does once its command stream receiver saw the GPU hang
// (level_zero/core/source/event/event_impl.inl, intel/compute-runtime at 0204761). Queries
// (zeEventQueryStatus) still answer ZE_RESULT_NOT_READY there, and so here.
#pragma once

#include <level_zero/ze_api.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu/sim/level_zero/spirv_module.h"

namespace oaprof::gpu::level_zero_sim {

// The device timer: 12.5 MHz, so that timerResolution is exact in both of its units (80 ns a
// tick, 12,500,000 cycles a second). Kernel timestamps keep 32 bits and global ones 36, as Intel's
// GPUs report in kernelTimestampValidBits and timestampValidBits; counting from the driver's start,
// the 32 bits last 343 s.
inline constexpr std::uint64_t kTimerHz = 12'500'000;
inline constexpr std::uint64_t kNsPerTick = 1'000'000'000 / kTimerHz;
inline constexpr std::uint32_t kKernelTimestampBits = 32;
inline constexpr std::uint32_t kGlobalTimestampBits = 36;

// The model of a kernel's duration: a fixed launch cost plus one wave cost for every wave of
// `eus` × 7 threads × SIMD8 work items (see docs/level-zero.md).
inline constexpr std::uint64_t kLaunchCostNs = 2'000;
inline constexpr std::uint64_t kWaveCostNs = 1'000;
std::uint64_t kernel_duration_ns(std::uint64_t work_items, int eus);
// The most work-items a group may have, in all and in each dimension
// (zeDeviceGetComputeProperties).
inline constexpr std::uint32_t kMaxGroupSize = 256;
// A launch of this kernel hangs the device (above).
inline constexpr const char* kHangKernel = "sim_hang";
// A copy or fill: 20 GB/s, at least the launch cost of a blit.
std::uint64_t transfer_duration_ns(std::uint64_t bytes);

std::uint64_t monotonic_ns();

enum class Kind {
  kDriver,
  kDevice,
  kContext,
  kModule,
  kBuildLog,
  kKernel,
  kEventPool,
  kEvent,
  kQueue,
  kList,
  kFence
};

struct Object {
  explicit Object(Kind k) : kind(k) {}
  virtual ~Object() = default;
  const Kind kind;
};

struct Driver final : Object {
  static constexpr Kind kKind = Kind::kDriver;
  Driver() : Object(kKind) {}
};

struct Device final : Object {
  static constexpr Kind kKind = Kind::kDevice;
  Device() : Object(kKind) {}
};

struct Context final : Object {
  static constexpr Kind kKind = Kind::kContext;
  Context() : Object(kKind) {}
};

struct BuildLog final : Object {
  static constexpr Kind kKind = Kind::kBuildLog;
  BuildLog() : Object(kKind) {}
  std::string text;
};

struct Module final : Object {
  static constexpr Kind kKind = Kind::kModule;
  Module() : Object(kKind) {}
  SpirvModule spirv;
  int kernels_alive = 0;
};

struct Kernel final : Object {
  static constexpr Kind kKind = Kind::kKernel;
  Kernel() : Object(kKind) {}
  Module* module = nullptr;
  const SpirvKernel* spirv = nullptr;  // inside module->spirv
  std::array<std::uint32_t, 3> group_size{1, 1, 1};
  std::vector<bool> argument_set;
  ze_kernel_indirect_access_flags_t indirect_access = 0;
};

struct EventPool final : Object {
  static constexpr Kind kKind = Kind::kEventPool;
  EventPool() : Object(kKind) {}
  ze_event_pool_flags_t flags = 0;
  std::uint32_t count = 0;
  int events_alive = 0;
};

struct Event final : Object {
  static constexpr Kind kKind = Kind::kEvent;
  Event() : Object(kKind) {}
  EventPool* pool = nullptr;
  std::uint32_t index = 0;
  std::optional<std::uint64_t> signal_ns;  // when it is (or will be) signalled
  std::uint64_t start_ns = 0, end_ns = 0;  // the window of the command that signalled it
  bool timestamps() const { return (pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) != 0; }
};

struct Fence;

// One launch of a kernel as appended: the kernel's state then (a regular list replays it even
// when the kernel was changed or destroyed since), its group counts or where to read them.
struct Launch {
  std::string name;
  std::array<std::uint32_t, 3> group_size{1, 1, 1};
  ze_group_count_t groups{0, 0, 0};
  const ze_group_count_t* indirect = nullptr;  // read when the launch runs
};

struct Command {
  enum class Op {
    kLaunch,
    kCopy,
    kFill,
    kBarrier,
    kSignal,
    kWait,
    kReset,
    kGlobalTimestamp,
    kQueryTimestamps,
    kFence
  };
  Op op = Op::kBarrier;
  Event* signal = nullptr;
  std::vector<Event*> waits;
  std::vector<Launch> launches;
  const std::uint32_t* launch_count = nullptr;  // LaunchMultipleKernelsIndirect's count
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  std::vector<std::uint8_t> pattern;
  std::vector<Event*> events;  // kReset: the event; kQueryTimestamps: those to report
  Fence* fence = nullptr;
};

// Runs commands in order: a command queue, or an immediate list's own queue.
struct Executor {
  std::deque<Command> pending;  // held: the front waits for an event not yet signalled
  std::uint64_t last_end_ns = 0;
  bool synchronous = false;
};

struct Queue final : Object {
  static constexpr Kind kKind = Kind::kQueue;
  Queue() : Object(kKind) {}
  Executor executor;
};

struct CommandList final : Object {
  static constexpr Kind kKind = Kind::kList;
  CommandList() : Object(kKind) {}
  bool immediate = false;
  bool closed = false;
  std::vector<Command> recorded;  // a regular list's commands
  Executor executor;              // an immediate list's queue
};

struct Fence final : Object {
  static constexpr Kind kKind = Kind::kFence;
  Fence() : Object(kKind) {}
  Queue* queue = nullptr;
  std::optional<std::uint64_t> signal_ns;
};

struct Allocation {
  std::size_t bytes;
  ze_memory_type_t type;
};

// The driver's one instance: the live objects, the USM allocations and the engine's timeline.
class State {
 public:
  static State& get();

  std::mutex mu;
  std::condition_variable changed;  // an event, fence or queue may have completed

  const std::uint64_t origin_ns = monotonic_ns();
  Driver* driver = nullptr;  // the one driver and its one device, live for the process
  Device* device = nullptr;
  std::uint64_t engine_free_ns = 0;
  bool lost = false;  // a kHangKernel launch ran: nothing more runs
  bool initialised = false;
  std::map<std::uintptr_t, Allocation> allocations;

  // Takes ownership of `object` and returns it, now live.
  template <typename T>
  T* adopt(std::unique_ptr<T> object) {
    T* raw = object.get();
    live_.emplace(raw, std::move(object));
    return raw;
  }
  void destroy(const Object* object) { live_.erase(object); }
  // The live T behind `handle`, or the result code for a bad handle.
  template <typename T>
  ze_result_t find(const void* handle, T*& out) const {
    if (handle == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    const auto it = live_.find(handle);
    if (it == live_.end() || it->second->kind != T::kKind) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    out = static_cast<T*>(it->second.get());
    return ZE_RESULT_SUCCESS;
  }
  bool alive(const void* handle) const { return live_.count(handle) != 0; }

  // Executors with commands held or running: immediate lists' and queues'.
  void add_executor(Executor* e) { executors_.push_back(e); }
  void remove_executor(Executor* e);

  // Runs what each executor can run now, until none can run more, then wakes the waiters.
  void pump_all();
  // Hands `commands` to `executor` and runs what can run.
  void submit(Executor& executor, std::vector<Command> commands);
  // Waits (releasing `lock`) until `done()` or `timeout_ns` pass; `until_ns()` is the time the
  // awaited thing is modelled to end, if known. ZE_RESULT_NOT_READY after the timeout;
  // ZE_RESULT_ERROR_DEVICE_LOST at once where the device is lost and the awaited thing has no
  // modelled end (it would have run after the hang).
  template <typename Done, typename Until>
  ze_result_t wait(std::unique_lock<std::mutex>& lock, std::uint64_t timeout_ns, Done done,
                   Until until_ns);

  std::uint64_t ticks(std::uint64_t ns) const { return (ns - origin_ns) / kNsPerTick; }
  bool event_signalled(const Event& e) const {
    return e.signal_ns && *e.signal_ns <= monotonic_ns();
  }
  bool executor_idle(const Executor& e) const {
    return e.pending.empty() && e.last_end_ns <= monotonic_ns();
  }
  int eus() const;

 private:
  State();
  bool pump(Executor& executor);
  bool ready(const Command& command) const;
  void run(Executor& executor, Command& command);
  std::uint64_t run_launches(Command& command, std::uint64_t start_ns);
  std::uint64_t run_transfer(Command& command, std::uint64_t start_ns);

  std::unordered_map<const void*, std::unique_ptr<Object>> live_;
  std::vector<Executor*> executors_;
};

template <typename Done, typename Until>
ze_result_t State::wait(std::unique_lock<std::mutex>& lock, std::uint64_t timeout_ns, Done done,
                        Until until_ns) {
  const std::uint64_t now = monotonic_ns();
  const std::uint64_t deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
  for (;;) {
    if (done()) return ZE_RESULT_SUCCESS;
    const std::optional<std::uint64_t> end = until_ns();
    if (lost && !end) return ZE_RESULT_ERROR_DEVICE_LOST;
    const std::uint64_t t = monotonic_ns();
    if (t >= deadline) return ZE_RESULT_NOT_READY;
    std::uint64_t wake = deadline;
    if (end && *end < wake) wake = *end;
    // Wake at the modelled end at the latest, and within a second to re-check the deadline.
    wake = std::min(wake, t + 1'000'000'000);
    changed.wait_for(lock, std::chrono::nanoseconds(wake > t ? wake - t : 0));
  }
}

}  // namespace oaprof::gpu::level_zero_sim
