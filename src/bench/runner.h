// Runs one catalogue kernel on an OpenCL device as an ordinary OpenCL program would: set-up,
// warm-up, repeated launches under the repeat rule, and a check of the result on the host.
// oaprof measures it through the layer like any other program.
#pragma once

#include <CL/cl.h>

#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bench/catalogue.h"
#include "bench/cl_device_choice.h"
#include "bench/stats.h"

namespace oaprof::bench {

// How a compute kernel is written (reference/method.md "Kernels"); memory kernels have one form.
enum class Variant {
  kPrivate,   // loop on private memory: the best, and the default
  kLoop,      // loop updating the result in __global memory
  kUnrolled,  // private loop unrolled ×64
  kSingle,    // one operation: launch and memory overheads
};
std::string_view variant_name(Variant v);  // "private", "loop", "unrolled", "single"
std::optional<Variant> parse_variant(std::string_view name);

// The outer repeats that make a power variant's launch last about power_ms, given one chain's
// measured time: at least 1, and never so many that iterations × outer overflows an int.
int outer_repeats_for(double power_ms, double one_chain_ns, int iterations);

// What RunResult::rate() is expressed in.
enum class Unit {
  kGflops,       // floating-point operations per second, ×1e9
  kGops,         // integer operations per second, ×1e9
  kGbytes,       // bytes per second, ×1e9
  kNsPerAccess,  // latency of one dependent access
  kUsPerLaunch,  // time of one launch
};
std::string_view unit_name(Unit u);  // "GFLOP/s", "Gop/s", "GB/s", "ns/access", "us/launch"

struct RunnerOptions {
  std::string platform;  // index or name substring; empty: the first platform
  std::string device;    // index or name substring; empty: the first device
  // --cl-device pci:BDF: the device at this address on any platform (platform and device unset).
  std::optional<mmio::PciAddress> device_pci;
  std::size_t work_groups = 64;
  std::size_t work_items = 64;  // per group
  // Compute: per work-item; 0: 2048 / width, so every width does equal work. Pointer chases: hops
  // per work-item; 0: enough for the work-items together to walk the data once.
  int iterations = 0;
  double min_time_ms = 50;
  std::size_t max_repeats = 1000;
  bool warmup = true;
  std::filesystem::path kernel_dir;
  // Memory kernels: bytes of each buffer (load_store) or of the chased array (pchase).
  std::size_t size_bytes = 16 << 20;
  std::size_t stride = 16;  // pointer-chase stride in 4-byte elements: 16 = one 64-byte line
  Variant variant = Variant::kPrivate;
  double power_ms = 100;  // target duration of one launch of a power variant
  // A load for other tools to measure (kernel_runner --busy, which `oaprof selftest` starts):
  // launch back to back for this long, or until *busy_stop is set, instead of the repeat rule.
  // 0: off.
  double busy_ms = 0;
  // With busy_ms: after each launch, idle this many times the launch's own length (its profiled
  // time), so the GPU is busy at most 1 / (1 + busy_rest) of the time. 0: back to back.
  double busy_rest = 0;
  std::function<void()> busy_started;                     // after the first launch finished
  const volatile std::sig_atomic_t* busy_stop = nullptr;  // set by a signal handler
};

struct RunResult {
  KernelSpec spec;
  std::string device_name;
  std::size_t global_size = 0;
  std::size_t local_size = 0;
  int iterations = 0;             // compute: per work-item per outer repeat; pointer chase: hops
  std::vector<double> kernel_ns;  // one sample per measured launch
  Stats stats;
  double ops = 0;  // arithmetic operations per launch (compute kernels)
  double gops_median() const { return stats.median > 0 ? ops / stats.median : 0; }

  Variant variant = Variant::kPrivate;
  int outer = 1;               // outer repeats of the compute chain (power variants)
  std::size_t size_bytes = 0;  // data size of memory kernels, 0 for the others
  double work = 0;             // per launch: operations, bytes or accesses (see unit)
  Unit unit = Unit::kGflops;
  std::size_t verified = 0;  // output elements checked on the host
  // The figure of merit from the median launch time, in `unit`.
  double rate() const;
};

// The result on the device differs from the host's: names the first mismatching element.
class VerificationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A load (RunnerOptions::busy_ms) was stopped through busy_stop: it ends there, without the
// result check the tool that asked for the stop would wait for.
class Stopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device lacks something the kernel needs (fp64): not an error, a skip.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every device of every platform, in the order --devices lists them.
std::vector<DeviceInfo> list_devices();

class Runner {
 public:
  // Throws std::runtime_error when no platform/device matches or set-up fails (base::SetupError
  // when none is at device_pci).
  explicit Runner(RunnerOptions options);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  RunResult run(const KernelSpec& spec);
  const std::string& device_name() const { return device_name_; }
  // The device's compute units and whether it has double precision.
  const DeviceInfo& device_info() const { return info_; }

  // Geometry, sizes and repeat settings may change between runs (sweeps); platform, device and
  // kernel_dir are fixed at construction.
  RunnerOptions& options() { return options_; }

  // For tests: build the kernel from `source` instead of the catalogue's file.
  void set_source_override(std::string source);

 private:
  void choose_by_pci(const mmio::PciAddress& want);
  void choose_by_index_or_name();
  cl_program program(const std::string& file, const std::string& build_options);
  cl_kernel kernel(const std::string& file, const std::string& build_options,
                   const std::string& function);
  std::string memory_options() const { return info_.fp64 ? "-DUSE_FP64" : ""; }
  template <typename E>
  RunResult run_compute(const KernelSpec& spec);
  template <typename E>
  RunResult run_load_store(const KernelSpec& spec);
  RunResult run_pchase(const KernelSpec& spec);
  RunResult run_empty(const KernelSpec& spec);
  double launch(cl_kernel kernel, std::size_t global, std::size_t local);
  void measure(cl_kernel kernel, RunResult& r);
  void keep_busy(cl_kernel kernel, RunResult& r);
  void rest_after(double launch_ns) const;

  RunnerOptions options_;
  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::string device_name_;
  DeviceInfo info_;
  std::string source_override_;
  std::map<std::string, cl_program> programs_;  // by file and build options: built once
};

// Where the kernels are: $OAPROF_KERNEL_DIR, else <exe>/../share/oaprof/kernels.
std::filesystem::path default_kernel_dir();

}  // namespace oaprof::bench
