// The CSV reporter writes each row straight into one reused line (issue 33: no Field, name or
// string per cell, compiled number formats). These tests hold that fast path to the row the
// fields give, formatted as the reporter formatted it before: fmt's "{}" for integers,
// "{:.{}f}" for doubles and csv_text for text, byte for byte, over every metric set of IGT's
// files for several platforms and rows that reach the formats' edges; the metric cells also
// against the equations' interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "oa/device_facts.h"
#include "oa/metric_xml.h"
#include "oa/platform.h"
#include "report/csv.h"
#include "report/reporter.h"
#include "report/row.h"
#include "tests/oa/igt_files.h"

namespace oaprof::report {
namespace {

// A row as csv_line wrote it before issue 33, cell by cell through fmt's runtime formats.
std::string reference_line(const std::vector<Field>& fields) {
  struct Cell {
    int decimals;
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(std::uint64_t v) const { return fmt::format("{}", v); }
    std::string operator()(double v) const { return fmt::format("{:.{}f}", v, decimals); }
    std::string operator()(const std::string& v) const { return csv_text(v); }
  };
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    line += std::visit(Cell{fields[i].decimals}, fields[i].value);
  }
  return line;
}

// Kernel names a program may choose: plain, quoted, formula-like, long.
const std::vector<std::string> kKernelNames{"mad_vect4", "=cmd|' /c calc'!A0", "k,\"odd\"\nname",
                                            "-1", std::string(300, 'k')};

// A launch with counters drawn from `rng`: zero clocks now and then (metrics that divide by
// zero), counters up to 2^64 - 1 (doubles hundreds of digits long), sampled or bracketed.
oa::LaunchRecord random_record(std::mt19937_64& rng, std::uint64_t n) {
  oa::LaunchRecord r;
  r.index = n;
  r.pid = static_cast<std::uint32_t>(rng());
  r.launch.kernel_name = kKernelNames[n % kKernelNames.size()];
  r.launch.work_dim = static_cast<std::uint32_t>(1 + n % 3);
  r.launch.global = {rng() % 100'000, 8, 2};
  r.launch.local = {n % 2 ? 64u : 0u, 1, 1};
  r.launch.profiled = n % 4 != 0;
  r.launch.start_ns = rng() % 1'000'000;
  r.launch.end_ns = r.launch.start_ns + rng() % 1'000'000;
  r.launch.queue = n % 3 ? rng() : 0;
  const bool extreme = n % 7 == 6;
  auto counter = [&] {
    return extreme ? std::numeric_limits<std::uint64_t>::max() - rng() % 3 : rng() % 5'000'000;
  };
  r.deltas.timestamp = n % 5 == 0 ? 0 : 1 + rng() % 200'000;
  r.deltas.has_gpu_ticks = n % 6 != 0;
  r.deltas.gpu_ticks = n % 5 == 1 ? 0 : counter();
  for (std::size_t i = 0; i < r.deltas.a.size(); ++i) {
    r.deltas.a[i] = counter();
    r.deltas.a_present[i] = (rng() % 8) != 0;
  }
  for (auto& b : r.deltas.b) b = static_cast<std::uint32_t>(rng());
  for (auto& c : r.deltas.c) c = static_cast<std::uint32_t>(rng());
  if (n % 2) r.sampled = oa::LaunchRecord::Sampled{static_cast<double>(rng() % 1000) / 7.0, 0.5};
  if (n % 3 == 0) r.flags.push_back("wrapped");
  return r;
}

// A measured energy window for odd rows, an unavailable one for the others.
RowEnergy energy_for(const oa::LaunchRecord& r, const RunInfo& info, std::uint64_t n) {
  if (n % 2 == 0) return row_energy(r, nullptr, nullptr, info, "no energy source in this test");
  power::EnergyReading begin, end;
  begin.time_ns = 1'000;
  end.time_ns = begin.time_ns + 1 + n * 12'345'678;
  begin.energy_uj = {{power::Domain::kPackage, 10}, {power::Domain::kCores, 4}};
  end.energy_uj = {{power::Domain::kPackage, 10 + n * 977}, {power::Domain::kCores, 4 + n * 311}};
  return row_energy(r, &begin, &end, info, "");
}

// The run of `platform` with `set` as the simulator's kernel mode describes it.
RunInfo run_info(const oa::Platform& platform, const oa::MetricSet& set, std::uint64_t n) {
  RunInfo info;
  info.device = "simulated";
  info.platform = std::string(platform.metrics_file);
  info.format = std::string(oa::layout_of(oa::default_format(platform.gen)).name);
  info.attribution = n % 2 ? "sampled" : "bracketed";
  info.facts = oa::table_facts(platform, "csv_line_identity_test");
  // Every fifth run without a timestamp frequency: times and clocks become inf and NaN.
  info.timestamp_hz = n % 5 == 4 ? 0 : platform.timestamp_hz;
  info.host = "host,1";
  info.rank = n % 3 ? "" : "=2";
  info.energy_backend = "sim";
  info.metric_set = set.symbol();
  info.metrics = &set;
  info.device_variables = oa::device_variables(platform, *info.facts);
  return info;
}

// IGT's file for `name`: igt/, igt-mtl/ and igt-dg2/, then igt-xe/ (Xe2).
std::filesystem::path metrics_file(std::string_view name) {
  const std::filesystem::path file = oa::testing::igt_file_for(name);
  if (!file.empty()) return file;
  const std::filesystem::path xe =
      std::filesystem::path(OAPROF_IGT_XE_METRICS_DIR) / ("oa-" + std::string(name) + ".xml");
  return std::filesystem::is_regular_file(xe) ? xe : std::filesystem::path{};
}

// The metric cells of `fields` hold what the equations' interpreter (MetricSet::evaluate) gives:
// rows evaluate a compiled program instead (oa/metric_program.h), held to it here end to end.
void expect_interpreted_metrics(const std::vector<Field>& fields, const oa::LaunchRecord& r,
                                const RunInfo& info) {
  const std::vector<oa::EquationValue> values =
      info.metrics->evaluate(r.deltas, info.device_variables);
  const std::vector<bool> available = info.metrics->available_counters(info.device_variables);
  const std::vector<std::string> names = metric_field_names(info);
  const auto first = std::find_if(fields.begin(), fields.end(),
                                  [&](const Field& f) { return f.name == names.at(0); });
  ASSERT_LE(static_cast<std::size_t>(fields.end() - first), fields.size());
  ASSERT_GE(static_cast<std::size_t>(fields.end() - first), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const Field& got = first[static_cast<std::ptrdiff_t>(i)];
    const oa::EquationValue& v = values[i];
    const FieldValue want = !available[i] || v.div_by_zero ? FieldValue{}
                            : v.is_float                   ? FieldValue{v.f}
                                                           : FieldValue{v.u};
    ASSERT_EQ(got.name, names[i]);
    EXPECT_EQ(reference_line({got}), reference_line({{names[i], want, 3}})) << names[i];
  }
}

class CsvLineIdentityTest : public ::testing::TestWithParam<std::string_view> {};

TEST_P(CsvLineIdentityTest, EverySetsRowsAreTheFieldsFormattedAsBefore) {
  const std::filesystem::path path = metrics_file(GetParam());
  if (path.empty()) GTEST_SKIP() << "no oa-" << GetParam() << ".xml beside the checkout";
  const oa::Platform platform = oa::require_platform_by_name(GetParam());
  const oa::MetricFile file =
      oa::import_metrics_xml(oa::testing::read_text(path), path.filename().string());
  ASSERT_FALSE(file.sets.empty());
  std::mt19937_64 rng(33);
  std::uint64_t n = 0, rows = 0;
  for (const oa::MetricSet& set : file.sets) {
    const RunInfo info = run_info(platform, set, n);
    std::ostringstream out;
    const std::unique_ptr<Reporter> csv = make_csv_reporter(out);
    csv->begin(info);
    std::string expected = csv_text_line(launch_field_names(info)) + "\n";
    for (int i = 0; i < 7; ++i, ++n) {
      const oa::LaunchRecord r = random_record(rng, n);
      const RowEnergy energy = energy_for(r, info, n);
      csv->add(r, energy);
      const std::vector<Field> fields = launch_fields(r, energy, info);
      expected += reference_line(fields) + "\n";
      expect_interpreted_metrics(fields, r, info);
      ++rows;
    }
    csv->end();
    ASSERT_EQ(out.str(), expected) << "set " << set.symbol() << " of " << path;
  }
  EXPECT_GE(rows, 7 * file.sets.size());
}

// Gen9, Gen12, Xe-LPG and Xe2: each generation's equations and formats.
INSTANTIATE_TEST_SUITE_P(Platforms, CsvLineIdentityTest,
                         ::testing::Values("kblgt2", "tglgt2", "mtlgt2", "lnl"),
                         [](const auto& param) { return std::string(param.param); });

// The fields' csv_line is the same fast line as the reporter's: formatted as before too.
TEST(CsvLineFormatTest, CsvLineOfFieldsFormatsAsBefore) {
  const std::vector<Field> row{{"kernel", std::string("=k,1")},
                               {"a", std::uint64_t{18446744073709551615u}},
                               {"b", 0.125, 0},
                               {"c", 2.5, 0},
                               {"d", -0.0, 3},
                               {"e", 1e300, 3},
                               {"f", std::numeric_limits<double>::quiet_NaN(), 1},
                               {"g", -std::numeric_limits<double>::infinity(), 4},
                               {"h", 0.000123456789, 9},
                               {"i", FieldValue{}}};
  EXPECT_EQ(csv_line(row), reference_line(row));
}

}  // namespace
}  // namespace oaprof::report
