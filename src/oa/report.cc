#include "oa/report.h"

#include <cstring>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace oaprof::oa {
namespace {

std::uint32_t load32(std::span<const std::uint8_t> bytes, int offset) {
  std::uint32_t v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);  // x86 and the GPU are both little-endian
  return v;
}

void store32(std::uint8_t* bytes, int offset, std::uint32_t v) {
  std::memcpy(bytes + offset, &v, sizeof v);
}

}  // namespace

std::uint32_t RawReport::dword(int index) const { return load32(bytes, index * 4); }
void RawReport::set_dword(int index, std::uint32_t value) {
  store32(bytes.data(), index * 4, value);
}

Report decode(ReportFormat format, std::span<const std::uint8_t> bytes) {
  Report r;
  decode_into(layout_of(format), bytes, r);
  return r;
}

namespace {

void store64(std::uint8_t* bytes, int offset, std::uint64_t v) {
  std::memcpy(bytes + offset, &v, sizeof v);
}

void store_counter(std::uint8_t* out, const CounterRun& run, int i, std::uint64_t v) {
  if (run.bits == 64) {
    store64(out, run.offset + 8 * i, v);
    return;
  }
  store32(out, run.offset + 4 * i, static_cast<std::uint32_t>(v));
  if (run.bits == 40) out[run.high_offset + i] = static_cast<std::uint8_t>(v >> 32);
}

std::uint64_t read_header_field(const FormatLayout& l, const std::uint8_t* report, int offset) {
  if (l.header64) {
    std::uint64_t v;
    std::memcpy(&v, report + offset, sizeof v);
    return v;
  }
  std::uint32_t v;
  std::memcpy(&v, report + offset, sizeof v);
  return v;
}

}  // namespace

std::uint64_t read_timestamp_field(const FormatLayout& l, const std::uint8_t* report) {
  return read_header_field(l, report, l.timestamp_offset());
}

std::uint64_t read_gpu_ticks_field(const FormatLayout& l, const std::uint8_t* report) {
  return l.gpu_ticks_offset < 0 ? 0 : read_header_field(l, report, l.gpu_ticks_offset);
}

void decode_into(const FormatLayout& l, std::span<const std::uint8_t> bytes, Report& r) {
  if (bytes.size() < static_cast<std::size_t>(l.size_bytes)) {
    throw std::invalid_argument(
        fmt::format("{} report needs {} bytes, got {}", l.name, l.size_bytes, bytes.size()));
  }
  r.rpt_id = load32(bytes, 0);
  r.header_bits = static_cast<std::uint8_t>(l.header_bits());
  r.timestamp_shift = static_cast<std::uint8_t>(l.timestamp_shift);
  r.timestamp = read_timestamp_field(l, bytes.data());
  r.ctx_id = load32(bytes, l.ctx_id_offset());
  if (l.gpu_ticks_offset >= 0) {
    r.gpu_ticks = read_gpu_ticks_field(l, bytes.data());
    r.has_gpu_ticks = true;
  }
  for (const CounterRun& run : l.a_runs) {
    for (int i = 0; i < run.count; ++i) {
      const auto idx = static_cast<std::size_t>(run.first + i);
      r.a[idx] = read_run_counter(run, bytes.data(), i);
      r.a_present[idx] = true;
      r.a_bits[idx] = static_cast<std::uint8_t>(run.bits);
    }
  }
  for (int i = 0; i < l.b_count; ++i) r.b[i] = load32(bytes, l.b_offset + 4 * i);
  for (int i = 0; i < l.c_count; ++i) r.c[i] = load32(bytes, l.c_offset + 4 * i);
}

std::uint32_t report_reasons(std::uint32_t rpt_id, Generation gen) {
  switch (gen) {
    case Generation::kGen7_5:
      return 0;
    case Generation::kGen12:
    case Generation::kXeHpg:
    case Generation::kXeLpg:
      return (rpt_id >> 19) & 0x7F;  // OAREPORT_REASON_MASK_EXTENDED
    // IGT's intel_xe_perf_read_report_reason (lib/xe/xe_oa.c @ b3d809d537fe) decodes reasons up
    // to graphics version 12 only and calls Xe2's "unknown": oaprof decodes none either.
    case Generation::kXe2:
      return 0;
    default:
      return (rpt_id >> 19) & 0x3F;
  }
}

std::string report_reason_names(std::uint32_t reasons) {
  static constexpr std::pair<std::uint32_t, const char*> kNames[] = {
      {kReasonTimer, "timer"},
      {kReasonTrigger1, "trigger1"},
      {kReasonTrigger2, "trigger2"},
      {kReasonContextSwitch, "context_switch"},
      {kReasonGoTransition, "go_transition"},
      {kReasonClockRatioChange, "clock_ratio_change"},
      {kReasonMmioTrigger, "mmio_trigger"},
  };
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((reasons & bit) == 0) continue;
    if (!out.empty()) out += '|';
    out += name;
    reasons &= ~bit;
  }
  if (reasons != 0) out += fmt::format("{}0x{:x}", out.empty() ? "" : "|", reasons);
  return out.empty() ? "none" : out;
}

bool context_id_valid(std::uint32_t rpt_id, Generation gen) {
  switch (gen) {
    case Generation::kGen7_5:
      return false;
    case Generation::kGen8:
      return (rpt_id & (1u << 25)) != 0;
    default:
      return (rpt_id & (1u << 16)) != 0;
  }
}

std::optional<ClockRatio> clock_ratio(std::uint32_t rpt_id, Generation gen) {
  if (gen == Generation::kGen7_5) return std::nullopt;
  constexpr double kUnitMhz = 50.0 / 3.0;  // 16.667 MHz
  const std::uint32_t unslice = rpt_id & 0x1FF;
  const std::uint32_t slice = ((rpt_id >> 25) & 0x7F) | (((rpt_id >> 9) & 3) << 7);
  return ClockRatio{unslice * kUnitMhz, slice * kUnitMhz};
}

RawReport encode(ReportFormat format, const Report& report) {
  const FormatLayout& l = layout_of(format);
  RawReport raw;
  raw.size = l.size_bytes;
  std::uint8_t* out = raw.bytes.data();
  store32(out, 0, report.rpt_id);
  if (l.header64) {
    store64(out, l.timestamp_offset(), report.timestamp);
  } else {
    store32(out, 4, static_cast<std::uint32_t>(report.timestamp));
  }
  store32(out, l.ctx_id_offset(), report.ctx_id);
  if (l.gpu_ticks_offset >= 0) {
    if (l.header64) {
      store64(out, l.gpu_ticks_offset, report.gpu_ticks);
    } else {
      store32(out, l.gpu_ticks_offset, static_cast<std::uint32_t>(report.gpu_ticks));
    }
  }
  for (const CounterRun& run : l.a_runs) {
    for (int i = 0; i < run.count; ++i) {
      store_counter(out, run, i, report.a[static_cast<std::size_t>(run.first + i)]);
    }
  }
  for (int i = 0; i < l.b_count; ++i) store32(out, l.b_offset + 4 * i, report.b[i]);
  for (int i = 0; i < l.c_count; ++i) store32(out, l.c_offset + 4 * i, report.c[i]);
  return raw;
}

}  // namespace oaprof::oa
