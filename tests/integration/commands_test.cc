// The oaprof subcommands end to end: `metrics list|show|import` against IGT's files (read from
// ../shared, never copied), `decode` of a capture the test writes with known counter values, and
// `platforms`.
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpu/counter_source.h"
#include "tests/common/run_util.h"

namespace {
namespace fs = std::filesystem;
using oaprof::testing::read_csv;
using oaprof::testing::run;
using ::testing::HasSubstr;
using ::testing::Not;

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
  const auto list =
      run(fmt::format("{} metrics list --platform kblgt2 --metrics-xml {}", OAPROF_BIN, kKblXml));
  ASSERT_EQ(list.status, 0) << list.output;
  EXPECT_THAT(list.output, HasSubstr("ComputeBasic"));
  const auto show = run(fmt::format(
      "{} metrics show ComputeBasic --platform kblgt2 --metrics-xml {}", OAPROF_BIN, kKblXml));
  ASSERT_EQ(show.status, 0) << show.output;
  EXPECT_THAT(show.output, HasSubstr("EuActive"));
  EXPECT_THAT(show.output, HasSubstr("A 7 READ"));
  const auto missing = run(fmt::format(
      "{} metrics show NoSuchSet --platform kblgt2 --metrics-xml {}", OAPROF_BIN, kKblXml));
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("NoSuchSet"));
}

TEST_F(CommandsTest, ImportedFilesAreFoundWithoutNamingThem) {
  const std::string env = fmt::format("XDG_DATA_HOME={} OAPROF_METRICS_PATH=", dir_.string());
  const auto before =
      run(fmt::format("{} {} metrics show ComputeBasic --platform kblgt2", env, OAPROF_BIN));
  EXPECT_NE(before.status, 0) << before.output;
  const auto import = run(fmt::format("{} {} metrics import {}", env, OAPROF_BIN, kKblXml));
  ASSERT_EQ(import.status, 0) << import.output;
  EXPECT_TRUE(fs::exists(dir_ / "oaprof/metrics/oa-kblgt2.xml"));
  const auto after =
      run(fmt::format("{} {} metrics show ComputeBasic --platform kblgt2", env, OAPROF_BIN));
  EXPECT_EQ(after.status, 0) << after.output;
  const auto bad = run(fmt::format("{} {} metrics import /proc/version", env, OAPROF_BIN));
  EXPECT_NE(bad.status, 0);
}

void put32(std::vector<std::uint8_t>& r, int offset, std::uint32_t v) {
  std::memcpy(&r[offset], &v, 4);
}

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
  const auto bad =
      run(fmt::format("{} decode --platform kblgt2 --input raw {}", OAPROF_BIN, torn.string()));
  EXPECT_NE(bad.status, 0);
  EXPECT_THAT(bad.output, HasSubstr("256"));
}

void write_bytes(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// The value in column `name`; empty when there is none.
std::string cell(const oaprof::testing::CsvRow& row, const std::string& name) {
  const auto it = row.find(name);
  return it == row.end() ? std::string() : it->second;
}

TEST_F(CommandsTest, DecodeEvaluatesIgtSetsOfEveryGen12AndXeLpgPart) {
  // Two 256-byte reports: 12000 timestamp ticks and 1.15 M GPU clocks apart (dwords 1 and 3 in
  // both OAG formats). With --timestamp-frequency 1 GHz, TestOa's GpuTime is the timestamp delta
  // in ns on every part: --timestamp-frequency is the OA unit's rate, the one i915 and xe give
  // (I915_PARAM_OA_TIMESTAMP_FREQUENCY) and the raw delta counts at. Xe-LPG's delta is shifted
  // right by one (IGT/Mesa oa_timestamp_shift) and so counts at half of it (report_format.cc).
  std::vector<std::uint8_t> pair(512, 0);
  put32(pair, 4, 1000);
  put32(pair, 256 + 4, 1000 + 12000);
  put32(pair, 12, 5);
  put32(pair, 256 + 12, 5 + 1'150'000);
  const fs::path capture = dir_ / "pair.bin";
  write_bytes(capture, pair);
  struct Part {
    const char* name;
    const char* dir;
    const char* gpu_time;
  };
  const std::string igt = OAPROF_IGT_METRICS_DIR, mtl = OAPROF_IGT_MTL_METRICS_DIR;
  for (const Part& part :
       {Part{"tglgt1", igt.c_str(), "12000"}, Part{"tglgt2", igt.c_str(), "12000"},
        Part{"rkl", igt.c_str(), "12000"}, Part{"adl", igt.c_str(), "12000"},
        Part{"dg1", igt.c_str(), "12000"}, Part{"mtlgt2", mtl.c_str(), "12000"},
        Part{"mtlgt3", mtl.c_str(), "12000"}}) {
    SCOPED_TRACE(part.name);
    const fs::path csv = dir_ / fmt::format("{}.csv", part.name);
    const auto r = run(fmt::format(
        "{} decode --platform {} --metrics-xml {}/oa-{}.xml --metric-set TestOa --input raw "
        "--timestamp-frequency 1000000000 -o {} {}",
        OAPROF_BIN, part.name, part.dir, part.name, csv.string(), capture.string()));
    ASSERT_EQ(r.status, 0) << r.output;
    const auto rows = read_csv(csv);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(cell(rows[0], "GpuCoreClocks"), "1150000");
    EXPECT_EQ(cell(rows[0], "GpuTime"), part.gpu_time);
  }
}

TEST_F(CommandsTest, DecodeReadsMeteorLakeMediaSetsFrom128ByteReports) {
  // MediaSet1 is oa_format 128B_MPEC8_NOA16 (MPEC8u32_B8_C8): 512 bytes are four reports, three
  // rows; the same bytes as TestOa's 256-byte reports are two, one row.
  const fs::path capture = dir_ / "oam.bin";
  write_bytes(capture, std::vector<std::uint8_t>(512, 0));
  const std::string xml = std::string(OAPROF_IGT_MTL_METRICS_DIR) + "/oa-mtlgt2.xml";
  const auto decode = [&](const std::string& args, const fs::path& csv) {
    return run(fmt::format("{} decode --platform mtlgt2 --metrics-xml {} --input raw {} -o {} {}",
                           OAPROF_BIN, xml, args, csv.string(), capture.string()));
  };
  const auto media = decode("--metric-set MediaSet1", dir_ / "media.csv");
  ASSERT_EQ(media.status, 0) << media.output;
  EXPECT_EQ(read_csv(dir_ / "media.csv").size(), 3u);
  const auto oag = decode("--metric-set TestOa", dir_ / "oag.csv");
  ASSERT_EQ(oag.status, 0) << oag.output;
  EXPECT_EQ(read_csv(dir_ / "oag.csv").size(), 1u);
  // A --format the set is not computed from is refused, naming the one it is.
  const auto clash = decode("--metric-set MediaSet1 --format 101", dir_ / "clash.csv");
  EXPECT_EQ(clash.status, 2) << clash.output;
  EXPECT_THAT(clash.output, HasSubstr("MPEC8u32_B8_C8"));
  const auto bad_hz = decode("--metric-set TestOa --timestamp-frequency=-5", dir_ / "hz.csv");
  EXPECT_EQ(bad_hz.status, 2) << bad_hz.output;
  EXPECT_THAT(bad_hz.output, HasSubstr("--timestamp-frequency"));
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
  const auto json =
      run(fmt::format("{} decode --platform kblgt2 --format 101 --input raw --json {}", OAPROF_BIN,
                      capture.string()));
  ASSERT_EQ(json.status, 0) << json.output;
  EXPECT_THAT(json.output, HasSubstr("\"GpuBusy\": null"));
}

// Offline there is no device to ask for its topology: --eus/--subslices give the capturing part's,
// and the equations divide by them (a 23-EU part with every EU busy is 100 % EU active, not the
// 95.8 % the table's 24 would make of it).
TEST_F(CommandsTest, DecodeTakesTheCapturingPartsEusFromOptions) {
  std::vector<std::uint8_t> a(256, 0), b(256, 0);
  put32(b, 4, 12000);                    // 1 ms at 12 MHz
  put32(b, 12, 1'150'000);               // GPU clocks
  put32(b, 16, 1'150'000);               // A0: busy throughout
  put32(b, 16 + 7 * 4, 1'150'000 * 23);  // A7: 23 EUs active every clock
  const fs::path capture = dir_ / "fused.bin";
  {
    std::ofstream out(capture, std::ios::binary);
    out.write(reinterpret_cast<const char*>(a.data()), 256);
    out.write(reinterpret_cast<const char*>(b.data()), 256);
  }
  const auto eu_active = [&](const std::string& options) {
    const fs::path csv = dir_ / "fused.csv";
    const auto r =
        run(fmt::format("{} decode --platform kblgt2 --format 101 --input raw {} -o {} {}",
                        OAPROF_BIN, options, csv.string(), capture.string()));
    EXPECT_EQ(r.status, 0) << r.output;
    const auto rows = read_csv(csv);
    return rows.size() == 1 ? std::stod(rows[0].at("EuActive")) : -1.0;
  };
  EXPECT_NEAR(eu_active("--eus 23"), 100.0, 0.01);
  EXPECT_NEAR(eu_active(""), 100.0 * 23 / 24, 0.01);
  const fs::path json = dir_ / "fused.json";
  ASSERT_EQ(run(fmt::format("{} decode --platform kblgt2 --input raw --eus 23 --json -o {} {}",
                            OAPROF_BIN, json.string(), capture.string()))
                .status,
            0);
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("\"topology_source\": \"options\""));
  const auto bad = run(fmt::format("{} decode --platform kblgt2 --input raw --eus 2 {}", OAPROF_BIN,
                                   capture.string()));
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--eus 2 in --subslices 3"));
}

TEST_F(CommandsTest, PciChoosesTheDeviceAndIsRefusedBesideAnotherDevice) {
  const fs::path csv = dir_ / "pci.csv";
  const auto conflict = run(
      fmt::format("{} --pci 0000:00:02.0 --device sim -q -o {} -- true", OAPROF_BIN, csv.string()));
  EXPECT_EQ(conflict.status, 2) << conflict.output;
  EXPECT_THAT(conflict.output,
              HasSubstr("--pci 0000:00:02.0 and --device sim name different devices"));
  EXPECT_FALSE(fs::exists(csv));  // refused before anything was opened
  const auto bad =
      run(fmt::format("{} --pci 0000:00:02 -q -o {} -- true", OAPROF_BIN, csv.string()));
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--pci: '0000:00:02' is not a PCI address"));
  // The address --pci names is the device oaprof opens: one no machine has is what setup fails on.
  const auto absent = run(
      fmt::format("{} --pci 7f:1f.7 --daemon never -q -o {} -- true", OAPROF_BIN, csv.string()));
  EXPECT_EQ(absent.status, 3) << absent.output;
  EXPECT_THAT(absent.output, HasSubstr("0000:7f:1f.7"));
}

// --help is one line an option; config_lost's explanation is in docs/cli.md and
// docs/hardware-access.md. What --help must still do is name every read-out.
TEST_F(CommandsTest, HelpNamesEveryCounterReadOut) {
  const auto help = run(fmt::format("{} --help", OAPROF_BIN));
  ASSERT_EQ(help.status, 0) << help.output;
  for (const auto& s : oaprof::gpu::counter_sources()) {
    EXPECT_THAT(help.output, HasSubstr(" " + std::string(s.name))) << s.name;
  }
}

nlohmann::json entry_for(const nlohmann::json& all, const std::string& pci_id) {
  for (const auto& e : all) {
    if (e["pci_id"] == pci_id) return e;
  }
  return nullptr;
}

TEST_F(CommandsTest, PlatformsListsEveryIdAsJson) {
  const auto r = run(fmt::format("{} platforms --json 2>/dev/null", OAPROF_BIN));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto all = nlohmann::json::parse(r.output);
  ASSERT_TRUE(all.is_array());
  EXPECT_GT(all.size(), 250u);
  const auto cfl = entry_for(all, "0x3e92");
  ASSERT_FALSE(cfl.is_null());
  EXPECT_EQ(cfl["generation"], "Gen9");
  EXPECT_EQ(cfl["codename"], "CFL");
  EXPECT_EQ(cfl["gt"], "GT2");
  EXPECT_EQ(cfl["eus"], 24);
  EXPECT_EQ(cfl["subslices"], 3);
  EXPECT_EQ(cfl["threads_per_eu"], 7);
  EXPECT_EQ(cfl["timestamp"], "12 MHz");
  EXPECT_EQ(cfl["timestamp_hz"], 12e6);
  EXPECT_EQ(cfl["igt_metric_file"], "oa-cflgt2.xml");
  EXPECT_EQ(cfl["kernel_driver"], "i915");
  EXPECT_EQ(cfl["fp64"], true);
  const auto apl = entry_for(all, "0x5a85");  // BXT/APL 2x6: 12 EUs, 6 threads per EU
  EXPECT_EQ(apl["eus"], 12);
  EXPECT_EQ(apl["threads_per_eu"], 6);
  const auto tgl = entry_for(all, "0x9a49");
  EXPECT_EQ(tgl["timestamp"], "read from the device");
  EXPECT_TRUE(tgl["timestamp_hz"].is_null());
  EXPECT_EQ(tgl["fp64"], false);
  const auto skl = entry_for(all, "0x1913");  // the kernel's GT1.5: no IGT set
  EXPECT_EQ(skl["gt"], "GT1.5");
  EXPECT_TRUE(skl["igt_metric_file"].is_null());
  EXPECT_EQ(entry_for(all, "0x8a70")["counts_from"], "assumed");
  EXPECT_EQ(entry_for(all, "0x4905")["force_probe"], true);
}

TEST_F(CommandsTest, PlatformsShowsOneIdAndRefusesUnknownOnes) {
  const auto text = run(fmt::format("{} platforms --pci-id 0x3E92", OAPROF_BIN));
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_THAT(text.output, HasSubstr("8086:3e92"));
  EXPECT_THAT(text.output, HasSubstr("CFL GT2"));
  EXPECT_THAT(text.output, HasSubstr("oa-cflgt2.xml"));
  const auto json =
      run(fmt::format("{} platforms --pci-id 8086:46d2 --json 2>/dev/null", OAPROF_BIN));
  ASSERT_EQ(json.status, 0) << json.output;
  const auto adln = nlohmann::json::parse(json.output);
  EXPECT_EQ(adln["eus"], 16);  // ADL-N 0x46D2: Mesa adl_gt05, one dual subslice
  EXPECT_EQ(adln["subslices"], 1);
  const auto unknown = run(fmt::format("{} platforms --pci-id 0x1234", OAPROF_BIN));
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  EXPECT_THAT(unknown.output, HasSubstr("8086:1234 is not in oaprof's platform table"));
  const auto bad = run(fmt::format("{} platforms --pci-id 12345", OAPROF_BIN));
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("'12345' is not a PCI device id"));
  const auto table = run(fmt::format("{} platforms", OAPROF_BIN));
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_THAT(table.output, HasSubstr("0x8A70"));
  EXPECT_THAT(table.output, HasSubstr("read from the device"));
}

// Ids the kernel lists that oaprof does not profile are known, with the reason: Wildcat Lake,
// Ponte Vecchio, Nova Lake S and P, Crescent Island. They once were "not in oaprof's table".
TEST_F(CommandsTest, PlatformsNamesKnownUnsupportedIdsAndWhy) {
  const std::pair<const char*, const char*> ids[] = {{"0xFD80", "Wildcat Lake (WCL)"},
                                                     {"0x0BD5", "Ponte Vecchio"},
                                                     {"0xD740", "Nova Lake S (NVL)"},
                                                     {"0xD75F", "Nova Lake P (NVL)"},
                                                     {"0x674C", "Crescent Island"}};
  for (const auto& [id, name] : ids) {
    const auto r = run(fmt::format("{} platforms --pci-id {}", OAPROF_BIN, id));
    EXPECT_EQ(r.status, 0) << id << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr(name));
    EXPECT_THAT(r.output, HasSubstr("supported:         no: "));
    EXPECT_THAT(r.output, Not(HasSubstr("not in oaprof's platform table")));
  }
  const auto pvc = run(fmt::format("{} platforms --pci-id 0x0bd5", OAPROF_BIN));
  EXPECT_THAT(pvc.output, HasSubstr("no kernel driver binds it"));
  const auto json =
      run(fmt::format("{} platforms --pci-id 8086:fd81 --json 2>/dev/null", OAPROF_BIN));
  ASSERT_EQ(json.status, 0) << json.output;
  const auto wcl = nlohmann::json::parse(json.output);
  EXPECT_EQ(wcl["supported"], false);
  EXPECT_EQ(wcl["codename"], "WCL");
  EXPECT_EQ(wcl["kernel_id_list"], "INTEL_WCL_IDS");
  EXPECT_FALSE(wcl["reason"].get<std::string>().empty());
  const auto table = run(fmt::format("{} platforms", OAPROF_BIN));
  EXPECT_THAT(table.output, HasSubstr("Known, not supported"));
  EXPECT_THAT(table.output, HasSubstr("0xFD80 0xFD81"));
  const auto all =
      nlohmann::json::parse(run(fmt::format("{} platforms --json 2>/dev/null", OAPROF_BIN)).output);
  EXPECT_EQ(entry_for(all, "0xd740")["supported"], false);
  EXPECT_EQ(entry_for(all, "0x3e92")["supported"], true);
}

// 0x7D40 (MTL-U) has no IGT metric file upstream: oaprof's mtlgt2 is its own inference, and
// `platforms` says so rather than presenting it as IGT's mapping.
TEST_F(CommandsTest, PlatformsSaysWhichMetricFileIsInferred) {
  const auto text = run(fmt::format("{} platforms --pci-id 0x7D40", OAPROF_BIN));
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_THAT(text.output, HasSubstr("oa-mtlgt2.xml (oaprof's inference, not IGT's"));
  const auto igt = run(fmt::format("{} platforms --pci-id 0x7D45", OAPROF_BIN));
  EXPECT_THAT(igt.output, Not(HasSubstr("inference")));
  const auto json = run(fmt::format("{} platforms --pci-id 0x7d40 --json 2>/dev/null", OAPROF_BIN));
  ASSERT_EQ(json.status, 0) << json.output;
  const auto mtl = nlohmann::json::parse(json.output);
  EXPECT_EQ(mtl["igt_metric_file"], "oa-mtlgt2.xml");
  EXPECT_THAT(mtl["igt_metric_file_inferred"].get<std::string>(), HasSubstr("oaprof's inference"));
  const auto table = run(fmt::format("{} platforms", OAPROF_BIN));
  EXPECT_THAT(table.output, HasSubstr("oa-mtlgt2.xml~"));
}

}  // namespace
