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
  return detect_stream_kind([bytes](const auto& piece) { piece(bytes); }, format);
}

StreamKind detect_stream_kind(const PieceSource& input, ReportFormat format) {
  bool any_record = false;
  try {
    read_report_stream(input, format, StreamKind::kPerfRecords,
                       [&any_record](const StreamEntry&) { any_record = true; });
  } catch (const std::invalid_argument&) {
    return StreamKind::kRawReports;
  }
  return any_record ? StreamKind::kPerfRecords : StreamKind::kRawReports;
}

void read_report_stream(const PieceSource& input, ReportFormat format, StreamKind kind,
                        const StreamReader::Visit& visit) {
  StreamReader reader(format, kind);
  input([&](std::span<const std::uint8_t> piece) { reader.feed(piece, visit); });
  reader.finish(visit);
}

StreamReader::StreamReader(ReportFormat format, StreamKind kind)
    : layout_(layout_of(format)), kind_(kind) {}

void StreamReader::feed(std::span<const std::uint8_t> bytes, const Visit& visit) {
  if (pending_.empty()) {
    // The usual case: entries straight from the piece, only a cut one copied.
    const std::size_t used = take(bytes, false, visit);
    pending_.assign(bytes.begin() + static_cast<std::ptrdiff_t>(used), bytes.end());
    offset_ += used;
    return;
  }
  pending_.insert(pending_.end(), bytes.begin(), bytes.end());
  consumed(take(pending_, false, visit));
}

void StreamReader::finish(const Visit& visit) { consumed(take(pending_, true, visit)); }

void StreamReader::consumed(std::size_t used) {
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(used));
  offset_ += used;
}

std::size_t StreamReader::take(std::span<const std::uint8_t> bytes, bool at_end,
                               const Visit& visit) const {
  std::size_t at = 0;
  while (at < bytes.size()) {
    const auto entry = entry_at(bytes, at, at_end);
    if (!entry) break;
    visit(entry->first);
    at += entry->second;
  }
  return at;
}

std::optional<std::pair<StreamEntry, std::size_t>> StreamReader::entry_at(
    std::span<const std::uint8_t> bytes, std::size_t at, bool at_end) const {
  const auto size = static_cast<std::size_t>(layout_.size_bytes);
  StreamEntry e;
  e.offset = offset_ + at;
  if (kind_ == StreamKind::kRawReports) {
    if (bytes.size() - at < size) {
      if (!at_end) return std::nullopt;
      const std::size_t total = offset_ + bytes.size();
      throw std::invalid_argument(fmt::format(
          "{} bytes are not a whole number of {}-byte {} reports ({} bytes left over); check "
          "--format, or use --input perf for an i915 perf capture",
          total, size, layout_.name, total % size));
    }
    decode_into(layout_, bytes.subspan(at, size), e.report);
    return std::pair{e, size};
  }
  const auto framed = parse_perf_record(bytes.subspan(at), layout_.size_bytes, e.offset, !at_end);
  if (!framed) return std::nullopt;
  if (framed->record.type == PerfRecord::Type::kSample) {
    decode_into(layout_, framed->record.report, e.report);
  } else {
    e.lost = true;
    e.lost_type = framed->record.type;
  }
  return std::pair{e, framed->size};
}

std::vector<StreamEntry> read_report_stream(std::span<const std::uint8_t> bytes,
                                            ReportFormat format, StreamKind kind) {
  std::vector<StreamEntry> entries;
  read_report_stream([bytes](const auto& piece) { piece(bytes); }, format, kind,
                     [&entries](const StreamEntry& e) { entries.push_back(e); });
  return entries;
}

std::optional<DecodedRow> RowDecoder::next(const StreamEntry& e) {
  if (e.lost) {
    DecodedRow row;
    row.index = rows_++;
    row.begin_offset = row.end_offset = e.offset;
    row.lost = true;
    row.lost_type = e.lost_type;
    return row;  // the counters kept counting: the next pair spans the gap
  }
  std::optional<DecodedRow> row;
  if (previous_) {
    row.emplace();
    row->index = rows_++;
    row->begin_offset = previous_->offset;
    row->end_offset = e.offset;
    row->deltas = options_.max_interval_ns > 0
                      ? compute_deltas_checked(previous_->report, e.report, options_.timestamp_hz,
                                               options_.max_interval_ns)
                      : compute_deltas(previous_->report, e.report);
    row->end_reasons = report_reasons(e.report.rpt_id, options_.gen);
    row->context_valid = context_id_valid(e.report.rpt_id, options_.gen);
    row->ctx_id = e.report.ctx_id;
    if (options_.metric_set != nullptr) {
      row->metrics = options_.metric_set->evaluate(row->deltas, options_.vars);
    }
  }
  previous_ = e;
  return row;
}

std::vector<DecodedRow> decode_rows(std::span<const StreamEntry> entries,
                                    const DecodeOptions& options) {
  std::vector<DecodedRow> rows;
  RowDecoder decoder(options);
  for (const StreamEntry& e : entries) {
    if (auto row = decoder.next(e)) rows.push_back(std::move(*row));
  }
  return rows;
}

}  // namespace oaprof::oa
