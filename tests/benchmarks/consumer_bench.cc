// oaprof's consumer alone (issue 33): what the privileged side does with each launch once its two
// reports are in, with no program and no device: decode both raw reports, take their deltas,
// evaluate the Builtin metric set and write the CSV row (to /dev/null, through the CSV reporter a
// run uses). It reports launches per second on one core; the goal is at least 500k/s, so that
// oaprof keeps up with any program. Figures are printed, never asserted.
// BM_ConsumeSampledLaunch is the same for sampled attribution: a launch's record as the layer
// posts it (wire bytes) decoded, handled by a session on the simulator (its window attributed on
// the counter timeline) and its row written, on one thread; the timeline's periodic reads are
// taken in between, as a session's reader thread would, outside the time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "ipc/wire.h"
#include "oa/builtin_metric_set.h"
#include "oa/device_facts.h"
#include "oa/launch_record.h"
#include "oa/platform.h"
#include "oa/report.h"
#include "oa/report_format.h"
#include "report/reporter.h"
#include "session/session.h"
#include "tests/common/sim_fixture.h"

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

// Sampled attribution's consumer: reads every 1 ms of the simulator's clock, and between two reads
// kPerPeriod launches whose windows tile the period just read, each handled as the channel thread
// handles a record (decode, Session::handle) with its row written at once. The reads (the
// session's reader thread, once a period) are left out of the time.
void BM_ConsumeSampledLaunch(benchmark::State& state) {
  constexpr std::uint64_t kPeriodNs = 1'000'000;
  constexpr std::uint64_t kPerPeriod = 256;
  test_support::SimFixture sim;
  const oa::Platform& platform = oa::simulated_platform();
  const oa::MetricSet metrics = oa::builtin_metric_set(platform);
  std::ofstream devnull("/dev/null");
  const std::unique_ptr<report::Reporter> reporter = report::make_csv_reporter(devnull);
  reporter->begin(run_info(platform, metrics));
  std::uint64_t rows = 0, attributed = 0;
  session::Session s(
      *sim.source, oa::default_format(platform.gen),
      [&](const oa::LaunchRecord& r, const power::EnergyReading*, const power::EnergyReading*) {
        reporter->add(r, report::RowEnergy{});
        if (std::find(r.flags.begin(), r.flags.end(), "not_attributed") == r.flags.end()) {
          ++attributed;
        }
        if (++rows % 64 == 0) reporter->flush();
      });
  session::SampledOptions o;
  o.period = std::chrono::hours(1);  // read here, never by the session's thread
  o.clock = [&sim] { return sim.clock->now_ns(); };
  s.set_sampled(o);
  s.start();
  s.set_busy(true);
  ipc::wire::Message m;
  ipc::wire::Launch l;
  l.work_dim = 1;
  l.global = {64, 0, 0};
  l.kernel_name = "tick";
  l.profiled = true;
  l.flags = ipc::wire::kLaunchSampled | ipc::wire::kLaunchProgramIndex;
  // The next period's records, encoded as the layer posts them (its cost, not oaprof's).
  std::vector<std::vector<std::uint8_t>> posted(kPerPeriod);
  std::uint64_t n = 0;
  for (auto _ : state) {
    const std::uint64_t k = n % kPerPeriod;
    if (k == 0) {
      state.PauseTiming();
      sim.clock->advance_ns(kPeriodNs);
      s.read_timeline();
      const std::uint64_t period_start = sim.clock->now_ns() - kPeriodNs;
      constexpr std::uint64_t kSlot = kPeriodNs / kPerPeriod;
      for (std::uint64_t i = 0; i < kPerPeriod; ++i) {
        const std::uint64_t start = period_start + i * kSlot + kSlot / 4;  // between reads
        l.launch_id = n + i;
        l.start_ns = start;
        l.end_ns = start + kSlot / 2;
        l.sampled = ipc::wire::SampledWindow{start, start + kSlot / 2, 0,
                                             ipc::wire::ClockCalibration::kDeviceAndHostTimer};
        m.request_id = static_cast<std::uint32_t>(n + i);
        m.body = l;
        posted[i] = ipc::wire::encode(m);
      }
      state.ResumeTiming();
    }
    auto decoded = ipc::wire::decode(posted[k]);
    const ipc::wire::Body reply = s.handle(1, 7, std::get<ipc::wire::Message>(decoded).body);
    benchmark::DoNotOptimize(reply);
    ++n;
  }
  s.stop();
  reporter->end();
  // A row whose window the timeline did not cover skips the interpolation: not what is timed.
  if (rows != n || attributed != n) state.SkipWithError("a sampled launch got no attributed row");
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_ConsumeSampledLaunch);

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
