// The state directory (default /run/oaprof) holds the session lock and the state file that
// oaprofd and a local `sudo oaprof` share, and oaprofd's socket. Root writes the state file in
// it and restores registers from it, so no one else may be able to change it or any directory
// above it: whoever prepares it creates it itself, or accepts an existing one only when the
// whole path is closed to others, and it never comes from the environment of a user who ran sudo.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "session/privilege_drop.h"

namespace oaprof::session {

// Throws std::runtime_error naming the component, what is wrong and what to do, unless every
// component of `dir` (made absolute) is a directory, none is a symbolic link, each belongs to root
// or to our effective uid (`dir` itself to our effective uid) and none is writable by group or
// others. A sticky directory above `dir` (as /tmp is) may be writable by others: no one else can
// rename or remove what is ours in it.
void require_safe_state_path(const std::filesystem::path& dir);

// Creates `dir` (its parents as needed) as 0700 and opens it to 0755 through its descriptor once
// it is there, so that clients reach oaprofd's socket in it; a directory that already existed
// keeps its mode. Either way the whole path must then pass require_safe_state_path.
void prepare_state_dir(const std::filesystem::path& dir);

// Where a local oaprof meets oaprofd: $OAPROF_STATE_DIR from `env` (oaprofd's --state-dir, for
// tests and unusual installs), else kDefaultStateDir. Under sudo (`sudo_user` set) the variable is
// the invoking user's to choose, so a value other than the default is refused with
// std::invalid_argument.
std::filesystem::path state_dir_from(const std::map<std::string, std::string>& env,
                                     const std::optional<Credentials>& sudo_user = std::nullopt);

}  // namespace oaprof::session
