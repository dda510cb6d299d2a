// What one energy read costs, per backend, against the floor of reading one sysfs-like file: the
// profiler reads energy around every window, and the sampler thread reads it all run long.
// Run: build/tests/bin/energy_bench; compare each backend's time with BM_ReadOneFile's.
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>

#include "power/energy_window.h"
#include "power/msr.h"
#include "power/powercap.h"
#include "power/sim_power.h"
#include "tests/power/fake_tree.h"

namespace oaprof::power {
namespace {

// A laptop's powercap tree: package-0 with core and uncore, and psys.
void laptop_tree(const test_support::FakeTree& tree) {
  test_support::FakePowercap pc(tree);
  pc.zone("intel-rapl:0", "package-0", 123456789);
  pc.zone("intel-rapl:0:0", "core", 23456789);
  pc.zone("intel-rapl:0:1", "uncore", 3456789);
  pc.zone("intel-rapl:1", "psys", 456789012);
}

void BM_ReadOneFile(benchmark::State& state) {
  test_support::FakeTree tree;
  tree.write("energy_uj", "123456789");
  const auto file = tree.root() / "energy_uj";
  for (auto _ : state) {
    std::ifstream in(file);
    std::uint64_t v = 0;
    in >> v;
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(BM_ReadOneFile);

void BM_PowercapRead(benchmark::State& state) {
  test_support::FakeTree tree;
  laptop_tree(tree);
  PowercapSource src(tree.root() / "class/powercap");
  for (auto _ : state) benchmark::DoNotOptimize(src.read());
  state.counters["files"] = 4;
}
BENCHMARK(BM_PowercapRead);

void BM_MsrRead(benchmark::State& state) {
  test_support::FakeTree tree;
  tree.write("sys/cpu/cpu0/topology/physical_package_id", "0");
  tree.write_u64_at("dev/cpu/0/msr", kMsrRaplPowerUnit, 0x000A0E03);
  for (std::uint32_t msr : {kMsrPkgEnergyStatus, kMsrPp0EnergyStatus, kMsrPp1EnergyStatus}) {
    tree.write_u64_at("dev/cpu/0/msr", msr, 1000);
  }
  tree.write("proc/cpuinfo", "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 142\n");
  MsrSource src(tree.root() / "dev/cpu", tree.root() / "sys/cpu", tree.root() / "proc/cpuinfo");
  for (auto _ : state) benchmark::DoNotOptimize(src.read());
}
BENCHMARK(BM_MsrRead);

void BM_SimRead(benchmark::State& state) {
  SimEnergySource src;
  for (auto _ : state) benchmark::DoNotOptimize(src.read());
}
BENCHMARK(BM_SimRead);

void BM_WindowArithmetic(benchmark::State& state) {
  EnergyReading a, b;
  b.time_ns = 100'000'000;
  a.energy_uj = {{Domain::kPackage, 0}, {Domain::kCores, 0}, {Domain::kUncore, 0}};
  b.energy_uj = {
      {Domain::kPackage, 900'000}, {Domain::kCores, 200'000}, {Domain::kUncore, 500'000}};
  for (auto _ : state) benchmark::DoNotOptimize(make_energy_window(a, b));
}
BENCHMARK(BM_WindowArithmetic);

}  // namespace
}  // namespace oaprof::power

BENCHMARK_MAIN();
