// What oaprof's per-launch measurement costs a program: the same small OpenCL app launching many
// tiny kernels, run in one go (a) alone with clFinish after each launch (the drain that measuring
// one kernel at a time requires anyway), (b) alone without the drain, (c) under
// `oaprof --device sim` in kernel mode (bracketed: it drains), and (d) under
// `--attribution sampled` without the drain. Then (e) and (f) are (c) and (d) through a simulated
// oaprofd it starts itself, when the oaprofd binary is there. It prints the microseconds each
// adds per launch: bracketed over the drained app, (c − a) / launches (goal at most 10 µs), and
// sampled over the undrained one, (d − b) / launches (goal at most 2 µs), and the ratios through
// oaprofd against locally. The figures are printed, never asserted (timing is
// machine-dependent), but a wrong row count or a wrong result fails the run.
//   launch_overhead_bench [--launches N] [--repeat R]      the comparison (default 10000, 3)
// Then (l) and (m) are the same for a program that synchronises every kSyncEvery launches, as most
// do (a blocking read, a clFinish): (l) alone reading its launches' OpenCL times after each
// clFinish, (m) under `--attribution sampled`; (m − l) / launches is what sampled attribution
// adds where the layer can ask the events at the program's own sync points.
//   launch_overhead_bench --app N drain|nodrain|events|sync|syncevents OUT_FILE   the app itself
//   launch_overhead_bench --platforms                      the OpenCL platforms and devices
//   launch_overhead_bench --ze-app N drain|nodrain OUT_FILE   the Level Zero app (used below)
// Where the Level Zero test kernels and simulated driver were built, the same comparison runs for
// a Level Zero program on the simulated driver: (h) drained (each launch waited for) and (i)
// undrained alone, (j) bracketed and (k) sampled under oaprof: (j − h) / launches and
// (k − i) / launches are the microseconds oaprof's Level Zero layer adds per launch.
// Last, each difference as the median of each repeat's own pair of runs (the profiled run less
// the run alone made just before it), with its range: steadier than the difference of two bests
// where the machine drifts between repeats.
// OAPROF_BENCH_PLATFORM=NAME picks the OpenCL platform whose name holds NAME (default: the first).
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#ifdef OAPROF_BENCH_ZE_SPIRV
#include <level_zero/ze_api.h>
#endif
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/ignore_result.h"
#include "tests/common/run_util.h"

namespace {
namespace fs = std::filesystem;

std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

[[noreturn]] void die(const char* what, cl_int err) {
  std::fprintf(stderr, "launch_overhead_bench: %s failed (%d)\n", what, err);
  std::exit(3);
}
void check(cl_int err, const char* what) {
  if (err != CL_SUCCESS) die(what, err);
}

// The first platform, or the first whose name holds OAPROF_BENCH_PLATFORM ("Portable" for PoCL,
// "NVIDIA"), for machines with several.
cl_platform_id choose_platform() {
  cl_platform_id platforms[16];
  cl_uint n = 0;
  check(clGetPlatformIDs(16, platforms, &n), "clGetPlatformIDs");
  const char* want = std::getenv("OAPROF_BENCH_PLATFORM");
  for (cl_uint i = 0; i < n && want != nullptr; ++i) {
    char name[256] = {};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    if (std::strstr(name, want) != nullptr) return platforms[i];
  }
  if (want != nullptr) {
    std::fprintf(stderr, "launch_overhead_bench: no OpenCL platform named like '%s'\n", want);
    std::exit(3);
  }
  return platforms[0];
}

// Each platform's name and its first device's, one per line.
int list_platforms() {
  cl_platform_id platforms[16];
  cl_uint n = 0;
  check(clGetPlatformIDs(16, platforms, &n), "clGetPlatformIDs");
  for (cl_uint i = 0; i < n; ++i) {
    char name[256] = {}, device_name[256] = {};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    cl_device_id device = nullptr;
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) {
      clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof device_name - 1, device_name, nullptr);
    }
    std::printf("%s: %s\n", name, device_name);
  }
  return 0;
}

constexpr int kWarmup = 20;  // first launches compile and page in: not part of the timed loop
constexpr size_t kItems = 64;

// Launches `n` tiny kernels (after kWarmup untimed ones) and writes the timed loop's duration in
// ns to `out`. Exit status 1 when the buffer does not hold what the launches computed.
// How the app launches: kDrain waits for each launch, kNoDrain does not, kEvents does not either
// but takes an event of every launch (on a queue with profiling) and reads its start and end
// after the loop's clFinish: what reading every launch's OpenCL times costs any tool. kSync and
// kSyncEvents are kNoDrain and kEvents with a clFinish every kSyncEvery launches (kSyncEvents
// reading the times of the launches before it there).
enum class AppMode { kDrain, kNoDrain, kEvents, kSync, kSyncEvents };
constexpr int kSyncEvery = 64;

int app(int n, AppMode mode, const char* out) {
  const bool drain = mode == AppMode::kDrain;
  const bool sync = mode == AppMode::kSync || mode == AppMode::kSyncEvents;
  const bool events_read = mode == AppMode::kEvents || mode == AppMode::kSyncEvents;
  cl_platform_id platform = choose_platform();
  cl_device_id device;
  check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  const cl_queue_properties profiling[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue q =
      clCreateCommandQueueWithProperties(ctx, device, events_read ? profiling : nullptr, &err);
  check(err, "clCreateCommandQueueWithProperties");
  const char* src = "__kernel void tick(__global int* a) { a[get_global_id(0)] += 1; }";
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  check(clBuildProgram(p, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  cl_kernel k = clCreateKernel(p, "tick", &err);
  check(err, "clCreateKernel");
  std::vector<int> host(kItems, 0);
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, kItems * sizeof(int),
                            host.data(), &err);
  check(err, "clCreateBuffer");
  check(clSetKernelArg(k, 0, sizeof m, &m), "clSetKernelArg");
  const size_t global = kItems;
  std::vector<cl_event> events;
  events.reserve(static_cast<std::size_t>(n + kWarmup));
  auto read_times = [&] {
    for (cl_event ev : events) {
      cl_ulong t[2];
      check(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t[0], &t[0], nullptr),
            "clGetEventProfilingInfo");
      check(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t[1], &t[1], nullptr),
            "clGetEventProfilingInfo");
      clReleaseEvent(ev);
    }
    events.clear();
  };
  int launched = 0;
  auto launch = [&] {
    cl_event* ev = events_read ? &events.emplace_back() : nullptr;
    check(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, ev),
          "clEnqueueNDRangeKernel");
    if (drain || (sync && ++launched % kSyncEvery == 0)) {
      check(clFinish(q), "clFinish");
      if (sync) read_times();
    }
  };
  for (int i = 0; i < kWarmup; ++i) launch();
  check(clFinish(q), "clFinish");
  read_times();
  const std::uint64_t t0 = monotonic_ns();
  for (int i = 0; i < n; ++i) launch();
  check(clFinish(q), "clFinish");
  read_times();
  const std::uint64_t loop_ns = monotonic_ns() - t0;
  check(
      clEnqueueReadBuffer(q, m, CL_TRUE, 0, kItems * sizeof(int), host.data(), 0, nullptr, nullptr),
      "clEnqueueReadBuffer");
  std::ofstream(out) << loop_ns << "\n";
  const bool right = std::all_of(host.begin(), host.end(), [&](int v) { return v == n + kWarmup; });
  if (!right) std::fprintf(stderr, "launch_overhead_bench: wrong result %d\n", host[0]);
  return right ? 0 : 1;
}

#ifdef OAPROF_BENCH_ZE_SPIRV
void check_ze(ze_result_t r, const char* what) {
  if (r == ZE_RESULT_SUCCESS) return;
  std::fprintf(stderr, "launch_overhead_bench: %s failed (0x%x)\n", what, static_cast<unsigned>(r));
  std::exit(3);
}

// An immediate list on the first device with the `add_one` kernel of the Level Zero test module.
ze_command_list_handle_t ze_setup(ze_context_handle_t& ctx, ze_kernel_handle_t& k, bool drain) {
  check_ze(zeInit(ZE_INIT_FLAG_GPU_ONLY), "zeInit");
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  std::uint32_t n = 1;
  check_ze(zeDriverGet(&n, &driver), "zeDriverGet");
  n = 1;
  check_ze(zeDeviceGet(driver, &n, &device), "zeDeviceGet");
  ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  check_ze(zeContextCreate(driver, &cd, &ctx), "zeContextCreate");
  std::ifstream in(OAPROF_BENCH_ZE_SPIRV, std::ios::binary);
  const std::vector<char> spirv{std::istreambuf_iterator<char>(in), {}};
  ze_module_desc_t md{};
  md.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  md.format = ZE_MODULE_FORMAT_IL_SPIRV;
  md.inputSize = spirv.size();
  md.pInputModule = reinterpret_cast<const std::uint8_t*>(spirv.data());
  ze_module_handle_t module = nullptr;
  check_ze(zeModuleCreate(ctx, device, &md, &module, nullptr), "zeModuleCreate");
  ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "add_one"};
  check_ze(zeKernelCreate(module, &kd, &k), "zeKernelCreate");
  ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
  ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  void* buffer = nullptr;
  check_ze(zeMemAllocShared(ctx, &dd, &hd, kItems * sizeof(int), 64, device, &buffer),
           "zeMemAllocShared");
  check_ze(zeKernelSetArgumentValue(k, 0, sizeof buffer, &buffer), "zeKernelSetArgumentValue");
  check_ze(zeKernelSetGroupSize(k, kItems, 1, 1), "zeKernelSetGroupSize");
  ze_command_queue_desc_t qd{};
  qd.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  qd.mode = drain ? ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS : ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  ze_command_list_handle_t list = nullptr;
  check_ze(zeCommandListCreateImmediate(ctx, device, &qd, &list), "zeCommandListCreateImmediate");
  return list;
}

// Launches `n` one-group kernels (after kWarmup) on an immediate list, each waited for (`drain`:
// a synchronous list) or not (then one barrier's event at the end), and writes the timed loop's
// duration in ns to `out`. The simulated driver's kernels compute nothing: no result to check.
int ze_app(int n, bool drain, const char* out) {
  ze_context_handle_t ctx = nullptr;
  ze_kernel_handle_t k = nullptr;
  ze_command_list_handle_t list = ze_setup(ctx, k, drain);
  ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                          ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
  ze_event_pool_handle_t pool = nullptr;
  check_ze(zeEventPoolCreate(ctx, &pd, 0, nullptr, &pool), "zeEventPoolCreate");
  ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                     ZE_EVENT_SCOPE_FLAG_HOST};
  ze_event_handle_t done = nullptr;
  check_ze(zeEventCreate(pool, &ed, &done), "zeEventCreate");
  const ze_group_count_t groups{1, 1, 1};
  auto loop = [&](int count) {
    for (int i = 0; i < count; ++i) {
      check_ze(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr),
               "zeCommandListAppendLaunchKernel");
    }
    check_ze(zeEventHostReset(done), "zeEventHostReset");
    check_ze(zeCommandListAppendBarrier(list, done, 0, nullptr), "zeCommandListAppendBarrier");
    check_ze(zeEventHostSynchronize(done, UINT64_MAX), "zeEventHostSynchronize");
  };
  loop(kWarmup);
  const std::uint64_t t0 = monotonic_ns();
  loop(n);
  const std::uint64_t loop_ns = monotonic_ns() - t0;
  std::ofstream(out) << loop_ns << "\n";
  check_ze(zeEventDestroy(done), "zeEventDestroy");
  check_ze(zeEventPoolDestroy(pool), "zeEventPoolDestroy");
  check_ze(zeCommandListDestroy(list), "zeCommandListDestroy");
  check_ze(zeKernelDestroy(k), "zeKernelDestroy");
  return 0;
}
#endif

struct Run {
  double loop_ns = 0;
  double process_ns = 0;
};

// Runs `command` (which writes the loop time to `out`) and returns both times, exiting on failure.
Run timed(const std::string& command, const fs::path& out) {
  const std::uint64_t t0 = monotonic_ns();
  const auto r = oaprof::testing::run(command);
  Run run;
  run.process_ns = static_cast<double>(monotonic_ns() - t0);
  std::ifstream in(out);
  if (r.status != 0 || !(in >> run.loop_ns)) {
    std::fprintf(stderr, "launch_overhead_bench: '%s' failed (status %d):\n%s\n", command.c_str(),
                 r.status, r.output.c_str());
    std::exit(1);
  }
  return run;
}

// A simulated oaprofd on a socket in `dir`, for as long as it lives; none when its binary is
// missing or it does not come up.
class SimOaprofd {
 public:
  explicit SimOaprofd(const fs::path& dir) : socket_((dir / "oaprofd.sock").string()) {
    if (!fs::exists(OAPROFD_BIN)) return;
    const std::string group = std::to_string(::getgid()), state = dir.string();
    pid_ = ::fork();
    if (pid_ == 0) {
      oaprof::base::ignore_result(std::freopen("/dev/null", "w", stderr));
      ::execl(OAPROFD_BIN, OAPROFD_BIN, "--socket", socket_.c_str(), "--state-dir", state.c_str(),
              "--device", "sim", "--group", group.c_str(), "--foreground", nullptr);
      ::_exit(127);
    }
    for (int i = 0; i < 200 && !fs::exists(socket_); ++i) ::usleep(10'000);
  }
  ~SimOaprofd() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  bool up() const { return pid_ > 0 && fs::exists(socket_); }
  // The environment and option that send oaprof through it.
  std::string prefix() const { return fmt::format("OAPROF_DAEMON_SOCKET={} ", socket_); }

 private:
  std::string socket_;
  pid_t pid_ = -1;
};

struct Timings {
  // a, b: the app alone; g: alone, reading every launch's OpenCL times; c, d: under oaprof,
  // bracketed and sampled; e, f: the same via oaprofd.
  Run a{1e300, 1e300}, b{1e300, 1e300}, g{1e300, 1e300}, c{1e300, 1e300}, d{1e300, 1e300},
      e{1e300, 1e300}, f{1e300, 1e300};
  // l: alone, synchronising every kSyncEvery launches and reading their times; m: under oaprof,
  // sampled, synchronising as often.
  Run l{1e300, 1e300}, m{1e300, 1e300};
  bool daemon = false;
  // Level Zero on the simulated driver: h, i alone (drained, not); j, k under oaprof.
  Run h{1e300, 1e300}, i{1e300, 1e300}, j{1e300, 1e300}, k{1e300, 1e300};
  bool level_zero = false;
  std::string level_zero_absent = "built without the Level Zero test kernels";
  // Each repeat's own differences, in µs per launch, of runs made minutes apart at most: the
  // machine's drift between repeats (2–3 µs a launch on the 16-core machine) moves both runs of
  // a pair, and their median is steadier than the difference of two bests.
  struct Paired {
    const char* what;
    std::vector<double> us;
  };
  Paired c_a{"bracketed (c-a)/n", {}}, d_g{"sampled (d-g)/n", {}},
      m_l{"sampled, synchronising (m-l)/n", {}}, j_h{"Level Zero bracketed (j-h)/n", {}},
      k_i{"Level Zero sampled (k-i)/n", {}};
};

// The difference of two runs of one repeat, per launch, kept for the medians.
void pair(Timings::Paired& into, const Run& profiled, const Run& alone, int launches) {
  into.us.push_back((profiled.loop_ns - alone.loop_ns) / launches / 1e3);
}

// "median [lowest, highest] of N" of each repeat's difference.
void print_paired(const Timings::Paired& p) {
  if (p.us.empty()) return;
  std::vector<double> v = p.us;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  const double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  std::printf("  %-32s %7.2f us  [%.2f, %.2f] of %zu\n", p.what, median, v.front(), v.back(), n);
}

// One timed loop: its total and per launch.
void print_line(const char* what, const Run& r, double n) {
  std::printf("%-36s %10.1f ms  %7.2f us/launch\n", what, r.loop_ns / 1e6, r.loop_ns / n / 1e3);
}

void print_level_zero(const Timings& t, double n) {
  if (!t.level_zero) {
    std::printf("Level Zero: not measured (%s)\n", t.level_zero_absent.c_str());
    return;
  }
  auto line = [n](const char* what, const Run& r) { print_line(what, r, n); };
  line("(h) L0 app, synchronous list", t.h);
  line("(i) L0 app, no drain", t.i);
  line("(j) L0 under oaprof, bracketed", t.j);
  line("(k) L0 under oaprof, sampled", t.k);
  std::printf(
      "Level Zero (simulated driver): bracketed added per launch (j-h)/n: %.2f us; sampled "
      "(k-i)/n: %.2f us; wall-time ratios j/h %.2f, k/i %.2f\n",
      (t.j.loop_ns - t.h.loop_ns) / n / 1e3, (t.k.loop_ns - t.i.loop_ns) / n / 1e3,
      t.j.loop_ns / t.h.loop_ns, t.k.loop_ns / t.i.loop_ns);
}

void print(const Timings& t, int launches, int repeat) {
  const double n = launches;
  auto line = [n](const char* what, const Run& r) { print_line(what, r, n); };
  std::printf("launches per run %d (+%d warm-up), best of %d runs each\n", launches, kWarmup,
              repeat);
  line("(a) app, clFinish each", t.a);
  line("(b) app, no drain", t.b);
  line("(g) app, no drain, reads its times", t.g);
  line("(c) oaprof, bracketed (drains)", t.c);
  line("(d) oaprof, sampled, no drain", t.d);
  std::printf("bracketed: added per launch over the drained app (c-a)/n: %.2f us (goal <= 10)\n",
              (t.c.loop_ns - t.a.loop_ns) / n / 1e3);
  std::printf(
      "sampled: added per launch over the undrained app (d-b)/n: %.2f us (goal <= 2); "
      "over the app reading its own times (d-g)/n: %.2f us\n",
      (t.d.loop_ns - t.b.loop_ns) / n / 1e3, (t.d.loop_ns - t.g.loop_ns) / n / 1e3);
  line("(l) app, clFinish/64, reads times", t.l);
  line("(m) oaprof, sampled, clFinish/64", t.m);
  std::printf(
      "sampled, a program that synchronises: added per launch (m-l)/n: %.2f us (goal <= 2)\n",
      (t.m.loop_ns - t.l.loop_ns) / n / 1e3);
  std::printf("wall-time ratios c/a %.2f, d/b %.2f, c/d %.2f (timed loops)\n",
              t.c.loop_ns / t.a.loop_ns, t.d.loop_ns / t.b.loop_ns, t.c.loop_ns / t.d.loop_ns);
  if (t.daemon) {
    line("(e) through oaprofd, bracketed", t.e);
    line("(f) through oaprofd, sampled", t.f);
    std::printf(
        "through oaprofd: (e-a)/n %.2f us, (f-b)/n %.2f us; against locally e/c %.2f, "
        "f/d %.2f\n",
        (t.e.loop_ns - t.a.loop_ns) / n / 1e3, (t.f.loop_ns - t.b.loop_ns) / n / 1e3,
        t.e.loop_ns / t.c.loop_ns, t.f.loop_ns / t.d.loop_ns);
  } else {
    std::printf("through oaprofd: not measured (no oaprofd binary, or it did not start)\n");
  }
  std::printf(
      "whole processes: a %.0f ms, b %.0f ms, c %.0f ms, d %.0f ms (start-up, build, "
      "oaprof set-up)\n",
      t.a.process_ns / 1e6, t.b.process_ns / 1e6, t.c.process_ns / 1e6, t.d.process_ns / 1e6);
  print_level_zero(t, n);
  std::printf(
      "added per launch, each repeat's profiled run less its run alone (median [range]):\n");
  for (const Timings::Paired* p : {&t.c_a, &t.d_g, &t.m_l, &t.j_h, &t.k_i}) print_paired(*p);
}

int compare(int launches, int repeat, const char* self) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("oaprof-overhead-{}", ::getpid());
  fs::create_directories(dir);
  const fs::path out = dir / "loop_ns", csv = dir / "rows.csv";
  const std::string app_cmd = fmt::format("{} --app {}", self, launches);
  Timings t;
  // Keeps the best of each in `into` and gives this run back, for its repeat's differences.
  auto best = [](Run& into, const Run& r) {
    into.loop_ns = std::min(into.loop_ns, r.loop_ns);
    into.process_ns = std::min(into.process_ns, r.process_ns);
    return r;
  };
  const std::size_t expected = static_cast<std::size_t>(launches + kWarmup);
  bool rows_right = true;
  // One run under oaprof of `app` (by default the OpenCL one); its rows must be one per launch.
  auto profiled = [&](const std::string& prefix, const std::string& options, const char* drain,
                      const std::string& app = "") {
    const Run r = timed(fmt::format("{}{} --device sim -q --energy none --mode kernel {} -o {} -- "
                                    "{} {} {}",
                                    prefix, OAPROF_BIN, options, csv.string(),
                                    app.empty() ? app_cmd : app, drain, out.string()),
                        out);
    const std::size_t rows = oaprof::testing::read_csv(csv).size();
    if (rows != expected) {
      std::fprintf(stderr, "launch_overhead_bench: oaprof %s recorded %zu rows, expected %zu\n",
                   options.c_str(), rows, expected);
      rows_right = false;
    }
    return r;
  };
  const SimOaprofd daemon(dir);
  t.daemon = daemon.up();
  const std::string sampled = "--attribution sampled", via = daemon.prefix() + "";
  // Best of `repeat` for each: the machine is shared, and the fastest run is the least disturbed.
  for (int i = 0; i < repeat; ++i) {
    const Run a = best(t.a, timed(fmt::format("{} drain {}", app_cmd, out.string()), out));
    best(t.b, timed(fmt::format("{} nodrain {}", app_cmd, out.string()), out));
    const Run g = best(t.g, timed(fmt::format("{} events {}", app_cmd, out.string()), out));
    pair(t.c_a, best(t.c, profiled("", "", "drain")), a, launches);
    pair(t.d_g, best(t.d, profiled("", sampled, "nodrain")), g, launches);
    const Run l = best(t.l, timed(fmt::format("{} syncevents {}", app_cmd, out.string()), out));
    pair(t.m_l, best(t.m, profiled("", sampled, "sync")), l, launches);
#ifdef OAPROF_BENCH_ZE_SPIRV
    // oaprof names the simulated driver itself under --device sim; alone, the app is told.
    const std::string ze_cmd = fmt::format("{} --ze-app {}", self, launches);
    const std::string alone =
        fmt::format("ZE_ENABLE_ALT_DRIVERS={} {}", OAPROF_BENCH_ZE_DRIVER, ze_cmd);
    // A bundle carried to another machine (bench/overhead_bundle.sh) may lack the simulated
    // driver: the OpenCL columns are still measured.
    t.level_zero = fs::exists(OAPROF_BENCH_ZE_DRIVER);
    t.level_zero_absent = fmt::format("no simulated driver at {}", OAPROF_BENCH_ZE_DRIVER);
    if (t.level_zero) {
      const Run h = best(t.h, timed(fmt::format("{} drain {}", alone, out.string()), out));
      const Run undrained =
          best(t.i, timed(fmt::format("{} nodrain {}", alone, out.string()), out));
      pair(t.j_h, best(t.j, profiled("", "", "drain", ze_cmd)), h, launches);
      pair(t.k_i, best(t.k, profiled("", sampled, "nodrain", ze_cmd)), undrained, launches);
    }
#endif
    if (!t.daemon) continue;
    best(t.e, profiled(via, "--daemon always", "drain"));
    best(t.f, profiled(via, "--daemon always " + sampled, "nodrain"));
  }
  fs::remove_all(dir);
  print(t, launches, repeat);
  return rows_right ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "--platforms") return list_platforms();
  if (args.size() == 4 && args[0] == "--app") {
    const AppMode mode = args[2] == "drain"        ? AppMode::kDrain
                         : args[2] == "events"     ? AppMode::kEvents
                         : args[2] == "sync"       ? AppMode::kSync
                         : args[2] == "syncevents" ? AppMode::kSyncEvents
                                                   : AppMode::kNoDrain;
    return app(std::stoi(args[1]), mode, args[3].c_str());
  }
#ifdef OAPROF_BENCH_ZE_SPIRV
  if (args.size() == 4 && args[0] == "--ze-app") {
    return ze_app(std::stoi(args[1]), args[2] == "drain", args[3].c_str());
  }
#endif
  int launches = 10000, repeat = 3;
  // Options come in pairs; anything else (--help included) is answered by the usage line, not
  // by a run of several minutes.
  if (args.size() % 2 != 0) {
    std::fprintf(stderr,
                 "usage: launch_overhead_bench [--launches N] [--repeat R] | --platforms\n");
    return args.size() == 1 && (args[0] == "--help" || args[0] == "-h") ? 0 : 2;
  }
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--launches") {
      launches = std::stoi(args[i + 1]);
    } else if (args[i] == "--repeat") {
      repeat = std::stoi(args[i + 1]);
    } else {
      std::fprintf(stderr, "usage: launch_overhead_bench [--launches N] [--repeat R]\n");
      return 2;
    }
  }
  if (launches <= 0 || repeat <= 0) {
    std::fprintf(stderr, "launch_overhead_bench: --launches and --repeat must be positive\n");
    return 2;
  }
  return compare(launches, repeat, fs::canonical("/proc/self/exe").c_str());
}
