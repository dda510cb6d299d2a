// Opening the invoking user's files from the privileged side. Under sudo, a file the user names
// (an output, a metric file) is opened by a short-lived helper process that has first become the
// user for good (privilege_drop.h, checked) and hands the descriptor back over a socket pair: the
// kernel judges the path exactly as for the user (their uid, their groups, no capability), so
// root's reach never extends to a path the user controls, and nothing is chowned afterwards.
// Without sudo the process opens it itself, as whoever it is.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

#include "session/privilege_drop.h"

namespace oaprof::session {

enum class UserFileAccess {
  // Created (mode 0666 less the umask, as any program would) or truncated, write only. The last
  // component is never followed when it is a symbolic link (O_NOFOLLOW).
  kWrite,
  // Read only; links are followed, as the user could follow them.
  kRead,
};

// A path the user cannot open as asked; errno_value is the open's errno (0: the helper failed).
class UserFileError : public std::runtime_error {
 public:
  UserFileError(const std::string& what, int err) : std::runtime_error(what), err_(err) {}
  int errno_value() const { return err_; }

 private:
  int err_;
};

// Opens `path` (O_CLOEXEC) as `as` when given, else as this process. Returns the descriptor, which
// the caller owns. Throws UserFileError with a message naming the path, the reason and, under
// sudo, the uid it was opened as.
int open_user_file(const std::string& path, UserFileAccess access,
                   const std::optional<Credentials>& as);

// The whole of `path`, opened as open_user_file(kRead) does, when it is at most `max_bytes`: a
// small file the user names (a model, a configuration). Throws UserFileError naming the path when
// it cannot be opened or read, or is larger.
std::string read_user_file(const std::string& path, std::size_t max_bytes,
                           const std::optional<Credentials>& as);

}  // namespace oaprof::session
