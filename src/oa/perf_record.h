// Parser of the record stream an i915 perf fd yields on read(): `{u32 type; u16 pad; u16 size}`
// headers each followed by a payload (reference/hardware.md §6). Pure, bounds-checked code so that
// the hardware layer, `oaprof decode` and the fuzzer share one implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace oaprof::oa {

struct PerfRecord {
  // drm_i915_perf_record_type values.
  enum class Type : std::uint32_t { kSample = 1, kReportLost = 2, kBufferLost = 3 };
  Type type = Type::kSample;
  std::span<const std::uint8_t> report;  // the OA report of a kSample; empty otherwise
};

inline constexpr int kPerfRecordHeaderBytes = 8;

std::string_view perf_record_type_name(PerfRecord::Type type);

// Splits `bytes` into records whose samples carry one report of `report_size_bytes` (the stream
// was opened with SAMPLE_OA only). Throws std::invalid_argument on an unknown type, a size that is
// not a multiple of 8, smaller than a header, past the end of `bytes`, or a sample whose payload
// is not exactly one report; the message gives the byte offset of the bad record.
std::vector<PerfRecord> parse_perf_records(std::span<const std::uint8_t> bytes,
                                           int report_size_bytes);

struct FramedPerfRecord {
  PerfRecord record;
  std::size_t size = 0;  // bytes of the record, header included
};

// The record at the start of `bytes`, for readers that get a stream piece by piece: `offset` is
// where `bytes` starts in the input (for messages). nullopt when `bytes` holds only the start of
// the record and `more_follows`; else throws as parse_perf_records does.
std::optional<FramedPerfRecord> parse_perf_record(std::span<const std::uint8_t> bytes,
                                                  int report_size_bytes, std::size_t offset,
                                                  bool more_follows);

// Lays records out as i915 does; the inverse of parse_perf_records (tests, simulated streams).
void append_perf_record(std::vector<std::uint8_t>& out, PerfRecord::Type type,
                        std::span<const std::uint8_t> report = {});

}  // namespace oaprof::oa
