#include "session/state_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "session/daemon_paths.h"

namespace oaprof::session {
namespace fs = std::filesystem;

namespace {

// Why `st` (the component `p`, `last` when it is the state directory itself) cannot hold root's
// state, or empty when it can.
std::string unsafe_because(const struct stat& st, bool last) {
  const uid_t me = ::geteuid();
  if (S_ISLNK(st.st_mode)) return "a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  if (last ? st.st_uid != me : st.st_uid != 0 && st.st_uid != me) {
    return last ? fmt::format("owned by uid {}, not {}", st.st_uid, me)
                : fmt::format("owned by uid {}, neither root nor {}", st.st_uid, me);
  }
  const bool sticky_above = !last && (st.st_mode & S_ISVTX) != 0;
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !sticky_above) {
    return "writable by group or others";
  }
  return {};
}

}  // namespace

void require_safe_state_path(const fs::path& dir) {
  const fs::path full = fs::absolute(dir).lexically_normal();
  fs::path p = full.root_path();
  std::vector<fs::path> chain{p};
  for (const fs::path& part : full.relative_path()) {
    if (part.empty()) continue;  // a trailing slash
    p /= part;
    chain.push_back(p);
  }
  for (std::size_t i = 0; i < chain.size(); ++i) {
    struct stat st {};
    if (::lstat(chain[i].c_str(), &st) != 0) {
      throw std::runtime_error(
          fmt::format("cannot examine {} (on the way to the state directory "
                      "{}): {}",
                      chain[i].string(), full.string(), std::strerror(errno)));
    }
    const bool last = i + 1 == chain.size();
    if (const std::string why = unsafe_because(st, last); !why.empty()) {
      throw std::runtime_error(fmt::format(
          "the state directory {} cannot be trusted: {} is {}. The session lock and the register "
          "journal in it must be out of others' reach, and so must every directory above it. "
          "{}",
          full.string(), chain[i].string(), why,
          last ? "Remove it (it is recreated) or name another one"
               : "Name a state directory under root's own directories, such as /run/oaprof"));
    }
  }
}

void prepare_state_dir(const fs::path& dir) {
  std::error_code ec;
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
  if (ec) {
    throw std::runtime_error(fmt::format(
        "cannot create the state directory {}: {}; run as root, or point oaprofd's --state-dir "
        "(oaprof: ${}) at a directory of yours",
        dir.string(), ec.message(), kStateDirEnv));
  }
  // 0700 first: a umask of 0 must not leave it open to others for a moment.
  const bool created = ::mkdir(dir.c_str(), 0700) == 0;
  if (!created && errno != EEXIST) {
    throw std::runtime_error(fmt::format(
        "cannot create the state directory {}: {}; run as root, or point oaprofd's --state-dir "
        "(oaprof: ${}) at a directory of yours",
        dir.string(), std::strerror(errno), kStateDirEnv));
  }
  require_safe_state_path(dir);
  if (!created) return;
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  const bool opened_up = fd >= 0 && ::fchmod(fd, 0755) == 0;
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!opened_up) {
    throw std::runtime_error(fmt::format("cannot make the state directory {} 0755: {}",
                                         dir.string(), std::strerror(err)));
  }
}

fs::path state_dir_from(const std::map<std::string, std::string>& env,
                        const std::optional<Credentials>& sudo_user) {
  const auto it = env.find(kStateDirEnv);
  if (it == env.end() || it->second.empty()) return fs::path(kDefaultStateDir);
  if (sudo_user && fs::path(it->second).lexically_normal() != fs::path(kDefaultStateDir)) {
    throw std::invalid_argument(fmt::format(
        "{}={} comes from the environment of the user who ran sudo (uid {}), and root keeps its "
        "session lock and register journal only in {}; unset {}",
        kStateDirEnv, it->second, sudo_user->uid, kDefaultStateDir, kStateDirEnv));
  }
  return fs::path(it->second);
}

}  // namespace oaprof::session
