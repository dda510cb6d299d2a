#include "oa/report_stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oa/builtin_metric_set.h"
#include "oa/topology.h"

namespace oaprof::oa {
namespace {

using ::testing::HasSubstr;
constexpr auto kFormat = ReportFormat::kA32u40_A4u32_B8_C8;

RawReport raw_report(std::uint32_t ts, std::uint32_t ticks, std::uint64_t a0,
                     std::uint32_t rpt_id = 0) {
  Report r = decode(kFormat, std::vector<std::uint8_t>(256, 0));
  r.rpt_id = rpt_id;
  r.timestamp = ts;
  r.gpu_ticks = ticks;
  r.a[0] = a0;
  return encode(kFormat, r);
}

void append(std::vector<std::uint8_t>& out, const RawReport& r) {
  out.insert(out.end(), r.bytes.begin(), r.bytes.begin() + r.size);
}

TEST(ReportStreamTest, RawReportsBecomePairwiseRowsWithMetrics) {
  std::vector<std::uint8_t> bytes;
  append(bytes, raw_report(0, 0, 0));
  append(bytes, raw_report(12'000, 1'000'000, 500'000, (1u << 19) | (1u << 16)));
  append(bytes, raw_report(24'000, 2'000'000, 1'500'000));
  ASSERT_EQ(detect_stream_kind(bytes, kFormat), StreamKind::kRawReports);
  const auto entries = read_report_stream(bytes, kFormat, StreamKind::kRawReports);
  ASSERT_EQ(entries.size(), 3u);
  const Platform kbl = *platform_by_name("kblgt2");
  const MetricSet set = builtin_metric_set(kbl);
  DecodeOptions options;
  options.metric_set = &set;
  options.vars = device_variables(kbl);
  options.max_interval_ns = max_safe_read_interval_ns(1150, 24);
  const auto rows = decode_rows(entries, options);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].end_offset, 256u);
  EXPECT_EQ(rows[0].end_reasons, kReasonTimer);
  EXPECT_TRUE(rows[0].context_valid);
  EXPECT_FALSE(rows[0].deltas.interval_too_long);
  const auto busy = static_cast<std::size_t>(*set.counter_index("GpuBusy"));
  EXPECT_DOUBLE_EQ(rows[0].metrics[busy].as_double(), 50.0);
  EXPECT_DOUBLE_EQ(rows[1].metrics[busy].as_double(), 100.0);
}

TEST(ReportStreamTest, PerfRecordsWithLostRecordsBecomeFlaggedRows) {
  std::vector<std::uint8_t> bytes;
  const RawReport r0 = raw_report(0, 0, 0), r1 = raw_report(1200, 100, 50),
                  r2 = raw_report(2400, 200, 100);
  append_perf_record(bytes, PerfRecord::Type::kSample, {r0.bytes.data(), 256});
  append_perf_record(bytes, PerfRecord::Type::kReportLost);
  append_perf_record(bytes, PerfRecord::Type::kSample, {r1.bytes.data(), 256});
  append_perf_record(bytes, PerfRecord::Type::kBufferLost);
  append_perf_record(bytes, PerfRecord::Type::kSample, {r2.bytes.data(), 256});
  ASSERT_EQ(detect_stream_kind(bytes, kFormat), StreamKind::kPerfRecords);
  const auto entries = read_report_stream(bytes, kFormat, StreamKind::kPerfRecords);
  ASSERT_EQ(entries.size(), 5u);
  EXPECT_EQ(entries[2].offset, 8u + 256 + 8);
  const auto rows = decode_rows(entries, {});
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_TRUE(rows[0].lost);
  EXPECT_EQ(rows[0].lost_type, PerfRecord::Type::kReportLost);
  EXPECT_FALSE(rows[1].lost);
  EXPECT_EQ(rows[1].deltas.a[0], 50u);  // the pair spans the lost record
  EXPECT_TRUE(rows[2].lost);
  EXPECT_EQ(rows[2].lost_type, PerfRecord::Type::kBufferLost);
  EXPECT_EQ(rows[3].deltas.timestamp, 1200u);
  EXPECT_TRUE(rows[3].metrics.empty());
}

TEST(ReportStreamTest, TruncatedInputIsAClearError) {
  std::vector<std::uint8_t> bytes(300, 0);
  try {
    read_report_stream(bytes, kFormat, StreamKind::kRawReports);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("44 bytes left over"));
  }
  EXPECT_THROW(read_report_stream(bytes, kFormat, StreamKind::kPerfRecords), std::invalid_argument);
  EXPECT_EQ(parse_stream_kind("perf"), StreamKind::kPerfRecords);
  EXPECT_THROW(parse_stream_kind("xml"), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::oa
