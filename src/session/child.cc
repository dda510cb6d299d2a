#include "session/child.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "base/ignore_result.h"
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

// Our environment with the spec's additions.
std::map<std::string, std::string> inherited_env(
    const std::map<std::string, std::string>& set_env) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr) env[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
  }
  for (const auto& [k, v] : set_env) env[k] = v;
  return env;
}

// The user's own HOME, USER and LOGNAME, not root's: under sudo the environment still names
// root's home, where the program would otherwise write its caches as that user, or fail to.
void use_account_env(uid_t uid, std::map<std::string, std::string>& env) {
  if (const auto account = lookup_account(uid)) {
    env["HOME"] = account->home;
    env["USER"] = account->name;
    env["LOGNAME"] = account->name;
  } else {
    for (const char* k : {"HOME", "USER", "LOGNAME"}) env.erase(k);
  }
}

// What execve takes, made before the fork. Neither copied nor moved: envp and argv point into
// env_lines and the spec's argv.
struct ExecArgs {
  ExecArgs(const std::vector<std::string>& program_argv,
           const std::map<std::string, std::string>& env) {
    env_lines.reserve(env.size());
    for (const auto& [k, v] : env) env_lines.push_back(k + "=" + v);
    for (auto& line : env_lines) envp.push_back(line.data());
    envp.push_back(nullptr);
    for (const auto& a : program_argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    sh_argv.insert(sh_argv.end(), argv.begin() + 1, argv.end());
  }
  ExecArgs(const ExecArgs&) = delete;
  ExecArgs& operator=(const ExecArgs&) = delete;

  std::vector<std::string> env_lines;
  std::vector<char*> envp;
  std::vector<char*> argv;
  // For a file the kernel cannot execute itself (a script without #!), execvp runs /bin/sh on
  // it; its argv is made here, the file's name filled in after the fork.
  std::vector<char*> sh_argv{const_cast<char*>("/bin/sh"), nullptr};
};

// The three below run in the forked child, between fork and exec: async-signal-safe calls only,
// on what was prepared before the fork.

[[noreturn]] void fail_in_child(int fd, const ChildFailure& f) {
  base::ignore_result(::write(fd, &f, sizeof f));
  ::_exit(127);
}

// Tries each of `programs` as execvp would; returns the errno that is the answer when none ran.
int exec_program(const std::vector<std::string>& programs, ExecArgs& args) {
  int exec_errno = ENOENT;
  for (const std::string& program : programs) {
    ::execve(program.c_str(), args.argv.data(), args.envp.data());
    exec_errno = errno;
    if (exec_errno == ENOEXEC) {
      args.sh_argv[1] = const_cast<char*>(program.c_str());
      ::execve("/bin/sh", args.sh_argv.data(), args.envp.data());
      exec_errno = errno;
    }
    // execvp goes on past these; anything else is the answer.
    if (exec_errno != EACCES && exec_errno != ENOENT && exec_errno != ENOTDIR) break;
  }
  return exec_errno;
}

// Makes `fd` the child's `target` (1 or 2), open across exec; -1 leaves ours. Returns errno or 0.
int redirect(int fd, int target) {
  if (fd < 0) return 0;
  // dup2 onto itself would keep a close-on-exec flag.
  if (fd == target) return ::fcntl(fd, F_SETFD, 0) == 0 ? 0 : errno;
  return ::dup2(fd, target) == target ? 0 : errno;
}

// The spawn's settings that the child applies itself, prepared before the fork.
struct ChildSetup {
  sigset_t program_mask;
  std::optional<DropPlan> drop;
  int stdout_fd = -1, stderr_fd = -1;
  bool dies_with_parent = false;
  pid_t parent = 0;
};

// After the drop (a change of credentials clears the parent-death signal). The parent may have
// died before prctl: then no signal will come, and the child must not run on.
int arm_parent_death(const ChildSetup& setup) {
  if (!setup.dies_with_parent) return 0;
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return errno;
  if (::getppid() != setup.parent) ::_exit(127);
  return 0;
}

// Drops privileges when asked, then execs the program; exits 127 with the reason on the pipe.
[[noreturn]] void run_child(const int pipe_fds[2], const ChildSetup& setup,
                            const std::vector<std::string>& programs, ExecArgs& args) {
  // From here to execve: system calls only.
  ::close(pipe_fds[0]);
  ::sigprocmask(SIG_SETMASK, &setup.program_mask, nullptr);
  if (setup.drop) {
    // Nothing of the user's runs unless the drop is complete and checked.
    const DropFailure f = apply_drop(*setup.drop);
    if (f.failed()) fail_in_child(pipe_fds[1], {f.stage, f.err});
  }
  for (const int err : {arm_parent_death(setup), redirect(setup.stdout_fd, STDOUT_FILENO),
                        redirect(setup.stderr_fd, STDERR_FILENO)}) {
    if (err != 0) fail_in_child(pipe_fds[1], {DropStage::kDone, err});
  }
  const int exec_errno = exec_program(programs, args);
  fail_in_child(pipe_fds[1], {DropStage::kDone, exec_errno});
}

// In the parent: waits until the child has exec'd (the pipe closes) or reported why it did not,
// and then reaps it and throws that reason.
void await_exec(pid_t pid, int read_fd, const ChildSpec& spec) {
  ChildFailure f{};
  ssize_t n;
  do {
    n = ::read(read_fd, &f, sizeof f);
  } while (n < 0 && errno == EINTR);
  ::close(read_fd);
  if (n != sizeof f) return;
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

}  // namespace

pid_t spawn_child(const ChildSpec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("no program to run: give one after --");
  // oaprof has threads (the socket server, samplers) when it forks, so between fork and exec the
  // child may only make async-signal-safe calls: a lock another thread held at the fork (in
  // malloc, in NSS behind initgroups, in setenv) would never be released. Everything that needs
  // more (the user's groups and home, the environment, the program's path) is resolved here.
  std::map<std::string, std::string> env = inherited_env(spec.set_env);
  ChildSetup setup{.program_mask = mmio::SignalThread::mask_for_programs(),
                   .drop = std::nullopt,
                   .stdout_fd = spec.stdout_fd,
                   .stderr_fd = spec.stderr_fd,
                   .dies_with_parent = spec.dies_with_parent,
                   .parent = ::getpid()};
  if (spec.credentials) {
    use_account_env(spec.credentials->uid, env);
    setup.drop = make_drop_plan(*spec.credentials);
  }
  const std::vector<std::string> programs = resolve_program(spec.argv[0], env);
  ExecArgs args(spec.argv, env);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  // oaprof takes its signals on a thread with them blocked everywhere; the program gets the mask
  // it would have had without oaprof (setup.program_mask).
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(err)));
  }
  if (pid == 0) run_child(pipe_fds, setup, programs, args);
  ::close(pipe_fds[1]);
  await_exec(pid, pipe_fds[0], spec);
  return pid;
}

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace oaprof::session
