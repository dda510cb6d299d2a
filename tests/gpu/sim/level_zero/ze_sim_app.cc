// A Level Zero program for tests: it runs one scenario (argv[1]) with the SPIR-V module argv[2]
// on the first GPU the loader offers, and prints what it did line by line, so that a test can
// check it under the simulated driver (and, later, under oaprof):
//   launch <name> groups=X,Y,Z size=X,Y,Z [start=T end=T]   one line per kernel execution
//   run device_start=T device_end=T                          the device timer around the run
//   check <what> ok|FAILED                                   copies and fills read back
//   result <call> <code>                                     (misuse) each call's result
// Scenarios: immediate, regular, threads, no-events, barriers, churn, misuse.
#include <level_zero/ze_api.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
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

void print_launch(const std::string& name, const ze_group_count_t& groups,
                  ze_event_handle_t event) {
  std::string window;
  if (event != nullptr) {
    check(zeEventHostSynchronize(event, UINT64_MAX), "zeEventHostSynchronize");
    ze_kernel_timestamp_result_t ts{};
    check(zeEventQueryKernelTimestamp(event, &ts), "zeEventQueryKernelTimestamp");
    window = " start=" + std::to_string(ts.global.kernelStart) +
             " end=" + std::to_string(ts.global.kernelEnd);
  }
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
  std::printf("run device_start=%" PRIu64 " device_end=%" PRIu64 "\n", t0, device_now(g));
  destroy(ts);
  check(zeCommandListDestroy(list), "zeCommandListDestroy");
  check(zeMemFree(g.context, x), "zeMemFree");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ze_sim_app SCENARIO MODULE.spv\n");
    return 2;
  }
  const std::string scenario = argv[1];
  const Gpu g = open_gpu(argv[2]);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (scenario == "immediate") return immediate(g);
  std::fprintf(stderr, "ze_sim_app: unknown scenario '%s'\n", scenario.c_str());
  return 2;
}
