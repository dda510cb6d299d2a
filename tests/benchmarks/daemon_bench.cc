// What going through oaprofd costs an unprivileged run: one snapshot on the simulator taken
// locally (the mmio read-out in this process, as `sudo oaprof` does) against the same snapshot
// asked of oaprofd over its socket (a request, the daemon's read-out, a reply). Each kernel launch
// costs two snapshots. Compare the ratio, not the absolute numbers, across machines.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <benchmark/benchmark.h>

#include "daemon/daemon_service.h"
#include "daemon/oaprofd.h"
#include "gpu/counter_source.h"
#include "gpu/device.h"
#include "session/remote_source.h"

namespace {

using namespace oaprof;

void BM_LocalSnapshot(benchmark::State& state) {
  gpu::DeviceOptions o;
  o.spec = oaprof::gpu::DeviceSpec::sim();
  o.forcewake.mode = mmio::ForcewakeMode::kNone;
  gpu::Device d = gpu::open_device(o);
  auto src = gpu::make_counter_source("mmio", d);
  src->start(oa::ReportFormat::kA32u40_A4u32_B8_C8);
  std::uint32_t id = 0;
  for (auto _ : state) benchmark::DoNotOptimize(src->snapshot(++id));
  src->stop();
}
BENCHMARK(BM_LocalSnapshot);

void BM_SnapshotThroughOaprofd(benchmark::State& state) {
  std::string tmpl = "/tmp/oapd-bench-XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(tmpl.data());
  daemon::ServiceOptions so;
  so.device.spec = oaprof::gpu::DeviceSpec::sim();
  so.device.forcewake.mode = mmio::ForcewakeMode::kNone;
  so.state_dir = dir;
  daemon::DaemonService service(so);
  daemon::OaprofdOptions oo;
  oo.socket_path = (dir / "d.sock").string();
  daemon::Oaprofd server(service, oo);
  std::thread serving([&] { server.run(); });
  {
    auto client = std::make_shared<session::DaemonClient>(oo.socket_path);
    ipc::wire::Open open;
    open.energy = "none";
    (void)client->open(open);
    auto src = session::make_remote_counter_source(client, oa::ReportFormat::kA32u40_A4u32_B8_C8,
                                                   /*simulated=*/true);
    std::uint32_t id = 0;
    for (auto _ : state) benchmark::DoNotOptimize(src->snapshot(++id));
    src->stop();
  }
  server.request_stop();
  serving.join();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_SnapshotThroughOaprofd);

}  // namespace

BENCHMARK_MAIN();
