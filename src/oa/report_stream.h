// Turns a captured stream of OA reports (raw reports back to back, or the records an i915 perf fd
// yields) into rows: for each pair of consecutive reports, the deltas and the counters of a metric
// set; lost-report records become rows flagged lost. `oaprof decode` and the fuzzer share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
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

// Perf records when the bytes parse as records carrying reports of `format` (at least one);
// raw reports else.
StreamKind detect_stream_kind(std::span<const std::uint8_t> bytes, ReportFormat format);

struct StreamEntry {
  std::size_t offset = 0;  // byte offset in the input
  bool lost = false;       // a kReportLost / kBufferLost record
  PerfRecord::Type lost_type = PerfRecord::Type::kReportLost;
  Report report;  // when !lost
};

// Reads a capture piece by piece, handing each entry on as soon as its bytes are in: memory is
// one piece and one record, whatever the length of the input (a hostile file of millions of
// lost-report records costs no more than a short one).
class StreamReader {
 public:
  using Visit = std::function<void(const StreamEntry&)>;
  StreamReader(ReportFormat format, StreamKind kind);
  // The next bytes of the input. Throws std::invalid_argument when a perf record is malformed
  // (the message gives the offset).
  void feed(std::span<const std::uint8_t> bytes, const Visit& visit);
  // The end of the input. Throws std::invalid_argument when raw input is not a whole number of
  // reports or the last perf record is cut short.
  void finish(const Visit& visit);

 private:
  // Hands on every whole entry at the start of `bytes` (which start at offset_); the bytes used.
  std::size_t take(std::span<const std::uint8_t> bytes, bool at_end, const Visit& visit) const;
  // The entry `at` bytes into `bytes` and its size; nullopt when its bytes are not all in yet.
  std::optional<std::pair<StreamEntry, std::size_t>> entry_at(std::span<const std::uint8_t> bytes,
                                                              std::size_t at, bool at_end) const;
  // Drops the first `used` bytes of pending_, which have been handed on.
  void consumed(std::size_t used);

  const FormatLayout& layout_;
  StreamKind kind_;
  std::vector<std::uint8_t> pending_;  // the start of an entry the last piece cut
  std::size_t offset_ = 0;             // where the bytes not yet handed on start in the input
};

// An input given piece by piece: calls its argument with each piece, in order (a file read a
// piece at a time, or a whole buffer as one piece).
using PieceSource =
    std::function<void(const std::function<void(std::span<const std::uint8_t>)>& piece)>;

// detect_stream_kind and the reading of a whole input, piece by piece.
StreamKind detect_stream_kind(const PieceSource& input, ReportFormat format);
void read_report_stream(const PieceSource& input, ReportFormat format, StreamKind kind,
                        const StreamReader::Visit& visit);

// The whole input at once (tests, the fuzzer): throws as StreamReader does.
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

// Turns entries into rows one at a time, keeping only the previous report.
class RowDecoder {
 public:
  explicit RowDecoder(DecodeOptions options) : options_(std::move(options)) {}
  // The row `entry` ends: its own when it is a lost record, else the pair of the previous report
  // and it; nullopt for the first report.
  std::optional<DecodedRow> next(const StreamEntry& entry);

 private:
  DecodeOptions options_;
  std::optional<StreamEntry> previous_;  // the last report
  std::size_t rows_ = 0;
};

std::vector<DecodedRow> decode_rows(std::span<const StreamEntry> entries,
                                    const DecodeOptions& options);

}  // namespace oaprof::oa
