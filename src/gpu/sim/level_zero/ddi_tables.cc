// The simulated driver's face to the loader: the zeGet*, zetGet* and zesGet*ProcAddrTable
// functions it exports (ze_ddi.h, zet_ddi.h, zes_ddi.h). The loader (libze1 1.8.12,
// source/loader/ze_ldrddi.cpp) drops a driver that lacks a core table, and its library refuses
// to initialise without the tools (zet) and sysman (zes) tables, so every table is given: the
// slots the simulator implements (entry_points.h) and, in every other slot, a stub that answers
// ZE_RESULT_ERROR_UNSUPPORTED_FEATURE.
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include <cstring>

#include "gpu/sim/level_zero/entry_points.h"

namespace oaprof::gpu::level_zero_sim {
namespace {

// Every slot of every table is a function pointer returning ze_result_t. The stub takes no
// parameters and is stored in slots whose functions take some: under the System V calling
// conventions (x86-64, AArch64) the caller passes arguments in registers or on its own stack
// and cleans them up, so a callee that reads none returns safely.
ze_result_t unsupported() { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }

template <typename Table>
void refuse_every_slot(Table& table) {
  using Stub = ze_result_t (*)();
  static_assert(sizeof(Table) % sizeof(Stub) == 0, "a DDI table holds only function pointers");
  const Stub stub = &unsupported;
  auto* bytes = reinterpret_cast<unsigned char*>(&table);
  for (std::size_t at = 0; at < sizeof(Table); at += sizeof(Stub)) {
    std::memcpy(bytes + at, &stub, sizeof(Stub));
  }
}

template <typename Table>
ze_result_t give_table(ze_api_version_t version, Table* table) {
  if (table == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // A loader of an older minor version passes smaller tables than these headers describe.
  if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT) ||
      ZE_MINOR_VERSION(version) < ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT)) {
    return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
  }
  refuse_every_slot(*table);
  if constexpr (requires { fill_table(*table); }) fill_table(*table);
  return ZE_RESULT_SUCCESS;
}

}  // namespace
}  // namespace oaprof::gpu::level_zero_sim

// One exported function per table, as the loader looks them up by name.
#define OAPROF_ZE_TABLE(getter, table_type)                                       \
  extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version, \
                                                        table_type* table) {      \
    return oaprof::gpu::level_zero_sim::give_table(version, table);               \
  }

OAPROF_ZE_TABLE(zeGetGlobalProcAddrTable, ze_global_dditable_t)
OAPROF_ZE_TABLE(zeGetDriverProcAddrTable, ze_driver_dditable_t)
OAPROF_ZE_TABLE(zeGetDeviceProcAddrTable, ze_device_dditable_t)
OAPROF_ZE_TABLE(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)
OAPROF_ZE_TABLE(zeGetContextProcAddrTable, ze_context_dditable_t)
OAPROF_ZE_TABLE(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t)
OAPROF_ZE_TABLE(zeGetCommandListProcAddrTable, ze_command_list_dditable_t)
OAPROF_ZE_TABLE(zeGetImageProcAddrTable, ze_image_dditable_t)
OAPROF_ZE_TABLE(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)
OAPROF_ZE_TABLE(zeGetFenceProcAddrTable, ze_fence_dditable_t)
OAPROF_ZE_TABLE(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t)
OAPROF_ZE_TABLE(zeGetEventProcAddrTable, ze_event_dditable_t)
OAPROF_ZE_TABLE(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)
OAPROF_ZE_TABLE(zeGetModuleProcAddrTable, ze_module_dditable_t)
OAPROF_ZE_TABLE(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t)
OAPROF_ZE_TABLE(zeGetKernelProcAddrTable, ze_kernel_dditable_t)
OAPROF_ZE_TABLE(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)
OAPROF_ZE_TABLE(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
OAPROF_ZE_TABLE(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
OAPROF_ZE_TABLE(zeGetMemProcAddrTable, ze_mem_dditable_t)
OAPROF_ZE_TABLE(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
OAPROF_ZE_TABLE(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)
OAPROF_ZE_TABLE(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)

OAPROF_ZE_TABLE(zetGetDeviceProcAddrTable, zet_device_dditable_t)
OAPROF_ZE_TABLE(zetGetContextProcAddrTable, zet_context_dditable_t)
OAPROF_ZE_TABLE(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
OAPROF_ZE_TABLE(zetGetModuleProcAddrTable, zet_module_dditable_t)
OAPROF_ZE_TABLE(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
OAPROF_ZE_TABLE(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
OAPROF_ZE_TABLE(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)
OAPROF_ZE_TABLE(zetGetMetricProcAddrTable, zet_metric_dditable_t)
OAPROF_ZE_TABLE(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
OAPROF_ZE_TABLE(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
OAPROF_ZE_TABLE(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
OAPROF_ZE_TABLE(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)
OAPROF_ZE_TABLE(zetGetDebugProcAddrTable, zet_debug_dditable_t)

OAPROF_ZE_TABLE(zesGetDriverProcAddrTable, zes_driver_dditable_t)
OAPROF_ZE_TABLE(zesGetDeviceProcAddrTable, zes_device_dditable_t)
OAPROF_ZE_TABLE(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
OAPROF_ZE_TABLE(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
OAPROF_ZE_TABLE(zesGetPowerProcAddrTable, zes_power_dditable_t)
OAPROF_ZE_TABLE(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
OAPROF_ZE_TABLE(zesGetEngineProcAddrTable, zes_engine_dditable_t)
OAPROF_ZE_TABLE(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
OAPROF_ZE_TABLE(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
OAPROF_ZE_TABLE(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
OAPROF_ZE_TABLE(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
OAPROF_ZE_TABLE(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
OAPROF_ZE_TABLE(zesGetPsuProcAddrTable, zes_psu_dditable_t)
OAPROF_ZE_TABLE(zesGetFanProcAddrTable, zes_fan_dditable_t)
OAPROF_ZE_TABLE(zesGetLedProcAddrTable, zes_led_dditable_t)
OAPROF_ZE_TABLE(zesGetRasProcAddrTable, zes_ras_dditable_t)
OAPROF_ZE_TABLE(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
