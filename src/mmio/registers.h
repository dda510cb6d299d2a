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

}  // namespace oaprof::mmio::reg
