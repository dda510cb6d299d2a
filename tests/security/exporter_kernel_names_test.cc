// oaprofd's Prometheus page is readable by every local user, and the per-kernel series show what
// other users ran (issue 29, item 3). Played here: a user reading the page for another's kernel
// names, and a member of the group taking every kernel series so that others' never appear.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "daemon/exporter.h"
#include "tests/common/exporter_fixture.h"

namespace oaprof::daemon {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace wire = ipc::wire;

wire::Summary summary_of(const std::string& kernel, std::uint64_t launches, bool share) {
  return wire::Summary{{wire::KernelSummary{kernel, launches, 2'000'000, 0}}, share};
}

std::string launches_series(std::string_view kernel) {
  return fmt::format("oaprof_kernel_launches_total{{kernel=\"{}\"}}", kernel);
}

// A user who did not share its kernel names (oaprof without --share-kernel-names, or an older
// oaprof) leaves none on the page: its launches count only towards kernel="(private)". A user
// who shared them gets its own series.
TEST(ExporterKernelNamesTest, AnotherUsersKernelNamesAppearOnlyWhenItSharedThem) {
  test_support::SimulatedExporter exporter;
  ASSERT_TRUE(exporter.run_session(1, 1001, summary_of("victim_decrypt_aes", 7, false)));
  ASSERT_TRUE(exporter.run_session(2, 1002, summary_of("public_gemm", 5, true)));
  const std::string page = exporter.page();
  EXPECT_THAT(page, Not(HasSubstr("victim_decrypt_aes")));
  const auto m = test_support::parse_metrics(page);
  EXPECT_EQ(m.at(launches_series(Exporter::kPrivateKernels)), 7);
  EXPECT_EQ(m.at(launches_series("public_gemm")), 5);
}

// The administrator's switch: oaprofd --kernel-names off shows no name, shared or not.
TEST(ExporterKernelNamesTest, WithKernelNamesOffNoNameAppearsEvenShared) {
  ExporterOptions options;
  options.kernel_names = false;
  test_support::SimulatedExporter exporter(options);
  ASSERT_TRUE(exporter.run_session(1, 1002, summary_of("public_gemm", 5, true)));
  const std::string page = exporter.page();
  EXPECT_THAT(page, Not(HasSubstr("public_gemm")));
  EXPECT_EQ(test_support::parse_metrics(page).at(launches_series(Exporter::kPrivateKernels)), 5);
}

// One member shares more names than the page has series for, over several sessions; a second
// user who shares one afterwards still gets a series of its own.
TEST(ExporterKernelNamesTest, OneUidCannotTakeEveryKernelSeries) {
  test_support::SimulatedExporter exporter;
  std::uint64_t client = 1;
  std::size_t sent = 0;
  while (sent < Exporter::kMaxKernelSeries + 8) {
    wire::Summary flood{{}, true};
    while (flood.kernels.size() < wire::kMaxSummaryKernels) {
      flood.kernels.push_back({fmt::format("hog{}", sent++), 1, 1, 0});
    }
    ASSERT_TRUE(exporter.run_session(client++, 1001, flood));
  }
  ASSERT_TRUE(exporter.run_session(client, 1002, summary_of("latecomer", 3, true)));
  const auto m = test_support::parse_metrics(exporter.page());
  std::size_t hog_series = 0;
  for (const auto& [series, value] : m) {
    hog_series += series.starts_with("oaprof_kernel_launches_total{kernel=\"hog");
  }
  EXPECT_EQ(hog_series, Exporter::kMaxKernelSeriesPerUid);
  // The rest of its names count under "other", not lost.
  EXPECT_EQ(m.at(launches_series(Exporter::kOtherKernels)),
            static_cast<double>(sent - Exporter::kMaxKernelSeriesPerUid));
  EXPECT_EQ(m.at(launches_series("latecomer")), 3);
}

}  // namespace
}  // namespace oaprof::daemon
