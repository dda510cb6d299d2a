#include "attach/device_clock.h"

#include <stdexcept>
#include <utility>
#include <vector>

#include "base/monotonic_clock.h"

namespace oaprof::attach {
namespace {

using base::monotonic_ns;

constexpr int kPairs = 8;
using Pairs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// (device, host timer) and (host timer, monotonic) pairs; false when the timers are refused.
bool timer_pairs(const _cl_icd_dispatch& next, cl_device_id device, Pairs& dev_host,
                 Pairs& host_mono) {
  if (next.clGetDeviceAndHostTimer == nullptr || next.clGetHostTimer == nullptr) return false;
  for (int i = 0; i < kPairs; ++i) {
    cl_ulong dev = 0, host = 0;
    if (next.clGetDeviceAndHostTimer(device, &dev, &host) != CL_SUCCESS) return false;
    dev_host.emplace_back(dev, host);
    const std::uint64_t m0 = monotonic_ns();
    if (next.clGetHostTimer(device, &host) != CL_SUCCESS) return false;
    const std::uint64_t m1 = monotonic_ns();
    host_mono.emplace_back(host, m0 + (m1 - m0) / 2);
  }
  return true;
}

}  // namespace

std::optional<DeviceClock> calibrate_device_clock(const _cl_icd_dispatch& next, cl_device_id device,
                                                  cl_command_queue q, std::string& why) {
  DeviceClock clock;
  Pairs dev_host, host_mono;
  try {
    if (timer_pairs(next, device, dev_host, host_mono)) {
      clock.device_to_host_timer = oa::ClockMap::fit(dev_host);
      clock.host_timer_to_monotonic = oa::ClockMap::fit(host_mono);
      return clock;
    }
  } catch (const std::invalid_argument&) {
    // A timer that stood still: try the marker.
  }
  cl_event ev = nullptr;
  if (next.clEnqueueMarkerWithWaitList == nullptr ||
      next.clEnqueueMarkerWithWaitList(q, 0, nullptr, &ev) != CL_SUCCESS) {
    why = "neither clGetDeviceAndHostTimer nor a marker could calibrate the device's clock";
    return std::nullopt;
  }
  cl_ulong end = 0;
  const bool ok = next.clWaitForEvents(1, &ev) == CL_SUCCESS &&
                  next.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end,
                                               nullptr) == CL_SUCCESS;
  const std::uint64_t host = monotonic_ns();
  next.clReleaseEvent(ev);
  if (!ok) {
    why = "the calibration marker's end time could not be read";
    return std::nullopt;
  }
  const Pairs one{{end, host}};
  clock.device_to_host_timer = oa::ClockMap::fit(one);
  clock.how = oa::ClockCalibration::kMarker;
  return clock;
}

}  // namespace oaprof::attach
