#include "session/child.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "mmio/signal_restore.h"

extern char** environ;

namespace oaprof::session {
namespace {

// What execvp would try, in order: `name` itself when it has a slash, else the regular files of
// that name along the child's PATH (the child, as the user, goes on to the next one when the
// kernel refuses one, as execvp does).
std::vector<std::string> resolve_program(const std::string& name,
                                         const std::map<std::string, std::string>& env) {
  if (name.find('/') != std::string::npos) return {name};
  std::vector<std::string> found;
  const auto it = env.find("PATH");
  const std::string path = it != env.end() ? it->second : std::string("/bin:/usr/bin");
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = path.find(':', begin);
    std::string dir =
        path.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0) {
      found.push_back(candidate);
    }
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  if (!found.empty()) return found;
  throw std::runtime_error(fmt::format(
      "cannot run '{}': no executable of that name in PATH ({}); give its path", name, path));
}

// Reported through a close-on-exec pipe from the child when something fails before exec.
struct ChildFailure {
  DropStage drop;  // kDone: the drop took (or there was none) and exec failed
  int err;
};

}  // namespace

pid_t spawn_child(const ChildSpec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("no program to run: give one after --");
  // oaprof has threads (the socket server, samplers) when it forks, so between fork and exec the
  // child may only make async-signal-safe calls: a lock another thread held at the fork (in
  // malloc, in NSS behind initgroups, in setenv) would never be released. Everything that needs
  // more (the user's groups and home, the environment, the program's path) is resolved here.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr) env[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
  }
  for (const auto& [k, v] : spec.set_env) env[k] = v;
  std::optional<DropPlan> drop;
  if (spec.credentials) {
    const Credentials& c = *spec.credentials;
    // The user's own HOME, USER and LOGNAME, not root's: under sudo the environment still names
    // root's home, where the program would otherwise write its caches as that user, or fail to.
    if (const auto account = lookup_account(c.uid)) {
      env["HOME"] = account->home;
      env["USER"] = account->name;
      env["LOGNAME"] = account->name;
    } else {
      for (const char* k : {"HOME", "USER", "LOGNAME"}) env.erase(k);
    }
    drop = make_drop_plan(c);
  }
  const std::vector<std::string> programs = resolve_program(spec.argv[0], env);

  std::vector<std::string> env_lines;
  env_lines.reserve(env.size());
  for (const auto& [k, v] : env) env_lines.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& line : env_lines) envp.push_back(line.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // For a file the kernel cannot execute itself (a script without #!), execvp runs /bin/sh on
  // it; its argv is made here, the file's name filled in after the fork.
  std::vector<char*> sh_argv{const_cast<char*>("/bin/sh"), nullptr};
  sh_argv.insert(sh_argv.end(), argv.begin() + 1, argv.end());

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  // oaprof takes its signals on a thread with them blocked everywhere; the program gets the mask
  // it would have had without oaprof.
  const sigset_t program_mask = mmio::SignalThread::mask_for_programs();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(err)));
  }
  if (pid == 0) {
    // From here to execve: system calls only.
    ::close(pipe_fds[0]);
    ::sigprocmask(SIG_SETMASK, &program_mask, nullptr);
    const auto fail = [&](const ChildFailure& f) {
      (void)::write(pipe_fds[1], &f, sizeof f);
      ::_exit(127);
    };
    if (drop) {
      // Nothing of the user's runs unless the drop is complete and checked.
      const DropFailure f = apply_drop(*drop);
      if (f.failed()) fail({f.stage, f.err});
    }
    int exec_errno = ENOENT;
    for (const std::string& program : programs) {
      ::execve(program.c_str(), argv.data(), envp.data());
      exec_errno = errno;
      if (exec_errno == ENOEXEC) {
        sh_argv[1] = const_cast<char*>(program.c_str());
        ::execve("/bin/sh", sh_argv.data(), envp.data());
        exec_errno = errno;
      }
      // execvp goes on past these; anything else is the answer.
      if (exec_errno != EACCES && exec_errno != ENOENT && exec_errno != ENOTDIR) break;
    }
    fail({DropStage::kDone, exec_errno});
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
    if (f.drop == DropStage::kDone) {
      throw std::runtime_error(
          fmt::format("cannot run '{}': {}", spec.argv[0], std::strerror(f.err)));
    }
    throw std::runtime_error(fmt::format("refusing to run '{}': {} (uid {}); nothing of it ran",
                                         spec.argv[0], describe(DropFailure{f.drop, f.err}),
                                         spec.credentials->uid));
  }
  return pid;
}

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace oaprof::session
