#include "oa/report_format.h"

#include <array>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::oa {
namespace {

using F = ReportFormat;

// Every layout, Gen8+ first then Gen7.5. Sources:
//  [IGT]   igt tests/intel/perf.c @ intel-lgci-fdo-gitlab-mirror/drm.igt-gpu-tools
//          b3d809d537febc23792ab8d0eb6d13cf80d626c8: hsw_oa_formats (lines 261-291),
//          gen8_oa_formats (293-312), gen12_oa_formats (314-321): the byte offsets.
//  [KPERF] linux drivers/gpu/drm/i915/i915_perf.c @ torvalds/linux
//          002c6ca75289a4ac4f6738213dd2d258704886e4: oa_formats[] (each uapi format's counter
//          select code and size) and oa_init_supported_formats() (the formats each platform
//          streams). It says nothing of where counters sit inside a report.
//  [MESA]  mesa src/intel/perf/intel_perf.c @ bminor/mesa-mesa
//          03fc7d6a6d769be666435e04ec01778b56576170: intel_perf_query_result_accumulate() reads
//          A32u40_A4u32_B8_C8 (Gen8+) and, on Gen7.5, A45_B8_C8 as 61 dwords from dword 3. It
//          reads no other Haswell format.
//  [UAPI]  enum drm_i915_oa_format, libdrm-dev 2.4.114 (Debian) include/libdrm/i915_drm.h.
//
// Haswell's B4_C8_A16 and C4_B8 (recorded in docs/hardware-access.md, "Report formats"): IGT puts
// B4_C8_A16's A29..A44 at byte 60 and Haswell C4_B8's B counters at byte 28, but the same entries
// put B4_C8_A16's C counters at 32..63 and C4_B8's C counters at 16..31, so C7/A29 and C3/B0
// would share a dword. The kernel gives only the sizes (128 and 64 bytes, which both readings
// fit) and Mesa reads neither format. The one layout that keeps IGT's 60 and 28 without a clash
// is the one A45_B8_C8 shows (IGT and Mesa agree there): counters packed from byte 12, right
// after Haswell's three-dword header; B4_C8_A16 is then B at 12, C at 28, A at 60, and C4_B8 C at
// 12, B at 28. oaprof follows that. B4_C8 keeps IGT's B at 16 and C at 32 (no clash, no other
// source). None of these three Haswell layouts is confirmed on hardware; A45_B8_C8 is the one
// two sources agree on.
// clang-format off
constexpr std::array kAllFormats{
    //          format                 name                   sel uapi size ticks  a0 an  aoff ahi  a32 a32off bn boff cn coff
    FormatLayout{F::kA12,               "A12",                 0, 8,   64,  -1,   7, 12, 12,  -1,  0, -1,    0, -1,  0, -1},
    FormatLayout{F::kA12_B8_C8,         "A12_B8_C8",           2, 9,  128,  -1,   7, 12, 12,  -1,  0, -1,    8, 64,  8, 96},
    FormatLayout{F::kA32u40_A4u32_B8_C8,"A32u40_A4u32_B8_C8",  5, 10, 256,  12,   0, 32, 16, 160,  4, 144,   8, 192, 8, 224},
    FormatLayout{F::kC4_B8,             "C4_B8",               7, 7,   64,  -1,   0,  0, -1,  -1,  0, -1,    8, 32,  4, 16},
    FormatLayout{F::kA13,               "A13",                 0, 1,   64,  -1,   0, 13, 12,  -1,  0, -1,    0, -1,  0, -1},
    FormatLayout{F::kA29,               "A29",                 1, 2,  128,  -1,   0, 29, 12,  -1,  0, -1,    0, -1,  0, -1},
    FormatLayout{F::kA13_B8_C8,         "A13_B8_C8",           2, 3,  128,  -1,   0, 13, 12,  -1,  0, -1,    8, 64,  8, 96},
    FormatLayout{F::kA29_B8_C8,         "A29_B8_C8",           3, -1, 192,  -1,   0, 29, 12,  -1,  0, -1,    8, 128, 8, 160},
    FormatLayout{F::kB4_C8,             "B4_C8",               4, 4,   64,  -1,   0,  0, -1,  -1,  0, -1,    4, 16,  8, 32},
    FormatLayout{F::kA45_B8_C8,         "A45_B8_C8",           5, 5,  256,  -1,   0, 45, 12,  -1,  0, -1,    8, 192, 8, 224},
    FormatLayout{F::kB4_C8_A16,         "B4_C8_A16",           6, 6,  128,  -1,  29, 16, 60,  -1,  0, -1,    4, 12,  8, 28},
    FormatLayout{F::kC4_B8_Hsw,         "C4_B8",               7, 7,   64,  -1,   0,  0, -1,  -1,  0, -1,    8, 28,  4, 12},
};
// clang-format on

// Formats per generation, in select-code order [KPERF oa_init_supported_formats]: Gen8, Gen9 and
// Gen11 stream A12, A12_B8_C8, A32u40_A4u32_B8_C8 and C4_B8, and so do TGL, RKL, DG1 and ADL
// (Gen12 OAG), with the Gen8 layouts (the same select codes and sizes in oa_formats[]; IGT's
// gen12_oa_formats lists only the 256-byte one). Haswell streams its seven (A29_B8_C8 is refused:
// 192 bytes do not divide the buffer) and oaprof's MMIO read-out can also lay out A29_B8_C8.
constexpr std::array kGen8Formats{kAllFormats[0], kAllFormats[1], kAllFormats[2], kAllFormats[3]};
constexpr std::array kGen7_5Formats{kAllFormats[4], kAllFormats[5], kAllFormats[6],
                                    kAllFormats[7], kAllFormats[8], kAllFormats[9],
                                    kAllFormats[10], kAllFormats[11]};

bool parse_int(std::string_view text, int base, int& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out, base);
  return ec == std::errc() && ptr == end && !text.empty();
}

}  // namespace

std::span<const FormatLayout> all_formats() { return kAllFormats; }

std::span<const FormatLayout> formats_for(Generation gen) {
  switch (gen) {
    case Generation::kGen8:
    case Generation::kGen9:
    case Generation::kGen11:
    case Generation::kGen12:
      return kGen8Formats;
    case Generation::kGen7_5:
      return kGen7_5Formats;
  }
  return {};
}

bool format_exists_on(ReportFormat format, Generation gen) {
  for (const FormatLayout& l : formats_for(gen)) {
    if (l.format == format) return true;
  }
  return false;
}

const FormatLayout& layout_of(ReportFormat format) {
  for (const FormatLayout& l : kAllFormats) {
    if (l.format == format) return l;
  }
  throw std::logic_error("layout_of: format missing from the table");
}

ReportFormat parse_format(std::string_view text, Generation gen) {
  const auto formats = formats_for(gen);
  std::string valid;
  for (const FormatLayout& l : formats) {
    valid += fmt::format("{}{} ({:b} = {})", valid.empty() ? "" : ", ", l.name, l.select_code,
                         l.select_code);
  }
  for (const FormatLayout& l : formats) {
    if (text == l.name) return l.format;
  }
  int code = -1;
  // Binary wins where the text is made of 0s and 1s only ("101" is select code 5, as in the
  // original tool's --format); "5" is read as decimal.
  const bool binary = text.find_first_not_of("01") == std::string_view::npos;
  if (parse_int(text, binary ? 2 : 10, code)) {
    for (const FormatLayout& l : formats) {
      if (l.select_code == code) return l.format;
    }
  }
  throw std::invalid_argument(fmt::format("report format '{}' does not exist on {}; valid: {}",
                                          text, generation_name(gen), valid));
}

int to_uapi(ReportFormat format) {
  const FormatLayout& l = layout_of(format);
  if (l.uapi_value < 0) {
    throw std::invalid_argument(fmt::format(
        "report format {} has no i915 uapi number (i915 refuses it); use the MMIO or MI_RPC "
        "sources, or another format",
        l.name));
  }
  return l.uapi_value;
}

std::optional<ReportFormat> from_uapi(int uapi_value) {
  if (uapi_value < 0) return std::nullopt;
  for (const FormatLayout& l : kAllFormats) {  // Gen8+ first: 7 is the Gen8+ C4_B8
    if (l.uapi_value == uapi_value) return l.format;
  }
  return std::nullopt;
}

std::optional<ReportFormat> from_uapi(int uapi_value, Generation gen) {
  if (uapi_value < 0) return std::nullopt;
  for (const FormatLayout& l : formats_for(gen)) {
    if (l.uapi_value == uapi_value) return l.format;
  }
  return std::nullopt;
}

}  // namespace oaprof::oa
