#include "oa/report.h"

#include "oa/delta.h"

#include <gtest/gtest.h>

#include <vector>

namespace oaprof::oa {
namespace {

TEST(ReportTest, DecodesA36B8C8FromTheReferenceOffsets) {
  std::vector<std::uint8_t> bytes(256, 0);
  auto put = [&](int off, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes[off + i] = static_cast<std::uint8_t>(v >> (8 * i));
  };
  put(0, 0x1234);               // RPT_ID
  put(4, 0xAABBCCDD);           // timestamp
  put(8, 7);                    // ctx id
  put(12, 1000);                // GPU ticks
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
  EXPECT_EQ(r.a_bits[7], 40);
  EXPECT_EQ(r.a[34], 99u);
  EXPECT_EQ(r.a_bits[34], 32);
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
      const int bits = out.a_bits[i];
      const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
      EXPECT_EQ(out.a[i], in.a[i] & mask) << l.name << " A" << i;
    }
    for (int i = 0; i < l.b_count; ++i) EXPECT_EQ(out.b[i], in.b[i]) << l.name;
    for (int i = 0; i < l.c_count; ++i) EXPECT_EQ(out.c[i], in.c[i]) << l.name;
    EXPECT_EQ(present, l.a_total()) << l.name;
    EXPECT_EQ(out.rpt_id, 5u) << l.name;
    EXPECT_EQ(out.timestamp, 123456u) << l.name;
    if (l.gpu_ticks_offset >= 0) {
      EXPECT_EQ(out.gpu_ticks, 42u) << l.name;
    }
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
  EXPECT_EQ(r.a_bits[44], 32);
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
  EXPECT_EQ(report_reason_names(0x40), "mmio_trigger");
  EXPECT_EQ(report_reason_names(0x80), "0x80");
  EXPECT_EQ(report_reasons(1u << 25, Generation::kXeLpg), 0x40u);  // i915: GRAPHICS_VER 12
  EXPECT_TRUE(context_id_valid(1u << 16, Generation::kXeLpg));
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

// Little-endian stores into a literal report.
void put32(std::vector<std::uint8_t>& bytes, int off, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[off + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
void put64(std::vector<std::uint8_t>& bytes, int off, std::uint64_t v) {
  put32(bytes, off, static_cast<std::uint32_t>(v));
  put32(bytes, off + 4, static_cast<std::uint32_t>(v >> 32));
}

TEST(ReportTest, DecodesA24u40FromLiteralBytes) {
  // Offsets per igt lib/i915/perf.c intel_perf_accumulate_reports (b3d809d537fe).
  std::vector<std::uint8_t> bytes(256, 0);
  put32(bytes, 0, (1u << 19) | (1u << 16));  // timer, context valid
  put32(bytes, 4, 0x1000);                   // timestamp (shifted on Xe-LPG)
  put32(bytes, 12, 777);                     // GPU ticks
  put32(bytes, 16 + 4 * 3, 0xA3);            // A3, 32-bit
  put32(bytes, 16 + 4 * 4, 0x44);            // A4 low dword ...
  bytes[160 + 4] = 0x04;                     // ... and bits 39:32
  put32(bytes, 112, 0x24);                   // A24, 32-bit
  put32(bytes, 128 + 4 * 3, 0x31);           // A31 low ...
  bytes[188 + 3] = 0xFF;                     // ... bits 39:32
  put32(bytes, 160, 0x36);                   // A36 at dword 40
  put32(bytes, 184, 0x37);                   // A37 at dword 46
  put32(bytes, 192, 0xB0);
  put32(bytes, 252, 0xC7);
  const Report r = decode(ReportFormat::kA24u40_A14u32_B8_C8, bytes);
  EXPECT_EQ(r.a[3], 0xA3u);
  EXPECT_EQ(r.a_bits[3], 32);
  EXPECT_EQ(r.a[4], 0x0400000044ull);
  EXPECT_EQ(r.a_bits[4], 40);
  EXPECT_EQ(r.a[24], 0x24u);
  EXPECT_EQ(r.a_bits[24], 32);
  EXPECT_EQ(r.a[31], 0xFF00000031ull);
  EXPECT_EQ(r.a[36], 0x36u);
  EXPECT_EQ(r.a[37], 0x37u);
  EXPECT_TRUE(r.a_present[37]);
  EXPECT_FALSE(r.a_present[38]);
  EXPECT_EQ(r.b[0], 0xB0u);
  EXPECT_EQ(r.c[7], 0xC7u);
  EXPECT_EQ(r.gpu_ticks, 777u);
  EXPECT_EQ(r.timestamp, 0x1000u);
  EXPECT_EQ(r.timestamp_shift, 1);
  EXPECT_EQ(report_reasons(r.rpt_id, Generation::kXeLpg), kReasonTimer);
}

TEST(ReportTest, DecodesTheOamFormatsSixtyFourBitHeader) {
  // igt tests/intel/perf.c mtl_oa_formats; i915 oa_report_id/oa_timestamp/oa_context_id for
  // HDR_64_BIT: id qword 0, timestamp qword 1, context dword 4; GPU clock qword 3.
  std::vector<std::uint8_t> bytes(192, 0);
  put64(bytes, 0, (std::uint64_t{0xAB} << 32) | (1u << 22));  // context-switch reason
  put64(bytes, 8, 0x1'2345'6789ull);
  put32(bytes, 16, 42);
  put64(bytes, 24, 0x5'0000'0001ull);
  put64(bytes, 32 + 8 * 7, 0x123'4567'89AB'CDEFull);  // MPEC7, 64-bit
  put32(bytes, 96 + 4 * 2, 0xB2);
  put32(bytes, 128 + 4 * 5, 0xC5);
  const Report r64 = decode(ReportFormat::kMpec8u64_B8_C8, bytes);
  EXPECT_EQ(r64.rpt_id, 1u << 22);
  EXPECT_EQ(report_reasons(r64.rpt_id, Generation::kXeLpg), kReasonContextSwitch);
  EXPECT_EQ(r64.timestamp, 0x1'2345'6789ull);
  EXPECT_EQ(r64.ctx_id, 42u);
  EXPECT_EQ(r64.gpu_ticks, 0x5'0000'0001ull);
  EXPECT_EQ(r64.header_bits, 64);
  EXPECT_EQ(r64.a[7], 0x123'4567'89AB'CDEFull);
  EXPECT_EQ(r64.a_bits[7], 64);
  EXPECT_EQ(r64.b[2], 0xB2u);
  EXPECT_EQ(r64.c[5], 0xC5u);

  std::vector<std::uint8_t> small(128, 0);
  put64(small, 8, 0x7'0000'0000ull);
  put32(small, 32 + 4 * 7, 0x77);
  put32(small, 64 + 4 * 1, 0xB1);
  put32(small, 96 + 4 * 6, 0xC6);
  const Report r32 = decode(ReportFormat::kMpec8u32_B8_C8, small);
  EXPECT_EQ(r32.timestamp, 0x7'0000'0000ull);
  EXPECT_EQ(r32.a[7], 0x77u);
  EXPECT_EQ(r32.a_bits[7], 32);
  EXPECT_FALSE(r32.a_present[8]);
  EXPECT_EQ(r32.b[1], 0xB1u);
  EXPECT_EQ(r32.c[6], 0xC6u);
  EXPECT_THROW(decode(ReportFormat::kMpec8u64_B8_C8, small), std::invalid_argument);
}

// Xe2's other formats, built by hand at metrics-discovery's offsets (md_calculation.cpp
// 80cc115575f1): a 32-byte header, the PECs from byte 32, B and C right after them.
TEST(ReportTest, DecodesXe2Pec64u64B8C8WithBAndCAfterThePecs) {
  std::vector<std::uint8_t> bytes(640, 0);
  put64(bytes, 8, 0x9'0000'0001ull);
  put64(bytes, 24, 0x3'0000'0002ull);
  put64(bytes, 32 + 8 * 63, 0xFEDC'BA98'7654'3210ull);  // PEC63
  put32(bytes, 544 + 4 * 0, 0xB0);
  put32(bytes, 544 + 4 * 7, 0xB7);
  put32(bytes, 576 + 4 * 7, 0xC7);
  const Report r = decode(ReportFormat::kPec64u64_B8_C8, bytes);
  EXPECT_EQ(r.timestamp, 0x9'0000'0001ull);
  EXPECT_EQ(r.gpu_ticks, 0x3'0000'0002ull);
  EXPECT_EQ(r.a[63], 0xFEDC'BA98'7654'3210ull);
  EXPECT_EQ(r.a_bits[63], 64);
  EXPECT_EQ(r.b[0], 0xB0u);
  EXPECT_EQ(r.b[7], 0xB7u);
  EXPECT_EQ(r.c[7], 0xC7u);
  EXPECT_THROW(decode(ReportFormat::kPec64u64_B8_C8, std::span(bytes).first(576)),
               std::invalid_argument);
}

TEST(ReportTest, DecodesXe2Pec64u32AndItsCountersWrapAt32Bits) {
  std::vector<std::uint8_t> begin(320, 0), end(320, 0);
  put32(begin, 32 + 4 * 5, 0xFFFF'FFF0u);  // PEC5 just before its wrap
  put32(end, 32 + 4 * 5, 0x10u);
  put32(end, 32 + 4 * 6, 0x66u);     // PEC6, the next dword: its own counter, not PEC5's top
  put32(end, 32 + 4 * 63, 0x6363u);  // PEC63: the last dword of the 64
  const Report b = decode(ReportFormat::kPec64u32, begin);
  const Report e = decode(ReportFormat::kPec64u32, end);
  EXPECT_EQ(e.a_bits[5], 32);
  EXPECT_EQ(e.a[5], 0x10u);
  EXPECT_EQ(e.a[6], 0x66u);
  EXPECT_EQ(e.a[63], 0x6363u);
  EXPECT_EQ(layout_of(ReportFormat::kPec64u32).a_total(), 64);
  EXPECT_EQ(compute_deltas(b, e).a[5], 0x20u);  // 0xFFFFFFF0 -> 0x10 across 2^32
}

TEST(ReportTest, DecodesXe2Mpec8u64WithAnUnshiftedTimestamp) {
  std::vector<std::uint8_t> bytes(192, 0);
  put64(bytes, 8, 0x1'0000'0003ull);
  put64(bytes, 32 + 8 * 7, 0x77'0000'0000ull);  // MPEC7, 64-bit
  put32(bytes, 96 + 4 * 3, 0xB3);
  put32(bytes, 128 + 4 * 4, 0xC4);
  const Report r = decode(ReportFormat::kXe2Mpec8u64_B8_C8, bytes);
  EXPECT_EQ(r.timestamp, 0x1'0000'0003ull);
  EXPECT_EQ(r.a[7], 0x77'0000'0000ull);
  EXPECT_EQ(r.b[3], 0xB3u);
  EXPECT_EQ(r.c[4], 0xC4u);
  EXPECT_EQ(layout_of(ReportFormat::kXe2Mpec8u64_B8_C8).timestamp_shift, 0);
}

}  // namespace
}  // namespace oaprof::oa
