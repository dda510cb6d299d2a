// oaprof's consumer alone (issue 33): what the privileged side does with each launch once its two
// reports are in, with no program and no device: decode both raw reports, take their deltas,
// evaluate the Builtin metric set and write the CSV row (to /dev/null, through the CSV reporter a
// run uses). It reports launches per second on one core; the goal is at least 500k/s, so that
// oaprof keeps up with any program. Figures are printed, never asserted.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "oa/builtin_metric_set.h"
#include "oa/device_facts.h"
#include "oa/launch_record.h"
#include "oa/platform.h"
#include "oa/report.h"
#include "oa/report_format.h"
#include "report/reporter.h"

namespace {

using namespace oaprof;

constexpr std::size_t kLaunches = 1024;  // distinct report pairs, cycled through

// The simulated platform's reports, one per launch edge, counters growing as a kernel's would.
std::vector<oa::RawReport> make_reports(oa::ReportFormat format) {
  std::mt19937_64 rng(1);
  std::vector<oa::RawReport> raw;
  oa::Report r;
  for (std::size_t i = 0; i < 2 * kLaunches; ++i) {
    r.timestamp += 1000 + rng() % 1000;
    r.gpu_ticks += 100'000 + rng() % 1000;
    for (auto& a : r.a) a += rng() % 2'000'000;
    for (auto& b : r.b) b += static_cast<std::uint32_t>(rng() % 100'000);
    for (auto& c : r.c) c += static_cast<std::uint32_t>(rng() % 100'000);
    raw.push_back(oa::encode(format, r));
  }
  return raw;
}

// A run's description as oaprof's kernel mode fills it for the simulator.
report::RunInfo run_info(const oa::Platform& platform, const oa::MetricSet& metrics) {
  report::RunInfo info;
  info.device = "simulated";
  info.platform = std::string(platform.metrics_file);
  info.format = std::string(oa::layout_of(oa::default_format(platform.gen)).name);
  info.driver = "i915";
  info.eus = platform.eus;
  info.facts = oa::table_facts(platform, "consumer_bench");
  info.timestamp_hz = platform.timestamp_hz;
  info.host = "bench";
  info.metric_set = metrics.symbol();
  info.metrics = &metrics;
  info.device_variables = oa::device_variables(platform, *info.facts);
  return info;
}

// Feeds launches to the reporter `make` gives, as a run's row writer does.
template <typename MakeReporter>
void consume_launches(benchmark::State& state, MakeReporter make) {
  const oa::Platform& platform = oa::simulated_platform();
  const oa::ReportFormat format = oa::default_format(platform.gen);
  const oa::MetricSet metrics = oa::builtin_metric_set(platform);
  const std::vector<oa::RawReport> raw = make_reports(format);
  std::ofstream devnull("/dev/null");
  const std::unique_ptr<report::Reporter> reporter = make(devnull);
  reporter->begin(run_info(platform, metrics));
  oa::LaunchRecord record;
  record.launch.kernel_name = "tick";
  record.launch.work_dim = 1;
  record.launch.global = {64, 1, 1};
  record.launch.profiled = true;
  record.launch.flags = oa::kLaunchProgramIndex;
  std::uint64_t n = 0;
  for (auto _ : state) {
    const std::size_t i = 2 * (n % kLaunches);
    const oa::Report begin =
        oa::decode(format, {raw[i].bytes.data(), static_cast<std::size_t>(raw[i].size)});
    const oa::Report end =
        oa::decode(format, {raw[i + 1].bytes.data(), static_cast<std::size_t>(raw[i + 1].size)});
    record.index = n;
    record.program_launch = n;
    record.launch.launch_id = n;
    record.launch.start_ns = n * 2000;
    record.launch.end_ns = n * 2000 + 1000;
    record.deltas = oa::compute_deltas_checked(begin, end, platform.timestamp_hz, 1e9);
    reporter->add(record, report::RowEnergy{});
    // A run flushes once per batch of rows (RowWriter); a batch of 64 is a busy program's.
    if (++n % 64 == 0) reporter->flush();
  }
  reporter->end();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void BM_ConsumeLaunch(benchmark::State& state) {
  consume_launches(state, [](std::ostream& out) { return report::make_csv_reporter(out); });
}
BENCHMARK(BM_ConsumeLaunch);

// The same with the end-of-run table beside the CSV, as `oaprof -o run.csv` keeps both.
void BM_ConsumeLaunchCsvAndTable(benchmark::State& state) {
  consume_launches(state, [](std::ostream& out) {
    std::vector<std::unique_ptr<report::Reporter>> both;
    both.push_back(report::make_csv_reporter(out));
    both.push_back(report::make_table_reporter(out));
    return report::make_tee_reporter(std::move(both));
  });
}
BENCHMARK(BM_ConsumeLaunchCsvAndTable);

// Prints the launches per second of CPU time next to the goal.
class RateReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.iterations == 0) continue;
      const double seconds_each = run.cpu_accumulated_time / static_cast<double>(run.iterations);
      if (seconds_each > 0) {
        std::cout << fmt::format("{}: {:.0f} launches/s on one core (goal >= 500000)\n",
                                 run.benchmark_name(), 1.0 / seconds_each);
      }
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RateReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
