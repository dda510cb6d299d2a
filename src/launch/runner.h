// Runs one catalogue kernel on an OpenCL device as an ordinary OpenCL program would: set-up,
// warm-up, repeated launches under the repeat rule, and a check of the result on the host.
// oaprof measures it through the layer like any other program.
#pragma once

#include <CL/cl.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "launch/catalogue.h"
#include "launch/stats.h"

namespace oaprof::launch {

struct RunnerOptions {
  std::string platform;  // index or name substring; empty: the first platform
  std::string device;    // index or name substring; empty: the first device
  std::size_t work_groups = 64;
  std::size_t work_items = 64;  // per group
  int iterations = 0;           // per work-item; 0: 2048 / width, so every width does equal work
  double min_time_ms = 50;
  std::size_t max_repeats = 1000;
  bool warmup = true;
  std::filesystem::path kernel_dir;
};

struct RunResult {
  KernelSpec spec;
  std::string device_name;
  std::size_t global_size = 0;
  std::size_t local_size = 0;
  int iterations = 0;
  std::vector<double> kernel_ns;  // one sample per measured launch
  Stats stats;
  double ops = 0;                 // arithmetic operations per launch
  double gops_median() const { return stats.median > 0 ? ops / stats.median : 0; }
};

// The result on the device differs from the host's: names the first mismatching element.
class VerificationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device lacks something the kernel needs (fp64): not an error, a skip.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Runner {
 public:
  // Throws std::runtime_error when no platform/device matches or set-up fails.
  explicit Runner(RunnerOptions options);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  RunResult run(const KernelSpec& spec);
  const std::string& device_name() const { return device_name_; }

  // For tests: build the kernel from `source` instead of the catalogue's file.
  void set_source_override(std::string source) { source_override_ = std::move(source); }

 private:
  RunnerOptions options_;
  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::string device_name_;
  std::string source_override_;
};

// Where the kernels are: $OAPROF_KERNEL_DIR, else <exe>/../share/oaprof/kernels.
std::filesystem::path default_kernel_dir();

}  // namespace oaprof::launch
