// Decode + accumulate of 256-byte OA reports against memcpy of the same bytes, in one run: the
// ratio of their throughputs says whether a long capture can be decoded about as fast as it can be
// copied (goal: at least 0.25 of memcpy on one core).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "oa/accumulator.h"
#include "oa/report.h"

namespace {

using namespace oaprof::oa;

constexpr std::size_t kReports = 4096;  // 1 MiB: fits in L2/L3 like a batch of a perf read

const std::vector<std::uint8_t>& capture() {
  static const std::vector<std::uint8_t> bytes = [] {
    std::mt19937_64 rng(1);
    std::vector<std::uint8_t> out;
    out.reserve(kReports * 256);
    Report r;
    for (std::size_t i = 0; i < kReports; ++i) {
      r.timestamp += 1000;
      r.gpu_ticks += 100'000;
      for (auto& a : r.a) a += rng() % 2'000'000;
      for (auto& b : r.b) b += static_cast<std::uint32_t>(rng() % 100'000);
      for (auto& c : r.c) c += static_cast<std::uint32_t>(rng() % 100'000);
      const RawReport raw = encode(ReportFormat::kA32u40_A4u32_B8_C8, r);
      out.insert(out.end(), raw.bytes.begin(), raw.bytes.begin() + raw.size);
    }
    return out;
  }();
  return bytes;
}

void BM_Memcpy(benchmark::State& state) {
  const auto& src = capture();
  std::vector<std::uint8_t> dst(src.size());
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * src.size()));
}
BENCHMARK(BM_Memcpy);

// The path for captures: whole blocks of reports, as a perf read() or a file delivers them.
void BM_DecodeAccumulateBatch(benchmark::State& state) {
  const auto& src = capture();
  const FormatLayout& layout = layout_of(ReportFormat::kA32u40_A4u32_B8_C8);
  for (auto _ : state) {
    Accumulator acc(12e6, max_safe_read_interval_ns(1150, 24));
    acc.add_raw_batch(layout, src);
    benchmark::DoNotOptimize(acc.total());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * src.size()));
}
BENCHMARK(BM_DecodeAccumulateBatch);

// One report at a time (each copied as the anchor of the next).
void BM_DecodeAccumulateRaw(benchmark::State& state) {
  const auto& src = capture();
  const FormatLayout& layout = layout_of(ReportFormat::kA32u40_A4u32_B8_C8);
  for (auto _ : state) {
    Accumulator acc(12e6, max_safe_read_interval_ns(1150, 24));
    for (std::size_t off = 0; off < src.size(); off += 256) {
      acc.add_raw(layout, std::span(src).subspan(off, 256));
    }
    benchmark::DoNotOptimize(acc.total());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * src.size()));
}
BENCHMARK(BM_DecodeAccumulateRaw);

void BM_DecodeReportsAccumulate(benchmark::State& state) {
  const auto& src = capture();
  for (auto _ : state) {
    Accumulator acc(12e6, max_safe_read_interval_ns(1150, 24));
    for (std::size_t off = 0; off < src.size(); off += 256) {
      acc.add(decode(ReportFormat::kA32u40_A4u32_B8_C8, std::span(src).subspan(off, 256)));
    }
    benchmark::DoNotOptimize(acc.total());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * src.size()));
}
BENCHMARK(BM_DecodeReportsAccumulate);

// Keeps each benchmark's throughput so main can print the ratios measured in this run.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.iterations == 0) continue;
      // CPU time: the machine may be shared, and the goal is per core.
      const double seconds = run.GetAdjustedCPUTime();  // per iteration, in the time unit
      bytes_per_unit_[run.benchmark_name()] = seconds > 0 ? 1.0 / seconds : 0;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  double throughput(const std::string& name) const {
    const auto it = bytes_per_unit_.find(name);
    return it == bytes_per_unit_.end() ? 0 : it->second;
  }

 private:
  std::map<std::string, double> bytes_per_unit_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  // Every benchmark processes the same bytes per iteration, so iterations per time compare.
  const double memcpy_rate = reporter.throughput("BM_Memcpy");
  if (memcpy_rate > 0) {
    for (const char* name :
         {"BM_DecodeAccumulateBatch", "BM_DecodeAccumulateRaw", "BM_DecodeReportsAccumulate"}) {
      const double rate = reporter.throughput(name);
      if (rate > 0) {
        std::cout << fmt::format("{} / memcpy throughput = {:.3f} (goal >= 0.25)\n", name,
                                 rate / memcpy_rate);
      }
    }
  }
  benchmark::Shutdown();
  return 0;
}
