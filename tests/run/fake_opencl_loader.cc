// A libOpenCL.so.1 that must never be loaded by oaprof: its constructor leaves a file behind (the
// path in OAPROF_TEST_LOADER_MARKER), as a user's library on LD_LIBRARY_PATH could run anything
// as root. Its bytes carry what identifies ocl-icd ≥ 2.3.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

extern "C" {
__attribute__((used)) const char oaprof_fake_loader_identity[] =
    "OCL Icd free software; reads OPENCL_LAYERS";

__attribute__((constructor)) static void oaprof_fake_loader_ran() {
  if (const char* marker = std::getenv("OAPROF_TEST_LOADER_MARKER")) {
    const int fd = ::open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) ::close(fd);
  }
}
}
