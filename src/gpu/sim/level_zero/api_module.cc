// The module, build log and kernel entry points of the simulated driver: modules are SPIR-V,
// read (never compiled) by spirv_module.h; a kernel keeps the state a launch records.
#include <algorithm>
#include <cstring>
#include <span>

#include "gpu/sim/level_zero/entry_points.h"

namespace oaprof::gpu::level_zero_sim {
namespace {

ze_result_t write_build_log(State& s, ze_module_build_log_handle_t* out, std::string text) {
  if (out == nullptr) return ZE_RESULT_SUCCESS;
  auto log = std::make_unique<BuildLog>();
  log->text = std::move(text);
  *out = reinterpret_cast<ze_module_build_log_handle_t>(s.adopt(std::move(log)));
  return ZE_RESULT_SUCCESS;
}

ze_result_t module_create(ze_context_handle_t hc, ze_device_handle_t hd,
                          const ze_module_desc_t* desc, ze_module_handle_t* out,
                          ze_module_build_log_handle_t* log) {
  return locked([&](State& s, auto&) {
    Context* c = nullptr;
    Device* d = nullptr;
    OAPROF_ZE_FIND(s, hc, c);
    OAPROF_ZE_FIND(s, hd, d);
    if (desc == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->format == ZE_MODULE_FORMAT_NATIVE) {
      write_build_log(s, log, "the simulated driver reads SPIR-V only, no native binary");
      return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->pInputModule == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->inputSize == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    SpirvError error;
    auto spirv = read_spirv_module({desc->pInputModule, desc->inputSize}, error);
    if (!spirv) {
      write_build_log(s, log, error.message);
      return error.kind == SpirvError::Kind::kMalformed ? ZE_RESULT_ERROR_INVALID_NATIVE_BINARY
                                                        : ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    auto module = std::make_unique<Module>();
    module->spirv = std::move(*spirv);
    *out = reinterpret_cast<ze_module_handle_t>(s.adopt(std::move(module)));
    return write_build_log(s, log, "");
  });
}

ze_result_t module_destroy(ze_module_handle_t h) {
  return with<Module>(h, [&](State& s, Module* m) {
    // Its kernels point into it.
    if (m->kernels_alive > 0) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    s.destroy(m);
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t module_kernel_names(ze_module_handle_t h, std::uint32_t* count, const char** names) {
  return with<Module>(h, [&](State&, Module* m) {
    std::vector<const char*> all;
    for (const SpirvKernel& k : m->spirv.kernels) all.push_back(k.name.c_str());
    return list_out(count, names, all.data(), static_cast<std::uint32_t>(all.size()));
  });
}

ze_result_t module_properties(ze_module_handle_t h, ze_module_properties_t* p) {
  return with<Module>(h, [&](State&, Module*) {
    if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->flags = 0;  // no imports: nothing to link
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t build_log_destroy(ze_module_build_log_handle_t h) {
  return with<BuildLog>(h, [&](State& s, BuildLog* l) {
    s.destroy(l);
    return ZE_RESULT_SUCCESS;
  });
}

// The size-then-string protocol of zeModuleBuildLogGetString and zeKernelGetName.
ze_result_t string_out(const std::string& text, size_t* size, char* out) {
  if (size == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (out == nullptr) {
    *size = text.size() + 1;
    return ZE_RESULT_SUCCESS;
  }
  if (*size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  const size_t n = std::min(*size - 1, text.size());
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  *size = n + 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t build_log_string(ze_module_build_log_handle_t h, size_t* size, char* out) {
  return with<BuildLog>(h, [&](State&, BuildLog* l) { return string_out(l->text, size, out); });
}

ze_result_t kernel_create(ze_module_handle_t h, const ze_kernel_desc_t* desc,
                          ze_kernel_handle_t* out) {
  return with<Module>(h, [&](State& s, Module* m) {
    if (desc == nullptr || desc->pKernelName == nullptr || out == nullptr) {
      return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    const auto& kernels = m->spirv.kernels;
    const auto it = std::find_if(kernels.begin(), kernels.end(),
                                 [&](const SpirvKernel& k) { return k.name == desc->pKernelName; });
    if (it == kernels.end()) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    auto kernel = std::make_unique<Kernel>();
    kernel->module = m;
    kernel->spirv = &*it;
    kernel->argument_set.assign(it->parameters.size(), false);
    if (it->required_group_size) kernel->group_size = *it->required_group_size;
    ++m->kernels_alive;
    *out = reinterpret_cast<ze_kernel_handle_t>(s.adopt(std::move(kernel)));
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t kernel_destroy(ze_kernel_handle_t h) {
  return with<Kernel>(h, [&](State& s, Kernel* k) {
    --k->module->kernels_alive;
    s.destroy(k);
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t kernel_cache_config(ze_kernel_handle_t h, ze_cache_config_flags_t) {
  return with<Kernel>(h, [&](State&, Kernel*) {
    return ZE_RESULT_SUCCESS;  // a hint; nothing to configure in the model
  });
}

ze_result_t kernel_group_size(ze_kernel_handle_t h, std::uint32_t x, std::uint32_t y,
                              std::uint32_t z) {
  return with<Kernel>(h, [&](State&, Kernel* k) {
    const std::array<std::uint32_t, 3> size{x, y, z};
    if (x == 0 || y == 0 || z == 0 || std::uint64_t{x} * y * z > kMaxGroupSize) {
      return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    }
    const auto& required = k->spirv->required_group_size;
    if (required && *required != size) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    k->group_size = size;
    return ZE_RESULT_SUCCESS;
  });
}

// The largest power of two up to `limit` that divides `n` (n > 0).
std::uint32_t dividing_power_of_two(std::uint32_t n, std::uint32_t limit) {
  std::uint32_t p = 1;
  while (p * 2 <= limit && n % (p * 2) == 0) p *= 2;
  return p;
}

ze_result_t kernel_suggest_group_size(ze_kernel_handle_t h, std::uint32_t gx, std::uint32_t gy,
                                      std::uint32_t gz, std::uint32_t* x, std::uint32_t* y,
                                      std::uint32_t* z) {
  return with<Kernel>(h, [&](State&, Kernel* k) {
    if (x == nullptr || y == nullptr || z == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (gx == 0 || gy == 0 || gz == 0) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    std::array<std::uint32_t, 3> size{};
    if (k->spirv->required_group_size) {
      size = *k->spirv->required_group_size;
    } else {
      size[0] = dividing_power_of_two(gx, kMaxGroupSize);
      size[1] = dividing_power_of_two(gy, kMaxGroupSize / size[0]);
      size[2] = dividing_power_of_two(gz, kMaxGroupSize / (size[0] * size[1]));
    }
    *x = size[0];
    *y = size[1];
    *z = size[2];
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t kernel_max_cooperative(ze_kernel_handle_t h, std::uint32_t* count) {
  return with<Kernel>(h, [&](State& s, Kernel*) {
    if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *count = static_cast<std::uint32_t>(s.eus());  // one group an EU
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t kernel_argument(ze_kernel_handle_t h, std::uint32_t index, size_t size,
                            const void* value) {
  return with<Kernel>(h, [&](State&, Kernel* k) {
    const auto& parameters = k->spirv->parameters;
    if (index >= parameters.size()) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    const SpirvKernelParameter& p = parameters[index];
    if (p.local_memory) {
      if (size == 0) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    } else if (p.bytes && *p.bytes != size) {
      return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    } else if (value == nullptr && !(p.bytes == sizeof(void*))) {
      return ZE_RESULT_ERROR_INVALID_NULL_POINTER;  // only a pointer may be given as null
    }
    k->argument_set[index] = true;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t kernel_set_indirect(ze_kernel_handle_t h, ze_kernel_indirect_access_flags_t flags) {
  return with<Kernel>(h, [&](State&, Kernel* k) {
    k->indirect_access = flags;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t kernel_get_indirect(ze_kernel_handle_t h, ze_kernel_indirect_access_flags_t* flags) {
  return with<Kernel>(h, [&](State&, Kernel* k) {
    if (flags == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *flags = k->indirect_access;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t kernel_source_attributes(ze_kernel_handle_t h, std::uint32_t* size, char** text) {
  return with<Kernel>(h, [&](State&, Kernel*) {
    if (size == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    static char empty[] = "";  // no attributes are read from the module
    if (text != nullptr && *size > 0) *text = empty;
    *size = 1;
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t kernel_properties(ze_kernel_handle_t h, ze_kernel_properties_t* p) {
  return with<Kernel>(h, [&](State&, Kernel* k) {
    if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const auto required = k->spirv->required_group_size.value_or(std::array<std::uint32_t, 3>{});
    p->numKernelArgs = static_cast<std::uint32_t>(k->spirv->parameters.size());
    p->requiredGroupSizeX = required[0];
    p->requiredGroupSizeY = required[1];
    p->requiredGroupSizeZ = required[2];
    p->requiredNumSubGroups = p->requiredSubgroupSize = 0;
    p->maxSubgroupSize = 32;
    p->maxNumSubgroups = kMaxGroupSize / 8;
    p->localMemSize = p->privateMemSize = p->spillMemSize = 0;
    std::memset(&p->uuid, 0, sizeof p->uuid);
    return ZE_RESULT_SUCCESS;
  });
}

ze_result_t kernel_name(ze_kernel_handle_t h, size_t* size, char* name) {
  return with<Kernel>(h, [&](State&, Kernel* k) { return string_out(k->spirv->name, size, name); });
}

// A global offset shifts the ids a kernel computes with; the model computes nothing.
ze_result_t kernel_global_offset(ze_kernel_handle_t h, std::uint32_t, std::uint32_t,
                                 std::uint32_t) {
  return with<Kernel>(h, [&](State&, Kernel*) { return ZE_RESULT_SUCCESS; });
}

}  // namespace

void fill_table(ze_module_dditable_t& t) {
  t.pfnCreate = module_create;
  t.pfnDestroy = module_destroy;
  t.pfnGetKernelNames = module_kernel_names;
  t.pfnGetProperties = module_properties;
}

void fill_table(ze_module_build_log_dditable_t& t) {
  t.pfnDestroy = build_log_destroy;
  t.pfnGetString = build_log_string;
}

void fill_table(ze_kernel_dditable_t& t) {
  t.pfnCreate = kernel_create;
  t.pfnDestroy = kernel_destroy;
  t.pfnSetCacheConfig = kernel_cache_config;
  t.pfnSetGroupSize = kernel_group_size;
  t.pfnSuggestGroupSize = kernel_suggest_group_size;
  t.pfnSuggestMaxCooperativeGroupCount = kernel_max_cooperative;
  t.pfnSetArgumentValue = kernel_argument;
  t.pfnSetIndirectAccess = kernel_set_indirect;
  t.pfnGetIndirectAccess = kernel_get_indirect;
  t.pfnGetSourceAttributes = kernel_source_attributes;
  t.pfnGetProperties = kernel_properties;
  t.pfnGetName = kernel_name;
}

void fill_table(ze_kernel_exp_dditable_t& t) { t.pfnSetGlobalOffsetExp = kernel_global_offset; }

}  // namespace oaprof::gpu::level_zero_sim
