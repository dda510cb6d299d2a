#include "attach/loader.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace oaprof::attach {
namespace {

// The loader's file, found the way the program will find it, without initialising the loader:
// initialising it would load the user's ICDs and layers into the privileged process.
std::string loader_path(const std::string& library) {
  void* h = ::dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (h == nullptr) return {};
  std::string path;
  link_map* map = nullptr;
  if (::dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name) path = map->l_name;
  ::dlclose(h);
  return path;
}

}  // namespace

bool version_at_least(const std::string& version, int major, int minor) {
  char* end = nullptr;
  const long maj = std::strtol(version.c_str(), &end, 10);
  if (end == version.c_str()) return false;
  const long min = (*end == '.') ? std::strtol(end + 1, nullptr, 10) : 0;
  return maj > major || (maj == major && min >= minor);
}

LoaderInfo detect_loader(const std::string& library) {
  LoaderInfo info;
  const std::string path = loader_path(library);
  if (path.empty()) {
    info.note = "no OpenCL loader (" + library + ") could be loaded";
    return info;
  }
  info.found = true;
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  // A loader that supports layers reads the OPENCL_LAYERS variable, so its name is in the binary
  // (ocl-icd from 2.3 on, the Khronos loader from its 2020 releases).
  info.supports_layers = bytes.find("OPENCL_LAYERS") != std::string::npos;
  info.name = bytes.find("OCL Icd free software") != std::string::npos ? "ocl-icd"
              : bytes.find("Khronos") != std::string::npos             ? "Khronos ICD loader"
                                                                       : "unknown ICD loader";
  info.note =
      info.name + " at " + path +
      (info.supports_layers ? " loads OPENCL_LAYERS"
                            : " does not know OPENCL_LAYERS (ocl-icd < 2.3): using LD_PRELOAD");
  return info;
}

}  // namespace oaprof::attach
