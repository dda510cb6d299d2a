// Which OpenCL ICD loader a program will get, to choose how oaprof gets in: the OpenCL layer
// where the loader supports layers (ocl-icd ≥ 2.3, the Khronos loader), LD_PRELOAD elsewhere.
#pragma once

#include <string>

namespace oaprof::attach {

struct LoaderInfo {
  bool found = false;  // libOpenCL.so.1 could be loaded
  std::string name;    // "ocl-icd", "Khronos ICD loader", …
  bool supports_layers = false;
  std::string note;  // why layers are (not) assumed
};

// Finds `library` (default libOpenCL.so.1) as the dynamic linker would and reads its file; never
// throws, and never initialises the loader (which would load ICDs and layers into this process).
LoaderInfo detect_loader(const std::string& library = "libOpenCL.so.1");

// "2.3.1" >= "2.3" and the like; non-numeric parts compare as 0.
bool version_at_least(const std::string& version, int major, int minor);

}  // namespace oaprof::attach
