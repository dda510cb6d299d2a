// Cost of one counter snapshot on the simulator, per read-out: mmio (one register read per
// counter, about 90 of them), rpc (build a batch, interpret it, copy the report back) and perf
// (drain the simulated i915 stream, then the same batch as rpc).
// memcpy of 256 bytes, the size of one report, runs in the same binary as the reference:
// compare the ratios, not the absolute numbers, across machines.
#include <array>
#include <cstring>

#include <benchmark/benchmark.h>

#include "gpu/counter_source.h"
#include "gpu/device.h"
#include "mmio/sim_gpu.h"

namespace {

using namespace oaprof;

void BM_Memcpy256(benchmark::State& state) {
  std::array<std::uint8_t, 256> src{}, dst{};
  for (auto _ : state) {
    benchmark::DoNotOptimize(src.data());
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Memcpy256);

void snapshot(benchmark::State& state, const char* access) {
  auto clock = std::make_unique<mmio::ManualClock>();
  mmio::ManualClock* c = clock.get();
  gpu::Device d = gpu::make_sim_device(std::move(clock));
  auto src = gpu::make_counter_source(access, d);
  // perf needs a configuration i915 accepts: a UUID and registers.
  mmio::OaConfig config;
  config.guid = "12994724-3a5a-4303-bb3c-ba0175d2c200";
  config.mux = {{0x9888, 0x166C01E0}};
  config.flex = {{0xE458, 0x5004}};
  src->start(oa::ReportFormat::kA32u40_A4u32_B8_C8, config);
  std::uint32_t id = 0;
  for (auto _ : state) {
    c->advance_ns(1000);
    benchmark::DoNotOptimize(src->snapshot(++id));
  }
  src->stop();
}
void BM_SnapshotMmio(benchmark::State& state) { snapshot(state, "mmio"); }
void BM_SnapshotRpc(benchmark::State& state) { snapshot(state, "rpc"); }
void BM_SnapshotPerf(benchmark::State& state) { snapshot(state, "perf"); }
BENCHMARK(BM_SnapshotMmio);
BENCHMARK(BM_SnapshotRpc);
BENCHMARK(BM_SnapshotPerf);

}  // namespace

BENCHMARK_MAIN();
