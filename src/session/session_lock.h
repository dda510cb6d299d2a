// The OA unit has one owner at a time, whether oaprofd serves it or a local `sudo oaprof` drives
// it: both take an exclusive flock on the same file (default /run/oaprof/session.lock) for as
// long as they program the unit, and write who they are into it for the other's busy message.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

#include "session/daemon_paths.h"

namespace oaprof::session {

class SessionLock {
 public:
  // Takes the lock without waiting and records `holder` ("uid U, pid P since T") in the file.
  // Returns nullopt with `*busy_holder` set to what the current holder wrote when another
  // process has it. Throws std::runtime_error when the file cannot be opened, when its directory
  // fails require_safe_state_path, or when it is not a plain file of ours (a link, a FIFO, a file
  // with a second name).
  static std::optional<SessionLock> try_acquire(const std::filesystem::path& path,
                                                const std::string& holder,
                                                std::string* busy_holder);
  SessionLock(SessionLock&& other) noexcept;
  SessionLock& operator=(SessionLock&& other) noexcept;
  SessionLock(const SessionLock&) = delete;
  SessionLock& operator=(const SessionLock&) = delete;
  ~SessionLock();

 private:
  explicit SessionLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// "uid U, pid P since 2026-11-22T05:30:00Z" for the current time.
std::string holder_text(uid_t uid, pid_t pid);

}  // namespace oaprof::session
