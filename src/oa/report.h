// A decoded OA report: the typed view of the bytes the hardware (or oaprof's MMIO read-out)
// writes in one of the formats of report_format.h. Decoding is pure and bounds-checked.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "oa/report_format.h"

namespace oaprof::oa {

// Raw report bytes as written by the hardware, little-endian dwords.
struct RawReport {
  std::array<std::uint8_t, kMaxReportBytes> bytes{};
  int size = 0;

  std::uint32_t dword(int index) const;
  void set_dword(int index, std::uint32_t value);
};

struct Report {
  std::uint32_t rpt_id = 0;     // RPT_ID, or bits 31:0 of a 64-bit header's report id
  std::uint64_t timestamp = 0;  // the raw field: 32 bits, or 64 in a 64-bit header
  std::uint32_t ctx_id = 0;
  std::uint64_t gpu_ticks = 0;  // 32 bits, or 64 in a 64-bit header
  bool has_gpu_ticks = false;
  std::uint8_t header_bits = 32;     // width of the timestamp and GPU_TICKS fields
  std::uint8_t timestamp_shift = 0;  // FormatLayout::timestamp_shift of the format
  // Counter values as the format holds them: up to 40 bits (64 for MPEC), else 32 bits.
  std::array<std::uint64_t, kMaxNumA> a{};
  std::array<std::uint32_t, kNumB> b{};
  std::array<std::uint32_t, kNumC> c{};
  std::array<bool, kMaxNumA> a_present{};
  std::array<std::uint8_t, kMaxNumA> a_bits{};  // 32, 40 or 64 where present
};

// Why the hardware wrote a report: RPT_ID bits 24:19 (Gen12 and Xe-LPG: 25:19), one bit per
// reason; bit 6 (Gen12+) is an MMIO trigger.
enum ReportReason : std::uint32_t {
  kReasonTimer = 1u << 0,
  kReasonTrigger1 = 1u << 1,
  kReasonTrigger2 = 1u << 2,
  kReasonContextSwitch = 1u << 3,
  kReasonGoTransition = 1u << 4,  // GO 1→0, i.e. RC6 entry
  kReasonClockRatioChange = 1u << 5,
  kReasonMmioTrigger = 1u << 6,  // Gen12+ (IGT lib/i915/perf.c "mmio-trigger")
};

// The reason bits of a report written by the OA unit itself. Zero on Gen7.5, whose RPT_ID
// carries no reason field oaprof relies on. (A report from MI_REPORT_PERF_COUNT carries the id the
// batch supplied instead.)
std::uint32_t report_reasons(std::uint32_t rpt_id, Generation gen);

// "timer|context_switch": the reason bits as text; "none" when zero.
std::string report_reason_names(std::uint32_t reasons);

// Whether CTX_ID holds a valid context: RPT_ID bit 25 on Gen8, bit 16 on Gen9+ (Xe-LPG too:
// i915's gen8_valid_ctx_bit for GRAPHICS_VER 12); never on Gen7.5.
bool context_id_valid(std::uint32_t rpt_id, Generation gen);

// Slice and unslice clocks encoded in RPT_ID of reports the OA unit writes when OA_DEBUG asks
// for the clock ratio (i915 sets it on Gen9-12), decoded on Gen8+ as Mesa and IGT decode them:
// unslice = RPT_ID[8:0], slice = RPT_ID[31:25] | RPT_ID[10:9] << 7, in units of 16.667 MHz (mesa
// src/intel/perf/intel_perf.c gfx8_read_report_clock_ratios @ bminor/mesa-mesa 03fc7d6a6d76;
// igt tests/intel/perf.c @ b3d809d537fe). Mesa enables it on Gen8 too ("experimentation shows
// that Gfx8 reports similar values"); i915 does not set OA_DEBUG there, and on Gen8 RPT_ID bit 25
// is also the context-valid bit (i915_perf.c gen8_valid_ctx_bit), so the slice clock's lowest
// unit is uncertain on Gen8. Haswell: nullopt.
struct ClockRatio {
  double unslice_mhz = 0;
  double slice_mhz = 0;
};
std::optional<ClockRatio> clock_ratio(std::uint32_t rpt_id, Generation gen);

// The 32-bit field at `p` (reports are little-endian, as the hosts oaprof runs on).
inline std::uint32_t load_u32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Raw field readers for code that walks report bytes without decoding them (the accumulation
// hot paths). `report` must hold the whole report of `layout`.
// Inline: decoding and accumulating call it for every counter of every report.
inline std::uint64_t read_run_counter(const CounterRun& run, const std::uint8_t* report, int i) {
  if (run.bits == 64) {
    std::uint64_t v;
    std::memcpy(&v, report + run.offset + 8 * i, sizeof v);
    return v;
  }
  std::uint32_t lo;
  std::memcpy(&lo, report + run.offset + 4 * i, sizeof lo);
  std::uint64_t v = lo;
  if (run.bits == 40) v |= static_cast<std::uint64_t>(report[run.high_offset + i]) << 32;
  return v;
}
std::uint64_t read_timestamp_field(const FormatLayout& layout, const std::uint8_t* report);
std::uint64_t read_gpu_ticks_field(const FormatLayout& layout, const std::uint8_t* report);

// Throws std::invalid_argument when `bytes` is shorter than the format's report.
Report decode(ReportFormat format, std::span<const std::uint8_t> bytes);

// decode() into an existing Report, for loops over many reports: fields the format lacks keep
// their zero/absent state only if `out` started from a default Report of the same format.
void decode_into(const FormatLayout& layout, std::span<const std::uint8_t> bytes, Report& out);

// The inverse: lays a report's fields out as the hardware would (used by read-outs that
// assemble reports from counter registers, and by tests).
RawReport encode(ReportFormat format, const Report& report);

}  // namespace oaprof::oa
