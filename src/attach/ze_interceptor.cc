#include "attach/ze_interceptor.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "attach/layer_link.h"
#include "attach/sampled_launches.h"
#include "attach/ze_events.h"
#include "base/monotonic_clock.h"
#include "ipc/wire.h"

namespace oaprof::attach::ze {

namespace wire = ipc::wire;

// One launch as the program appended it: its kernel's name and group size then (a regular list
// runs it so even after the kernel changed or went), its group counts or where to read them.
// LaunchMultipleKernelsIndirect: `name` joins every kernel's (for the selection), `names` holds
// each, and `count` is where the device reads how many of them run.
struct Appended {
  oa::LaunchApi api = oa::LaunchApi::kZeLaunchKernel;
  std::string name;
  std::vector<std::string> names;
  const std::uint32_t* count = nullptr;
  std::array<std::uint32_t, 3> size{1, 1, 1};
  ze_group_count_t groups{0, 0, 0};
  const ze_group_count_t* indirect = nullptr;
  ze_event_handle_t program_event = nullptr;  // the program's own signal event, if any
};

// One launch of a regular list's execution, in the order the device runs them.
struct Step {
  Gate gate;  // sampled attribution: `done` is the event that times the launch
  ze_command_list_handle_t list = nullptr;
  Appended launch;
  std::uint64_t id = 0;
  bool selected = false;
};

// What the first half of a call hands the second.
struct CallState {
  enum class Kind { kImmediate, kRecord, kExecute, kSampled } kind = Kind::kImmediate;
  std::unique_lock<std::mutex> lock;  // immediate and execute: held from the first half on
  wire::Launch record;
  Appended launch;                   // immediate lists: the launch, finished once it ran
  ze_event_handle_t ours = nullptr;  // an event of oaprof's given to the launch
  // Immediate lists: the layer gave up waiting for the launch's waits (Held below), and the
  // barrier of oaprof's still pending before it, given back once the launch ran.
  bool held = false;
  ze_event_handle_t pending = nullptr;
  ze_context_handle_t context = nullptr;
  ze_device_handle_t device = nullptr;
  // kRecord: the gate appended before the launch.
  Gate gate;
  // kExecute: the thread stepping through the gates, and its stop signal.
  std::thread stepper;
  std::atomic<bool> cancel{false};
  std::vector<Step> steps;
  // The program's thread and its call's time: the rows' (the stepper is the layer's thread).
  std::uint32_t tid = 0;
  std::uint64_t api_ns = 0;
  std::uint64_t queue = 0;
};

namespace {

Next g_next;
const char* g_way_in = "preload";

using base::monotonic_ns;

// How long the layer waits for the events a launch waits on (and, on a regular list, for what
// comes before it in the list) before it gives up bracketing the launch: a launch that waits on
// an event the host signals after the call (legal in Level Zero) would otherwise never start.
// Past it the launch is measured over a wider window (Held), with one warning. The list's
// earlier work on an immediate list, and the kernel itself, are waited for as long as they take
// (but for earlier work behind a held launch, which may wait on the host too).
// OAPROF_ZE_HOST_WAIT_MS shortens it for tests.
std::uint64_t host_wait_ns() {
  const std::chrono::milliseconds wait = layer_config().ze_host_wait.value_or(kDefaultZeHostWait);
  return static_cast<std::uint64_t>(std::chrono::nanoseconds(wait).count());
}
constexpr std::uint64_t kForever = UINT64_MAX;
// Held launches at once, at most: each keeps a pass open on the privileged side, which bounds
// them (session::Session::kMaxOpenLaunches).
constexpr std::size_t kMaxHeld = 1024;
constexpr std::uint64_t kWaitSliceNs = 1'000'000;

std::uint64_t handle(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

struct Recorded {
  Appended launch;
  Gate gate;
  bool appended = true;  // false: the append failed, only the gate is in the list
  // Sampled attribution: the event whose kernel timestamps time it (oaprof's when `ours`).
  ze_event_handle_t timed = nullptr;
  bool timed_ours = false;
};

// A sampled launch in the books (SampledLaunches' event): the event that times it, and whether
// the books give it back when done (an immediate launch's event of oaprof's).
struct Timed {
  ze_event_handle_t event = nullptr;
  bool give_back = false;
  bool gone = false;  // the program reset or destroyed it, or its list or context, first
  ze_command_list_handle_t list = nullptr;
  ze_context_handle_t context = nullptr;
  ze_device_handle_t device = nullptr;
  Appended launch;  // its counts and names are read once it completed
};

// A launch bracketed from the moment the layer gave up waiting for what it waits on (the host
// signals it after the call): its 'before' was taken then, its 'after' is taken once `done` is
// seen complete (at the program's next sync point, launch or execution, or at exit), so its
// counters cover more than its kernel, and its record says so (kLaunchNotBracketed). Its
// kernel_ns come from `timed`'s kernel timestamps, as for any launch.
struct Held {
  wire::Launch record;
  Appended launch;
  ze_event_handle_t done = nullptr;
  ze_event_handle_t timed = nullptr;
  std::array<ze_event_handle_t, 2> ours{};  // oaprof's events it holds: given back once it ran
  ze_command_list_handle_t list = nullptr;
  ze_context_handle_t context = nullptr;
  ze_device_handle_t device = nullptr;
};

struct ListInfo {
  ze_context_handle_t context = nullptr;
  ze_device_handle_t device = nullptr;
  bool immediate = false;
  std::vector<Recorded> recorded;
};

struct KernelInfo {
  std::string name;
  std::optional<std::array<std::uint32_t, 3>> size;  // as last set; else its required one
};

// How a wait for an event ended: signalled; given up on (the timeout passed, or `cancel`); or
// failed: the driver answered an error, such as ZE_RESULT_ERROR_DEVICE_LOST after a GPU hang,
// so the event will never be signalled and no launch behind it will run.
enum class Waited { kSignalled, kGaveUp, kFailed };

// Waits for `event` in slices, so that `cancel` can stop it. The deadline saturates: kForever
// added to the clock must not wrap to a deadline already past (which gave up after one slice).
// `error`: the driver's answer where it failed.
Waited wait_for(ze_event_handle_t event, std::uint64_t timeout_ns,
                const std::atomic<bool>* cancel = nullptr, ze_result_t* error = nullptr) {
  const std::uint64_t now = monotonic_ns();
  const std::uint64_t give_up = timeout_ns > kForever - now ? kForever : now + timeout_ns;
  for (;;) {
    const ze_result_t r = g_next.event_sync(event, kWaitSliceNs);
    if (r == ZE_RESULT_SUCCESS) return Waited::kSignalled;
    if (r != ZE_RESULT_NOT_READY) {
      if (error != nullptr) *error = r;
      return Waited::kFailed;
    }
    if (cancel != nullptr && cancel->load()) return Waited::kGaveUp;
    if (monotonic_ns() > give_up) return Waited::kGaveUp;
  }
}

bool signalled(ze_event_handle_t event, std::uint64_t timeout_ns,
               const std::atomic<bool>* cancel = nullptr) {
  return wait_for(event, timeout_ns, cancel) == Waited::kSignalled;
}

// zeKernelGetName's answer (the size includes the terminating NUL), or "?".
std::string kernel_name(ze_kernel_handle_t k) {
  std::size_t size = 0;
  if (g_next.kernel_name(k, &size, nullptr) != ZE_RESULT_SUCCESS || size == 0) return "?";
  std::vector<char> name(size + 1, '\0');
  if (g_next.kernel_name(k, &size, name.data()) != ZE_RESULT_SUCCESS) return "?";
  return std::string(name.data());
}

}  // namespace

namespace {

void flush_at_exit();

// How the wait before a bracketed launch went: done, given up on (the launch is held: measured
// over a wider window), or failed (the launch runs unmeasured).
enum class Drain { kDone, kHeld, kFailed };
// Where the stepper of a regular list's execution is: bracketing each launch, holding the rest
// (one of them waits on the host), or stopped (the rest run unmeasured).
enum class Stepping { kBracketing, kHolding, kStopped };

class Profiler {
 public:
  static Profiler& get() {
    static Profiler* p = new Profiler();  // never destroyed: calls may arrive during exit
    return *p;
  }

  CallState* before_launch(LaunchCall& call);
  void after_launch(const LaunchCall& call, ze_result_t result, CallState* s);
  CallState* before_execute(ze_command_queue_handle_t q, std::uint32_t n,
                            const ze_command_list_handle_t* lists);
  void after_execute(ze_result_t result, CallState* s);

  void list_created(ze_context_handle_t c, ze_device_handle_t d, ze_command_list_handle_t l,
                    bool immediate);
  void list_forget(ze_command_list_handle_t l, bool destroyed);
  void list_forget_locked(ze_command_list_handle_t l);
  void kernel_size(ze_kernel_handle_t k, std::array<std::uint32_t, 3> size);
  void kernel_forget(ze_kernel_handle_t k);
  void context_forget(ze_context_handle_t c);
  // After an internal error: off for good, the calls pass through.
  void fail(const char* where) noexcept;

  // Sampled attribution.
  void pool_created(ze_event_pool_handle_t pool, bool timestamps);
  void event_created(ze_event_pool_handle_t pool, ze_event_handle_t event);
  void event_forget(ze_event_handle_t event);
  void pool_forget(ze_event_pool_handle_t pool);
  std::size_t event_books_size();
  void sync_point(ze_event_handle_t gone);
  void device_lost();

 private:
  Profiler() = default;
  bool connected_locked();
  const KernelInfo& kernel_locked(ze_kernel_handle_t k);
  Appended appended_locked(const LaunchCall& call);
  CallState* record_append(LaunchCall& call, ListInfo& list, std::unique_lock<std::mutex> lock);
  CallState* measure_immediate(LaunchCall& call, ListInfo& list, std::unique_lock<std::mutex> lock);
  Drain drain(const LaunchCall& call, ze_context_handle_t context, ze_event_handle_t& pending);
  Drain barrier_waited(ze_command_list_handle_t list, ze_context_handle_t context,
                       std::uint32_t wait_count, ze_event_handle_t* waits, std::uint64_t timeout_ns,
                       ze_event_handle_t& pending);
  void warn_host_wait();
  void warn_wait_failed(ze_result_t error);
  // Held launches (Held).
  void hold_immediate(const LaunchCall& call, ze_result_t result, CallState& s);
  void hold_locked(Held h);
  void settle_held_locked();
  template <typename Pred>
  void drop_held_locked(Pred which);
  void settle_held_at_sync(ze_event_handle_t gone);
  void warn_held_lost();
  std::optional<wire::WorkHint> work_hint_of(const Appended& a, ze_context_handle_t c) const;
  wire::Launch base_record(const Appended& a, std::uint64_t id, std::uint64_t queue,
                           ze_context_handle_t c, ze_device_handle_t d) const;
  void finish_record(wire::Launch& rec, const Appended& a, ze_event_handle_t timed,
                     ze_context_handle_t c, ze_device_handle_t d);
  std::vector<Step> plan_execution(std::uint32_t n, const ze_command_list_handle_t* lists,
                                   bool measuring, ze_context_handle_t& c, ze_device_handle_t& d);

 public:
  void open_gates(std::uint32_t n, const ze_command_list_handle_t* lists) noexcept;

 private:
  void step_through(CallState& s, std::uint64_t queue);
  wire::Launch step_record(const CallState& s, const Step& step, std::uint64_t queue) const;
  Stepping hold_step(CallState& s, const Step& step, std::uint64_t queue);

  CallState* sample_launch(LaunchCall& call, ListInfo& list);
  bool time_launch(LaunchCall& call, ze_context_handle_t c, ze_event_handle_t& timed);
  bool has_timestamps_locked(ze_event_handle_t event) const;
  void after_sampled(const LaunchCall& call, ze_result_t result, CallState& s);
  void record_sampled(const LaunchCall& call, ze_result_t result, CallState& s, ListInfo& list);
  CallState* execute_sampled(ze_command_queue_handle_t q, std::uint32_t n,
                             const ze_command_list_handle_t* lists);
  void rearm_sampled(const std::vector<Step>& steps);
  void after_execute_sampled(ze_result_t result, CallState& s);
  void add_sampled(Timed* t, wire::Launch rec);
  SampledLaunches::Completion ask(Timed& t, wire::Launch& rec);
  void harvest_locked(SampledLaunches::Scope scope = SampledLaunches::Scope::kAll);
  // The launches in the books that `which` picks can no longer be read: their rows are dropped.
  template <typename Pred>
  void forget_timed_locked(Pred which);
  Stepping measure_step(CallState& s, const Step& step, std::uint64_t queue);

  std::mutex mu_;  // one measured launch at a time: snapshots must bracket exactly one kernel
  LayerLink link_{"Level Zero"};
  std::map<ze_kernel_handle_t, KernelInfo> kernels_;
  std::map<ze_command_list_handle_t, ListInfo> lists_;
  Events events_{g_next};
  std::atomic<bool> broken_{false};
  std::atomic<bool> waits_warned_{false};
  std::atomic<bool> wait_failed_warned_{false};
  std::atomic<bool> device_lost_warned_{false};
  std::atomic<bool> held_lost_warned_{false};
  // Bracketed attribution: the launches held by the host, and how many (read without the lock).
  std::vector<Held> held_;
  std::atomic<std::size_t> held_count_{0};
  std::atomic<bool> replay_warned_{false};
  // Sampled attribution: the launches waiting for their events, and which events have kernel
  // timestamps (the program's, by their pool's flags).
  SampledLaunches sampled_;
  AskPolicy ask_policy_;
  std::set<Timed*> in_flight_;
  // The program's pools: whether each has kernel timestamps, and its events; each event's pool.
  struct Pool {
    bool timestamps = false;
    std::set<ze_event_handle_t> events;
  };
  std::map<ze_event_pool_handle_t, Pool> pools_;
  std::map<ze_event_handle_t, ze_event_pool_handle_t> event_pools_;
  bool exit_hook_ = false;
};

bool Profiler::connected_locked() {
  if (broken_.load()) return false;
  bool forked = false;
  const bool connected = link_.ensure_connected(g_way_in, forked);
  if (connected && layer_config().replay.enabled()) {
    link_.warn_once(replay_warned_,
                    "kernel replay (--replay) is not built for Level Zero: its launches run once, "
                    "measured (docs/level-zero.md)");
  }
  // A forked child: the parent's events and lists are the parent's driver's.
  if (forked) {
    events_.forget();
    held_.clear();
    held_count_.store(0);
    for (Timed* t : in_flight_) delete t;
    in_flight_.clear();
    sampled_ = SampledLaunches{};
  }
  return connected;
}

// The name from zeKernelGetName (asked once per kernel handle, until its zeKernelDestroy), and
// the group size: as the program last set it, else the kernel's required one, else 1.
const KernelInfo& Profiler::kernel_locked(ze_kernel_handle_t k) {
  KernelInfo& info = kernels_[k];  // may hold a group size already, set before its first launch
  if (!info.name.empty()) return info;
  info.name = kernel_name(k);
  if (info.size) return info;
  ze_kernel_properties_t props{};
  props.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
  if (g_next.kernel_properties(k, &props) == ZE_RESULT_SUCCESS && props.requiredGroupSizeX != 0) {
    info.size = std::array<std::uint32_t, 3>{props.requiredGroupSizeX,
                                             std::max(1u, props.requiredGroupSizeY),
                                             std::max(1u, props.requiredGroupSizeZ)};
  }
  return info;
}

// What a launch call appends: one kernel, or for LaunchMultipleKernelsIndirect the names of all
// of them joined by '+' (one row: oaprof cannot bracket the kernels of one call apart).
Appended Profiler::appended_locked(const LaunchCall& call) {
  Appended a;
  a.api = call.api;
  for (std::uint32_t i = 0; i < call.kernel_count && call.kernels != nullptr; ++i) {
    const KernelInfo& k = kernel_locked(call.kernels[i]);
    if (i > 0) a.name += '+';
    a.name += k.name;
    if (call.count_buffer != nullptr) a.names.push_back(k.name);
    if (i == 0) a.size = k.size.value_or(std::array<std::uint32_t, 3>{1, 1, 1});
  }
  if (call.groups != nullptr) a.groups = *call.groups;
  a.indirect = call.indirect;
  a.count = call.count_buffer;
  a.program_event = call.signal != nullptr ? *call.signal : nullptr;
  return a;
}

CallState* Profiler::before_launch(LaunchCall& call) {
  std::unique_lock lock(mu_);
  if (!connected_locked()) return nullptr;
  const auto it = lists_.find(call.list);
  if (it == lists_.end()) return nullptr;  // a list the layer never saw created
  if (sampled_mode()) return sample_launch(call, it->second);
  if (it->second.immediate) return measure_immediate(call, it->second, std::move(lock));
  return record_append(call, it->second, std::move(lock));
}

// A regular list: the gate goes in before the launch; the launch is numbered and selected at
// each execution, not here.
CallState* Profiler::record_append(LaunchCall& call, ListInfo& list,
                                   std::unique_lock<std::mutex> lock) {
  auto s = std::make_unique<CallState>();
  s->kind = CallState::Kind::kRecord;
  s->context = list.context;
  if (!events_.open_gate(list.context, call, s->gate)) return nullptr;
  lock.unlock();
  return s.release();
}

// The list's earlier work, then the launch's waits: each a barrier of oaprof's, waited for.
// Earlier work behind a launch still held may wait on the host too, so it is waited for no
// longer than the launch's own waits. `pending`: the barrier's event when it was given up on.
Drain Profiler::drain(const LaunchCall& call, ze_context_handle_t context,
                      ze_event_handle_t& pending) {
  const bool behind_held =
      std::any_of(held_.begin(), held_.end(), [&](const Held& h) { return h.list == call.list; });
  const Drain earlier = barrier_waited(call.list, context, 0, nullptr,
                                       behind_held ? host_wait_ns() : kForever, pending);
  if (earlier != Drain::kDone || call.wait_count == 0) return earlier;
  return barrier_waited(call.list, context, call.wait_count, call.waits, host_wait_ns(), pending);
}

Drain Profiler::barrier_waited(ze_command_list_handle_t list, ze_context_handle_t context,
                               std::uint32_t wait_count, ze_event_handle_t* waits,
                               std::uint64_t timeout_ns, ze_event_handle_t& pending) {
  ze_event_handle_t ready = events_.take(context);
  if (ready == nullptr) return Drain::kFailed;
  if (g_next.append_barrier(list, ready, wait_count, waits) != ZE_RESULT_SUCCESS) {
    events_.give_back(ready);
    return Drain::kFailed;
  }
  ze_result_t error = ZE_RESULT_SUCCESS;
  switch (wait_for(ready, timeout_ns, nullptr, &error)) {
    case Waited::kSignalled:
      events_.give_back(ready);
      return Drain::kDone;
    case Waited::kGaveUp:
      // Still pending in the list: not used again before the launch behind it ran.
      warn_host_wait();
      pending = ready;
      return Drain::kHeld;
    case Waited::kFailed:
      // Never signalled now: kept out of the pool, so that nothing waits on it again.
      warn_wait_failed(error);
      return Drain::kFailed;
  }
  return Drain::kFailed;
}

void Profiler::warn_wait_failed(ze_result_t error) {
  char code[16];
  std::snprintf(code, sizeof code, "0x%x", static_cast<unsigned>(error));
  link_.warn_once(wait_failed_warned_,
                  std::string("Level Zero answered ") + code +
                      (error == ZE_RESULT_ERROR_DEVICE_LOST ? " (device lost)" : "") +
                      " to oaprof's wait for a launch's earlier work; that launch and those "
                      "behind it run unmeasured");
}

void Profiler::warn_host_wait() {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::nanoseconds(host_wait_ns()));
  link_.warn_once(waits_warned_,
                  "a Level Zero launch waits on an event that was not signalled within " +
                      std::to_string(ms.count()) +
                      " ms (signalled by the host after the call?); such launches are measured "
                      "over a wider window than their kernel and flagged not_bracketed "
                      "(docs/level-zero.md)");
}

CallState* Profiler::measure_immediate(LaunchCall& call, ListInfo& list,
                                       std::unique_lock<std::mutex> lock) {
  const std::uint64_t api_ns = monotonic_ns();
  const std::uint64_t id = link_.next_launch_id();
  Appended a = appended_locked(call);
  if (!link_.filter().select(a.name)) return nullptr;
  settle_held_locked();
  ze_event_handle_t pending = nullptr;
  const Drain drained = drain(call, list.context, pending);
  if (drained == Drain::kFailed) return nullptr;
  if (drained == Drain::kHeld && held_.size() >= kMaxHeld) {
    warn_held_lost();
    return nullptr;
  }
  if (!link_.snapshot(id, wire::Phase::kBefore, false, work_hint_of(a, list.context))) {
    return nullptr;
  }
  auto s = std::make_unique<CallState>();
  s->kind = CallState::Kind::kImmediate;
  s->held = drained == Drain::kHeld;
  s->pending = pending;
  s->context = list.context;
  s->device = list.device;
  s->record = base_record(a, id, handle(call.list), list.context, list.device);
  s->record.api_ns = api_ns;
  s->launch = std::move(a);
  if (*call.signal == nullptr) {
    // Kernel timestamps for the row: an event of oaprof's, which the program never sees.
    s->ours = events_.take(list.context);
    *call.signal = s->ours;
  }
  s->lock = std::move(lock);
  return s.release();
}

// The simulator's work hint for a launch, as the OpenCL layer sends it: the kernel's name and its
// work-items, its group counts times its group size. An indirect launch's counts are read now
// (the drain, or the gate, has let everything before it finish, so a copy that writes them has
// run); a launch of several kernels is no one catalogue kernel's work and gets none.
std::optional<wire::WorkHint> Profiler::work_hint_of(const Appended& a,
                                                     ze_context_handle_t c) const {
  if (!layer_config().work_hints || a.count != nullptr) return std::nullopt;
  ze_group_count_t groups = a.groups;
  if (a.indirect != nullptr && !read_host_visible(g_next, c, a.indirect, groups)) {
    return std::nullopt;
  }
  const std::array<std::uint64_t, 3> sizes{std::uint64_t{groups.groupCountX} * a.size[0],
                                           std::uint64_t{groups.groupCountY} * a.size[1],
                                           std::uint64_t{groups.groupCountZ} * a.size[2]};
  return work_hint(a.name, sizes);
}

wire::Launch Profiler::base_record(const Appended& a, std::uint64_t id, std::uint64_t queue,
                                   ze_context_handle_t c, ze_device_handle_t d) const {
  wire::Launch rec;
  rec.launch_id = id;
  rec.work_dim = 3;
  for (int i = 0; i < 3; ++i) rec.local[static_cast<std::size_t>(i)] = a.size[i];
  rec.queue = queue;
  rec.context = handle(c);
  rec.device = handle(d);
  rec.tid = static_cast<std::uint32_t>(current_tid());
  rec.api_ns = monotonic_ns();
  rec.api = a.api;
  rec.kernel_name = a.name;
  rec.flags = wire::kLaunchProgramIndex;
  return rec;
}

// The group counts (read now for an indirect launch, where host-readable), the kernels that ran
// (a multiple-indirect launch's count, read now), and the kernel's times from a kernel-timestamp
// event. Called once the launch ran: the device may have written the counts just before it.
void Profiler::finish_record(wire::Launch& rec, const Appended& a, ze_event_handle_t timed,
                             ze_context_handle_t c, ze_device_handle_t d) {
  ze_group_count_t groups = a.groups;
  if (a.indirect != nullptr && !read_host_visible(g_next, c, a.indirect, groups)) groups = {};
  std::uint32_t ran = 0;
  if (read_host_visible(g_next, c, a.count, ran) && ran > 0 && ran < a.names.size()) {
    rec.kernel_name = a.names[0];
    for (std::uint32_t i = 1; i < ran; ++i) rec.kernel_name += '+' + a.names[i];
  }
  const std::uint32_t counts[3] = {groups.groupCountX, groups.groupCountY, groups.groupCountZ};
  for (std::size_t i = 0; i < 3; ++i) rec.global[i] = std::uint64_t{counts[i]} * rec.local[i];
  if (timed == nullptr) return;
  const std::optional<KernelTimes> t = events_.kernel_times(timed, d);
  if (!t) return;
  rec.profiled = true;
  rec.queued_ns = rec.submit_ns = rec.start_ns = t->start_ns;
  rec.end_ns = t->end_ns;
}

void Profiler::after_launch(const LaunchCall& call, ze_result_t result, CallState* raw) {
  std::unique_ptr<CallState> s(raw);
  if (s->kind == CallState::Kind::kSampled) return after_sampled(call, result, *s);
  if (s->kind == CallState::Kind::kRecord) {
    std::lock_guard lock(mu_);
    const auto it = lists_.find(call.list);
    if (it == lists_.end()) return;
    Recorded r;
    r.launch = appended_locked(call);
    r.launch.program_event = s->gate.program_event;
    r.gate = s->gate;
    r.appended = result == ZE_RESULT_SUCCESS;
    events_.close_gate(call.list, r.appended, r.gate);
    it->second.recorded.push_back(std::move(r));
    return;
  }
  if (s->held) return hold_immediate(call, result, *s);
  // Immediate: the kernel ran (or failed to go in); the 'after' closes the pass either way.
  ze_event_handle_t done = s->ours != nullptr ? s->ours : *call.signal;
  if (result == ZE_RESULT_SUCCESS && done != nullptr && !signalled(done, kForever)) {
    s->record.flags |= wire::kLaunchDrainFailed;
  }
  const bool measured = link_.snapshot(s->record.launch_id, wire::Phase::kAfter);
  if (result == ZE_RESULT_SUCCESS && measured) {
    finish_record(s->record, s->launch, done, s->context, s->device);
    link_.post(s->record);
  }
  if (s->ours != nullptr) events_.give_back(s->ours);
}

// An immediate launch whose waits the layer gave up on: its 'after' comes once it ran (Held).
// One that did not go in closes its pass at once, without a row.
void Profiler::hold_immediate(const LaunchCall& call, ze_result_t result, CallState& s) {
  ze_event_handle_t done = s.ours != nullptr ? s.ours : *call.signal;
  if (result != ZE_RESULT_SUCCESS || done == nullptr) {
    link_.snapshot(s.record.launch_id, wire::Phase::kAfter);
    if (result != ZE_RESULT_SUCCESS) events_.give_back(s.ours);
    return;
  }
  s.record.flags |= wire::kLaunchNotBracketed;
  hold_locked(Held{std::move(s.record),
                   std::move(s.launch),
                   done,
                   done,
                   {s.ours, s.pending},
                   call.list,
                   s.context,
                   s.device});
}

void Profiler::hold_locked(Held h) {
  held_.push_back(std::move(h));
  held_count_.store(held_.size());
  if (!exit_hook_) exit_hook_ = std::atexit(flush_at_exit) == 0;
}

// The held launches that ran get their 'after' and their row, in the order they were held;
// the others wait for a later call.
void Profiler::settle_held_locked() {
  if (held_.empty()) return;
  for (auto it = held_.begin(); it != held_.end();) {
    if (g_next.event_status(it->done) != ZE_RESULT_SUCCESS) {
      ++it;
      continue;
    }
    if (link_.snapshot(it->record.launch_id, wire::Phase::kAfter)) {
      finish_record(it->record, it->launch, it->timed, it->context, it->device);
      link_.post(it->record);
    }
    for (ze_event_handle_t e : it->ours) events_.give_back(e);
    it = held_.erase(it);
  }
  held_count_.store(held_.size());
}

// Held launches that `which` picks can no longer be seen complete (their event, list or context
// goes, or their gates are re-armed): they have no row, and one warning says so. Their events
// of oaprof's may still be signalled by the device, so they are not used again.
template <typename Pred>
void Profiler::drop_held_locked(Pred which) {
  settle_held_locked();
  const std::size_t before = held_.size();
  std::erase_if(held_, which);
  held_count_.store(held_.size());
  if (held_.size() != before) warn_held_lost();
}

void Profiler::warn_held_lost() {
  link_.warn_once(held_lost_warned_,
                  "a Level Zero launch held by the host has no row: more than 1024 were held at "
                  "once, or its event was reset or destroyed, or its list reset, destroyed or "
                  "executed again, before it completed (docs/level-zero.md)");
}

// At the program's sync points. Without an event going, only when the layer is free: a sync
// point never waits for a launch or execution being measured on another thread.
void Profiler::settle_held_at_sync(ze_event_handle_t gone) {
  if (held_count_.load() == 0) return;
  std::unique_lock lock(mu_, std::defer_lock);
  if (gone != nullptr) {
    lock.lock();  // the event must not be read after the program destroyed it
  } else if (!lock.try_lock()) {
    return;
  }
  settle_held_locked();
  if (gone != nullptr) {
    drop_held_locked([gone](const Held& h) { return h.done == gone || h.timed == gone; });
  }
}

// The launches of an execution in the order the device runs them: each gets the program's next
// launch index and the selection's verdict; the gates of those not measured open at once.
std::vector<Step> Profiler::plan_execution(std::uint32_t n, const ze_command_list_handle_t* lists,
                                           bool measuring, ze_context_handle_t& c,
                                           ze_device_handle_t& d) {
  std::vector<Step> steps;
  for (std::uint32_t i = 0; i < n && lists != nullptr; ++i) {
    const auto it = lists_.find(lists[i]);
    if (it == lists_.end()) continue;
    c = it->second.context;
    d = it->second.device;
    for (const Recorded& r : it->second.recorded) {
      Step step;
      step.gate = r.gate;
      step.list = lists[i];
      step.launch = r.launch;
      if (r.appended) {
        step.id = link_.next_launch_id();
        step.selected = measuring && link_.filter().select(r.launch.name);
      }
      events_.rearm(step.gate);
      if (!step.selected) events_.open(step.gate);
      steps.push_back(std::move(step));
    }
  }
  return steps;
}

// The gates of the lists' recorded launches open as the execution goes: at once for launches
// not measured (and for all of them when nothing is measured: a gate left shut would hold the
// program's list for ever), one by one by the stepper for the others.
CallState* Profiler::before_execute(ze_command_queue_handle_t q, std::uint32_t n,
                                    const ze_command_list_handle_t* lists) {
  if (sampled_mode()) return execute_sampled(q, n, lists);
  std::unique_lock lock(mu_);
  const bool measuring = connected_locked();
  // Held launches of these lists that did not run yet lose their gates' events to the re-arm.
  drop_held_locked([&](const Held& h) {
    return lists != nullptr && std::find(lists, lists + n, h.list) != lists + n;
  });
  auto s = std::make_unique<CallState>();
  s->kind = CallState::Kind::kExecute;
  s->tid = static_cast<std::uint32_t>(current_tid());
  s->api_ns = monotonic_ns();
  s->steps = plan_execution(n, lists, measuring, s->context, s->device);
  const bool any =
      std::any_of(s->steps.begin(), s->steps.end(), [](const Step& step) { return step.selected; });
  if (!any) return nullptr;
  s->lock = std::move(lock);
  const std::uint64_t queue = handle(q);
  CallState* state = s.get();
  s->stepper = std::thread([this, state, queue] { step_through(*state, queue); });
  return s.release();
}

// After an internal error in before_execute: every gate of the lists opens, so that the
// program's lists run (unmeasured).
void Profiler::open_gates(std::uint32_t n, const ze_command_list_handle_t* lists) noexcept {
  try {
    std::lock_guard lock(mu_);
    for (std::uint32_t i = 0; i < n && lists != nullptr; ++i) {
      const auto it = lists_.find(lists[i]);
      if (it == lists_.end()) continue;
      for (const Recorded& r : it->second.recorded) {
        events_.rearm(r.gate);
        events_.open(r.gate);
      }
    }
  } catch (...) {
    // Nothing more can be done: the mutex or the books are gone.
  }
}

// The stepper: each measured launch between its gate and its end. Once a gate waits on the
// host for longer than the layer waits, that launch and every measured one after it in the
// execution are held (Held): each gets its 'before' now, its gate opens, and its 'after' comes
// once it ran, so that the program's call returns and the host can signal. Once a gate cannot
// be reached otherwise (the execution failed, a snapshot failed), every gate left opens at once
// and those launches run unmeasured.
void Profiler::step_through(CallState& s, std::uint64_t queue) {
  Stepping stepping = Stepping::kBracketing;
  for (const Step& step : s.steps) {
    if (step.selected && stepping == Stepping::kBracketing) {
      stepping = measure_step(s, step, queue);
    }
    if (step.selected && stepping == Stepping::kHolding) stepping = hold_step(s, step, queue);
    if (stepping != Stepping::kBracketing) events_.open(step.gate);
  }
}

wire::Launch Profiler::step_record(const CallState& s, const Step& step,
                                   std::uint64_t queue) const {
  wire::Launch rec = base_record(step.launch, step.id, queue, s.context, s.device);
  rec.tid = s.tid;
  rec.api_ns = s.api_ns;
  return rec;
}

Stepping Profiler::measure_step(CallState& s, const Step& step, std::uint64_t queue) {
  ze_result_t error = ZE_RESULT_SUCCESS;
  switch (wait_for(step.gate.ready, host_wait_ns(), &s.cancel, &error)) {
    case Waited::kSignalled:
      break;
    case Waited::kGaveUp:
      if (s.cancel.load()) return Stepping::kStopped;
      warn_host_wait();
      return Stepping::kHolding;
    case Waited::kFailed:
      warn_wait_failed(error);
      return Stepping::kStopped;
  }
  wire::Launch rec = step_record(s, step, queue);
  if (!link_.snapshot(step.id, wire::Phase::kBefore, false, work_hint_of(step.launch, s.context))) {
    return Stepping::kStopped;
  }
  events_.open(step.gate);
  if (!signalled(step.gate.done, kForever, &s.cancel)) rec.flags |= wire::kLaunchDrainFailed;
  if (!link_.snapshot(step.id, wire::Phase::kAfter)) return Stepping::kStopped;
  const ze_event_handle_t timed =
      step.gate.done_is_kernels ? step.gate.done : step.launch.program_event;
  finish_record(rec, step.launch, timed, s.context, s.device);
  return link_.post(rec) ? Stepping::kBracketing : Stepping::kStopped;
}

// A launch of an execution that holds: its 'before' now (its gate opens after it), its 'after'
// once its `done` is seen complete. The execution's lock is the program's thread's, held until
// this thread ends, so the held books are this thread's meanwhile.
Stepping Profiler::hold_step(CallState& s, const Step& step, std::uint64_t queue) {
  if (step.gate.done == nullptr || held_.size() >= kMaxHeld) {
    if (step.gate.done != nullptr) warn_held_lost();
    return Stepping::kHolding;  // this one runs unmeasured; the next may still be held
  }
  wire::Launch rec = step_record(s, step, queue);
  rec.flags |= wire::kLaunchNotBracketed;
  if (!link_.snapshot(step.id, wire::Phase::kBefore, false, work_hint_of(step.launch, s.context))) {
    return Stepping::kStopped;
  }
  const ze_event_handle_t timed =
      step.gate.done_is_kernels ? step.gate.done : step.launch.program_event;
  hold_locked(
      Held{std::move(rec), step.launch, step.gate.done, timed, {}, step.list, s.context, s.device});
  return Stepping::kHolding;
}

void Profiler::after_execute(ze_result_t result, CallState* raw) {
  std::unique_ptr<CallState> s(raw);
  if (s->kind == CallState::Kind::kSampled) return after_execute_sampled(result, *s);
  if (result != ZE_RESULT_SUCCESS) s->cancel.store(true);  // the lists never ran
  if (s->stepper.joinable()) s->stepper.join();
}

void Profiler::list_created(ze_context_handle_t c, ze_device_handle_t d, ze_command_list_handle_t l,
                            bool immediate) {
  std::lock_guard lock(mu_);
  list_forget_locked(l);  // a handle the driver gives again
  ListInfo& info = lists_[l];
  info.context = c;
  info.device = d;
  info.immediate = immediate;
}

// Reset or destroyed: its recorded launches are gone, and their gates' events come back.
void Profiler::list_forget_locked(ze_command_list_handle_t l) {
  const auto it = lists_.find(l);
  if (it == lists_.end()) return;
  if (sampled_mode()) {
    // A sync point: its launches' events are read before they go.
    harvest_locked();
    forget_timed_locked([l](const Timed& t) { return t.list == l; });
  }
  drop_held_locked([l](const Held& h) { return h.list == l; });
  for (const Recorded& r : it->second.recorded) {
    events_.release(r.gate);
    if (r.timed_ours) events_.give_back(r.timed);
  }
  it->second.recorded.clear();
}

void Profiler::list_forget(ze_command_list_handle_t l, bool destroyed) {
  std::lock_guard lock(mu_);
  list_forget_locked(l);
  if (destroyed) lists_.erase(l);
}

void Profiler::kernel_size(ze_kernel_handle_t k, std::array<std::uint32_t, 3> size) {
  std::lock_guard lock(mu_);
  kernels_[k].size = size;  // the name is asked at its first launch
}

void Profiler::kernel_forget(ze_kernel_handle_t k) {
  std::lock_guard lock(mu_);
  kernels_.erase(k);  // the handle may come back for another kernel
}

// Before the program's zeContextDestroy: oaprof's event pools of it go first (the driver would
// refuse to destroy a context with pools alive), with the lists recorded in it.
void Profiler::context_forget(ze_context_handle_t c) {
  std::lock_guard lock(mu_);
  if (sampled_mode()) {
    harvest_locked();
    forget_timed_locked([c](const Timed& t) { return t.context == c; });
  }
  drop_held_locked([c](const Held& h) { return h.context == c; });
  for (auto it = lists_.begin(); it != lists_.end();) {
    if (it->second.context != c) {
      ++it;
      continue;
    }
    list_forget_locked(it->first);
    it = lists_.erase(it);
  }
  events_.forget_context(c);
}

// Sampled attribution: the launch goes in at once, with no drain and no snapshot, timed by a
// kernel-timestamp event that is read at the program's sync points (sync_point).
CallState* Profiler::sample_launch(LaunchCall& call, ListInfo& list) {
  auto s = std::make_unique<CallState>();
  s->kind = CallState::Kind::kSampled;
  s->context = list.context;
  s->device = list.device;
  if (list.immediate) {
    // Numbered and selected now (a regular list's launches: at each execution). A launch not
    // selected gets no event of oaprof's: one still pending could not be given back.
    s->api_ns = monotonic_ns();
    s->launch = appended_locked(call);
    s->record = base_record(s->launch, link_.next_launch_id(), handle(call.list), list.context,
                            list.device);
    s->record.api_ns = s->api_ns;
    if (!link_.filter().select(s->launch.name)) return nullptr;
  }
  s->gate.program_event = *call.signal;
  s->gate.done_is_kernels = time_launch(call, list.context, s->gate.done);
  return s.release();
}

// The event whose kernel timestamps time the launch: the program's own where its pool has them
// (read, never changed); else one of oaprof's, given to the launch in the program's place (true).
// Kernel timestamps of an event from another pool are undefined (ze_api.h of libze-dev 1.8.12,
// zeEventQueryKernelTimestamp), hence the pools' flags in the books.
bool Profiler::time_launch(LaunchCall& call, ze_context_handle_t c, ze_event_handle_t& timed) {
  timed = *call.signal;
  if (timed != nullptr && has_timestamps_locked(timed)) return false;
  timed = events_.take(c);
  if (timed == nullptr) return false;
  *call.signal = timed;
  return true;
}

// The program's own event, where oaprof's took its place, is signalled by a barrier after the
// launch once oaprof's is: it means what it meant, the kernel's end.
void Profiler::after_sampled(const LaunchCall& call, ze_result_t result, CallState& s) {
  std::lock_guard lock(mu_);
  const Gate& g = s.gate;
  const bool ok = result == ZE_RESULT_SUCCESS && g.done != nullptr;
  if (ok && g.done_is_kernels && g.program_event != nullptr) {
    ze_event_handle_t ours = g.done;
    g_next.append_barrier(call.list, g.program_event, 1, &ours);
  }
  const auto it = lists_.find(call.list);
  if (it != lists_.end() && !it->second.immediate)
    return record_sampled(call, result, s, it->second);
  if (!ok) {
    if (g.done_is_kernels) events_.give_back(g.done);
    return;
  }
  add_sampled(new Timed{g.done, g.done_is_kernels, false, call.list, s.context, s.device, s.launch},
              std::move(s.record));
}

void Profiler::record_sampled(const LaunchCall& call, ze_result_t result, CallState& s,
                              ListInfo& list) {
  Recorded r;
  r.launch = appended_locked(call);
  r.launch.program_event = s.gate.program_event;
  r.appended = result == ZE_RESULT_SUCCESS;
  r.timed = s.gate.done;
  r.timed_ours = s.gate.done_is_kernels;
  if (!r.appended && r.timed_ours) {
    events_.give_back(r.timed);
    r.timed = nullptr;
    r.timed_ours = false;
  }
  list.recorded.push_back(std::move(r));
}

// A regular list's execution: each recorded launch is numbered and selected as bracketed ones
// are, and its event of oaprof's reset for it.
CallState* Profiler::execute_sampled(ze_command_queue_handle_t q, std::uint32_t n,
                                     const ze_command_list_handle_t* lists) {
  std::lock_guard lock(mu_);
  if (!connected_locked()) return nullptr;
  auto s = std::make_unique<CallState>();
  s->kind = CallState::Kind::kSampled;
  s->tid = static_cast<std::uint32_t>(current_tid());
  s->api_ns = monotonic_ns();
  s->queue = handle(q);
  for (std::uint32_t i = 0; i < n && lists != nullptr; ++i) {
    const auto it = lists_.find(lists[i]);
    if (it == lists_.end()) continue;
    for (const Recorded& r : it->second.recorded) {
      if (!r.appended) continue;
      Step step;
      step.list = lists[i];
      step.launch = r.launch;
      step.gate.done = r.timed;
      step.gate.done_is_kernels = r.timed_ours;
      step.id = link_.next_launch_id();
      step.selected = r.timed != nullptr && link_.filter().select(r.launch.name);
      s->steps.push_back(std::move(step));
    }
  }
  rearm_sampled(s->steps);
  return s.release();
}

// oaprof's events are reset before the list runs again. Where the list's previous execution
// still runs (executed again before the program synchronised), its events are waited for
// first, or its rows would be lost: the one wait of sampled attribution that the program did
// not ask for (docs/level-zero.md).
void Profiler::rearm_sampled(const std::vector<Step>& steps) {
  bool waited = false;
  for (const Step& step : steps) {
    if (!step.gate.done_is_kernels) continue;
    for (const Timed* t : in_flight_) {
      if (t->event != step.gate.done) continue;
      wait_for(step.gate.done, kForever);
      waited = true;
    }
  }
  if (waited) harvest_locked();
  for (const Step& step : steps) {
    if (step.gate.done_is_kernels) g_next.event_reset(step.gate.done);
  }
}

void Profiler::after_execute_sampled(ze_result_t result, CallState& s) {
  if (result != ZE_RESULT_SUCCESS) return;  // the lists never ran
  std::lock_guard lock(mu_);
  for (const Step& step : s.steps) {
    if (!step.selected) continue;
    const auto it = lists_.find(step.list);
    if (it == lists_.end()) continue;
    const ListInfo& list = it->second;
    wire::Launch rec = base_record(step.launch, step.id, s.queue, list.context, list.device);
    rec.tid = s.tid;
    rec.api_ns = s.api_ns;
    add_sampled(
        new Timed{step.gate.done, false, false, step.list, list.context, list.device, step.launch},
        std::move(rec));
  }
}

void flush_at_exit() { sync_point(); }

// Into the books; its group counts are read once it completed (ask).
void Profiler::add_sampled(Timed* t, wire::Launch rec) {
  if (sampled_.in_flight() >= SampledLaunches::kMaxInFlight) {
    // A program that never synchronises: wait for its oldest launch rather than grow the books.
    wait_for(static_cast<Timed*>(sampled_.oldest_event())->event, kForever);
    harvest_locked(SampledLaunches::Scope::kOldest);
  }
  const std::uint64_t called_ns = rec.api_ns;
  in_flight_.insert(t);
  sampled_.add(t, std::move(rec), false);
  if (!exit_hook_) exit_hook_ = std::atexit(flush_at_exit) == 0;
  // Between the program's sync points only where waiting for the next would cost more.
  if (ask_policy_.due(sampled_, called_ns)) {
    harvest_locked(SampledLaunches::Scope::kOldest);
  } else if (link_.backlog()) {
    link_.post_kept(false);
  }
}

SampledLaunches::Completion Profiler::ask(Timed& t, wire::Launch& rec) {
  using State = SampledLaunches::Completion::State;
  SampledLaunches::Completion c;
  const ze_result_t status =
      t.gone ? ZE_RESULT_ERROR_INVALID_ARGUMENT : g_next.event_status(t.event);
  if (status == ZE_RESULT_NOT_READY) return c;
  const std::optional<Events::HostWindow> w =
      status == ZE_RESULT_SUCCESS ? events_.host_window(t.event, t.device) : std::nullopt;
  if (!w) {
    c.state = State::kFailed;
    return c;
  }
  finish_record(rec, t.launch, nullptr, t.context, t.device);
  c.state = State::kComplete;
  c.queued_ns = c.submit_ns = c.start_ns = w->device.start_ns;
  c.end_ns = w->device.end_ns;
  c.host_start_ns = w->host_start_ns;
  c.host_end_ns = w->host_end_ns;
  c.clock = oa::ClockCalibration::kDeviceAndHostTimer;
  return c;
}

void Profiler::harvest_locked(SampledLaunches::Scope scope) {
  if (link_.disabled()) return;
  if (sampled_.in_flight() > 0) {
    link_.keep(sampled_.harvest(
        [this](void* t, wire::Launch& rec) { return ask(*static_cast<Timed*>(t), rec); },
        [this](void* raw) {
          Timed* t = static_cast<Timed*>(raw);
          if (t->give_back) events_.give_back(t->event);
          in_flight_.erase(t);
          delete t;
        },
        scope));
  }
  // At a sync point (kAll) every record goes, waiting for room in the channel if need be;
  // between sync points what fits, the rest at the next launches (LayerLink::post_kept).
  if (link_.unposted() > 0) link_.post_kept(/*wait=*/scope == SampledLaunches::Scope::kAll);
}

template <typename Pred>
void Profiler::forget_timed_locked(Pred which) {
  bool any = false;
  for (Timed* t : in_flight_) {
    if (!which(*t)) continue;
    t->gone = true;
    any = true;
  }
  if (any) harvest_locked();
}

void Profiler::pool_created(ze_event_pool_handle_t pool, bool timestamps) {
  std::lock_guard lock(mu_);
  Pool& p = pools_[pool];  // a handle the driver gives again starts afresh
  for (ze_event_handle_t e : p.events) event_pools_.erase(e);
  p = Pool{timestamps, {}};
}

void Profiler::event_created(ze_event_pool_handle_t pool, ze_event_handle_t event) {
  std::lock_guard lock(mu_);
  const auto it = pools_.find(pool);
  if (it == pools_.end()) return;  // a pool made before the layer was ready
  if (const auto old = event_pools_.find(event); old != event_pools_.end()) {
    pools_[old->second].events.erase(event);  // a handle the driver gives again
  }
  it->second.events.insert(event);
  event_pools_[event] = pool;
}

bool Profiler::has_timestamps_locked(ze_event_handle_t event) const {
  const auto e = event_pools_.find(event);
  if (e == event_pools_.end()) return false;
  const auto p = pools_.find(e->second);
  return p != pools_.end() && p->second.timestamps;
}

void Profiler::event_forget(ze_event_handle_t event) {
  std::lock_guard lock(mu_);
  const auto e = event_pools_.find(event);
  if (e == event_pools_.end()) return;
  if (const auto p = pools_.find(e->second); p != pools_.end()) p->second.events.erase(event);
  event_pools_.erase(e);
}

// A pool destroyed with events still alive (the driver may refuse it, but its entry must not
// outlive it): its events go with it.
void Profiler::pool_forget(ze_event_pool_handle_t pool) {
  std::lock_guard lock(mu_);
  const auto p = pools_.find(pool);
  if (p == pools_.end()) return;
  for (ze_event_handle_t e : p->second.events) event_pools_.erase(e);
  pools_.erase(p);
}

std::size_t Profiler::event_books_size() {
  std::lock_guard lock(mu_);
  return pools_.size() + event_pools_.size();
}

// What completed is read and posted; an event the program is about to reset or destroy is
// read first, and its launch's row dropped if it had not completed.
void Profiler::sync_point(ze_event_handle_t gone) {
  if (link_.connected_pid() != current_pid()) return;
  if (!sampled_mode()) return settle_held_at_sync(gone);
  std::lock_guard lock(mu_);
  harvest_locked();
  if (gone != nullptr) forget_timed_locked([gone](const Timed& t) { return t.event == gone; });
}

// The driver said the device is lost (a GPU hang): launches that had not completed never will.
// Under sampled attribution what did complete is read first; the rest have no row, so that the
// launches that ran beside them no longer wait for them to be ready. Bracketed attribution
// waited for each launch already (its held ones simply never settle).
void Profiler::device_lost() {
  if (link_.connected_pid() != current_pid() || !sampled_mode()) return;
  std::lock_guard lock(mu_);
  harvest_locked();
  if (sampled_.in_flight() == 0) return;
  link_.warn_once(device_lost_warned_,
                  "Level Zero reported the device lost (ZE_RESULT_ERROR_DEVICE_LOST): launches "
                  "that had not completed then, or were launched after, have no row");
  forget_timed_locked([](const Timed&) { return true; });
}

void Profiler::fail(const char* where) noexcept {
  if (broken_.exchange(true)) return;
  std::fprintf(stderr,
               "oaprof layer: internal error in %s; Level Zero calls pass through unmeasured from "
               "here on\n",
               where);
}

// Every entry below catches what the books may throw (out of memory): the program's call goes
// on as if the layer were not there.
template <typename Fn>
auto guarded(const char* where, Fn&& fn) noexcept -> decltype(fn()) {
  try {
    return fn();
  } catch (...) {
    Profiler::get().fail(where);
    return decltype(fn())();
  }
}

}  // namespace

Next& next() { return g_next; }

void set_way_in(const char* name) { g_way_in = name; }

bool load_next(void* (*lookup)(const char* name), const char** missing) {
  Next n;
  bool ok = true;
  auto get = [&](auto& slot, const char* name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(lookup(name));
    if (slot == nullptr && ok) {
      ok = false;
      *missing = name;
    }
  };
  get(n.init, "zeInit");
  get(n.append_barrier, "zeCommandListAppendBarrier");
  get(n.append_wait, "zeCommandListAppendWaitOnEvents");
  get(n.pool_create, "zeEventPoolCreate");
  get(n.pool_destroy, "zeEventPoolDestroy");
  get(n.event_create, "zeEventCreate");
  get(n.event_destroy, "zeEventDestroy");
  get(n.event_signal, "zeEventHostSignal");
  get(n.event_sync, "zeEventHostSynchronize");
  get(n.event_reset, "zeEventHostReset");
  get(n.event_timestamp, "zeEventQueryKernelTimestamp");
  get(n.event_status, "zeEventQueryStatus");
  get(n.global_timestamps, "zeDeviceGetGlobalTimestamps");
  get(n.kernel_name, "zeKernelGetName");
  get(n.kernel_properties, "zeKernelGetProperties");
  get(n.device_properties, "zeDeviceGetProperties");
  get(n.alloc_properties, "zeMemGetAllocProperties");
  if (ok) g_next = n;
  return ok;
}

CallState* before_launch(LaunchCall& call) noexcept {
  return guarded("a launch", [&] { return Profiler::get().before_launch(call); });
}

void after_launch(const LaunchCall& call, ze_result_t result, CallState* state) noexcept {
  if (state == nullptr) return;
  guarded("a launch", [&] { Profiler::get().after_launch(call, result, state); });
}

CallState* before_execute(ze_command_queue_handle_t queue, std::uint32_t count,
                          const ze_command_list_handle_t* lists) noexcept {
  CallState* state = nullptr;
  const bool ok = guarded("an execution", [&] {
    state = Profiler::get().before_execute(queue, count, lists);
    return true;
  });
  if (!ok) Profiler::get().open_gates(count, lists);
  return state;
}

void after_execute(ze_result_t result, CallState* state) noexcept {
  if (state == nullptr) return;
  guarded("an execution", [&] { Profiler::get().after_execute(result, state); });
}

void list_created(ze_context_handle_t context, ze_device_handle_t device,
                  ze_command_list_handle_t list, bool immediate) noexcept {
  guarded("a list's creation",
          [&] { Profiler::get().list_created(context, device, list, immediate); });
}

void list_reset(ze_command_list_handle_t list) noexcept {
  guarded("a list's reset", [&] { Profiler::get().list_forget(list, false); });
}

void list_destroyed(ze_command_list_handle_t list) noexcept {
  guarded("a list's destruction", [&] { Profiler::get().list_forget(list, true); });
}

void kernel_group_size(ze_kernel_handle_t kernel, std::uint32_t x, std::uint32_t y,
                       std::uint32_t z) noexcept {
  guarded("a group size", [&] { Profiler::get().kernel_size(kernel, {x, y, z}); });
}

void kernel_destroyed(ze_kernel_handle_t kernel) noexcept {
  guarded("a kernel's destruction", [&] { Profiler::get().kernel_forget(kernel); });
}

void context_destroying(ze_context_handle_t context) noexcept {
  guarded("a context's destruction", [&] { Profiler::get().context_forget(context); });
}

void event_pool_created(ze_event_pool_handle_t pool, const ze_event_pool_desc_t* desc) noexcept {
  const bool timestamps = desc != nullptr && (desc->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
  guarded("an event pool's creation", [&] { Profiler::get().pool_created(pool, timestamps); });
}

void event_created(ze_event_pool_handle_t pool, ze_event_handle_t event) noexcept {
  guarded("an event's creation", [&] { Profiler::get().event_created(pool, event); });
}

void event_destroying(ze_event_handle_t event) noexcept {
  guarded("an event's destruction", [&] { Profiler::get().event_forget(event); });
}

void event_pool_destroying(ze_event_pool_handle_t pool) noexcept {
  guarded("an event pool's destruction", [&] { Profiler::get().pool_forget(pool); });
}

std::size_t event_books_size() noexcept {
  return guarded("the books' size", [&] { return Profiler::get().event_books_size(); });
}

void sync_point(ze_event_handle_t gone) noexcept {
  guarded("a sync point", [&] { Profiler::get().sync_point(gone); });
}

void device_lost() noexcept {
  guarded("a lost device", [&] { Profiler::get().device_lost(); });
}

}  // namespace oaprof::attach::ze
