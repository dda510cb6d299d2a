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
  kA12,
  kA12_B8_C8,
  kA32u40_A4u32_B8_C8,
  kC4_B8,
};

// Byte layout of one format (reference/hardware.md §3). Offsets are in bytes; -1 means absent.
struct FormatLayout {
  ReportFormat format;
  std::string_view name;
  int select_code;    // OACONTROL bits 4:2 on Gen8+
  int uapi_value;     // enum drm_i915_oa_format
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

// The formats a generation supports.
std::span<const FormatLayout> formats_for(Generation gen);

const FormatLayout& layout_of(ReportFormat format);

// Parses --format: the select code in binary ("101") or decimal ("5"), or a format name
// ("A32u40_A4u32_B8_C8"), interpreted for `gen`. Throws std::invalid_argument with a message
// listing the valid choices when the generation has no such format.
ReportFormat parse_format(std::string_view text, Generation gen);

// i915 uapi enum drm_i915_oa_format value <-> format.
int to_uapi(ReportFormat format);
std::optional<ReportFormat> from_uapi(int uapi_value);

}  // namespace oaprof::oa
