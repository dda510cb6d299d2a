// Command-streamer instructions oaprof emits or interprets (reference/hardware.md §4): the rpc
// read-out builds batches from them and SimGpu's batch interpreter executes the same encodings.
#pragma once

#include <cstdint>

namespace oaprof::mmio::cmd {

constexpr std::uint32_t mi_instr(std::uint32_t opcode, std::uint32_t length_field) {
  return (opcode << 23) | length_field;
}
constexpr std::uint32_t opcode_of(std::uint32_t dw0) { return (dw0 >> 23) & 0x3F; }
constexpr bool is_mi(std::uint32_t dw0) { return (dw0 >> 29) == 0; }

inline constexpr std::uint32_t kMiNoop = 0;
inline constexpr std::uint32_t kMiBatchBufferEnd = mi_instr(0x0A, 0);
inline constexpr std::uint32_t kOpLoadRegisterImm = 0x22;
inline constexpr std::uint32_t kOpStoreRegisterMem = 0x24;
inline constexpr std::uint32_t kOpReportPerfCount = 0x28;
inline constexpr std::uint32_t kOpBatchBufferEnd = 0x0A;
inline constexpr std::uint32_t kOpStoreDataImm = 0x20;
// Gen6/7: DW0, address, report id. Gen8+: DW0, address low, address high, report id.
inline constexpr std::uint32_t kMiReportPerfCountGen7 = mi_instr(kOpReportPerfCount, 3 - 2);
inline constexpr std::uint32_t kMiReportPerfCountGen8 = mi_instr(kOpReportPerfCount, 4 - 2);
inline constexpr std::uint32_t kMiStoreRegisterMemGen8 = mi_instr(kOpStoreRegisterMem, 4 - 2);
inline constexpr std::uint32_t kUseGlobalGtt = 1u << 22;  // MI_STORE_REGISTER_MEM DW0
// MI_STORE_DWORD_IMM_GEN4 = MI_INSTR(0x20, 2): DW0, address low, address high, the dword.
// Source: linux drivers/gpu/drm/i915/gt/intel_gpu_commands.h @ Kingxukai/linux
// 0291023e7330da28f2f7453c87c2ab7082d8360f (with MI_STORE_REGISTER_MEM_GEN8 = MI_INSTR(0x24, 2),
// as above); i915_perf.c gen8_store_flex emits it with four dwords.
inline constexpr std::uint32_t kMiStoreDwordImmGen4 = mi_instr(kOpStoreDataImm, 2);
// MI_LOAD_REGISTER_IMM of n (register, value) pairs.
constexpr std::uint32_t mi_load_register_imm(std::uint32_t pairs) {
  return mi_instr(kOpLoadRegisterImm, 2 * pairs - 1);
}
inline constexpr std::uint32_t kReportAlignment = 64;

}  // namespace oaprof::mmio::cmd
