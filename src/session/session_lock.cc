#include "session/session_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "base/ignore_result.h"
#include "session/state_dir.h"

namespace oaprof::session {

std::optional<SessionLock> SessionLock::try_acquire(const std::filesystem::path& path,
                                                    const std::string& holder,
                                                    std::string* busy_holder) {
  // Root truncates and writes this file: its directory must be out of others' reach, and the
  // file itself a plain file of ours, never a link planted to another.
  require_safe_state_path(path.parent_path());
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
  if (fd < 0) {
    const int err = errno;
    throw std::runtime_error(
        fmt::format("cannot open the session lock {}: {}", path.string(),
                    err == ELOOP ? "it is a symbolic link; remove it" : std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      st.st_nlink != 1) {
    ::close(fd);
    throw std::runtime_error(fmt::format(
        "the session lock {} is not a plain file of uid {} with one name; remove it (it is "
        "recreated)",
        path.string(), ::geteuid()));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (busy_holder != nullptr) {
      char buf[256] = {};
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      *busy_holder = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "another process";
      while (!busy_holder->empty() && busy_holder->back() == '\n') busy_holder->pop_back();
    }
    ::close(fd);
    return std::nullopt;
  }
  const std::string line = holder + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, line.data(), line.size(), 0) < 0) {
    // The lock holds without the note; only the other side's message is poorer.
  }
  return SessionLock(fd);
}

SessionLock::SessionLock(SessionLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

SessionLock& SessionLock::operator=(SessionLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

SessionLock::~SessionLock() {
  if (fd_ >= 0) {
    base::ignore_result(::ftruncate(fd_, 0));
    ::close(fd_);  // releases the flock
  }
}

std::string holder_text(uid_t uid, pid_t pid) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char iso[32];
  std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return fmt::format("uid {}, pid {} since {}", uid, pid, iso);
}

}  // namespace oaprof::session
