#include "launch/runner.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace oaprof::launch {
namespace {

std::string cl_error(const char* what, cl_int err) { return fmt::format("{} failed (OpenCL error {})", what, err); }

void check(cl_int err, const char* what) {
  if (err != CL_SUCCESS) throw std::runtime_error(cl_error(what, err));
}

std::string platform_name(cl_platform_id p) {
  char buf[256] = {};
  clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof buf - 1, buf, nullptr);
  return buf;
}

std::string device_name_of(cl_device_id d) {
  char buf[256] = {};
  clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof buf - 1, buf, nullptr);
  return buf;
}

// Picks by index ("1") or by case-sensitive name substring; empty picks the first.
template <typename Handle>
Handle pick(const std::vector<Handle>& all, const std::string& want, std::string (*name)(Handle),
            const char* what) {
  if (all.empty()) throw std::runtime_error(fmt::format("no OpenCL {} found; see `clinfo -l`", what));
  if (want.empty()) return all.front();
  char* end = nullptr;
  const unsigned long idx = std::strtoul(want.c_str(), &end, 10);
  if (*end == '\0' && idx < all.size()) return all[idx];
  std::string names;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (name(all[i]).find(want) != std::string::npos) return all[i];
    names += fmt::format("{}{}: {}", i ? "; " : "", i, name(all[i]));
  }
  throw std::runtime_error(fmt::format("no OpenCL {} matches '{}'; available: {}", what, want, names));
}

// Host-side values and reference arithmetic, per element type. Floating point is referenced in
// double; integer kernels compute in uint and are referenced exactly in uint32_t.
template <typename E>
struct Arith;

template <>
struct Arith<float> {
  static constexpr double kRelTol = 1e-3;  // stated tolerance for single precision
};
template <>
struct Arith<double> {
  static constexpr double kRelTol = 1e-9;
};

double fp_input(std::size_t j) { return 1.0 + static_cast<double>(j % 7) * 0.125; }

double fp_operand(Op op, std::size_t k) {
  switch (op) {
    case Op::kMad: return 0.1 + 0.1 * static_cast<double>(k % 9);  // converges to m / (1 − m)
    case Op::kAdd:
    case Op::kSub: return 0.25 + 0.25 * static_cast<double>(k % 3);
    case Op::kMul:
    case Op::kDiv: return 1.0 + (static_cast<double>(k % 5) - 2.0) * 0.0005;  // stays in range
  }
  return 1.0;
}

double fp_step(Op op, double x, double m) {
  switch (op) {
    case Op::kMad: return x * m + m;
    case Op::kAdd: return x + m;
    case Op::kSub: return x - m;
    case Op::kMul: return x * m;
    case Op::kDiv: return x / m;
  }
  return x;
}

std::uint32_t int_input(std::size_t j) { return 1000u + static_cast<std::uint32_t>(j % 7); }

std::uint32_t int_operand(Op op, std::size_t k) {
  switch (op) {
    case Op::kAdd:
    case Op::kSub: return 1u + static_cast<std::uint32_t>(k % 3);
    case Op::kMul: return 1u + 2u * static_cast<std::uint32_t>(k % 2);
    case Op::kDiv: return 1u + static_cast<std::uint32_t>(k % 2);
    case Op::kMad: break;
  }
  return 1u;
}

std::uint32_t int_step(Op op, std::uint32_t x, std::uint32_t m) {
  switch (op) {
    case Op::kAdd: return x + m;
    case Op::kSub: return x - m;
    case Op::kMul: return x * m;
    case Op::kDiv: return x / m;
    case Op::kMad: break;
  }
  return x;
}

template <typename E>
void fill(const KernelSpec& spec, std::vector<E>& in, std::vector<E>& operand) {
  for (std::size_t j = 0; j < in.size(); ++j) {
    if constexpr (std::is_same_v<E, std::uint32_t>) in[j] = int_input(j);
    else in[j] = static_cast<E>(fp_input(j));
  }
  for (std::size_t k = 0; k < operand.size(); ++k) {
    if constexpr (std::is_same_v<E, std::uint32_t>) operand[k] = int_operand(spec.op, k);
    else operand[k] = static_cast<E>(fp_operand(spec.op, k));
  }
}

template <typename E>
void verify(const KernelSpec& spec, const std::vector<E>& in, const std::vector<E>& operand,
            const std::vector<E>& out, std::size_t local, int iterations) {
  const auto w = static_cast<std::size_t>(spec.width);
  for (std::size_t j = 0; j < out.size(); ++j) {
    const std::size_t item = j / w, lane = j % w;
    const E m = operand[(item % local) * w + lane];
    if constexpr (std::is_same_v<E, std::uint32_t>) {
      std::uint32_t x = in[j];
      for (int k = 0; k < iterations; ++k) x = int_step(spec.op, x, m);
      if (out[j] != x) {
        throw VerificationError(fmt::format("{}: wrong result at element {}: got {}, expected {}",
                                            spec.name, j, out[j], x));
      }
    } else {
      double x = static_cast<double>(in[j]);
      for (int k = 0; k < iterations; ++k) x = fp_step(spec.op, x, static_cast<double>(m));
      const double got = static_cast<double>(out[j]);
      if (!(std::fabs(got - x) <= Arith<E>::kRelTol * std::max(1.0, std::fabs(x)))) {
        throw VerificationError(fmt::format(
            "{}: wrong result at element {}: got {:.9g}, expected {:.9g} (relative tolerance {:g})",
            spec.name, j, got, x, Arith<E>::kRelTol));
      }
    }
  }
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error(fmt::format("cannot read kernel source {}; set OAPROF_KERNEL_DIR",
                                         path.string()));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ClHandles {
 public:
  ~ClHandles() {
    for (cl_mem m : mems) clReleaseMemObject(m);
    if (kernel) clReleaseKernel(kernel);
    if (program) clReleaseProgram(program);
  }
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;
  std::vector<cl_mem> mems;
};

template <typename E>
RunResult run_typed(const KernelSpec& spec, const RunnerOptions& opt, cl_context ctx,
                    cl_device_id dev, cl_command_queue q, const std::string& source) {
  RunResult r;
  r.spec = spec;
  r.local_size = opt.work_items;
  r.global_size = opt.work_groups * opt.work_items;
  r.iterations = opt.iterations > 0 ? opt.iterations : 2048 / spec.width;
  r.ops = static_cast<double>(r.global_size) * r.iterations * spec.ops_per_iteration();

  ClHandles h;
  cl_int err = CL_SUCCESS;
  const char* src = source.c_str();
  h.program = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  std::string op_define(op_name(spec.op));
  for (char& c : op_define) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string build_options = fmt::format(
      "-DKERNEL_NAME={} -DT={} -DOP_{}{}{}", spec.name, opencl_type(spec.type, spec.width),
      op_define, spec.type == DataType::kDp ? " -DUSE_FP64" : "",
      spec.op == Op::kMad ? " -cl-mad-enable" : "");
  if (clBuildProgram(h.program, 1, &dev, build_options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(h.program, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(h.program, dev, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    throw std::runtime_error(fmt::format("building {} failed ({}):\n{}", spec.name, build_options, log));
  }
  h.kernel = clCreateKernel(h.program, spec.name.c_str(), &err);
  check(err, "clCreateKernel");

  const std::size_t n = r.global_size * static_cast<std::size_t>(spec.width);
  std::vector<E> in(n), out(n), operand(r.local_size * static_cast<std::size_t>(spec.width));
  fill(spec, in, operand);
  auto buffer = [&](cl_mem_flags flags, std::vector<E>& data) {
    cl_mem m = clCreateBuffer(ctx, flags | CL_MEM_COPY_HOST_PTR, data.size() * sizeof(E), data.data(), &err);
    check(err, "clCreateBuffer");
    h.mems.push_back(m);
    return m;
  };
  cl_mem in_buf = buffer(CL_MEM_READ_ONLY, in);
  cl_mem out_buf = buffer(CL_MEM_WRITE_ONLY, out);
  cl_mem operand_buf = buffer(CL_MEM_READ_ONLY, operand);
  const cl_int iterations = r.iterations;
  check(clSetKernelArg(h.kernel, 0, sizeof in_buf, &in_buf), "clSetKernelArg(in)");
  check(clSetKernelArg(h.kernel, 1, sizeof out_buf, &out_buf), "clSetKernelArg(out)");
  check(clSetKernelArg(h.kernel, 2, sizeof operand_buf, &operand_buf), "clSetKernelArg(operand)");
  check(clSetKernelArg(h.kernel, 3, sizeof iterations, &iterations), "clSetKernelArg(iterations)");

  auto launch_once = [&]() {
    cl_event ev = nullptr;
    check(clEnqueueNDRangeKernel(q, h.kernel, 1, nullptr, &r.global_size, &r.local_size, 0,
                                 nullptr, &ev),
          "clEnqueueNDRangeKernel");
    check(clWaitForEvents(1, &ev), "clWaitForEvents");
    cl_ulong start = 0, end = 0;
    check(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
          "clGetEventProfilingInfo(START)");
    check(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
          "clGetEventProfilingInfo(END)");
    clReleaseEvent(ev);
    return static_cast<double>(end - start);
  };
  if (opt.warmup) launch_once();
  const RepeatRule rule{opt.min_time_ms * 1e6, opt.max_repeats, 0.02};
  do {
    r.kernel_ns.push_back(launch_once());
  } while (rule.more(r.kernel_ns));
  r.stats = summarize(r.kernel_ns);

  check(clEnqueueReadBuffer(q, out_buf, CL_TRUE, 0, n * sizeof(E), out.data(), 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  verify(spec, in, operand, out, r.local_size, r.iterations);
  (void)dev;
  return r;
}

}  // namespace

std::filesystem::path default_kernel_dir() {
  if (const char* dir = std::getenv("OAPROF_KERNEL_DIR"); dir && *dir) return dir;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return exe.parent_path() / OAPROF_KERNEL_DIR_FROM_BIN;
}

Runner::Runner(RunnerOptions options) : options_(std::move(options)) {
  if (options_.work_groups == 0 || options_.work_items == 0) {
    throw std::invalid_argument("work-groups and work-items must be at least 1");
  }
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
    throw std::runtime_error(
        "no OpenCL platform found: install an ICD (pocl-opencl-icd on Debian, intel-opencl-icd "
        "for Intel GPUs); `clinfo -l` lists what the loader sees");
  }
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  platform_ = pick(platforms, options_.platform, &platform_name, "platform");
  check(clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, nullptr, &count), "clGetDeviceIDs");
  std::vector<cl_device_id> devices(count);
  check(clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr), "clGetDeviceIDs");
  device_ = pick(devices, options_.device, &device_name_of, "device");
  device_name_ = device_name_of(device_);
  cl_int err = CL_SUCCESS;
  context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  queue_ = clCreateCommandQueueWithProperties(context_, device_, props, &err);
  check(err, "clCreateCommandQueueWithProperties");
}

Runner::~Runner() {
  if (queue_) clReleaseCommandQueue(queue_);
  if (context_) clReleaseContext(context_);
}

RunResult Runner::run(const KernelSpec& spec) {
  if (spec.type == DataType::kDp) {
    cl_device_fp_config fp64 = 0;
    clGetDeviceInfo(device_, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, nullptr);
    if (fp64 == 0) {
      throw Unsupported(fmt::format("{}: skipped, {} has no double precision (cl_khr_fp64)",
                                    spec.name, device_name_));
    }
  }
  const std::string source = source_override_.empty()
                                 ? read_file((options_.kernel_dir.empty() ? default_kernel_dir()
                                                                          : options_.kernel_dir) /
                                             "compute.cl")
                                 : source_override_;
  RunResult r;
  switch (spec.type) {
    case DataType::kSp: r = run_typed<float>(spec, options_, context_, device_, queue_, source); break;
    case DataType::kDp: r = run_typed<double>(spec, options_, context_, device_, queue_, source); break;
    case DataType::kInt: r = run_typed<std::uint32_t>(spec, options_, context_, device_, queue_, source); break;
  }
  r.device_name = device_name_;
  return r;
}

}  // namespace oaprof::launch
