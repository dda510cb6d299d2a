// Starting the profiled program. The privileged side never runs the user's program as root:
// under sudo the child gets SUDO_UID/SUDO_GID, that user's supplementary groups and HOME, USER
// and LOGNAME, and setuid from root to a non-root uid drops every capability.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace oaprof::daemon {

struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string user;  // for the supplementary groups; empty: only gid
};

// The credentials to run the child with: from SUDO_UID/SUDO_GID when running as root under sudo,
// nullopt otherwise (the child keeps ours). Throws std::runtime_error on malformed values.
std::optional<Credentials> credentials_from_sudo(const std::map<std::string, std::string>& env,
                                                 uid_t euid);

struct ChildSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> set_env;  // added to (or replacing in) our environment
  std::optional<Credentials> credentials;
};

// fork + exec; returns the child's pid once exec succeeded. The groups, the environment and the
// program's path are resolved before the fork (the child of a process with threads may only make
// async-signal-safe calls). With credentials, HOME, USER and LOGNAME become the user's (removed
// when the uid has no account). Throws std::runtime_error with the reason when the program cannot
// be started (not found, not executable, credentials refused).
pid_t spawn_child(const ChildSpec& spec);

// Exit status as a shell reports it: the exit code, or 128 + signal number.
int shell_status(int wait_status);

}  // namespace oaprof::daemon
