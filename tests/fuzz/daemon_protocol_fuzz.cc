// Fuzzes oaprofd's request handling (DaemonService::handle: decode, authorise the session,
// dispatch) on the simulator, without the socket. The input is a sequence of datagrams, each
// [u8 client (two clients, to reach busy and no-session paths)][u16 length][bytes], so that
// sessions can be opened, sampled and closed in any order, and selftests asked for and fetched
// (a stand-in runner: the report's chunks and the one-at-a-time rule are the daemon's). Every
// datagram must get exactly one reply that decodes and carries the request's id when the header was
// readable; at the end the session is closed and nothing of it may remain.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "daemon/daemon_service.h"
#include "ipc/wire.h"

namespace {

using namespace oaprof;

daemon::DaemonService& service() {
  static const std::string dir = [] {
    std::string tmpl = "/tmp/oaprofd-fuzz-XXXXXX";
    return std::string(::mkdtemp(tmpl.data()));
  }();
  static daemon::DaemonService s([] {
    daemon::ServiceOptions o;
    o.device.spec = oaprof::gpu::DeviceSpec::sim();
    o.state_dir = dir;
    o.energy_roots.sim_dir = std::filesystem::path(dir) / "power";
    o.selftest = [](const daemon::SelftestJob& job) {
      job.progress("clocks");
      return daemon::SelftestOutcome{std::string(5000, '{'), "", 0, 0};  // two chunks
    };
    return o;
  }());
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace wire = ipc::wire;
  daemon::DaemonService& s = service();
  const daemon::Peer peers[2] = {{1000, 1000, 11}, {1001, 1001, 22}};
  std::size_t pos = 0;
  while (size - pos >= 3) {
    const std::uint8_t client = data[pos] & 1;
    std::uint16_t len = 0;
    std::memcpy(&len, data + pos + 1, 2);
    pos += 3;
    len = static_cast<std::uint16_t>(std::min<std::size_t>(len, size - pos));
    const std::span<const std::uint8_t> datagram(data + pos, len);
    pos += len;
    const auto reply = wire::decode(s.handle(client + 1, peers[client], datagram));
    const auto* m = std::get_if<wire::Message>(&reply);
    if (m == nullptr) std::abort();  // every reply must decode
    const auto request = wire::decode(datagram);
    if (const auto* r = std::get_if<wire::Message>(&request); r && m->request_id != r->request_id) {
      std::abort();
    }
  }
  s.close_session();  // every selftest too
  if (s.session_open() || s.selftest_running() || std::filesystem::exists(s.state_file())) {
    std::abort();
  }
  return 0;
}
