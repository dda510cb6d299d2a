// What oaprofd does for its clients, without the socket: one exclusive session on the OA unit
// at a time (open = program the metric set, sample, kernel signal, close = restore), journaled
// to a state file so a crashed daemon's registers are put back by the next one. The socket side
// (oaprofd.h) and the fuzz target both drive it through handle(). Pairing snapshots into deltas
// and reporting stay in the unprivileged oaprof. It also runs `oaprof selftest` for a client,
// holding the unit as a session does, on a thread of its own (daemon_selftest.cc).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "daemon/energy_gate.h"
#include "daemon/pod_identity.h"
#include "daemon/selftest_run.h"
#include "gpu/device.h"
#include "ipc/wire.h"
#include "power/energy_registry.h"

namespace oaprof::daemon {

// A connected client as SO_PEERCRED saw it.
struct Peer {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  // The process itself, held since the connection was accepted (pod_identity.h); null where it
  // could not be held, and for the exporter's own session.
  std::shared_ptr<const PeerProcess> process = nullptr;
};

// A per-kernel summary as a client sent it, with the uid of the connection that did (the
// exporter bounds the kernel labels one uid may take) and the pod and container its process was
// in when it opened the session (the exporter's per-pod labels).
struct ClientSummary {
  uid_t uid = 0;
  PodIdentity pod;
  ipc::wire::Summary summary;
};

struct ServiceOptions {
  gpu::DeviceOptions device;  // spec: auto | sim | sim:FILE | BDF
  std::filesystem::path state_dir = "/run/oaprof";
  std::vector<std::filesystem::path> metrics_dirs;
  power::EnergyRoots energy_roots;
  uid_t metrics_owner = 0;  // who must own every metric file and directory above it (root)
  // Where /proc is: each client's cgroup, read once as its session opens, names its pod.
  std::filesystem::path proc_root = "/proc";
  // Energy for sessions (energy_gate.h): false refuses it to every client (oaprofd --energy off);
  // otherwise no two distinct readings of a session are closer than this.
  bool lend_energy = true;
  std::uint64_t energy_min_interval_ns = kEnergyMinIntervalNs;
  // One line per event worth a log entry; level 6 info, 4 warning, 3 error (syslog's numbers).
  std::function<void(int level, const std::string& line)> log;
  // Runs the selftest a client asks for (kSelftest): oaprofd's main hands src/run's in; unset,
  // the request is refused as this oaprofd does not run it.
  SelftestRunner selftest;
};

class DaemonService {
 public:
  explicit DaemonService(ServiceOptions options);
  ~DaemonService();  // restores an open session
  DaemonService(const DaemonService&) = delete;
  DaemonService& operator=(const DaemonService&) = delete;

  // Decodes one datagram from `client` (a connection number), acts on it and returns the
  // encoded reply. Never throws: bad input and device failures become error replies.
  std::vector<std::uint8_t> handle(std::uint64_t client, const Peer& peer,
                                   std::span<const std::uint8_t> bytes);
  ipc::wire::Body handle(std::uint64_t client, const Peer& peer, const ipc::wire::Body& request);

  // The connection closed (or its process died): its session, if any, is restored at once.
  void client_gone(std::uint64_t client);
  // Restores and ends the open session, whoever holds it, and cancels every selftest, waiting
  // for each to end the check it runs (shutdown).
  void close_session();
  bool session_open() const { return active_ != nullptr; }
  // A selftest holds the OA unit (running, or cancelled and ending its check).
  bool selftest_running() const;
  bool session_held_by(std::uint64_t client) const;
  // The session of this connection number (the exporter's, exporter.h) gives way: another
  // client's open ends it first instead of being told the unit is busy.
  void set_background_client(std::uint64_t client) { background_client_ = client; }
  // The per-kernel summaries clients sent before closing (at most kMaxKeptSummaries, the oldest
  // dropped first), handed over once: the exporter's per-kernel series.
  static constexpr std::size_t kMaxKeptSummaries = 16;
  // The most metric sets one session switches among (kSwitchSet; each kept programmed in
  // memory).
  static constexpr std::size_t kMaxSessionSets = 64;
  std::vector<ClientSummary> take_summaries() { return std::exchange(summaries_, {}); }
  // Sessions opened for clients other than the background one, since the start.
  std::uint64_t client_sessions_opened() const { return client_sessions_; }
  // For the exporter: the log, and where sysfs is.
  void log_line(int level, const std::string& line) const { log(level, line); }
  const std::filesystem::path& sysfs_root() const { return options_.device.sysfs_root; }
  // The part the served device is, read from sysfs (or the simulator's) without opening it;
  // nullopt where sysfs does not name a part oaprof knows (open then says why).
  std::optional<oa::Platform> served_platform() const;

  // A previous oaprofd (or a local `sudo oaprof`) died and left a state file: put its registers
  // back on its device and remove the file, holding the session lock while doing so. When
  // another process holds the lock the file is a live session's and is left alone (the returned
  // line says so). Returns what was done, for the log; nullopt when there was nothing to do.
  // Throws std::runtime_error (file kept) when the device cannot be opened or is another one now.
  std::optional<std::string> recover();

  std::filesystem::path state_file() const { return options_.state_dir / "state"; }
  std::filesystem::path lock_file() const { return options_.state_dir / "session.lock"; }

 private:
  struct Active;
  ipc::wire::Body open(std::uint64_t client, const Peer& peer, const ipc::wire::Open& request);
  // Why `client` may not open a session now (one is open, or it asks for another device than the
  // one served); nullopt when it may. A session of the exporter's gives way to a client's here.
  std::optional<ipc::wire::Error> refuse_open(std::uint64_t client, const std::string& device);
  // The session `client` is opening, not yet holding anything.
  Active& begin_session(std::uint64_t client, const Peer& peer);
  // Takes the unit, programs the request's set and starts the read-out; what the client is told.
  ipc::wire::Opened program_unit(Active& a, const ipc::wire::Open& request);
  // The energy source lent with the session (none unless --energy session), into `opened`.
  void lend_energy(Active& a, const std::string& requested, ipc::wire::Opened& opened);
  // The refusal for a client that asks for another device than the one served; nullopt when it
  // may have this one.
  std::optional<ipc::wire::Error> refuse_other_device(const std::string& asked) const;
  ipc::wire::Body switch_set(const ipc::wire::SwitchSet& request);
  // The selftest through oaprofd (daemon_selftest.cc): started on its own thread holding the
  // unit, then fetched in chunks by the client that asked; one at a time.
  ipc::wire::Body start_selftest(std::uint64_t client, const Peer& peer,
                                 const ipc::wire::Selftest& request);
  std::optional<ipc::wire::Error> refuse_selftest(std::uint64_t client,
                                                  const ipc::wire::Selftest& request);
  SelftestJob selftest_job(const ipc::wire::Selftest& request) const;
  ipc::wire::Body fetch_selftest(std::uint64_t client, const ipc::wire::SelftestFetch& request);
  // Waits for the runs whose clients went and whose checks have ended.
  void reap_selftests();
  // The selftest that holds the unit, if one does.
  const SelftestRun* running_selftest() const;
  ipc::wire::Body sample(const ipc::wire::Sample& request);
  // Restores and closes the session; logs it unless `log_if_untouched` is false and it had
  // written no register.
  void end_session(const std::string& why, bool log_if_untouched = true);
  void log(int level, const std::string& line) const;

  ServiceOptions options_;
  std::unique_ptr<Active> active_;
  std::optional<std::uint64_t> background_client_;
  std::uint64_t client_sessions_ = 0;
  std::vector<ClientSummary> summaries_;
  // Each client's selftest, running or waiting to be fetched; a client that went leaves its run
  // in `orphaned_selftests_` until its check ends.
  std::map<std::uint64_t, std::unique_ptr<SelftestRun>> selftests_;
  std::vector<std::unique_ptr<SelftestRun>> orphaned_selftests_;
};

}  // namespace oaprof::daemon
