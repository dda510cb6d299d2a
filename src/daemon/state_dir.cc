#include "daemon/state_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "daemon/daemon_paths.h"

namespace oaprof::daemon {

void prepare_state_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  if (dir.has_parent_path()) std::filesystem::create_directories(dir.parent_path(), ec);
  if (ec) {
    throw std::runtime_error(fmt::format(
        "cannot create the state directory {}: {}; run as root, or point oaprofd's --state-dir "
        "(oaprof: ${}) at a directory of yours",
        dir.string(), ec.message(), kStateDirEnv));
  }
  // 0700 first: a umask of 0 must not leave it open to others for a moment.
  if (::mkdir(dir.c_str(), 0700) == 0) {
    if (::chmod(dir.c_str(), 0755) != 0) {
      throw std::runtime_error(fmt::format("cannot make the state directory {} 0755: {}",
                                           dir.string(), std::strerror(errno)));
    }
    return;
  }
  if (errno != EEXIST) {
    throw std::runtime_error(fmt::format(
        "cannot create the state directory {}: {}; run as root, or point oaprofd's --state-dir "
        "(oaprof: ${}) at a directory of yours",
        dir.string(), std::strerror(errno), kStateDirEnv));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    throw std::runtime_error(fmt::format("cannot examine the state directory {}: {}",
                                         dir.string(), std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    const std::string why =
        !S_ISDIR(st.st_mode)       ? std::string("not a directory")
        : st.st_uid != ::geteuid() ? fmt::format("owned by uid {}, not {}", st.st_uid, ::geteuid())
                                   : std::string("writable by group or others");
    throw std::runtime_error(fmt::format(
        "the state directory {} is {}: the session lock and the register journal in it must be "
        "out of others' reach. Remove it (it is recreated) or name another one",
        dir.string(), why));
  }
}

std::filesystem::path state_dir_from(const std::map<std::string, std::string>& env) {
  const auto it = env.find(kStateDirEnv);
  return it != env.end() && !it->second.empty() ? std::filesystem::path(it->second)
                                                : std::filesystem::path(kDefaultStateDir);
}

}  // namespace oaprof::daemon
