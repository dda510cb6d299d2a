// Which OpenCL ICD loader the profiled program will get, found from the privileged side without
// loading it: loading it would run its constructors, and through the program's LD_LIBRARY_PATH
// the user's own code, in a process that may be root. The file is looked for where the dynamic
// linker would look (attach::library_candidates) and read as the user the program runs as, so
// root learns nothing about a path the user could not read.
#pragma once

#include <optional>
#include <string>

#include "attach/loader.h"
#include "session/privilege_drop.h"

namespace oaprof::run {

// `library` (a name such as libOpenCL.so.1, or a path) for a program whose LD_LIBRARY_PATH is
// `ld_library_path`, read as `as` (under sudo) or as this process. Never throws: a loader that
// cannot be found or read is a LoaderInfo that says so.
attach::LoaderInfo find_opencl_loader(const std::string& library,
                                      const std::string& ld_library_path,
                                      const std::optional<session::Credentials>& as);

// The first file for `library` the dynamic linker would load (attach::library_candidates) that
// `as` can read; nullopt when there is none.
std::optional<std::string> find_library_file(const std::string& library,
                                             const std::string& ld_library_path,
                                             const std::optional<session::Credentials>& as);

// What `ldconfig -p` prints (the dynamic linker's cache), or "" when it cannot be run. It runs with
// an empty environment and reads only /etc/ld.so.cache.
std::string ldconfig_listing();

}  // namespace oaprof::run
