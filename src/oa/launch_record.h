// A kernel launch as the layer reports it (Launch: what the program asked for and when, which
// ipc::wire carries), and one measured launch as the privileged side hands it to the reporters
// (LaunchRecord: the launch, the counter deltas between the snapshots around it, its validity).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oa/delta.h"

namespace oaprof::oa {

// The entry point a launch came through: OpenCL's two, and Level Zero's four launch appends
// (ze_api.h, Debian libze-dev 1.8.12 / oneapi-src/level-zero v1.8.12).
enum class LaunchApi : std::uint8_t {
  kNdRange = 0,                          // clEnqueueNDRangeKernel
  kTask = 1,                             // clEnqueueTask
  kZeLaunchKernel = 2,                   // zeCommandListAppendLaunchKernel
  kZeLaunchCooperativeKernel = 3,        // zeCommandListAppendLaunchCooperativeKernel
  kZeLaunchKernelIndirect = 4,           // zeCommandListAppendLaunchKernelIndirect
  kZeLaunchMultipleKernelsIndirect = 5,  // zeCommandListAppendLaunchMultipleKernelsIndirect
};
inline constexpr std::uint8_t kMaxLaunchApi = 5;

// The row's `api`: "opencl" or "level-zero".
const char* launch_api_family(LaunchApi api);
// The row's `call`: "ndrange", "task" (OpenCL, what `api` held before Level Zero came),
// "launch", "cooperative", "indirect", "multiple-indirect" (Level Zero).
const char* launch_call_name(LaunchApi api);
// The entry point's own name, for traces: "clEnqueueNDRangeKernel", ….
const char* launch_entry_point(LaunchApi api);

// How a sampled launch's device times were mapped onto the host's clock.
enum class ClockCalibration : std::uint8_t {
  kDeviceAndHostTimer = 0,  // clGetDeviceAndHostTimer pairs (and clGetHostTimer's offset)
  kMarker = 1,              // a marker's end against the host clock after it: coarser
};
// A sampled launch's window, on CLOCK_MONOTONIC, and what the layer knows of its neighbours.
struct SampledWindow {
  std::uint64_t host_start_ns = 0;
  std::uint64_t host_end_ns = 0;
  std::uint32_t overlap_ppm = 0;  // millionths of the window other launches also ran in
  ClockCalibration clock = ClockCalibration::kDeviceAndHostTimer;
  friend bool operator==(const SampledWindow&, const SampledWindow&) = default;
};

struct Launch {
  // The program's own index of the launch: its clEnqueueNDRangeKernel and clEnqueueTask calls
  // counted from 0 in its process, measured or not (so after --launch-skip N the first measured
  // one is N). Unique per connection, so the privileged side also keys the launch's snapshots
  // by it.
  std::uint64_t launch_id = 0;
  std::uint32_t work_dim = 0;
  std::array<std::uint64_t, 3> global{};
  std::array<std::uint64_t, 3> local{};  // all zero when the program let the runtime choose
  std::array<std::uint64_t, 3> offset{};
  std::uint64_t queued_ns = 0;
  std::uint64_t submit_ns = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  bool profiled = false;  // OpenCL profiling times are valid
  // Where the launch came from: OpenCL handles as opaque numbers (they tell queues and devices
  // apart within one process), the calling thread, and CLOCK_MONOTONIC at the API call.
  std::uint64_t queue = 0;
  std::uint64_t context = 0;
  std::uint64_t device = 0;
  std::uint32_t tid = 0;
  std::uint64_t api_ns = 0;
  LaunchApi api = LaunchApi::kNdRange;
  // Kernel replay: how many times the kernel ran between the first and the last snapshot (1: not
  // replayed), and the cl_mem restores made between passes so every pass saw the program's
  // inputs. The restores fall outside the counter deltas but inside the energy window.
  std::uint32_t passes = 1;
  std::uint64_t restore_bytes = 0;
  std::uint64_t restore_ns = 0;
  std::string kernel_name;
  // What the layer knows about the launch's validity (kLaunch* bits): its row's flags.
  std::uint32_t flags = 0;
  // Set exactly when flags has kLaunchSampled.
  std::optional<SampledWindow> sampled;
};
// A clFinish or clWaitForEvents the layer made before a snapshot failed (the drain before the
// 'before', or the wait for the kernel before the 'after'): the row is flagged drain_failed.
inline constexpr std::uint32_t kLaunchDrainFailed = 1;
// The layer met an internal error after the kernel was enqueued: the program got the real
// enqueue status, the row (when it could still be sent) is flagged layer_error.
inline constexpr std::uint32_t kLaunchLayerError = 2;
// Sampled attribution (--attribution sampled): the launch was neither drained nor snapshotted;
// its counters come from the session's periodic reads over its window (Launch::sampled).
inline constexpr std::uint32_t kLaunchSampled = 4;
// launch_id is the program's own index of the launch (Launch::launch_id). The layer sets it on
// every launch; one without comes from a layer older than oaprof, whose ids counted measured
// launches only (rows after --launch-skip N would start at 0), and is refused.
inline constexpr std::uint32_t kLaunchProgramIndex = 8;
// Level Zero, bracketed attribution: the layer could not bracket the kernel alone (it waits on
// an event the host signals after the call, docs/level-zero.md): its 'before' was taken when the
// layer gave up waiting, its 'after' once the launch was seen complete, so its counters cover
// more than the kernel. The row is flagged not_bracketed.
inline constexpr std::uint32_t kLaunchNotBracketed = 16;
inline constexpr std::uint32_t kLaunchKnownFlags = kLaunchDrainFailed | kLaunchLayerError |
                                                   kLaunchSampled | kLaunchProgramIndex |
                                                   kLaunchNotBracketed;

struct LaunchRecord {
  std::uint64_t index = 0;  // 0-based, in order of completion across all clients
  // For the row of a client's launch: the program's own index of it (Launch::launch_id), which
  // the row's `launch` shows. Unset for rows that are no launch of a program (an interval, the
  // whole application): they show `index`.
  std::optional<std::uint64_t> program_launch;
  std::uint32_t pid = 0;  // the process that launched it
  Launch launch;
  CounterDeltas deltas;
  std::vector<std::string> flags;  // validity notes: "no_profiling", "counter_wrap_risk", …
  // Kernel replay across metric sets (Session::set_pass_configs): which set's passes `deltas`
  // counted; each such launch gives one record per set, with the same index.
  std::size_t pass_set = 0;
  // Sampled attribution: how far the counters over the launch's window can be from what a
  // bracketed read would give (oa::SampledDeltas::error_bound), and the share of the window other
  // launches of its process ran in too (their counts are in these counters as well).
  struct Sampled {
    double error_bound = 0;
    double overlap_share = 0;
  };
  std::optional<Sampled> sampled;
};

}  // namespace oaprof::oa
