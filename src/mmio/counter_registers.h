// Assembles a report from the counter registers, laid out as the hardware writes the selected
// format. Shared by the mmio read-out (over the BAR), the Gen12+ register read-out in a batch
// (MI_STORE_REGISTER_MEM) and SimGpu's MI_REPORT_PERF_COUNT, so they cannot disagree about which
// register lands where. The registers are the generation's block (reg::oa_block).
#pragma once

#include <cstdint>

#include "mmio/registers.h"
#include "oa/report.h"
#include "oa/report_format.h"

namespace oaprof::mmio {

// The two halves of a 40-bit counter are separate reads: read high, low, high again and re-read
// the low half when a carry crossed between them, so a snapshot never tears.
template <class Read>
std::uint64_t read_counter40(const reg::OaRegisterBlock& block, Read& read, int i) {
  std::uint32_t hi = read(block.a_high(i)) & 0xFF;
  std::uint32_t lo = read(block.a_low(i));
  const std::uint32_t hi2 = read(block.a_high(i)) & 0xFF;
  if (hi2 != hi) {
    hi = hi2;
    lo = read(block.a_low(i));
  }
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

// One A counter as `bits` wide as the format holds it: a 40-bit register pair for A0..A31 (its
// low dword alone where the format keeps 32 bits, as Xe-LPG's A0-A3 and A24-A27), else the
// counter's 32-bit register.
template <class Read>
std::uint64_t read_a_counter(const reg::OaRegisterBlock& block, Read& read, int idx, int bits) {
  if (idx < oa::kNumA40) {
    return bits == 40 ? read_counter40(block, read, idx) : read(block.a_low(idx));
  }
  return read(block.a_upper(idx));
}

// The report timestamp field from the command-streamer timestamp: the OA unit's own timestamp
// advances 2^oa_cs_shift per CS tick (timestamp_clock.h oa_timestamp_cs_shift: 3 - the CTC
// shift on Xe-LPG, whose OA unit ignores it; 0 elsewhere), so the field counts as the OA unit's
// and decodes at the same report timestamp rate (oa::report_timestamp_hz).
inline std::uint64_t report_timestamp_from_cs(std::uint32_t cs, int oa_cs_shift) {
  return static_cast<std::uint64_t>(cs) << oa_cs_shift;
}

// `read(offset)` returns one 32-bit register; `oa_cs_shift` as report_timestamp_from_cs. RPT_ID
// and CTX_ID are the caller's.
template <class Read>
oa::Report read_counter_registers(const reg::OaRegisterBlock& block, oa::ReportFormat format,
                                  int oa_cs_shift, Read&& read) {
  const auto& l = oa::layout_of(format);
  oa::Report r;
  r.header_bits = static_cast<std::uint8_t>(l.header_bits());
  r.timestamp_shift = static_cast<std::uint8_t>(l.timestamp_shift);
  r.timestamp = report_timestamp_from_cs(read(reg::kRingTimestamp), oa_cs_shift);
  r.gpu_ticks = read(block.gpu_ticks);
  for (const oa::CounterRun& run : l.a_runs) {
    for (int i = 0; i < run.count; ++i) {
      const int idx = run.first + i;
      r.a[idx] = read_a_counter(block, read, idx, run.bits);
    }
  }
  for (int i = 0; i < l.b_count; ++i) r.b[i] = read(block.b(i));
  for (int i = 0; i < l.c_count; ++i) r.c[i] = read(block.c(i));
  return r;
}

// The format an OACONTROL value's counter select names on Gen8+ (OAG_OACONTROL's select sits in
// the same bits 4:2 on Gen12); null for a code with no format.
inline const oa::FormatLayout* format_for_select(oa::Generation gen, std::uint32_t oacontrol) {
  const int code =
      static_cast<int>((oacontrol & reg::kOaControlSelectMask) >> reg::kOaControlSelectShift);
  for (const auto& l : oa::formats_for(gen)) {
    if (l.select_code == code) return &l;
  }
  return nullptr;
}

}  // namespace oaprof::mmio
