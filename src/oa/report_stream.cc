#include "oa/report_stream.h"

#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::oa {

StreamKind parse_stream_kind(std::string_view text) {
  if (text == "raw") return StreamKind::kRawReports;
  if (text == "perf") return StreamKind::kPerfRecords;
  throw std::invalid_argument(
      fmt::format("input kind '{}' is neither 'raw' (reports back to back) nor 'perf' (i915 "
                  "perf records)",
                  text));
}

StreamKind detect_stream_kind(std::span<const std::uint8_t> bytes, ReportFormat format) {
  try {
    if (!parse_perf_records(bytes, layout_of(format).size_bytes).empty()) {
      return StreamKind::kPerfRecords;
    }
  } catch (const std::invalid_argument&) {
  }
  return StreamKind::kRawReports;
}

std::vector<StreamEntry> read_report_stream(std::span<const std::uint8_t> bytes,
                                            ReportFormat format, StreamKind kind) {
  const FormatLayout& layout = layout_of(format);
  const auto size = static_cast<std::size_t>(layout.size_bytes);
  std::vector<StreamEntry> entries;
  if (kind == StreamKind::kRawReports) {
    if (bytes.size() % size != 0) {
      throw std::invalid_argument(fmt::format(
          "{} bytes are not a whole number of {}-byte {} reports ({} bytes left over); check "
          "--format, or use --input perf for an i915 perf capture",
          bytes.size(), size, layout.name, bytes.size() % size));
    }
    entries.reserve(bytes.size() / size);
    for (std::size_t off = 0; off < bytes.size(); off += size) {
      StreamEntry e;
      e.offset = off;
      decode_into(layout, bytes.subspan(off, size), e.report);
      entries.push_back(e);
    }
    return entries;
  }
  const auto records = parse_perf_records(bytes, layout.size_bytes);
  entries.reserve(records.size());
  for (const PerfRecord& r : records) {
    StreamEntry e;
    e.offset = r.report.empty() ? 0 : static_cast<std::size_t>(r.report.data() - bytes.data());
    if (r.type == PerfRecord::Type::kSample) {
      e.offset -= kPerfRecordHeaderBytes;
      decode_into(layout, r.report, e.report);
    } else {
      e.lost = true;
      e.lost_type = r.type;
    }
    entries.push_back(e);
  }
  // Lost records carry no payload: give them the offset just after the previous record.
  std::size_t next = 0;
  for (StreamEntry& e : entries) {
    if (e.lost) {
      e.offset = next;
      next += kPerfRecordHeaderBytes;
    } else {
      next = e.offset + kPerfRecordHeaderBytes + size;
    }
  }
  return entries;
}

std::vector<DecodedRow> decode_rows(std::span<const StreamEntry> entries,
                                    const DecodeOptions& options) {
  std::vector<DecodedRow> rows;
  const StreamEntry* previous = nullptr;
  for (const StreamEntry& e : entries) {
    if (e.lost) {
      DecodedRow row;
      row.index = rows.size();
      row.begin_offset = row.end_offset = e.offset;
      row.lost = true;
      row.lost_type = e.lost_type;
      rows.push_back(std::move(row));
      continue;  // the counters kept counting: the next pair spans the gap
    }
    if (previous != nullptr) {
      DecodedRow row;
      row.index = rows.size();
      row.begin_offset = previous->offset;
      row.end_offset = e.offset;
      row.deltas = options.max_interval_ns > 0
                       ? compute_deltas_checked(previous->report, e.report, options.timestamp_hz,
                                                options.max_interval_ns)
                       : compute_deltas(previous->report, e.report);
      row.end_reasons = report_reasons(e.report.rpt_id, options.gen);
      row.context_valid = context_id_valid(e.report.rpt_id, options.gen);
      row.ctx_id = e.report.ctx_id;
      if (options.metric_set != nullptr) {
        row.metrics = options.metric_set->evaluate(row.deltas, options.vars);
      }
      rows.push_back(std::move(row));
    }
    previous = &e;
  }
  return rows;
}

}  // namespace oaprof::oa
