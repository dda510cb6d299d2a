#include "oa/report_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace oaprof::oa {
namespace {

using ::testing::HasSubstr;

TEST(ReportFormatTest, BinaryDecimalAndNameSelectTheSameFormat) {
  EXPECT_EQ(parse_format("101", Generation::kGen9), ReportFormat::kA32u40_A4u32_B8_C8);
  EXPECT_EQ(parse_format("5", Generation::kGen9), ReportFormat::kA32u40_A4u32_B8_C8);
  EXPECT_EQ(parse_format("A32u40_A4u32_B8_C8", Generation::kGen9),
            ReportFormat::kA32u40_A4u32_B8_C8);
  EXPECT_EQ(parse_format("111", Generation::kGen8), ReportFormat::kC4_B8);
  EXPECT_EQ(parse_format("10", Generation::kGen8), ReportFormat::kA12_B8_C8);  // binary 10 = 2
  EXPECT_EQ(parse_format("0", Generation::kGen11), ReportFormat::kA12);
}

TEST(ReportFormatTest, UnknownCodeListsTheValidOnes) {
  try {
    parse_format("110", Generation::kGen9);
    FAIL() << "select code 6 does not exist on Gen9";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'110'"));
    EXPECT_THAT(e.what(), HasSubstr("A32u40_A4u32_B8_C8 (101 = 5)"));
    EXPECT_THAT(e.what(), HasSubstr("C4_B8 (111 = 7)"));
  }
  EXPECT_THROW(parse_format("", Generation::kGen9), std::invalid_argument);
  EXPECT_THROW(parse_format("12x", Generation::kGen9), std::invalid_argument);
}

TEST(ReportFormatTest, UapiNumberingDiffersFromSelectCodes) {
  // reference/hardware.md §2: A32u40_A4u32_B8_C8 is select code 5 but uapi 10.
  EXPECT_EQ(to_uapi(ReportFormat::kA32u40_A4u32_B8_C8), 10);
  EXPECT_EQ(layout_of(ReportFormat::kA32u40_A4u32_B8_C8).select_code, 5);
  EXPECT_EQ(to_uapi(ReportFormat::kC4_B8), 7);
  for (const auto& l : formats_for(Generation::kGen9)) {
    EXPECT_EQ(from_uapi(to_uapi(l.format)), l.format) << l.name;
  }
  EXPECT_FALSE(from_uapi(0).has_value());
}

TEST(ReportFormatTest, LayoutsMatchTheReferenceByteOffsets) {
  const auto& l = layout_of(ReportFormat::kA32u40_A4u32_B8_C8);
  EXPECT_EQ(l.size_bytes, 256);
  EXPECT_EQ(l.gpu_ticks_offset, 12);
  EXPECT_EQ(l.a_offset, 16);
  EXPECT_EQ(l.a32_offset, 144);
  EXPECT_EQ(l.a_high_offset, 160);
  EXPECT_EQ(l.b_offset, 192);
  EXPECT_EQ(l.c_offset, 224);
  const auto& c4 = layout_of(ReportFormat::kC4_B8);
  EXPECT_EQ(c4.size_bytes, 64);
  EXPECT_EQ(c4.c_offset, 16);
  EXPECT_EQ(c4.b_offset, 32);
}

TEST(ReportFormatTest, SelectCodesAreInterpretedPerGeneration) {
  // reference/hardware.md §2: 101 is A45_B8_C8 on Haswell and A32u40_A4u32_B8_C8 on Gen8+.
  EXPECT_EQ(parse_format("101", Generation::kGen7_5), ReportFormat::kA45_B8_C8);
  EXPECT_EQ(parse_format("5", Generation::kGen7_5), ReportFormat::kA45_B8_C8);
  EXPECT_EQ(parse_format("101", Generation::kGen12), ReportFormat::kA32u40_A4u32_B8_C8);
  EXPECT_EQ(parse_format("101", simulated_platform().gen), ReportFormat::kA32u40_A4u32_B8_C8);
  EXPECT_EQ(parse_format("B4_C8_A16", Generation::kGen7_5), ReportFormat::kB4_C8_A16);
  EXPECT_EQ(parse_format("111", Generation::kGen7_5), ReportFormat::kC4_B8_Hsw);
  EXPECT_EQ(parse_format("0", Generation::kGen7_5), ReportFormat::kA13);
  try {
    parse_format("A45_B8_C8", Generation::kGen9);
    FAIL() << "A45_B8_C8 is Haswell only";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("does not exist on Gen9"));
  }
  try {
    parse_format("A45_B8_C8", Generation::kGen12);
    FAIL() << "A45_B8_C8 is Haswell only";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("A32u40_A4u32_B8_C8 (101 = 5)"));
    EXPECT_THAT(e.what(), HasSubstr("C4_B8 (111 = 7)"));
  }
  EXPECT_TRUE(format_exists_on(ReportFormat::kA45_B8_C8, Generation::kGen7_5));
  EXPECT_FALSE(format_exists_on(ReportFormat::kA45_B8_C8, Generation::kGen8));
}

TEST(ReportFormatTest, Gen7_5LayoutsAndUapiNumbers) {
  const auto& a45 = layout_of(ReportFormat::kA45_B8_C8);
  EXPECT_EQ(a45.size_bytes, 256);
  EXPECT_EQ(a45.a_offset, 12);  // reference/hardware.md §3: A0..A44 at byte 12
  EXPECT_EQ(a45.a_count, 45);
  EXPECT_EQ(a45.a_high_offset, -1);
  EXPECT_EQ(a45.gpu_ticks_offset, -1);
  EXPECT_EQ(a45.b_offset, 192);
  EXPECT_EQ(a45.c_offset, 224);
  EXPECT_EQ(to_uapi(ReportFormat::kA45_B8_C8), 5);
  EXPECT_EQ(to_uapi(ReportFormat::kA13), 1);
  EXPECT_EQ(to_uapi(ReportFormat::kB4_C8_A16), 6);
  EXPECT_THROW(to_uapi(ReportFormat::kA29_B8_C8), std::invalid_argument);
  for (const auto& l : all_formats()) {
    // Every layout fits its size, no two fields overlap, and nothing but the header sits in the
    // first 12 bytes.
    std::vector<int> owner(static_cast<std::size_t>(l.size_bytes), 0);
    auto claim = [&](int offset, int bytes) {
      if (offset < 0) return;
      ASSERT_LE(offset + bytes, l.size_bytes) << l.name;
      for (int i = offset; i < offset + bytes; ++i) {
        EXPECT_EQ(owner[static_cast<std::size_t>(i)]++, 0) << l.name << " byte " << i;
      }
    };
    claim(0, 12);  // RPT_ID, TIMESTAMP, CTX_ID
    claim(l.gpu_ticks_offset, 4);
    claim(l.a_offset, 4 * l.a_count);
    if (l.a_high_offset >= 0) claim(l.a_high_offset, l.a_count);
    claim(l.a32_offset, 4 * l.a32_count);
    claim(l.b_offset, 4 * l.b_count);
    claim(l.c_offset, 4 * l.c_count);
    EXPECT_LE(l.a_first + l.a_count + l.a32_count, kMaxNumA) << l.name;
  }
  for (const Generation gen : {Generation::kGen7_5, Generation::kGen8, Generation::kGen9,
                               Generation::kGen11, Generation::kGen12}) {
    for (const auto& l : formats_for(gen)) {
      if (l.uapi_value >= 0) {
        EXPECT_EQ(from_uapi(l.uapi_value, gen), l.format) << l.name;
      }
    }
  }
  EXPECT_FALSE(from_uapi(-1).has_value());
  EXPECT_FALSE(from_uapi(1, Generation::kGen9).has_value());  // A13 is Haswell only
}

TEST(ReportFormatTest, HaswellLayoutsOfB4C8A16AndC4B8) {
  // IGT tests/intel/perf.c hsw_oa_formats: B4_C8_A16's A29..A44 from byte 60, Haswell C4_B8's B
  // counters from byte 28; the blocks before them packed from byte 12 (see report_format.cc).
  const auto& b4a16 = layout_of(parse_format("B4_C8_A16", Generation::kGen7_5));
  EXPECT_EQ(b4a16.a_first, 29);
  EXPECT_EQ(b4a16.a_count, 16);
  EXPECT_EQ(b4a16.a_offset, 60);
  EXPECT_EQ(b4a16.b_offset, 12);
  EXPECT_EQ(b4a16.c_offset, 28);
  const ReportFormat hsw_c4 = parse_format("C4_B8", Generation::kGen7_5);
  EXPECT_EQ(hsw_c4, parse_format("111", Generation::kGen7_5));
  const auto& c4 = layout_of(hsw_c4);
  EXPECT_EQ(c4.name, "C4_B8");
  EXPECT_EQ(c4.b_offset, 28);
  EXPECT_EQ(c4.c_offset, 12);
  EXPECT_EQ(c4.size_bytes, 64);
  EXPECT_EQ(to_uapi(hsw_c4), 7);
  EXPECT_EQ(from_uapi(7, Generation::kGen7_5), hsw_c4);
  // Gen8+ keeps IGT's gen8_oa_formats C4_B8: C at 16, B at 32.
  EXPECT_EQ(layout_of(parse_format("C4_B8", Generation::kGen9)).b_offset, 32);
  EXPECT_EQ(from_uapi(7), ReportFormat::kC4_B8);
}

TEST(ReportFormatTest, Gen12StreamsTheFourGen8Formats) {
  // linux i915_perf.c oa_init_supported_formats: TGL, RKL, DG1, ADL-S/P add A12, A12_B8_C8,
  // A32u40_A4u32_B8_C8 and C4_B8, with oa_formats[]'s Gen8 select codes and sizes.
  EXPECT_EQ(parse_format("A12", Generation::kGen12), ReportFormat::kA12);
  EXPECT_EQ(parse_format("010", Generation::kGen12), ReportFormat::kA12_B8_C8);
  EXPECT_EQ(parse_format("C4_B8", Generation::kGen12), ReportFormat::kC4_B8);
  EXPECT_EQ(from_uapi(8, Generation::kGen12), ReportFormat::kA12);
  EXPECT_EQ(formats_for(Generation::kGen12).size(), 4u);
}

}  // namespace
}  // namespace oaprof::oa
