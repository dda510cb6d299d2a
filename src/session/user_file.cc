#include "session/user_file.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>

#include <fmt/format.h>

#include "ipc/shm_channel.h"

namespace oaprof::session {
namespace {

// What the helper sends back, with the descriptor as SCM_RIGHTS when `err` is 0.
struct HelperReply {
  DropStage drop = DropStage::kDone;
  int err = 0;
};

int open_flags(UserFileAccess access) {
  return access == UserFileAccess::kWrite
             ? O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY
             : O_RDONLY | O_CLOEXEC | O_NOCTTY;
}

std::string refusal(const std::string& path, UserFileAccess access, int err,
                    const std::optional<Credentials>& as) {
  const bool write = access == UserFileAccess::kWrite;
  const std::string who =
      as ? fmt::format(" (opened as uid {}, the user who ran sudo)", as->uid) : std::string();
  if (write && err == ELOOP) {
    return fmt::format(
        "cannot write {}: it is a symbolic link, and oaprof does not follow a link "
        "where it writes; name the file itself{}",
        path, who);
  }
  return fmt::format("cannot {} {}: {}{}", write ? "write" : "read", path, std::strerror(err), who);
}

std::span<std::uint8_t> bytes_of(HelperReply& r) {
  return {reinterpret_cast<std::uint8_t*>(&r), sizeof r};
}

// In the helper, after fork: system calls only. Never returns.
[[noreturn]] void helper(int sock, const DropPlan& plan, const char* path, int flags) {
  HelperReply reply;
  int fd = -1;
  if (const DropFailure f = apply_drop(plan); f.failed()) {
    reply = {f.stage, f.err};
  } else {
    fd = ::open(path, flags, 0666);  // less the umask, inherited from the privileged side
    if (fd < 0) reply.err = errno;
  }
  const bool sent = fd >= 0 ? ipc::channel::send_with_fd(sock, bytes_of(reply), fd)
                            : ::send(sock, &reply, sizeof reply, MSG_NOSIGNAL) ==
                                  static_cast<ssize_t>(sizeof reply);
  ::_exit(sent ? 0 : 1);
}

int open_as(const std::string& path, UserFileAccess access, const Credentials& as) {
  const DropPlan plan = make_drop_plan(as);  // NSS here, before the fork
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    throw UserFileError(fmt::format("cannot open {}: socketpair: {}", path, std::strerror(errno)),
                        0);
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    throw UserFileError(fmt::format("cannot open {}: fork: {}", path, std::strerror(err)), 0);
  }
  if (pid == 0) {
    ::close(sv[0]);
    helper(sv[1], plan, path.c_str(), open_flags(access));
  }
  ::close(sv[1]);
  int fd = -1;
  HelperReply reply;
  if (ipc::channel::receive_with_fd(sv[0], bytes_of(reply), &fd) !=
      static_cast<long>(sizeof reply)) {
    reply = {DropStage::kDone, EPROTO};  // the helper died before it answered
  }
  ::close(sv[0]);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (reply.drop != DropStage::kDone) {
    if (fd >= 0) ::close(fd);
    throw UserFileError(fmt::format("cannot open {} as uid {}: {}; refusing to open it as root",
                                    path, as.uid, describe(DropFailure{reply.drop, reply.err})),
                        0);
  }
  if (fd < 0)
    throw UserFileError(refusal(path, access, reply.err ? reply.err : EPROTO, as), reply.err);
  return fd;
}

}  // namespace

int open_user_file(const std::string& path, UserFileAccess access,
                   const std::optional<Credentials>& as) {
  if (as) return open_as(path, access, *as);
  const int fd = ::open(path.c_str(), open_flags(access), 0666);
  if (fd < 0) {
    const int err = errno;
    throw UserFileError(refusal(path, access, err, as), err);
  }
  return fd;
}

std::string read_user_file(const std::string& path, std::size_t max_bytes,
                           const std::optional<Credentials>& as) {
  const int fd = open_user_file(path, UserFileAccess::kRead, as);
  std::string text;
  char buf[8192];
  ssize_t n = 0;
  while ((n = ::read(fd, buf, sizeof buf)) != 0) {
    const int err = errno;
    if (n < 0 && err == EINTR) continue;
    if (n < 0 || text.size() + static_cast<std::size_t>(n) > max_bytes) {
      ::close(fd);
      throw UserFileError(n < 0 ? fmt::format("cannot read {}: {}", path, std::strerror(err))
                                : fmt::format("{} is larger than {} bytes", path, max_bytes),
                          n < 0 ? err : EFBIG);
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace oaprof::session
