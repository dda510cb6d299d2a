#include "oa/perf_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace oaprof::oa {
namespace {

using ::testing::HasSubstr;

std::vector<std::uint8_t> report_bytes(int size, std::uint8_t fill) {
  return std::vector<std::uint8_t>(static_cast<std::size_t>(size), fill);
}

TEST(PerfRecordTest, SplitsSamplesAndLostRecords) {
  std::vector<std::uint8_t> stream;
  const auto r1 = report_bytes(256, 0x11);
  const auto r2 = report_bytes(256, 0x22);
  append_perf_record(stream, PerfRecord::Type::kSample, r1);
  append_perf_record(stream, PerfRecord::Type::kReportLost);
  append_perf_record(stream, PerfRecord::Type::kSample, r2);
  append_perf_record(stream, PerfRecord::Type::kBufferLost);
  ASSERT_EQ(stream.size(), 8 + 256 + 8 + 8 + 256 + 8u);
  const auto records = parse_perf_records(stream, 256);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].type, PerfRecord::Type::kSample);
  ASSERT_EQ(records[0].report.size(), 256u);
  EXPECT_EQ(records[0].report[0], 0x11);
  EXPECT_EQ(records[0].report.data(), stream.data() + 8);
  EXPECT_EQ(records[1].type, PerfRecord::Type::kReportLost);
  EXPECT_TRUE(records[1].report.empty());
  EXPECT_EQ(records[2].report[255], 0x22);
  EXPECT_EQ(records[3].type, PerfRecord::Type::kBufferLost);
  EXPECT_EQ(perf_record_type_name(records[3].type), "buffer_lost");
}

TEST(PerfRecordTest, HeaderIsTypePadSizeLittleEndian) {
  std::vector<std::uint8_t> stream;
  append_perf_record(stream, PerfRecord::Type::kSample, report_bytes(64, 0));
  std::uint32_t type = 0;
  std::uint16_t size = 0;
  std::memcpy(&type, stream.data(), 4);
  std::memcpy(&size, stream.data() + 6, 2);
  EXPECT_EQ(type, 1u);
  EXPECT_EQ(size, 72u);
}

TEST(PerfRecordTest, MalformedRecordsAreRefusedWithTheirOffset) {
  std::vector<std::uint8_t> good;
  append_perf_record(good, PerfRecord::Type::kReportLost);
  {
    auto bad = good;
    bad.resize(bad.size() + 4);  // a truncated header
    try {
      parse_perf_records(bad, 256);
      FAIL();
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("offset 8"));
    }
  }
  {
    auto bad = good;
    bad[0] = 9;  // unknown type
    EXPECT_THROW(parse_perf_records(bad, 256), std::invalid_argument);
  }
  {
    auto bad = good;
    bad[6] = 0;  // size 0 would loop forever
    EXPECT_THROW(parse_perf_records(bad, 256), std::invalid_argument);
  }
  {
    auto bad = good;
    bad[6] = 12;  // not a multiple of 8
    EXPECT_THROW(parse_perf_records(bad, 256), std::invalid_argument);
  }
  {
    std::vector<std::uint8_t> wrong_size;
    append_perf_record(wrong_size, PerfRecord::Type::kSample, report_bytes(64, 0));
    try {
      parse_perf_records(wrong_size, 256);
      FAIL();
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("--format"));
    }
  }
  {
    auto past_end = good;
    past_end[6] = 16;  // claims more bytes than there are
    EXPECT_THROW(parse_perf_records(past_end, 256), std::invalid_argument);
  }
  EXPECT_THROW(parse_perf_records(good, 0), std::invalid_argument);
  EXPECT_TRUE(parse_perf_records({}, 256).empty());
}

}  // namespace
}  // namespace oaprof::oa
