// Assembles a report from the counter registers, laid out as the hardware writes the selected
// format. Shared by the mmio read-out (over the BAR) and SimGpu's MI_REPORT_PERF_COUNT, so the
// two cannot disagree about which register lands where.
#pragma once

#include <cstdint>

#include "mmio/registers.h"
#include "oa/report.h"
#include "oa/report_format.h"

namespace oaprof::mmio {

// The two halves of a 40-bit counter are separate reads: read high, low, high again and re-read
// the low half when a carry crossed between them, so a snapshot never tears.
template <class Read>
std::uint64_t read_counter40(Read& read, int i) {
  std::uint32_t hi = read(reg::a_high(i)) & 0xFF;
  std::uint32_t lo = read(reg::a_low(i));
  const std::uint32_t hi2 = read(reg::a_high(i)) & 0xFF;
  if (hi2 != hi) {
    hi = hi2;
    lo = read(reg::a_low(i));
  }
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

// `read(offset)` returns one 32-bit register. RPT_ID and CTX_ID are the caller's.
template <class Read>
oa::Report read_counter_registers(oa::ReportFormat format, Read&& read) {
  const auto& l = oa::layout_of(format);
  oa::Report r;
  r.timestamp = read(reg::kRingTimestamp);
  r.gpu_ticks = read(reg::kGpuTicks);
  for (const oa::CounterRun& run : l.a_runs) {
    for (int i = 0; i < run.count; ++i) {
      const int idx = run.first + i;
      r.a[idx] = run.bits == 40 ? read_counter40(read, idx) : read(reg::a32(idx));
    }
  }
  for (int i = 0; i < l.b_count; ++i) r.b[i] = read(reg::b(i));
  for (int i = 0; i < l.c_count; ++i) r.c[i] = read(reg::c(i));
  return r;
}

// The format OACONTROL's counter select names on Gen8–11; null for a code with no format.
inline const oa::FormatLayout* format_for_select(oa::Generation gen, std::uint32_t oacontrol) {
  const int code = static_cast<int>((oacontrol & reg::kOaControlSelectMask) >>
                                    reg::kOaControlSelectShift);
  for (const auto& l : oa::formats_for(gen)) {
    if (l.select_code == code) return &l;
  }
  return nullptr;
}

}  // namespace oaprof::mmio
