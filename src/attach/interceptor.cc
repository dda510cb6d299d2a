#include "attach/interceptor.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "attach/device_clock.h"
#include "attach/layer_link.h"
#include "attach/mem_tracker.h"
#include "attach/replay_config.h"
#include "attach/sampled_launches.h"
#include "base/monotonic_clock.h"
#include "ipc/shm_channel.h"
#include "ipc/wire.h"

namespace oaprof::attach {
namespace {
namespace wire = ipc::wire;

_cl_icd_dispatch g_next{};
const char* g_way_in = "layer";
thread_local bool t_in_launch = false;    // our own calls below must not be measured again
thread_local bool t_in_callback = false;  // inside a program's event callback: never block

using base::monotonic_ns;

std::uint64_t handle(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

std::string kernel_name(cl_kernel k) {
  size_t size = 0;
  if (g_next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0) {
    return "?";
  }
  std::string name(size, '\0');
  if (g_next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, size, name.data(), nullptr) !=
      CL_SUCCESS) {
    return "?";
  }
  while (!name.empty() && name.back() == '\0') name.pop_back();
  return name;
}

MemTracker& tracker() {
  static MemTracker* t = new MemTracker();  // never destroyed: calls may arrive during exit
  return *t;
}

// Set when tracking itself failed (out of memory): a buffer may be missing from the tracker, so
// replaying could hand the program changed inputs. Replay stays off from then on.
std::atomic<bool> g_tracking_broken{false};

void tracking_failed() {
  if (!g_tracking_broken.exchange(true)) {
    std::fprintf(stderr, "oaprof layer: buffer tracking failed; kernels run once from here on\n");
  }
}

// The writable buffers of one launch, saved to shadow buffers with device-side copies before the
// first pass and copied back before each further one.
class BufferSnapshot {
 public:
  BufferSnapshot() = default;
  BufferSnapshot(const BufferSnapshot&) = delete;
  BufferSnapshot& operator=(const BufferSnapshot&) = delete;
  ~BufferSnapshot() {
    for (cl_mem m : shadows_) {
      if (m) g_next.clReleaseMemObject(m);
    }
  }

  // False (with `why`) when a shadow could not be made or filled; nothing was changed then.
  bool save(cl_command_queue q, const ReplayPlan& plan, std::string& why) {
    cl_context context = nullptr;
    cl_int rc =
        g_next.clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr);
    if (rc != CL_SUCCESS) return failed("clGetCommandQueueInfo", rc, why);
    buffers_ = plan.restore;
    for (const ReplayBuffer& b : buffers_) {
      cl_mem shadow = g_next.clCreateBuffer(context, CL_MEM_READ_WRITE, b.size_bytes, nullptr, &rc);
      if (shadow == nullptr) return failed("clCreateBuffer", rc, why);
      shadows_.push_back(shadow);
      rc = g_next.clEnqueueCopyBuffer(q, b.mem, shadow, 0, 0, b.size_bytes, 0, nullptr, nullptr);
      if (rc != CL_SUCCESS) return failed("clEnqueueCopyBuffer", rc, why);
    }
    rc = g_next.clFinish(q);
    return rc == CL_SUCCESS || failed("clFinish", rc, why);
  }

  // Puts every saved buffer back; the bytes and the wall time go to the launch record.
  bool restore(cl_command_queue q, std::uint64_t& bytes, std::uint64_t& ns, std::string& why) {
    const std::uint64_t t0 = monotonic_ns();
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      const cl_int rc = g_next.clEnqueueCopyBuffer(q, shadows_[i], buffers_[i].mem, 0, 0,
                                                   buffers_[i].size_bytes, 0, nullptr, nullptr);
      if (rc != CL_SUCCESS) return failed("clEnqueueCopyBuffer", rc, why);
      bytes += buffers_[i].size_bytes;
    }
    const cl_int rc = g_next.clFinish(q);
    ns += monotonic_ns() - t0;
    return rc == CL_SUCCESS || failed("clFinish", rc, why);
  }

 private:
  static bool failed(const char* what, cl_int rc, std::string& why) {
    why = std::string(what) + " failed (" + std::to_string(rc) + ")";
    return false;
  }
  std::vector<ReplayBuffer> buffers_;
  std::vector<cl_mem> shadows_;
};

// A launch's arguments: what the enqueue one layer down takes, and what goes into the record.
struct LaunchArgs {
  cl_command_queue q;
  cl_kernel k;
  cl_uint dim;
  const size_t *off, *gws, *lws;
  cl_uint nwait;
  const cl_event* wait;
  wire::LaunchApi api;
};

std::atomic<FailureHook> g_failure_hook{nullptr};

void fail_at(FailurePoint point) {
  if (const FailureHook hook = g_failure_hook.load(std::memory_order_relaxed)) hook(point);
}

// What a measured launch has done so far, so that an internal error at any point still gives the
// program its own result: whether its kernel was enqueued and with what status, and the events
// of the passes, which the launch owns until it hands them out.
struct LaunchState {
  LaunchState() = default;
  LaunchState(const LaunchState&) = delete;
  LaunchState& operator=(const LaunchState&) = delete;
  ~LaunchState() { hand_out(nullptr); }  // nothing leaks, whatever path left the launch

  // Keeps a pass's event: the first pass's (for the row's OpenCL times) and the latest.
  void keep(cl_event ev) {
    if (ev == nullptr) return;
    if (first == nullptr) {
      first = ev;
      return;
    }
    if (last != nullptr) g_next.clReleaseEvent(last);
    last = ev;
  }
  // The program gets the last pass's event when it asked for one; every other is released.
  void hand_out(cl_event* event) noexcept {
    cl_event ev = last != nullptr ? last : first;
    if (last != nullptr && first != nullptr) g_next.clReleaseEvent(first);
    first = last = nullptr;
    if (ev == nullptr) return;
    if (event != nullptr) {
      *event = ev;
    } else {
      g_next.clReleaseEvent(ev);
    }
  }

  std::uint64_t id = 0;
  std::uint64_t api_ns = 0;  // CLOCK_MONOTONIC at the program's call
  std::string name;          // the kernel's
  bool enqueued = false;     // the program's kernel went to the queue (the first pass)
  cl_int rc = CL_SUCCESS;    // and what its enqueue returned
  cl_event first = nullptr, last = nullptr;
  bool pass_open = false;  // a 'before' was answered, its 'after' not yet sent
  std::uint32_t passes = 0;
  std::uint32_t flags = 0;  // wire::kLaunch*
};

// How the passes of a measured launch went: what decides whether another one runs, and what
// the launch record carries.
struct Passes {
  bool replaying = false;
  bool measured = true;  // both snapshots of every pass were taken
  std::uint64_t restore_bytes = 0, restore_ns = 0;
  // Auto replay's window, bounded from inside: asked to (energy_first), the privileged side
  // reads energy before it answers the first 'before', and it reads it again after it receives
  // the last 'after', so its window is at least from that answer to that send.
  std::uint64_t window_start_ns = 0, window_end_ns = 0;
};

// Drain: nothing else of this queue, nor what the launch waits for, may run inside the
// snapshots. A drain that failed may have left work running: the row says so.
void drain(LaunchState& s, const LaunchArgs& a) {
  const cl_int finished = g_next.clFinish(a.q);
  const cl_int waited = a.nwait > 0 ? g_next.clWaitForEvents(a.nwait, a.wait) : CL_SUCCESS;
  if (finished != CL_SUCCESS || waited != CL_SUCCESS) s.flags |= wire::kLaunchDrainFailed;
}

// The row's OpenCL times are the first pass's: one run of the kernel, as without replay.
void set_first_pass_times(cl_event first, wire::Launch& rec) {
  cl_ulong t[4] = {};
  const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                     CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
  bool profiled = true;
  for (int i = 0; i < 4; ++i) {
    profiled = profiled && g_next.clGetEventProfilingInfo(first, what[i], sizeof t[i], &t[i],
                                                          nullptr) == CL_SUCCESS;
  }
  rec.profiled = profiled;
  rec.queued_ns = t[0];
  rec.submit_ns = t[1];
  rec.start_ns = t[2];
  rec.end_ns = t[3];
}

class Profiler {
 public:
  static Profiler& get() {
    static Profiler* p = new Profiler();  // never destroyed: calls may arrive during exit
    return *p;
  }

  // The program's own call, one layer down.
  using Enqueue = cl_int (*)(const LaunchArgs& args, cl_event* event);

  // Runs `enqueue` measured when the launch is selected, else straight through. Never changes
  // the program's result: it returns what the program's own enqueue returned, and an internal
  // error before the enqueue passes the launch through.
  cl_int launch(const LaunchArgs& args, cl_event* event, Enqueue enqueue) noexcept;

  void note_added_profiling(cl_command_queue q) {
    std::lock_guard lock(queues_mu_);
    added_profiling_.insert(q);
  }
  bool profiling_was_added(cl_command_queue q) {
    std::lock_guard lock(queues_mu_);
    return added_profiling_.count(q) > 0;
  }
  // The program released `k`, perhaps for the last time: its handle may come back as another
  // kernel, so its name is asked again at its next launch.
  void forget_kernel_name(cl_kernel k) {
    std::lock_guard lock(names_mu_);
    kernel_names_.erase(k);
  }
  void forget_queue(cl_command_queue q) {
    std::lock_guard lock(queues_mu_);
    added_profiling_.erase(q);
    queue_info_.erase(q);
  }

 private:
  Profiler() = default;

  bool ensure_connected_locked() {
    bool forked = false;
    const bool connected = link_.ensure_connected(g_way_in, forked);
    // A forked child: the parent's sampled launches are not ours to report.
    if (forked) forget_parents_launches();
    return connected;
  }

  // In a forked child: the books hold the parent's launches, whose events belong to the
  // parent's runtime; they are dropped unreleased, and the clocks calibrated again.
  void forget_parents_launches() {
    sampled_ = SampledLaunches{};
    clocks_.clear();
  }

  void warn_once(std::atomic<bool>& warned, const std::string& what) {
    link_.warn_once(warned, what);
  }

  // A selected launch, drained and run between snapshots (once, or replayed); its record posted.
  cl_int measure(LaunchState& state, const LaunchArgs& args, cl_event* event, Enqueue enqueue);
  // Saves what the kernel may write into `saved`; false (after a warning) when the launch runs
  // once instead.
  bool save_for_replay(const LaunchState& state, const LaunchArgs& args, BufferSnapshot& saved);
  // The launch's passes: one, or as many as replay asks, each between two snapshots.
  void run_passes(LaunchState& state, const LaunchArgs& args, Enqueue enqueue,
                  BufferSnapshot& saved, Passes& passes);
  // Puts the buffers back before a further pass; false (after a warning) when that failed.
  bool restore_for_pass(const LaunchState& state, const LaunchArgs& args, BufferSnapshot& saved,
                        Passes& passes);
  // One pass's kernel, enqueued one layer down and waited for; returns what its enqueue returned.
  static cl_int enqueue_pass(LaunchState& state, const LaunchArgs& args, Enqueue enqueue);
  // A pass's 'before' and 'after' snapshots; a failed one turns profiling off.
  void snapshot_before(LaunchState& state, const LaunchArgs& args, bool energy_first,
                       Passes& passes);
  void snapshot_after(LaunchState& state, Passes& passes);
  void post_record(const LaunchState& state, const LaunchArgs& args, Passes& passes);
  // Sampled attribution: enqueues at once, keeps the event, and posts the records that are ready.
  cl_int launch_sampled(LaunchState& state, const LaunchArgs& args, cl_event* event,
                        Enqueue enqueue);
  // The device's clock map, calibrated on first use; null (after a warning) when it cannot be.
  const DeviceClock* clock_for(cl_device_id device, cl_command_queue q);
  // Asks the kept events (`scope`), posts the records that are ready; `wait` first waits for
  // them all.
  void harvest_locked(bool wait, SampledLaunches::Scope scope = SampledLaunches::Scope::kAll);
  SampledLaunches::Completion ask_event(cl_event ev, const wire::Launch& record);
  // The rest of a completed launch: its start, and both edges on the host's clock.
  SampledLaunches::Completion ask_start(cl_event ev, std::uint64_t end, const wire::Launch& record);

 public:
  // One of the program's sync points (clFinish, clWaitForEvents returned), or its exit (`wait`):
  // in sampled attribution, the completed launches are collected there.
  void sync_point(bool wait) noexcept;

 private:
  // After an exception anywhere in launch(): the program's result as if nothing had gone wrong,
  // the events handed out or released, the row flagged layer_error if it can be sent.
  cl_int recover(LaunchState& state, const LaunchArgs& args, cl_event* event,
                 Enqueue enqueue) noexcept;
  wire::Launch base_record(const LaunchState& state, const LaunchArgs& args);

  void disable(const std::string& why) { link_.disable(why); }

  std::mutex mu_;  // one measured launch at a time: snapshots must bracket exactly one kernel
  LayerLink link_{"OpenCL"};
  std::atomic<bool> callback_warned_{false};
  std::atomic<bool> replay_warned_{false};
  std::mutex queues_mu_;
  std::set<cl_command_queue> added_profiling_;
  // What every record asks of its queue, asked once per queue (until its release).
  struct QueueInfo {
    cl_context context = nullptr;
    cl_device_id device = nullptr;
    bool in_order = true;
  };
  std::map<cl_command_queue, QueueInfo> queue_info_;
  QueueInfo queue_info(cl_command_queue q);
  // Kernel names by handle, asked once per kernel rather than twice per launch (a name is two
  // calls into the runtime); forgotten at every release of the kernel by the program.
  std::string cached_kernel_name(cl_kernel k);
  std::mutex names_mu_;
  std::map<cl_kernel, std::string> kernel_names_;
  SampledLaunches sampled_;
  static constexpr std::size_t kPostBurst = 64;
  static_assert(kPostBurst <= ipc::channel::kRingSlots, "a burst is posted without waiting");
  // Between sync points the running launches' events are asked only where waiting for the
  // program's next sync point would cost more than asking (AskPolicy).
  AskPolicy ask_policy_;
  std::map<cl_device_id, std::optional<DeviceClock>> clocks_;
  std::atomic<bool> clock_warned_{false};
  bool exit_hook_ = false;
};

void flush_at_exit() { Profiler::get().sync_point(true); }

cl_int Profiler::launch(const LaunchArgs& args, cl_event* event, Enqueue enqueue) noexcept {
  if (t_in_launch) return enqueue(args, event);  // ours, through the program's entry point
  LaunchState state;
  state.id = link_.next_launch_id();
  if (t_in_callback) {
    if (!callback_warned_.exchange(true)) {
      std::fprintf(stderr,
                   "oaprof layer: launches from event callbacks run unmeasured (blocking "
                   "there is undefined behaviour in OpenCL)\n");
    }
    return enqueue(args, event);
  }
  state.api_ns = monotonic_ns();
  std::unique_lock lock(mu_);
  try {
    if (!ensure_connected_locked()) {
      lock.unlock();
      return enqueue(args, event);
    }
    state.name = cached_kernel_name(args.k);
    if (!link_.filter().select(state.name)) {
      lock.unlock();
      return enqueue(args, event);
    }
    if (sampled_mode()) return launch_sampled(state, args, event, enqueue);
    return measure(state, args, event, enqueue);
  } catch (...) {
    return recover(state, args, event, enqueue);
  }
}

cl_int Profiler::measure(LaunchState& s, const LaunchArgs& a, cl_event* event, Enqueue enqueue) {
  t_in_launch = true;
  struct Reset {
    ~Reset() { t_in_launch = false; }
  } reset;
  drain(s, a);
  BufferSnapshot saved;
  Passes p;
  p.replaying =
      layer_config().replay.enabled() && !g_tracking_broken.load() && save_for_replay(s, a, saved);
  run_passes(s, a, enqueue, saved, p);
  if (s.first == nullptr || !p.measured) {  // the program's own launch failed, or not measured
    s.hand_out(event);
    return s.rc;
  }
  post_record(s, a, p);
  s.hand_out(event);
  return s.rc;
}

// Replay: save what the kernel may write, so that every pass starts from the program's
// inputs and the last one leaves exactly what a single run would have.
bool Profiler::save_for_replay(const LaunchState& s, const LaunchArgs& a, BufferSnapshot& saved) {
  const ReplayPlan plan = tracker().plan(a.k);
  std::string why = plan.refused;
  if (why.empty() && !saved.save(a.q, plan, why)) why = "saving its buffers failed: " + why;
  if (why.empty()) return true;
  warn_once(replay_warned_, "a launch of '" + s.name + "' runs once (no replay): " + why +
                                " (further such launches are not reported)");
  return false;
}

void Profiler::run_passes(LaunchState& s, const LaunchArgs& a, Enqueue enqueue,
                          BufferSnapshot& saved, Passes& p) {
  const ReplayConfig& replay = layer_config().replay;
  const auto min_window_ns = static_cast<std::uint64_t>(
      std::chrono::nanoseconds(layer_config().min_window).count());  // auto replay covers it
  for (;;) {
    if (s.passes > 0 && !restore_for_pass(s, a, saved, p)) break;
    const bool energy_first =
        s.passes == 0 && p.replaying && replay.mode == ReplayConfig::Mode::kAuto;
    snapshot_before(s, a, energy_first, p);
    if (s.passes == 0) p.window_start_ns = monotonic_ns();
    const cl_int rc = enqueue_pass(s, a, enqueue);
    p.window_end_ns = monotonic_ns();
    snapshot_after(s, p);
    if (rc != CL_SUCCESS) break;
    ++s.passes;
    if (!p.measured || !p.replaying) break;
    const bool more =
        replay.mode == ReplayConfig::Mode::kFixed
            ? s.passes < replay.passes
            : s.passes < kMaxReplayPasses && p.window_end_ns - p.window_start_ns < min_window_ns;
    if (!more) break;
  }
}

cl_int Profiler::enqueue_pass(LaunchState& s, const LaunchArgs& a, Enqueue enqueue) {
  cl_event ev = nullptr;
  const cl_int rc = enqueue(a, &ev);
  if (!s.enqueued) {
    s.enqueued = true;
    s.rc = rc;  // the program's own result: the first pass is its launch
  }
  if (rc == CL_SUCCESS) s.keep(ev);
  fail_at(FailurePoint::kAfterEnqueue);
  if (rc == CL_SUCCESS && g_next.clWaitForEvents(1, &ev) != CL_SUCCESS) {
    s.flags |= wire::kLaunchDrainFailed;  // the 'after' may come before the kernel's end
  }
  return rc;
}

bool Profiler::restore_for_pass(const LaunchState& s, const LaunchArgs& a, BufferSnapshot& saved,
                                Passes& p) {
  std::string why;
  if (saved.restore(a.q, p.restore_bytes, p.restore_ns, why)) return true;
  // The buffers are partly back at their inputs: nothing restores them now.
  warn_once(replay_warned_, "restoring the buffers of '" + s.name + "' for another pass failed (" +
                                why + "); its outputs may differ from an unprofiled run");
  return false;
}

// What the simulator needs to count the launch's known work (oaprof asks for it on a simulated
// device only): the kernel's name and its work-items.
std::optional<wire::WorkHint> launch_work_hint(const LaunchState& s, const LaunchArgs& a) {
  std::array<std::uint64_t, 3> sizes{};
  const cl_uint dims = a.gws != nullptr ? std::min<cl_uint>(a.dim, 3) : 0;
  for (cl_uint i = 0; i < dims; ++i) sizes[i] = a.gws[i];
  return attach::work_hint(s.name, std::span<const std::uint64_t>(sizes.data(), dims));
}

void Profiler::snapshot_before(LaunchState& s, const LaunchArgs& a, bool energy_first, Passes& p) {
  if (!link_.snapshot(s.id, wire::Phase::kBefore, energy_first, launch_work_hint(s, a))) {
    p.measured = false;
    return;
  }
  s.pass_open = true;
}

void Profiler::snapshot_after(LaunchState& s, Passes& p) {
  if (p.measured && !link_.snapshot(s.id, wire::Phase::kAfter)) p.measured = false;
  s.pass_open = false;
}

void Profiler::post_record(const LaunchState& s, const LaunchArgs& a, Passes& p) {
  wire::Launch rec = base_record(s, a);
  set_first_pass_times(s.first, rec);
  rec.restore_bytes = p.restore_bytes;
  rec.restore_ns = p.restore_ns;
  fail_at(FailurePoint::kBeforeRecord);
  link_.post(rec);
}

const DeviceClock* Profiler::clock_for(cl_device_id device, cl_command_queue q) {
  auto it = clocks_.find(device);
  if (it == clocks_.end()) {
    std::string why;
    it = clocks_.emplace(device, calibrate_device_clock(g_next, device, q, why)).first;
    if (!it->second) {
      warn_once(clock_warned_,
                "launches on a device whose clock cannot be put on the host's "
                "run unmeasured: " +
                    why);
    }
  }
  return it->second ? &*it->second : nullptr;
}

cl_int Profiler::launch_sampled(LaunchState& s, const LaunchArgs& a, cl_event* event,
                                Enqueue enqueue) {
  t_in_launch = true;
  struct Reset {
    ~Reset() { t_in_launch = false; }
  } reset;
  const QueueInfo queue = queue_info(a.q);
  if (clock_for(queue.device, a.q) == nullptr) return enqueue(a, event);
  if (sampled_.in_flight() >= SampledLaunches::kMaxInFlight) {
    // A program that never synchronises: wait for its oldest launch rather than grow the books.
    cl_event oldest = static_cast<cl_event>(sampled_.oldest_event());
    g_next.clWaitForEvents(1, &oldest);
    harvest_locked(false, SampledLaunches::Scope::kOldest);
  }
  wire::Launch record = base_record(s, a);
  cl_event ev = nullptr;
  s.rc = enqueue(a, &ev);
  s.enqueued = true;
  if (s.rc != CL_SUCCESS || ev == nullptr) return s.rc;
  // The program gets the event it asked for; the books hold a reference of their own.
  if (event != nullptr) {
    *event = ev;
    g_next.clRetainEvent(ev);
  }
  sampled_.add(ev, std::move(record), queue.in_order);
  if (!exit_hook_) exit_hook_ = std::atexit(flush_at_exit) == 0;
  if (ask_policy_.due(sampled_, s.api_ns)) {
    harvest_locked(false, SampledLaunches::Scope::kOldest);
  } else if (link_.backlog()) {
    link_.post_kept(false);
  }
  return s.rc;
}

SampledLaunches::Completion Profiler::ask_event(cl_event ev, const wire::Launch& record) {
  using State = SampledLaunches::Completion::State;
  SampledLaunches::Completion c;
  // The end time first: it is there exactly when the launch completed, so a completed launch
  // costs two calls into the runtime (end, start) and no status query. QUEUED and SUBMIT are
  // not asked (the record's window is the host's; they stay 0, unknown).
  cl_ulong end = 0;
  auto ask_end = [&] {
    return g_next.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
  };
  if (const cl_int got = ask_end(); got != CL_SUCCESS) {
    cl_int status = CL_QUEUED;
    const bool asked = got == CL_PROFILING_INFO_NOT_AVAILABLE &&
                       g_next.clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                             &status, nullptr) == CL_SUCCESS;
    // It may have completed between the two questions: then its end is there now.
    if (asked && status == CL_COMPLETE && ask_end() == CL_SUCCESS) {
      return ask_start(ev, end, record);
    }
    if (!asked || status <= CL_COMPLETE) c.state = State::kFailed;  // an error, or no end ever
    return c;
  }
  return ask_start(ev, end, record);
}

SampledLaunches::Completion Profiler::ask_start(cl_event ev, std::uint64_t end,
                                                const wire::Launch& record) {
  using State = SampledLaunches::Completion::State;
  SampledLaunches::Completion c;
  cl_ulong start = 0;
  const auto it = clocks_.find(reinterpret_cast<cl_device_id>(record.device));
  if (g_next.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start,
                                     nullptr) != CL_SUCCESS ||
      it == clocks_.end() || !it->second) {
    c.state = State::kFailed;
    return c;
  }
  c.state = State::kComplete;
  c.start_ns = start;
  c.end_ns = end;
  c.host_start_ns = it->second->to_monotonic(start);
  c.host_end_ns = it->second->to_monotonic(end);
  c.clock = it->second->how;
  return c;
}

void Profiler::harvest_locked(bool wait, SampledLaunches::Scope scope) {
  if (link_.disabled()) return;
  if (wait) {
    while (cl_event oldest = static_cast<cl_event>(sampled_.oldest_event())) {
      g_next.clWaitForEvents(1, &oldest);
      if (sampled_.in_flight() == 0) break;
      harvest_locked(false, SampledLaunches::Scope::kOldest);
      if (sampled_.oldest_event() == oldest) break;  // it failed to complete: give up on it
    }
  }
  auto ready = sampled_.harvest(
      [this](void* ev, const wire::Launch& r) { return ask_event(static_cast<cl_event>(ev), r); },
      [](void* ev) { g_next.clReleaseEvent(static_cast<cl_event>(ev)); }, scope);
  // Posted in bursts (at a sync point, or once kPostBurst are ready): the privileged side is
  // then woken once a burst instead of once a launch.
  link_.keep(std::move(ready));
  // Between sync points a part burst waits for more, unless its oldest has waited
  // AskPolicy::kAskAfterNs.
  if (scope == SampledLaunches::Scope::kOldest && link_.unposted() < kPostBurst &&
      (link_.unposted() == 0 ||
       monotonic_ns() < link_.oldest_unposted_ns() + AskPolicy::kAskAfterNs)) {
    return;
  }
  link_.post_kept(/*wait=*/scope == SampledLaunches::Scope::kAll);
}

void Profiler::sync_point(bool wait) noexcept {
  if (!sampled_mode() || t_in_launch) return;
  // A forked child that has not launched yet holds its parent's connection and books.
  if (link_.connected_pid() != current_pid()) return;
  try {
    std::lock_guard lock(mu_);
    if (sampled_.in_flight() == 0 && sampled_.waiting() == 0 && link_.unposted() == 0) return;
    t_in_launch = true;
    harvest_locked(wait);
    t_in_launch = false;
  } catch (...) {
    t_in_launch = false;  // out of memory: the records are lost, the program goes on
  }
}

std::string Profiler::cached_kernel_name(cl_kernel k) {
  {
    std::lock_guard lock(names_mu_);
    if (auto it = kernel_names_.find(k); it != kernel_names_.end()) return it->second;
  }
  std::string name = kernel_name(k);
  if (name != "?") {  // a failed question is asked again next time
    std::lock_guard lock(names_mu_);
    kernel_names_.emplace(k, name);
  }
  return name;
}

Profiler::QueueInfo Profiler::queue_info(cl_command_queue q) {
  {
    std::lock_guard lock(queues_mu_);
    if (auto it = queue_info_.find(q); it != queue_info_.end()) return it->second;
  }
  QueueInfo info;
  cl_command_queue_properties props = 0;
  const bool known = g_next.clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof info.context,
                                                  &info.context, nullptr) == CL_SUCCESS &&
                     g_next.clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof info.device,
                                                  &info.device, nullptr) == CL_SUCCESS &&
                     g_next.clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props,
                                                  nullptr) == CL_SUCCESS;
  info.in_order = (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0;
  if (known) {
    std::lock_guard lock(queues_mu_);
    queue_info_[q] = info;
  }
  return info;
}

wire::Launch Profiler::base_record(const LaunchState& s, const LaunchArgs& a) {
  wire::Launch rec;
  rec.launch_id = s.id;
  rec.work_dim = a.dim;
  for (cl_uint i = 0; i < a.dim && i < 3; ++i) {
    rec.global[i] = a.gws ? a.gws[i] : 1;
    rec.local[i] = a.lws ? a.lws[i] : 0;
    rec.offset[i] = a.off ? a.off[i] : 0;
  }
  rec.queue = handle(a.q);
  const QueueInfo info = queue_info(a.q);
  rec.context = handle(info.context);
  rec.device = handle(info.device);
  rec.tid = static_cast<std::uint32_t>(current_tid());
  rec.api_ns = s.api_ns;
  rec.api = a.api;
  rec.passes = std::max<std::uint32_t>(s.passes, 1);
  rec.flags = s.flags | wire::kLaunchProgramIndex;  // s.id is the program's index of it
  rec.kernel_name = s.name;
  return rec;
}

cl_int Profiler::recover(LaunchState& s, const LaunchArgs& a, cl_event* event,
                         Enqueue enqueue) noexcept {
  auto stop_profiling = [this](const char* why) noexcept {
    try {
      link_.disable(why);
    } catch (...) {
      link_.disable({});  // out of memory for the message: off without it
    }
  };
  if (!s.enqueued) {
    // Nothing of the program's has happened yet: its launch runs as if we were not there.
    s.hand_out(nullptr);
    stop_profiling("internal error; running unprofiled from here on");
    return enqueue(a, event);
  }
  // The kernel is in the queue: the program gets the status its enqueue returned and its event,
  // whatever went wrong here. The row, when it can still be sent, says it is not to be trusted.
  try {
    if (!link_.disabled() && s.first != nullptr) {
      std::uint32_t passes = s.passes;
      if (s.pass_open) {
        cl_event ev = s.last != nullptr ? s.last : s.first;
        g_next.clWaitForEvents(1, &ev);
        if (link_.snapshot(s.id, wire::Phase::kAfter)) ++passes;
        s.pass_open = false;
      }
      wire::Launch rec = base_record(s, a);
      rec.passes = std::max<std::uint32_t>(passes, 1);
      rec.flags |= wire::kLaunchLayerError;
      link_.post(rec);
    }
  } catch (...) {
    // The row is lost then; the privileged side counts it among the dropped launches.
  }
  s.hand_out(event);
  stop_profiling(
      "internal error after the kernel was enqueued: the program got its launch's "
      "own status, and its row is flagged layer_error; running unprofiled from here on");
  return s.rc;
}

}  // namespace

_cl_icd_dispatch& next() { return g_next; }

void set_way_in(const char* name) { g_way_in = name; }

cl_int CL_API_CALL intercept_enqueue_nd_range(cl_command_queue q, cl_kernel k, cl_uint dim,
                                              const size_t* off, const size_t* gws,
                                              const size_t* lws, cl_uint nwait,
                                              const cl_event* wait, cl_event* event) {
  return Profiler::get().launch(
      LaunchArgs{q, k, dim, off, gws, lws, nwait, wait, wire::LaunchApi::kNdRange}, event,
      [](const LaunchArgs& a, cl_event* ev) {
        return g_next.clEnqueueNDRangeKernel(a.q, a.k, a.dim, a.off, a.gws, a.lws, a.nwait, a.wait,
                                             ev);
      });
}

cl_int CL_API_CALL intercept_enqueue_task(cl_command_queue q, cl_kernel k, cl_uint nwait,
                                          const cl_event* wait, cl_event* event) {
  const size_t one = 1;
  return Profiler::get().launch(
      LaunchArgs{q, k, 1, nullptr, &one, &one, nwait, wait, wire::LaunchApi::kTask}, event,
      [](const LaunchArgs& a, cl_event* ev) {
        return g_next.clEnqueueTask(a.q, a.k, a.nwait, a.wait, ev);
      });
}

// Kernel times come from OpenCL event profiling, so every queue gets it enabled underneath; the
// queues where oaprof added it are remembered so the program never sees the difference.
cl_command_queue CL_API_CALL intercept_create_queue(cl_context ctx, cl_device_id dev,
                                                    cl_command_queue_properties props,
                                                    cl_int* err) {
  cl_command_queue q =
      g_next.clCreateCommandQueue(ctx, dev, props | CL_QUEUE_PROFILING_ENABLE, err);
  if (q && !(props & CL_QUEUE_PROFILING_ENABLE)) Profiler::get().note_added_profiling(q);
  return q;
}

cl_command_queue CL_API_CALL intercept_create_queue_with_properties(
    cl_context ctx, cl_device_id dev, const cl_queue_properties* props, cl_int* err) {
  std::vector<cl_queue_properties> ours;
  bool found = false, asked = false;
  for (const cl_queue_properties* p = props; p && *p; p += 2) {
    ours.push_back(p[0]);
    if (p[0] == CL_QUEUE_PROPERTIES) {
      found = true;
      asked = (p[1] & CL_QUEUE_PROFILING_ENABLE) != 0;
      ours.push_back(p[1] | CL_QUEUE_PROFILING_ENABLE);
    } else {
      ours.push_back(p[1]);
    }
  }
  if (!found) {
    ours.push_back(CL_QUEUE_PROPERTIES);
    ours.push_back(CL_QUEUE_PROFILING_ENABLE);
  }
  ours.push_back(0);
  cl_command_queue q = g_next.clCreateCommandQueueWithProperties(ctx, dev, ours.data(), err);
  if (q && !asked) Profiler::get().note_added_profiling(q);
  return q;
}

cl_int CL_API_CALL intercept_get_event_profiling_info(cl_event event, cl_profiling_info name,
                                                      size_t size, void* value, size_t* size_ret) {
  cl_command_queue q = nullptr;
  if (g_next.clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, nullptr) == CL_SUCCESS &&
      q != nullptr && Profiler::get().profiling_was_added(q)) {
    return CL_PROFILING_INFO_NOT_AVAILABLE;
  }
  return g_next.clGetEventProfilingInfo(event, name, size, value, size_ret);
}

cl_int CL_API_CALL intercept_get_command_queue_info(cl_command_queue q, cl_command_queue_info name,
                                                    size_t size, void* value, size_t* size_ret) {
  const cl_int rc = g_next.clGetCommandQueueInfo(q, name, size, value, size_ret);
  if (rc != CL_SUCCESS || value == nullptr || !Profiler::get().profiling_was_added(q)) return rc;
  if (name == CL_QUEUE_PROPERTIES && size >= sizeof(cl_command_queue_properties)) {
    *static_cast<cl_command_queue_properties*>(value) &=
        ~cl_command_queue_properties{CL_QUEUE_PROFILING_ENABLE};
  }
#ifdef CL_QUEUE_PROPERTIES_ARRAY
  if (name == CL_QUEUE_PROPERTIES_ARRAY) {
    // The array the program passed comes back as it was, minus the bit oaprof added (or minus the
    // pair oaprof appended, which leaves an extra terminator the program never reads).
    auto* p = static_cast<cl_queue_properties*>(value);
    const size_t n = size / sizeof(cl_queue_properties);
    for (size_t i = 0; i + 1 < n && p[i] != 0; i += 2) {
      if (p[i] == CL_QUEUE_PROPERTIES) p[i + 1] &= ~cl_queue_properties{CL_QUEUE_PROFILING_ENABLE};
    }
  }
#endif
  return rc;
}

cl_int CL_API_CALL intercept_finish(cl_command_queue q) {
  const cl_int rc = g_next.clFinish(q);
  Profiler::get().sync_point(false);
  return rc;
}

cl_int CL_API_CALL intercept_wait_for_events(cl_uint n, const cl_event* events) {
  const cl_int rc = g_next.clWaitForEvents(n, events);
  Profiler::get().sync_point(false);
  return rc;
}

cl_int CL_API_CALL intercept_release_command_queue(cl_command_queue q) {
  cl_uint refs = 0;
  if (g_next.clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, nullptr) ==
          CL_SUCCESS &&
      refs == 1) {
    Profiler::get().forget_queue(q);  // the handle may be reused for a new queue
  }
  return g_next.clReleaseCommandQueue(q);
}

namespace {
struct CallbackTrampoline {
  void(CL_CALLBACK* fn)(cl_event, cl_int, void*);
  void* user_data;
};
void CL_CALLBACK run_program_callback(cl_event event, cl_int status, void* data) {
  std::unique_ptr<CallbackTrampoline> t(static_cast<CallbackTrampoline*>(data));
  const bool outer = t_in_callback;
  t_in_callback = true;
  t->fn(event, status, t->user_data);
  t_in_callback = outer;
}
}  // namespace

cl_int CL_API_CALL intercept_set_event_callback(cl_event event, cl_int type,
                                                void(CL_CALLBACK* fn)(cl_event, cl_int, void*),
                                                void* user_data) {
  if (fn == nullptr) return g_next.clSetEventCallback(event, type, fn, user_data);
  auto* t = new CallbackTrampoline{fn, user_data};
  const cl_int rc = g_next.clSetEventCallback(event, type, &run_program_callback, t);
  if (rc != CL_SUCCESS) delete t;
  return rc;
}

// ---- Kernel replay's bookkeeping. Every entry calls down first and records only what
// succeeded; a failure of the bookkeeping itself turns replay off, never the program's call.

namespace {
template <typename Fn>
void track(Fn&& fn) {
  if (g_tracking_broken.load(std::memory_order_relaxed)) return;
  try {
    fn();
  } catch (...) {
    tracking_failed();
  }
}

void track_mem(cl_mem m, MemKind kind, cl_mem_flags flags, size_t size, cl_context ctx) {
  if (m != nullptr) track([&] { tracker().created(m, MemInfo{kind, size, flags, ctx}); });
}
}  // namespace

bool replay_enabled() { return layer_config().replay.enabled(); }

cl_mem CL_API_CALL intercept_create_buffer(cl_context ctx, cl_mem_flags flags, size_t size,
                                           void* host, cl_int* err) {
  cl_mem m = g_next.clCreateBuffer(ctx, flags, size, host, err);
  track_mem(m, MemKind::kBuffer, flags, size, ctx);
  return m;
}

cl_mem CL_API_CALL intercept_create_buffer_with_properties(cl_context ctx,
                                                           const cl_mem_properties* props,
                                                           cl_mem_flags flags, size_t size,
                                                           void* host, cl_int* err) {
  cl_mem m = g_next.clCreateBufferWithProperties(ctx, props, flags, size, host, err);
  track_mem(m, MemKind::kBuffer, flags, size, ctx);
  return m;
}

cl_mem CL_API_CALL intercept_create_sub_buffer(cl_mem parent, cl_mem_flags flags,
                                               cl_buffer_create_type type, const void* info,
                                               cl_int* err) {
  cl_mem m = g_next.clCreateSubBuffer(parent, flags, type, info, err);
  if (m != nullptr && type == CL_BUFFER_CREATE_TYPE_REGION && info != nullptr) {
    const size_t size = static_cast<const cl_buffer_region*>(info)->size;
    track([&] { tracker().created_sub_buffer(m, parent, size, flags); });
  }
  return m;
}

cl_mem CL_API_CALL intercept_create_image(cl_context ctx, cl_mem_flags flags,
                                          const cl_image_format* format, const cl_image_desc* desc,
                                          void* host, cl_int* err) {
  cl_mem m = g_next.clCreateImage(ctx, flags, format, desc, host, err);
  track_mem(m, MemKind::kImage, flags, 0, ctx);
  return m;
}

cl_mem CL_API_CALL intercept_create_image_with_properties(
    cl_context ctx, const cl_mem_properties* props, cl_mem_flags flags,
    const cl_image_format* format, const cl_image_desc* desc, void* host, cl_int* err) {
  cl_mem m = g_next.clCreateImageWithProperties(ctx, props, flags, format, desc, host, err);
  track_mem(m, MemKind::kImage, flags, 0, ctx);
  return m;
}

cl_mem CL_API_CALL intercept_create_image_2d(cl_context ctx, cl_mem_flags flags,
                                             const cl_image_format* format, size_t w, size_t h,
                                             size_t pitch, void* host, cl_int* err) {
  cl_mem m = g_next.clCreateImage2D(ctx, flags, format, w, h, pitch, host, err);
  track_mem(m, MemKind::kImage, flags, 0, ctx);
  return m;
}

cl_mem CL_API_CALL intercept_create_image_3d(cl_context ctx, cl_mem_flags flags,
                                             const cl_image_format* format, size_t w, size_t h,
                                             size_t d, size_t row_pitch, size_t slice_pitch,
                                             void* host, cl_int* err) {
  cl_mem m = g_next.clCreateImage3D(ctx, flags, format, w, h, d, row_pitch, slice_pitch, host, err);
  track_mem(m, MemKind::kImage, flags, 0, ctx);
  return m;
}

cl_mem CL_API_CALL intercept_create_pipe(cl_context ctx, cl_mem_flags flags, cl_uint packet_size,
                                         cl_uint packets, const cl_pipe_properties* props,
                                         cl_int* err) {
  cl_mem m = g_next.clCreatePipe(ctx, flags, packet_size, packets, props, err);
  track_mem(m, MemKind::kPipe, flags, 0, ctx);
  return m;
}

cl_int CL_API_CALL intercept_release_mem_object(cl_mem mem) {
  cl_uint refs = 0;
  if (g_next.clGetMemObjectInfo(mem, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, nullptr) ==
          CL_SUCCESS &&
      refs == 1) {
    tracker().released(mem);  // the handle may be reused for a new object
  }
  return g_next.clReleaseMemObject(mem);
}

cl_int CL_API_CALL intercept_set_kernel_arg(cl_kernel k, cl_uint index, size_t size,
                                            const void* value) {
  const cl_int rc = g_next.clSetKernelArg(k, index, size, value);
  if (rc == CL_SUCCESS) track([&] { tracker().set_arg(k, index, size, value); });
  return rc;
}

cl_int CL_API_CALL intercept_set_kernel_arg_svm_pointer(cl_kernel k, cl_uint index,
                                                        const void* value) {
  const cl_int rc = g_next.clSetKernelArgSVMPointer(k, index, value);
  if (rc == CL_SUCCESS) track([&] { tracker().set_svm_arg(k, index); });
  return rc;
}

cl_int CL_API_CALL intercept_set_kernel_exec_info(cl_kernel k, cl_kernel_exec_info name,
                                                  size_t size, const void* value) {
  const cl_int rc = g_next.clSetKernelExecInfo(k, name, size, value);
  const bool svm = name == CL_KERNEL_EXEC_INFO_SVM_PTRS ||
                   (name == CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM && value != nullptr &&
                    size >= sizeof(cl_bool) && *static_cast<const cl_bool*>(value));
  if (rc == CL_SUCCESS && svm) track([&] { tracker().set_indirect_svm(k); });
  return rc;
}

cl_kernel CL_API_CALL intercept_clone_kernel(cl_kernel k, cl_int* err) {
  cl_kernel clone = g_next.clCloneKernel(k, err);
  if (clone != nullptr) track([&] { tracker().cloned(k, clone); });
  return clone;
}

cl_int CL_API_CALL intercept_release_kernel(cl_kernel k) {
  // Every release, not only the last the count shows: a kernel the runtime still holds for a
  // pending command is freed later, without a call that passes here.
  Profiler::get().forget_kernel_name(k);
  cl_uint refs = 0;
  if (replay_enabled() &&
      g_next.clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, nullptr) ==
          CL_SUCCESS &&
      refs == 1) {
    tracker().kernel_released(k);
  }
  return g_next.clReleaseKernel(k);
}

void set_failure_hook(FailureHook hook) { g_failure_hook.store(hook); }

void install(_cl_icd_dispatch& table) {
  table.clSetEventCallback = &intercept_set_event_callback;
  table.clEnqueueNDRangeKernel = &intercept_enqueue_nd_range;
  table.clEnqueueTask = &intercept_enqueue_task;
  table.clCreateCommandQueue = &intercept_create_queue;
  if (g_next.clCreateCommandQueueWithProperties != nullptr) {
    table.clCreateCommandQueueWithProperties = &intercept_create_queue_with_properties;
  }
  table.clGetEventProfilingInfo = &intercept_get_event_profiling_info;
  table.clGetCommandQueueInfo = &intercept_get_command_queue_info;
  table.clReleaseCommandQueue = &intercept_release_command_queue;
  if (sampled_mode()) {
    table.clFinish = &intercept_finish;
    table.clWaitForEvents = &intercept_wait_for_events;
  }
  // Kernel names are cached per handle in every mode: a release must reach the cache.
  if (table.clReleaseKernel != nullptr) table.clReleaseKernel = &intercept_release_kernel;
  if (!replay_enabled()) return;
  // Entries the loader below does not have (an older OpenCL) stay null, as they were.
  auto set = [](auto& slot, auto fn) {
    if (slot != nullptr) slot = fn;
  };
  set(table.clCreateBuffer, &intercept_create_buffer);
  set(table.clCreateBufferWithProperties, &intercept_create_buffer_with_properties);
  set(table.clCreateSubBuffer, &intercept_create_sub_buffer);
  set(table.clCreateImage, &intercept_create_image);
  set(table.clCreateImageWithProperties, &intercept_create_image_with_properties);
  set(table.clCreateImage2D, &intercept_create_image_2d);
  set(table.clCreateImage3D, &intercept_create_image_3d);
  set(table.clCreatePipe, &intercept_create_pipe);
  set(table.clReleaseMemObject, &intercept_release_mem_object);
  set(table.clSetKernelArg, &intercept_set_kernel_arg);
  set(table.clSetKernelArgSVMPointer, &intercept_set_kernel_arg_svm_pointer);
  set(table.clSetKernelExecInfo, &intercept_set_kernel_exec_info);
  set(table.clCloneKernel, &intercept_clone_kernel);
}

}  // namespace oaprof::attach
