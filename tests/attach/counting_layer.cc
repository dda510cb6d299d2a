// A second, independent OpenCL layer for tests: it counts clEnqueueNDRangeKernel calls per kernel
// name as they reach it and writes "name count" lines to $COUNTING_LAYER_OUT at exit. Loaded after
// oaprof's layer, it sees exactly the launches the program made, so tests can check that oaprof
// recorded each one.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

_cl_icd_dispatch g_next{};
_cl_icd_dispatch g_ours{};
std::mutex g_mu;
std::map<std::string, int>* g_counts = new std::map<std::string, int>();

void write_counts() {
  const char* path = std::getenv("COUNTING_LAYER_OUT");
  if (path == nullptr) return;
  std::lock_guard lock(g_mu);
  if (FILE* f = std::fopen(path, "w")) {
    for (const auto& [name, n] : *g_counts) std::fprintf(f, "%s %d\n", name.c_str(), n);
    std::fclose(f);
  }
}

cl_int CL_API_CALL count_enqueue(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t* off,
                                 const size_t* gws, const size_t* lws, cl_uint nwait,
                                 const cl_event* wait, cl_event* event) {
  char name[256] = {};
  g_next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, nullptr);
  {
    std::lock_guard lock(g_mu);
    (*g_counts)[name]++;
  }
  return g_next.clEnqueueNDRangeKernel(q, k, dim, off, gws, lws, nwait, wait, event);
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param, size_t size, void* value,
                                               size_t* size_ret) {
  if (param != CL_LAYER_API_VERSION) return CL_INVALID_VALUE;
  const cl_layer_api_version v = CL_LAYER_API_VERSION_100;
  if (value) {
    if (size < sizeof v) return CL_INVALID_VALUE;
    std::memcpy(value, &v, sizeof v);
  }
  if (size_ret) *size_ret = sizeof v;
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const _cl_icd_dispatch* target,
                                            cl_uint* num_entries_ret,
                                            const _cl_icd_dispatch** layer_dispatch_ret) {
  const cl_uint n = std::min<cl_uint>(num_entries, sizeof(_cl_icd_dispatch) / sizeof(void*));
  std::memcpy(&g_next, target, n * sizeof(void*));
  g_ours = g_next;
  g_ours.clEnqueueNDRangeKernel = &count_enqueue;
  *num_entries_ret = n;
  *layer_dispatch_ret = &g_ours;
  std::atexit(&write_counts);
  return CL_SUCCESS;
}

}  // extern "C"
