// Fuzzes the decoder of captured report streams (`oaprof decode` input): raw reports of any
// format and i915 perf records. Any input must decode or be refused with std::invalid_argument,
// never crash. The first byte picks the format and the input kind. The same bytes read piece by
// piece (as `oaprof decode` reads a file) must give the same entries, or the same refusal.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "oa/accumulator.h"
#include "oa/builtin_metric_set.h"
#include "oa/report_stream.h"
#include "oa/topology.h"

namespace {

using namespace oaprof::oa;

// Every entry's offset and kind, or nothing when the input is refused.
std::optional<std::vector<std::pair<std::size_t, bool>>> summary(const PieceSource& input,
                                                                 ReportFormat format,
                                                                 StreamKind kind) {
  std::vector<std::pair<std::size_t, bool>> entries;
  try {
    read_report_stream(input, format, kind,
                       [&](const StreamEntry& e) { entries.emplace_back(e.offset, e.lost); });
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  return entries;
}

void check_pieces_read_as_whole(std::span<const std::uint8_t> bytes, ReportFormat format,
                                StreamKind kind) {
  const std::size_t piece_bytes = bytes.empty() ? 1 : 1 + bytes[0] % 97;
  const auto whole = summary([bytes](const auto& piece) { piece(bytes); }, format, kind);
  const auto pieces = summary(
      [&](const auto& piece) {
        for (std::size_t at = 0; at < bytes.size(); at += piece_bytes) {
          piece(bytes.subspan(at, std::min(piece_bytes, bytes.size() - at)));
        }
      },
      format, kind);
  if (whole != pieces) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto formats = all_formats();
  const FormatLayout& layout = formats[(data[0] & 0x7Fu) % formats.size()];
  const StreamKind kind =
      (data[0] & 0x80) != 0 ? StreamKind::kPerfRecords : StreamKind::kRawReports;
  const std::span<const std::uint8_t> bytes(data + 1, size - 1);
  static const Platform platform = simulated_platform();
  static const MetricSet set = builtin_metric_set(platform);
  try {
    const auto entries = read_report_stream(bytes, layout.format, kind);
    DecodeOptions options;
    options.metric_set = &set;
    options.vars = device_variables(platform);
    options.max_interval_ns = max_safe_read_interval_ns(1150, 24);
    decode_rows(entries, options);
  } catch (const std::invalid_argument&) {
  }
  check_pieces_read_as_whole(bytes, layout.format, kind);
  // The raw accumulation path over whatever whole reports the bytes hold.
  Accumulator acc(12e6, 1e9);
  const auto n = static_cast<std::size_t>(layout.size_bytes);
  for (std::size_t off = 0; off + n <= bytes.size(); off += n)
    acc.add_raw(layout, bytes.subspan(off, n));
  return 0;
}
