// Where oaprofd and its clients meet by default; the systemd units and the install rules use the
// same paths, and every one can be overridden (oaprofd's options, OAPROF_DAEMON_SOCKET).
#pragma once

namespace oaprof::daemon {

inline constexpr const char* kDefaultStateDir = "/run/oaprof";
inline constexpr const char* kDefaultDaemonSocket = "/run/oaprof/oaprofd.sock";
inline constexpr const char* kDefaultSessionLock = "/run/oaprof/session.lock";
inline constexpr const char* kDefaultDaemonGroup = "oaprof";
inline constexpr const char* kDaemonSocketEnv = "OAPROF_DAEMON_SOCKET";

}  // namespace oaprof::daemon
