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
  ASSERT_EQ(l.a_runs.size(), 2u);
  EXPECT_EQ(l.a_runs[0].offset, 16);
  EXPECT_EQ(l.a_runs[0].bits, 40);
  EXPECT_EQ(l.a_runs[0].high_offset, 160);
  EXPECT_EQ(l.a_runs[1].first, 32);
  EXPECT_EQ(l.a_runs[1].offset, 144);
  EXPECT_EQ(l.b_offset, 192);
  EXPECT_EQ(l.c_offset, 224);
  const auto& c4 = layout_of(ReportFormat::kC4_B8);
  EXPECT_EQ(c4.size_bytes, 64);
  EXPECT_EQ(c4.c_offset, 16);
  EXPECT_EQ(c4.b_offset, 32);
}

// i915's oa_init_supported_formats() gives DG2 the OAG A24u40_A14u32_B8_C8 and OAR formats only:
// 101 means A24u40 there, with its shifted timestamp, and the media unit's MPEC formats are not
// DG2's.
TEST(ReportFormatTest, Dg2StreamsXeLpgsOagAndOarFormatsButNoMedia) {
  const auto gen = Generation::kXeHpg;
  EXPECT_EQ(parse_format("101", gen), ReportFormat::kA24u40_A14u32_B8_C8);
  EXPECT_EQ(default_format(gen), ReportFormat::kA24u40_A14u32_B8_C8);
  EXPECT_TRUE(format_exists_on(ReportFormat::kOar_A32u40_A4u32_B8_C8, gen));
  EXPECT_FALSE(format_exists_on(ReportFormat::kMpec8u32_B8_C8, gen));
  EXPECT_FALSE(format_exists_on(ReportFormat::kA32u40_A4u32_B8_C8, gen));
  EXPECT_EQ(formats_for(gen).size(), 2u);
  EXPECT_EQ(format_from_igt_name("", gen), ReportFormat::kA24u40_A14u32_B8_C8);
  EXPECT_EQ(format_from_igt_name("128B_MPEC8_NOA16", gen), std::nullopt);
  EXPECT_EQ(layout_of(ReportFormat::kA24u40_A14u32_B8_C8).timestamp_shift, 1);
  EXPECT_EQ(from_uapi(12, gen), ReportFormat::kA24u40_A14u32_B8_C8);
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
  ASSERT_EQ(a45.a_runs.size(), 1u);
  EXPECT_EQ(a45.a_runs[0].offset, 12);  // reference/hardware.md §3: A0..A44 at byte 12
  EXPECT_EQ(a45.a_runs[0].count, 45);
  EXPECT_EQ(a45.a_runs[0].bits, 32);
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
    if (l.header64) {
      claim(0, 20);  // report id, timestamp (64-bit each), context id
      claim(l.gpu_ticks_offset, 8);
    } else {
      claim(0, 12);  // RPT_ID, TIMESTAMP, CTX_ID
      claim(l.gpu_ticks_offset, 4);
    }
    int next_a = l.a_begin();
    for (const CounterRun& run : l.a_runs) {
      EXPECT_EQ(run.first, next_a) << l.name << ": A counter runs are contiguous";
      next_a = run.first + run.count;
      claim(run.offset, (run.bits == 64 ? 8 : 4) * run.count);
      if (run.bits == 40) claim(run.high_offset, run.count);
    }
    claim(l.b_offset, 4 * l.b_count);
    claim(l.c_offset, 4 * l.c_count);
    EXPECT_LE(l.a_end(), kMaxNumA) << l.name;
  }
  for (const Generation gen : {Generation::kGen7_5, Generation::kGen8, Generation::kGen9,
                               Generation::kGen11, Generation::kGen12, Generation::kXeLpg}) {
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
  EXPECT_EQ(b4a16.a_begin(), 29);
  EXPECT_EQ(b4a16.a_total(), 16);
  EXPECT_EQ(b4a16.a_runs[0].offset, 60);
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

TEST(ReportFormatTest, XeLpgStreamsOagOarAndTheTwoOamFormats) {
  // linux i915_perf.c oa_init_supported_formats (Kingxukai/linux 0291023e7330): METEORLAKE adds
  // OAR A32u40_A4u32_B8_C8, A24u40_A14u32_B8_C8, MPEC8u64_B8_C8 and MPEC8u32_B8_C8, with
  // oa_formats[] select codes 5, 5, 1, 2 and sizes 256, 256, 192, 128; uapi 11-14.
  const auto formats = formats_for(Generation::kXeLpg);
  ASSERT_EQ(formats.size(), 4u);
  EXPECT_EQ(parse_format("101", Generation::kXeLpg), ReportFormat::kA24u40_A14u32_B8_C8);
  EXPECT_EQ(parse_format("OAR_A32u40_A4u32_B8_C8", Generation::kXeLpg),
            ReportFormat::kOar_A32u40_A4u32_B8_C8);
  EXPECT_EQ(parse_format("1", Generation::kXeLpg), ReportFormat::kMpec8u64_B8_C8);
  EXPECT_EQ(parse_format("MPEC8u32_B8_C8", Generation::kXeLpg), ReportFormat::kMpec8u32_B8_C8);
  EXPECT_EQ(to_uapi(ReportFormat::kOar_A32u40_A4u32_B8_C8), 11);
  EXPECT_EQ(to_uapi(ReportFormat::kA24u40_A14u32_B8_C8), 12);
  EXPECT_EQ(to_uapi(ReportFormat::kMpec8u64_B8_C8), 13);
  EXPECT_EQ(to_uapi(ReportFormat::kMpec8u32_B8_C8), 14);
  EXPECT_EQ(layout_of(ReportFormat::kMpec8u64_B8_C8).size_bytes, 192);
  EXPECT_EQ(layout_of(ReportFormat::kMpec8u32_B8_C8).size_bytes, 128);
  EXPECT_EQ(layout_of(ReportFormat::kMpec8u64_B8_C8).select_code, 1);
  EXPECT_EQ(layout_of(ReportFormat::kMpec8u32_B8_C8).select_code, 2);
  for (const FormatLayout& l : formats) {
    EXPECT_EQ(l.timestamp_shift, 1) << l.name;  // IGT/Mesa oa_timestamp_shift on DG2 and MTL
    EXPECT_EQ(l.header64, l.size_bytes < 256) << l.name;  // HDR_64_BIT: the OAM formats
  }
  // Xe-LPG has no uapi-10 format, and Gen12 none of Xe-LPG's.
  EXPECT_THROW(parse_format("A32u40_A4u32_B8_C8", Generation::kXeLpg), std::invalid_argument);
  EXPECT_FALSE(from_uapi(12, Generation::kGen12).has_value());
  EXPECT_EQ(from_uapi(12, Generation::kXeLpg), ReportFormat::kA24u40_A14u32_B8_C8);
}

TEST(ReportFormatTest, Xe2NamesEveryFormatXeStreamsAndRefusesTheGroupedOnes) {
  // xe_oa.c oa_formats[] @ 0755a4e3e809: sizes and select codes of the decodable ones.
  EXPECT_EQ(parse_format("1", Generation::kXe2), ReportFormat::kPec64u64);  // still the default
  EXPECT_EQ(parse_format("PEC64u64_B8_C8", Generation::kXe2), ReportFormat::kPec64u64_B8_C8);
  EXPECT_EQ(parse_format("PEC64u32", Generation::kXe2), ReportFormat::kPec64u32);
  EXPECT_EQ(parse_format("MPEC8u64_B8_C8", Generation::kXe2), ReportFormat::kXe2Mpec8u64_B8_C8);
  EXPECT_EQ(layout_of(ReportFormat::kPec64u64_B8_C8).size_bytes, 640);
  EXPECT_EQ(layout_of(ReportFormat::kPec64u32).size_bytes, 320);
  EXPECT_EQ(layout_of(ReportFormat::kXe2Mpec8u64_B8_C8).size_bytes, 192);
  EXPECT_FALSE(format_exists_on(ReportFormat::kPec64u32, Generation::kXeLpg));
  for (const char* grouped : {"PEC32u64_G1", "PEC32u32_G1", "PEC32u64_G2", "PEC32u32_G2",
                              "PEC36u64_G1_32_G2_4", "PEC36u64_G1_4_G2_32"}) {
    ASSERT_TRUE(undecodable_format_reason(grouped, Generation::kXe2).has_value()) << grouped;
    try {
      parse_format(grouped, Generation::kXe2);
      ADD_FAILURE() << grouped << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("no public source"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(grouped), std::string::npos) << e.what();
    }
    // Only Xe2 knows them: elsewhere they are plain unknown names.
    EXPECT_FALSE(undecodable_format_reason(grouped, Generation::kXeLpg).has_value());
  }
}

TEST(ReportFormatTest, A24u40HasThirtyEightACountersOfMixedWidth) {
  // igt lib/i915/perf.c intel_perf_accumulate_reports (b3d809d537fe): A0-3 32-bit, A4-23
  // 40-bit, A24-27 32-bit, A28-31 40-bit, A32-36 32-bit at dwords 36-40, A37 at dword 46.
  const FormatLayout& l = layout_of(ReportFormat::kA24u40_A14u32_B8_C8);
  EXPECT_EQ(l.a_begin(), 0);
  EXPECT_EQ(l.a_end(), 38);
  EXPECT_EQ(l.a_total(), 38);
  int bits40 = 0;
  for (const CounterRun& run : l.a_runs) {
    if (run.bits != 40) continue;
    bits40 += run.count;
    EXPECT_EQ(run.high_offset - 160, run.first) << "high byte of A" << run.first;
    EXPECT_EQ(run.offset, 16 + 4 * run.first);
  }
  EXPECT_EQ(bits40, 24);
  EXPECT_EQ(l.a_runs.back().offset, 4 * 46);
}

TEST(ReportFormatTest, IgtOaFormatNamesGiveTheFormatIgtStreams) {
  // perf-metricset-codegen.py (399db6901e8f): no name or 256B_GENERIC_NOA16 is the generation's
  // 256-byte format, 128B_MPEC8_NOA16 the OAM format on Meteor Lake.
  EXPECT_EQ(format_from_igt_name("", Generation::kGen7_5), ReportFormat::kA45_B8_C8);
  EXPECT_EQ(format_from_igt_name("", Generation::kGen9), ReportFormat::kA32u40_A4u32_B8_C8);
  EXPECT_EQ(format_from_igt_name("", Generation::kGen12), ReportFormat::kA32u40_A4u32_B8_C8);
  EXPECT_EQ(format_from_igt_name("256B_GENERIC_NOA16", Generation::kXeLpg),
            ReportFormat::kA24u40_A14u32_B8_C8);
  EXPECT_EQ(format_from_igt_name("128B_MPEC8_NOA16", Generation::kXeLpg),
            ReportFormat::kMpec8u32_B8_C8);
  // The default is what select code 5 means on each generation.
  for (const Generation gen : {Generation::kGen7_5, Generation::kGen8, Generation::kGen9,
                               Generation::kGen11, Generation::kGen12, Generation::kXeLpg}) {
    EXPECT_EQ(default_format(gen), parse_format("101", gen)) << generation_name(gen);
  }
  // Not on a generation without the format, and no guess for a name IGT does not map.
  EXPECT_FALSE(format_from_igt_name("128B_MPEC8_NOA16", Generation::kGen12).has_value());
  EXPECT_FALSE(format_from_igt_name("192B_MPEC8LL_NOA16", Generation::kXeLpg).has_value());
  EXPECT_FALSE(format_from_igt_name("256b_generic_noa16", Generation::kXeLpg).has_value());
}

}  // namespace
}  // namespace oaprof::oa
