#include "oa/perf_record.h"

#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::oa {

std::string_view perf_record_type_name(PerfRecord::Type type) {
  switch (type) {
    case PerfRecord::Type::kSample:
      return "sample";
    case PerfRecord::Type::kReportLost:
      return "report_lost";
    case PerfRecord::Type::kBufferLost:
      return "buffer_lost";
  }
  return "unknown";
}

namespace {

void check_report_size(int report_size_bytes) {
  if (report_size_bytes <= 0 || report_size_bytes % 8 != 0) {
    throw std::invalid_argument(fmt::format(
        "perf records: report size {} is not a positive multiple of 8", report_size_bytes));
  }
}

// The record's type from its header and its payload.
PerfRecord typed_record(std::uint32_t type, std::span<const std::uint8_t> payload,
                        int report_size_bytes, std::size_t offset) {
  switch (type) {
    case 1:
      if (payload.size() != static_cast<std::size_t>(report_size_bytes)) {
        throw std::invalid_argument(fmt::format(
            "perf records: sample at offset {} carries {} bytes but the report format has {}; "
            "pass the --format the stream was opened with",
            offset, payload.size(), report_size_bytes));
      }
      return {PerfRecord::Type::kSample, payload};
    case 2:
      return {PerfRecord::Type::kReportLost, {}};
    case 3:
      return {PerfRecord::Type::kBufferLost, {}};
    default:
      throw std::invalid_argument(fmt::format(
          "perf records: record at offset {} has unknown type {} (1 sample, 2 report lost, 3 "
          "buffer lost)",
          offset, type));
  }
}

}  // namespace

std::optional<FramedPerfRecord> parse_perf_record(std::span<const std::uint8_t> bytes,
                                                  int report_size_bytes, std::size_t offset,
                                                  bool more_follows) {
  check_report_size(report_size_bytes);
  if (bytes.size() < kPerfRecordHeaderBytes) {
    if (more_follows) return std::nullopt;
    throw std::invalid_argument(fmt::format(
        "perf records: {} stray bytes at offset {} are too short for a record header; the "
        "input is truncated or is not an i915 perf stream",
        bytes.size(), offset));
  }
  std::uint32_t type = 0;
  std::uint16_t size = 0;
  std::memcpy(&type, bytes.data(), 4);
  std::memcpy(&size, bytes.data() + 6, 2);
  if (size < kPerfRecordHeaderBytes || size % 8 != 0 || (size > bytes.size() && !more_follows)) {
    throw std::invalid_argument(fmt::format(
        "perf records: record at offset {} has size {} ({} bytes remain); sizes are multiples "
        "of 8 of at least 8 bytes within the input",
        offset, size, bytes.size()));
  }
  if (size > bytes.size()) return std::nullopt;
  const auto payload = bytes.subspan(kPerfRecordHeaderBytes, size - kPerfRecordHeaderBytes);
  return FramedPerfRecord{typed_record(type, payload, report_size_bytes, offset), size};
}

std::vector<PerfRecord> parse_perf_records(std::span<const std::uint8_t> bytes,
                                           int report_size_bytes) {
  check_report_size(report_size_bytes);
  std::vector<PerfRecord> records;
  std::size_t offset = 0;
  while (offset < bytes.size()) {
    const auto framed = parse_perf_record(bytes.subspan(offset), report_size_bytes, offset, false);
    records.push_back(framed->record);
    offset += framed->size;
  }
  return records;
}

void append_perf_record(std::vector<std::uint8_t>& out, PerfRecord::Type type,
                        std::span<const std::uint8_t> report) {
  const std::size_t size = kPerfRecordHeaderBytes + report.size();
  if (size > 0xFFFF || size % 8 != 0) {
    throw std::invalid_argument(
        fmt::format("perf records: a {}-byte payload cannot be framed", report.size()));
  }
  const auto type_value = static_cast<std::uint32_t>(type);
  const std::uint16_t pad = 0;
  const auto size16 = static_cast<std::uint16_t>(size);
  std::uint8_t header[kPerfRecordHeaderBytes];
  std::memcpy(header, &type_value, 4);
  std::memcpy(header + 4, &pad, 2);
  std::memcpy(header + 6, &size16, 2);
  out.insert(out.end(), header, header + kPerfRecordHeaderBytes);
  out.insert(out.end(), report.begin(), report.end());
}

}  // namespace oaprof::oa
