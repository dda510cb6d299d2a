#include "bench/runner.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <CL/cl_ext.h>
#include <fmt/format.h>

namespace oaprof::bench {
namespace {

std::string cl_error(const char* what, cl_int err) {
  return fmt::format("{} failed (OpenCL error {})", what, err);
}

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
  if (all.empty())
    throw std::runtime_error(fmt::format("no OpenCL {} found; see `clinfo -l`", what));
  if (want.empty()) return all.front();
  char* end = nullptr;
  const unsigned long idx = std::strtoul(want.c_str(), &end, 10);
  if (*end == '\0' && idx < all.size()) return all[idx];
  std::string names;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (name(all[i]).find(want) != std::string::npos) return all[i];
    names += fmt::format("{}{}: {}", i ? "; " : "", i, name(all[i]));
  }
  throw std::runtime_error(
      fmt::format("no OpenCL {} matches '{}'; available: {}", what, want, names));
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
    case Op::kMad:
      return 0.1 + 0.1 * static_cast<double>(k % 9);  // converges to m / (1 − m)
    case Op::kAdd:
    case Op::kSub:
      return 0.25 + 0.25 * static_cast<double>(k % 3);
    case Op::kMul:
    case Op::kDiv:
      return 1.0 + (static_cast<double>(k % 5) - 2.0) * 0.0005;  // stays in range
  }
  return 1.0;
}

double fp_step(Op op, double x, double m) {
  switch (op) {
    case Op::kMad:
      return x * m + m;
    case Op::kAdd:
      return x + m;
    case Op::kSub:
      return x - m;
    case Op::kMul:
      return x * m;
    case Op::kDiv:
      return x / m;
  }
  return x;
}

std::uint32_t int_input(std::size_t j) { return 1000u + static_cast<std::uint32_t>(j % 7); }

std::uint32_t int_operand(Op op, std::size_t k) {
  switch (op) {
    case Op::kAdd:
    case Op::kSub:
      return 1u + static_cast<std::uint32_t>(k % 3);
    case Op::kMul:
      return 1u + 2u * static_cast<std::uint32_t>(k % 2);
    case Op::kDiv:
      return 1u + static_cast<std::uint32_t>(k % 2);
    case Op::kMad:
      break;
  }
  return 1u;
}

std::uint32_t int_step(Op op, std::uint32_t x, std::uint32_t m) {
  switch (op) {
    case Op::kAdd:
      return x + m;
    case Op::kSub:
      return x - m;
    case Op::kMul:
      return x * m;
    case Op::kDiv:
      return x / m;
    case Op::kMad:
      break;
  }
  return x;
}

template <typename E>
void fill(const KernelSpec& spec, std::vector<E>& in, std::vector<E>& operand) {
  for (std::size_t j = 0; j < in.size(); ++j) {
    if constexpr (std::is_same_v<E, std::uint32_t>)
      in[j] = int_input(j);
    else
      in[j] = static_cast<E>(fp_input(j));
  }
  for (std::size_t k = 0; k < operand.size(); ++k) {
    if constexpr (std::is_same_v<E, std::uint32_t>)
      operand[k] = int_operand(spec.op, k);
    else
      operand[k] = static_cast<E>(fp_operand(spec.op, k));
  }
}

// Host reference steps per check: all elements at small sizes, an evenly spread sample (first and
// last included) when checking everything would take longer than the run.
constexpr double kVerifyStepBudget = 1 << 27;

std::vector<std::size_t> elements_to_check(std::size_t n, double steps_per_element) {
  const auto budget =
      static_cast<std::size_t>(std::max(2.0, kVerifyStepBudget / std::max(1.0, steps_per_element)));
  std::vector<std::size_t> idx;
  if (n <= budget) {
    for (std::size_t j = 0; j < n; ++j) idx.push_back(j);
    return idx;
  }
  for (std::size_t k = 0; k < budget; ++k) idx.push_back(k * (n - 1) / (budget - 1));
  return idx;
}

template <typename E>
std::size_t verify(const KernelSpec& spec, const std::vector<E>& in, const std::vector<E>& operand,
                   const std::vector<E>& out, std::size_t local, int iterations) {
  const auto w = static_cast<std::size_t>(spec.width);
  const auto check = elements_to_check(out.size(), iterations);
  for (std::size_t j : check) {
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
  return check.size();
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error(
        fmt::format("cannot read kernel source {}; set OAPROF_KERNEL_DIR", path.string()));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The kernel and buffers of one run, released however the run ends.
class ClHandles {
 public:
  ClHandles() = default;
  ClHandles(const ClHandles&) = delete;
  ClHandles& operator=(const ClHandles&) = delete;
  ~ClHandles() {
    for (cl_mem m : mems) clReleaseMemObject(m);
    if (kernel) clReleaseKernel(kernel);
  }
  cl_kernel kernel = nullptr;
  std::vector<cl_mem> mems;
};

template <typename T>
cl_mem make_buffer(cl_context ctx, ClHandles& h, cl_mem_flags flags, std::vector<T>& data) {
  cl_int err = CL_SUCCESS;
  cl_mem m =
      clCreateBuffer(ctx, flags | CL_MEM_COPY_HOST_PTR, data.size() * sizeof(T), data.data(), &err);
  check(err, "clCreateBuffer");
  h.mems.push_back(m);
  return m;
}

template <typename T>
void set_arg(cl_kernel k, cl_uint index, const T& value, const char* what) {
  check(clSetKernelArg(k, index, sizeof(T), &value), what);
}

template <typename T>
void read_back(cl_command_queue q, cl_mem buf, std::vector<T>& out) {
  check(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, out.size() * sizeof(T), out.data(), 0, nullptr,
                            nullptr),
        "clEnqueueReadBuffer");
}

std::string compute_function(const KernelSpec& spec, Variant v) {
  const std::string base = spec.function_name();
  return v == Variant::kPrivate ? base : fmt::format("{}_{}", base, variant_name(v));
}

std::size_t checked_elements(std::size_t size_bytes, std::size_t element_bytes, const char* what) {
  const std::size_t n = size_bytes / element_bytes;
  if (n == 0) {
    throw std::invalid_argument(fmt::format("--size {} is smaller than one {} element ({} bytes)",
                                            size_bytes, what, element_bytes));
  }
  if (n > UINT32_MAX) {
    throw std::invalid_argument(fmt::format(
        "--size {} holds more than 2^32 {} elements; use a smaller --size", size_bytes, what));
  }
  return n;
}

bool has_fp64(cl_device_id d) {
  cl_device_fp_config fp64 = 0;
  clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, nullptr);
  return fp64 != 0;
}

std::vector<cl_platform_id> platforms() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
    throw std::runtime_error(
        "no OpenCL platform found: install an ICD (pocl-opencl-icd on Debian, intel-opencl-icd "
        "for Intel GPUs); `clinfo -l` lists what the loader sees");
  }
  std::vector<cl_platform_id> all(count);
  check(clGetPlatformIDs(count, all.data(), nullptr), "clGetPlatformIDs");
  return all;
}

std::vector<cl_device_id> devices_of(cl_platform_id p) {
  cl_uint count = 0;
  if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) return {};
  std::vector<cl_device_id> all(count);
  check(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, count, all.data(), nullptr), "clGetDeviceIDs");
  return all;
}

// cl_khr_pci_bus_info's query and its answer as KhronosGroup/OpenCL-Headers CL/cl_ext.h defines
// them (added in v2021.04.29, commit 1d3dc4e; unchanged in v2023.02.06, the headers Debian 12
// ships). Pinned here so that a header that disagreed would not build.
static_assert(CL_DEVICE_PCI_BUS_INFO_KHR == 0x410F);
static_assert(sizeof(cl_device_pci_bus_info_khr) == 4 * sizeof(cl_uint));

bool has_extension(cl_device_id d, std::string_view name) {
  std::size_t size = 0;
  if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, nullptr, &size) != CL_SUCCESS) return false;
  std::string text(size, '\0');
  if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, size, text.data(), nullptr) != CL_SUCCESS) {
    return false;
  }
  std::istringstream words(text.c_str());  // up to the terminating NUL
  for (std::string word; words >> word;) {
    if (word == name) return true;
  }
  return false;
}

// The device's PCI address, where it has cl_khr_pci_bus_info: the extension's specification asks
// applications to check for it before querying, as devices off a PCI bus lack it.
std::optional<mmio::PciAddress> pci_address_of(cl_device_id d) {
  if (!has_extension(d, "cl_khr_pci_bus_info")) return std::nullopt;
  cl_device_pci_bus_info_khr bus{};
  if (clGetDeviceInfo(d, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof bus, &bus, nullptr) != CL_SUCCESS) {
    return std::nullopt;
  }
  return mmio::PciAddress{.domain = bus.pci_domain,
                          .bus = bus.pci_bus,
                          .dev = bus.pci_device,
                          .func = bus.pci_function};
}

DeviceInfo describe(cl_platform_id p, cl_device_id d) {
  DeviceInfo info;
  info.platform_name = platform_name(p);
  info.device_name = device_name_of(d);
  cl_uint cu = 0, mhz = 0;
  clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, nullptr);
  clGetDeviceInfo(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof mhz, &mhz, nullptr);
  info.compute_units = cu;
  info.max_clock_mhz = mhz;
  info.fp64 = has_fp64(d);
  info.pci_address = pci_address_of(d);
  return info;
}

// One device of one platform, with what --devices says of it.
struct FoundDevice {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  DeviceInfo info;
};

std::vector<FoundDevice> every_device() {
  std::vector<FoundDevice> out;
  const auto all = platforms();
  for (std::size_t p = 0; p < all.size(); ++p) {
    const auto devs = devices_of(all[p]);
    for (std::size_t d = 0; d < devs.size(); ++d) {
      FoundDevice found{.platform = all[p], .device = devs[d], .info = describe(all[p], devs[d])};
      found.info.platform_index = p;
      found.info.device_index = d;
      out.push_back(std::move(found));
    }
  }
  return out;
}

// A result for `spec` launched as `work_groups` groups of `work_items`.
RunResult start_result(const KernelSpec& spec, const RunnerOptions& o, Unit unit) {
  RunResult r;
  r.spec = spec;
  r.local_size = o.work_items;
  r.global_size = o.work_groups * o.work_items;
  r.unit = unit;
  return r;
}

}  // namespace

std::string_view variant_name(Variant v) {
  switch (v) {
    case Variant::kPrivate:
      return "private";
    case Variant::kLoop:
      return "loop";
    case Variant::kUnrolled:
      return "unrolled";
    case Variant::kSingle:
      return "single";
  }
  return "?";
}

std::optional<Variant> parse_variant(std::string_view name) {
  for (Variant v : {Variant::kPrivate, Variant::kLoop, Variant::kUnrolled, Variant::kSingle}) {
    if (variant_name(v) == name) return v;
  }
  return std::nullopt;
}

int outer_repeats_for(double power_ms, double one_chain_ns, int iterations) {
  const double wanted = std::round(power_ms * 1e6 / std::max(1.0, one_chain_ns));
  const double most = static_cast<double>(INT_MAX / std::max(1, iterations));
  return static_cast<int>(std::clamp(wanted, 1.0, most));
}

std::string_view unit_name(Unit u) {
  switch (u) {
    case Unit::kGflops:
      return "GFLOP/s";
    case Unit::kGops:
      return "Gop/s";
    case Unit::kGbytes:
      return "GB/s";
    case Unit::kNsPerAccess:
      return "ns/access";
    case Unit::kUsPerLaunch:
      return "us/launch";
  }
  return "?";
}

double RunResult::rate() const {
  if (stats.median <= 0) return 0;
  switch (unit) {
    case Unit::kGflops:
    case Unit::kGops:
    case Unit::kGbytes:
      return work / stats.median;  // per ns = ×1e9 per second
    case Unit::kNsPerAccess:
      return work > 0 ? stats.median / work : 0;
    case Unit::kUsPerLaunch:
      return stats.median / 1e3;
  }
  return 0;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  for (FoundDevice& found : every_device()) out.push_back(std::move(found.info));
  return out;
}

std::filesystem::path default_kernel_dir() {
  if (const char* dir = std::getenv("OAPROF_KERNEL_DIR"); dir && *dir) return dir;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return exe.parent_path() / OAPROF_KERNEL_DIR_FROM_BIN;
}

Runner::Runner(RunnerOptions options) : options_(std::move(options)) {
  if (options_.device_pci) {
    choose_by_pci(*options_.device_pci);
  } else {
    choose_by_index_or_name();
  }
  device_name_ = info_.device_name;
  cl_int err = CL_SUCCESS;
  context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  queue_ = clCreateCommandQueueWithProperties(context_, device_, props, &err);
  check(err, "clCreateCommandQueueWithProperties");
}

void Runner::choose_by_pci(const mmio::PciAddress& want) {
  std::vector<FoundDevice> all = every_device();
  std::vector<DeviceInfo> seen;
  for (const FoundDevice& found : all) seen.push_back(found.info);
  FoundDevice& chosen = all[pick_by_pci(seen, want)];
  platform_ = chosen.platform;
  device_ = chosen.device;
  info_ = std::move(chosen.info);
}

void Runner::choose_by_index_or_name() {
  const auto all = platforms();
  platform_ = pick(all, options_.platform, &platform_name, "platform");
  const auto devices = devices_of(platform_);
  device_ = pick(devices, options_.device, &device_name_of, "device");
  info_ = describe(platform_, device_);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i] == platform_) info_.platform_index = i;
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] == device_) info_.device_index = i;
  }
}

Runner::~Runner() {
  for (auto& [key, p] : programs_) clReleaseProgram(p);
  if (queue_) clReleaseCommandQueue(queue_);
  if (context_) clReleaseContext(context_);
}

void Runner::set_source_override(std::string source) {
  source_override_ = std::move(source);
  for (auto& [key, p] : programs_) clReleaseProgram(p);
  programs_.clear();
}

cl_program Runner::program(const std::string& file, const std::string& build_options) {
  const std::string key = file + '\n' + build_options;
  if (auto it = programs_.find(key); it != programs_.end()) return it->second;
  const std::string source =
      source_override_.empty()
          ? read_file((options_.kernel_dir.empty() ? default_kernel_dir() : options_.kernel_dir) /
                      file)
          : source_override_;
  cl_int err = CL_SUCCESS;
  const char* src = source.c_str();
  cl_program p = clCreateProgramWithSource(context_, 1, &src, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  if (clBuildProgram(p, 1, &device_, build_options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    clReleaseProgram(p);
    throw std::runtime_error(
        fmt::format("building {} ({}) for {} failed:\n{}", file, build_options, device_name_, log));
  }
  programs_.emplace(key, p);
  return p;
}

cl_kernel Runner::kernel(const std::string& file, const std::string& build_options,
                         const std::string& function) {
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(program(file, build_options), function.c_str(), &err);
  check(err, fmt::format("clCreateKernel({})", function).c_str());
  return k;
}

double Runner::launch(cl_kernel kernel, std::size_t global, std::size_t local) {
  cl_event ev = nullptr;
  check(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &global, &local, 0, nullptr, &ev),
        "clEnqueueNDRangeKernel");
  const cl_int wait = clWaitForEvents(1, &ev);
  cl_ulong start = 0, end = 0;
  const cl_int a =
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
  const cl_int b = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
  clReleaseEvent(ev);
  check(wait, "clWaitForEvents");
  check(a, "clGetEventProfilingInfo(START)");
  check(b, "clGetEventProfilingInfo(END)");
  return static_cast<double>(end - start);
}

void Runner::measure(cl_kernel kernel, RunResult& r) {
  if (options_.busy_ms > 0) return keep_busy(kernel, r);
  if (options_.warmup) launch(kernel, r.global_size, r.local_size);
  RepeatTracker tracker({options_.min_time_ms * 1e6, options_.max_repeats, 0.02});
  do {
    r.kernel_ns.push_back(launch(kernel, r.global_size, r.local_size));
    tracker.add(r.kernel_ns.back());
  } while (tracker.more());
  r.stats = summarize(r.kernel_ns);
}

// --rest: the GPU idles busy_rest times a launch's length after it (a sleep; a stop's signal
// cuts it short, and the loop then ends).
void Runner::rest_after(double launch_ns) const {
  if (options_.busy_rest <= 0) return;
  const auto ns = static_cast<std::int64_t>(launch_ns * options_.busy_rest);
  timespec left{.tv_sec = ns / 1'000'000'000, .tv_nsec = ns % 1'000'000'000};
  ::nanosleep(&left, nullptr);
}

// Each launch is waited for, so once a stop is noticed no launch of ours is left on the GPU: the
// tool that measured the load may take the next window as idle once this process is gone.
void Runner::keep_busy(cl_kernel kernel, RunResult& r) {
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::duration<double, std::milli>(options_.busy_ms);
  const auto stopped = [this] { return options_.busy_stop != nullptr && *options_.busy_stop != 0; };
  r.kernel_ns.push_back(launch(kernel, r.global_size, r.local_size));
  if (options_.busy_started) options_.busy_started();
  rest_after(r.kernel_ns.back());
  while (!stopped() && std::chrono::steady_clock::now() < end) {
    const double ns = launch(kernel, r.global_size, r.local_size);
    rest_after(ns);
    // A load may run for minutes of short launches: the statistics keep the first max_repeats.
    if (r.kernel_ns.size() < options_.max_repeats) r.kernel_ns.push_back(ns);
  }
  if (stopped()) throw Stopped(fmt::format("stopped after {} launches", r.kernel_ns.size()));
  r.stats = summarize(r.kernel_ns);
}

template <typename E>
RunResult Runner::run_compute(const KernelSpec& spec) {
  RunResult r =
      start_result(spec, options_, spec.type == DataType::kInt ? Unit::kGops : Unit::kGflops);
  r.variant = options_.variant;
  r.iterations = r.variant == Variant::kSingle ? 1
                 : options_.iterations > 0     ? options_.iterations
                                               : std::max(1, 2048 / spec.width);

  const char* elem = spec.type == DataType::kSp   ? "-DELEM_SP"
                     : spec.type == DataType::kDp ? "-DELEM_DP"
                                                  : "-DELEM_INT";
  // -cl-mad-enable for the whole program: only the mad kernels contain a multiply-add.
  ClHandles h;
  h.kernel = kernel("compute.cl", fmt::format("{} -cl-mad-enable", elem),
                    compute_function(spec, r.variant));

  const std::size_t n = r.global_size * static_cast<std::size_t>(spec.width);
  std::vector<E> in(n), out(n), operand(r.local_size * static_cast<std::size_t>(spec.width));
  fill(spec, in, operand);
  cl_mem in_buf = make_buffer(context_, h, CL_MEM_READ_ONLY, in);
  cl_mem out_buf = make_buffer(context_, h, CL_MEM_WRITE_ONLY, out);
  cl_mem operand_buf = make_buffer(context_, h, CL_MEM_READ_ONLY, operand);
  set_arg(h.kernel, 0, in_buf, "clSetKernelArg(in)");
  set_arg(h.kernel, 1, out_buf, "clSetKernelArg(out)");
  set_arg(h.kernel, 2, operand_buf, "clSetKernelArg(operand)");
  set_arg(h.kernel, 3, static_cast<cl_int>(r.iterations), "clSetKernelArg(iterations)");
  set_arg(h.kernel, 4, cl_int{1}, "clSetKernelArg(outer)");
  set_arg(h.kernel, 5, E{0}, "clSetKernelArg(zero)");

  if (spec.power && r.variant != Variant::kSingle) {
    // Size the outer loop from one timed launch (after a warm-up that absorbs compilation) so
    // that every width runs about power_ms per launch.
    launch(h.kernel, r.global_size, r.local_size);
    const double one_ns = launch(h.kernel, r.global_size, r.local_size);
    r.outer = outer_repeats_for(options_.power_ms, one_ns, r.iterations);
    set_arg(h.kernel, 4, static_cast<cl_int>(r.outer), "clSetKernelArg(outer)");
  }
  r.ops = static_cast<double>(r.global_size) * r.iterations * r.outer * spec.ops_per_iteration();
  r.work = r.ops;
  measure(h.kernel, r);
  read_back(queue_, out_buf, out);
  r.verified = verify(spec, in, operand, out, r.local_size, r.iterations);
  return r;
}

template <typename E>
RunResult Runner::run_load_store(const KernelSpec& spec) {
  RunResult r = start_result(spec, options_, Unit::kGbytes);
  const std::size_t vec_bytes = sizeof(E) * static_cast<std::size_t>(spec.width);
  const std::size_t n = checked_elements(options_.size_bytes, vec_bytes, spec.name.c_str());
  r.size_bytes = n * vec_bytes;
  r.iterations = 1;

  ClHandles h;
  h.kernel = kernel("memory.cl", memory_options(), spec.function_name());
  const std::size_t elements = n * static_cast<std::size_t>(spec.width);
  std::vector<E> in(elements), out(elements);
  for (std::size_t j = 0; j < elements; ++j)
    in[j] = static_cast<E>(static_cast<double>(j % 4093) + 0.5);
  cl_mem in_buf = make_buffer(context_, h, CL_MEM_READ_ONLY, in);
  cl_mem out_buf = make_buffer(context_, h, CL_MEM_WRITE_ONLY, out);
  set_arg(h.kernel, 0, in_buf, "clSetKernelArg(in)");
  set_arg(h.kernel, 1, out_buf, "clSetKernelArg(out)");
  set_arg(h.kernel, 2, static_cast<cl_uint>(n), "clSetKernelArg(n)");
  r.work = 2.0 * static_cast<double>(r.size_bytes);  // every byte read once and written once
  measure(h.kernel, r);
  read_back(queue_, out_buf, out);
  for (std::size_t j = 0; j < elements; ++j) {
    if (std::memcmp(&out[j], &in[j], sizeof(E)) != 0) {
      throw VerificationError(fmt::format("{}: wrong result at element {}: got {}, expected {}",
                                          spec.name, j, out[j], in[j]));
    }
  }
  r.verified = elements;
  return r;
}

RunResult Runner::run_pchase(const KernelSpec& spec) {
  constexpr std::size_t kLineBytes = 64;
  const bool latency = spec.kind == Kind::kPchaseLat;
  RunResult r = start_result(spec, options_, latency ? Unit::kNsPerAccess : Unit::kGbytes);
  if (latency) r.local_size = r.global_size = 1;
  const std::size_t n = checked_elements(options_.size_bytes, sizeof(cl_uint), "pchase");
  const std::size_t stride = options_.stride;
  if (stride == 0 || stride >= n) {
    throw std::invalid_argument(fmt::format(
        "--stride {} must be between 1 and the number of 4-byte elements in --size ({})", stride,
        n));
  }
  r.size_bytes = n * sizeof(cl_uint);
  const std::size_t lines = std::max<std::size_t>(1, n / stride);
  r.iterations = options_.iterations > 0
                     ? options_.iterations
                     : static_cast<int>(std::min<std::size_t>(
                           INT_MAX, std::max<std::size_t>(1, lines / r.global_size)));

  ClHandles h;
  h.kernel = kernel("memory.cl", memory_options(), "pchase");
  std::vector<cl_uint> next(n), out(r.global_size);
  for (std::size_t j = 0; j < n; ++j) next[j] = static_cast<cl_uint>((j + stride) % n);
  cl_mem next_buf = make_buffer(context_, h, CL_MEM_READ_ONLY, next);
  cl_mem out_buf = make_buffer(context_, h, CL_MEM_WRITE_ONLY, out);
  set_arg(h.kernel, 0, next_buf, "clSetKernelArg(next)");
  set_arg(h.kernel, 1, out_buf, "clSetKernelArg(out)");
  set_arg(h.kernel, 2, static_cast<cl_int>(r.iterations), "clSetKernelArg(hops)");
  set_arg(h.kernel, 3, static_cast<cl_uint>(stride), "clSetKernelArg(stride)");
  set_arg(h.kernel, 4, static_cast<cl_uint>(n), "clSetKernelArg(n)");
  const double accesses = static_cast<double>(r.global_size) * r.iterations;
  // Each access brings in one line, or a part of one when the stride is shorter than a line.
  r.work = latency ? accesses
                   : accesses * static_cast<double>(std::min(kLineBytes, stride * sizeof(cl_uint)));
  measure(h.kernel, r);
  read_back(queue_, out_buf, out);
  const auto hops = static_cast<std::uint64_t>(r.iterations);
  for (std::size_t g = 0; g < r.global_size; ++g) {
    const std::uint64_t start = (static_cast<std::uint64_t>(g) * hops * stride) % n;
    const auto expected = static_cast<cl_uint>((start + hops * stride) % n);
    if (out[g] != expected) {
      throw VerificationError(fmt::format("{}: wrong result at element {}: got {}, expected {}",
                                          spec.name, g, out[g], expected));
    }
  }
  r.verified = r.global_size;
  return r;
}

RunResult Runner::run_empty(const KernelSpec& spec) {
  RunResult r = start_result(spec, options_, Unit::kUsPerLaunch);
  r.iterations = 1;
  ClHandles h;
  h.kernel = kernel("memory.cl", memory_options(), "empty");
  r.work = 1;
  measure(h.kernel, r);
  return r;  // nothing to verify: the kernel has no output by design
}

RunResult Runner::run(const KernelSpec& spec) {
  if (options_.work_groups == 0 || options_.work_items == 0) {
    throw std::invalid_argument("work-groups and work-items must be at least 1");
  }
  if (spec.type == DataType::kDp && !info_.fp64) {
    throw Unsupported(fmt::format("{}: skipped, {} has no double precision (cl_khr_fp64)",
                                  spec.name, device_name_));
  }
  RunResult r;
  switch (spec.kind) {
    case Kind::kCompute:
      switch (spec.type) {
        case DataType::kSp:
          r = run_compute<float>(spec);
          break;
        case DataType::kDp:
          r = run_compute<double>(spec);
          break;
        case DataType::kInt:
          r = run_compute<std::uint32_t>(spec);
          break;
      }
      break;
    case Kind::kLoadStore:
      r = spec.type == DataType::kDp ? run_load_store<double>(spec) : run_load_store<float>(spec);
      break;
    case Kind::kPchaseBw:
    case Kind::kPchaseLat:
      r = run_pchase(spec);
      break;
    case Kind::kEmpty:
      r = run_empty(spec);
      break;
  }
  r.device_name = device_name_;
  return r;
}

}  // namespace oaprof::bench
