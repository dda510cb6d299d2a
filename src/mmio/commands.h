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
// Gen6/7: DW0, address, report id. Gen8+: DW0, address low, address high, report id.
inline constexpr std::uint32_t kMiReportPerfCountGen7 = mi_instr(kOpReportPerfCount, 3 - 2);
inline constexpr std::uint32_t kMiReportPerfCountGen8 = mi_instr(kOpReportPerfCount, 4 - 2);
inline constexpr std::uint32_t kMiStoreRegisterMemGen8 = mi_instr(kOpStoreRegisterMem, 4 - 2);
inline constexpr std::uint32_t kUseGlobalGtt = 1u << 22;  // MI_STORE_REGISTER_MEM DW0
// MI_LOAD_REGISTER_IMM of n (register, value) pairs.
constexpr std::uint32_t mi_load_register_imm(std::uint32_t pairs) {
  return mi_instr(kOpLoadRegisterImm, 2 * pairs - 1);
}
inline constexpr std::uint32_t kReportAlignment = 64;

}  // namespace oaprof::mmio::cmd
