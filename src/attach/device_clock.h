// Sampled attribution puts each launch's OpenCL start and end (the device's profiling clock) on
// the host's CLOCK_MONOTONIC, the clock the privileged side times its periodic counter reads
// with. Calibrated once per device: clGetDeviceAndHostTimer gives (device, host timer) pairs,
// and clGetHostTimer between two clock_gettime calls ties OpenCL's host timer (whose clock the
// specification leaves to the implementation) to CLOCK_MONOTONIC. A device without those timers
// (before OpenCL 2.1, or an implementation that refuses them) is calibrated with a marker: its
// end against the host's clock just after the wait for it, coarser by that wait's wake-up.
#pragma once

#include <CL/cl_icd.h>

#include <cstdint>
#include <optional>
#include <string>

#include "ipc/wire.h"
#include "oa/sampled_attribution.h"

namespace oaprof::attach {

struct DeviceClock {
  oa::ClockMap device_to_host_timer;
  oa::ClockMap host_timer_to_monotonic;
  oa::ClockCalibration how = oa::ClockCalibration::kDeviceAndHostTimer;
  std::uint64_t to_monotonic(std::uint64_t device_ns) const {
    return host_timer_to_monotonic.to_host(device_to_host_timer.to_host(device_ns));
  }
};

// `next` is the dispatch table below the layer; `q` a queue of `device` for the marker. nullopt
// with `why` set when neither way works.
std::optional<DeviceClock> calibrate_device_clock(const _cl_icd_dispatch& next, cl_device_id device,
                                                  cl_command_queue q, std::string& why);

}  // namespace oaprof::attach
