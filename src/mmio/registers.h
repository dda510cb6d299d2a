// Register offsets of the Gen8–11 OA unit (reference/hardware.md §2), in one place so that the
// simulator and the real read-out cannot disagree about them.
#pragma once

#include <cstdint>

namespace oaprof::mmio::reg {

inline constexpr std::uint32_t kOaControl = 0x2B00;
inline constexpr std::uint32_t kOaControlEnable = 1u << 0;
inline constexpr std::uint32_t kOaControlSpecificContext = 1u << 1;
inline constexpr int kOaControlSelectShift = 2;
inline constexpr std::uint32_t kOaControlSelectMask = 0x7u << kOaControlSelectShift;

inline constexpr std::uint32_t kOaDebug = 0x2B04;
inline constexpr std::uint32_t kOaStatus = 0x2B08;
inline constexpr std::uint32_t kOaCtxControl = 0x2360;

inline constexpr std::uint32_t kRingTimestamp = 0x2358;
inline constexpr std::uint32_t kRingTimestampUdw = 0x235C;
inline constexpr std::uint32_t kRpStat = 0xA01C;
inline constexpr int kRpStatFreqShift = 23;  // bits 31:23, units of 50/3 MHz

constexpr std::uint32_t a_low(int i) { return 0x2800 + 8 * static_cast<std::uint32_t>(i); }
constexpr std::uint32_t a_high(int i) { return 0x2800 + 8 * static_cast<std::uint32_t>(i) + 4; }
constexpr std::uint32_t a32(int i) { return 0x2900 + 4 * static_cast<std::uint32_t>(i - 32); }
inline constexpr std::uint32_t kGpuTicks = 0x2910;
constexpr std::uint32_t b(int i) { return 0x2920 + 4 * static_cast<std::uint32_t>(i); }
constexpr std::uint32_t c(int i) { return 0x2940 + 4 * static_cast<std::uint32_t>(i); }
inline constexpr std::uint32_t kCounterFirst = 0x2800;
inline constexpr std::uint32_t kCounterLast = 0x295C;

// OA_DEBUG is a masked register: the high half says which low bits a write changes.
inline constexpr std::uint32_t kOaDebugDisableCtxSwitchReports = 1u << 1;
inline constexpr std::uint32_t kOaDebugDisableGoReports = 1u << 2;
inline constexpr std::uint32_t kOaDebugDisableClockRatioReports = 1u << 5;
inline constexpr std::uint32_t kOaDebugIncludeClockRatio = 1u << 6;
constexpr std::uint32_t masked_enable(std::uint32_t bits) { return (bits << 16) | bits; }
constexpr std::uint32_t masked_disable(std::uint32_t bits) { return bits << 16; }
// Applies a masked write to the current low 16 bits, as the hardware does.
constexpr std::uint32_t apply_masked(std::uint32_t current, std::uint32_t write) {
  const std::uint32_t mask = write >> 16;
  return ((current & ~mask) | (write & mask)) & 0xFFFFu;
}

inline constexpr std::uint32_t kOaCtxControlCounterResume = 1u << 0;

inline constexpr std::uint32_t kNoaWrite = 0x9888;
inline constexpr std::uint32_t kGdtChickenBits = 0x9840;

// Flex EU counter configuration; not contiguous, and saved in every context image on Gen8–11.
inline constexpr std::uint32_t kEuPerfCntl[7] = {0xE458, 0xE558, 0xE658, 0xE758,
                                                 0xE45C, 0xE55C, 0xE65C};

// Gen9 forcewake: request registers are masked; each domain acks in its own register.
// The ack offsets come from i915's intel_gt_regs.h (FORCEWAKE_ACK_*_GEN9); hardware.md lists
// only the request registers.
inline constexpr std::uint32_t kForcewakeRender = 0xA278;
inline constexpr std::uint32_t kForcewakeGt = 0xA188;
inline constexpr std::uint32_t kForcewakeMedia = 0xA270;
inline constexpr std::uint32_t kForcewakeAckRender = 0x0D84;
inline constexpr std::uint32_t kForcewakeAckGt = 0x130044;
inline constexpr std::uint32_t kForcewakeAckMedia = 0x0D88;
// The request bit oaprof owns. Bit 0 is i915's; the hardware wakes a domain while any bit is
// set, so taking another bit never clears the kernel's request. UNCONFIRMED: i915 has called
// bit 1 FORCEWAKE_USER and later bit 2; any bit other than 0 works the same for the hardware.
inline constexpr std::uint32_t kForcewakeOaprofBit = 1u << 2;
constexpr bool is_forcewake_request(std::uint32_t offset) {
  return offset == kForcewakeRender || offset == kForcewakeGt || offset == kForcewakeMedia;
}

}  // namespace oaprof::mmio::reg
