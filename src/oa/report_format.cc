#include "oa/report_format.h"

#include <array>
#include <charconv>
#include <cmath>
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
// Xe-LPG formats (issue 15). Sources:
//  [KPERF2] linux drivers/gpu/drm/i915/i915_perf.c @ Kingxukai/linux
//          0291023e7330da28f2f7453c87c2ab7082d8360f (a mainline mirror): oa_formats[] gives
//          OAR A32u40_A4u32_B8_C8 and A24u40_A14u32_B8_C8 select 5 / 256 bytes,
//          MPEC8u64_B8_C8 select 1 / 192 bytes and MPEC8u32_B8_C8 select 2 / 128 bytes, the two
//          OAM ones with HDR_64_BIT (oa_report_id, oa_timestamp, oa_context_id: id qword 0,
//          timestamp qword 1, context dword 4); oa_init_supported_formats() gives METEORLAKE
//          exactly those four (and DG2 the first two).
//  [IGTT]  igt tests/intel/perf.c @ drm.igt-gpu-tools b3d809d537fe: mtl_oa_formats: A24u40's
//          A0-A3 32-bit from byte 16, A4-A23 40-bit (low dwords from 16, high bytes from 160);
//          MPEC8u64 A (MPEC) 64-bit at 32, B 96, C 128; MPEC8u32 A 32, B 64, C 96.
//  [IGTL]  igt lib/i915/perf.c @ b3d809d537fe intel_perf_accumulate_reports(): the rest of
//          A24u40: A24-A27 32-bit at dwords 28-31, A28-A31 40-bit (high bytes 188-191),
//          A32-A36 32-bit at dwords 36-40, A37 at dword 46, B 48-55, C 56-63; MPEC8u32 GPU
//          clock 64-bit at qword 3. Mesa's intel_perf_query_result_accumulate (verx10 125,
//          [MESA]) reads A24u40 the same way.
//  [UAPI2] enum drm_i915_oa_format in igt include/drm-uapi/i915_drm.h @ b3d809d537fe: OAR 11,
//          A24u40 12, MPEC8u64 13, MPEC8u32 14 (Debian's libdrm 2.4.114 stops at 10).
// DG2 and ATS-M (Xe-HPG, issue 30): [KPERF2] oa_init_supported_formats() gives INTEL_DG2
// OAR_A32u40_A4u32_B8_C8 and A24u40_A14u32_B8_C8 only (no OAM: the media OA unit is Xe-LPG's),
// the same oa_formats[] entries as Xe-LPG, so the layouts above are theirs; IGT reads DG2's
// reports with the same intel_perf_accumulate_reports() branch [IGTL] and tests/intel/perf.c
// gives DG2 the mtl_oa_formats table's A24u40 entry (b3d809d537fe: IS_DG2 || IS_METEORLAKE).
// Timestamp shift: IGT lib/i915/perf.c (b3d809d537fe, intel_perf_for_devinfo) sets
// oa_timestamp_shift -1 and mask 0x7fffffff on DG2 and Meteor Lake ("OA reports have the
// timestamp value shifted ... we cannot use the top bit"), applied to every format's
// timestamp delta as ((end - start) mod 2^32) >> 1; Mesa sets oa_timestamp_shift 1 for verx10
// 125, which its device table gives MTL and ARL. IGT 1.27.1 lacks the MTL shift.
// Rate (report_timestamp_hz): the raw field counts at the OA timestamp frequency, which i915
// and xe report apart on these parts because "OA unit ignores the CTC_SHIFT": CS clock << (3 -
// RPM_CONFIG0 bits 2:1) (linux i915_perf.c i915_perf_oa_timestamp_frequency() @ Kingxukai/linux
// 0291023e7330, Wa_18013179988, IP 12.70-12.74, I915_PARAM_OA_TIMESTAMP_FREQUENCY 57; xe_oa.c
// xe_oa_timestamp_frequency() @ torvalds/linux 0755a4e3e809, XE_METEORLAKE, the OA unit
// query's oa_timestamp_freq). IGT's own test divides the raw delta by it (tests/intel/perf.c @
// b3d809d537fe oa_timestamp_delta and timebase_scale, lines 719-733) and checks that periodic
// reports are (2 << exponent) raw ticks apart (line 2099) at oa_exponent_to_ns() of that
// frequency (line 772). The shifted delta therefore counts at half of it: the CS rate only at
// CTC shift 2, the one Mesa's "to match the ring timestamp" assumes (intel_perf.h).
// Xe2/Xe3 formats (issue 16). Sources:
//  [XEOA]  linux drivers/gpu/drm/xe/xe_oa.c @ torvalds/linux
//          2d46ecc958c9cb7b0f116aa52cf9296b6c71d784: oa_formats[] gives PEC64u64 counter select
//          1, 576 bytes, type PEC, HDR_64_BIT, counter_size 1, bc_report 0, and MPEC8u32_B8_C8
//          select 2, 128 bytes, type OAM_MPEC, HDR_64_BIT; xe_oa_init_supported_formats() gives
//          GRAPHICS_VER >= 20 the MPEC and PEC formats only (no A/B/C OAG format).
//  [IGTXE] igt lib/xe/xe_oa.c @ drm.igt-gpu-tools b3d809d537fe intel_xe_perf_accumulate_reports:
//          PEC64u64 timestamp qword 1, GPU clock qword 3 (64 bits), PEC i at qword 4 + i, each a
//          plain 64-bit difference; MPEC8u32 as on Xe-LPG (timestamp qword 1, clock qword 3,
//          MPEC dwords 8-15, B 16-23, C 24-31). intel_xe_perf_for_devinfo() leaves
//          oa_timestamp_shift 0 on LNL, BMG and PTL (it shifts only DG2): unshifted here.
//  [XEOA12] linux drivers/gpu/drm/xe/xe_oa.c @ torvalds/linux
//          0755a4e3e809610a14befc9ad28d35e2e460da68: oa_formats[] gives A12 select 0 / 64 bytes,
//          A12_B8_C8 2 / 128, A32u40_A4u32_B8_C8 and A24u40_A14u32_B8_C8 5 / 256, all type OAG
//          with HDR_32_BIT; xe_oa_init_supported_formats() gives Gen12 A12, A12_B8_C8,
//          A32u40_A4u32_B8_C8 and C4_B8 (C4_B8 is enum value 0, which the open path refuses as
//          "no format"), and GRAPHICS_VERx100 >= 1270 A24u40_A14u32_B8_C8 as its only OAG format
//          (beside OAR, OAC and OAM ones); decode_oa_format() matches type, select, size and
//          B/C report among the platform's own formats only.
//  [XEUAPI] linux include/uapi/drm/xe_drm.h @ torvalds/linux
//          c8507a25cebd179db935dd266a33c51bef1b1e80: enum drm_xe_oa_format_type (OAM_MPEC 4,
//          PEC 5) and the DRM_XE_OA_FORMAT_MASK_* fields of DRM_XE_OA_PROPERTY_OA_FORMAT.
// The other Xe2 formats (issue 30, item 7). Sources:
//  [XEOA2] linux drivers/gpu/drm/xe/xe_oa.c @ torvalds/linux
//          0755a4e3e809610a14befc9ad28d35e2e460da68: oa_formats[] {select, size, type, header,
//          counter_size, bc_report}: PEC64u64_B8_C8 {1, 640, PEC, HDR_64_BIT, 1, 1}, PEC64u32
//          {1, 320, PEC, HDR_64_BIT, 0, 0}, MPEC8u64_B8_C8 {1, 192, OAM_MPEC, HDR_64_BIT}, and
//          the six below without a layout; xe_oa_init_supported_formats() gives GRAPHICS_VER
//          >= 20 all eleven (both MPEC ones and the nine PEC ones). Nothing in xe says where a
//          counter sits.
//  [MDCALC] intel/metrics-discovery instrumentation/metrics_discovery/common/md_calculation.cpp
//          @ 80cc115575f1cd2e101a20aaa03b13eda26dc781, AggregateCounters (lines 833-916): a
//          32-byte header (four 8-byte fields), the PEC counters from byte 32, then 16 32-bit
//          "NOA" (B/C) counters right after them: 640B_PEC64LL_NOA16 is 64 64-bit PECs, B at
//          544, C at 576; 192B_MPEC8LL_NOA16 8 64-bit MPECs, B at 96, C at 128 (as IGT's
//          mtl_oa_formats [IGTT] on Xe-LPG). inc/common/instrumentation/api/instr_gt_driver_ifc.h
//          at the same commit calls 320B_PEC64 "Xe2+ format: 64 PEC(32-bit)"; md_calculation.cpp
//          gives no offsets for it, so oaprof infers them from the shared 32-byte header: PECs
//          from byte 32, 4 bytes apart (64 x 4 = 256 bytes, the rest of 320 unused).
//          docs/hardware-access.md marks this layout as oaprof's inference.
//  No layout: PEC32u64_G1, PEC32u32_G1, PEC32u64_G2, PEC32u32_G2, PEC36u64_G1_32_G2_4 and
//  PEC36u64_G1_4_G2_32. Which PEC numbers "G1"/"G2" hold is in none of: xe_oa.c [XEOA2]; IGT
//  tests/intel/xe_oa.c and lib/xe/xe_oa.c @ b3d809d537fe (lnl_oa_formats names them with sizes
//  and select codes only, no offsets); metrics-discovery [MDCALC] (no G1/G2 report type);
//  Mesa src/intel/perf (no Xe2 PEC format at all). oaprof knows their names and refuses them
//  (undecodable_format_reason) rather than guess.
// clang-format off
constexpr CounterRun kA12Runs[] = {{7, 12, 32, 12}};
constexpr CounterRun kA32u40Runs[] = {{0, 32, 40, 16, 160}, {32, 4, 32, 144}};
constexpr CounterRun kA13Runs[] = {{0, 13, 32, 12}};
constexpr CounterRun kA29Runs[] = {{0, 29, 32, 12}};
constexpr CounterRun kA45Runs[] = {{0, 45, 32, 12}};
constexpr CounterRun kB4C8A16Runs[] = {{29, 16, 32, 60}};
constexpr CounterRun kA24u40Runs[] = {{0, 4, 32, 16},       {4, 20, 40, 32, 164},
                                      {24, 4, 32, 112},     {28, 4, 40, 128, 188},
                                      {32, 5, 32, 144},     {37, 1, 32, 184}};
constexpr CounterRun kMpec8u64Runs[] = {{0, 8, 64, 32}};
constexpr CounterRun kMpec8u32Runs[] = {{0, 8, 32, 32}};
constexpr CounterRun kPec64Runs[] = {{0, 64, 64, 32}};
constexpr CounterRun kPec64u32Runs[] = {{0, 64, 32, 32}};

constexpr std::array kAllFormats{
    //          format                      name                      sel uapi size ticks  A runs         bn boff cn coff  hdr64  shift
    FormatLayout{F::kA12,                    "A12",                    0, 8,   64,  -1,  kA12Runs,       0, -1,  0, -1},
    FormatLayout{F::kA12_B8_C8,              "A12_B8_C8",              2, 9,  128,  -1,  kA12Runs,       8, 64,  8, 96},
    FormatLayout{F::kA32u40_A4u32_B8_C8,     "A32u40_A4u32_B8_C8",     5, 10, 256,  12,  kA32u40Runs,    8, 192, 8, 224},
    FormatLayout{F::kC4_B8,                  "C4_B8",                  7, 7,   64,  -1,  {},             8, 32,  4, 16},
    FormatLayout{F::kA13,                    "A13",                    0, 1,   64,  -1,  kA13Runs,       0, -1,  0, -1},
    FormatLayout{F::kA29,                    "A29",                    1, 2,  128,  -1,  kA29Runs,       0, -1,  0, -1},
    FormatLayout{F::kA13_B8_C8,              "A13_B8_C8",              2, 3,  128,  -1,  kA13Runs,       8, 64,  8, 96},
    FormatLayout{F::kA29_B8_C8,              "A29_B8_C8",              3, -1, 192,  -1,  kA29Runs,       8, 128, 8, 160},
    FormatLayout{F::kB4_C8,                  "B4_C8",                  4, 4,   64,  -1,  {},             4, 16,  8, 32},
    FormatLayout{F::kA45_B8_C8,              "A45_B8_C8",              5, 5,  256,  -1,  kA45Runs,       8, 192, 8, 224},
    FormatLayout{F::kB4_C8_A16,              "B4_C8_A16",              6, 6,  128,  -1,  kB4C8A16Runs,   4, 12,  8, 28},
    FormatLayout{F::kC4_B8_Hsw,              "C4_B8",                  7, 7,   64,  -1,  {},             8, 28,  4, 12},
    FormatLayout{F::kA24u40_A14u32_B8_C8,    "A24u40_A14u32_B8_C8",    5, 12, 256,  12,  kA24u40Runs,    8, 192, 8, 224, false, 1},
    FormatLayout{F::kOar_A32u40_A4u32_B8_C8, "OAR_A32u40_A4u32_B8_C8", 5, 11, 256,  12,  kA32u40Runs,    8, 192, 8, 224, false, 1},
    FormatLayout{F::kMpec8u64_B8_C8,         "MPEC8u64_B8_C8",         1, 13, 192,  24,  kMpec8u64Runs,  8, 96,  8, 128, true,  1},
    FormatLayout{F::kMpec8u32_B8_C8,         "MPEC8u32_B8_C8",         2, 14, 128,  24,  kMpec8u32Runs,  8, 64,  8, 96,  true,  1},
    FormatLayout{F::kPec64u64,               "PEC64u64",               1, -1, 576,  24,  kPec64Runs,     0, -1,  0, -1,  true,  0},
    FormatLayout{F::kXe2Mpec8u32_B8_C8,      "MPEC8u32_B8_C8",         2, -1, 128,  24,  kMpec8u32Runs,  8, 64,  8, 96,  true,  0},
    FormatLayout{F::kPec64u64_B8_C8,         "PEC64u64_B8_C8",         1, -1, 640,  24,  kPec64Runs,     8, 544, 8, 576, true,  0},
    FormatLayout{F::kPec64u32,               "PEC64u32",               1, -1, 320,  24,  kPec64u32Runs,  0, -1,  0, -1,  true,  0},
    FormatLayout{F::kXe2Mpec8u64_B8_C8,      "MPEC8u64_B8_C8",         1, -1, 192,  24,  kMpec8u64Runs,  8, 96,  8, 128, true,  0},
};
// clang-format on

// Formats per generation, in select-code order [KPERF oa_init_supported_formats]: Gen8, Gen9 and
// Gen11 stream A12, A12_B8_C8, A32u40_A4u32_B8_C8 and C4_B8, and so do TGL, RKL, DG1 and ADL
// (Gen12 OAG), with the Gen8 layouts (the same select codes and sizes in oa_formats[]; IGT's
// gen12_oa_formats lists only the 256-byte one). Haswell streams its seven (A29_B8_C8 is refused:
// 192 bytes do not divide the buffer) and oaprof's MMIO read-out can also lay out A29_B8_C8.
// Xe-LPG streams its four [KPERF2], the OAG format first so that select code 5 ("101") means it.
constexpr std::array kGen8Formats{kAllFormats[0], kAllFormats[1], kAllFormats[2], kAllFormats[3]};
constexpr std::array kGen7_5Formats{kAllFormats[4],  kAllFormats[5], kAllFormats[6],
                                    kAllFormats[7],  kAllFormats[8], kAllFormats[9],
                                    kAllFormats[10], kAllFormats[11]};
constexpr std::array kXeLpgFormats{kAllFormats[12], kAllFormats[13], kAllFormats[14],
                                   kAllFormats[15]};
// Xe-HPG: its OAG format first, so that select code 5 ("101") means it, then OAR [KPERF2].
constexpr std::array kXeHpgFormats{kAllFormats[12], kAllFormats[13]};
// Xe2: the OAG unit's PEC format first, so that select code 1 means it [XEOA]; the formats
// sharing its select code are asked for by name.
constexpr std::array kXe2Formats{kAllFormats[16], kAllFormats[17], kAllFormats[18], kAllFormats[19],
                                 kAllFormats[20]};

// Xe2 formats xe streams whose counter layout no public source gives [XEOA2].
constexpr std::string_view kXe2UndecodableFormats[] = {
    "PEC32u64_G1", "PEC32u32_G1",         "PEC32u64_G2",
    "PEC32u32_G2", "PEC36u64_G1_32_G2_4", "PEC36u64_G1_4_G2_32"};

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
    case Generation::kXeHpg:
      return kXeHpgFormats;
    case Generation::kXeLpg:
      return kXeLpgFormats;
    case Generation::kXe2:
      return kXe2Formats;
  }
  return {};
}

int FormatLayout::a_begin() const { return a_runs.empty() ? 0 : a_runs.front().first; }

int FormatLayout::a_end() const {
  return a_runs.empty() ? 0 : a_runs.back().first + a_runs.back().count;
}

int FormatLayout::a_total() const {
  int n = 0;
  for (const CounterRun& run : a_runs) n += run.count;
  return n;
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

std::optional<std::string_view> undecodable_format_reason(std::string_view name, Generation gen) {
  if (gen != Generation::kXe2) return std::nullopt;
  for (std::string_view known : kXe2UndecodableFormats) {
    if (name == known) {
      return "xe streams it, but no public source (xe_oa.c, IGT, Mesa, metrics-discovery) says "
             "which counters its groups G1/G2 hold or where they sit in the report";
    }
  }
  return std::nullopt;
}

ReportFormat parse_format(std::string_view text, Generation gen) {
  if (text == "auto") return default_format(gen);
  if (const auto why = undecodable_format_reason(text, gen)) {
    throw std::invalid_argument(fmt::format(
        "report format '{}' is known on {} but oaprof cannot decode it: {}; use PEC64u64, "
        "PEC64u64_B8_C8 or PEC64u32",
        text, generation_name(gen), *why));
  }
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

int report_timestamp_shift(Generation gen) {
  return layout_of(default_format(gen)).timestamp_shift;
}

double report_timestamp_hz(Generation gen, double oa_timestamp_hz) {
  return std::ldexp(oa_timestamp_hz, -report_timestamp_shift(gen));
}

ReportFormat default_format(Generation gen) {
  switch (gen) {
    case Generation::kGen7_5:
      return ReportFormat::kA45_B8_C8;
    case Generation::kXeHpg:
    case Generation::kXeLpg:
      return ReportFormat::kA24u40_A14u32_B8_C8;
    case Generation::kXe2:
      return ReportFormat::kPec64u64;
    default:
      return ReportFormat::kA32u40_A4u32_B8_C8;
  }
}

// As IGT's generator maps a set's oa_format to its i915 format (lib/i915/perf-configs/
// perf-metricset-codegen.py generate_metric_sets() @ zehortigoza/intel-gpu-tools
// 399db6901e8fc9074c8ab30d3a6144dba3a85721): on acm/mtl/arl "128B_MPEC8_NOA16" is
// I915_OAM_FORMAT_MPEC8u32_B8_C8 and any other set I915_OA_FORMAT_A24u40_A14u32_B8_C8; Haswell's
// sets are A45_B8_C8 and every other chipset's A32u40_A4u32_B8_C8. IGT's files name
// "256B_GENERIC_NOA16" or nothing for the 256-byte sets; a name IGT's generator does not test for
// (e.g. metrics-discovery's "192B_MPEC8LL_NOA16") is refused here rather than read as 256 bytes.
// IGT's xe generator (lib/xe/oa-configs/oa-metricset-codegen.py @ b3d809d537fe) reads
// lnl/bmg/ptl sets as XE_OA_FORMAT_PEC64u64 unless they name "128B_MPEC8_NOA16"
// (XE_OAM_FORMAT_MPEC8u32_B8_C8); their files name "576B_PEC64LL" for the PEC sets.
std::optional<ReportFormat> format_from_igt_name(std::string_view name, Generation gen) {
  std::optional<ReportFormat> format;
  const bool xe2 = gen == Generation::kXe2;
  if (!xe2 && (name.empty() || name == "256B_GENERIC_NOA16")) format = default_format(gen);
  if (xe2 && name == "576B_PEC64LL") format = ReportFormat::kPec64u64;
  if (name == "128B_MPEC8_NOA16") {
    format = xe2 ? ReportFormat::kXe2Mpec8u32_B8_C8 : ReportFormat::kMpec8u32_B8_C8;
  }
  if (format && !format_exists_on(*format, gen)) return std::nullopt;
  return format;
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

std::uint64_t to_xe_oa_format(ReportFormat format, Generation gen) {
  // type | counter select << 8 | counter size << 16 | B/C report << 24 [XEOA, XEUAPI]; xe
  // searches only the platform's own formats, so Gen12's A32u40 and Xe-LPG's A24u40 may share
  // OAG select 5 [XEOA12].
  constexpr std::uint64_t kTypeOag = 0, kTypeOamMpec = 4, kTypePec = 5;
  const auto oag = [&](std::uint64_t select) { return kTypeOag | select << 8; };
  switch (gen) {
    case Generation::kGen12:
      if (format == ReportFormat::kA12) return oag(0);
      if (format == ReportFormat::kA12_B8_C8) return oag(2);
      if (format == ReportFormat::kA32u40_A4u32_B8_C8) return oag(5);
      break;
    case Generation::kXeLpg:
      if (format == ReportFormat::kA24u40_A14u32_B8_C8) return oag(5);
      break;
    case Generation::kXe2:
      if (format == ReportFormat::kPec64u64) return kTypePec | 1u << 8 | 1u << 16;
      if (format == ReportFormat::kXe2Mpec8u32_B8_C8) return kTypeOamMpec | 2u << 8;
      break;
    default:
      break;
  }
  throw std::invalid_argument(fmt::format(
      "report format {} is not one oaprof streams through xe on {} (xe's OAG unit streams "
      "A12, A12_B8_C8 and A32u40_A4u32_B8_C8 on Gen12, A24u40_A14u32_B8_C8 on Xe-LPG and "
      "PEC64u64 on Xe2; C4_B8, xe's format 0, cannot be asked for, and the OAR/OAC formats "
      "need an exec queue oaprof does not own)",
      layout_of(format).name, generation_name(gen)));
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
