// The GPU load under the selftest's busy windows on real hardware. The simulated GPU counts what
// it is told (CounterSource::kernel_running); a real one counts only real work, so there the
// checks that need a busy GPU (readouts-agree, rpc-vs-periodic, noa-counting, flex-routing)
// start kernel_runner, the tool oaprof ships beside itself, running `--busy` (one compute kernel
// launched back to back). It runs as the invoking user (SUDO_UID/SUDO_GID, dropped as
// `sudo oaprof -- prog` drops its program: session/child.h), never as root; it dies with the
// selftest (PR_SET_PDEATHSIG, which follows the thread that started it: the checks run on the
// one thread that calls run_selftest) and is stopped and reaped when the check that started it
// ends, however it ends.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/device.h"
#include "mmio/pci_bar.h"
#include "run/selftest_checks.h"
#include "session/privilege_drop.h"

namespace oaprof::run::selftest {

// The load could not be had: why, for a check's skip.
class LoadUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How to start the load, resolved before it starts.
struct LoadCommand {
  std::vector<std::string> argv = {};  // kernel_runner and its arguments
  std::optional<session::Credentials> credentials =
      std::nullopt;  // the invoking user; nullopt: as we are
  // Until it says its first launch finished: OpenCL set-up and the kernel's compilation come
  // first, seconds on a real GPU.
  std::chrono::milliseconds start_bound{30'000};
  // From SIGTERM (it stops after the launch in flight, then checks its result) to SIGKILL.
  std::chrono::milliseconds stop_bound{5'000};
};

// The PCI address of the OpenCL device kernel_runner must run on: the device under test's on real
// hardware, so that its work lands on that GPU and not on an iGPU beside a discrete card, another
// card, or a CPU runtime the OpenCL loader lists first. nullopt on the simulator: the simulated
// device has no PCI address, and PoCL, which runs its work on the CPU, reports none.
std::optional<mmio::PciAddress> opencl_device_under_test(const gpu::Device& device);

// kernel_runner's arguments choosing that device (`--cl-device pci:DDDD:BB:DD.F`,
// docs/kernel_runner.md); none for nullopt, where it runs where it always ran. Where no OpenCL
// device is at the address, kernel_runner exits 3 saying so in its last line, which the checks
// skip with.
std::vector<std::string> opencl_device_arguments(const std::optional<mmio::PciAddress>& device);

// What a load launches. The default: mad_vect8 over 2^20 work-items, about 4.3 GFLOP a launch, so
// a few ms on a GT2 part: a stop waits for at most one short launch.
struct LoadWork {
  std::string kernel = "mad_vect8";
  std::size_t global = std::size_t{1} << 20;  // work-items, in work-groups of 64
  std::size_t size_bytes = 0;                 // memory kernels' buffers (--size); 0: its default
  double rest = 0;  // idle this many times each launch's length after it (--rest); 0: none
};

// kernel_runner's arguments for a load of at most `seconds` (it never outlives a selftest that
// hangs either) on `device` (opencl_device_under_test), launching `work`.
std::vector<std::string> load_arguments(const std::filesystem::path& kernel_runner, int seconds,
                                        const std::optional<mmio::PciAddress>& device,
                                        const LoadWork& work = {});

// A load started and launching. Its destructor stops it, so no path out of a check (exceptions
// included) leaves it running.
class GpuLoad {
 public:
  // Starts it and waits until it says its first launch finished. Throws LoadUnavailable: it
  // could not be started, exited first (its status and its stderr's last line), or said nothing
  // within start_bound (then it is stopped).
  explicit GpuLoad(const LoadCommand& command);
  ~GpuLoad();
  GpuLoad(const GpuLoad&) = delete;
  GpuLoad& operator=(const GpuLoad&) = delete;

  pid_t pid() const { return pid_; }
  // What it said as it started ("mad_vect8 launching on <device> for 60 s"): its own text.
  const std::string& started() const { return started_; }
  // SIGTERM, SIGKILL after stop_bound, reaped; its wait status. Only the first call stops it.
  int stop();

 private:
  void await_start();
  pid_t pid_ = -1;
  int stderr_fd_ = -1;
  int status_ = 0;
  std::chrono::milliseconds start_bound_, stop_bound_;
  std::string name_;  // kernel_runner, for reasons
  std::string started_;
};

// The kernel_runner the selftest starts: in options.kernel_runner_dir where given (tests), else
// beside oaprof (run/kernel_runner_path.h); nullopt with `why` saying where it looked.
std::optional<std::filesystem::path> selftest_kernel_runner(const SelftestOptions& options,
                                                            std::string& why);

// The user the selftest starts kernel_runner as: the invoking user under sudo
// (SUDO_UID/SUDO_GID), or as we are when not root (an empty inner value); nullopt with `why` as
// root without sudo, where it starts nothing: it never runs a program as root.
std::optional<std::optional<session::Credentials>> invoking_user(std::string& why);

// The last non-empty line of a program's output, for a reason.
std::string last_line(std::string_view text);

// The load for one check's busy windows. On the simulator none (the busy windows tell the model)
// unless options.sim_load asks for the process too; on real hardware kernel_runner beside oaprof
// (options.kernel_runner_dir in tests). Null when there is none to start, with `why` set when
// one was needed and could not be had (the check then skips with it).
std::unique_ptr<GpuLoad> start_load(const Context& c, std::string& why, const LoadWork& work = {});

// "; load: kernel_runner mad_vect8 launching on <device> for 60 s (pid 4242)", or "" without one.
std::string load_text(const GpuLoad* load);

}  // namespace oaprof::run::selftest
