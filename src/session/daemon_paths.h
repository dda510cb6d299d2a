// Where oaprofd and its clients meet by default; the systemd units and the install rules use the
// same paths, and every one can be overridden (oaprofd's options, OAPROF_DAEMON_SOCKET,
// OAPROF_STATE_DIR).
#pragma once

namespace oaprof::session {

inline constexpr const char* kDefaultStateDir = "/run/oaprof";
inline constexpr const char* kDefaultDaemonSocket = "/run/oaprof/oaprofd.sock";
inline constexpr const char* kDefaultSessionLock = "/run/oaprof/session.lock";
inline constexpr const char* kDefaultDaemonGroup = "oaprof";
inline constexpr const char* kDaemonSocketEnv = "OAPROF_DAEMON_SOCKET";
// A local `sudo oaprof` takes the lock and journals its registers in this directory; it must be
// oaprofd's --state-dir for the two to keep each other out.
inline constexpr const char* kStateDirEnv = "OAPROF_STATE_DIR";

}  // namespace oaprof::session
