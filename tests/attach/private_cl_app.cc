// A program that is not linked with libOpenCL and loads it privately, through a library it
// dlopens with RTLD_LOCAL (as Python loads pyopencl). Prints "launches N" and exits 0 when the
// library's kernels gave the right result; 3 when they did not.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: private_cl_app LIBRARY\n");
    return 2;
  }
  void* lib = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "private_cl_app: %s\n", ::dlerror());
    return 2;
  }
  auto run = reinterpret_cast<int (*)()>(::dlsym(lib, "private_cl_run"));
  const int launches = run != nullptr ? run() : -1;
  if (launches < 0) {
    std::fprintf(stderr, "private_cl_app: the OpenCL work failed or gave a wrong result\n");
    return 3;
  }
  std::printf("launches %d\n", launches);
  return 0;
}
