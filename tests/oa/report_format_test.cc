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

}  // namespace
}  // namespace oaprof::oa
