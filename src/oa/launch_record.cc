#include "oa/launch_record.h"

namespace oaprof::oa {

namespace {

struct ApiNames {
  const char* family;
  const char* call;
  const char* entry_point;
};

// Indexed by LaunchApi; an out-of-range value (never accepted off the wire) reads as the first.
constexpr ApiNames kApiNames[] = {
    {"opencl", "ndrange", "clEnqueueNDRangeKernel"},
    {"opencl", "task", "clEnqueueTask"},
    {"level-zero", "launch", "zeCommandListAppendLaunchKernel"},
    {"level-zero", "cooperative", "zeCommandListAppendLaunchCooperativeKernel"},
    {"level-zero", "indirect", "zeCommandListAppendLaunchKernelIndirect"},
    {"level-zero", "multiple-indirect", "zeCommandListAppendLaunchMultipleKernelsIndirect"},
};
static_assert(sizeof kApiNames / sizeof kApiNames[0] == kMaxLaunchApi + 1);

const ApiNames& names(LaunchApi api) {
  const auto i = static_cast<std::uint8_t>(api);
  return kApiNames[i <= kMaxLaunchApi ? i : 0];
}

}  // namespace

const char* launch_api_family(LaunchApi api) { return names(api).family; }
const char* launch_call_name(LaunchApi api) { return names(api).call; }
const char* launch_entry_point(LaunchApi api) { return names(api).entry_point; }

}  // namespace oaprof::oa
