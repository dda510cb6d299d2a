// A Level Zero program for tests: it runs one scenario (argv[1]) with the SPIR-V module argv[2]
// on the first GPU the loader offers, and prints what it did line by line, so that a test can
// check it under the simulated driver (and, later, under oaprof):
//   launch <name> groups=X,Y,Z [start=T end=T] [call=C] [pid=P] [held=1]
//                                                            one line per kernel execution;
//                                                            held: it waited on the host
//   run device_start=T device_end=T                          the device timer around the run
//   check <what> ok|FAILED                                   copies and fills read back
//   result <call> <code>                                     (misuse) each call's result
//   device <name>                                            the device's name, first
// Scenarios: immediate, regular, threads, no-events, barriers, long, churn, plain-events, misuse,
// launch-kinds, launch-kinds-held, fork, with-opencl (OpenCL's first device beside), catalogue,
// device-lost (a GPU hang: the waits' results are printed), unsynced (no sync point; needs
// $ZE_SIM_APP_ROWS).
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <level_zero/ze_api.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

std::mutex print_mu;

void check(ze_result_t r, const char* what) {
  if (r == ZE_RESULT_SUCCESS) return;
  std::fprintf(stderr, "ze_sim_app: %s failed: 0x%x\n", what, static_cast<unsigned>(r));
  std::exit(1);
}

struct Gpu {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  ze_context_handle_t context = nullptr;
  ze_module_handle_t module = nullptr;
};

Gpu open_gpu(const char* spirv_path) {
  Gpu g;
  check(zeInit(ZE_INIT_FLAG_GPU_ONLY), "zeInit");
  std::uint32_t n = 1;
  check(zeDriverGet(&n, &g.driver), "zeDriverGet");
  n = 1;
  check(zeDeviceGet(g.driver, &n, &g.device), "zeDeviceGet");
  ze_device_properties_t props{};
  props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  check(zeDeviceGetProperties(g.device, &props), "zeDeviceGetProperties");
  std::printf("device %s\n", props.name);
  ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  check(zeContextCreate(g.driver, &cd, &g.context), "zeContextCreate");
  std::ifstream in(spirv_path, std::ios::binary);
  const std::vector<char> spirv{std::istreambuf_iterator<char>(in), {}};
  if (spirv.empty()) {
    std::fprintf(stderr, "ze_sim_app: cannot read %s\n", spirv_path);
    std::exit(1);
  }
  ze_module_desc_t md{};
  md.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  md.format = ZE_MODULE_FORMAT_IL_SPIRV;
  md.inputSize = spirv.size();
  md.pInputModule = reinterpret_cast<const std::uint8_t*>(spirv.data());
  check(zeModuleCreate(g.context, g.device, &md, &g.module, nullptr), "zeModuleCreate");
  return g;
}

std::uint64_t device_now(const Gpu& g) {
  std::uint64_t host = 0, device = 0;
  check(zeDeviceGetGlobalTimestamps(g.device, &host, &device), "zeDeviceGetGlobalTimestamps");
  return device;
}

// A kernel with its arguments set: scale(x, 2.0f), add_one(x) or fixed_group(x, local).
ze_kernel_handle_t make_kernel(const Gpu& g, const char* name, void* buffer) {
  ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name};
  ze_kernel_handle_t k = nullptr;
  check(zeKernelCreate(g.module, &kd, &k), "zeKernelCreate");
  check(zeKernelSetArgumentValue(k, 0, sizeof buffer, &buffer), "zeKernelSetArgumentValue");
  if (std::strcmp(name, "scale") == 0) {
    const float factor = 2.0f;
    check(zeKernelSetArgumentValue(k, 1, sizeof factor, &factor), "zeKernelSetArgumentValue");
  } else if (std::strcmp(name, "fixed_group") == 0) {
    check(zeKernelSetArgumentValue(k, 1, 16 * sizeof(int), nullptr), "zeKernelSetArgumentValue");
  }
  if (std::strcmp(name, "fixed_group") != 0) {
    check(zeKernelSetGroupSize(k, 32, 1, 1), "zeKernelSetGroupSize");
  }
  return k;
}

std::string kernel_name(ze_kernel_handle_t k) {
  size_t size = 0;
  check(zeKernelGetName(k, &size, nullptr), "zeKernelGetName");
  std::string name(size, '\0');
  check(zeKernelGetName(k, &size, name.data()), "zeKernelGetName");
  name.resize(size > 0 ? size - 1 : 0);
  return name;
}

struct Timestamps {
  ze_event_pool_handle_t pool = nullptr;
  std::vector<ze_event_handle_t> events;
};

Timestamps timestamp_events(const Gpu& g, std::uint32_t count) {
  Timestamps t;
  ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                          ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                          count};
  check(zeEventPoolCreate(g.context, &pd, 0, nullptr, &t.pool), "zeEventPoolCreate");
  for (std::uint32_t i = 0; i < count; ++i) {
    ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, ZE_EVENT_SCOPE_FLAG_HOST,
                       ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t e = nullptr;
    check(zeEventCreate(t.pool, &ed, &e), "zeEventCreate");
    t.events.push_back(e);
  }
  return t;
}

void destroy(Timestamps& t) {
  for (ze_event_handle_t e : t.events) check(zeEventDestroy(e), "zeEventDestroy");
  check(zeEventPoolDestroy(t.pool), "zeEventPoolDestroy");
}

void print_launch(const std::string& name, const ze_group_count_t& groups, ze_event_handle_t event,
                  bool held = false) {
  std::string window;
  if (event != nullptr) {
    check(zeEventHostSynchronize(event, UINT64_MAX), "zeEventHostSynchronize");
    ze_kernel_timestamp_result_t ts{};
    check(zeEventQueryKernelTimestamp(event, &ts), "zeEventQueryKernelTimestamp");
    window = " start=" + std::to_string(ts.global.kernelStart) +
             " end=" + std::to_string(ts.global.kernelEnd);
  }
  if (held) window += " held=1";
  std::lock_guard lock(print_mu);
  std::printf("launch %s groups=%u,%u,%u%s\n", name.c_str(), groups.groupCountX, groups.groupCountY,
              groups.groupCountZ, window.c_str());
}

void* alloc_shared(const Gpu& g, size_t bytes) {
  ze_device_mem_alloc_desc_t dd{};
  dd.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
  ze_host_mem_alloc_desc_t hd{};
  hd.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
  void* p = nullptr;
  check(zeMemAllocShared(g.context, &dd, &hd, bytes, 64, g.device, &p), "zeMemAllocShared");
  return p;
}

ze_command_list_handle_t immediate_list(const Gpu& g, ze_command_queue_mode_t mode) {
  ze_command_queue_desc_t qd{};
  qd.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  qd.mode = mode;
  ze_command_list_handle_t list = nullptr;
  check(zeCommandListCreateImmediate(g.context, g.device, &qd, &list),
        "zeCommandListCreateImmediate");
  return list;
}

// Fills `a` with 0x5A, copies it to `b` through the list, and says whether `b` holds it.
void copy_and_fill(const Gpu& g, ze_command_list_handle_t list, ze_event_handle_t done) {
  constexpr size_t kBytes = 4096;
  auto* a = static_cast<std::uint8_t*>(alloc_shared(g, kBytes));
  auto* b = static_cast<std::uint8_t*>(alloc_shared(g, kBytes));
  std::memset(b, 0, kBytes);
  const std::uint8_t pattern = 0x5A;
  check(zeCommandListAppendMemoryFill(list, a, &pattern, 1, kBytes, nullptr, 0, nullptr),
        "zeCommandListAppendMemoryFill");
  check(zeCommandListAppendBarrier(list, nullptr, 0, nullptr), "zeCommandListAppendBarrier");
  check(zeCommandListAppendMemoryCopy(list, b, a, kBytes, done, 0, nullptr),
        "zeCommandListAppendMemoryCopy");
  check(zeEventHostSynchronize(done, UINT64_MAX), "zeEventHostSynchronize");
  bool ok = true;
  for (size_t i = 0; i < kBytes; ++i) ok = ok && b[i] == pattern;
  std::printf("check copy-and-fill %s\n", ok ? "ok" : "FAILED");
  check(zeMemFree(g.context, a), "zeMemFree");
  check(zeMemFree(g.context, b), "zeMemFree");
}

void print_run(const Gpu& g, std::uint64_t start) {
  std::printf("run device_start=%" PRIu64 " device_end=%" PRIu64 "\n", start, device_now(g));
}

int immediate(const Gpu& g) {
  const std::uint64_t t0 = device_now(g);
  void* x = alloc_shared(g, 1 << 16);
  ze_command_list_handle_t list = immediate_list(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  Timestamps ts = timestamp_events(g, 4);
  const char* names[] = {"scale", "add_one", "scale"};
  const ze_group_count_t groups[] = {{4, 1, 1}, {8, 1, 1}, {16, 1, 1}};
  for (int i = 0; i < 3; ++i) {
    ze_kernel_handle_t k = make_kernel(g, names[i], x);
    check(zeCommandListAppendLaunchKernel(list, k, &groups[i], ts.events[i], 0, nullptr),
          "zeCommandListAppendLaunchKernel");
    print_launch(kernel_name(k), groups[i], ts.events[i]);
    check(zeKernelDestroy(k), "zeKernelDestroy");
  }
  copy_and_fill(g, list, ts.events[3]);
  print_run(g, t0);
  destroy(ts);
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeMemFree(g.context, x), "zeMemFree");
  return 0;
}

ze_command_queue_handle_t make_queue(const Gpu& g, ze_command_queue_mode_t mode) {
  ze_command_queue_desc_t qd{};
  qd.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  qd.mode = mode;
  ze_command_queue_handle_t q = nullptr;
  check(zeCommandQueueCreate(g.context, g.device, &qd, &q), "zeCommandQueueCreate");
  return q;
}

ze_command_list_handle_t regular_list(const Gpu& g) {
  ze_command_list_desc_t ld{};
  ld.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
  ze_command_list_handle_t list = nullptr;
  check(zeCommandListCreate(g.context, g.device, &ld, &list), "zeCommandListCreate");
  return list;
}

ze_fence_handle_t make_fence(ze_command_queue_handle_t q) {
  ze_fence_desc_t fd{};
  fd.stype = ZE_STRUCTURE_TYPE_FENCE_DESC;
  ze_fence_handle_t f = nullptr;
  check(zeFenceCreate(q, &fd, &f), "zeFenceCreate");
  return f;
}

// Executes `list` on `q` and waits on the fence; the launches' events are reset first.
void execute(ze_command_queue_handle_t q, ze_command_list_handle_t list, ze_fence_handle_t fence,
             const std::vector<ze_event_handle_t>& events) {
  for (ze_event_handle_t e : events) check(zeEventHostReset(e), "zeEventHostReset");
  check(zeFenceReset(fence), "zeFenceReset");
  check(zeCommandQueueExecuteCommandLists(q, 1, &list, fence), "zeCommandQueueExecuteCommandLists");
  check(zeFenceHostSynchronize(fence, UINT64_MAX), "zeFenceHostSynchronize");
}

// A regular list of scale and add_one executed three times, then reset and recorded anew with
// add_one alone and executed once more: seven launches.
int regular(const Gpu& g) {
  const std::uint64_t t0 = device_now(g);
  void* x = alloc_shared(g, 1 << 16);
  ze_kernel_handle_t scale = make_kernel(g, "scale", x), add_one = make_kernel(g, "add_one", x);
  ze_command_queue_handle_t q = make_queue(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  ze_fence_handle_t fence = make_fence(q);
  ze_command_list_handle_t list = regular_list(g);
  Timestamps ts = timestamp_events(g, 2);
  const ze_group_count_t groups[] = {{2, 1, 1}, {3, 1, 1}};
  check(zeCommandListAppendLaunchKernel(list, scale, &groups[0], ts.events[0], 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListAppendLaunchKernel(list, add_one, &groups[1], ts.events[1], 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListClose(list), "zeCommandListClose");
  for (int i = 0; i < 3; ++i) {
    execute(q, list, fence, ts.events);
    print_launch("scale", groups[0], ts.events[0]);
    print_launch("add_one", groups[1], ts.events[1]);
  }
  check(zeCommandListReset(list), "zeCommandListReset");
  check(zeCommandListAppendLaunchKernel(list, add_one, &groups[0], ts.events[1], 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListClose(list), "zeCommandListClose");
  execute(q, list, fence, ts.events);
  print_launch(kernel_name(add_one), groups[0], ts.events[1]);
  print_run(g, t0);
  destroy(ts);
  check(zeFenceDestroy(fence), "zeFenceDestroy");
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeCommandQueueDestroy(q), "zeCommandQueueDestroy");
  check(zeKernelDestroy(scale), "zeKernelDestroy");
  check(zeKernelDestroy(add_one), "zeKernelDestroy");
  return 0;
}

// Four threads, each with its own queue (even threads) or immediate list (odd ones), launching
// five kernels with their own timestamp events, all at once: twenty launches, of 256 × (thread
// + 1) groups, long enough (tens of microseconds each) for the threads' work to meet.
int threads(const Gpu& g) {
  const std::uint64_t t0 = device_now(g);
  void* x = alloc_shared(g, 1 << 16);
  std::vector<std::thread> workers;
  std::latch start(4);
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&g, &start, x, t] {
      ze_kernel_handle_t k = make_kernel(g, t % 2 == 0 ? "scale" : "add_one", x);
      Timestamps ts = timestamp_events(g, 5);
      const bool immediate = t % 2 == 1;
      ze_command_queue_handle_t q =
          immediate ? nullptr : make_queue(g, ZE_COMMAND_QUEUE_MODE_DEFAULT);
      ze_command_list_handle_t list =
          immediate ? immediate_list(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS) : regular_list(g);
      const ze_group_count_t groups{256 * static_cast<std::uint32_t>(t + 1), 1, 1};
      start.arrive_and_wait();
      for (ze_event_handle_t e : ts.events) {
        check(zeCommandListAppendLaunchKernel(list, k, &groups, e, 0, nullptr),
              "zeCommandListAppendLaunchKernel");
      }
      if (!immediate) {
        check(zeCommandListClose(list), "zeCommandListClose");
        check(zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr),
              "zeCommandQueueExecuteCommandLists");
        check(zeCommandQueueSynchronize(q, UINT64_MAX), "zeCommandQueueSynchronize");
      }
      for (ze_event_handle_t e : ts.events) print_launch(kernel_name(k), groups, e);
      destroy(ts);
      check(zeCommandListDestroy(list), "zeCommandListDestroy");
      if (q != nullptr) check(zeCommandQueueDestroy(q), "zeCommandQueueDestroy");
      check(zeKernelDestroy(k), "zeKernelDestroy");
    });
  }
  for (std::thread& w : workers) w.join();
  print_run(g, t0);
  return 0;
}

// Without events: a synchronous immediate list, then a regular list on a synchronous queue.
int no_events(const Gpu& g) {
  void* x = alloc_shared(g, 1 << 16);
  ze_kernel_handle_t k = make_kernel(g, "add_one", x);
  const ze_group_count_t groups{5, 1, 1};
  ze_command_list_handle_t sync_list = immediate_list(g, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  check(zeCommandListAppendLaunchKernel(sync_list, k, &groups, nullptr, 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  print_launch("add_one", groups, nullptr);
  ze_command_queue_handle_t q = make_queue(g, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  ze_command_list_handle_t list = regular_list(g);
  check(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListClose(list), "zeCommandListClose");
  check(zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr),
        "zeCommandQueueExecuteCommandLists");
  print_launch(kernel_name(k), groups, nullptr);
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeCommandListDestroy(sync_list), "zeCommandListDestroy");
  check(zeCommandQueueDestroy(q), "zeCommandQueueDestroy");
  check(zeKernelDestroy(k), "zeKernelDestroy");
  return 0;
}

// Events from a pool without kernel timestamps, as launches' signal events: on an immediate
// list (held until the host signals the event it waits on) and in a regular list executed
// twice. Each must say complete exactly when its kernel is.
int plain_events(const Gpu& g) {
  void* x = alloc_shared(g, 1 << 16);
  ze_kernel_handle_t k = make_kernel(g, "scale", x);
  ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                          ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 3};
  ze_event_pool_handle_t pool = nullptr;
  check(zeEventPoolCreate(g.context, &pd, 0, nullptr, &pool), "zeEventPoolCreate");
  ze_event_handle_t e[3] = {};
  for (std::uint32_t i = 0; i < 3; ++i) {
    ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, ZE_EVENT_SCOPE_FLAG_HOST,
                       ZE_EVENT_SCOPE_FLAG_HOST};
    check(zeEventCreate(pool, &ed, &e[i]), "zeEventCreate");
  }
  const ze_group_count_t groups{32, 1, 1};
  ze_command_list_handle_t imm = immediate_list(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  check(zeCommandListAppendLaunchKernel(imm, k, &groups, e[0], 1, &e[1]),
        "zeCommandListAppendLaunchKernel");
  bool ok = zeEventQueryStatus(e[0]) == ZE_RESULT_NOT_READY;
  check(zeEventHostSignal(e[1]), "zeEventHostSignal");
  check(zeEventHostSynchronize(e[0], UINT64_MAX), "zeEventHostSynchronize");
  print_launch("scale", groups, nullptr);
  ze_command_queue_handle_t q = make_queue(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  ze_command_list_handle_t list = regular_list(g);
  check(zeCommandListAppendLaunchKernel(list, k, &groups, e[2], 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListClose(list), "zeCommandListClose");
  for (int run = 0; run < 2; ++run) {
    check(zeEventHostReset(e[2]), "zeEventHostReset");
    ok = ok && zeEventQueryStatus(e[2]) == ZE_RESULT_NOT_READY;
    check(zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr),
          "zeCommandQueueExecuteCommandLists");
    check(zeEventHostSynchronize(e[2], UINT64_MAX), "zeEventHostSynchronize");
    print_launch("scale", groups, nullptr);
  }
  check(zeCommandQueueSynchronize(q, UINT64_MAX), "zeCommandQueueSynchronize");
  std::printf("check plain-event-status %s\n", ok ? "ok" : "FAILED");
  for (ze_event_handle_t ev : e) check(zeEventDestroy(ev), "zeEventDestroy");
  check(zeEventPoolDestroy(pool), "zeEventPoolDestroy");
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeCommandListDestroy(imm), "zeCommandListDestroy");
  check(zeCommandQueueDestroy(q), "zeCommandQueueDestroy");
  check(zeKernelDestroy(k), "zeKernelDestroy");
  check(zeMemFree(g.context, x), "zeMemFree");
  return 0;
}

// A regular list of two kernels on a queue of its own: the second waits on `gate`, which the
// host signals only after the execution call returned. Whether the queue was still held then.
bool held_regular_list(const Gpu& g, ze_kernel_handle_t k, void* x, ze_event_handle_t gate) {
  ze_command_queue_handle_t q = make_queue(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  ze_command_list_handle_t list = regular_list(g);
  ze_kernel_handle_t add = make_kernel(g, "add_one", x);
  const ze_group_count_t groups{64, 1, 1};
  check(zeEventHostReset(gate), "zeEventHostReset");
  check(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListAppendLaunchKernel(list, add, &groups, nullptr, 1, &gate),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListClose(list), "zeCommandListClose");
  check(zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr),
        "zeCommandQueueExecuteCommandLists");
  const bool held = zeCommandQueueSynchronize(q, 1000) == ZE_RESULT_NOT_READY;
  check(zeEventHostSignal(gate), "zeEventHostSignal");
  check(zeCommandQueueSynchronize(q, UINT64_MAX), "zeCommandQueueSynchronize");
  print_launch("scale", groups, nullptr);
  print_launch("add_one", groups, nullptr, true);
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeCommandQueueDestroy(q), "zeCommandQueueDestroy");
  check(zeKernelDestroy(add), "zeKernelDestroy");
  return held;
}

// A barrier between two kernels, then a kernel held until the host signals the event it waits
// on, and one behind it in the list: neither may start before that. Then the same on a regular
// list (held_regular_list).
int barriers(const Gpu& g) {
  const std::uint64_t t0 = device_now(g);
  void* x = alloc_shared(g, 1 << 16);
  ze_kernel_handle_t k = make_kernel(g, "scale", x);
  ze_command_list_handle_t list = immediate_list(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  Timestamps ts = timestamp_events(g, 4);
  const ze_group_count_t groups{64, 1, 1};
  check(zeCommandListAppendLaunchKernel(list, k, &groups, ts.events[0], 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListAppendBarrier(list, ts.events[1], 0, nullptr), "zeCommandListAppendBarrier");
  check(zeCommandListAppendLaunchKernel(list, k, &groups, ts.events[2], 1, &ts.events[1]),
        "zeCommandListAppendLaunchKernel");
  print_launch("scale", groups, ts.events[0]);
  print_launch("scale", groups, ts.events[2]);
  // The held launch, and one behind it in the list that waits on nothing but the list.
  ze_event_handle_t gate = ts.events[3], held = ts.events[0], behind = ts.events[2];
  check(zeEventHostReset(held), "zeEventHostReset");
  check(zeEventHostReset(behind), "zeEventHostReset");
  check(zeCommandListAppendLaunchKernel(list, k, &groups, held, 1, &gate),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListAppendLaunchKernel(list, k, &groups, behind, 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  const bool waited = zeEventQueryStatus(held) == ZE_RESULT_NOT_READY &&
                      zeEventHostSynchronize(held, 1000) == ZE_RESULT_NOT_READY;
  const std::uint64_t before_signal = device_now(g);
  check(zeEventHostSignal(gate), "zeEventHostSignal");
  print_launch("scale", groups, held, true);
  print_launch("scale", groups, behind, true);
  ze_kernel_timestamp_result_t r{}, rb{};
  check(zeEventQueryKernelTimestamp(held, &r), "zeEventQueryKernelTimestamp");
  check(zeEventQueryKernelTimestamp(behind, &rb), "zeEventQueryKernelTimestamp");
  std::printf("check held-until-signalled %s\n", waited && r.global.kernelStart >= before_signal &&
                                                         rb.global.kernelStart >= r.global.kernelEnd
                                                     ? "ok"
                                                     : "FAILED");
  std::printf("check regular-held-until-signalled %s\n",
              held_regular_list(g, k, x, gate) ? "ok" : "FAILED");
  print_run(g, t0);
  destroy(ts);
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeKernelDestroy(k), "zeKernelDestroy");
  return 0;
}

// Kernels of 20 ms (modelled: 840,000 groups of 32 are 20,000 waves), two on an immediate list,
// the second behind the first, and one on a regular list: far longer than the slices a waiting
// layer waits in.
int long_kernels(const Gpu& g) {
  void* x = alloc_shared(g, 1 << 16);
  ze_kernel_handle_t k = make_kernel(g, "add_one", x);
  ze_command_list_handle_t list = immediate_list(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  Timestamps ts = timestamp_events(g, 3);
  const ze_group_count_t groups{840000, 1, 1};
  for (int i = 0; i < 2; ++i) {
    check(zeCommandListAppendLaunchKernel(list, k, &groups, ts.events[i], 0, nullptr),
          "zeCommandListAppendLaunchKernel");
  }
  for (int i = 0; i < 2; ++i) print_launch("add_one", groups, ts.events[i]);
  ze_command_queue_handle_t q = make_queue(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  ze_command_list_handle_t regular = regular_list(g);
  check(zeCommandListAppendLaunchKernel(regular, k, &groups, ts.events[2], 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListClose(regular), "zeCommandListClose");
  check(zeCommandQueueExecuteCommandLists(q, 1, &regular, nullptr),
        "zeCommandQueueExecuteCommandLists");
  check(zeCommandQueueSynchronize(q, UINT64_MAX), "zeCommandQueueSynchronize");
  print_launch("add_one", groups, ts.events[2]);
  destroy(ts);
  check(zeCommandListDestroy(regular), "zeCommandListDestroy");
  check(zeCommandQueueDestroy(q), "zeCommandQueueDestroy");
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeKernelDestroy(k), "zeKernelDestroy");
  check(zeMemFree(g.context, x), "zeMemFree");
  return 0;
}

// Kernels and a module created and destroyed mid-run: a regular list recorded with a kernel
// runs it after the kernel is gone, with the name it had.
int churn(const Gpu& g) {
  void* x = alloc_shared(g, 1 << 16);
  ze_command_queue_handle_t q = make_queue(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  ze_command_list_handle_t list = regular_list(g);
  const ze_group_count_t groups{1, 1, 1};
  ze_kernel_handle_t k = make_kernel(g, "fixed_group", x);
  check(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListClose(list), "zeCommandListClose");
  check(zeKernelDestroy(k), "zeKernelDestroy");
  for (int i = 0; i < 3; ++i) {
    ze_kernel_handle_t fresh = make_kernel(g, i % 2 == 0 ? "add_one" : "scale", x);
    ze_command_list_handle_t now = immediate_list(g, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    check(zeCommandListAppendLaunchKernel(now, fresh, &groups, nullptr, 0, nullptr),
          "zeCommandListAppendLaunchKernel");
    print_launch(kernel_name(fresh), groups, nullptr);
    check(zeCommandListDestroy(now), "zeCommandListDestroy");
    check(zeKernelDestroy(fresh), "zeKernelDestroy");
  }
  check(zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr),
        "zeCommandQueueExecuteCommandLists");
  check(zeCommandQueueSynchronize(q, UINT64_MAX), "zeCommandQueueSynchronize");
  print_launch("fixed_group", groups, nullptr);
  check(zeModuleDestroy(g.module), "zeModuleDestroy");
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeCommandQueueDestroy(q), "zeCommandQueueDestroy");
  return 0;
}

// Launch calls other than zeCommandListAppendLaunchKernel: cooperative, indirect and
// multiple-indirect. A copy in the list just before them writes the indirect group counts and
// kernel count (zero until then: read too early, they are wrong), on an immediate list and in a
// regular list executed twice with other counts. The multiple-indirect launch names three
// kernels and runs as many as its count says. With `held` (launch-kinds-held), the copy waits
// for an event the host signals only after the launch calls and the execution returned, as a
// kernel computing the counts would finish later: only a layer that waits for nothing (sampled
// attribution) can run it; one that drains would wait for the host for ever.
struct IndirectArgs {
  ze_group_count_t one;      // LaunchKernelIndirect's
  ze_group_count_t many[3];  // LaunchMultipleKernelsIndirect's, one per kernel
  std::uint32_t count;       // how many of its kernels run
};

void print_call(const char* call, const std::string& name, const ze_group_count_t& groups) {
  std::lock_guard lock(print_mu);
  std::printf("launch %s groups=%u,%u,%u call=%s\n", name.c_str(), groups.groupCountX,
              groups.groupCountY, groups.groupCountZ, call);
}

// Appends the copy of `src` into `args`, a barrier, and the three kinds of launch.
void append_launch_kinds(ze_command_list_handle_t list, ze_kernel_handle_t* kernels,
                         IndirectArgs* args, const IndirectArgs* src,
                         const ze_group_count_t& cooperative, ze_event_handle_t* events,
                         ze_event_handle_t hold) {
  auto event = [&](int i) { return events != nullptr ? events[i] : nullptr; };
  check(zeCommandListAppendLaunchCooperativeKernel(list, kernels[0], &cooperative, event(0), 0,
                                                   nullptr),
        "zeCommandListAppendLaunchCooperativeKernel");
  check(zeCommandListAppendMemoryCopy(list, args, src, sizeof *args, nullptr, hold ? 1 : 0,
                                      hold ? &hold : nullptr),
        "zeCommandListAppendMemoryCopy");
  check(zeCommandListAppendBarrier(list, nullptr, 0, nullptr), "zeCommandListAppendBarrier");
  check(zeCommandListAppendLaunchKernelIndirect(list, kernels[1], &args->one, event(1), 0, nullptr),
        "zeCommandListAppendLaunchKernelIndirect");
  check(zeCommandListAppendLaunchMultipleKernelsIndirect(list, 3, kernels, &args->count, args->many,
                                                         event(2), 0, nullptr),
        "zeCommandListAppendLaunchMultipleKernelsIndirect");
}

void print_launch_kinds(const IndirectArgs& src, const ze_group_count_t& cooperative) {
  print_call("cooperative", "scale", cooperative);
  print_call("indirect", "add_one", src.one);
  const char* names[] = {"scale", "add_one", "scale"};
  std::string joined;
  for (std::uint32_t i = 0; i < src.count; ++i)
    joined += (i > 0 ? "+" : "") + std::string(names[i]);
  print_call("multiple-indirect", joined, src.many[0]);
}

int launch_kinds(const Gpu& g, bool held) {
  void* x = alloc_shared(g, 1 << 16);
  ze_kernel_handle_t kernels[3] = {make_kernel(g, "scale", x), make_kernel(g, "add_one", x),
                                   nullptr};
  kernels[2] = kernels[0];
  auto* args = static_cast<IndirectArgs*>(alloc_shared(g, sizeof(IndirectArgs)));
  auto* src = static_cast<IndirectArgs*>(alloc_shared(g, sizeof(IndirectArgs)));
  *args = IndirectArgs{};
  *src = IndirectArgs{{6, 1, 1}, {{3, 1, 1}, {5, 1, 1}, {7, 1, 1}}, 2};
  ze_command_list_handle_t imm = immediate_list(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  Timestamps ts = timestamp_events(g, 4);
  ze_event_handle_t hold = held ? ts.events[3] : nullptr;
  append_launch_kinds(imm, kernels, args, src, {4, 1, 1}, ts.events.data(), hold);
  if (hold != nullptr) check(zeEventHostSignal(hold), "zeEventHostSignal");
  check(zeEventHostSynchronize(ts.events[2], UINT64_MAX), "zeEventHostSynchronize");
  print_launch_kinds(*src, {4, 1, 1});
  ze_command_queue_handle_t q = make_queue(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  ze_command_list_handle_t list = regular_list(g);
  append_launch_kinds(list, kernels, args, src, {2, 1, 1}, nullptr, hold);
  check(zeCommandListClose(list), "zeCommandListClose");
  for (int run = 0; run < 2; ++run) {
    *args = IndirectArgs{};
    if (hold != nullptr) check(zeEventHostReset(hold), "zeEventHostReset");
    if (run == 1) *src = IndirectArgs{{9, 1, 1}, {{8, 1, 1}, {2, 1, 1}, {4, 1, 1}}, 3};
    check(zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr),
          "zeCommandQueueExecuteCommandLists");
    if (hold != nullptr) check(zeEventHostSignal(hold), "zeEventHostSignal");
    check(zeCommandQueueSynchronize(q, UINT64_MAX), "zeCommandQueueSynchronize");
    print_launch_kinds(*src, {2, 1, 1});
  }
  destroy(ts);
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeCommandListDestroy(imm), "zeCommandListDestroy");
  check(zeCommandQueueDestroy(q), "zeCommandQueueDestroy");
  for (int i = 0; i < 2; ++i) check(zeKernelDestroy(kernels[i]), "zeKernelDestroy");
  for (void* p : {x, static_cast<void*>(args), static_cast<void*>(src)}) {
    check(zeMemFree(g.context, p), "zeMemFree");
  }
  return 0;
}

// OpenCL's first device (PoCL here), with a `tick` kernel: OpenCL beside Level Zero.
struct Cl {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;
  cl_mem buffer = nullptr;
};

void check_cl(cl_int err, const char* what) {
  if (err == CL_SUCCESS) return;
  std::fprintf(stderr, "ze_sim_app: %s failed: %d\n", what, err);
  std::exit(1);
}

Cl open_cl() {
  Cl c;
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  check_cl(clGetPlatformIDs(1, &platform, nullptr), "clGetPlatformIDs");
  check_cl(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
  cl_int err = CL_SUCCESS;
  c.context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  check_cl(err, "clCreateContext");
  c.queue = clCreateCommandQueueWithProperties(c.context, device, nullptr, &err);
  check_cl(err, "clCreateCommandQueueWithProperties");
  const char* src = "__kernel void tick(__global int* a) { a[get_global_id(0)] += 1; }";
  c.program = clCreateProgramWithSource(c.context, 1, &src, nullptr, &err);
  check_cl(err, "clCreateProgramWithSource");
  check_cl(clBuildProgram(c.program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  c.kernel = clCreateKernel(c.program, "tick", &err);
  check_cl(err, "clCreateKernel");
  c.buffer = clCreateBuffer(c.context, CL_MEM_READ_WRITE, 256 * sizeof(int), nullptr, &err);
  check_cl(err, "clCreateBuffer");
  check_cl(clSetKernelArg(c.kernel, 0, sizeof c.buffer, &c.buffer), "clSetKernelArg");
  return c;
}

void close_cl(Cl& c) {
  clReleaseMemObject(c.buffer);
  clReleaseKernel(c.kernel);
  clReleaseProgram(c.program);
  clReleaseCommandQueue(c.queue);
  clReleaseContext(c.context);
}

// OpenCL and Level Zero in turn, each launch finished before the next: tick, scale, tick,
// add_one. OpenCL launches print `cl-launch tick global=N`.
int with_opencl(const Gpu& g) {
  Cl cl = open_cl();
  void* x = alloc_shared(g, 1 << 16);
  ze_command_list_handle_t list = immediate_list(g, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  const char* names[] = {"scale", "add_one"};
  for (std::uint32_t i = 0; i < 2; ++i) {
    const size_t global = 64 * (i + 1);
    check_cl(clEnqueueNDRangeKernel(cl.queue, cl.kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                                    nullptr),
             "clEnqueueNDRangeKernel");
    check_cl(clFinish(cl.queue), "clFinish");
    std::printf("cl-launch tick global=%zu\n", global);
    ze_kernel_handle_t k = make_kernel(g, names[i], x);
    const ze_group_count_t groups{4 * (i + 1), 1, 1};
    check(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr),
          "zeCommandListAppendLaunchKernel");
    print_launch(names[i], groups, nullptr);
    check(zeKernelDestroy(k), "zeKernelDestroy");
  }
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeMemFree(g.context, x), "zeMemFree");
  close_cl(cl);
  return 0;
}

// Two launches on an immediate list of a context of its own, each printed with the process id.
void launch_twice_in_own_context(const Gpu& parent, const char* kernel) {
  Gpu g = parent;
  ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  check(zeContextCreate(g.driver, &cd, &g.context), "zeContextCreate");
  void* x = alloc_shared(g, 1 << 16);
  ze_kernel_handle_t k = make_kernel(g, kernel, x);
  ze_command_list_handle_t list = immediate_list(g, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
  for (std::uint32_t i = 1; i <= 2; ++i) {
    const ze_group_count_t groups{i * 3, 1, 1};
    check(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr),
          "zeCommandListAppendLaunchKernel");
    std::lock_guard lock(print_mu);
    std::printf("launch %s groups=%u,1,1 pid=%d\n", kernel, groups.groupCountX, ::getpid());
  }
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeKernelDestroy(k), "zeKernelDestroy");
  check(zeMemFree(g.context, x), "zeMemFree");
  check(zeContextDestroy(g.context), "zeContextDestroy");
}

// The parent launches twice, forks a child that launches twice in a context of its own (the
// parent's objects are not the child's to use on a real driver), waits for it, and launches
// twice more.
int fork_child(const Gpu& g) {
  launch_twice_in_own_context(g, "scale");
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child < 0) return 1;
  if (child == 0) {
    launch_twice_in_own_context(g, "add_one");
    std::exit(0);  // atexit handlers run: the layer's last rows go out
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "ze_sim_app: the child failed (status %d)\n", status);
    return 1;
  }
  launch_twice_in_own_context(g, "scale");
  return 0;
}

void print_result(const char* call, ze_result_t r) {
  std::printf("result %s 0x%x\n", call, static_cast<unsigned>(r));
}

// A GPU hang (the simulated driver's sim_hang kernel): add_one runs on an immediate list; a
// regular list of add_one, sim_hang and scale is executed, and the program's fence wait answers
// a lost device; add_one's event from before the hang still completes, the hung kernel's does
// not, nor does a launch appended after the loss. Each result is printed; the program exits 0,
// as one that handles the loss would.
int device_lost(const Gpu& g) {
  void* x = alloc_shared(g, 1 << 16);
  ze_kernel_handle_t add_one = make_kernel(g, "add_one", x), scale = make_kernel(g, "scale", x),
                     hang = make_kernel(g, "sim_hang", x);
  ze_command_list_handle_t immediate = immediate_list(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  Timestamps ts = timestamp_events(g, 4);
  const ze_group_count_t groups{4, 1, 1};
  check(zeCommandListAppendLaunchKernel(immediate, add_one, &groups, ts.events[0], 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  print_launch("add_one", groups, ts.events[0]);
  ze_command_queue_handle_t q = make_queue(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  ze_fence_handle_t fence = make_fence(q);
  ze_command_list_handle_t list = regular_list(g);
  check(zeCommandListAppendLaunchKernel(list, add_one, &groups, ts.events[1], 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListAppendLaunchKernel(list, hang, &groups, ts.events[2], 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListAppendLaunchKernel(list, scale, &groups, nullptr, 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListClose(list), "zeCommandListClose");
  check(zeCommandQueueExecuteCommandLists(q, 1, &list, fence), "zeCommandQueueExecuteCommandLists");
  print_result("zeFenceHostSynchronize(hung)", zeFenceHostSynchronize(fence, UINT64_MAX));
  print_launch("add_one", groups, ts.events[1]);
  print_result("zeEventHostSynchronize(hung-kernel)", zeEventHostSynchronize(ts.events[2], 0));
  print_result(
      "zeCommandListAppendLaunchKernel(after-loss)",
      zeCommandListAppendLaunchKernel(immediate, add_one, &groups, ts.events[3], 0, nullptr));
  print_result("zeEventHostSynchronize(after-loss)",
               zeEventHostSynchronize(ts.events[3], UINT64_MAX));
  print_result("zeCommandQueueSynchronize(hung)", zeCommandQueueSynchronize(q, UINT64_MAX));
  check(zeMemFree(g.context, x), "zeMemFree");
  return 0;
}

// Launch calls with null pointers and handles where the layer reads its arguments, on a regular
// list, an immediate one and none.
void misuse_launches(const Gpu& g, ze_kernel_handle_t k, ze_command_list_handle_t list,
                     ze_command_queue_handle_t q) {
  ze_command_list_handle_t imm = immediate_list(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  const ze_group_count_t groups{1, 1, 1};
  const std::uint32_t count = 1;
  for (ze_command_list_handle_t l : {list, imm}) {
    const bool regular = l == list;
    print_result(regular ? "launch(regular,null-groups)" : "launch(immediate,null-groups)",
                 zeCommandListAppendLaunchKernel(l, k, nullptr, nullptr, 0, nullptr));
    print_result(regular ? "launch(regular,null-waits)" : "launch(immediate,null-waits)",
                 zeCommandListAppendLaunchKernel(l, k, &groups, nullptr, 1, nullptr));
    print_result(regular ? "indirect(regular,null-args)" : "indirect(immediate,null-args)",
                 zeCommandListAppendLaunchKernelIndirect(l, k, nullptr, nullptr, 0, nullptr));
    print_result(regular ? "multiple(regular,null-kernels)" : "multiple(immediate,null-kernels)",
                 zeCommandListAppendLaunchMultipleKernelsIndirect(l, 1, nullptr, &count, &groups,
                                                                  nullptr, 0, nullptr));
    print_result(
        regular ? "cooperative(regular,null-kernel)" : "cooperative(immediate,null-kernel)",
        zeCommandListAppendLaunchCooperativeKernel(l, nullptr, &groups, nullptr, 0, nullptr));
  }
  print_result("launch(null-list)",
               zeCommandListAppendLaunchKernel(nullptr, k, &groups, nullptr, 0, nullptr));
  print_result("zeCommandQueueExecuteCommandLists(null-lists)",
               zeCommandQueueExecuteCommandLists(q, 1, nullptr, nullptr));
  ze_command_list_handle_t dead = regular_list(g);
  check(zeCommandListDestroy(dead), "zeCommandListDestroy");
  print_result("zeCommandQueueExecuteCommandLists(destroyed-list)",
               zeCommandQueueExecuteCommandLists(q, 1, &dead, nullptr));
  print_result("zeCommandListReset(null)", zeCommandListReset(nullptr));
  print_result("zeCommandListDestroy(null)", zeCommandListDestroy(nullptr));
  check(zeCommandListDestroy(imm), "zeCommandListDestroy");
}

// Calls on the objects the layer keeps books of (lists, kernels, pools, events, contexts), with
// null pointers and handles.
void misuse_books(const Gpu& g) {
  ze_event_pool_handle_t pool = nullptr;
  print_result("zeEventPoolCreate(null-desc)",
               zeEventPoolCreate(g.context, nullptr, 0, nullptr, &pool));
  ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                          ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 1};
  print_result("zeEventPoolCreate(null-out)",
               zeEventPoolCreate(g.context, &pd, 0, nullptr, nullptr));
  ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, 0, 0};
  ze_event_handle_t e = nullptr;
  print_result("zeEventCreate(null-pool)", zeEventCreate(nullptr, &ed, &e));
  print_result("zeEventPoolDestroy(null)", zeEventPoolDestroy(nullptr));
  print_result("zeEventDestroy(null)", zeEventDestroy(nullptr));
  print_result("zeEventHostReset(null)", zeEventHostReset(nullptr));
  ze_command_list_desc_t ld{};
  ld.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
  print_result("zeCommandListCreate(null-out)",
               zeCommandListCreate(g.context, g.device, &ld, nullptr));
  print_result("zeCommandListCreateImmediate(null-desc)",
               zeCommandListCreateImmediate(g.context, g.device, nullptr, nullptr));
  print_result("zeKernelSetGroupSize(null)", zeKernelSetGroupSize(nullptr, 1, 1, 1));
  print_result("zeKernelDestroy(null)", zeKernelDestroy(nullptr));
  print_result("zeCommandQueueSynchronize(null)", zeCommandQueueSynchronize(nullptr, 0));
  print_result("zeFenceHostSynchronize(null)", zeFenceHostSynchronize(nullptr, 0));
  print_result("zeContextDestroy(null)", zeContextDestroy(nullptr));
}

// Calls with bad handles and arguments; prints each result code (the program must not crash).
int misuse(const Gpu& g) {
  void* x = alloc_shared(g, 64);
  ze_kernel_desc_t kd{};
  kd.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
  kd.pKernelName = "scale";
  ze_kernel_handle_t k = nullptr;
  print_result("zeKernelCreate(null-module)", zeKernelCreate(nullptr, &kd, &k));
  kd.pKernelName = "no_such_kernel";
  print_result("zeKernelCreate(unknown-name)", zeKernelCreate(g.module, &kd, &k));
  ze_kernel_handle_t dead = make_kernel(g, "scale", x);
  check(zeKernelDestroy(dead), "zeKernelDestroy");
  print_result("zeKernelSetGroupSize(destroyed)", zeKernelSetGroupSize(dead, 1, 1, 1));
  ze_kernel_handle_t live = make_kernel(g, "scale", x);
  print_result("zeKernelSetArgumentValue(index)", zeKernelSetArgumentValue(live, 9, 4, x));
  print_result("zeKernelSetArgumentValue(size)", zeKernelSetArgumentValue(live, 1, 2, x));
  print_result("zeKernelSetGroupSize(zero)", zeKernelSetGroupSize(live, 0, 1, 1));
  const ze_group_count_t groups{1, 1, 1};
  ze_command_list_handle_t list = regular_list(g);
  print_result("zeCommandListAppendLaunchKernel(null-kernel)",
               zeCommandListAppendLaunchKernel(list, nullptr, &groups, nullptr, 0, nullptr));
  ze_command_queue_handle_t q = make_queue(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  print_result("zeCommandQueueExecuteCommandLists(open-list)",
               zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr));
  print_result("zeEventHostSynchronize(null)", zeEventHostSynchronize(nullptr, 0));
  const std::uint32_t garbage[8] = {0x07230203, 0x00010000, 0, 10, 0, 0xFFFF0001, 1, 2};
  ze_module_desc_t md{};
  md.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  md.format = ZE_MODULE_FORMAT_IL_SPIRV;
  md.inputSize = sizeof garbage;
  md.pInputModule = reinterpret_cast<const std::uint8_t*>(garbage);
  ze_module_handle_t m = nullptr;
  print_result("zeModuleCreate(malformed)", zeModuleCreate(g.context, g.device, &md, &m, nullptr));
  print_result("zeModuleDestroy(in-use)", zeModuleDestroy(g.module));
  ze_image_desc_t id{};
  id.stype = ZE_STRUCTURE_TYPE_IMAGE_DESC;
  ze_image_handle_t image = nullptr;
  print_result("zeImageCreate(unsupported)", zeImageCreate(g.context, g.device, &id, &image));
  print_result("zeMemFree(foreign)", zeMemFree(g.context, &kd));
  misuse_launches(g, live, list, q);
  misuse_books(g);
  return 0;
}

}  // namespace

// mad_vect4, a catalogue kernel's name, at 4096 work-items (128 groups of 32) beside scale: twice
// on an immediate list, then in a regular list executed twice; six launches.
int catalogue(const Gpu& g) {
  void* x = alloc_shared(g, 4096 * 16);
  ze_kernel_handle_t mad = make_kernel(g, "mad_vect4", x), scale = make_kernel(g, "scale", x);
  const ze_group_count_t groups{128, 1, 1};
  Timestamps ts = timestamp_events(g, 2);
  ze_command_list_handle_t immediate = immediate_list(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  for (ze_kernel_handle_t k : {mad, scale}) {
    check(zeCommandListAppendLaunchKernel(immediate, k, &groups, ts.events[0], 0, nullptr),
          "zeCommandListAppendLaunchKernel");
    print_launch(kernel_name(k), groups, ts.events[0]);
    check(zeEventHostReset(ts.events[0]), "zeEventHostReset");
  }
  ze_command_queue_handle_t q = make_queue(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  ze_fence_handle_t fence = make_fence(q);
  ze_command_list_handle_t list = regular_list(g);
  check(zeCommandListAppendLaunchKernel(list, mad, &groups, ts.events[0], 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListAppendLaunchKernel(list, scale, &groups, ts.events[1], 0, nullptr),
        "zeCommandListAppendLaunchKernel");
  check(zeCommandListClose(list), "zeCommandListClose");
  for (int run = 0; run < 2; ++run) {
    execute(q, list, fence, ts.events);
    print_launch("mad_vect4", groups, ts.events[0]);
    print_launch("scale", groups, ts.events[1]);
  }
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeFenceDestroy(fence), "zeFenceDestroy");
  check(zeCommandQueueDestroy(q), "zeCommandQueueDestroy");
  check(zeCommandListDestroy(immediate), "zeCommandListDestroy");
  destroy(ts);
  for (ze_kernel_handle_t k : {mad, scale}) check(zeKernelDestroy(k), "zeKernelDestroy");
  check(zeMemFree(g.context, x), "zeMemFree");
  return 0;
}

// How many lines of the file `path` hold `what`.
int lines_with(const char* path, const std::string& what) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(what) != std::string::npos;
  return n;
}

// A program that never synchronises and launches slowly: add_one, 60 ms of rest, add_one again.
// Under sampled attribution the first launch's row must not wait for the program's exit (a row
// older than the counter timeline's history could no longer be attributed): the program waits,
// up to 10 s, for it in the file $ZE_SIM_APP_ROWS before it ends, and says whether it came.
int unsynced(const Gpu& g) {
  void* x = alloc_shared(g, 1 << 16);
  ze_kernel_handle_t k = make_kernel(g, "add_one", x);
  ze_command_list_handle_t list = immediate_list(g, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
  const ze_group_count_t groups{3, 1, 1};
  for (int i = 0; i < 2; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(60));
    check(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr),
          "zeCommandListAppendLaunchKernel");
    print_launch("add_one", groups, nullptr);
  }
  const char* rows = std::getenv("ZE_SIM_APP_ROWS");
  bool seen = false;
  for (int waited_ms = 0; rows != nullptr && !seen && waited_ms < 10'000; waited_ms += 10) {
    seen = lines_with(rows, "add_one") >= 1;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::printf("check row-before-sync %s\n", seen ? "ok" : "FAILED");
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeKernelDestroy(k), "zeKernelDestroy");
  check(zeMemFree(g.context, x), "zeMemFree");
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ze_sim_app SCENARIO MODULE.spv\n");
    return 2;
  }
  const std::string scenario = argv[1];
  const Gpu g = open_gpu(argv[2]);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (scenario == "immediate") return immediate(g);
  if (scenario == "regular") return regular(g);
  if (scenario == "threads") return threads(g);
  if (scenario == "no-events") return no_events(g);
  if (scenario == "barriers") return barriers(g);
  if (scenario == "churn") return churn(g);
  if (scenario == "long") return long_kernels(g);
  if (scenario == "plain-events") return plain_events(g);
  if (scenario == "misuse") return misuse(g);
  if (scenario == "launch-kinds") return launch_kinds(g, false);
  if (scenario == "launch-kinds-held") return launch_kinds(g, true);
  if (scenario == "fork") return fork_child(g);
  if (scenario == "with-opencl") return with_opencl(g);
  if (scenario == "catalogue") return catalogue(g);
  if (scenario == "device-lost") return device_lost(g);
  if (scenario == "unsynced") return unsynced(g);
  std::fprintf(stderr, "ze_sim_app: unknown scenario '%s'\n", scenario.c_str());
  return 2;
}
