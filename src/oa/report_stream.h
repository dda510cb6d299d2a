// Turns a captured stream of OA reports (raw reports back to back, or the records an i915 perf fd
// yields) into rows: for each pair of consecutive reports, the deltas and the counters of a metric
// set; lost-report records become rows flagged lost. `oaprof decode` and the fuzzer share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "oa/delta.h"
#include "oa/equation.h"
#include "oa/metric_set.h"
#include "oa/perf_record.h"
#include "oa/platform.h"
#include "oa/report.h"

namespace oaprof::oa {

enum class StreamKind { kRawReports, kPerfRecords };

// Parses "raw", "perf" (and "auto" → nullopt-like detection by the caller).
StreamKind parse_stream_kind(std::string_view text);

// Perf records when the bytes parse as records carrying reports of `format`; raw reports else.
StreamKind detect_stream_kind(std::span<const std::uint8_t> bytes, ReportFormat format);

struct StreamEntry {
  std::size_t offset = 0;  // byte offset in the input
  bool lost = false;       // a kReportLost / kBufferLost record
  PerfRecord::Type lost_type = PerfRecord::Type::kReportLost;
  Report report;  // when !lost
};

// Throws std::invalid_argument when raw input is not a whole number of reports or a perf record
// is malformed (the message gives the offset).
std::vector<StreamEntry> read_report_stream(std::span<const std::uint8_t> bytes,
                                            ReportFormat format, StreamKind kind);

struct DecodedRow {
  std::size_t index = 0;  // row number
  std::size_t begin_offset = 0;
  std::size_t end_offset = 0;
  bool lost = false;
  PerfRecord::Type lost_type = PerfRecord::Type::kReportLost;
  std::uint32_t end_reasons = 0;  // report_reasons of the end report
  bool context_valid = false;     // of the end report
  std::uint32_t ctx_id = 0;       // of the end report
  CounterDeltas deltas;
  std::vector<EquationValue> metrics;  // by counter index of the set; empty without a set
};

struct DecodeOptions {
  Generation gen = Generation::kGen9;
  double timestamp_hz = 12e6;
  double max_interval_ns = 0;  // 0: no interval check
  const MetricSet* metric_set = nullptr;
  DeviceVariables vars;
};

std::vector<DecodedRow> decode_rows(std::span<const StreamEntry> entries,
                                    const DecodeOptions& options);

}  // namespace oaprof::oa
