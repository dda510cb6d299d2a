#include "run/selftest_known_work.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"
#include "run/profile_plan.h"
#include "run/profile_run.h"
#include "run/selftest_load.h"
#include "session/privilege_drop.h"

namespace oaprof::run::selftest {
namespace {

// The bytes of kernel_runner's output kept for its last line.
constexpr std::size_t kOutputTail = 4096;

// kernel_runner's standard output and error, in memory: its table stays off the selftest's
// stdout, and its last line (an OpenCL error, a wrong result) can be a reason.
class ProgramOutput {
 public:
  ProgramOutput() : fd_(::memfd_create("kernel_runner-output", MFD_CLOEXEC)) {
    if (fd_ < 0) {
      throw std::runtime_error(fmt::format("cannot keep kernel_runner's output: memfd_create: {}",
                                           std::strerror(errno)));
    }
  }
  ~ProgramOutput() { ::close(fd_); }
  ProgramOutput(const ProgramOutput&) = delete;
  ProgramOutput& operator=(const ProgramOutput&) = delete;
  int fd() const { return fd_; }

  std::string last_line() const {
    const off_t size = ::lseek(fd_, 0, SEEK_END);
    const off_t from = std::max<off_t>(0, size - static_cast<off_t>(kOutputTail));
    std::string tail(static_cast<std::size_t>(std::max<off_t>(0, size - from)), '\0');
    const ssize_t n = ::pread(fd_, tail.data(), tail.size(), from);
    tail.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return selftest::last_line(tail);
  }

 private:
  int fd_;
};

// The plan `oaprof --daemon never --access A --metric-set S --energy none -q -- kernel_runner
// ARGS` makes, checked as a profile's is (SUDO_UID and SUDO_GID read the same way), on the
// selftest's own device, its rows kept in memory alone.
ProfilePlan kernel_runner_plan(const KnownWork& known, const KernelRun& run, int output_fd) {
  ProfileOptions o;
  o.device_spec = known.device.spec.str();
  o.daemon = "never";  // the selftest runs as root, opening the GPU itself
  o.access = known.access;
  o.metric_set = known.metric_set;
  o.metrics_xml = known.metrics_xml;
  o.energy = "none";
  o.idle_baseline = "off";
  o.quiet = true;
  o.command = {known.kernel_runner->string()};
  o.command.insert(o.command.end(), run.arguments.begin(), run.arguments.end());
  ProfilePlan plan = make_profile_plan(o, session::process_environment(), ::geteuid());
  plan.device = known.device;
  plan.device.map_registers = gpu::access_maps_registers(known.access);
  plan.outputs = {};
  plan.work_params = run.params;
  plan.program_output_fd = output_fd;
  return plan;
}

}  // namespace

const KernelRun* KnownWork::find(std::string_view name) const {
  const auto it =
      std::find_if(runs.begin(), runs.end(), [&](const KernelRun& r) { return r.name == name; });
  return it == runs.end() ? nullptr : &*it;
}

std::string command_text(const KernelRun& run) {
  return fmt::format("kernel_runner {}", fmt::join(run.arguments, " "));
}

void run_known_work(KnownWork& known, const std::function<void(std::string_view)>& progress) {
  for (KernelRun& run : known.runs) {
    if (progress) progress(command_text(run));
    try {
      const ProgramOutput output;
      run.status = run_profile_captured(kernel_runner_plan(known, run, output.fd()), run.rows);
      run.last_line = output.last_line();
    } catch (const std::exception& e) {
      // The checks that read it say so; the others still run.
      run.status = base::kExitSetup;
      run.last_line = std::string("oaprof: ") + e.what();
    }
  }
}

}  // namespace oaprof::run::selftest
