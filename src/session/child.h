// Starting the profiled program. The privileged side never runs the user's program as root:
// under sudo the child becomes SUDO_UID/SUDO_GID with that user's supplementary groups, HOME, USER
// and LOGNAME and no capability (privilege_drop.h), checked before it execs.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "session/privilege_drop.h"

namespace oaprof::session {

struct ChildSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> set_env;  // added to (or replacing in) our environment
  std::optional<Credentials> credentials;
  // Where the child's stdout and stderr go (our descriptors, made its 1 and 2 before exec); -1:
  // ours. The selftest reads a load's progress and errors this way (run/selftest_load.h).
  int stdout_fd = -1;
  int stderr_fd = -1;
  // Killed (SIGKILL) when the thread that spawned it ends, even by a crash, so that a helper we
  // start cannot outlive us. Set after the drop: the kernel clears it on a change of credentials.
  bool dies_with_parent = false;
};

// fork + exec; returns the child's pid once exec succeeded. The groups, the environment and the
// program's path are resolved before the fork (the child of a process with threads may only make
// async-signal-safe calls). With credentials, HOME, USER and LOGNAME become the user's (removed
// when the uid has no account). Throws std::runtime_error with the reason when the program cannot
// be started (not found, not executable, credentials refused, or a drop that did not take: the
// child then exits 127 without running anything).
pid_t spawn_child(const ChildSpec& spec);

// Exit status as a shell reports it: the exit code, or 128 + signal number.
int shell_status(int wait_status);

}  // namespace oaprof::session
