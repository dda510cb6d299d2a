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
};

// Byte layout of one format (reference/hardware.md §3). Offsets are in bytes; -1 means absent.
struct FormatLayout {
  ReportFormat format;
  std::string_view name;
  int select_code;    // OACONTROL bits 4:2 on Gen8+ (the counter-select field on Gen7.5)
  int uapi_value;     // enum drm_i915_oa_format; -1 when i915 has none
  int size_bytes;
  int gpu_ticks_offset;
  int a_first;        // index of the first A counter present
  int a_count;        // A counters stored as 32-bit low dwords from a_offset
  int a_offset;
  int a_high_offset;  // bits 39:32 of the same counters, one byte each; -1 when 32-bit only
  int a32_count;      // A32..A35-style 32-bit counters following the 40-bit ones
  int a32_offset;
  int b_count;
  int b_offset;
  int c_count;
  int c_offset;
};

inline constexpr int kMaxReportBytes = 256;
inline constexpr int kNumA = 36;
inline constexpr int kNumB = 8;
inline constexpr int kNumC = 8;
inline constexpr int kNumA40 = 32;  // A0..A31 are 40-bit in A32u40_A4u32_B8_C8
// Gen7.5 has A0..A44; arrays of A counters are sized for it, while Gen8+ code keeps iterating
// to kNumA.
inline constexpr int kMaxNumA = 45;

// The formats a generation supports.
std::span<const FormatLayout> formats_for(Generation gen);

const FormatLayout& layout_of(ReportFormat format);

// Whether `format` is one of formats_for(gen).
bool format_exists_on(ReportFormat format, Generation gen);

// Every format of every generation.
std::span<const FormatLayout> all_formats();

// Parses --format: the select code in binary ("101") or decimal ("5"), or a format name
// ("A32u40_A4u32_B8_C8"), interpreted for `gen`. Throws std::invalid_argument with a message
// listing the valid choices when the generation has no such format.
ReportFormat parse_format(std::string_view text, Generation gen);

// i915 uapi enum drm_i915_oa_format value <-> format. to_uapi throws std::invalid_argument for a
// format i915 cannot stream (A29_B8_C8); from_uapi gives nullopt for an unknown number. Number 7
// (C4_B8) is laid out differently on Haswell: the one-argument from_uapi gives the Gen8+ layout,
// the two-argument one the generation's (nullopt where the generation has no such format).
int to_uapi(ReportFormat format);
std::optional<ReportFormat> from_uapi(int uapi_value);
std::optional<ReportFormat> from_uapi(int uapi_value, Generation gen);

}  // namespace oaprof::oa
