#include "run/opencl_loader.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <utility>

#include "session/user_file.h"

namespace oaprof::run {
namespace {

// A loader is a few hundred kB; a file past this is not one, and is not read further.
constexpr std::size_t kMaxLoaderBytes = 64u << 20;
constexpr std::size_t kMaxListingBytes = 16u << 20;

// Up to `limit` bytes of `fd`, which it closes.
std::string read_all(int fd, std::size_t limit) {
  std::string bytes;
  std::array<char, 65536> chunk{};
  while (bytes.size() < limit) {
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(chunk.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return bytes;
}

// Runs `program -p` with its output into a pipe; the pid, or -1.
pid_t spawn_listing(const char* program, int out_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  char arg0[] = "ldconfig";
  char arg1[] = "-p";
  char* argv[] = {arg0, arg1, nullptr};
  char* envp[] = {nullptr};
  pid_t pid = -1;
  if (::posix_spawn(&pid, program, &actions, nullptr, argv, envp) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

}  // namespace

std::string ldconfig_listing() {
  // Debian and Ubuntu install it in /sbin (a link to /usr/sbin where /usr is merged).
  for (const char* program : {"/sbin/ldconfig", "/usr/sbin/ldconfig"}) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return {};
    const pid_t pid = spawn_listing(program, fds[1]);
    ::close(fds[1]);
    if (pid < 0) {
      ::close(fds[0]);
      continue;
    }
    std::string listing = read_all(fds[0], kMaxListingBytes);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return listing;
  }
  return {};
}

namespace {

// The candidate path that `as` can open, and the descriptor it opened (the caller closes it).
std::optional<std::pair<std::string, int>> open_library_file(
    const std::string& library, const std::string& ld_library_path,
    const std::optional<session::Credentials>& as) {
  const std::string listing = library.find('/') == std::string::npos ? ldconfig_listing() : "";
  for (const std::string& path : attach::library_candidates(library, ld_library_path, listing)) {
    try {
      return std::pair{path, session::open_user_file(path, session::UserFileAccess::kRead, as)};
    } catch (const session::UserFileError&) {
      continue;  // not there, or not the user's to read: the linker would not get it either
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> find_library_file(const std::string& library,
                                             const std::string& ld_library_path,
                                             const std::optional<session::Credentials>& as) {
  const auto found = open_library_file(library, ld_library_path, as);
  if (!found) return std::nullopt;
  ::close(found->second);
  return found->first;
}

attach::LoaderInfo find_opencl_loader(const std::string& library,
                                      const std::string& ld_library_path,
                                      const std::optional<session::Credentials>& as) {
  if (const auto found = open_library_file(library, ld_library_path, as)) {
    return attach::identify_loader(found->first, read_all(found->second, kMaxLoaderBytes));
  }
  return attach::no_loader(library);
}

}  // namespace oaprof::run
