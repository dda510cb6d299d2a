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
  for (const auto& l : all_formats()) {
    Report in;
    in.rpt_id = 5;
    in.timestamp = 123456;
    in.gpu_ticks = 42;
    for (int i = 0; i < kMaxNumA; ++i) {
      in.a[i] = (static_cast<std::uint64_t>(i) << 32) + 1000u * static_cast<unsigned>(i) + 1;
    }
    for (int i = 0; i < kNumB; ++i) in.b[i] = 10u + i;
    for (int i = 0; i < kNumC; ++i) in.c[i] = 20u + i;
    const RawReport raw = encode(l.format, in);
    EXPECT_EQ(raw.size, l.size_bytes) << l.name;
    const Report out = decode(l.format, std::span(raw.bytes.data(), raw.size));
    int present = 0;
    for (int i = 0; i < kMaxNumA; ++i) {
      if (!out.a_present[i]) continue;
      ++present;
      const std::uint64_t mask = out.a_is_40bit[i] ? (std::uint64_t{1} << 40) - 1 : 0xFFFFFFFFu;
      EXPECT_EQ(out.a[i], in.a[i] & mask) << l.name << " A" << i;
    }
    for (int i = 0; i < l.b_count; ++i) EXPECT_EQ(out.b[i], in.b[i]) << l.name;
    for (int i = 0; i < l.c_count; ++i) EXPECT_EQ(out.c[i], in.c[i]) << l.name;
    EXPECT_EQ(present, l.a_count + l.a32_count) << l.name;
    EXPECT_EQ(out.has_gpu_ticks, l.gpu_ticks_offset >= 0);
  }
}

TEST(ReportTest, ShortBufferIsRefused) {
  std::vector<std::uint8_t> bytes(255, 0);
  EXPECT_THROW(decode(ReportFormat::kA32u40_A4u32_B8_C8, bytes), std::invalid_argument);
  std::vector<std::uint8_t> small(64, 0);
  EXPECT_NO_THROW(decode(ReportFormat::kC4_B8, small));
}

TEST(ReportTest, HaswellA45HasThirtyTwoBitACountersAndNoTicks) {
  std::vector<std::uint8_t> bytes(256, 0);
  bytes[12 + 4 * 44] = 0x44;  // A44
  bytes[192] = 0xB0;          // B0
  const Report r = decode(ReportFormat::kA45_B8_C8, bytes);
  EXPECT_TRUE(r.a_present[44]);
  EXPECT_FALSE(r.a_is_40bit[44]);
  EXPECT_EQ(r.a[44], 0x44u);
  EXPECT_EQ(r.b[0], 0xB0u);
  EXPECT_FALSE(r.has_gpu_ticks);
  const Report b4 = decode(ReportFormat::kB4_C8_A16, std::vector<std::uint8_t>(128, 1));
  EXPECT_FALSE(b4.a_present[28]);
  EXPECT_TRUE(b4.a_present[29]);
  EXPECT_TRUE(b4.a_present[44]);
}

TEST(ReportTest, ReportIdFieldsPerGeneration) {
  // Timer and context-switch reasons (bits 19 and 22), context valid at bit 16 (Gen9+).
  const std::uint32_t gen9 = (1u << 19) | (1u << 22) | (1u << 16);
  EXPECT_EQ(report_reasons(gen9, Generation::kGen9), kReasonTimer | kReasonContextSwitch);
  EXPECT_EQ(report_reason_names(report_reasons(gen9, Generation::kGen9)), "timer|context_switch");
  EXPECT_TRUE(context_id_valid(gen9, Generation::kGen9));
  EXPECT_FALSE(context_id_valid(gen9, Generation::kGen8));  // Gen8 uses bit 25
  EXPECT_TRUE(context_id_valid(1u << 25, Generation::kGen8));
  EXPECT_FALSE(context_id_valid(~0u, Generation::kGen7_5));
  // Gen12 widens the reason field by one bit.
  EXPECT_EQ(report_reasons(1u << 25, Generation::kGen12), 0x40u);
  EXPECT_EQ(report_reasons(1u << 25, Generation::kGen11), 0u);
  EXPECT_EQ(report_reason_names(0), "none");
  EXPECT_EQ(report_reason_names(0x40), "0x40");
  EXPECT_EQ(report_reason_names(kReasonGoTransition | kReasonClockRatioChange),
            "go_transition|clock_ratio_change");
  // Clock ratio: unslice 69 × 16.667 = 1150 MHz; slice 0x45 | (0 << 7) likewise.
  const std::uint32_t ratio = 69u | (69u << 25);
  const auto clocks = clock_ratio(ratio, Generation::kGen9);
  ASSERT_TRUE(clocks.has_value());
  EXPECT_NEAR(clocks->unslice_mhz, 1150.0, 1e-9);
  EXPECT_NEAR(clocks->slice_mhz, 1150.0, 1e-9);
  // The slice ratio's two high bits sit at 10:9.
  EXPECT_NEAR(clock_ratio(3u << 9, Generation::kGen11)->slice_mhz, (3 << 7) * 50.0 / 3.0, 1e-9);
  // Gen8 is decoded too, from the same bits (Mesa gfx8_read_report_clock_ratios, ver >= 8);
  // Haswell has no clock-ratio field.
  const auto gen8 = clock_ratio(60u | (60u << 25) | (1u << 9), Generation::kGen8);
  ASSERT_TRUE(gen8.has_value());
  EXPECT_NEAR(gen8->unslice_mhz, 1000.0, 1e-9);
  EXPECT_NEAR(gen8->slice_mhz, (60 | (1 << 7)) * 50.0 / 3.0, 1e-9);
  EXPECT_FALSE(clock_ratio(ratio, Generation::kGen7_5).has_value());
}

}  // namespace
}  // namespace oaprof::oa
