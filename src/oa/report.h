// A decoded OA report: the typed view of the bytes the hardware (or oaprof's MMIO read-out)
// writes in one of the formats of report_format.h. Decoding is pure and bounds-checked.
#pragma once

#include <array>
#include <cstdint>
#include <span>

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
  std::uint32_t rpt_id = 0;
  std::uint32_t timestamp = 0;
  std::uint32_t ctx_id = 0;
  std::uint32_t gpu_ticks = 0;
  bool has_gpu_ticks = false;
  // Counter values as the format holds them: A0..A31 up to 40 bits, the rest 32 bits.
  std::array<std::uint64_t, kNumA> a{};
  std::array<std::uint32_t, kNumB> b{};
  std::array<std::uint32_t, kNumC> c{};
  std::array<bool, kNumA> a_present{};
  std::array<bool, kNumA> a_is_40bit{};
};

// Throws std::invalid_argument when `bytes` is shorter than the format's report.
Report decode(ReportFormat format, std::span<const std::uint8_t> bytes);

// The inverse: lays a report's fields out as the hardware would (used by read-outs that
// assemble reports from counter registers, and by tests).
RawReport encode(ReportFormat format, const Report& report);

}  // namespace oaprof::oa
