#include "oa/report.h"

#include <gtest/gtest.h>

#include <vector>

namespace oaprof::oa {
namespace {

TEST(ReportTest, DecodesA36B8C8FromTheReferenceOffsets) {
  std::vector<std::uint8_t> bytes(256, 0);
  auto put = [&](int off, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes[off + i] = static_cast<std::uint8_t>(v >> (8 * i));
  };
  put(0, 0x1234);       // RPT_ID
  put(4, 0xAABBCCDD);   // timestamp
  put(8, 7);            // ctx id
  put(12, 1000);        // GPU ticks
  put(16 + 4 * 7, 0xFFFFFFF0);  // A7 low
  bytes[160 + 7] = 0x12;        // A7 bits 39:32
  put(144 + 4 * 2, 99);         // A34
  put(192 + 4 * 3, 55);         // B3
  put(224 + 4 * 7, 77);         // C7
  const Report r = decode(ReportFormat::kA32u40_A4u32_B8_C8, bytes);
  EXPECT_EQ(r.rpt_id, 0x1234u);
  EXPECT_EQ(r.timestamp, 0xAABBCCDDu);
  EXPECT_EQ(r.ctx_id, 7u);
  EXPECT_EQ(r.gpu_ticks, 1000u);
  EXPECT_EQ(r.a[7], 0x12FFFFFFF0ull);
  EXPECT_TRUE(r.a_is_40bit[7]);
  EXPECT_EQ(r.a[34], 99u);
  EXPECT_FALSE(r.a_is_40bit[34]);
  EXPECT_EQ(r.b[3], 55u);
  EXPECT_EQ(r.c[7], 77u);
}

TEST(ReportTest, EncodeThenDecodeIsIdentityForEveryFormat) {
  for (const auto& l : formats_for(Generation::kGen9)) {
    Report in;
    in.rpt_id = 5;
    in.timestamp = 123456;
    in.gpu_ticks = 42;
    for (int i = 0; i < kNumA; ++i) in.a[i] = (std::uint64_t{i} << 32) + 1000u * i + 1;
    for (int i = 0; i < kNumB; ++i) in.b[i] = 10u + i;
    for (int i = 0; i < kNumC; ++i) in.c[i] = 20u + i;
    const RawReport raw = encode(l.format, in);
    EXPECT_EQ(raw.size, l.size_bytes) << l.name;
    const Report out = decode(l.format, std::span(raw.bytes.data(), raw.size));
    for (int i = 0; i < kNumA; ++i) {
      if (!out.a_present[i]) continue;
      const std::uint64_t mask = out.a_is_40bit[i] ? (std::uint64_t{1} << 40) - 1 : 0xFFFFFFFFu;
      EXPECT_EQ(out.a[i], in.a[i] & mask) << l.name << " A" << i;
    }
    for (int i = 0; i < l.b_count; ++i) EXPECT_EQ(out.b[i], in.b[i]) << l.name;
    for (int i = 0; i < l.c_count; ++i) EXPECT_EQ(out.c[i], in.c[i]) << l.name;
    EXPECT_EQ(out.has_gpu_ticks, l.gpu_ticks_offset >= 0);
  }
}

TEST(ReportTest, ShortBufferIsRefused) {
  std::vector<std::uint8_t> bytes(255, 0);
  EXPECT_THROW(decode(ReportFormat::kA32u40_A4u32_B8_C8, bytes), std::invalid_argument);
  std::vector<std::uint8_t> small(64, 0);
  EXPECT_NO_THROW(decode(ReportFormat::kC4_B8, small));
}

}  // namespace
}  // namespace oaprof::oa
