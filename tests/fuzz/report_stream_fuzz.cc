// Fuzzes the decoder of captured report streams (`oaprof decode` input): raw reports of any
// format and i915 perf records. Any input must decode or be refused with std::invalid_argument,
// never crash. The first byte picks the format and the input kind.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

#include "oa/accumulator.h"
#include "oa/builtin_metric_set.h"
#include "oa/report_stream.h"
#include "oa/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace oaprof::oa;
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
  // The raw accumulation path over whatever whole reports the bytes hold.
  Accumulator acc(12e6, 1e9);
  const auto n = static_cast<std::size_t>(layout.size_bytes);
  for (std::size_t off = 0; off + n <= bytes.size(); off += n)
    acc.add_raw(layout, bytes.subspan(off, n));
  return 0;
}
