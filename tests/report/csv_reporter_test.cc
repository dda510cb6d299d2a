#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "oa/metric_set.h"
#include "report/reporter.h"
#include "report/row.h"
#include "tests/common/run_util.h"

namespace oaprof::report {
namespace {

using ::testing::HasSubstr;

using oaprof::testing::split_csv;

// The first data row of a CSV text, by column name.
std::map<std::string, std::string> first_row(const std::string& csv) {
  std::istringstream in(csv);
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  const auto h = split_csv(header);
  const auto v = split_csv(row);
  EXPECT_EQ(h.size(), v.size());
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < h.size() && i < v.size(); ++i) out[h[i]] = v[i];
  return out;
}

// Row `i` of an oaprof JSON document by column name: its values (schema_version 2) named by the
// header's "columns".
nlohmann::json launch_row(const nlohmann::json& doc, std::size_t i) {
  nlohmann::json row = nlohmann::json::object();
  const auto& values = doc.at("launches").at(i);
  EXPECT_EQ(values.size(), doc.at("columns").size());
  for (std::size_t c = 0; c < values.size() && c < doc["columns"].size(); ++c)
    row[doc["columns"][c].get<std::string>()] = values[c];
  return row;
}

RowEnergy no_energy() {
  RowEnergy e;
  e.window = power::unavailable_energy_window("no RAPL in this test");
  return e;
}

RunInfo info() {
  RunInfo i;
  i.device = "simulated";
  i.device_detail = "simulated KBL GT2";
  i.format = "A32u40_A4u32_B8_C8";
  i.access = "mmio";
  i.eus = 24;
  i.timestamp_hz = 12e6;
  return i;
}

oa::LaunchRecord record() {
  oa::LaunchRecord r;
  r.index = 3;
  r.pid = 42;
  r.launch.kernel_name = "k,\"odd\"";
  r.launch.work_dim = 2;
  r.launch.global = {1024, 8, 0};
  r.launch.local = {64, 1, 0};
  r.launch.profiled = true;
  r.launch.tid = 77;
  r.launch.queue = 0xabc;
  r.launch.api = oa::LaunchApi::kTask;
  r.launch.start_ns = 1000;
  r.launch.end_ns = 6000;
  r.deltas.timestamp = 120;  // 10 µs at 12 MHz
  r.deltas.gpu_ticks = 11500;
  r.deltas.has_gpu_ticks = true;
  for (int i = 0; i < oa::kNumA; ++i) {
    r.deltas.a_present[i] = true;
    r.deltas.a[i] = 100u + i;
  }
  r.deltas.b[7] = 8;
  r.deltas.c[0] = 9;
  r.flags = {"no_profiling", "x"};
  return r;
}

TEST(CsvReporterTest, HeaderHasTheContractColumns) {
  std::ostringstream out;
  auto rep = make_csv_reporter(out);
  rep->begin(info());
  const auto cols = split_csv(out.str().substr(0, out.str().find('\n')));
  for (const char* c : {"launch",
                        "kernel",
                        "global_size",
                        "local_size",
                        "kernel_ns",
                        "gpu_time_ns",
                        "gpu_ticks",
                        "wraps_corrected",
                        "A0",
                        "A35",
                        "B0",
                        "B7",
                        "C0",
                        "C7",
                        "energy_source",
                        "gpu_pkg_energy_uj",
                        "device",
                        "host",
                        "rank",
                        "flags"}) {
    EXPECT_THAT(cols, ::testing::Contains(c));
  }
  EXPECT_EQ(cols.size(), launch_field_names().size());
  // 3: replay_passes, restore_bytes/_ns; 1: wraps_corrected; 12: window, 5 RAPL planes and a
  // GPU's own 2, 2 powers, formula, source; 2: host, rank
  EXPECT_EQ(cols.size(), 17u + 3 + 1 + 36 + 8 + 8 + 12 + 2 + 2);
}

// Issue 31: `api` says which API a row's launch came through, `call` which launch call of it
// (for OpenCL what `api` held before: ndrange or task).
TEST(CsvReporterTest, ALevelZeroRowSaysItsApiAndCall) {
  std::ostringstream out;
  auto rep = make_csv_reporter(out);
  rep->begin(info());
  oa::LaunchRecord r = record();
  r.launch.api = oa::LaunchApi::kZeLaunchCooperativeKernel;
  rep->add(r, no_energy());
  auto row = first_row(out.str());
  EXPECT_EQ(row["api"], "level-zero");
  EXPECT_EQ(row["call"], "cooperative");
  r.launch.api = oa::LaunchApi::kNdRange;
  EXPECT_EQ(oa::launch_api_family(r.launch.api), std::string("opencl"));
  EXPECT_EQ(oa::launch_call_name(r.launch.api), std::string("ndrange"));
}

TEST(CsvReporterTest, APecRunHasAColumnForEachOfItsSixtyFourCounters) {
  auto has = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  RunInfo abc;
  abc.format = "A32u40_A4u32_B8_C8";
  EXPECT_TRUE(has(launch_field_names(abc), "A35"));
  EXPECT_FALSE(has(launch_field_names(abc), "A36"));
  RunInfo pec;
  pec.format = "PEC64u64";
  const auto names = launch_field_names(pec);
  EXPECT_TRUE(has(names, "A63"));
  EXPECT_FALSE(has(names, "A64"));
  oa::LaunchRecord r;
  r.deltas.a_present[63] = true;
  r.deltas.a[63] = 4242;
  const auto fields = launch_fields(r, RowEnergy{}, pec);
  ASSERT_EQ(fields.size(), names.size());
  for (const Field& f : fields) {
    if (f.name == "A63") {
      EXPECT_EQ(std::get<std::uint64_t>(f.value), 4242u);
    }
  }
}

TEST(CsvReporterTest, RowValuesLineUpWithTheHeaderAndAreQuoted) {
  std::ostringstream out;
  auto rep = make_csv_reporter(out);
  rep->begin(info());
  rep->add(record(), no_energy());
  auto row = first_row(out.str());
  auto col = [&](const std::string& name) { return row[name]; };
  EXPECT_EQ(col("launch"), "3");
  EXPECT_EQ(col("tid"), "77");
  EXPECT_EQ(col("queue"), "0xabc");
  EXPECT_EQ(col("api"), "opencl");
  EXPECT_EQ(col("call"), "task");
  EXPECT_EQ(col("global_offset"), "0x0");
  EXPECT_EQ(col("kernel"), "k,\"odd\"");
  EXPECT_EQ(col("global_size"), "1024x8");
  EXPECT_EQ(col("local_size"), "64x1");
  EXPECT_EQ(col("kernel_ns"), "5000");
  EXPECT_EQ(col("gpu_time_ns"), "10000");
  EXPECT_EQ(col("gpu_ticks"), "11500");
  EXPECT_EQ(col("avg_freq_mhz"), "1150.0");
  EXPECT_EQ(col("A0"), "100");
  EXPECT_EQ(col("A35"), "135");
  EXPECT_EQ(col("B7"), "8");
  EXPECT_EQ(col("C0"), "9");
  EXPECT_EQ(col("device"), "simulated");
  EXPECT_EQ(col("flags"), "no_profiling;x;no-energy");
  EXPECT_EQ(col("igpu_power_w"), "");  // not measured: empty, never 0
  EXPECT_EQ(col("package_energy_uj"), "");
}

// Issue 29, item 13: a launch's row shows the program's own index of it (after --launch-skip 5
// the first row is 5, not 0); a row that is no launch of a program shows its number in the run.
TEST(CsvReporterTest, TheLaunchColumnIsTheProgramsOwnLaunchIndex) {
  std::ostringstream out;
  auto rep = make_csv_reporter(out);
  rep->begin(info());
  oa::LaunchRecord launch = record();
  launch.index = 0;
  launch.launch.launch_id = 5;
  launch.program_launch = 5;
  rep->add(launch, no_energy());
  EXPECT_EQ(first_row(out.str())["launch"], "5");
  oa::LaunchRecord interval = record();  // an interval of --system-wide: no program's launch
  interval.index = 2;
  EXPECT_EQ(launch_ordinal(interval), 2u);
}

// A run whose topology is the platform table's (i915 could not be asked) flags every row: its EU
// figures divide by the table's EU count, which a fused part does not have.
TEST(CsvReporterTest, ATableTopologyFlagsEveryRow) {
  const auto flags_with = [](std::optional<oa::DeviceFacts> facts) {
    std::ostringstream out;
    auto rep = make_csv_reporter(out);
    RunInfo i = info();
    i.facts = std::move(facts);
    rep->begin(i);
    rep->add(record(), no_energy());
    return first_row(out.str())["flags"];
  };
  const oa::Platform kbl = oa::simulated_platform();
  EXPECT_EQ(flags_with(oa::table_facts(kbl, "no render node")),
            "no_profiling;x;topology_from_table;no-energy");
  oa::DeviceFacts read = oa::table_facts(kbl, "");
  read.topology_source = oa::TopologySource::kI915Query;
  EXPECT_EQ(flags_with(read), "no_profiling;x;no-energy");
  EXPECT_EQ(flags_with(std::nullopt), "no_profiling;x;no-energy");  // offline: no device
}

TEST(CsvReporterTest, EnergyColumnsCarryTheWindowsFigures) {
  std::ostringstream out;
  auto rep = make_csv_reporter(out);
  RunInfo i = info();
  rep->begin(i);
  power::EnergyReading b, e;
  b.time_ns = 0;
  e.time_ns = 100'000'000;  // 100 ms
  b.energy_uj = {
      {power::Domain::kPackage, 0}, {power::Domain::kCores, 0}, {power::Domain::kUncore, 0}};
  e.energy_uj = {{power::Domain::kPackage, 1'000'000},
                 {power::Domain::kCores, 300'000},
                 {power::Domain::kUncore, 500'000}};
  RowEnergy energy;
  energy.window = power::make_energy_window(b, e, i.energy_options);
  rep->add(record(), energy);
  auto row = first_row(out.str());
  auto col = [&](const std::string& name) { return row[name]; };
  EXPECT_EQ(col("window_ns"), "100000000");
  EXPECT_EQ(col("package_energy_uj"), "1000000");
  EXPECT_EQ(col("igpu_power_w"), "7.000");  // (1 J − 0.3 J − 0 J DRAM) / 0.1 s
  EXPECT_EQ(col("igpu_formula"), "pkg-pp0-dram");
  EXPECT_EQ(col("dram_energy_uj"), "");
  EXPECT_EQ(col("flags"), "no_profiling;x;no-dram-plane");
}

// A set whose EU shares sit in other counters than the built-in A7/A9 (as IGT's sets program
// them), plus a metric that divides by the GPU clocks.
oa::MetricSet shares_set(bool with_shares) {
  using oa::MetricCounter;
  std::vector<std::string> symbols{"PerClock"};
  if (with_shares) symbols = {"PerClock", "EuActive", "EuFpuBothActive"};
  auto counter = [&](const std::string& symbol, const std::string& equation) {
    MetricCounter c;
    c.symbol = symbol;
    c.name = symbol;
    c.units = "percent";
    c.data_type = MetricCounter::DataType::kFloat;
    c.equation = oa::Equation::compile(equation, oa::MetricSet::resolver_for(symbols));
    return c;
  };
  std::vector<MetricCounter> counters{counter("PerClock", "A 1 READ GPU_CLOCK 0 READ FDIV")};
  if (with_shares) {
    counters.push_back(counter("EuActive", "A 3 READ 100 UMUL GPU_CLOCK 0 READ FDIV"));
    counters.push_back(counter("EuFpuBothActive", "A 4 READ 100 UMUL GPU_CLOCK 0 READ FDIV"));
  }
  return oa::MetricSet("Shares", "Shares", "g", std::move(counters), {});
}

TEST(CsvReporterTest, AMetricThatDividesByZeroIsEmptyAndNamedInTheFlags) {
  const oa::MetricSet set = shares_set(false);
  RunInfo i = info();
  i.metrics = &set;
  std::ostringstream out;
  auto rep = make_csv_reporter(out);
  rep->begin(i);
  oa::LaunchRecord r = record();
  r.deltas.gpu_ticks = 0;
  rep->add(r, no_energy());
  auto row = first_row(out.str());
  EXPECT_EQ(row["PerClock_percent"], "");  // IGT's code gives 0 here: not a measured 0
  EXPECT_THAT(row["flags"], HasSubstr("metric_div_zero:PerClock"));

  std::stringstream json_out;
  auto json = make_json_reporter(json_out);
  json->begin(i);
  json->add(r, no_energy());
  json->end();
  const auto doc = nlohmann::json::parse(json_out.str());
  EXPECT_TRUE(launch_row(doc, 0)["PerClock_percent"].is_null());
  EXPECT_THAT(launch_row(doc, 0)["flags"].get<std::string>(),
              HasSubstr("metric_div_zero:PerClock"));

  std::ostringstream fine;
  auto rep2 = make_csv_reporter(fine);
  rep2->begin(i);
  rep2->add(record(), no_energy());  // 101 / 11500 clocks
  auto row2 = first_row(fine.str());
  EXPECT_EQ(row2["PerClock_percent"], "0.009");
  EXPECT_EQ(row2["flags"].find("metric_div_zero"), std::string::npos);
}

// A run's reporters work out the metric columns once (prepare_row_columns); a row made with them
// is the row made without, and columns prepared for another set are not used.
TEST(CsvReporterTest, PreparedMetricColumnsGiveTheSameRow) {
  const oa::MetricSet set = shares_set(false), other = shares_set(true);
  RunInfo plain = info();
  plain.metrics = &set;
  RunInfo prepared = plain;
  prepare_row_columns(prepared);
  ASSERT_NE(prepared.metric_columns, nullptr);
  oa::LaunchRecord r = record();
  for (const std::uint64_t ticks : {std::uint64_t{0}, std::uint64_t{11500}}) {
    r.deltas.gpu_ticks = ticks;
    EXPECT_EQ(csv_line(launch_fields(r, no_energy(), prepared)),
              csv_line(launch_fields(r, no_energy(), plain)));
  }
  RunInfo stale = prepared;
  stale.metrics = &other;
  RunInfo fresh = plain;
  fresh.metrics = &other;
  EXPECT_EQ(csv_line(launch_fields(r, no_energy(), stale)),
            csv_line(launch_fields(r, no_energy(), fresh)));
}

// Energy from the simulated RAPL tree is a model: every row that carries it says so, and every
// row names its energy source.
TEST(CsvReporterTest, RowsNameTheirEnergySourceAndFlagSimulatedEnergy) {
  power::EnergyReading b, e;
  e.time_ns = 100'000'000;
  b.energy_uj = {{power::Domain::kPackage, 0}};
  e.energy_uj = {{power::Domain::kPackage, 1'000'000}};
  RowEnergy energy;
  energy.window = power::make_energy_window(b, e);
  for (const bool simulated : {false, true}) {
    RunInfo i = info();
    i.energy_backend = simulated ? "sim" : "powercap";
    i.energy_simulated = simulated;
    std::ostringstream out;
    auto rep = make_csv_reporter(out);
    rep->begin(i);
    rep->add(record(), energy);
    auto row = first_row(out.str());
    EXPECT_EQ(row["energy_source"], i.energy_backend);
    EXPECT_EQ(row["flags"].find("energy_simulated") != std::string::npos, simulated);
    std::stringstream json_out;
    auto json = make_json_reporter(json_out);
    json->begin(i);
    json->add(record(), energy);
    const auto doc = nlohmann::json::parse(json_out.str());
    EXPECT_EQ(doc["energy_simulated"], simulated);
    EXPECT_EQ(launch_row(doc, 0)["energy_source"], i.energy_backend);
  }
  // A row without energy readings carries no simulated figure to flag.
  RunInfo i = info();
  i.energy_backend = "sim";
  i.energy_simulated = true;
  std::ostringstream out;
  auto rep = make_csv_reporter(out);
  rep->begin(i);
  rep->add(record(), no_energy());
  EXPECT_EQ(first_row(out.str())["flags"].find("energy_simulated"), std::string::npos);
}

TEST(CsvReporterTest, UnprofiledLaunchesLeaveKernelTimeEmpty) {
  std::ostringstream out;
  auto rep = make_csv_reporter(out);
  rep->begin(info());
  auto r = record();
  r.launch.profiled = false;
  r.launch.local = {0, 0, 0};
  rep->add(r, no_energy());
  auto row = first_row(out.str());
  auto col = [&](const std::string& name) { return row[name]; };
  EXPECT_EQ(col("local_size"), "");  // chosen by the runtime
  EXPECT_EQ(col("kernel_ns"), "");   // not measured, not zero
  EXPECT_EQ(col("gpu_time_ns"), "10000");
}

TEST(CsvReporterTest, ReplayedRowsCarryTheirPassesRestoreTrafficAndFlag) {
  std::ostringstream out;
  auto rep = make_csv_reporter(out);
  rep->begin(info());
  oa::LaunchRecord r = record();
  auto once = first_row((rep->add(r, no_energy()), out.str()));
  EXPECT_EQ(once["replay_passes"], "1");
  EXPECT_EQ(once["restore_bytes"], "0");
  EXPECT_EQ(once["flags"].find("replayed"), std::string::npos);
  r.launch.passes = 5;
  r.launch.restore_bytes = 4 * 16384;
  r.launch.restore_ns = 1234;
  std::ostringstream out2;
  auto rep2 = make_csv_reporter(out2);
  rep2->begin(info());
  rep2->add(r, no_energy());
  auto row = first_row(out2.str());
  EXPECT_EQ(row["replay_passes"], "5");
  EXPECT_EQ(row["restore_bytes"], "65536");
  EXPECT_EQ(row["restore_ns"], "1234");
  EXPECT_EQ(row["kernel_ns"], "5000");  // one pass, not five
  EXPECT_EQ(row["flags"].substr(0, 9), "replayed;");
}

TEST(JsonReporterTest, DocumentIsValidAfterEveryRowAndCarriesTheRunMetadata) {
  std::stringstream out;
  auto rep = make_json_reporter(out);
  RunInfo i = info();
  i.oaprof_version = "9.9";
  i.command = {"app", "--x"};
  i.max_freq_mhz = 1150;
  i.min_freq_mhz = 300;
  i.start_freq_mhz = 950;
  rep->begin(i);
  auto empty = nlohmann::json::parse(out.str());
  EXPECT_EQ(empty["schema_version"], kJsonSchemaVersion);
  EXPECT_EQ(empty["device"], "simulated");
  EXPECT_EQ(empty["oaprof_version"], "9.9");
  EXPECT_EQ(empty["command"][1], "--x");
  EXPECT_TRUE(empty["launches"].empty());
  EXPECT_TRUE(empty["metric_set"].is_null());
  EXPECT_EQ(empty["max_freq_mhz"], 1150.0);
  EXPECT_EQ(empty["min_freq_mhz"], 300.0);
  EXPECT_EQ(empty["start_freq_mhz"], 950.0);
  for (int n = 1; n <= 3; ++n) {
    auto r = record();
    r.index = static_cast<std::uint64_t>(n);
    if (n == 2) r.launch.profiled = false;
    rep->add(r, no_energy());
    const auto doc = nlohmann::json::parse(out.str());  // throws if the document is not valid
    ASSERT_EQ(doc["launches"].size(), static_cast<std::size_t>(n));
    const auto row = launch_row(doc, static_cast<std::size_t>(n - 1));
    EXPECT_EQ(row["launch"], n);
    EXPECT_EQ(row["kernel"], "k,\"odd\"");
    EXPECT_EQ(row["A35"], 135);
    EXPECT_DOUBLE_EQ(row["gpu_time_ns"].get<double>(), 10000.0);
    if (n == 2)
      EXPECT_TRUE(row["kernel_ns"].is_null());
    else
      EXPECT_EQ(row["kernel_ns"], 5000.0);
  }
}

// A stream that cannot seek, as a pipe, a FIFO or a terminal: what is written is kept in order.
class PipeBuffer : public std::streambuf {
 public:
  const std::string& data() const { return data_; }

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) data_.push_back(static_cast<char>(c));
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    data_.append(s, static_cast<std::size_t>(n));
    return n;
  }

 private:
  std::string data_;
};

TEST(JsonReporterTest, ToAStreamThatCannotSeekItIsOneValidDocumentAtTheEnd) {
  PipeBuffer pipe;
  std::ostream out(&pipe);
  ASSERT_EQ(out.tellp(), std::streampos(-1));
  auto rep = make_json_reporter(out);
  rep->begin(info());
  for (int n = 1; n <= 3; ++n) {
    auto r = record();
    r.index = static_cast<std::uint64_t>(n);
    rep->add(r, no_energy());
    rep->flush();
  }
  rep->end();
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(pipe.data())) << pipe.data();
  ASSERT_EQ(doc["launches"].size(), 3u);
  EXPECT_EQ(launch_row(doc, 2)["launch"], 3);
  EXPECT_EQ(doc["device"], "simulated");
}

// A program's arguments and kernel names are bytes, not always UTF-8: the document stays valid,
// with each byte that is not UTF-8 written as U+FFFD, and the run is not lost to an exception.
TEST(JsonReporterTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  std::stringstream out;
  auto rep = make_json_reporter(out);
  RunInfo i = info();
  i.command = {"app", "caf\xe9"};
  rep->begin(i);
  auto r = record();
  r.launch.kernel_name = "k\xff\xfe";
  ASSERT_NO_THROW(rep->add(r, no_energy()));
  rep->end();
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(out.str())) << out.str();
  EXPECT_EQ(doc["command"][1], "caf\uFFFD");
  EXPECT_EQ(launch_row(doc, 0)["kernel"], "k\uFFFD\uFFFD");
}

// A run of many launches must not cost kilobytes a launch (issue 29, item 13): a row is its
// values alone, named once in the header, doubles at nine digits, its energy object without
// what says nothing. Bound: the CSV line of the same row (values alone, by construction) and the
// energy object's figures, measured on the text written.
TEST(JsonReporterTest, ARowCostsItsValuesNotItsNames) {
  RunInfo i = info();
  i.attribution = "sampled";
  RowEnergy energy;
  energy.window = power::unavailable_energy_window(
      "sampled attribution: a launch has no energy window of its own (docs/attach.md)");
  std::stringstream json_out;
  std::ostringstream csv_out;
  auto json = make_json_reporter(json_out);
  auto csv = make_csv_reporter(csv_out);
  json->begin(i);
  csv->begin(i);
  const std::size_t json_head = json_out.str().size(), csv_head = csv_out.str().size();
  constexpr int kRows = 100;
  for (int n = 0; n < kRows; ++n) {
    oa::LaunchRecord r = record();
    r.index = static_cast<std::uint64_t>(n);
    r.sampled = oa::LaunchRecord::Sampled{0.123456789012345 * n, 1.0 / 3};
    json->add(r, energy);
    csv->add(r, energy);
  }
  json->end();
  csv->end();
  const auto doc = nlohmann::json::parse(json_out.str());
  const std::string energy_text = doc["launches"][0].back().dump();
  const double json_per_row = static_cast<double>(json_out.str().size() - json_head) / kRows;
  const double csv_per_row = static_cast<double>(csv_out.str().size() - csv_head) / kRows;
  EXPECT_LE(json_per_row, csv_per_row * 1.5 + static_cast<double>(energy_text.size()))
      << json_out.str().substr(json_head, 2000);
  EXPECT_EQ(energy_text.find("null"), std::string::npos) << energy_text;
  EXPECT_EQ(launch_row(doc, 3)["overlap_share"], 0.333333333);  // nine digits
}

TEST(JsonReporterTest, AClockNotReadIsNullNotZero) {
  std::stringstream out;
  auto rep = make_json_reporter(out);
  rep->begin(info());
  EXPECT_TRUE(nlohmann::json::parse(out.str())["start_freq_mhz"].is_null());
}

TEST(TeeReporterTest, EveryReporterSeesEveryCall) {
  std::ostringstream a, b;
  std::vector<std::unique_ptr<Reporter>> both;
  both.push_back(make_csv_reporter(a));
  both.push_back(make_csv_reporter(b));
  auto tee = make_tee_reporter(std::move(both));
  tee->begin(info());
  tee->add(record(), no_energy());
  tee->end();
  const std::string text = a.str();
  EXPECT_EQ(text, b.str());
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
}

// A full disk must not lose rows unsaid: /dev/full takes the writes into the stream's buffer
// and fails the flush with ENOSPC, which the reporter turns into an error naming the file.
TEST(FileReporterTest, AFailedFlushThrowsWithTheReasonForCsvAndJson) {
  for (const bool json : {false, true}) {
    std::ofstream full("/dev/full");
    ASSERT_TRUE(full.is_open());
    auto rep = json ? make_json_reporter(full) : make_csv_reporter(full);
    rep->begin(info());
    rep->add(record(), no_energy());
    try {
      rep->flush();
      ADD_FAILURE() << (json ? "JSON" : "CSV") << ": a failed flush went unnoticed";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr(json ? "JSON" : "CSV"));
      EXPECT_THAT(e.what(), HasSubstr("not saved"));
    }
  }
}

TEST(TableReporterTest, SummarisesPerKernelWithUnitsAndTheDevice) {
  std::ostringstream out;
  auto rep = make_table_reporter(out);
  rep->begin(info());
  auto r = record();
  r.launch.kernel_name = "mad_vect4";
  rep->add(r, no_energy());
  rep->add(r, no_energy());
  rep->end();
  EXPECT_THAT(out.str(), HasSubstr("device: simulated"));
  EXPECT_THAT(out.str(), HasSubstr("kernel_us"));
  EXPECT_THAT(out.str(), ::testing::ContainsRegex("mad_vect4 +2 +5\\.0 +10\\.0 +1150"));
}

// The table a run of these rows prints.
std::string table_of(const RunInfo& i, const std::vector<oa::LaunchRecord>& rows) {
  std::ostringstream out;
  auto rep = make_table_reporter(out);
  rep->begin(i);
  for (const auto& r : rows) rep->add(r, no_energy());
  rep->end();
  return out.str();
}

TEST(TableReporterTest, EuSharesComeFromTheSetsOwnCountersByName) {
  const oa::MetricSet set = shares_set(true);
  RunInfo i = info();
  i.metrics = &set;
  auto r = record();
  r.launch.kernel_name = "mad_vect4";
  r.deltas.a[3] = 5750;  // EuActive: 50 % of 11500 clocks
  r.deltas.a[4] = 2300;  // EuFpuBothActive: 20 %
  const std::string table = table_of(i, {r});
  EXPECT_THAT(table, HasSubstr("EU_act_%"));
  EXPECT_THAT(table, ::testing::ContainsRegex(
                         "mad_vect4 +1 +5\\.0 +10\\.0 +1150 +[0-9.]+ +50\\.0 +20\\.0 "));
}

TEST(TableReporterTest, ASetWithoutEuSharesLeavesTheirColumnsOut) {
  const oa::MetricSet set = shares_set(false);
  RunInfo i = info();
  i.metrics = &set;
  const std::string table = table_of(i, {record()});
  EXPECT_THAT(table, ::testing::Not(HasSubstr("EU_act_%")));
  EXPECT_THAT(table, ::testing::Not(HasSubstr("FPU2_%")));
}

// Issue 33: a run of millions of launches keeps its memory flat. The medians once kept every
// launch's two durations (16 bytes a launch); now one count per distinct duration.
TEST(TableReporterTest, KeepsOneDurationPerDistinctValueHoweverManyLaunchesCome) {
  std::ostringstream out;
  auto rep = make_table_reporter(out);
  rep->begin(info());
  auto r = record();
  for (std::uint64_t i = 0; i < 100'000; ++i) {
    r.launch.end_ns = r.launch.start_ns + 4000 + 1000 * (i % 3);  // 4, 5 or 6 µs
    r.deltas.timestamp = 120 + i % 2;
    rep->add(r, no_energy());
  }
  EXPECT_EQ(table_durations_kept(*rep), 3u + 2u);
  rep->end();
  EXPECT_THAT(out.str(), ::testing::ContainsRegex("100000 +5\\.0 +10\\.0"));
}

// The medians are those of every launch, exact: the mean of the middle two of an even count,
// in the rows' units (OpenCL ns; timestamp ticks at the run's frequency).
TEST(TableReporterTest, TheMediansAreTheLaunchesExactMedians) {
  std::vector<oa::LaunchRecord> rows;
  for (const auto& [ns, ticks] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {9000, 48}, {1000, 12}, {3000, 30}, {2000, 24}}) {
    auto r = record();
    r.launch.end_ns = r.launch.start_ns + ns;
    r.deltas.timestamp = ticks;
    rows.push_back(r);
  }
  auto unprofiled = record();  // no kernel time of its own: out of kernel_us's median only
  unprofiled.launch.profiled = false;
  unprofiled.deltas.timestamp = 60;
  rows.push_back(unprofiled);
  // kernel_us: (2000 + 3000) / 2 ns; gpu_us: 30 ticks at 12 MHz, the middle one of five.
  EXPECT_THAT(table_of(info(), rows), ::testing::ContainsRegex("5 +2\\.5 +2\\.5 "));
}

TEST(TableReporterTest, TheTableNamesTheEnergyBackendAndSaysWhenItIsSimulated) {
  RunInfo i = info();
  i.energy_backend = "sim";
  i.energy_simulated = true;
  EXPECT_THAT(table_of(i, {record()}),
              HasSubstr("energy: sim (simulated: a model, not a measurement)"));
  EXPECT_THAT(table_of(info(), {}), HasSubstr("energy: none"));
}

}  // namespace
}  // namespace oaprof::report
