// The oaprof subcommands end to end: `metrics list|show|import` against IGT's files (read from
// ../shared, never copied), and `decode` of a capture the test writes with known counter values.
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "gpu/counter_source.h"
#include "tests/common/run_util.h"

namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using oaprof::testing::read_csv;
using oaprof::testing::run;

const std::string kKblXml = std::string(OAPROF_IGT_METRICS_DIR) + "/oa-kblgt2.xml";

class CommandsTest : public ::testing::Test {
 protected:
  CommandsTest() {
    dir_ = fs::temp_directory_path() / fmt::format("oaprof-cmd-{}-{}", ::getpid(), counter_++);
    fs::create_directories(dir_);
  }
  ~CommandsTest() override { fs::remove_all(dir_); }
  static inline int counter_ = 0;
  fs::path dir_;
};

TEST_F(CommandsTest, MetricsListAndShowReadIgtFiles) {
  const auto list = run(fmt::format("{} metrics list --platform kblgt2 --metrics-xml {}", OAPROF_BIN, kKblXml));
  ASSERT_EQ(list.status, 0) << list.output;
  EXPECT_THAT(list.output, HasSubstr("ComputeBasic"));
  const auto show = run(fmt::format("{} metrics show ComputeBasic --platform kblgt2 --metrics-xml {}",
                                    OAPROF_BIN, kKblXml));
  ASSERT_EQ(show.status, 0) << show.output;
  EXPECT_THAT(show.output, HasSubstr("EuActive"));
  EXPECT_THAT(show.output, HasSubstr("A 7 READ"));
  const auto missing = run(fmt::format("{} metrics show NoSuchSet --platform kblgt2 --metrics-xml {}",
                                       OAPROF_BIN, kKblXml));
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("NoSuchSet"));
}

TEST_F(CommandsTest, ImportedFilesAreFoundWithoutNamingThem) {
  const std::string env = fmt::format("XDG_DATA_HOME={} OAPROF_METRICS_PATH=", dir_.string());
  const auto before = run(fmt::format("{} {} metrics show ComputeBasic --platform kblgt2", env, OAPROF_BIN));
  EXPECT_NE(before.status, 0) << before.output;
  const auto import = run(fmt::format("{} {} metrics import {}", env, OAPROF_BIN, kKblXml));
  ASSERT_EQ(import.status, 0) << import.output;
  EXPECT_TRUE(fs::exists(dir_ / "oaprof/metrics/oa-kblgt2.xml"));
  const auto after = run(fmt::format("{} {} metrics show ComputeBasic --platform kblgt2", env, OAPROF_BIN));
  EXPECT_EQ(after.status, 0) << after.output;
  const auto bad = run(fmt::format("{} {} metrics import /proc/version", env, OAPROF_BIN));
  EXPECT_NE(bad.status, 0);
}

void put32(std::vector<std::uint8_t>& r, int offset, std::uint32_t v) { std::memcpy(&r[offset], &v, 4); }

// Two 256-byte reports back to back, as a raw capture.
void write_capture(const fs::path& path, const std::vector<std::uint8_t>& a,
                   const std::vector<std::uint8_t>& b) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(a.data()), 256);
  out.write(reinterpret_cast<const char*>(b.data()), 256);
}

TEST_F(CommandsTest, DecodeTurnsRawReportsIntoDeltasAndMetrics) {
  // Two A32u40_A4u32_B8_C8 reports 1 ms apart at 12 MHz: 1.15 M GPU clocks, all busy, A0 near a
  // 40-bit wrap (reference/hardware.md §3 offsets).
  std::vector<std::uint8_t> a(256, 0), b(256, 0);
  put32(a, 4, 1000);
  put32(b, 4, 1000 + 12000);
  put32(a, 12, 5);
  put32(b, 12, 5 + 1'150'000);
  put32(a, 16, 0xFFFFFFF0u);  // A0 low
  a[160] = 0xFF;              // A0 bits 39:32: 2^40 − 16
  put32(b, 16, 1'150'000 - 16);
  const fs::path capture = dir_ / "capture.bin";
  write_capture(capture, a, b);
  const fs::path csv = dir_ / "decoded.csv";
  const auto r = run(fmt::format("{} decode --platform kblgt2 --format 101 --input raw -o {} {}",
                                 OAPROF_BIN, csv.string(), capture.string()));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 1u);
  bool found_ticks = false, found_busy = false;
  for (const auto& [name, value] : rows[0]) {
    if (value == "1150000") found_ticks = true;  // GPU clocks, and A0 across its wrap
    if (name.find("GpuBusy") != std::string::npos) {
      found_busy = true;
      EXPECT_NEAR(std::stod(value), 100.0, 0.01) << name;
    }
  }
  EXPECT_TRUE(found_ticks);
  EXPECT_TRUE(found_busy);

  const fs::path torn = dir_ / "torn.bin";
  std::ofstream(torn, std::ios::binary).write(reinterpret_cast<const char*>(a.data()), 100);
  const auto bad = run(fmt::format("{} decode --platform kblgt2 --input raw {}", OAPROF_BIN, torn.string()));
  EXPECT_NE(bad.status, 0);
  EXPECT_THAT(bad.output, HasSubstr("256"));
}

// IGT's code gives GpuBusy = A0 / clocks as 0 when no clock ran; decode leaves it empty instead
// (docs/metrics.md), and the raw deltas stay as they are.
TEST_F(CommandsTest, DecodeLeavesAMetricThatDividesByZeroEmpty) {
  std::vector<std::uint8_t> a(256, 0), b(256, 0);
  put32(a, 4, 1000);
  put32(b, 4, 1000 + 12000);  // 1 ms of timestamp, no GPU clock
  const fs::path capture = dir_ / "idle.bin";
  write_capture(capture, a, b);
  const fs::path csv = dir_ / "idle.csv";
  const auto r = run(fmt::format("{} decode --platform kblgt2 --format 101 --input raw -o {} {}",
                                 OAPROF_BIN, csv.string(), capture.string()));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("timestamp"), "12000");
  EXPECT_EQ(rows[0].at("GpuBusy"), "");
  const auto json = run(fmt::format("{} decode --platform kblgt2 --format 101 --input raw --json {}",
                                    OAPROF_BIN, capture.string()));
  ASSERT_EQ(json.status, 0) << json.output;
  EXPECT_THAT(json.output, HasSubstr("\"GpuBusy\": null"));
}

TEST_F(CommandsTest, PciChoosesTheDeviceAndIsRefusedBesideAnotherDevice) {
  const fs::path csv = dir_ / "pci.csv";
  const auto conflict = run(fmt::format("{} --pci 0000:00:02.0 --device sim -q -o {} -- true",
                                        OAPROF_BIN, csv.string()));
  EXPECT_EQ(conflict.status, 2) << conflict.output;
  EXPECT_THAT(conflict.output,
              HasSubstr("--pci 0000:00:02.0 and --device sim name different devices"));
  EXPECT_FALSE(fs::exists(csv));  // refused before anything was opened
  const auto bad = run(fmt::format("{} --pci 0000:00:02 -q -o {} -- true", OAPROF_BIN, csv.string()));
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--pci: '0000:00:02' is not a PCI address"));
  // The address --pci names is the device oaprof opens: one no machine has is what setup fails on.
  const auto absent = run(fmt::format("{} --pci 7f:1f.7 --daemon never -q -o {} -- true",
                                      OAPROF_BIN, csv.string()));
  EXPECT_EQ(absent.status, 3) << absent.output;
  EXPECT_THAT(absent.output, HasSubstr("0000:7f:1f.7"));
}

TEST_F(CommandsTest, HelpExplainsConfigLostAndThatPerfKeepsFlexMetricsRight) {
  const auto help = run(fmt::format("{} --help", OAPROF_BIN));
  ASSERT_EQ(help.status, 0) << help.output;
  EXPECT_THAT(help.output, HasSubstr(std::string(oaprof::gpu::kContextSavedNote)));
}

}  // namespace
