#include "gpu/i915/perf_stream.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <i915_drm.h>

#include "gpu/counter_source.h"
#include "gpu/i915/i915_perf.h"

namespace oaprof::gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

TEST(PerfStreamTest, OpenPropertiesUseTheUapiFormatNumbering) {
  // A32u40_A4u32_B8_C8 is select code 5 but uapi 10 (hardware.md §2).
  EXPECT_THAT(perf_open_properties(42, oa::ReportFormat::kA32u40_A4u32_B8_C8, 16),
              ElementsAre(2u, 1u, 3u, 42u, 4u, 10u, 5u, 16u));
  EXPECT_THROW(perf_open_properties(1, oa::ReportFormat::kC4_B8, 32), std::invalid_argument);
  EXPECT_THROW(perf_open_properties(1, oa::ReportFormat::kC4_B8, -1), std::invalid_argument);
  EXPECT_NEAR(perf_period_ns(16, 12e6), 131072 / 12e6 * 1e9, 1e-6);
}

// Gen12 leaves the engine to i915's default (render 0: kernels before perf revision 6 know no
// engine property); Xe-LPG names the render engine's OA unit, class 0 (9) instance 0 (10).
TEST(PerfStreamTest, XeLpgNamesTheRenderEnginesOaUnit) {
  EXPECT_THAT(
      perf_open_properties(7, oa::ReportFormat::kA32u40_A4u32_B8_C8, 16, oa::Generation::kGen12),
      ElementsAre(2u, 1u, 3u, 7u, 4u, 10u, 5u, 16u));
  EXPECT_THAT(
      perf_open_properties(7, oa::ReportFormat::kA24u40_A14u32_B8_C8, 16, oa::Generation::kXeLpg),
      ElementsAre(2u, 1u, 3u, 7u, 4u, 12u, 5u, 16u, 9u, 0u, 10u, 0u));
}

TEST(PerfStreamTest, FindsALoadedMetricSetsConfigIdInSysfs) {
  const fs::path card = fs::temp_directory_path() / fmt::format("oaprof-card-{}", getpid());
  const std::string guid = "db41edd4-d8e7-4730-ad11-b9a2d6833503";
  fs::create_directories(card / "metrics" / guid);
  std::ofstream(card / "metrics" / guid / "id") << "7\n";
  EXPECT_EQ(find_metrics_config_id(card.string(), guid), 7u);
  EXPECT_EQ(find_metrics_config_id(card.string(), "00000000-0000-0000-0000-000000000000"),
            std::nullopt);
  fs::remove_all(card);
}

std::vector<std::uint8_t> record(std::uint32_t type, std::size_t payload, std::uint8_t fill) {
  drm_i915_perf_record_header h{};
  h.type = type;
  h.size = static_cast<std::uint16_t>(sizeof h + payload);
  std::vector<std::uint8_t> out(sizeof h + payload, fill);
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

TEST(PerfStreamTest, SummarizesSamplesAndLossesAndRejectsBrokenRecords) {
  std::vector<std::uint8_t> bytes;
  for (const auto& r : {record(DRM_I915_PERF_RECORD_SAMPLE, 256, 0x11),
                        record(DRM_I915_PERF_RECORD_OA_REPORT_LOST, 0, 0),
                        record(DRM_I915_PERF_RECORD_SAMPLE, 256, 0x22),
                        record(DRM_I915_PERF_RECORD_OA_BUFFER_LOST, 0, 0)}) {
    bytes.insert(bytes.end(), r.begin(), r.end());
  }
  PerfRecordSummary s;
  summarize_perf_records(bytes, 256, s);
  EXPECT_EQ(s.samples, 2);
  EXPECT_EQ(s.reports_lost, 1);
  EXPECT_EQ(s.buffer_lost, 1);
  ASSERT_EQ(s.last_report.size(), 256u);
  EXPECT_EQ(s.last_report[0], 0x22);

  PerfRecordSummary bad;
  EXPECT_THROW(summarize_perf_records(std::span(bytes).first(100), 256, bad), std::runtime_error);
  EXPECT_THROW(summarize_perf_records(record(DRM_I915_PERF_RECORD_SAMPLE, 64, 0), 256, bad),
               std::runtime_error);  // a sample of the wrong report size
  auto zero = record(DRM_I915_PERF_RECORD_SAMPLE, 0, 0);
  zero[6] = zero[7] = 0;  // size 0 would loop forever
  EXPECT_THROW(summarize_perf_records(zero, 256, bad), std::runtime_error);
}

TEST(PerfCounterSourceTest, NeedsAMetricSetAndARenderNodeOnRealHardware) {
  Device real;  // what open_device gives for a real GPU, minus the BAR
  real.platform = oa::simulated_platform();
  real.render_node = "/nonexistent/renderD128";
  auto src = make_counter_source("perf", real);
  EXPECT_THROW(src->start(oa::ReportFormat::kA32u40_A4u32_B8_C8), std::invalid_argument);
  mmio::OaConfig config;
  config.guid = "db41edd4-d8e7-4730-ad11-b9a2d6833503";
  try {
    src->start(oa::ReportFormat::kA32u40_A4u32_B8_C8, config);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/renderD128"));
  }
  EXPECT_THROW(src->snapshot(1), std::logic_error);
}

TEST(DrmI915PerfTest, EachCallIsItsSystemCallAndReturnsMinusErrno) {
  auto perf = make_drm_i915_perf("/nonexistent/renderD128", "/nonexistent/card0");
  EXPECT_THAT(perf->describe(), HasSubstr("/nonexistent/renderD128"));
  EXPECT_THROW(perf->open_node(), std::runtime_error);
  EXPECT_EQ(perf->find_config_id("db41edd4-d8e7-4730-ad11-b9a2d6833503"), std::nullopt);
  drm_i915_perf_oa_config c{};
  EXPECT_EQ(perf->add_config(c), -EBADF);  // no node open
  EXPECT_EQ(perf->remove_config(2), -EBADF);
  drm_i915_perf_open_param p{};
  EXPECT_EQ(perf->open_stream(p), -EBADF);
  std::vector<std::uint8_t> buf(64);
  EXPECT_EQ(perf->read_stream(-1, buf), -EBADF);
  EXPECT_EQ(perf->enable_stream(-1, true), -EBADF);
  perf->close_node();  // nothing open: harmless
}

}  // namespace
}  // namespace oaprof::gpu
