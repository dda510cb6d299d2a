#include "run/selftest_load.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "run/kernel_runner_path.h"
#include "session/child.h"
#include "session/privilege_drop.h"

namespace oaprof::run::selftest {
namespace {

using Clock = std::chrono::steady_clock;

// What kernel_runner --busy says on stderr once its first launch finished (docs/kernel_runner.md).
constexpr std::string_view kStartedMark = "kernel_runner: busy: ";
// The stderr kept for a reason: its tail, enough for the last lines.
constexpr std::size_t kStderrKept = 4096;

// Closes a descriptor pair's ends on every path out of the constructor.
struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      throw LoadUnavailable(fmt::format("pipe: {}", std::strerror(errno)));
    }
  }
  ~Pipe() {
    for (const int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  int take_read() { return std::exchange(fds[0], -1); }
};

int open_dev_null() {
  const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw LoadUnavailable(fmt::format("/dev/null: {}", std::strerror(errno)));
  return fd;
}

// How a process ended, as a reason says it.
std::string ended(int status) {
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  return "stopped";
}

// Reads what is there now into `tail` (its last kStderrKept bytes); false at end of file.
bool read_some(int fd, std::string& tail) {
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  tail.append(buf, static_cast<std::size_t>(n));
  if (tail.size() > 2 * kStderrKept) tail.erase(0, tail.size() - kStderrKept);
  return true;
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<std::int64_t>(left.count(), 0));
}

}  // namespace

std::string last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  const std::size_t nl = text.find_last_of('\n');
  return std::string(nl == std::string_view::npos ? text : text.substr(nl + 1));
}

std::optional<std::filesystem::path> selftest_kernel_runner(const SelftestOptions& options,
                                                            std::string& why) {
  return options.kernel_runner_dir.empty() ? installed_kernel_runner(&why)
                                           : kernel_runner_in(options.kernel_runner_dir, &why);
}

std::optional<mmio::PciAddress> opencl_device_under_test(const gpu::Device& device) {
  if (device.simulated()) return std::nullopt;
  return mmio::parse_pci_address(device.pci_address);
}

std::vector<std::string> opencl_device_arguments(const std::optional<mmio::PciAddress>& device) {
  if (!device) return {};
  return {"--cl-device", fmt::format("pci:{}", device->str())};
}

std::vector<std::string> load_arguments(const std::filesystem::path& kernel_runner, int seconds,
                                        const std::optional<mmio::PciAddress>& device,
                                        const LoadWork& work) {
  constexpr std::size_t kWorkItems = 64;
  std::vector<std::string> argv = {
      kernel_runner.string(),
      work.kernel,
      "--wg",
      std::to_string(std::max<std::size_t>(work.global / kWorkItems, 1)),
      "--wi",
      std::to_string(kWorkItems)};
  if (work.size_bytes > 0) argv.insert(argv.end(), {"--size", std::to_string(work.size_bytes)});
  argv.insert(argv.end(), {"--busy", fmt::format("{}s", seconds)});
  if (work.rest > 0) argv.insert(argv.end(), {"--rest", fmt::format("{}", work.rest)});
  for (std::string& a : opencl_device_arguments(device)) argv.push_back(std::move(a));
  return argv;
}

GpuLoad::GpuLoad(const LoadCommand& command)
    : start_bound_(command.start_bound),
      stop_bound_(command.stop_bound),
      name_(command.argv.empty() ? "" : std::filesystem::path(command.argv[0]).filename()) {
  Pipe err;
  const int null_fd = open_dev_null();
  session::ChildSpec spec{.argv = command.argv,
                          .set_env = {},
                          .credentials = command.credentials,
                          .stdout_fd = null_fd,
                          .stderr_fd = err.fds[1],
                          .dies_with_parent = true};
  try {
    pid_ = session::spawn_child(spec);
  } catch (const std::exception& e) {
    ::close(null_fd);
    throw LoadUnavailable(e.what());
  }
  ::close(null_fd);
  ::close(std::exchange(err.fds[1], -1));
  stderr_fd_ = err.take_read();
  try {
    await_start();
  } catch (...) {
    stop();
    throw;
  }
}

GpuLoad::~GpuLoad() { stop(); }

// Until the started line, its exit, or start_bound.
void GpuLoad::await_start() {
  const Clock::time_point deadline = Clock::now() + start_bound_;
  std::string seen;
  for (;;) {
    const std::size_t mark = seen.find(kStartedMark);
    const std::size_t end = mark == std::string::npos ? mark : seen.find('\n', mark);
    if (end != std::string::npos) {
      started_ = seen.substr(mark + kStartedMark.size(), end - mark - kStartedMark.size());
      return;
    }
    pollfd p{.fd = stderr_fd_, .events = POLLIN, .revents = 0};
    const int ready = ::poll(&p, 1, remaining_ms(deadline));
    if (ready <= 0 && remaining_ms(deadline) == 0) {
      throw LoadUnavailable(
          fmt::format("{} did not start launching within {:.3g} s{}; stopped it", name_,
                      static_cast<double>(start_bound_.count()) / 1e3,
                      seen.empty() ? std::string() : ", its last line: " + last_line(seen)));
    }
    if (ready > 0 && !read_some(stderr_fd_, seen)) {
      stop();
      throw LoadUnavailable(
          fmt::format("{} exited before its first launch ({}){}", name_, ended(status_),
                      seen.empty() ? std::string(", saying nothing") : ": " + last_line(seen)));
    }
  }
}

int GpuLoad::stop() {
  if (pid_ < 0) return status_;
  ::kill(pid_, SIGTERM);
  const Clock::time_point deadline = Clock::now() + stop_bound_;
  std::string discard;
  pid_t done = 0;
  while (((done = ::waitpid(pid_, &status_, WNOHANG)) == 0 || (done < 0 && errno == EINTR)) &&
         remaining_ms(deadline) > 0) {
    // Drained while it stops, so that a last burst on stderr cannot block it.
    pollfd p{.fd = stderr_fd_, .events = POLLIN, .revents = 0};
    if (::poll(&p, 1, std::min(remaining_ms(deadline), 10)) > 0) read_some(stderr_fd_, discard);
  }
  if (done <= 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(std::exchange(stderr_fd_, -1));
  pid_ = -1;
  return status_;
}

std::optional<std::optional<session::Credentials>> invoking_user(std::string& why) {
  // A bad SUDO_UID stopped the selftest before any check (its metric file is opened as them).
  const uid_t euid = ::geteuid();
  auto user = session::credentials_from_sudo(session::process_environment(), euid);
  if (user || euid != 0) return user;
  why =
      "the selftest starts no GPU load as root: run it with sudo from your own account, which "
      "kernel_runner then runs as";
  return std::nullopt;
}

std::unique_ptr<GpuLoad> start_load(const Context& c, std::string& why, const LoadWork& work) {
  why.clear();
  if (c.device.simulated() && c.options.sim_load == SimLoad::kModel) return nullptr;
  if (c.options.no_load) {
    why = *c.options.no_load;
    return nullptr;
  }
  const auto user = invoking_user(why);
  if (!user) return nullptr;
  const std::optional<std::filesystem::path> program = selftest_kernel_runner(c.options, why);
  if (!program) return nullptr;
  // Long enough for the longest check's windows, however loaded the machine; bounded should
  // the selftest hang.
  const double windows_s = 16.0 * c.windows * static_cast<double>(c.window_ns) / 1e9;
  LoadCommand command{.argv = load_arguments(*program, 60 + static_cast<int>(std::ceil(windows_s)),
                                             opencl_device_under_test(c.device), work),
                      .credentials = *user};
  try {
    return std::make_unique<GpuLoad>(command);
  } catch (const LoadUnavailable& e) {
    why = fmt::format("no GPU load: {}", e.what());
    return nullptr;
  }
}

std::string load_text(const GpuLoad* load) {
  if (load == nullptr) return {};
  return fmt::format("; load: kernel_runner {} (pid {})", load->started(), load->pid());
}

}  // namespace oaprof::run::selftest
