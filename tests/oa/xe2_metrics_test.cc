// Xe2/Xe3 (LNL, BMG, PTL): IGT's xe metric files (../shared/metrics/igt-xe, test data beside the
// checkout) import and evaluate on PEC reports laid out as IGT's intel_xe_perf_accumulate_reports
// reads them (lib/xe/xe_oa.c @ drm.igt-gpu-tools b3d809d537fe): timestamp qword 1, GPU clock
// qword 3, PEC i at qword 4 + i. The reports here are written byte by byte at those offsets, not
// through oaprof's encoder, so a wrong layout in oaprof fails.
//
// No IGT library for xe is packaged (Debian's IGT 1.27.1 predates it), so this is not a
// comparison with IGT's running code. Where IGT's generated code is wrong, oaprof differs on
// purpose and the tests below pin oaprof's side:
// - $GtXeCore<N>: IGT's xe codegen.py (line 363, "FIXME") tests subslice 0 of slice N; oaprof
//   tests Xe-core N of xe's flat DSS mask.
// - "A n READ" in the Xe2 media sets: IGT's oa-metricset-codegen.py sets no a_offset for
//   lnl/bmg/ptl MPEC sets (calloc leaves 0), so A n reads accumulator[n] (A0 the timestamp,
//   A1 the clock); oaprof reads MPEC n, as IGT itself does on Meteor Lake (a_offset 2).
// - $L3BankTotalCount, $SqidiTotalCount, pipe counts: IGT never sets them (0); oaprof marks the
//   counters that read them unavailable until the device gives the count (xe's topology query
//   gives the L3 banks: tests/gpu/xe_query_test.cc).
// - $ComputeEngineTotalCount, $CopyEngineTotalCount: IGT gives n_eus; metrics-discovery the
//   engine counts, which oaprof follows (compute from xe's OA unit query; copy stays unknown).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "oa/delta.h"
#include "oa/metric_xml.h"
#include "oa/platform.h"
#include "oa/report.h"
#include "oa/report_format.h"
#include "oa/topology.h"
#include "tests/oa/igt_files.h"

namespace oaprof::oa {
namespace {

const std::filesystem::path kXeDir = OAPROF_IGT_XE_METRICS_DIR;

MetricFile load(std::string_view name) {
  const auto path = kXeDir / ("oa-" + std::string(name) + ".xml");
  return import_metrics_xml(testing::read_text(path), path.filename().string());
}

void put64(std::vector<std::uint8_t>& bytes, int qword, std::uint64_t v) {
  std::memcpy(bytes.data() + 8 * qword, &v, sizeof v);
}

void put32(std::vector<std::uint8_t>& bytes, int dword, std::uint32_t v) {
  std::memcpy(bytes.data() + 4 * dword, &v, sizeof v);
}

// A pair of PEC64u64 reports: timestamps 19.2 M ticks apart (1 s at 19.2 MHz), clocks 1.2 G
// apart, PEC i advancing by pec_delta[i].
struct PecPair {
  std::vector<std::uint8_t> begin = std::vector<std::uint8_t>(576), end = begin;
  std::vector<std::uint64_t> pec_delta = std::vector<std::uint64_t>(64);
};

PecPair pec_pair(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  PecPair p;
  put64(p.begin, 1, 5'000'000);
  put64(p.end, 1, 5'000'000 + 19'200'000);
  put64(p.begin, 3, 100);
  put64(p.end, 3, 100 + 1'200'000'000);
  for (int i = 0; i < 64; ++i) {
    const std::uint64_t start = rng();
    p.pec_delta[i] = rng() % 1'000'000'000;
    put64(p.begin, 4 + i, start);
    put64(p.end, 4 + i, start + p.pec_delta[i]);  // may pass 2^64: a plain 64-bit difference
  }
  return p;
}

CounterDeltas deltas_of(ReportFormat f, const std::vector<std::uint8_t>& b,
                        const std::vector<std::uint8_t>& e) {
  return compute_deltas(decode(f, b), decode(f, e));
}

class Xe2MetricsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Xe2MetricsTest, EverySetImportsWithItsFormat) {
  const Platform p = require_platform_by_name(GetParam());
  EXPECT_EQ(p.gen, Generation::kXe2);
  EXPECT_EQ(p.driver, KernelDriver::kXe);
  const MetricFile file = load(GetParam());
  ASSERT_EQ(file.sets.size(), 14u);
  int pec = 0, mpec = 0;
  for (const MetricSet& set : file.sets) {
    SCOPED_TRACE(set.symbol());
    const auto format = format_from_igt_name(set.attribute("oa_format"), p.gen);
    ASSERT_TRUE(format.has_value()) << set.attribute("oa_format");
    pec += *format == ReportFormat::kPec64u64;
    mpec += *format == ReportFormat::kXe2Mpec8u32_B8_C8;
    EXPECT_FALSE(set.guid().empty());
  }
  EXPECT_EQ(pec, 12);
  EXPECT_EQ(mpec, 2);
  ASSERT_NE(file.find("ComputeBasic"), nullptr);
  ASSERT_NE(file.find("TestOa"), nullptr);
}

TEST_P(Xe2MetricsTest, PecCountersReadTheQwordsIgtReads) {
  const Platform p = require_platform_by_name(GetParam());
  const MetricFile file = load(GetParam());
  const PecPair pair = pec_pair(7);
  const CounterDeltas d = deltas_of(ReportFormat::kPec64u64, pair.begin, pair.end);
  EXPECT_EQ(d.timestamp, 19'200'000u);
  EXPECT_EQ(d.gpu_ticks, 1'200'000'000u);
  const DeviceVariables vars = device_variables(p);
  int plain_reads = 0;
  for (const MetricSet& set : file.sets) {
    if (set.attribute("oa_format") != "576B_PEC64LL") continue;
    const std::vector<EquationValue> values = set.evaluate(d, vars);
    for (std::size_t i = 0; i < set.counters().size(); ++i) {
      const MetricCounter& c = set.counters()[i];
      SCOPED_TRACE(set.symbol() + " " + c.symbol + ": " + c.equation.text());
      int n = -1;
      char tail = 0;
      if (std::sscanf(c.equation.text().c_str(), "PEC %d READ%c", &n, &tail) == 1) {
        EXPECT_EQ(values[i].as_uint(), pair.pec_delta[static_cast<std::size_t>(n)]);
        ++plain_reads;
      }
      if (c.symbol == "GpuTime") {
        EXPECT_EQ(values[i].as_uint(), 1'000'000'000u);
      }
      if (c.symbol == "GpuCoreClocks") {
        EXPECT_EQ(values[i].as_uint(), 1'200'000'000u);
      }
      if (values[i].is_float) {
        EXPECT_FALSE(std::isnan(values[i].f));
      }
    }
  }
  EXPECT_GT(plain_reads, 100);
}

TEST_P(Xe2MetricsTest, CountersNeedingAnUnreportedCountAreUnavailableUntilTheDeviceGivesIt) {
  const Platform p = require_platform_by_name(GetParam());
  const MetricFile file = load(GetParam());
  DeviceVariables vars = device_variables(p);
  EXPECT_FALSE(vars.known("L3BankTotalCount"));
  int unavailable = 0;
  for (const MetricSet& set : file.sets) {
    for (std::size_t i = 0; i < set.counters().size(); ++i) {
      const std::string why = set.unknown_input(static_cast<int>(i), vars);
      if (why.empty()) continue;
      ++unavailable;
      EXPECT_FALSE(set.available(static_cast<int>(i), vars)) << set.counters()[i].symbol;
    }
  }
  EXPECT_GT(unavailable, 10);
  for (const std::string& name : device_query_variables()) vars.set_known(name, 4);
  EXPECT_TRUE(vars.unknown.empty());
  for (const MetricSet& set : file.sets) {
    for (std::size_t i = 0; i < set.counters().size(); ++i) {
      EXPECT_EQ(set.unknown_input(static_cast<int>(i), vars), "") << set.counters()[i].symbol;
    }
  }
  EXPECT_THROW(vars.set_known("EuCoresTotalCount", 1), std::logic_error);
}

INSTANTIATE_TEST_SUITE_P(LnlBmgPtl, Xe2MetricsTest, ::testing::Values("lnl", "bmg", "ptl"),
                         [](const auto& param_info) { return param_info.param; });

// Issue 16: igt-xe also has the xe driver's files for parts before Xe2 (TGL, RKL, ADL, DG1, MTL).
// Each holds two sets, and each set is the set of that name in the i915 file, equation for
// equation and register write for write, so that IgtParityTest's check of the i915 files against
// IGT's own library covers them; on the same deltas both give the same bits. (oaprof reads these
// parts only under i915: docs/xe.md.)
class OlderXeFilesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OlderXeFilesTest, EverySetIsTheI915FilesSetOfThatName) {
  const Platform p = require_platform_by_name(GetParam());
  EXPECT_EQ(p.driver, KernelDriver::kI915);
  const MetricFile xe = load(GetParam());
  const auto i915_path = testing::igt_file_for(GetParam());
  ASSERT_FALSE(i915_path.empty());
  const MetricFile i915 = import_metrics_xml(testing::read_text(i915_path), GetParam());
  ASSERT_EQ(xe.sets.size(), 2u);
  std::mt19937_64 rng(11);
  CounterDeltas d;
  d.timestamp = 19'200'000;
  d.gpu_ticks = 1'100'000'000;
  d.has_gpu_ticks = true;
  for (auto& v : d.a) v = rng() % (1ull << 36);
  d.a_present.fill(true);
  for (auto& v : d.b) v = rng() % (1ull << 31);
  for (auto& v : d.c) v = rng() % (1ull << 31);
  const DeviceVariables vars = device_variables(p);
  for (const MetricSet& set : xe.sets) {
    SCOPED_TRACE(set.symbol());
    const MetricSet* twin = i915.find(set.symbol());
    ASSERT_NE(twin, nullptr);
    EXPECT_EQ(set.attribute("oa_format"), twin->attribute("oa_format"));
    ASSERT_EQ(set.counters().size(), twin->counters().size());
    for (std::size_t i = 0; i < set.counters().size(); ++i) {
      EXPECT_EQ(set.counters()[i].equation.text(), twin->counters()[i].equation.text())
          << set.counters()[i].symbol;
    }
    ASSERT_EQ(set.register_configs().size(), twin->register_configs().size());
    for (std::size_t i = 0; i < set.register_configs().size(); ++i) {
      EXPECT_EQ(set.register_configs()[i].writes, twin->register_configs()[i].writes);
    }
    const auto values = set.evaluate(d, vars), twin_values = twin->evaluate(d, vars);
    ASSERT_EQ(values.size(), twin_values.size());
    int figures = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(values[i].is_float, twin_values[i].is_float);
      EXPECT_EQ(values[i].u, twin_values[i].u);
      EXPECT_EQ(std::memcmp(&values[i].f, &twin_values[i].f, sizeof(double)), 0);
      figures += values[i].as_double() != 0;
    }
    EXPECT_GT(figures, 5);  // the deltas reached the equations
  }
}

INSTANTIATE_TEST_SUITE_P(BeforeXe2, OlderXeFilesTest,
                         ::testing::Values("tglgt1", "tglgt2", "rkl", "adl", "dg1", "mtlgt2",
                                           "mtlgt3"),
                         [](const auto& param_info) { return param_info.param; });

TEST(Xe2MetricsTest, GtXeCoreTestsTheFlatXeCoreNumber) {
  // BMG's counters test $GtXeCore0..27; the table's G21 has 20 Xe-cores.
  const Platform bmg = require_platform_by_name("bmg");
  const DeviceVariables vars = device_variables(bmg);
  EXPECT_EQ(vars.xe_core_mask, (std::uint64_t{1} << 20) - 1);
  const Equation core19 = Equation::compile("$GtXeCore19");
  const Equation core20 = Equation::compile("$GtXeCore20");
  EXPECT_EQ(core19.evaluate({CounterDeltas{}, vars}).as_uint(), 1u);
  EXPECT_EQ(core20.evaluate({CounterDeltas{}, vars}).as_uint(), 0u);
  EXPECT_THROW(Equation::compile("$GtXeCore64"), std::invalid_argument);
  const MetricFile file = load("bmg");
  int tested = 0;
  for (const MetricSet& set : file.sets) {
    for (std::size_t i = 0; i < set.counters().size(); ++i) {
      const MetricCounter& c = set.counters()[i];
      int n = -1;
      if (!c.availability || std::sscanf(c.availability->text().c_str(), "$GtXeCore%d", &n) != 1) {
        continue;
      }
      if (c.availability->text() != "$GtXeCore" + std::to_string(n)) continue;
      EXPECT_EQ(set.available(static_cast<int>(i), vars), n < 20) << c.symbol;
      ++tested;
    }
  }
  EXPECT_GT(tested, 20);
}

TEST(Xe2MetricsTest, MediaSetsReadMpecCountersAsA) {
  const Platform lnl = require_platform_by_name("lnl");
  const MetricFile file = load("lnl");
  const MetricSet* media = file.find("MediaSet1");
  ASSERT_NE(media, nullptr);
  std::vector<std::uint8_t> b(128), e(128);
  put64(b, 1, 0);
  put64(e, 1, 19'200);
  put64(b, 3, 0);
  put64(e, 3, 40'000);
  for (int i = 0; i < 8; ++i) {
    put32(b, 8 + i, 0xFFFFFF00u);                                 // MPEC i, dword 8 + i
    put32(e, 8 + i, 0x100u * static_cast<std::uint32_t>(i + 1));  // wraps 2^32
  }
  const CounterDeltas d = deltas_of(ReportFormat::kXe2Mpec8u32_B8_C8, b, e);
  EXPECT_EQ(d.timestamp, 19'200u);  // unshifted on Xe2
  const auto values = media->evaluate(d, device_variables(lnl));
  int checked = 0;
  for (std::size_t i = 0; i < media->counters().size(); ++i) {
    int n = -1;
    char tail = 0;
    if (std::sscanf(media->counters()[i].equation.text().c_str(), "A %d READ%c", &n, &tail) != 1) {
      continue;
    }
    EXPECT_EQ(values[i].as_uint(), 0x100u * static_cast<std::uint64_t>(n + 1) + 0x100u)
        << media->counters()[i].symbol;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

// xe_oa.c @ torvalds/linux 0755a4e3e809: Gen12's OAG formats A12 (select 0), A12_B8_C8 (2) and
// A32u40_A4u32_B8_C8 (5); Xe-LPG's only OAG format A24u40_A14u32_B8_C8, also select 5; all of type
// OAG (0). C4_B8 is xe's format 0, which the open path refuses; OAR needs an exec queue.
TEST(Xe2MetricsTest, OlderPartsUnderXeStreamTheirOwnOagFormats) {
  EXPECT_EQ(to_xe_oa_format(ReportFormat::kA12, Generation::kGen12), 0x000u);
  EXPECT_EQ(to_xe_oa_format(ReportFormat::kA12_B8_C8, Generation::kGen12), 0x200u);
  EXPECT_EQ(to_xe_oa_format(ReportFormat::kA32u40_A4u32_B8_C8, Generation::kGen12), 0x500u);
  EXPECT_EQ(to_xe_oa_format(ReportFormat::kA24u40_A14u32_B8_C8, Generation::kXeLpg), 0x500u);
  EXPECT_THROW(to_xe_oa_format(ReportFormat::kC4_B8, Generation::kGen12), std::invalid_argument);
  EXPECT_THROW(to_xe_oa_format(ReportFormat::kA32u40_A4u32_B8_C8, Generation::kXeLpg),
               std::invalid_argument);
  EXPECT_THROW(to_xe_oa_format(ReportFormat::kOar_A32u40_A4u32_B8_C8, Generation::kXeLpg),
               std::invalid_argument);
  EXPECT_THROW(to_xe_oa_format(ReportFormat::kA12, Generation::kXeLpg), std::invalid_argument);
  EXPECT_THROW(to_xe_oa_format(ReportFormat::kA32u40_A4u32_B8_C8, Generation::kGen9),
               std::invalid_argument);
}

TEST(Xe2MetricsTest, XeFormatPropertyIsTypeSelectSizeAndBc) {
  // include/uapi/drm/xe_drm.h: PEC is format type 5; xe_oa.c: PEC64u64 select 1, counter size 1;
  // MPEC8u32 type OAM_MPEC 4, select 2. Mesa's xe_perf_get_oa_format builds the same PEC value.
  EXPECT_EQ(to_xe_oa_format(ReportFormat::kPec64u64, Generation::kXe2), 0x00010105u);
  EXPECT_EQ(to_xe_oa_format(ReportFormat::kXe2Mpec8u32_B8_C8, Generation::kXe2), 0x00000204u);
  EXPECT_THROW(to_xe_oa_format(ReportFormat::kA32u40_A4u32_B8_C8, Generation::kXe2),
               std::invalid_argument);
  EXPECT_THROW(to_uapi(ReportFormat::kPec64u64), std::invalid_argument);
  EXPECT_EQ(parse_format("1", Generation::kXe2), ReportFormat::kPec64u64);
  EXPECT_EQ(default_format(Generation::kXe2), ReportFormat::kPec64u64);
  EXPECT_EQ(parse_format("auto", Generation::kXe2), ReportFormat::kPec64u64);
  EXPECT_EQ(parse_format("auto", Generation::kGen9), ReportFormat::kA32u40_A4u32_B8_C8);
  EXPECT_EQ(parse_format("auto", Generation::kXeLpg), ReportFormat::kA24u40_A14u32_B8_C8);
  EXPECT_THROW(parse_format("101", Generation::kXe2), std::invalid_argument);
  EXPECT_FALSE(format_from_igt_name("576B_PEC64LL", Generation::kXeLpg).has_value());
  EXPECT_FALSE(format_from_igt_name("", Generation::kXe2).has_value());
}

}  // namespace
}  // namespace oaprof::oa
