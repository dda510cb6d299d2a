// OA report formats: the counter-select code written to OACONTROL, the byte layout the hardware
// writes, and the i915 uapi number of the same format. The two numberings differ
// (A32u40_A4u32_B8_C8 is select code 5 but uapi 10), so conversions are explicit functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "oa/platform.h"

namespace oaprof::oa {

enum class ReportFormat {
  // Gen8+ (Gen12 OAG too).
  kA12,
  kA12_B8_C8,
  kA32u40_A4u32_B8_C8,
  kC4_B8,
  // Gen7.5 (Haswell) only: every A counter is 32 bits wide and there is no GPU_TICKS field.
  kA13,
  kA29,
  kA13_B8_C8,
  kA29_B8_C8,  // 192 bytes: exists in hardware, but i915 refuses it (no uapi value)
  kB4_C8,
  kA45_B8_C8,
  kB4_C8_A16,
  // C4_B8 as Haswell lays it out (the same select code and uapi number as kC4_B8, its counters
  // packed from byte 12 instead of 16); formats_for(kGen7_5) names it "C4_B8".
  kC4_B8_Hsw,
  // Xe-LPG (MTL, ARL): the OAG format, the per-context OAR format, and the media unit's OAM
  // formats (64-bit report header). Every Xe-LPG report timestamp is shifted (timestamp_shift).
  kA24u40_A14u32_B8_C8,
  kOar_A32u40_A4u32_B8_C8,
  kMpec8u64_B8_C8,
  kMpec8u32_B8_C8,
  // Xe2/Xe3 (LNL, BMG, PTL; only xe streams them): the OAG unit's PEC format, 64 64-bit counters
  // after a 64-bit header, which IGT's files call 576B_PEC64LL; and the media unit's
  // MPEC8u32_B8_C8, laid out as on Xe-LPG but with an unshifted timestamp. The PEC counters are
  // held as A0..A63, so that "PEC n READ" and the A-indexed paths share one model.
  kPec64u64,
  kXe2Mpec8u32_B8_C8,
  // The other Xe2 formats whose layout a public source gives (report_format.cc [MDCALC]):
  // PEC64u64 with the 8 B and 8 C counters after the PECs, the 64 PECs 32 bits wide, and the
  // media unit's MPEC8u64_B8_C8 (unshifted timestamp, as kXe2Mpec8u32_B8_C8).
  kPec64u64_B8_C8,
  kPec64u32,
  kXe2Mpec8u64_B8_C8,
};

// A run of `count` A counters from A<first>, each `bits` wide (32, 40 or 64). Counter i of the
// run has its low 32 bits (all 64 for a 64-bit run) at offset + 4·i (8·i), and for a 40-bit run
// bits 39:32 in the byte at high_offset + i.
struct CounterRun {
  int first;
  int count;
  int bits;
  int offset;
  int high_offset = -1;
};

// Byte layout of one format (reference/hardware.md §3). Offsets are in bytes; -1 means absent.
struct FormatLayout {
  ReportFormat format;
  std::string_view name;
  int select_code;  // OACONTROL bits 4:2 on Gen8+ (the counter-select field on Gen7.5)
  int uapi_value;   // enum drm_i915_oa_format; -1 when i915 has none
  int size_bytes;
  int gpu_ticks_offset;
  std::span<const CounterRun> a_runs;  // every A counter the format holds, in index order
  int b_count;
  int b_offset;
  int c_count;
  int c_offset;
  // 64-bit report header (i915 HDR_64_BIT, the OAM formats): report id qword 0, timestamp
  // qword 1, context id dword 4, GPU_TICKS qword 3. Else dwords 0-3: id, timestamp, context,
  // GPU_TICKS.
  bool header64 = false;
  // The report timestamp counts in units of 2^shift raw ticks: IGT and Mesa shift it right by
  // one on DG2 and Xe-LPG (see report_format.cc), so only 32 - shift bits (64 - shift) count.
  int timestamp_shift = 0;

  int a_begin() const;  // first A index held; 0 when none
  int a_end() const;    // one past the last A index held; 0 when none
  int a_total() const;  // number of A counters held
  int timestamp_offset() const { return header64 ? 8 : 4; }
  int ctx_id_offset() const { return header64 ? 16 : 8; }
  int header_bits() const { return header64 ? 64 : 32; }
};

inline constexpr int kMaxReportBytes = 640;  // PEC64u64_B8_C8
inline constexpr int kNumA = 36;
inline constexpr int kNumB = 8;
inline constexpr int kNumC = 8;
inline constexpr int kNumA40 = 32;  // A0..A31 are 40-bit in A32u40_A4u32_B8_C8
// Gen7.5 has A0..A44 and Xe2's PEC64u64 64 counters; arrays of A counters are sized for the
// largest, while Gen8+ code keeps iterating to kNumA. Xe-LPG's A24u40_A14u32_B8_C8 holds A0..A37.
inline constexpr int kMaxNumA = 64;

// The formats a generation supports.
std::span<const FormatLayout> formats_for(Generation gen);

const FormatLayout& layout_of(ReportFormat format);

// Whether `format` is one of formats_for(gen).
bool format_exists_on(ReportFormat format, Generation gen);

// Every format of every generation.
std::span<const FormatLayout> all_formats();

// Parses --format: "auto" (default_format: the OAG format, select code 5 on every generation but
// Xe2, whose OAG streams PEC64u64), the select code in binary ("101") or decimal ("5"), or a
// format name ("A32u40_A4u32_B8_C8"), interpreted for `gen`. Throws std::invalid_argument with a
// message listing the valid choices when the generation has no such format.
ReportFormat parse_format(std::string_view text, Generation gen);

// Formats xe streams on a generation that oaprof knows by name but cannot decode, because no
// public source gives where their counters sit (Xe2's PEC32u64_G1 and the other G1/G2 ones):
// the reason, for parse_format's message; nullopt for any other name.
std::optional<std::string_view> undecodable_format_reason(std::string_view name, Generation gen);

// The generation's 256-byte OA (OAG) format: what select code 5 ("101") means there.
ReportFormat default_format(Generation gen);

// The rate a report's timestamp delta counts at once the format's timestamp_shift is applied
// (what delta.h's timestamp_delta gives and gpu_time_ns divides by), from the OA unit's
// timestamp frequency (I915_PARAM_OA_TIMESTAMP_FREQUENCY, xe's oa_timestamp_freq): that rate >>
// the generation's shift. Every format of a generation shares the shift (report_format.cc).
double report_timestamp_hz(Generation gen, double oa_timestamp_hz);
// That shift: 1 on Xe-LPG, 0 elsewhere.
int report_timestamp_shift(Generation gen);

// The format IGT names in a metric set's oa_format attribute (lib/i915/perf-configs: absent or
// "256B_GENERIC_NOA16" for the generation's 256-byte format, "128B_MPEC8_NOA16" for Meteor Lake's
// media-unit sets); nullopt for any other name or a format the generation lacks.
std::optional<ReportFormat> format_from_igt_name(std::string_view name, Generation gen);

// i915 uapi enum drm_i915_oa_format value <-> format. to_uapi throws std::invalid_argument for a
// format i915 cannot stream (A29_B8_C8); from_uapi gives nullopt for an unknown number. Number 7
// (C4_B8) is laid out differently on Haswell: the one-argument from_uapi gives the Gen8+ layout,
// the two-argument one the generation's (nullopt where the generation has no such format).
int to_uapi(ReportFormat format);

// The value of xe's DRM_XE_OA_PROPERTY_OA_FORMAT for a format xe streams (include/uapi/drm/
// xe_drm.h: type in bits 7:0, counter select 15:8, counter size 23:16, B/C report 31:24) on a
// part of `gen` (xe accepts only that platform's formats); std::invalid_argument for a format
// oaprof does not stream through xe there.
std::uint64_t to_xe_oa_format(ReportFormat format, Generation gen);
std::optional<ReportFormat> from_uapi(int uapi_value);
std::optional<ReportFormat> from_uapi(int uapi_value, Generation gen);

}  // namespace oaprof::oa
