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

// Forcewake. Each power domain has a masked request register and an ack register whose bits
// follow the request's; the domains differ per generation. Offsets: linux
// drivers/gpu/drm/i915/gt/intel_gt_regs.h; which domains each generation has:
// intel_uncore.c intel_uncore_fw_domains_init(); both @ torvalds/linux
// 002c6ca75289a4ac4f6738213dd2d258704886e4 (docs/hardware-access.md, "Device facts").
struct ForcewakeDomain {
  const char* name;
  std::uint32_t request;
  std::uint32_t ack;
};
inline constexpr std::uint32_t kForcewakeMt = 0xA188;         // FORCEWAKE_MT (HSW, BDW)
inline constexpr std::uint32_t kForcewakeAckHsw = 0x130044;   // FORCEWAKE_ACK_HSW
inline constexpr std::uint32_t kForcewakeVlv = 0x1300B0;      // FORCEWAKE_VLV (CHV render)
inline constexpr std::uint32_t kForcewakeAckVlv = 0x1300B4;
inline constexpr std::uint32_t kForcewakeMediaVlv = 0x1300B8;  // FORCEWAKE_MEDIA_VLV
inline constexpr std::uint32_t kForcewakeAckMediaVlv = 0x1300BC;
inline constexpr std::uint32_t kForcewakeRender = 0xA278;     // FORCEWAKE_RENDER_GEN9 (Gen9+)
inline constexpr std::uint32_t kForcewakeAckRender = 0x0D84;
inline constexpr std::uint32_t kForcewakeGt = 0xA188;         // FORCEWAKE_GT_GEN9 ("blitter")
inline constexpr std::uint32_t kForcewakeAckGt = 0x130044;
inline constexpr std::uint32_t kForcewakeMedia = 0xA270;      // FORCEWAKE_MEDIA_GEN9 (Gen9 only)
inline constexpr std::uint32_t kForcewakeAckMedia = 0x0D88;
// Gen11+: one domain per video engine instead of one media domain.
constexpr std::uint32_t forcewake_vdbox(int n) {
  return 0xA540 + 4 * static_cast<std::uint32_t>(n);
}
constexpr std::uint32_t forcewake_ack_vdbox(int n) {
  return 0x0D50 + 4 * static_cast<std::uint32_t>(n);
}
constexpr std::uint32_t forcewake_vebox(int n) {
  return 0xA560 + 4 * static_cast<std::uint32_t>(n);
}
constexpr std::uint32_t forcewake_ack_vebox(int n) {
  return 0x0D70 + 4 * static_cast<std::uint32_t>(n);
}

// Every domain i915 initialises per generation (what the simulator acks). Gen11/12 list the
// first VDBOX and VEBOX only: i915 adds one per video engine the part has, and fused-off
// engines have no power well, so nothing may wait for their acks.
inline constexpr ForcewakeDomain kForcewakeDomainsHswBdw[] = {
    {"render", kForcewakeMt, kForcewakeAckHsw}};
inline constexpr ForcewakeDomain kForcewakeDomainsChv[] = {
    {"render", kForcewakeVlv, kForcewakeAckVlv},
    {"media", kForcewakeMediaVlv, kForcewakeAckMediaVlv}};
inline constexpr ForcewakeDomain kForcewakeDomainsGen9[] = {
    {"render", kForcewakeRender, kForcewakeAckRender},
    {"GT", kForcewakeGt, kForcewakeAckGt},
    {"media", kForcewakeMedia, kForcewakeAckMedia}};
inline constexpr ForcewakeDomain kForcewakeDomainsGen11[] = {
    {"GT", kForcewakeGt, kForcewakeAckGt},
    {"render", kForcewakeRender, kForcewakeAckRender},
    {"VDBOX0", forcewake_vdbox(0), forcewake_ack_vdbox(0)},
    {"VEBOX0", forcewake_vebox(0), forcewake_ack_vebox(0)}};

// The domains oaprof holds: those of the OA registers, by i915's forcewake range tables
// (intel_uncore.c __gen6_fw_ranges, __chv_fw_ranges, __gen9_fw_ranges, __gen11_fw_ranges,
// __gen12_fw_ranges). HSW/BDW: their one render domain covers everything. CHV: 0x2000–0x3FFF and
// 0xE000–0xE7FF are render, 0x9000–0xAFFF (NOA, 0x9888) render and media: both its domains.
// Gen9–12 (below): OACONTROL, the counters, the boolean registers and NOA are GT
// (0x2700–0x2FFF, 0x9800–0xAFFF, Gen12's OAG at 0xD900–0xDBFF), OACTXCONTROL, 0x20CC and the
// flex/chicken registers at 0xE180–0xE7FF render; no OA register is in a media or video-engine
// domain.
inline constexpr ForcewakeDomain kOaForcewakeGen9[] = {
    {"render", kForcewakeRender, kForcewakeAckRender},
    {"GT", kForcewakeGt, kForcewakeAckGt}};

// The request bit oaprof owns. Bit 0 is i915's (FORCEWAKE_KERNEL), bit 15 its fallback toggle;
// the hardware wakes a domain while any bit is set, so taking another bit never clears the
// kernel's request. i915 names bit 1 FORCEWAKE_USER; oaprof keeps to bit 2.
inline constexpr std::uint32_t kForcewakeOaprofBit = 1u << 2;
// Any request register oaprof writes on some generation (the journal restores these by clearing
// only its bit).
constexpr bool is_forcewake_request(std::uint32_t offset) {
  return offset == kForcewakeRender || offset == kForcewakeGt || offset == kForcewakeMedia ||
         offset == kForcewakeVlv || offset == kForcewakeMediaVlv;
}

// Masked registers among the mux registers a metric configuration may write. i915 strips its own
// workaround bit from the user's value (i915_perf.c mask_reg_value):
// WaDisableSTUnitPowerOptimization (GEN8_ST_PO_DISABLE, bit 13) in HALF_SLICE_CHICKEN2 and
// HSW_WAIT_FOR_RC6_EXIT_ENABLE (bit 0) in WAIT_FOR_RC6_EXIT. Offsets and bits: intel_gt_regs.h
// @ torvalds/linux 002c6ca75289a4ac4f6738213dd2d258704886e4; i915_perf.c @ the same commit.
inline constexpr std::uint32_t kHalfSliceChicken2 = 0xE180;
inline constexpr std::uint32_t kStPoDisable = 1u << 13;
inline constexpr std::uint32_t kWaitForRc6Exit = 0x20CC;
inline constexpr std::uint32_t kWaitForRc6ExitEnable = 1u << 0;
constexpr bool is_masked_config_register(std::uint32_t offset) {
  return offset == kHalfSliceChicken2 || offset == kWaitForRc6Exit;
}
// The masked write i915 makes for a user's value: the workaround bit and its mask bit cleared.
constexpr std::uint32_t strip_workaround_bits(std::uint32_t offset, std::uint32_t value) {
  if (offset == kHalfSliceChicken2) return value & ~masked_enable(kStPoDisable);
  if (offset == kWaitForRc6Exit) return value & ~masked_enable(kWaitForRc6ExitEnable);
  return value;
}

// Timestamp clock (linux gt/intel_gt_clock_utils.c read_clock_frequency(); fields in
// gt/intel_gt_regs.h, both @ torvalds/linux 002c6ca75289a4ac4f6738213dd2d258704886e4 resp.
// 0d6419e9c855dea476300e2bb81d29105fe76d38; TIMESTAMP_OVERRIDE's fields: xe regs/xe_regs.h @
// 0d0534750f9d4575abf0da3b41a78e5643e6c8dd).
inline constexpr std::uint32_t kRpmConfig0 = 0x0D00;
inline constexpr int kRpmConfig0CrystalShift = 3;        // Gen9: 1 bit; Gen11+: 3 bits
inline constexpr std::uint32_t kRpmConfig0CtcShiftMask = 0x3u << 1;  // Gen10+
inline constexpr std::uint32_t kCtcMode = 0xA26C;
inline constexpr std::uint32_t kCtcSourceDivideLogic = 1u << 0;
inline constexpr std::uint32_t kCtcShiftMask = 0x3u << 1;
inline constexpr std::uint32_t kTimestampOverride = 0x44074;
inline constexpr std::uint32_t kTimestampOverrideDividerMask = 0x3FF;       // bits 9:0
inline constexpr int kTimestampOverrideDenominatorShift = 12;               // bits 15:12

}  // namespace oaprof::mmio::reg
