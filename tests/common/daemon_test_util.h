// Shared set-up of the oaprofd tests: a scratch directory, a simulated register file in it, a
// byte-for-byte image of that file to compare before and after a session, and a raw connection.
#pragma once

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "daemon/daemon_service.h"
#include "gpu/device.h"
#include "oa/platform.h"

namespace oaprof::test_support {

class ScratchDir {
 public:
  // Short: socket paths must fit sun_path. On tmpfs where there is one, as /run/oaprof is on a
  // real machine: a session journals each register it programs with a sync, and on a busy disk
  // (CI's, under a parallel build) a sync can take a tenth of a second, which made tests that open
  // many sessions measure the disk rather than oaprof (issue 29's floods missed their bound).
  ScratchDir() {
    std::error_code ec;
    const bool shm = std::filesystem::is_directory("/dev/shm", ec);
    std::string tmpl = shm ? "/dev/shm/oapd-XXXXXX" : "/tmp/oapd-XXXXXX";
    path_ = ::mkdtemp(tmpl.data());
  }
  // In `parent` rather than /tmp, whose sticky, world-writable mode makes nothing below it a
  // place oaprofd trusts.
  explicit ScratchDir(const std::filesystem::path& parent) {
    std::string tmpl = (parent / "oapd-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A metric directory oaprofd trusts, holding a copy of `file`: beside the test (its working
// directory, the build tree) rather than under /tmp, mode 0755, the file 0644.
class TrustedMetricsDir : public ScratchDir {
 public:
  explicit TrustedMetricsDir(const std::filesystem::path& file)
      : ScratchDir(std::filesystem::current_path()) {
    ::chmod(path().c_str(), 0755);
    std::filesystem::copy_file(file, path() / file.filename());
    ::chmod((path() / file.filename()).c_str(), 0644);
  }
};

// A service on a simulated Lunar Lake (driven by xe, so without i915), with its state in
// `state_dir` and its metric sets from `metrics_dir`, owned by whoever runs the test.
inline daemon::ServiceOptions sim_xe_service_options(const std::filesystem::path& state_dir,
                                                     const std::filesystem::path& metrics_dir,
                                                     const std::string& sim_platform = "lnl") {
  daemon::ServiceOptions o;
  o.device.spec = oaprof::gpu::DeviceSpec::sim();
  o.device.sim.platform = mmio::sim_platform_by_name(sim_platform);
  o.device.sim.i915 = false;
  o.state_dir = state_dir;
  o.metrics_dirs = {metrics_dir};
  o.metrics_owner = ::geteuid();
  return o;
}

inline std::vector<char> file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Creates the register file of `--device sim:FILE` as a fresh simulator publishes it.
inline void create_sim_file(const std::filesystem::path& file) {
  gpu::DeviceOptions o;
  o.spec = oaprof::gpu::DeviceSpec::sim_file(file);
  o.forcewake.mode = mmio::ForcewakeMode::kNone;
  (void)gpu::open_device(o);
}

// A SOCK_SEQPACKET connection to the Unix socket at `path`, or -1.
inline int connect_unix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Offsets (bytes) where two register images differ.
inline std::vector<std::size_t> differing_registers(const std::vector<char>& a,
                                                    const std::vector<char>& b) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i + 4 <= std::min(a.size(), b.size()); i += 4) {
    if (std::memcmp(a.data() + i, b.data() + i, 4) != 0) out.push_back(i);
  }
  if (a.size() != b.size()) out.push_back(std::min(a.size(), b.size()));
  return out;
}

}  // namespace oaprof::test_support
