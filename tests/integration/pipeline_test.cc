// Runs the demo pipeline for real and checks the CSV against the simulator's model: rows equal
// launches, and the counter deltas agree with the sim's frequency and the kernel's duration.
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/common/known_work_rows.h"
#include "tests/common/run_util.h"

namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

using oaprof::testing::CommandResult;
using oaprof::testing::CsvRow;
using oaprof::testing::read_csv;
using oaprof::testing::run;

class PipelineTest : public ::testing::Test {
 protected:
  PipelineTest() {
    dir_ = fs::temp_directory_path() / fmt::format("oaprof-it-{}-{}", ::getpid(), counter_++);
    fs::create_directories(dir_);
  }
  ~PipelineTest() override { fs::remove_all(dir_); }
  static inline int counter_ = 0;
  fs::path dir_;
};

TEST_F(PipelineTest, DemoCsvHasOneRowPerLaunchConsistentWithTheSimulator) {
  const fs::path csv = dir_ / "oaprof-mad_vect4.csv";
  const CommandResult r =
      run(fmt::format("{} --device sim --format 101 -o {} -- {} mad_vect4 --min-time 20",
                      OAPROF_BIN, csv.string(), KERNEL_RUNNER_BIN));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("device: simulated"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(mad_vect4\s+4096\s+64\s+512\s+(\d+))")))
      << r.output;
  const int repeats = std::stoi(m[1]);
  // The simulated read-out reads its registers one by one: oaprof says within how long of its
  // timestamp every unflagged snapshot was read (its tolerance is twice its fastest read-out, so
  // tens of µs in the unoptimised sanitizer build: CI saw a 4.7 ms window read 1.9 % fast).
  ASSERT_TRUE(std::regex_search(
      r.output, m, std::regex(R"(each unflagged one had its registers read within ([0-9.]+) µs)")))
      << r.output;
  const double readout_ns = (std::stod(m[1]) + 0.05) * 1e3;  // printed to 0.1 µs
  const auto rows = read_csv(csv);
  ASSERT_EQ(static_cast<int>(rows.size()), repeats + 1) << "measured launches plus the warm-up";

  constexpr double kSimMhz = 1150.0;  // SimConfig's default frequency
  std::vector<double> frequencies;
  for (const auto& row : rows) {
    SCOPED_TRACE("launch " + row.at("launch"));
    EXPECT_EQ(row.at("kernel"), "mad_vect4");
    EXPECT_EQ(row.at("global_size"), "4096");
    EXPECT_EQ(row.at("local_size"), "64");
    EXPECT_EQ(row.at("device"), "simulated");
    const double kernel_ns = std::stod(row.at("kernel_ns"));
    const double gpu_ns = std::stod(row.at("gpu_time_ns"));
    const double ticks = std::stod(row.at("gpu_ticks"));
    const double a0 = std::stod(row.at("A0"));
    const double a7 = std::stod(row.at("A7"));
    ASSERT_GT(ticks, 0);
    ASSERT_GT(a0, 0);
    // A snapshot whose registers no retry could read within the read-out's tolerance (a loaded
    // machine preempting oaprof between them) pairs counts and time of different instants: the
    // row says so, and its figures per time are not held to the model.
    if (row.at("flags").find("readout_interrupted") != std::string::npos) continue;
    // GPU clocks over GPU time is the simulated frequency. GPU time is a difference of two
    // timestamps counted at 12 MHz, so it may be short of the true window by up to one tick;
    // and the clocks of a window may run ahead of or behind its time by up to the read-out's
    // skew (above). Each row is held to those bounds, and the median row to the frequency within
    // 1 % below.
    constexpr double kTimestampTickNs = 1e3 / 12.0;
    const double mhz = ticks / gpu_ns * 1e3;
    EXPECT_NEAR(mhz, kSimMhz, kSimMhz * (0.01 + (kTimestampTickNs + readout_ns) / gpu_ns));
    frequencies.push_back(mhz);
    // The sim is busy from the 'before' to the 'after' snapshot, which brackets the kernel.
    EXPECT_LE(a0, ticks);
    EXPECT_GE(a0 / kSimMhz * 1e3, kernel_ns * 0.95) << "busy clocks must cover the kernel";
    EXPECT_LE(kernel_ns, gpu_ns * 1.05);
    // EU active: the simulator knows mad_vect4's work (issue 35), so it counts the busier FPU's
    // EU-cycles plus sends and dispatch, not a fraction of busy clocks.
    EXPECT_GE(a7, std::stod(row.at("A10")));
  }
  ASSERT_FALSE(frequencies.empty()) << "every row's read-out was interrupted";
  std::nth_element(frequencies.begin(), frequencies.begin() + frequencies.size() / 2,
                   frequencies.end());
  EXPECT_NEAR(frequencies[frequencies.size() / 2], kSimMhz, kSimMhz * 0.01);
}

// Issue 35: the layer names each launch's kernel in its 'before' snapshot, so the simulator counts
// a catalogue kernel's known work: FLOPs and bytes from the counters match bench::known_work,
// for a compute kernel and for a memory one.
TEST_F(PipelineTest, SimulatedCountersOfCatalogueKernelsMatchTheirKnownWork) {
  for (const std::string kernel : {"mad_vect4", "load_store_vect4"}) {
    const fs::path csv = dir_ / (kernel + ".csv");
    const CommandResult r =
        run(fmt::format("{} --device sim --format 101 -q -o {} -- {} {} --min-time 1 "
                        "--max-repeats 2",
                        OAPROF_BIN, csv.string(), KERNEL_RUNNER_BIN, kernel));
    ASSERT_EQ(r.status, 0) << r.output;
    const auto rows = read_csv(csv);
    ASSERT_FALSE(rows.empty()) << r.output;
    for (const CsvRow& row : rows) oaprof::testing::expect_counts_match_known_work(row);
  }
}

// Issue 29, item 13: with --launch-skip N the rows give the program's own launch index, N, N+1,
// ..., not a count that restarts at 0: in both attributions and through both ways in.
// kernel_runner makes five launches here: the warm-up and four repeats.
TEST_F(PipelineTest, WithLaunchSkipTheLaunchColumnIsTheProgramsOwnLaunchIndex) {
  const fs::path csv = dir_ / "skip.csv";
  for (const std::string inject : {"layer", "preload"}) {
    for (const std::string attribution : {"bracketed", "sampled"}) {
      SCOPED_TRACE(inject + ", " + attribution);
      const CommandResult r = run(fmt::format(
          "{} --device sim -q --inject {} --attribution {} --launch-skip 2 -o {} -- {} mad_vect4 "
          "--min-time 10s --max-repeats 4",
          OAPROF_BIN, inject, attribution, csv.string(), KERNEL_RUNNER_BIN));
      ASSERT_EQ(r.status, 0) << r.output;
      std::vector<std::string> launches;
      for (const CsvRow& row : read_csv(csv)) launches.push_back(row.at("launch"));
      std::sort(launches.begin(), launches.end());
      EXPECT_EQ(launches, (std::vector<std::string>{"2", "3", "4"})) << r.output;
    }
  }
}

TEST_F(PipelineTest, TheProgramsExitStatusPassesThroughAndTheCsvStaysValid) {
  const fs::path csv = dir_ / "fail.csv";
  const CommandResult bad = run(fmt::format("{} --device sim -q -o {} -- {} no_such_kernel",
                                            OAPROF_BIN, csv.string(), KERNEL_RUNNER_BIN));
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("unknown kernel 'no_such_kernel'"));
  EXPECT_TRUE(read_csv(csv).empty());
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_THAT(header, HasSubstr("launch,pid,tid,kernel,"));

  const CommandResult killed = run(
      fmt::format("{} --device sim -q -o {} -- /bin/sh -c 'kill -9 $$'", OAPROF_BIN, csv.string()));
  EXPECT_EQ(killed.status, 128 + 9) << killed.output;
}

// The real binary, as `sudo oaprof` runs it: root with SUDO_UID/SUDO_GID of another user. The
// program must run as that user, with that user's groups and home and no capabilities.
nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// A part with one EU fused off (the reference UHD 630 has 23 of 24): its i915 says so at open,
// and every equation divides by its 23 EUs, so EU active per busy clock is A7 / (23 × A0), not
// A7 / (24 × A0) (4 % apart; the simulator counts mad_vect4's known work into A7). The JSON says
// where the topology and the timestamp frequency came from.
TEST_F(PipelineTest, AFusedPartsTopologyFromI915ReachesEveryEquation) {
  const fs::path csv = dir_ / "fused.csv", json = dir_ / "fused.json";
  const CommandResult r = run(fmt::format(
      "{} --device sim --sim-eus 23 --energy none --idle-baseline off -q -o {} --json {} -- {} "
      "mad_vect4 --min-time 5",
      OAPROF_BIN, csv.string(), json.string(), KERNEL_RUNNER_BIN));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(csv);
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    // Both percentages are of all GPU clocks; their ratio is EU activity while busy.
    const double per_busy_clock =
        std::stod(row.at("EuActive_percent")) / std::stod(row.at("GpuBusy_percent")) * 100;
    const double a7_per_eu_busy_clock =
        std::stod(row.at("A7")) / (23 * std::stod(row.at("A0"))) * 100;
    EXPECT_NEAR(per_busy_clock / a7_per_eu_busy_clock, 1.0, 0.01) << row.at("launch");
    EXPECT_THAT(row.at("flags"), ::testing::Not(HasSubstr("topology_from_table")));
  }
  const nlohmann::json meta = read_json(json);
  ASSERT_TRUE(meta.is_object());
  EXPECT_EQ(meta["eus"], 23);
  EXPECT_EQ(meta["topology_source"], "i915 query");
  EXPECT_EQ(meta["topology"]["eus"], 23);
  EXPECT_EQ(meta["topology"]["subslice_mask"], 7);
  EXPECT_EQ(meta["timestamp_source"], "i915 getparam");
  EXPECT_EQ(meta["timestamp_hz"], 12e6);
}

// Without an i915 to ask, the platform table's topology is used, and every row says so.
TEST_F(PipelineTest, WithoutI915EveryRowIsFlaggedTopologyFromTable) {
  const fs::path csv = dir_ / "table.csv", json = dir_ / "table.json";
  const CommandResult r = run(fmt::format(
      "{} --device sim --sim-no-i915 --mode app --energy none --idle-baseline off -q -o {} "
      "--json {} -- /bin/true",
      OAPROF_BIN, csv.string(), json.string()));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_THAT(rows[0].at("flags"), HasSubstr("topology_from_table"));
  const nlohmann::json meta = read_json(json);
  ASSERT_TRUE(meta.is_object());
  EXPECT_EQ(meta["eus"], 24);
  EXPECT_EQ(meta["topology_source"], "platform table");
  EXPECT_THAT(meta["topology"]["note"].get<std::string>(), HasSubstr("--sim-no-i915"));
  EXPECT_EQ(meta["timestamp_source"], "registers");
  EXPECT_EQ(run(fmt::format("{} --device sim --sim-eus 25 -q -- /bin/true", OAPROF_BIN)).status, 2);
}

TEST_F(PipelineTest, UnderSudoTheProgramRunsAsTheUserWithoutCapabilities) {
  if (::geteuid() != 0) GTEST_SKIP() << "oaprof drops privileges only when it runs as root";
  const passwd* pw = ::getpwuid(65534);
  if (pw == nullptr) GTEST_SKIP() << "uid 65534 has no account here";
  const std::string home = pw->pw_dir;
  // The output is the user's to write: oaprof opens it as the user, not as root.
  ASSERT_EQ(::chown(dir_.c_str(), 65534, 65534), 0);
  const fs::path csv = dir_ / "drop.csv";
  // In single quotes, so that the child's shell expands it, not the test's.
  const std::string probe =
      "echo uid=$(id -u) gid=$(id -g) groups=$(id -G); grep -E \"^Cap(Inh|Prm|Eff|Amb):\" "
      "/proc/self/status; echo home=$HOME";
  const CommandResult r = run(fmt::format(
      "env HOME=/root SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody {} --device sim --mode app "
      "--energy none --idle-baseline off -q -o {} -- /bin/sh -c '{}'",
      OAPROF_BIN, csv.string(), probe));
  ASSERT_EQ(r.status, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(uid=(\d+) gid=(\d+) groups=([\d ]+))")))
      << r.output;
  EXPECT_EQ(m[1], "65534");
  EXPECT_EQ(m[2], "65534");
  std::istringstream groups(m[3]);
  for (std::string g; groups >> g;) EXPECT_NE(g, "0") << "root's group kept: " << m[3];
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapAmb"}) {
    EXPECT_THAT(r.output, HasSubstr(std::string(set) + ":\t0000000000000000")) << r.output;
  }
  EXPECT_THAT(r.output, HasSubstr("home=" + home + "\n"));
  struct stat st {};
  ASSERT_EQ(::stat(csv.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u) << "the CSV is the user's";
}

TEST_F(PipelineTest, BadOptionsAndMissingProgramsHaveTheirOwnExitCodes) {
  EXPECT_EQ(run(fmt::format("{} --device sim --format 110 -- true", OAPROF_BIN)).status, 2);
  EXPECT_EQ(run(fmt::format("{} --device sim", OAPROF_BIN)).status, 2);
  const CommandResult missing = run(fmt::format("{} --device sim -q -o {} -- /no/such/program",
                                                OAPROF_BIN, (dir_ / "m.csv").string()));
  EXPECT_EQ(missing.status, 127);
  EXPECT_THAT(missing.output, HasSubstr("cannot run '/no/such/program'"));
  const CommandResult unwritable =
      run(fmt::format("{} --device sim -o /proc/nope.csv -- true", OAPROF_BIN));
  EXPECT_EQ(unwritable.status, 4) << unwritable.output;
}

// Every option is checked before anything is opened (src/run/profile_plan.h): a bad one
// leaves no register file, no output and no journal behind. --device sim:FILE creates FILE as it
// opens, so it shows whether the device was opened before the refusal.
TEST_F(PipelineTest, ABadOptionIsRefusedBeforeTheDeviceOrAnyFileIsOpened) {
  const fs::path registers = dir_ / "registers", csv = dir_ / "never.csv";
  for (const char* bad : {"--energy battery", "--idle-baseline soon", "--igpu-power pp9",
                          "--json - --trace -", "--access dma", "--forcewake always"}) {
    const CommandResult r = run(fmt::format("{} --device sim:{} -q -o {} {} -- true", OAPROF_BIN,
                                            registers.string(), csv.string(), bad));
    EXPECT_EQ(r.status, 2) << bad << ": " << r.output;
    EXPECT_FALSE(fs::exists(registers)) << bad;
    EXPECT_FALSE(fs::exists(csv)) << bad;
  }
}

// Two ranks of a job (PMI_RANK, as mpirun sets it) write a file each through one -o pattern, and
// oaprof merge makes one table of them with each kernel across both runs.
TEST_F(PipelineTest, RanksWriteTheirOwnFilesAndMergeJoinsThem) {
  for (int rank : {0, 1}) {
    const CommandResult r = run(
        fmt::format("cd {} && PMI_RANK={} {} --device sim -q --energy none --idle-baseline off -o "
                    "out-%h-%r.csv -- {} mad_vect4 --min-time 1",
                    dir_.string(), rank, OAPROF_BIN, KERNEL_RUNNER_BIN));
    ASSERT_EQ(r.status, 0) << r.output;
  }
  std::vector<fs::path> files;
  std::size_t rows = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().extension() != ".csv") continue;
    files.push_back(e.path());
    const auto csv = read_csv(e.path().string());
    rows += csv.size();
    ASSERT_FALSE(csv.empty());
    EXPECT_EQ(csv[0].at("rank"),
              e.path().stem().string().substr(e.path().stem().string().rfind('-') + 1));
    EXPECT_FALSE(csv[0].at("host").empty());
  }
  ASSERT_EQ(files.size(), 2u);
  const fs::path all = dir_ / "all.json";
  const CommandResult merged = run(fmt::format("{} merge {} {} -o {}", OAPROF_BIN,
                                               files[0].string(), files[1].string(), all.string()));
  ASSERT_EQ(merged.status, 0) << merged.output;
  EXPECT_THAT(merged.output, HasSubstr(fmt::format("({} rows of 2 runs from 2 files)", rows)));
  std::ifstream in(all);
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["launches"].size(), rows);
  EXPECT_EQ(doc["kernels"][0]["kernel"], "mad_vect4");
  EXPECT_EQ(doc["kernels"][0]["runs"], 2);
  // The same rank twice is refused, naming both files.
  const CommandResult twice = run(fmt::format("{} merge {} {} -o {}", OAPROF_BIN, files[0].string(),
                                              files[0].string(), (dir_ / "x.csv").string()));
  EXPECT_EQ(twice.status, 2) << twice.output;
  // %r outside a job is a usage error before anything runs.
  const CommandResult no_rank = run(
      fmt::format("cd {} && {} --device sim -q -o out-%r.csv -- true", dir_.string(), OAPROF_BIN));
  EXPECT_EQ(no_rank.status, 2);
  EXPECT_THAT(no_rank.output, HasSubstr("no rank is set"));
}

TEST_F(PipelineTest, TheLayerWithoutOaprofWarnsOnceAndRunsTheProgramUnchanged) {
  const CommandResult r =
      run(fmt::format("env -u OAPROF_SOCKET OPENCL_LAYERS={} {} mad_scalar --min-time 0 "
                      "--max-repeats 3 --wg 2 --wi 8",
                      OAPROF_LAYER_SO, KERNEL_RUNNER_BIN));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("oaprof layer: OAPROF_SOCKET is not set"));
  EXPECT_EQ(r.output.find("oaprof layer:"), r.output.rfind("oaprof layer:")) << "warned once";
}

// A kernel longer than a 32-bit counter's wrap time: 5 s of power_mad_vect4 at the simulator's
// 1150 MHz is 5.75e9 GPU clocks, past 2^32 (3.73 s), so GPU_TICKS wraps at least once and may
// wrap twice between the launch's 'before' and 'after'. The session's periodic reads inside the
// launch keep its count exact. (The test runs this long because the wrap takes that long.)
TEST_F(PipelineTest, AKernelLongerThanACountersWrapTimeIsExact) {
  const fs::path csv = dir_ / "long.csv";
  // kernel_runner sizes the launch from one timed launch; on a loaded machine that one may run
  // slow and the long launch come out short of the wrap time: then it asks for a longer one.
  std::vector<CsvRow> rows;
  double gpu_ns = 0;
  for (const int power_ms : {5000, 10000, 20000}) {
    const CommandResult r = run(fmt::format(
        "{} --device sim -q --energy none --idle-baseline off -o {} -- {} power_mad_vect4 "
        "--power-ms {} --no-warmup --max-repeats 1",
        OAPROF_BIN, csv.string(), KERNEL_RUNNER_BIN, power_ms));
    ASSERT_EQ(r.status, 0) << r.output;
    rows = read_csv(csv);
    ASSERT_FALSE(rows.empty()) << r.output;
    gpu_ns = 0;
    for (const auto& row : rows) gpu_ns = std::max(gpu_ns, std::stod(row.at("gpu_time_ns")));
    if (gpu_ns > 3.8e9) break;
  }
  ASSERT_GT(gpu_ns, 3.8e9) << "the premise: the launch must outlast GPU_TICKS' wrap time";
  const auto longest = std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::stod(a.at("gpu_time_ns")) < std::stod(b.at("gpu_time_ns"));
  });
  const double ticks = std::stod(longest->at("gpu_ticks"));
  EXPECT_GT(ticks, 4294967296.0);
  EXPECT_NEAR(ticks / gpu_ns * 1e3, 1150.0, 1150.0 * 0.01);
  EXPECT_NEAR(std::stod(longest->at("avg_freq_mhz")), 1150.0, 1150.0 * 0.01);
  EXPECT_GE(std::stoi(longest->at("wraps_corrected")), 1);
  EXPECT_THAT(longest->at("flags"), ::testing::Not(HasSubstr("interval_too_long")));
}

TEST_F(PipelineTest, SimulatedEnergyIsFlaggedOnEveryRowAndNamedInTheTable) {
  const fs::path csv = dir_ / "sim-energy.csv";
  const CommandResult r = run(fmt::format(
      "{} --device sim --energy sim --idle-baseline off -o {} -- {} mad_vect4 --min-time 1",
      OAPROF_BIN, csv.string(), KERNEL_RUNNER_BIN));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("energy: sim (simulated: a model, not a measurement)"));
  const auto rows = read_csv(csv);
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("energy_source"), "sim");
    EXPECT_THAT(row.at("flags"), HasSubstr("energy_simulated"));
  }
}

// Refused before the device is opened: no GPU is needed to see it.
TEST_F(PipelineTest, SimulatedEnergyBesideARealGpuIsAUsageError) {
  const fs::path csv = dir_ / "refused.csv";
  const CommandResult r =
      run(fmt::format("{} --device 0000:00:02.0 --daemon never --energy sim -q -o {} -- true",
                      OAPROF_BIN, csv.string()));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--energy sim is a simulated RAPL tree, a model"));
  EXPECT_THAT(r.output, HasSubstr("--device sim"));
  EXPECT_FALSE(fs::exists(csv));
}

// JSON to outputs that cannot seek: a pipe (through `-` and /dev/stdout, which is a link the
// user files' O_NOFOLLOW would refuse: it names oaprof's own standard output) and a FIFO. Each
// must be one valid document with every launch. The program's own output goes elsewhere, so that
// stdout carries the JSON alone; without -q the summary table goes to stderr.
TEST_F(PipelineTest, JsonToAPipeOrAFifoIsOneValidDocument) {
  const fs::path piped = dir_ / "piped.json", dev_stdout = dir_ / "dev-stdout.json",
                 fifo = dir_ / "fifo", from_fifo = dir_ / "from-fifo.json";
  const std::string program =
      fmt::format("sh -c '{} mad_vect4 --min-time 1 > /dev/null'", KERNEL_RUNNER_BIN);
  // oaprof's stdout through a pipe into `out`; its status and stderr come back.
  const auto through_a_pipe = [&](const std::string& options, const fs::path& out) {
    const fs::path status = out.string() + ".status";
    return run(
        fmt::format("{{ {{ {} --device sim --energy none --idle-baseline off -o {} {} -- {}; echo "
                    "$? > {}; }} | "
                    "cat > {}; exit $(cat {}); }}",
                    OAPROF_BIN, out.string() + ".csv", options, program, status.string(),
                    out.string(), status.string()));
  };
  const CommandResult to_pipe = through_a_pipe("--json -", piped);
  ASSERT_EQ(to_pipe.status, 0) << to_pipe.output;
  EXPECT_THAT(to_pipe.output, HasSubstr("oaprof: device: simulated"));  // the table, on stderr
  const CommandResult to_dev_stdout = through_a_pipe("-q --json /dev/stdout", dev_stdout);
  ASSERT_EQ(to_dev_stdout.status, 0) << to_dev_stdout.output;
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const CommandResult to_fifo = run(fmt::format(
      "cat {} > {} & {} --device sim -q --energy none --idle-baseline off -o {} --json {} -- {}; "
      "s=$?; wait; exit $s",
      fifo.string(), from_fifo.string(), OAPROF_BIN, from_fifo.string() + ".csv", fifo.string(),
      program));
  ASSERT_EQ(to_fifo.status, 0) << to_fifo.output;
  for (const fs::path& file : {piped, dev_stdout, from_fifo}) {
    SCOPED_TRACE(file.filename().string());
    std::ifstream in(file);
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(in));
    EXPECT_EQ(doc["device"], "simulated");
    ASSERT_FALSE(doc["launches"].empty());
    EXPECT_EQ(doc["launches"].size(), read_csv(file.string() + ".csv").size());
    // A row is its values, named by "columns" (schema_version 2).
    const auto& columns = doc["columns"];
    const auto kernel = std::find(columns.begin(), columns.end(), "kernel") - columns.begin();
    EXPECT_EQ(doc["launches"][0][kernel], "mad_vect4");
  }
}

// Two outputs cannot share standard output: the CSV, JSON and trace would mix into none of them.
TEST_F(PipelineTest, TwoOutputsOnStandardOutputAreRefused) {
  for (const char* outputs :
       {"-o - --json /dev/stdout", "--json - --trace /dev/stdout", "-o /dev/stdout --trace -"}) {
    const CommandResult r = run(fmt::format(
        "{} --device sim -q --energy none --idle-baseline off {} -- {} mad_vect4 --min-time 1",
        OAPROF_BIN, outputs, KERNEL_RUNNER_BIN));
    EXPECT_EQ(r.status, 2) << outputs << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("more than one of -o, --json and --trace names standard"))
        << outputs;
  }
}

}  // namespace

namespace {

// A program that ignores SIGINT and SIGTERM: the first signal sent to oaprof goes on to it and
// changes nothing; the second ends it (SIGKILL), and oaprof still writes every row it measured,
// a valid JSON document and its summary, instead of dying of the signal half-way through.
TEST_F(PipelineTest, ASecondSignalEndsAProgramThatIgnoresTheFirstAndTheOutputsAreComplete) {
  const fs::path csv = dir_ / "signalled.csv";
  const fs::path json = dir_ / "signalled.json";
  const fs::path log = dir_ / "oaprof.log";
  const fs::path ran = dir_ / "ran";  // kernel_runner is done; the program sleeps
  const std::string program = fmt::format(
      "trap '' INT TERM; {} mad_vect4 --min-time 1 > /dev/null; touch {}; exec sleep 120",
      KERNEL_RUNNER_BIN, ran.string());
  const std::string command = fmt::format(
      "exec {} --device sim --energy none --idle-baseline off -o {} --json {} -- /bin/sh -c \"{}\" "
      "> {} 2>&1",
      OAPROF_BIN, csv.string(), json.string(), program, log.string());
  const auto started = std::chrono::steady_clock::now();
  const pid_t oaprof = ::fork();
  ASSERT_GE(oaprof, 0);
  if (oaprof == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // The rows of kernel_runner's launches are written before the signals come.
  for (int i = 0; i < 1200 && !fs::exists(ran); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(fs::exists(ran)) << "kernel_runner never finished";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the shell execs sleep
  const std::size_t rows_before = read_csv(csv).size();
  ASSERT_GE(rows_before, 2u);
  ::kill(oaprof, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(oaprof, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(oaprof, &status, 0), oaprof);
  const auto took = std::chrono::steady_clock::now() - started;
  std::ifstream in(log);
  const std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_LT(took, std::chrono::seconds(100)) << "oaprof waited for the program's sleep";
  ASSERT_TRUE(WIFEXITED(status)) << "oaprof died of the signal: " << status << "\n" << output;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGKILL) << output;  // the program's end, as a shell says
  EXPECT_THAT(output, HasSubstr("interrupted again"));
  const auto rows = read_csv(csv);
  EXPECT_EQ(rows.size(), rows_before);
  const nlohmann::json doc = read_json(json);
  ASSERT_FALSE(doc.is_discarded()) << "the JSON document is not complete";
  EXPECT_EQ(doc["launches"].size(), rows.size());
}

}  // namespace
