// A library that links libOpenCL, for private_cl_app to dlopen with RTLD_LOCAL as Python
// extensions are loaded (pyopencl's _cl.so): libOpenCL then sits in the library's own scope,
// outside the global one where LD_PRELOAD's definitions and dlsym(RTLD_NEXT) look.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cmath>

namespace {

const char* kSource =
    "__kernel void scale(__global float* a, float f) { a[get_global_id(0)] *= f; }";

}  // namespace

// Three launches of `scale` by 2 on 256 ones; the number of launches when every element is 8
// afterwards, else -1.
extern "C" __attribute__((visibility("default"))) int private_cl_run() {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS) return -1;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) return -1;
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) return -1;
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, nullptr, &err);
  if (err != CL_SUCCESS) return -1;
  cl_program p = clCreateProgramWithSource(ctx, 1, &kSource, nullptr, &err);
  if (err != CL_SUCCESS || clBuildProgram(p, 1, &device, "", nullptr, nullptr) != CL_SUCCESS) {
    return -1;
  }
  cl_kernel k = clCreateKernel(p, "scale", &err);
  if (err != CL_SUCCESS) return -1;
  float data[256];
  for (float& v : data) v = 1.0f;
  cl_mem buf =
      clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
  if (err != CL_SUCCESS) return -1;
  const float f = 2.0f;
  const size_t global = 256;
  clSetKernelArg(k, 0, sizeof buf, &buf);
  clSetKernelArg(k, 1, sizeof f, &f);
  for (int i = 0; i < 3; ++i) {
    if (clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr) !=
        CL_SUCCESS) {
      return -1;
    }
  }
  if (clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof data, data, 0, nullptr, nullptr) !=
      CL_SUCCESS) {
    return -1;
  }
  clReleaseMemObject(buf);
  clReleaseKernel(k);
  clReleaseProgram(p);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  for (float v : data) {
    if (std::fabs(v - 8.0f) > 0) return -1;
  }
  return 3;
}
