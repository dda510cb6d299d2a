#include "daemon/child.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::daemon {
namespace {

unsigned long parse_id(const std::string& name, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0) {
    throw std::runtime_error(fmt::format("{}='{}' is not a numeric id", name, text));
  }
  return v;
}

// Reported through a close-on-exec pipe from the child when something fails before exec.
struct ChildFailure {
  int stage;  // 0 setgroups, 1 setgid, 2 setuid, 3 exec
  int err;
};

}  // namespace

std::optional<Credentials> credentials_from_sudo(const std::map<std::string, std::string>& env,
                                                 uid_t euid) {
  auto uid_it = env.find("SUDO_UID");
  if (euid != 0 || uid_it == env.end()) return std::nullopt;
  Credentials c;
  c.uid = static_cast<uid_t>(parse_id("SUDO_UID", uid_it->second));
  auto gid_it = env.find("SUDO_GID");
  if (gid_it != env.end()) {
    c.gid = static_cast<gid_t>(parse_id("SUDO_GID", gid_it->second));
  } else if (const passwd* pw = ::getpwuid(c.uid)) {
    c.gid = pw->pw_gid;
  }
  if (const passwd* pw = ::getpwuid(c.uid)) c.user = pw->pw_name;
  if (c.uid == 0) return std::nullopt;  // sudo from root: nothing to drop to
  return c;
}

pid_t spawn_child(const ChildSpec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("no program to run: give one after --");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(err)));
  }
  if (pid == 0) {
    ::close(pipe_fds[0]);
    auto fail = [&](int stage) {
      const ChildFailure f{stage, errno};
      (void)::write(pipe_fds[1], &f, sizeof f);
      ::_exit(127);
    };
    for (const auto& [k, v] : spec.set_env) ::setenv(k.c_str(), v.c_str(), 1);
    if (spec.credentials) {
      const Credentials& c = *spec.credentials;
      const int r = c.user.empty() ? ::setgroups(0, nullptr)
                                   : ::initgroups(c.user.c_str(), c.gid);
      if (r != 0) fail(0);
      if (::setgid(c.gid) != 0) fail(1);
      if (::setuid(c.uid) != 0) fail(2);
    }
    ::execvp(argv[0], argv.data());
    fail(3);
  }
  ::close(pipe_fds[1]);
  ChildFailure f{};
  ssize_t n;
  do {
    n = ::read(pipe_fds[0], &f, sizeof f);
  } while (n < 0 && errno == EINTR);
  ::close(pipe_fds[0]);
  if (n == sizeof f) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    static constexpr const char* kStage[] = {"set the supplementary groups", "set the gid",
                                             "set the uid"};
    if (f.stage == 3) {
      throw std::runtime_error(fmt::format("cannot run '{}': {}", spec.argv[0], std::strerror(f.err)));
    }
    throw std::runtime_error(fmt::format("cannot {} for '{}': {}", kStage[f.stage], spec.argv[0],
                                         std::strerror(f.err)));
  }
  return pid;
}

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace oaprof::daemon
