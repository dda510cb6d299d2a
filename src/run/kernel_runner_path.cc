#include "run/kernel_runner_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace oaprof::run {

namespace fs = std::filesystem;

std::optional<fs::path> kernel_runner_in(const fs::path& bin_dir, std::string* looked) {
  const fs::path path = bin_dir / "kernel_runner";
  struct stat st {};
  std::string found;
  if (::stat(path.c_str(), &st) != 0) {
    found = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    found = "not a regular file";
  } else if ((st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) == 0) {
    found = "not executable";
  } else {
    return path;
  }
  if (looked != nullptr) {
    *looked = fmt::format("no kernel_runner at {} ({}): it ships beside oaprof; reinstall oaprof",
                          path.string(), found);
  }
  return std::nullopt;
}

std::optional<fs::path> installed_kernel_runner(std::string* looked) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    if (looked != nullptr) *looked = "cannot read /proc/self/exe: " + ec.message();
    return std::nullopt;
  }
  return kernel_runner_in(exe.parent_path(), looked);
}

}  // namespace oaprof::run
