// `--access perf` end to end on the simulator: oaprof opens a stream on the simulated i915 with an
// IGT metric set, the program's kernels are snapshotted by MI_REPORT_PERF_COUNT while the stream
// holds the configuration, and every row carries counters and the set's metrics.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/common/run_util.h"

namespace {
namespace fs = std::filesystem;
using oaprof::testing::CommandResult;
using oaprof::testing::read_csv;
using oaprof::testing::run;
using ::testing::HasSubstr;

class PerfSimTest : public ::testing::Test {
 protected:
  PerfSimTest() {
    dir_ = fs::temp_directory_path() / fmt::format("oaprof-perf-sim-{}", ::getpid());
    fs::create_directories(dir_);
  }
  ~PerfSimTest() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(PerfSimTest, ProfilesAKernelThroughTheSimulatedI915PerfStream) {
  const fs::path csv = dir_ / "perf.csv";
  const CommandResult r = run(fmt::format(
      "{} --device sim --access perf --metric-set ComputeBasic --metrics-xml {}/oa-kblgt2.xml "
      "--idle-baseline off -q -o {} -- {} mad_vect4 --min-time 0",
      OAPROF_BIN, OAPROF_IGT_METRICS_DIR, csv.string(), KERNEL_RUNNER_BIN));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(csv);
  ASSERT_FALSE(rows.empty()) << r.output;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("kernel"), "mad_vect4");
    EXPECT_GT(std::stoull(row.at("gpu_ticks")), 0u);
    EXPECT_GT(std::stoull(row.at("A7")), 0u);  // a flex EU counter of the set
    EXPECT_FALSE(row.at("EuActive_percent").empty());
    EXPECT_THAT(row.at("flags"), ::testing::Not(HasSubstr("config_lost")));
  }
}

TEST_F(PerfSimTest, TheBuiltInSetIsRefusedWithWhatToDo) {
  const CommandResult r = run(fmt::format("{} --device sim --access perf -q -o {} -- true",
                                          OAPROF_BIN, (dir_ / "b.csv").string()));
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.output, HasSubstr("built-in set"));
  EXPECT_THAT(r.output, HasSubstr("--metric-set"));
}

// Issue 15: `oaprof --device sim --sim-platform tglgt2|mtlgt2 -- kernel_runner mad_vect4` runs end
// to end through mmio and rpc (the built-in set of the generation) and perf (IGT's ComputeBasic
// of the part, streamed by the simulated i915), and every row counts.
TEST_F(PerfSimTest, Gen12AndXeLpgPartsProfileThroughEveryReadOut) {
  struct Part {
    const char* name;
    std::string xml;
  };
  const Part parts[] = {{"tglgt2", std::string(OAPROF_IGT_METRICS_DIR) + "/oa-tglgt2.xml"},
                        {"mtlgt2", std::string(OAPROF_IGT_MTL_METRICS_DIR) + "/oa-mtlgt2.xml"}};
  for (const Part& part : parts) {
    for (const char* access : {"mmio", "rpc", "perf"}) {
      SCOPED_TRACE(fmt::format("{} {}", part.name, access));
      const fs::path csv = dir_ / fmt::format("{}-{}.csv", part.name, access);
      const std::string set =
          std::string(access) == "perf"
              ? fmt::format("--metric-set ComputeBasic --metrics-xml {}", part.xml)
              : std::string();
      const CommandResult r = run(fmt::format(
          "{} --device sim --sim-platform {} --access {} {} --idle-baseline off -q -o {} -- {} "
          "mad_vect4 --min-time 0",
          OAPROF_BIN, part.name, access, set, csv.string(), KERNEL_RUNNER_BIN));
      ASSERT_EQ(r.status, 0) << r.output;
      const auto rows = read_csv(csv);
      ASSERT_FALSE(rows.empty()) << r.output;
      for (const auto& row : rows) {
        EXPECT_EQ(row.at("kernel"), "mad_vect4");
        EXPECT_GT(std::stoull(row.at("gpu_ticks")), 0u);
        EXPECT_GT(std::stoull(row.at("A7")), 0u);  // an EU counter of the generation's layout
        EXPECT_THAT(row.at("flags"), ::testing::Not(HasSubstr("config_lost")));
      }
    }
  }
}

// Issue 30: a simulated DG2 die (`--sim-platform acmgt1|acmgt2|acmgt3`) profiles mad_vect4
// through `access` (with `set`, or the built-in set), five launches; the run's output and rows.
struct Dg2Run {
  CommandResult result;
  std::vector<oaprof::testing::CsvRow> rows;
};
Dg2Run profile_dg2(const fs::path& dir, const char* part, const char* access,
                   const std::string& set) {
  const fs::path csv = dir / fmt::format("{}-{}.csv", part, access);
  Dg2Run run_of{
      run(fmt::format("{} --device sim --sim-platform {} --access {} {} --idle-baseline off -o {} "
                      "-- {} mad_vect4 --min-time 0 --max-repeats 4",
                      OAPROF_BIN, part, access, set, csv.string(), KERNEL_RUNNER_BIN)),
      {}};
  if (run_of.result.status == 0) run_of.rows = read_csv(csv);
  return run_of;
}

// Every row of a DG2 run counts in DG2's OAG format, with the EU activity of the die's Xe-cores.
void expect_dg2_rows(const Dg2Run& r, const char* part) {
  ASSERT_EQ(r.result.status, 0) << r.result.output;
  EXPECT_THAT(r.result.output, HasSubstr("simulated DG2"));
  EXPECT_THAT(r.result.output, HasSubstr("A24u40_A14u32_B8_C8"));
  ASSERT_FALSE(r.rows.empty()) << r.result.output;
  for (const auto& row : r.rows) {
    EXPECT_EQ(row.at("kernel"), "mad_vect4");
    EXPECT_GT(std::stoull(row.at("gpu_ticks")), 0u) << part;
    EXPECT_GT(std::stoull(row.at("A7")), 0u) << part;  // XveActive's counter
    EXPECT_GT(std::stod(row.at("XveActive_percent")), 0.0) << part;
    EXPECT_THAT(row.at("flags"), ::testing::Not(HasSubstr("config_lost")));
  }
}

// Through i915 perf: IGT's RenderBasic of the die's own file, streamed by the simulated i915
// in DG2's format; the EUs are what its topology query answered, not the table's assumption.
TEST_F(PerfSimTest, Dg2PartsProfileThroughTheSimulatedI915PerfStream) {
  for (const char* part : {"acmgt1", "acmgt2", "acmgt3"}) {
    SCOPED_TRACE(part);
    const Dg2Run r = profile_dg2(dir_, part, "perf",
                                 fmt::format("--metric-set RenderBasic --metrics-xml {}/oa-{}.xml",
                                             OAPROF_IGT_DG2_METRICS_DIR, part));
    expect_dg2_rows(r, part);
    for (const auto& row : r.rows) {
      EXPECT_THAT(row.at("flags"), ::testing::Not(HasSubstr("topology_from_table")));
    }
  }
}

// Through the BAR (mmio, DG2's registers are still in BAR0) and through rpc's softpinned batch
// (the path DG2's i915 takes: no relocations, FIXED mappings): the built-in set.
TEST_F(PerfSimTest, Dg2PartsProfileThroughMmioAndRpc) {
  for (const char* part : {"acmgt1", "acmgt2", "acmgt3"}) {
    SCOPED_TRACE(part);
    expect_dg2_rows(profile_dg2(dir_, part, "mmio", ""), part);
  }
  expect_dg2_rows(profile_dg2(dir_, "acmgt1", "rpc", ""), "acmgt1");
}

// Issue 16: a Lunar Lake part, driven by xe, profiled through xe's observation stream with IGT's
// ComputeBasic of oa-lnl.xml: PEC64u64 rows with 64 counters, the set's metrics, and every row
// saying its boundaries are periodic reports. The register read-outs are refused with the reason.
TEST_F(PerfSimTest, AnXe2PartProfilesThroughTheSimulatedXeStream) {
  const fs::path csv = dir_ / "lnl.csv";
  const std::string xml = std::string(OAPROF_IGT_XE_METRICS_DIR) + "/oa-lnl.xml";
  const CommandResult r = run(fmt::format(
      "{} --device sim --sim-platform lnl --access perf --metric-set ComputeBasic --metrics-xml {} "
      "--idle-baseline off -q -o {} -- {} mad_vect4 --min-time 0",
      OAPROF_BIN, xml, csv.string(), KERNEL_RUNNER_BIN));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(csv);
  ASSERT_FALSE(rows.empty()) << r.output;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("kernel"), "mad_vect4");
    EXPECT_GT(std::stoull(row.at("gpu_ticks")), 0u);
    EXPECT_GT(std::stoull(row.at("A63")), 0u);  // the last PEC counter has its column
    EXPECT_FALSE(row.at("GPU_BUSY_percent").empty());
    // Needs $L3BankTotalCount, and the simulated xe's topology reply has no L3 mask.
    EXPECT_TRUE(row.at("L3_STALL_percent").empty());
    EXPECT_THAT(row.at("flags"), HasSubstr("xe_periodic"));
    // The EUs and Xe-cores are what xe's GT topology query answered, not the table's guess.
    EXPECT_THAT(row.at("flags"), ::testing::Not(HasSubstr("topology_from_table")));
    // The interval runs from a report before the kernel to one after it.
    EXPECT_GE(std::stod(row.at("gpu_time_ns")), std::stod(row.at("kernel_ns")));
  }
  for (const char* access : {"mmio", "rpc"}) {
    const CommandResult refused =
        run(fmt::format("{} --device sim --sim-platform lnl --access {} -q -o {} -- true",
                        OAPROF_BIN, access, (dir_ / "refused.csv").string()));
    EXPECT_EQ(refused.status, 2) << refused.output;
    EXPECT_THAT(refused.output, HasSubstr("use --access perf"));
  }
}

// Issue 30: Battlemage is a discrete card, whose power the CPU's RAPL never includes. On the
// simulator its energy comes from a simulated hwmon laid out as xe registers the card's (read
// through the real hwmon reader): the card and GPU-package planes, gpu-pkg as the headline, and
// every figure labelled a model. The simulated RAPL tree is refused by name for it.
TEST_F(PerfSimTest, ADiscreteBattlemageDrawsItsEnergyFromASimulatedHwmon) {
  const fs::path csv = dir_ / "bmg.csv";
  const std::string xml = std::string(OAPROF_IGT_XE_METRICS_DIR) + "/oa-bmg.xml";
  const CommandResult r = run(fmt::format(
      "{} --device sim --sim-platform bmg --access perf --metric-set ComputeBasic --metrics-xml "
      "{} --idle-baseline off -o {} -- {} mad_vect4 --min-time 0",
      OAPROF_BIN, xml, csv.string(), KERNEL_RUNNER_BIN));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("energy: sim-hwmon (simulated: a model, not a measurement)"));
  const auto rows = read_csv(csv);
  ASSERT_FALSE(rows.empty()) << r.output;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("energy_source"), "sim-hwmon");
    EXPECT_EQ(row.at("igpu_formula"), "gpu-pkg");
    EXPECT_THAT(row.at("flags"), HasSubstr("energy_simulated"));
    EXPECT_GT(std::stoull(row.at("gpu_pkg_energy_uj")), 0u);
    EXPECT_GT(std::stoull(row.at("gpu_card_energy_uj")), 0u);
    EXPECT_TRUE(row.at("package_energy_uj").empty());  // no CPU plane is the card's power
  }
  const CommandResult rapl = run(
      fmt::format("{} --device sim --sim-platform bmg --access perf --energy sim -q -o {} -- true",
                  OAPROF_BIN, (dir_ / "rapl.csv").string()));
  EXPECT_EQ(rapl.status, 2) << rapl.output;
  EXPECT_THAT(rapl.output, HasSubstr("never include a discrete card"));
  EXPECT_THAT(rapl.output, HasSubstr("use --energy auto or sim-hwmon"));
}

// Issue 16: Tiger Lake and Meteor Lake bound to xe (xe.force_probe), profiled through xe's
// observation stream with RenderBasic of igt-xe's files: A/B/C rows in the part's own format, the
// set's metrics, every row saying its boundaries are periodic reports; Meteor Lake's snapshots
// wait out xe's poll, and the run says so.
TEST_F(PerfSimTest, Gen12AndXeLpgPartsBoundToXeProfileThroughTheSimulatedXeStream) {
  for (const char* part : {"tglgt2", "mtlgt2"}) {
    SCOPED_TRACE(part);
    const fs::path csv = dir_ / fmt::format("{}-xe.csv", part);
    const std::string xml = fmt::format("{}/oa-{}.xml", OAPROF_IGT_XE_METRICS_DIR, part);
    const CommandResult r = run(
        fmt::format("{} --device sim --sim-platform {}-xe --access perf --metric-set RenderBasic "
                    "--metrics-xml {} --idle-baseline off -o {} -- {} mad_vect4 --min-time 0",
                    OAPROF_BIN, part, xml, csv.string(), KERNEL_RUNNER_BIN));
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr(std::string(part) == "tglgt2" ? "A32u40_A4u32_B8_C8"
                                                                  : "A24u40_A14u32_B8_C8"));
    if (std::string(part) == "mtlgt2") {
      EXPECT_THAT(r.output, HasSubstr("the engine's timestamp cannot place them"));
    } else {
      EXPECT_THAT(r.output, ::testing::Not(HasSubstr("waiting out xe's buffer poll")));
    }
    const auto rows = read_csv(csv);
    ASSERT_FALSE(rows.empty()) << r.output;
    for (const auto& row : rows) {
      EXPECT_GT(std::stoull(row.at("gpu_ticks")), 0u);
      EXPECT_GT(std::stoull(row.at("A7")), 0u);  // an EU counter of the set
      // The set's EU activity, named as each file names it.
      const char* active = std::string(part) == "tglgt2" ? "EuActive_percent" : "XveActive_percent";
      EXPECT_GT(std::stod(row.at(active)), 0.0);
      EXPECT_THAT(row.at("flags"), HasSubstr("xe_periodic"));
      EXPECT_THAT(row.at("flags"), ::testing::Not(HasSubstr("topology_from_table")));
      EXPECT_GE(std::stod(row.at("gpu_time_ns")), std::stod(row.at("kernel_ns")));
    }
    const CommandResult refused =
        run(fmt::format("{} --device sim --sim-platform {}-xe --access mmio -q -o {} -- true",
                        OAPROF_BIN, part, (dir_ / "refused.csv").string()));
    EXPECT_EQ(refused.status, 2) << refused.output;
    EXPECT_THAT(refused.output, HasSubstr("use --access perf"));
  }
}

// kernel_runner's two kernels, three launches each after a warm-up, counted in three of IGT's
// sets on the simulated Tiger Lake with `replay_mode`, rows joined into `csv`.
CommandResult three_sets(const fs::path& csv, const char* replay_mode,
                         const std::string& more = "") {
  return run(fmt::format(
      "{} --device sim --sim-platform tglgt2 --access perf --metrics-xml {}/oa-tglgt2.xml "
      "--metric-set ComputeBasic,L3_1,Sampler_1 --replay-mode {} --idle-baseline off -o {} {} -- "
      "{} --min-time 100000 --max-repeats 3 mad_vect4 load_store_vect4",
      OAPROF_BIN, OAPROF_IGT_METRICS_DIR, replay_mode, csv.string(), more, KERNEL_RUNNER_BIN));
}

// Issue 20: an application replay of an external program over three of IGT's sets: one pass per
// set, each with its own file, and -o's file with one row per launch carrying every set's
// metrics, each equal to its pass's own row.
TEST_F(PerfSimTest, ThreeSetsOfAnExternalProgramJoinIntoOneRowPerLaunch) {
  const fs::path csv = dir_ / "joined.csv";
  const CommandResult r = three_sets(csv, "application");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("pass 3/3 (Sampler_1)"));
  EXPECT_THAT(r.output, HasSubstr("programming the OA unit"));
  const auto joined = read_csv(csv);
  ASSERT_FALSE(joined.empty()) << r.output;
  for (const char* set : {"ComputeBasic", "L3_1", "Sampler_1"}) {
    SCOPED_TRACE(set);
    const auto pass = read_csv(dir_ / fmt::format("joined.{}.csv", set));
    ASSERT_EQ(pass.size(), joined.size());  // the same launches, each once
    for (std::size_t i = 0; i < pass.size(); ++i) {
      EXPECT_EQ(joined[i].at("kernel"), pass[i].at("kernel"));
      EXPECT_EQ(joined[i].at(fmt::format("{}.gpu_time_ns", set)), pass[i].at("gpu_time_ns"));
      EXPECT_EQ(joined[i].at(fmt::format("{}.GpuBusy_percent", set)),
                pass[i].at("GpuBusy_percent"));
    }
  }
  EXPECT_FALSE(joined.front().at("L3_1.L30Bank0InputAvailable_percent").empty());
  EXPECT_FALSE(joined.front().at("Sampler_1.Sampler00InputAvailable_percent").empty());
}

// A program that launches more each run: the passes are not joined (exit status 6, the first
// difference named), and each pass's own file is kept.
TEST_F(PerfSimTest, RunsThatLaunchDifferentlyAreNotJoinedAndKeepTheirFiles) {
  const fs::path count = dir_ / "runs";
  const fs::path script = dir_ / "growing.sh";
  std::ofstream(script) << fmt::format(
      "#!/bin/sh\nn=$(cat {0} 2>/dev/null || echo 2)\necho $((n + 1)) > {0}\n"
      "exec {1} --min-time 100000 --max-repeats $n mad_vect4\n",
      count.string(), KERNEL_RUNNER_BIN);
  fs::permissions(script, fs::perms::owner_all);
  const fs::path csv = dir_ / "grow.csv";
  const CommandResult r = run(fmt::format(
      "{} --device sim --sim-platform tglgt2 --access perf --metrics-xml {}/oa-tglgt2.xml "
      "--metric-set ComputeBasic,L3_1 --replay-mode application --idle-baseline off -o {} -- {}",
      OAPROF_BIN, OAPROF_IGT_METRICS_DIR, csv.string(), script.string()));
  EXPECT_EQ(r.status, 6) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the runs launched different sequences"));
  EXPECT_THAT(r.output, HasSubstr("pass 2 (L3_1) has launch"));
  EXPECT_FALSE(fs::exists(csv));
  EXPECT_FALSE(read_csv(dir_ / "grow.ComputeBasic.csv").empty());
  EXPECT_FALSE(read_csv(dir_ / "grow.L3_1.csv").empty());
}

// Issue 20's kernel replay: one run of the program, each launch once per set with the OA unit
// reprogrammed between its passes (through the simulated i915 perf stream, reopened per set).
// Each set's rows go to their own file, and -o's file joins them: every launch once, with each
// set's metrics, its per-set GPU time and all its passes.
TEST_F(PerfSimTest, KernelReplayCountsThreeSetsForEachLaunchInOneRun) {
  const fs::path csv = dir_ / "kernel.csv";
  const fs::path json = dir_ / "kernel.json";
  const CommandResult r = three_sets(csv, "kernel", "--json " + json.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto joined = read_csv(csv);
  ASSERT_EQ(joined.size(), 8u) << r.output;  // two kernels, a warm-up and three repeats each
  // Each launch starts with the set the unit holds: two switches a launch, none inside a window.
  EXPECT_THAT(r.output, HasSubstr("reprogrammed 16 times between passes"));
  EXPECT_EQ(r.output.find("pass 1/3"), std::string::npos) << "one run, not one per set";
  for (const char* set : {"ComputeBasic", "L3_1", "Sampler_1"}) {
    SCOPED_TRACE(set);
    const auto rows = read_csv(dir_ / fmt::format("kernel.{}.csv", set));
    ASSERT_EQ(rows.size(), joined.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].at("launch"), joined[i].at("launch")) << "a launch's rows share its index";
      EXPECT_EQ(rows[i].at("replay_passes"), "3");
      EXPECT_EQ(joined[i].at("replay_passes"), "3");
      EXPECT_THAT(rows[i].at("flags"), HasSubstr("replayed"));
      EXPECT_THAT(rows[i].at("flags"), ::testing::Not(HasSubstr("pass_")));
      EXPECT_EQ(joined[i].at(fmt::format("{}.gpu_time_ns", set)), rows[i].at("gpu_time_ns"));
      EXPECT_GT(std::stod(rows[i].at("gpu_time_ns")), 0);
      EXPECT_EQ(joined[i].at(fmt::format("{}.GpuBusy_percent", set)),
                rows[i].at("GpuBusy_percent"));
    }
  }
  EXPECT_FALSE(joined.front().at("ComputeBasic.EuActive_percent").empty());
  EXPECT_FALSE(joined.front().at("L3_1.L30Bank0InputAvailable_percent").empty());
  EXPECT_FALSE(joined.front().at("Sampler_1.Sampler00InputAvailable_percent").empty());
  // --json: each set's own document, and the joined rows as one, numbers as numbers.
  EXPECT_TRUE(fs::exists(dir_ / "kernel.ComputeBasic.json"));
  std::ifstream in(json);
  const auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(doc.is_object()) << r.output;
  EXPECT_EQ(doc["joined_from"]["replay"], "kernel");
  EXPECT_EQ(doc["joined_from"]["sets"].size(), 3u);
  ASSERT_EQ(doc["launches"].size(), joined.size());
  for (std::size_t i = 0; i < joined.size(); ++i) {
    const auto& launch = doc["launches"][i];
    EXPECT_EQ(launch["kernel"], joined[i].at("kernel"));
    ASSERT_TRUE(launch["L3_1.gpu_time_ns"].is_number());
    // The CSV rounds to whole nanoseconds.
    EXPECT_NEAR(launch["L3_1.gpu_time_ns"].get<double>(),
                std::stod(joined[i].at("L3_1.gpu_time_ns")), 0.5);
  }
}

// --replay auto cannot be split among sets: refused before anything is opened or written.
TEST_F(PerfSimTest, KernelReplayAcrossSetsSaysWhenItCannotRun) {
  const auto with = [&](const char* option) {
    return run(fmt::format(
        "{} --device sim --metric-set ComputeBasic,L3_1 --metrics-xml {}/oa-tglgt2.xml "
        "--sim-platform tglgt2 {} -o {} -- {} mad_vect4",
        OAPROF_BIN, OAPROF_IGT_METRICS_DIR, option, (dir_ / "x.csv").string(), KERNEL_RUNNER_BIN));
  };
  const CommandResult automatic = with("--replay auto");
  EXPECT_EQ(automatic.status, 2) << automatic.output;
  EXPECT_THAT(automatic.output, HasSubstr("give --replay N (passes per set)"));
  EXPECT_FALSE(fs::exists(dir_ / "x.csv"));
  EXPECT_FALSE(fs::exists(dir_ / "x.ComputeBasic.csv"));
}

// --metrics: the counters by name; oaprof picks the fewest sets that hold them and says which.
// Two sets are counted by kernel replay, or by application replay; a name no set has is refused
// with the closest ones.
TEST_F(PerfSimTest, MetricsChoosesTheFewestSetsThatHoldThem) {
  const std::string base = fmt::format(
      "{} --device sim --sim-platform tglgt2 --access perf --metrics-xml {}/oa-tglgt2.xml "
      "--idle-baseline off",
      OAPROF_BIN, OAPROF_IGT_METRICS_DIR);
  const std::string program =
      fmt::format("-- {} --min-time 100000 --max-repeats 2 mad_vect4", KERNEL_RUNNER_BIN);
  const fs::path csv = dir_ / "chosen.csv";
  const std::string both = "--metrics L30Bank0InputAvailable,Sampler00InputAvailable,EuActive";
  const CommandResult kernel =
      run(fmt::format("{} {} -o {} {}", base, both, csv.string(), program));
  ASSERT_EQ(kernel.status, 0) << kernel.output;
  EXPECT_THAT(kernel.output, HasSubstr("kernel replay across 2 sets"));
  EXPECT_TRUE(read_csv(csv).front().contains("Sampler_1.Sampler00InputAvailable_percent"));
  const CommandResult r = run(
      fmt::format("{} {} --replay-mode application -o {} {}", base, both, csv.string(), program));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("L30Bank0InputAvailable from L3_1"));
  EXPECT_THAT(r.output, HasSubstr("Sampler00InputAvailable from Sampler_1"));
  EXPECT_THAT(r.output, HasSubstr("2 sets of oa-tglgt2.xml"));
  const auto joined = read_csv(csv);
  ASSERT_FALSE(joined.empty());
  EXPECT_TRUE(joined.front().contains("Sampler_1.Sampler00InputAvailable_percent"));
  const CommandResult unknown =
      run(fmt::format("{} --metrics EuActiv -o {} {}", base, csv.string(), program));
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  EXPECT_THAT(unknown.output, HasSubstr("closest: EuActive"));
}

// A metric file the user wrote may name a set as a path: that name would become a pass's file
// name, so the sets --metrics chose are checked as --metric-set's are, and nothing is written.
TEST_F(PerfSimTest, MetricsRefusesASetWhoseNameIsAPath) {
  std::ifstream in(fs::path(OAPROF_IGT_METRICS_DIR) / "oa-tglgt2.xml");
  std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string symbol = "symbol_name=\"L3_1\"";
  const std::size_t at = xml.find(symbol);
  ASSERT_NE(at, std::string::npos);
  xml.replace(at, symbol.size(), "symbol_name=\"../evil\"");
  const fs::path hostile = dir_ / "oa-tglgt2.xml";
  std::ofstream(hostile) << xml;
  const fs::path csv = dir_ / "out.csv";
  const CommandResult r = run(fmt::format(
      "{} --device sim --sim-platform tglgt2 --access perf --metrics-xml {} --idle-baseline off "
      "--metrics L30Bank0InputAvailable,Sampler00InputAvailable --replay-mode application -o {} "
      "-- {} --min-time 100000 --max-repeats 2 mad_vect4",
      OAPROF_BIN, hostile.string(), csv.string(), KERNEL_RUNNER_BIN));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("is not a set's symbol name"));
  EXPECT_FALSE(fs::exists(csv));
  EXPECT_FALSE(fs::exists(dir_ / "out.Sampler_1.csv"));
}

}  // namespace
