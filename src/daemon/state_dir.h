// The state directory (default /run/oaprof) holds the session lock and the state file that
// oaprofd and a local `sudo oaprof` share, and oaprofd's socket. Root writes the state file in
// it, so it must be a directory no one else can change: whoever prepares it creates it itself,
// or accepts an existing one only when it is its own and closed to others.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace oaprof::daemon {

// Creates `dir` (its parents as needed) as 0700 and opens it to 0755 once it is there, so that
// clients reach oaprofd's socket in it; a directory that already existed keeps its mode but must
// belong to our effective uid and not be writable by group or others. Throws std::runtime_error
// saying what is wrong and what to do.
void prepare_state_dir(const std::filesystem::path& dir);

// Where a local oaprof meets oaprofd: $OAPROF_STATE_DIR from `env` (oaprofd's --state-dir, for
// tests and unusual installs), else kDefaultStateDir.
std::filesystem::path state_dir_from(const std::map<std::string, std::string>& env);

}  // namespace oaprof::daemon
