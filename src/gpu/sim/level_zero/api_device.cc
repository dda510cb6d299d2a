// The driver, device, context and USM entry points of the simulated driver.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "gpu/sim/level_zero/entry_points.h"
#include "oa/platform.h"

namespace oaprof::gpu::level_zero_sim {
namespace {

constexpr std::uint64_t kMaxAllocationBytes = std::uint64_t{4} << 30;
constexpr std::uint64_t kMemoryBytes = std::uint64_t{16} << 30;
constexpr std::uint32_t kDriverVersion = 1;

// The name every output that shows the device carries: "oaprof simulated ...".
std::string device_name() {
  const oa::Platform& p = oa::simulated_platform();
  return fmt::format("oaprof simulated Intel GPU ({} {}, {} EUs)", p.codename, oa::gt_label(p),
                     p.eus);
}

ze_result_t init(ze_init_flags_t flags) {
  // A GPU driver: a program that asks for VPUs only finds none here.
  if (flags == ZE_INIT_FLAG_VPU_ONLY) return ZE_RESULT_ERROR_UNINITIALIZED;
  State& s = State::get();
  std::lock_guard lock(s.mu);
  s.initialised = true;
  return ZE_RESULT_SUCCESS;
}

ze_result_t driver_get(std::uint32_t* count, ze_driver_handle_t* drivers) {
  return locked([&](State& s, auto&) {
    const auto handle = reinterpret_cast<ze_driver_handle_t>(s.driver);
    return list_out(count, drivers, &handle, 1);
  });
}

ze_result_t driver_api_version(ze_driver_handle_t h, ze_api_version_t* version) {
  return with<Driver>(h, [&](State&, Driver*) {
    if (version == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *version = ZE_API_VERSION_1_4;  // the spec of the headers it is built with
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t driver_properties(ze_driver_handle_t h, ze_driver_properties_t* p) {
  return with<Driver>(h, [&](State&, Driver*) {
    if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    std::memset(p->uuid.id, 0, sizeof p->uuid.id);
    std::memcpy(p->uuid.id, "oaprof-sim-ze", 13);
    p->driverVersion = kDriverVersion;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t driver_ipc_properties(ze_driver_handle_t h, ze_driver_ipc_properties_t* p) {
  return with<Driver>(h, [&](State&, Driver*) {
    if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->flags = 0;  // no IPC: memory and events stay in the process
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t driver_extensions(ze_driver_handle_t h, std::uint32_t* count,
                              ze_driver_extension_properties_t*) {
  return with<Driver>(h, [&](State&, Driver*) {
    if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *count = 0;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t driver_extension_function(ze_driver_handle_t h, const char* name, void** fn) {
  return with<Driver>(h, [&](State&, Driver*) {
    if (name == nullptr || fn == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // it has no extensions
  });
}

ze_result_t device_get(ze_driver_handle_t h, std::uint32_t* count, ze_device_handle_t* devices) {
  return with<Driver>(h, [&](State& s, Driver*) {
    const auto handle = reinterpret_cast<ze_device_handle_t>(s.device);
    return list_out(count, devices, &handle, 1);
  });
}

ze_result_t device_sub_devices(ze_device_handle_t h, std::uint32_t* count, ze_device_handle_t*) {
  return with<Device>(h, [&](State&, Device*) {
    if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *count = 0;
    return ZE_RESULT_SUCCESS;
  });
}

void describe_device(ze_device_properties_t& p) {
  const oa::Platform& platform = oa::simulated_platform();
  p.type = ZE_DEVICE_TYPE_GPU;
  p.vendorId = 0x8086;
  p.deviceId = oa::kSimulatedPciId;  // the PCI id SimGpu presents
  p.flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
  p.subdeviceId = 0;
  p.coreClockRate = static_cast<std::uint32_t>(platform.max_freq_mhz);
  p.maxMemAllocSize = kMaxAllocationBytes;
  p.maxHardwareContexts = 64;
  p.maxCommandQueuePriority = 0;
  p.numThreadsPerEU = static_cast<std::uint32_t>(platform.threads_per_eu);
  p.physicalEUSimdWidth = 8;
  p.numSlices = static_cast<std::uint32_t>(platform.slices);
  p.numSubslicesPerSlice = static_cast<std::uint32_t>(platform.subslices / platform.slices);
  p.numEUsPerSubslice = static_cast<std::uint32_t>(platform.eus / platform.subslices);
  // Nanoseconds a tick for the 1.0 structure, ticks a second for the 1.2 one (ze_api.h).
  p.timerResolution = p.stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? kTimerHz : kNsPerTick;
  p.timestampValidBits = kGlobalTimestampBits;
  p.kernelTimestampValidBits = kKernelTimestampBits;
  std::memset(p.uuid.id, 0, sizeof p.uuid.id);
  std::memcpy(p.uuid.id, "oaprof-sim-gpu", 14);
  const std::string name = device_name();
  std::memset(p.name, 0, sizeof p.name);
  std::memcpy(p.name, name.data(), std::min(name.size(), sizeof p.name - 1));
}

ze_result_t device_properties(ze_device_handle_t h, ze_device_properties_t* p) {
  return with<Device>(h, [&](State&, Device*) {
    if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    describe_device(*p);
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t device_compute(ze_device_handle_t h, ze_device_compute_properties_t* p) {
  return with<Device>(h, [&](State&, Device*) {
    if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->maxTotalGroupSize = kMaxGroupSize;
    p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = kMaxGroupSize;
    p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = UINT32_MAX;
    p->maxSharedLocalMemory = 64 * 1024;
    p->numSubGroupSizes = 3;
    p->subGroupSizes[0] = 8;
    p->subGroupSizes[1] = 16;
    p->subGroupSizes[2] = 32;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t device_module(ze_device_handle_t h, ze_device_module_properties_t* p) {
  return with<Device>(h, [&](State&, Device*) {
    if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->spirvVersionSupported = ZE_MAKE_VERSION(1, 4);
    p->flags = ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS |
               (oa::simulated_platform().has_fp64 ? ZE_DEVICE_MODULE_FLAG_FP64 : 0);
    const ze_device_fp_flags_t fp = ZE_DEVICE_FP_FLAG_DENORM | ZE_DEVICE_FP_FLAG_INF_NAN |
                                    ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_FMA;
    p->fp16flags = p->fp32flags = fp;
    p->fp64flags = oa::simulated_platform().has_fp64 ? fp : 0;
    p->maxArgumentsSize = 2048;
    p->printfBufferSize = 4u << 20;
    std::memset(p->nativeKernelSupported.id, 0, sizeof p->nativeKernelSupported.id);
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t device_queue_groups(ze_device_handle_t h, std::uint32_t* count,
                                ze_command_queue_group_properties_t* groups) {
  return with<Device>(h, [&](State&, Device*) {
    return one_property(count, groups, [](ze_command_queue_group_properties_t& g) {
      // One engine that runs kernels and copies.
      g.flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
                ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY |
                ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS;
      g.maxMemoryFillPatternSize = 128;
      g.numQueues = 1;
    });
  });
}

ze_result_t device_memory(ze_device_handle_t h, std::uint32_t* count,
                          ze_device_memory_properties_t* p) {
  return with<Device>(h, [&](State&, Device*) {
    return one_property(count, p, [](ze_device_memory_properties_t& m) {
      m.flags = 0;
      m.maxClockRate = 0;
      m.maxBusWidth = 64;
      m.totalSize = kMemoryBytes;
      std::memset(m.name, 0, sizeof m.name);
      std::memcpy(m.name, "oaprof simulated memory", 23);
    });
  });
}

ze_result_t device_memory_access(ze_device_handle_t h, ze_device_memory_access_properties_t* p) {
  return with<Device>(h, [&](State&, Device*) {
    if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const ze_memory_access_cap_flags_t all =
        ZE_MEMORY_ACCESS_CAP_FLAG_RW | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC |
        ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT | ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
    p->hostAllocCapabilities = p->deviceAllocCapabilities = all;
    p->sharedSingleDeviceAllocCapabilities = p->sharedCrossDeviceAllocCapabilities = all;
    p->sharedSystemAllocCapabilities = 0;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t device_cache(ze_device_handle_t h, std::uint32_t* count,
                         ze_device_cache_properties_t* p) {
  return with<Device>(h, [&](State&, Device*) {
    return one_property(count, p, [](ze_device_cache_properties_t& c) {
      c.flags = 0;
      c.cacheSize = 768 * 1024;
    });
  });
}

ze_result_t device_image(ze_device_handle_t h, ze_device_image_properties_t* p) {
  return with<Device>(h, [&](State&, Device*) {
    if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    // No images: every limit 0, as the spec says a device without image support reports.
    p->maxImageDims1D = p->maxImageDims2D = p->maxImageDims3D = 0;
    p->maxImageBufferSize = 0;
    p->maxImageArraySlices = p->maxSamplers = p->maxReadImageArgs = p->maxWriteImageArgs = 0;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t device_external_memory(ze_device_handle_t h,
                                   ze_device_external_memory_properties_t* p) {
  return with<Device>(h, [&](State&, Device*) {
    if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->memoryAllocationImportTypes = p->memoryAllocationExportTypes = 0;
    p->imageImportTypes = p->imageExportTypes = 0;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t device_p2p(ze_device_handle_t h, ze_device_handle_t peer,
                       ze_device_p2p_properties_t* p) {
  return locked([&](State& s, auto&) {
    Device *d = nullptr, *other = nullptr;
    OAPROF_ZE_FIND(s, h, d);
    OAPROF_ZE_FIND(s, peer, other);
    if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->flags = 0;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t device_can_access_peer(ze_device_handle_t h, ze_device_handle_t peer,
                                   ze_bool_t* value) {
  return locked([&](State& s, auto&) {
    Device *d = nullptr, *other = nullptr;
    OAPROF_ZE_FIND(s, h, d);
    OAPROF_ZE_FIND(s, peer, other);
    if (value == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *value = d == other;  // the one device reaches its own memory
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t device_status(ze_device_handle_t h) {
  return with<Device>(h, [&](State&, Device*) { return ZE_RESULT_SUCCESS; });
}

ze_result_t device_global_timestamps(ze_device_handle_t h, std::uint64_t* host,
                                     std::uint64_t* device) {
  return with<Device>(h, [&](State& s, Device*) {
    if (host == nullptr || device == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const std::uint64_t now = monotonic_ns();
    *host = now;  // CLOCK_MONOTONIC, the clock oaprof's host side keeps
    *device = s.ticks(now) & ((std::uint64_t{1} << kGlobalTimestampBits) - 1);
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t context_create(ze_driver_handle_t h, const ze_context_desc_t* desc,
                           ze_context_handle_t* out) {
  return with<Driver>(h, [&](State& s, Driver*) {
    if (desc == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *out = reinterpret_cast<ze_context_handle_t>(s.adopt(std::make_unique<Context>()));
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t context_create_ex(ze_driver_handle_t h, const ze_context_desc_t* desc,
                              std::uint32_t device_count, ze_device_handle_t* devices,
                              ze_context_handle_t* out) {
  for (std::uint32_t i = 0; devices != nullptr && i < device_count; ++i) {
    const ze_result_t r = locked([&](State& s, auto&) {
      Device* d = nullptr;
      OAPROF_ZE_FIND(s, devices[i], d);
      return ZE_RESULT_SUCCESS;
    });
    if (r != ZE_RESULT_SUCCESS) return r;
  }
  return context_create(h, desc, out);
}

ze_result_t context_destroy(ze_context_handle_t h) {
  return with<Context>(h, [&](State& s, Context* c) {
    s.destroy(c);
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t context_status(ze_context_handle_t h) {
  return with<Context>(h, [&](State&, Context*) { return ZE_RESULT_SUCCESS; });
}

// Residency means nothing for plain memory: accepted for a live context and device.
ze_result_t context_residency(ze_context_handle_t h, ze_device_handle_t dev, void* ptr, size_t) {
  return locked([&](State& s, auto&) {
    Context* c = nullptr;
    Device* d = nullptr;
    OAPROF_ZE_FIND(s, h, c);
    OAPROF_ZE_FIND(s, dev, d);
    return ptr == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_POINTER : ZE_RESULT_SUCCESS;
  });
}

ze_result_t allocate(State& s, ze_context_handle_t h, size_t size, size_t alignment,
                     ze_memory_type_t type, void** out) {
  Context* c = nullptr;
  OAPROF_ZE_FIND(s, h, c);
  if (out == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0 || size > kMaxAllocationBytes) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (alignment == 0) alignment = 64;
  if ((alignment & (alignment - 1)) != 0) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  const size_t rounded = (size + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(std::max<size_t>(alignment, sizeof(void*)), rounded);
  if (p == nullptr) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  s.allocations[reinterpret_cast<std::uintptr_t>(p)] = {size, type};
  *out = p;
  return ZE_RESULT_SUCCESS;
}

ze_result_t mem_alloc_shared(ze_context_handle_t h, const ze_device_mem_alloc_desc_t* device_desc,
                             const ze_host_mem_alloc_desc_t* host_desc, size_t size,
                             size_t alignment, ze_device_handle_t, void** out) {
  return locked([&](State& s, auto&) {
    if (device_desc == nullptr || host_desc == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return allocate(s, h, size, alignment, ZE_MEMORY_TYPE_SHARED, out);
  });
}

ze_result_t mem_alloc_device(ze_context_handle_t h, const ze_device_mem_alloc_desc_t* desc,
                             size_t size, size_t alignment, ze_device_handle_t dev, void** out) {
  return with<Device>(dev, [&](State& s, Device*) {
    if (desc == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return allocate(s, h, size, alignment, ZE_MEMORY_TYPE_DEVICE, out);
  });
}

ze_result_t mem_alloc_host(ze_context_handle_t h, const ze_host_mem_alloc_desc_t* desc, size_t size,
                           size_t alignment, void** out) {
  return locked([&](State& s, auto&) {
    if (desc == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return allocate(s, h, size, alignment, ZE_MEMORY_TYPE_HOST, out);
  });
}

ze_result_t mem_free(ze_context_handle_t h, void* ptr) {
  return with<Context>(h, [&](State& s, Context*) {
    if (ptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const auto it = s.allocations.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == s.allocations.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // not ours
    s.allocations.erase(it);
    std::free(ptr);
    return ZE_RESULT_SUCCESS;
  });
}

// The allocation that holds `ptr`, or allocations.end().
auto allocation_of(State& s, const void* ptr) {
  const auto at = reinterpret_cast<std::uintptr_t>(ptr);
  auto it = s.allocations.upper_bound(at);
  if (it == s.allocations.begin()) return s.allocations.end();
  --it;
  return at < it->first + it->second.bytes ? it : s.allocations.end();
}

ze_result_t mem_properties(ze_context_handle_t h, const void* ptr,
                           ze_memory_allocation_properties_t* p, ze_device_handle_t* device) {
  return with<Context>(h, [&](State& s, Context*) {
    if (ptr == nullptr || p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const auto it = allocation_of(s, ptr);
    p->type = it == s.allocations.end() ? ZE_MEMORY_TYPE_UNKNOWN : it->second.type;
    p->id = it == s.allocations.end() ? 0 : it->first;
    p->pageSize = 4096;
    if (device != nullptr) {
      const bool on_device = it != s.allocations.end() && it->second.type != ZE_MEMORY_TYPE_HOST;
      *device = on_device ? reinterpret_cast<ze_device_handle_t>(s.device) : nullptr;
    }
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t mem_address_range(ze_context_handle_t h, const void* ptr, void** base, size_t* size) {
  return with<Context>(h, [&](State& s, Context*) {
    if (ptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const auto it = allocation_of(s, ptr);
    if (it == s.allocations.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (base != nullptr) *base = reinterpret_cast<void*>(it->first);
    if (size != nullptr) *size = it->second.bytes;
    return ZE_RESULT_SUCCESS;
  });
}

}  // namespace

void fill_table(ze_global_dditable_t& t) { t.pfnInit = init; }

void fill_table(ze_driver_dditable_t& t) {
  t.pfnGet = driver_get;
  t.pfnGetApiVersion = driver_api_version;
  t.pfnGetProperties = driver_properties;
  t.pfnGetIpcProperties = driver_ipc_properties;
  t.pfnGetExtensionProperties = driver_extensions;
  t.pfnGetExtensionFunctionAddress = driver_extension_function;
}

void fill_table(ze_device_dditable_t& t) {
  t.pfnGet = device_get;
  t.pfnGetSubDevices = device_sub_devices;
  t.pfnGetProperties = device_properties;
  t.pfnGetComputeProperties = device_compute;
  t.pfnGetModuleProperties = device_module;
  t.pfnGetCommandQueueGroupProperties = device_queue_groups;
  t.pfnGetMemoryProperties = device_memory;
  t.pfnGetMemoryAccessProperties = device_memory_access;
  t.pfnGetCacheProperties = device_cache;
  t.pfnGetImageProperties = device_image;
  t.pfnGetExternalMemoryProperties = device_external_memory;
  t.pfnGetP2PProperties = device_p2p;
  t.pfnCanAccessPeer = device_can_access_peer;
  t.pfnGetStatus = device_status;
  t.pfnGetGlobalTimestamps = device_global_timestamps;
}

void fill_table(ze_context_dditable_t& t) {
  t.pfnCreate = context_create;
  t.pfnCreateEx = context_create_ex;
  t.pfnDestroy = context_destroy;
  t.pfnGetStatus = context_status;
  t.pfnMakeMemoryResident = context_residency;
  t.pfnEvictMemory = context_residency;
}

void fill_table(ze_mem_dditable_t& t) {
  t.pfnAllocShared = mem_alloc_shared;
  t.pfnAllocDevice = mem_alloc_device;
  t.pfnAllocHost = mem_alloc_host;
  t.pfnFree = mem_free;
  t.pfnGetAllocProperties = mem_properties;
  t.pfnGetAddressRange = mem_address_range;
}

}  // namespace oaprof::gpu::level_zero_sim
