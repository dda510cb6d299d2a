// liboaprof_layer.so, the way in through the OpenCL loader: ocl-icd ≥ 2.3 (and the Khronos
// loader) load the layers named in OPENCL_LAYERS and hand each the dispatch table below it. This
// way sees every call, also those of programs that dlopen libOpenCL and look symbols up
// themselves, because the loader itself routes them through the layer.
#include <CL/cl_layer.h>

#include <cstring>

#include "attach/interceptor.h"

namespace {
_cl_icd_dispatch g_ours{};
}  // namespace

extern "C" {

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clGetLayerInfo(cl_layer_info param_name, size_t param_value_size, void* param_value,
               size_t* param_value_size_ret) {
  static const char kName[] = "oaprof";
  static const cl_layer_api_version kVersion = CL_LAYER_API_VERSION_100;
  const void* src = nullptr;
  size_t size = 0;
  switch (param_name) {
    case CL_LAYER_API_VERSION:
      src = &kVersion;
      size = sizeof kVersion;
      break;
    case CL_LAYER_NAME:
      src = kName;
      size = sizeof kName;
      break;
    default:
      return CL_INVALID_VALUE;
  }
  if (param_value) {
    if (param_value_size < size) return CL_INVALID_VALUE;
    std::memcpy(param_value, src, size);
  }
  if (param_value_size_ret) *param_value_size_ret = size;
  return CL_SUCCESS;
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clInitLayer(cl_uint num_entries, const struct _cl_icd_dispatch* target_dispatch,
            cl_uint* num_entries_ret, const struct _cl_icd_dispatch** layer_dispatch_ret) {
  using namespace oaprof::attach;
  constexpr cl_uint kOurEntries = sizeof(_cl_icd_dispatch) / sizeof(void*);
  if (target_dispatch == nullptr || num_entries_ret == nullptr || layer_dispatch_ret == nullptr) {
    return CL_INVALID_VALUE;
  }
  // A loader older than our headers passes fewer entries; the rest stay null.
  const cl_uint n = num_entries < kOurEntries ? num_entries : kOurEntries;
  std::memcpy(&next(), target_dispatch, n * sizeof(void*));
  set_way_in("OpenCL layer (OPENCL_LAYERS)");
  g_ours = next();
  install(g_ours);
  *num_entries_ret = n;
  *layer_dispatch_ret = &g_ours;
  return CL_SUCCESS;
}

}  // extern "C"
