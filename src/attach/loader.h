// Which OpenCL ICD loader a program will get, to choose how oaprof gets in: the OpenCL layer
// where the loader supports layers (ocl-icd ≥ 2.3, the Khronos loader), LD_PRELOAD elsewhere.
// Pure: the caller finds and reads the file (run/opencl_loader.h does, as the program's user and
// without loading it, since loading it would run its code in the privileged process).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace oaprof::attach {

struct LoaderInfo {
  bool found = false;  // a file for the library could be read
  std::string name;    // "ocl-icd", "Khronos ICD loader", …
  bool supports_layers = false;
  std::string note;  // why layers are (not) assumed
};

// Where the dynamic linker would look for `library`, in its order: `library` itself when it has a
// slash; else each directory of `ld_library_path` (the program's LD_LIBRARY_PATH), then the
// entries of `ldconfig_listing` (what `ldconfig -p` prints) for this machine's architecture, then
// the trusted directories /lib and /usr/lib.
std::vector<std::string> library_candidates(const std::string& library,
                                            std::string_view ld_library_path,
                                            std::string_view ldconfig_listing);

// The loader in the file at `path`, from its bytes.
LoaderInfo identify_loader(const std::string& path, std::string_view bytes);

// No file for `library` could be read.
LoaderInfo no_loader(const std::string& library);

// "2.3.1" >= "2.3" and the like; non-numeric parts compare as 0.
bool version_at_least(const std::string& version, int major, int minor);

}  // namespace oaprof::attach
