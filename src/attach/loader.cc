#include "attach/loader.h"

#include <cstdlib>

namespace oaprof::attach {
namespace {

// How `ldconfig -p` tags the libraries of the architecture oaprof was built for: glibc
// elf/cache.c, print_entry() (glibc 2.36, Debian 12's), prints "(libc6" then ",x86-64" for
// FLAG_X8664_LIB64 or ",AArch64" for FLAG_AARCH64_LIB64, then optional ", hwcap: …" and
// ", OS ABI: …", then ")".
#if defined(__x86_64__)
constexpr std::string_view kArchTag = "(libc6,x86-64";
#elif defined(__aarch64__)
constexpr std::string_view kArchTag = "(libc6,AArch64";
#else
constexpr std::string_view kArchTag = "(";  // any entry
#endif

// Whether the "(…)" part of a cache line is this architecture's.
bool this_architecture(std::string_view tags) {
  const std::size_t at = tags.find(kArchTag);
  if (at == std::string_view::npos) return false;
  const std::size_t next = at + kArchTag.size();
  return kArchTag == "(" || (next < tags.size() && (tags[next] == ')' || tags[next] == ','));
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (!text.empty()) {
    const std::size_t end = text.find(separator);
    parts.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return parts;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "\tlibOpenCL.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libOpenCL.so.1": the path, when the
// line names `library` for this architecture.
std::string_view cache_entry(std::string_view line, std::string_view library) {
  line = trim(line);
  const std::size_t arrow = line.find(" => ");
  if (arrow == std::string_view::npos) return {};
  const std::string_view left = line.substr(0, arrow);
  if (left.substr(0, left.find(' ')) != library) return {};
  if (!this_architecture(left)) return {};
  const std::string_view path = trim(line.substr(arrow + 4));
  return path.starts_with('/') ? path : std::string_view{};
}

}  // namespace

std::vector<std::string> library_candidates(const std::string& library,
                                            std::string_view ld_library_path,
                                            std::string_view ldconfig_listing) {
  if (library.find('/') != std::string::npos) return {library};
  std::vector<std::string> found;
  // ld.so takes ':' and ';' alike; an empty entry (the working directory) is not a place a
  // privileged process reads a library from.
  for (std::string_view part : split(ld_library_path, ':')) {
    for (std::string_view dir : split(part, ';')) {
      if (dir.starts_with('/')) found.push_back(std::string(dir) + "/" + library);
    }
  }
  for (std::string_view line : split(ldconfig_listing, '\n')) {
    if (const std::string_view path = cache_entry(line, library); !path.empty()) {
      found.emplace_back(path);
    }
  }
  found.push_back("/lib/" + library);
  found.push_back("/usr/lib/" + library);
  return found;
}

LoaderInfo identify_loader(const std::string& path, std::string_view bytes) {
  LoaderInfo info;
  info.found = true;
  // A loader that supports layers reads the OPENCL_LAYERS variable, so its name is in the binary
  // (ocl-icd from 2.3 on, the Khronos loader from its 2020 releases).
  info.supports_layers = bytes.find("OPENCL_LAYERS") != std::string_view::npos;
  info.name = bytes.find("OCL Icd free software") != std::string_view::npos ? "ocl-icd"
              : bytes.find("Khronos") != std::string_view::npos             ? "Khronos ICD loader"
                                                                            : "unknown ICD loader";
  info.note =
      info.name + " at " + path +
      (info.supports_layers ? " loads OPENCL_LAYERS"
                            : " does not know OPENCL_LAYERS (ocl-icd < 2.3): using LD_PRELOAD");
  return info;
}

LoaderInfo no_loader(const std::string& library) {
  LoaderInfo info;
  info.note = "no OpenCL loader (" + library + ") could be found and read";
  return info;
}

bool version_at_least(const std::string& version, int major, int minor) {
  char* end = nullptr;
  const long maj = std::strtol(version.c_str(), &end, 10);
  if (end == version.c_str()) return false;
  const long min = (*end == '.') ? std::strtol(end + 1, nullptr, 10) : 0;
  return maj > major || (maj == major && min >= minor);
}

}  // namespace oaprof::attach
