// The two pieces of the systemd protocol oaprofd uses, spoken directly so that it needs no
// libsystemd: socket activation (LISTEN_PID/LISTEN_FDS, the socket is fd 3) and readiness
// notification (a datagram such as "READY=1" to $NOTIFY_SOCKET).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace oaprof::daemon {

inline constexpr int kListenFdsStart = 3;

// The listening socket systemd passed when LISTEN_PID is `pid` and LISTEN_FDS >= 1; nullopt
// otherwise. `env` holds LISTEN_PID and LISTEN_FDS (the process environment in production).
std::optional<int> activated_socket(const std::map<std::string, std::string>& env, int pid);

// Sends `state` to the unix datagram socket `notify_socket` ('@' starts an abstract name).
// Returns false when there is no socket to tell or the send failed; systemd is then not waiting.
bool notify_systemd(std::string_view notify_socket, std::string_view state);

}  // namespace oaprof::daemon
