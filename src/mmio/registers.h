// Register offsets of the OA unit per generation (reference/hardware.md §2, §9): the Gen8–11 OA
// block, Gen12's global OAG block and Xe-LPG's additions, the frequency and forcewake registers,
// in one place so that the simulator and the real read-outs cannot disagree about them.
#pragma once

#include <cstdint>
#include <string_view>

#include "oa/platform.h"

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

// Gen12 (Xe-LP: TGL, RKL, ADL, RPL, DG1) and Xe-LPG (MTL, ARL): the global OA unit moved to
// "OAG". Sources:
//  [OAREGS12] linux drivers/gpu/drm/i915/i915_perf_oa_regs.h @ torvalds/linux
//             2ef6d3bf426218440b156d392cf95e830990e0e4: GEN12_OAG_OACONTROL 0xDAF4 (format bits
//             from 2, enable bit 0), GEN12_OAG_OA_DEBUG 0xDAF8 (bits 1, 2, 5, 6 as Gen9's),
//             GEN12_OAG_OASTATUS 0xDAFC (0 report lost, 1 buffer overflow, 2 counter overflow),
//             GEN12_OAG_OAHEADPTR 0xDB00, _OATAILPTR 0xDB04, _OABUFFER 0xDB08,
//             GEN12_OAG_OAGLBCTXCTRL 0x2B28 (timer exponent bits 7:2, timer enable bit 1, counter
//             resume bit 0), GEN12_OAG_OASTARTTRIG1-8 0xD900-0xD91C, _OAREPORTTRIG1-8
//             0xD920-0xD93C, _CEC0_0-CEC7_1 0xD940-0xD97C, _SCEC0_0-SCEC7_1 0xDC00-0xDC3C,
//             _SPCTR_CNF 0xDC40, GEN12_OAA_DBG_REG 0xDC44, GEN12_OAG_OA_PESS 0x2B2C,
//             GEN12_OA_TLB_INV_CR 0xCEEC, the per-context unit GEN12_OAR_OACONTROL 0x2960 and
//             GEN12_OAR_OASTATUS 0x2968, GEN12_OACTXCONTROL 0x2360; RPM_CONFIG1 0x0D04 with
//             GEN10_GT_NOA_ENABLE bit 9 from gt/intel_gt_regs.h @ torvalds/linux
//             002c6ca75289a4ac4f6738213dd2d258704886e4.
//  [GTREGS]   linux drivers/gpu/drm/i915/gt/intel_gt_regs.h @ Kingxukai/linux
//             0291023e7330da28f2f7453c87c2ab7082d8360f (a mainline mirror): GEN12_SQCNT1 0x8718,
//             PMON_ENABLE bit 30, OABPC bit 29; GEN12_RPSTAT1 0x1381B4 with GEN12_CAGF_MASK
//             bits 19:11; MTL_MIRROR_TARGET_WP1 0xC60 with MTL_CAGF_MASK bits 8:0;
//             FORCEWAKE_ACK_GT_MTL 0xDFC; MTL_MEDIA_GSI_BASE 0x380000.
//  [MREGS]    mesa src/intel/perf/intel_perf_regs.h (GFX12_OAG_PERF_*): A0-A31 at 0xD980 + 8i
//             (high dword + 4), A32-A35 at 0xDA80 + 4i, GPU_TICKS 0xDA90, B0-B7 0xDA94 + 4i,
//             C0-C7 0xDAB4 + 4i, and on Xe-HPG/Xe-LPG (verx10 125) A36 at 0xDB20, A37 at 0xDB28;
//             the copy read is the one find_string returns for "#define GFX12_OAG_PERF_A" (the
//             same text as alexvorxx/zink-xlib-termux 0a6fe638f3623fd1feaf26a9c1b3eefc9cf09e26,
//             a Mesa fork). Mesa reads B/C (and A36/A37) with MI_STORE_REGISTER_MEM on Gen12
//             (src/intel/perf/intel_perf.c intel_perf_init_query_fields @ bminor/mesa-mesa
//             03fc7d6a6d769be666435e04ec01778b56576170).
inline constexpr std::uint32_t kOagOaControl = 0xDAF4;
inline constexpr std::uint32_t kOagOaDebug = 0xDAF8;
inline constexpr std::uint32_t kOagOaStatus = 0xDAFC;
inline constexpr std::uint32_t kOagOaHeadPtr = 0xDB00;
inline constexpr std::uint32_t kOagOaTailPtr = 0xDB04;
inline constexpr std::uint32_t kOagOaBuffer = 0xDB08;
inline constexpr std::uint32_t kOagGlobalCtxControl = 0x2B28;  // GEN12_OAG_OAGLBCTXCTRL
inline constexpr std::uint32_t kOagStartTrigFirst = 0xD900;
inline constexpr std::uint32_t kOagReportTrigFirst = 0xD920;
inline constexpr std::uint32_t kOagCecFirst = 0xD940;
inline constexpr std::uint32_t kOagScecFirst = 0xDC00;
inline constexpr std::uint32_t kOagSpctrCnf = 0xDC40;
inline constexpr std::uint32_t kOaaDbgReg = 0xDC44;
inline constexpr std::uint32_t kOagOaPess = 0x2B2C;
inline constexpr std::uint32_t kOaTlbInvCr = 0xCEEC;
// The per-context OAR unit behind MI_REPORT_PERF_COUNT on Gen12+: configured in the context
// image by i915 only (gen12_configure_oar_context); oaprof never writes these.
inline constexpr std::uint32_t kOarOaControl = 0x2960;
inline constexpr std::uint32_t kOarOaStatus = 0x2968;
inline constexpr std::uint32_t kSqCnt1 = 0x8718;  // GEN12_SQCNT1
inline constexpr std::uint32_t kSqCnt1PmonEnable = 1u << 30;
inline constexpr std::uint32_t kSqCnt1OaBpc = 1u << 29;  // where HAS_OA_BPC_REPORTING (Xe-LPG)
inline constexpr std::uint32_t kRpmConfig1 = 0x0D04;
inline constexpr std::uint32_t kGtNoaEnable = 1u << 9;    // GEN10_GT_NOA_ENABLE
inline constexpr std::uint32_t kMediaGsiBase = 0x380000;  // Xe-LPG's media GT (OAM, VISACTL)

// One OA unit's register block: where the control, debug, status and timer registers and the
// counters sit. Gen8–11 and Gen12/Xe-LPG differ in every offset.
struct OaRegisterBlock {
  std::string_view name;
  std::uint32_t oa_control;
  std::uint32_t oa_debug;
  std::uint32_t oa_status;
  // Gen8–11 OACTXCONTROL (in every context image); Gen12 OAG_OAGLBCTXCTRL (global). Same fields.
  std::uint32_t ctx_control;
  bool ctx_control_context_saved;
  std::uint32_t a_base;    // A0's low dword; A<i> low at a_base + 8i, high at + 4 (i < 32)
  std::uint32_t a32_base;  // A32..A35 at a32_base + 4(i - 32)
  std::uint32_t gpu_ticks;
  std::uint32_t b_base;   // B<i> at b_base + 4i
  std::uint32_t c_base;   // C<i> at c_base + 4i
  std::uint32_t a36 = 0;  // Xe-LPG's A36 and A37; 0 where the block has none
  std::uint32_t a37 = 0;

  constexpr std::uint32_t a_low(int i) const { return a_base + 8 * static_cast<std::uint32_t>(i); }
  constexpr std::uint32_t a_high(int i) const { return a_low(i) + 4; }
  constexpr std::uint32_t b(int i) const { return b_base + 4 * static_cast<std::uint32_t>(i); }
  constexpr std::uint32_t c(int i) const { return c_base + 4 * static_cast<std::uint32_t>(i); }
  // The 32-bit register of A<i> for i >= 32 (A32..A35, and A36/A37 where present); 0 if none.
  constexpr std::uint32_t a_upper(int i) const {
    if (i >= 32 && i < 36) return a32_base + 4 * static_cast<std::uint32_t>(i - 32);
    if (i == 36) return a36;
    if (i == 37) return a37;
    return 0;
  }
};

inline constexpr OaRegisterBlock kOaBlockGen8{"OA (Gen8-11)", 0x2B00, 0x2B04, 0x2B08, 0x2360, true,
                                              0x2800,         0x2900, 0x2910, 0x2920, 0x2940};
inline constexpr OaRegisterBlock kOaBlockGen12{
    "OAG (Gen12)", kOagOaControl, kOagOaDebug, kOagOaStatus, kOagGlobalCtxControl, false, 0xD980,
    0xDA80,        0xDA90,        0xDA94,      0xDAB4};
inline constexpr OaRegisterBlock kOaBlockXeLpg{
    "OAG (Xe-LPG)", kOagOaControl, kOagOaDebug, kOagOaStatus, kOagGlobalCtxControl,
    false,          0xD980,        0xDA80,      0xDA90,       0xDA94,
    0xDAB4,         0xDB20,        0xDB28};

// The block of the generation's global OA unit (Gen7.5's is not modelled: it has Gen8's block for
// the lookups that never program it).
constexpr const OaRegisterBlock& oa_block(oa::Generation gen) {
  switch (gen) {
    case oa::Generation::kGen12:
      return kOaBlockGen12;
    case oa::Generation::kXeHpg:  // the same block: A36/A37 are verx10 125's (above)
    case oa::Generation::kXeLpg:
      return kOaBlockXeLpg;
    default:
      return kOaBlockGen8;
  }
}

// The GPU's current (actual) frequency: a 9-bit ratio in units of 50/3 MHz, read by i915's
// __read_cagf()/intel_rps_get_cagf() and converted by intel_gpu_freq() (GRAPHICS_VER >= 9:
// val * GT_FREQUENCY_MULTIPLIER 50 / GEN9_FREQ_SCALER 3). Source: linux
// drivers/gpu/drm/i915/gt/intel_rps.c @ torvalds/linux 007232f685e622b9c8813809222aea2f2610760f;
// registers and masks as [GTREGS] above and (Gen9) GEN6_RPSTAT1 0xA01C, GEN9_CAGF_MASK 31:23.
struct FrequencyRegister {
  std::uint32_t offset;
  int shift;
  std::uint32_t mask;  // after the shift
};
inline constexpr FrequencyRegister kFreqGen9{0xA01C, 23, 0x1FF};
inline constexpr FrequencyRegister kFreqGen12{0x1381B4, 11, 0x1FF};  // GEN12_RPSTAT1
inline constexpr FrequencyRegister kFreqXeLpg{0x0C60, 0, 0x1FF};     // MTL_MIRROR_TARGET_WP1
// nullopt where oaprof reads no current frequency (Gen7.5, Gen8).
constexpr const FrequencyRegister* frequency_register(oa::Generation gen) {
  switch (gen) {
    case oa::Generation::kGen9:
    case oa::Generation::kGen11:
      return &kFreqGen9;
    case oa::Generation::kGen12:
    case oa::Generation::kXeHpg:  // intel_rps.c takes MTL's register only from 12.70
      return &kFreqGen12;
    case oa::Generation::kXeLpg:
      return &kFreqXeLpg;
    default:
      return nullptr;
  }
}

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
inline constexpr std::uint32_t kForcewakeMt = 0xA188;        // FORCEWAKE_MT (HSW, BDW)
inline constexpr std::uint32_t kForcewakeAckHsw = 0x130044;  // FORCEWAKE_ACK_HSW
inline constexpr std::uint32_t kForcewakeVlv = 0x1300B0;     // FORCEWAKE_VLV (CHV render)
inline constexpr std::uint32_t kForcewakeAckVlv = 0x1300B4;
inline constexpr std::uint32_t kForcewakeMediaVlv = 0x1300B8;  // FORCEWAKE_MEDIA_VLV
inline constexpr std::uint32_t kForcewakeAckMediaVlv = 0x1300BC;
inline constexpr std::uint32_t kForcewakeRender = 0xA278;  // FORCEWAKE_RENDER_GEN9 (Gen9+)
inline constexpr std::uint32_t kForcewakeAckRender = 0x0D84;
inline constexpr std::uint32_t kForcewakeGt = 0xA188;  // FORCEWAKE_GT_GEN9 ("blitter")
inline constexpr std::uint32_t kForcewakeAckGt = 0x130044;
inline constexpr std::uint32_t kForcewakeAckGtMtl = 0x0DFC;  // FORCEWAKE_ACK_GT_MTL (Xe-LPG)
inline constexpr std::uint32_t kForcewakeMedia = 0xA270;     // FORCEWAKE_MEDIA_GEN9 (Gen9 only)
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

// Xe-LPG's primary GT: GT (request 0xA188, ack moved to FORCEWAKE_ACK_GT_MTL) and render; its
// video engines live on the media GT behind MTL_MEDIA_GSI_BASE, beyond what oaprof touches
// (intel_uncore.c intel_uncore_fw_domains_init(): GRAPHICS_VER_FULL >= 12.70 takes
// FORCEWAKE_ACK_GT_MTL @ torvalds/linux 002c6ca75289a4ac4f6738213dd2d258704886e4).
inline constexpr ForcewakeDomain kForcewakeDomainsXeLpg[] = {
    {"GT", kForcewakeGt, kForcewakeAckGtMtl}, {"render", kForcewakeRender, kForcewakeAckRender}};

// The domains oaprof holds: those of the OA registers, by i915's forcewake range tables
// (intel_uncore.c __gen6_fw_ranges, __chv_fw_ranges, __gen9_fw_ranges, __gen11_fw_ranges,
// __gen12_fw_ranges). HSW/BDW: their one render domain covers everything. CHV: 0x2000–0x3FFF and
// 0xE000–0xE7FF are render, 0x9000–0xAFFF (NOA, 0x9888) render and media: both its domains.
// Gen9–12 (below): OACONTROL, the counters, the boolean registers and NOA are GT
// (0x2700–0x2FFF, 0x9800–0xAFFF, Gen12's OAG at 0xD900–0xDBFF), OACTXCONTROL, 0x20CC and the
// flex/chicken registers at 0xE180–0xE7FF render; no OA register is in a media or video-engine
// domain. Xe-LPG (__mtl_fw_ranges, same commit): 0x2700-0x2FFF, 0x9800-0xCFFF and
// 0xD880-0xDBFF (OAG) GT, 0xDC00-0xDCFF (SCEC) and 0xDE80-0xE8FF (flex) render,
// 0xC00-0xFFF (MTL_MIRROR_TARGET_WP1, RPM_CONFIG0/1) none: its GT and render domains.
inline constexpr ForcewakeDomain kOaForcewakeGen9[] = {
    {"render", kForcewakeRender, kForcewakeAckRender}, {"GT", kForcewakeGt, kForcewakeAckGt}};

// The request bit oaprof owns. Bit 0 is i915's (FORCEWAKE_KERNEL), bit 15 its fallback toggle;
// the hardware wakes a domain while any bit is set, so taking another bit never clears the
// kernel's request. i915 names bit 1 FORCEWAKE_USER; oaprof keeps to bit 2.
inline constexpr std::uint32_t kForcewakeOaprofBit = 1u << 2;
// Any request register oaprof writes on some generation (the journal restores these by clearing
// only its bit).
constexpr bool is_forcewake_request(std::uint32_t offset) {
  return offset == kForcewakeRender || offset == kForcewakeGt || offset == kForcewakeMedia ||
         offset == kForcewakeVlv || offset == kForcewakeMediaVlv;  // Xe-LPG: the same requests
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
// Registers whose high half is a write mask: restoring one means writing its saved low half with
// a full mask, since a plain write (high half 0) changes nothing. The register journal knows a
// write only by its offset, so this is every register oaprof writes that i915 writes masked, each
// checked against i915 (i915_perf.c and intel_uncore.c @ torvalds/linux
// 002c6ca75289a4ac4f6738213dd2d258704886e4; offsets i915_perf_oa_regs.h @ [OAREGS12]):
//  - GEN8_OA_DEBUG 0x2B04 (Gen9-11): gen8_enable_metric_set writes
//    _MASKED_BIT_ENABLE(GEN9_OA_DEBUG_DISABLE_CLK_RATIO_REPORTS | GEN9_OA_DEBUG_INCLUDE_CLK_RATIO);
//  - GEN12_OAG_OA_DEBUG 0xDAF8 (Gen12, Xe-LPG): gen12_enable_metric_set writes
//    _MASKED_BIT_ENABLE(GEN12_OAG_OA_DEBUG_DISABLE_CLK_RATIO_REPORTS | ..._INCLUDE_CLK_RATIO) |
//    oag_report_ctx_switches(), a _MASKED_FIELD of DISABLE_CTX_SWITCH_REPORTS;
//  - HALF_SLICE_CHICKEN2 and WAIT_FOR_RC6_EXIT (mux): mask_reg_value, above;
//  - the forcewake requests: intel_uncore.c fw_set()/fw_clear(), _MASKED_BIT_ENABLE/_DISABLE.
// Each OA_DEBUG is masked by offset on every generation: oaprof writes each only on the
// generations whose OA_DEBUG it is (oa_block), so no other generation's write is read as masked.
// Every other register oaprof writes, i915 writes plain (docs/hardware-access.md, "Masked
// registers", lists each with its i915 source line).
constexpr bool is_masked_register(std::uint32_t offset) {
  return offset == kOaDebug || offset == kOagOaDebug || is_forcewake_request(offset) ||
         is_masked_config_register(offset);
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
inline constexpr int kRpmConfig0CrystalShift = 3;                    // Gen9: 1 bit; Gen11+: 3 bits
inline constexpr std::uint32_t kRpmConfig0CtcShiftMask = 0x3u << 1;  // Gen10+
inline constexpr std::uint32_t kCtcMode = 0xA26C;
inline constexpr std::uint32_t kCtcSourceDivideLogic = 1u << 0;
inline constexpr std::uint32_t kCtcShiftMask = 0x3u << 1;
inline constexpr std::uint32_t kTimestampOverride = 0x44074;
inline constexpr std::uint32_t kTimestampOverrideDividerMask = 0x3FF;  // bits 9:0
inline constexpr int kTimestampOverrideDenominatorShift = 12;          // bits 15:12

}  // namespace oaprof::mmio::reg
