// The interception logic between a fake OpenCL below it and the real privileged side above it (a
// Session on the simulator behind the socket server): what the program gets back must be what
// its own calls returned, every event the layer made is handed out or released, and what went
// wrong in the layer reaches the row as a flag. Internal failures are played by the layer's
// failure hook.
//
// Each scenario runs in a child process of its own (a death test in the threadsafe style, which
// starts the binary afresh): the layer is a per-process singleton that turns itself off after an
// internal error, for good.
#include "attach/interceptor.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "ipc/shm_channel.h"
#include "session/server.h"
#include "session/session.h"
#include "tests/common/sim_fixture.h"

namespace oaprof::attach {
namespace {
namespace fs = std::filesystem;

// ---- A fake OpenCL below the layer: one queue, one kernel, events as numbered handles.
struct FakeCl {
  static inline cl_int finish_rc = CL_SUCCESS;
  static inline cl_int enqueue_rc = CL_SUCCESS;
  static inline std::mutex mu;
  static inline std::map<cl_event, int> live;  // made and not yet released: their references
  static inline std::uintptr_t next_event = 0x1000;
  static inline int finishes = 0;  // clFinish calls that reached the fake
  // Sampled attribution: each event's end is not there at its first question, as for a launch
  // that completes between the layer's two questions (its status then says complete).
  static inline bool end_late = false;
  static inline std::set<cl_event> end_asked;
  static inline int end_questions = 0;  // clGetEventProfilingInfo(CL_PROFILING_COMMAND_END) calls
  static inline std::string kernel_name = "fake_kernel";  // what the kernel's name is now
  static inline int name_questions = 0;  // clGetKernelInfo(CL_KERNEL_FUNCTION_NAME) calls
};

cl_event make_event() {
  std::lock_guard lock(FakeCl::mu);
  FakeCl::next_event += 16;
  auto ev = reinterpret_cast<cl_event>(FakeCl::next_event);
  FakeCl::live[ev] = 1;
  return ev;
}

cl_int CL_API_CALL fake_retain_event(cl_event ev) {
  std::lock_guard lock(FakeCl::mu);
  auto it = FakeCl::live.find(ev);
  if (it == FakeCl::live.end()) return CL_INVALID_EVENT;
  ++it->second;
  return CL_SUCCESS;
}

cl_int CL_API_CALL fake_event_info(cl_event, cl_event_info name, size_t size, void* value,
                                   size_t*) {
  if (name != CL_EVENT_COMMAND_EXECUTION_STATUS || size < sizeof(cl_int)) return CL_INVALID_VALUE;
  *static_cast<cl_int*>(value) = CL_COMPLETE;
  return CL_SUCCESS;
}

cl_int CL_API_CALL fake_marker(cl_command_queue, cl_uint, const cl_event*, cl_event* ev) {
  if (ev != nullptr) *ev = make_event();
  return CL_SUCCESS;
}

std::size_t live_events() {
  std::lock_guard lock(FakeCl::mu);
  return FakeCl::live.size();
}

cl_int CL_API_CALL fake_release_event(cl_event ev) {
  std::lock_guard lock(FakeCl::mu);
  auto it = FakeCl::live.find(ev);
  if (it == FakeCl::live.end()) return CL_INVALID_EVENT;
  if (--it->second == 0) FakeCl::live.erase(it);
  return CL_SUCCESS;
}

cl_int CL_API_CALL fake_enqueue(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*,
                                const size_t*, cl_uint, const cl_event*, cl_event* ev) {
  if (FakeCl::enqueue_rc != CL_SUCCESS) return FakeCl::enqueue_rc;
  if (ev != nullptr) *ev = make_event();
  return CL_SUCCESS;
}

cl_int CL_API_CALL fake_finish(cl_command_queue) {
  ++FakeCl::finishes;
  return FakeCl::finish_rc;
}
cl_int CL_API_CALL fake_wait(cl_uint, const cl_event*) { return CL_SUCCESS; }

cl_int CL_API_CALL fake_kernel_info(cl_kernel, cl_kernel_info name, size_t size, void* value,
                                    size_t* size_ret) {
  if (name != CL_KERNEL_FUNCTION_NAME) return CL_INVALID_VALUE;
  ++FakeCl::name_questions;
  const std::string& kernel = FakeCl::kernel_name;
  if (size_ret != nullptr) *size_ret = kernel.size() + 1;
  if (value != nullptr && size > kernel.size())
    std::memcpy(value, kernel.c_str(), kernel.size() + 1);
  return CL_SUCCESS;
}

cl_int CL_API_CALL fake_release_kernel(cl_kernel) { return CL_SUCCESS; }

cl_int CL_API_CALL fake_profiling_info(cl_event ev, cl_profiling_info name, size_t size,
                                       void* value, size_t*) {
  if (name == CL_PROFILING_COMMAND_END) {
    std::lock_guard lock(FakeCl::mu);
    ++FakeCl::end_questions;
  }
  if (FakeCl::end_late && name == CL_PROFILING_COMMAND_END) {
    std::lock_guard lock(FakeCl::mu);
    if (FakeCl::end_asked.insert(ev).second) return CL_PROFILING_INFO_NOT_AVAILABLE;
  }
  if (value != nullptr && size >= sizeof(cl_ulong)) {
    *static_cast<cl_ulong*>(value) = 1000 + (name - CL_PROFILING_COMMAND_QUEUED);
  }
  return CL_SUCCESS;
}

cl_int CL_API_CALL fake_queue_info(cl_command_queue, cl_command_queue_info, size_t size,
                                   void* value, size_t*) {
  if (value != nullptr) std::memset(value, 0, size);
  return CL_SUCCESS;
}

void install_fake_cl() {
  _cl_icd_dispatch& d = next();
  d.clEnqueueNDRangeKernel = &fake_enqueue;
  d.clFinish = &fake_finish;
  d.clWaitForEvents = &fake_wait;
  d.clReleaseEvent = &fake_release_event;
  d.clGetKernelInfo = &fake_kernel_info;
  d.clGetEventProfilingInfo = &fake_profiling_info;
  d.clGetCommandQueueInfo = &fake_queue_info;
  d.clRetainEvent = &fake_retain_event;
  d.clGetEventInfo = &fake_event_info;
  d.clEnqueueMarkerWithWaitList = &fake_marker;
  d.clReleaseKernel = &fake_release_kernel;
}

// ---- The privileged side: a session on the simulator behind the socket the layer finds in
// OAPROF_SOCKET.
class PrivilegedSide {
 public:
  // `sampled`: the session attributes sampled launches (and the layer is told to send them).
  explicit PrivilegedSide(bool sampled = false) {
    dir_ = fs::temp_directory_path() / fmt::format("oaprof-icpt-{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::string path = (dir_ / "s.sock").string();
    if (sampled) {
      session::SampledOptions o;
      o.period = std::chrono::microseconds(200);
      session_.set_sampled(o);
      ::setenv("OAPROF_ATTRIBUTION", "sampled", 1);
    }
    session_.start();
    server_ = std::make_unique<session::Server>(path, session_, std::vector<uid_t>{::getuid()});
    server_->start();
    ::setenv("OAPROF_SOCKET", path.c_str(), 1);
    ::setenv("OAPROF_LAYER_QUIET", "1", 1);
    ::unsetenv("OAPROF_REPLAY");
  }
  ~PrivilegedSide() {
    server_->stop();
    server_.reset();
    session_.stop();
    fs::remove_all(dir_);
  }

  // Waits (bounded, without asserting on time) for `n` rows; returns them.
  std::vector<oa::LaunchRecord> rows(std::size_t n) {
    for (int i = 0; i < 1000; ++i) {
      {
        std::lock_guard lock(mu_);
        if (rows_.size() >= n) return rows_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard lock(mu_);
    return rows_;
  }

 private:
  fs::path dir_;
  test_support::SimFixture sim_;
  std::mutex mu_;
  std::vector<oa::LaunchRecord> rows_;
  session::Session session_{
      *sim_.source, oa::ReportFormat::kA32u40_A4u32_B8_C8,
      [this](const oa::LaunchRecord& r, const power::EnergyReading*, const power::EnergyReading*) {
        std::lock_guard lock(mu_);
        rows_.push_back(r);
      }};
  std::unique_ptr<session::Server> server_;
};

const auto kQueue = reinterpret_cast<cl_command_queue>(std::uintptr_t{0x100});
const auto kKernel = reinterpret_cast<cl_kernel>(std::uintptr_t{0x200});

cl_int launch_one(cl_event* event) {
  const size_t global = 64;
  return intercept_enqueue_nd_range(kQueue, kKernel, 1, nullptr, &global, nullptr, 0, nullptr,
                                    event);
}

bool has_flag(const oa::LaunchRecord& r, const std::string& flag) {
  return std::find(r.flags.begin(), r.flags.end(), flag) != r.flags.end();
}

// Collects what a scenario found wrong, for the child to print and exit on.
struct Problems {
  std::string text;
  void check(bool ok, const std::string& what) {
    if (!ok) text += what + "\n";
  }
};

// Runs `scenario` in a fresh process; it passes when the scenario finds nothing wrong.
void run_in_child(const std::function<void(Problems&, PrivilegedSide&)>& scenario,
                  bool sampled = false) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Problems p;
        try {
          install_fake_cl();
          PrivilegedSide side(sampled);
          scenario(p, side);
        } catch (const std::exception& e) {
          p.text += std::string("exception: ") + e.what() + "\n";
        }
        std::fputs(p.text.c_str(), stderr);
        std::fflush(stderr);
        std::_Exit(p.text.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

[[noreturn]] void throw_at(FailurePoint) { throw std::runtime_error("injected failure"); }
void throw_after_enqueue(FailurePoint point) {
  if (point == FailurePoint::kAfterEnqueue) throw_at(point);
}
void throw_before_record(FailurePoint point) {
  if (point == FailurePoint::kBeforeRecord) throw_at(point);
}

TEST(InterceptorTest, AMeasuredLaunchHandsOutItsEventAndLeaksNone) {
  run_in_child([](Problems& p, PrivilegedSide& side) {
    cl_event ev = nullptr;
    p.check(launch_one(&ev) == CL_SUCCESS, "the launch failed");
    p.check(ev != nullptr && live_events() == 1, "the program did not get exactly its event");
    fake_release_event(ev);
    p.check(launch_one(nullptr) == CL_SUCCESS, "a launch without an event failed");
    p.check(live_events() == 0, "an event leaked");
    const auto rows = side.rows(2);
    p.check(rows.size() == 2, fmt::format("{} rows, not 2", rows.size()));
    for (const auto& r : rows) p.check(r.flags.empty(), "a clean launch's row is flagged");
  });
}

// A drain that failed may have left earlier work running inside the snapshots: the row says so,
// and the program's launch goes on as it would have.
// A kernel's name is two calls into the runtime: asked once for all of the kernel's launches.
TEST(InterceptorTest, AKernelsNameIsAskedOncePerKernel) {
  run_in_child([](Problems& p, PrivilegedSide& side) {
    constexpr int kLaunches = 20;
    for (int i = 0; i < kLaunches; ++i)
      p.check(launch_one(nullptr) == CL_SUCCESS, "a launch failed");
    p.check(FakeCl::name_questions <= 2,
            fmt::format("{} name questions for {} launches of one kernel, not 2",
                        FakeCl::name_questions, kLaunches));
    const auto rows = side.rows(kLaunches);
    p.check(rows.size() == kLaunches, fmt::format("{} rows, not {}", rows.size(), kLaunches));
    for (const auto& r : rows)
      p.check(r.launch.kernel_name == "fake_kernel", "a row's name differs");
  });
}

// Once the program releases a kernel its handle may name another: that launch's row has the new
// kernel's name, not the one cached for the handle.
TEST(InterceptorTest, AReleasedKernelsHandleIsAskedItsNameAgain) {
  run_in_child([](Problems& p, PrivilegedSide& side) {
    p.check(launch_one(nullptr) == CL_SUCCESS, "the first launch failed");
    p.check(intercept_release_kernel(kKernel) == CL_SUCCESS, "the release failed");
    FakeCl::kernel_name = "another_kernel";  // the runtime reused the handle
    p.check(launch_one(nullptr) == CL_SUCCESS, "the second launch failed");
    const auto rows = side.rows(2);
    p.check(rows.size() == 2, fmt::format("{} rows, not 2", rows.size()));
    if (rows.size() == 2) {
      p.check(rows[0].launch.kernel_name == "fake_kernel", "the first row's name is wrong");
      p.check(
          rows[1].launch.kernel_name == "another_kernel",
          "the reused handle's row has the released kernel's name: " + rows[1].launch.kernel_name);
    }
  });
}

TEST(InterceptorTest, AFailedDrainFlagsTheRow) {
  run_in_child([](Problems& p, PrivilegedSide& side) {
    FakeCl::finish_rc = CL_OUT_OF_RESOURCES;
    cl_event ev = nullptr;
    p.check(launch_one(&ev) == CL_SUCCESS, "the program's launch did not get its own status");
    fake_release_event(ev);
    FakeCl::finish_rc = CL_SUCCESS;
    p.check(launch_one(nullptr) == CL_SUCCESS, "the second launch failed");
    const auto rows = side.rows(2);
    p.check(rows.size() == 2, fmt::format("{} rows, not 2", rows.size()));
    if (rows.size() == 2) {
      p.check(has_flag(rows[0], "drain_failed"), "the row after a failed drain is not flagged");
      p.check(!has_flag(rows[1], "drain_failed"), "a good drain's row is flagged");
    }
  });
}

// An internal error after the kernel was enqueued: the program still gets the enqueue's own
// status and its event, nothing leaks, and the row is flagged layer_error.
TEST(InterceptorTest, AnInternalErrorAfterTheEnqueueKeepsTheProgramsResult) {
  run_in_child([](Problems& p, PrivilegedSide& side) {
    set_failure_hook(&throw_after_enqueue);
    cl_event ev = nullptr;
    p.check(launch_one(&ev) == CL_SUCCESS, "the status is not the enqueue's own");
    p.check(ev != nullptr && live_events() == 1, "the program did not get its kernel's event");
    fake_release_event(ev);
    p.check(live_events() == 0, "an event leaked");
    const auto rows = side.rows(1);
    p.check(rows.size() == 1 && has_flag(rows[0], "layer_error"),
            "the launch's row is missing or not flagged layer_error");
    // From here on the layer passes launches through untouched.
    p.check(launch_one(nullptr) == CL_SUCCESS && live_events() == 0, "a later launch changed");
  });
}

TEST(InterceptorTest, AnInternalErrorAfterAFailedEnqueueReturnsThatFailure) {
  run_in_child([](Problems& p, PrivilegedSide&) {
    set_failure_hook(&throw_after_enqueue);
    FakeCl::enqueue_rc = CL_INVALID_KERNEL_ARGS;
    cl_event ev = nullptr;
    const cl_int rc = launch_one(&ev);
    p.check(rc == CL_INVALID_KERNEL_ARGS,
            fmt::format("the program got {}, not its own {}", rc, CL_INVALID_KERNEL_ARGS));
    p.check(ev == nullptr && live_events() == 0, "an event appeared for a failed launch");
  });
}

TEST(InterceptorTest, AnInternalErrorBeforeTheRecordLeaksNoEvent) {
  run_in_child([](Problems& p, PrivilegedSide& side) {
    set_failure_hook(&throw_before_record);
    p.check(launch_one(nullptr) == CL_SUCCESS, "the status is not the enqueue's own");
    p.check(live_events() == 0, "the event the program did not ask for leaked");
    const auto rows = side.rows(1);
    p.check(rows.size() == 1 && has_flag(rows[0], "layer_error"),
            "the launch's row is missing or not flagged layer_error");
  });
}

// Issue 17, sampled attribution: the layer never drains, hands the program its events, keeps
// a reference of its own until the launch is collected at the program's sync point, and then
// every launch has a row with its window, calibrated by a marker where the runtime has no
// clGetDeviceAndHostTimer (this fake has none).
TEST(InterceptorTest, SampledLaunchesAreNeitherDrainedNorLostAndNoEventLeaks) {
  run_in_child(
      [](Problems& p, PrivilegedSide& side) {
        std::vector<cl_event> events(3, nullptr);
        for (cl_event& ev : events) p.check(launch_one(&ev) == CL_SUCCESS, "a launch failed");
        p.check(launch_one(nullptr) == CL_SUCCESS, "a launch without an event failed");
        p.check(FakeCl::finishes == 0, "the layer drained the queue");
        p.check(intercept_finish(kQueue) == CL_SUCCESS, "the program's clFinish failed");
        const auto rows = side.rows(4);
        p.check(rows.size() == 4, fmt::format("{} rows, not 4", rows.size()));
        for (const auto& r : rows) {
          p.check(r.launch.sampled.has_value() && r.sampled.has_value(), "a row is not sampled");
          p.check(has_flag(r, "clock_from_marker"), "the marker calibration is not flagged");
          p.check(!has_flag(r, "not_attributed"), "a window was not attributed");
        }
        for (cl_event ev : events) fake_release_event(ev);
        p.check(live_events() == 0, fmt::format("{} events leaked", live_events()));
      },
      /*sampled=*/true);
}

int end_questions() {
  std::lock_guard lock(FakeCl::mu);
  return FakeCl::end_questions;
}

// One launch and the program's sync point: the clock calibrated (by a marker) and a first row.
void first_sampled_row(Problems& p, PrivilegedSide& side) {
  p.check(launch_one(nullptr) == CL_SUCCESS, "a launch failed");
  p.check(intercept_finish(kQueue) == CL_SUCCESS, "the program's clFinish failed");
  p.check(side.rows(1).size() == 1, "the first launch has no row");
}

// `n` launches; whether they took under 40 ms (none of them waited the 50 ms after which the
// layer asks an old launch without a sync point, however loaded the machine).
bool quick_launches(Problems& p, int n) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) p.check(launch_one(nullptr) == CL_SUCCESS, "a launch failed");
  return std::chrono::steady_clock::now() - start < std::chrono::milliseconds(40);
}

// Issue 33: between sync points the layer asks no launch's event while few wait and none has
// waited 50 ms, since a runtime may charge more for a question while its queue runs (NVIDIA's
// about twice): the program's sync point asks each once. Past 256 waiting launches the oldest
// are asked without one, and their rows come in bursts. (Launches the machine stalled for 50 ms
// may be asked early: then only the counts are judged.)
TEST(InterceptorTest, SampledEventsWaitForTheProgramsSyncPointUnlessManyLaunchesWait) {
  run_in_child(
      [](Problems& p, PrivilegedSide& side) {
        first_sampled_row(p, side);
        const int asked = end_questions();
        if (quick_launches(p, 200)) {
          p.check(end_questions() == asked,
                  fmt::format("{} events asked between sync points", end_questions() - asked));
        }
        p.check(intercept_finish(kQueue) == CL_SUCCESS, "the program's clFinish failed");
        p.check(end_questions() == asked + 200,
                fmt::format("the sync point asked {} events, not 200", end_questions() - asked));
        p.check(side.rows(201).size() == 201, "the launches before the sync point have no rows");
        // From the 256th waiting launch every 16th asks them: at the 271st, all complete, posted
        // without a sync point as far as the channel's ring has room (the rest at the next
        // launches or the sync point: the program does not wait for oaprof to take them).
        if (quick_launches(p, 271)) {
          p.check(
              side.rows(201 + ipc::channel::kRingSlots).size() >= 201 + ipc::channel::kRingSlots,
              "launches past 256 waiting were not asked without a sync point");
        }
        p.check(intercept_finish(kQueue) == CL_SUCCESS, "the program's clFinish failed");
        p.check(end_questions() == asked + 200 + 271, "a launch was asked twice or not at all");
        p.check(side.rows(201 + 271).size() == 201 + 271, "a launch has no row");
      },
      /*sampled=*/true);
}

// A launch that waited 50 ms is asked at the next launch, sync point or not, and its row posted:
// the counter timeline keeps its reads for a while only.
TEST(InterceptorTest, ASampledLaunchThatWaitedLongIsAskedWithoutASyncPoint) {
  run_in_child(
      [](Problems& p, PrivilegedSide& side) {
        first_sampled_row(p, side);
        p.check(launch_one(nullptr) == CL_SUCCESS, "a launch failed");
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
        p.check(launch_one(nullptr) == CL_SUCCESS, "a launch failed");
        p.check(side.rows(3).size() == 3, "a launch that waited 60 ms has no row without a sync");
        p.check(intercept_finish(kQueue) == CL_SUCCESS, "the program's clFinish failed");
        p.check(live_events() == 0, fmt::format("{} events leaked", live_events()));
      },
      /*sampled=*/true);
}

// A launch that completes between the layer's question for its end and the one for its status
// is collected all the same (the device machine's PoCL lost a few of 10,000 records so).
TEST(InterceptorTest, ASampledLaunchThatCompletesBetweenTwoQuestionsIsNotLost) {
  run_in_child(
      [](Problems& p, PrivilegedSide& side) {
        // The first launch calibrates the clock with a marker, whose end is asked after a wait.
        p.check(launch_one(nullptr) == CL_SUCCESS, "a launch failed");
        FakeCl::end_late = true;
        for (int i = 0; i < 4; ++i) p.check(launch_one(nullptr) == CL_SUCCESS, "a launch failed");
        p.check(intercept_finish(kQueue) == CL_SUCCESS, "the program's clFinish failed");
        const auto rows = side.rows(5);
        p.check(rows.size() == 5, fmt::format("{} rows, not 5", rows.size()));
        p.check(live_events() == 0, fmt::format("{} events leaked", live_events()));
      },
      /*sampled=*/true);
}

// A child forked with sampled launches in its parent's books (and the parent's connection)
// reports none of them at its sync points: they are the parent's. (Its exit hook goes through the
// same check; the child leaves with _Exit, since a sanitizer's exit work in a forked child of a
// threaded process can hang.)
TEST(InterceptorTest, AForkedChildNeverReportsItsParentsSampledLaunches) {
  run_in_child(
      [](Problems& p, PrivilegedSide& side) {
        for (int i = 0; i < 2; ++i) p.check(launch_one(nullptr) == CL_SUCCESS, "a launch failed");
        const pid_t child = ::fork();
        if (child == 0) {
          intercept_finish(kQueue);
          std::_Exit(0);
        }
        int status = 0;
        ::waitpid(child, &status, 0);
        p.check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed");
        p.check(launch_one(nullptr) == CL_SUCCESS, "the parent's third launch failed");
        p.check(intercept_finish(kQueue) == CL_SUCCESS, "the parent's clFinish failed");
        side.rows(3);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // for any the child sent
        const auto rows = side.rows(3);
        std::multiset<std::uint64_t> ids;
        for (const auto& r : rows) ids.insert(r.launch.launch_id);
        p.check(ids == std::multiset<std::uint64_t>{0, 1, 2},
                fmt::format("{} rows, not the parent's three launches once each", rows.size()));
      },
      /*sampled=*/true);
}

}  // namespace
}  // namespace oaprof::attach
