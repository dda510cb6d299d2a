// The unprivileged oaprof's side of oaprofd: a connection (DaemonClient) and the counter and
// energy sources that read through it. oaprof keeps pairing snapshots, deltas and reports; only
// the OA unit itself is the daemon's.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "gpu/counter_source.h"
#include "ipc/client.h"
#include "ipc/wire.h"
#include "power/energy_source.h"

namespace oaprof::session {

// oaprofd is not there to talk to (no socket, nobody listening, not allowed to connect).
class DaemonUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// $OAPROF_DAEMON_SOCKET, else kDefaultDaemonSocket. Under sudo the variable is ignored, with a
// note on stderr: root connects only where root says.
std::string daemon_socket_path();

class DaemonClient {
 public:
  // Connects. Throws DaemonUnavailable saying how to start oaprofd (or what else is wrong).
  explicit DaemonClient(std::string socket_path);
  ~DaemonClient();
  DaemonClient(const DaemonClient&) = delete;
  DaemonClient& operator=(const DaemonClient&) = delete;

  // One request, one reply; thread-safe. Throws std::invalid_argument for a request the
  // protocol cannot carry (a path too long) and std::runtime_error when the daemon hung up, did
  // not answer within the timeout, or answered garbage. Error replies are returned, not thrown.
  ipc::wire::Body call(const ipc::wire::Body& request);

  // Opens the session: the daemon programs the OA unit. Throws std::invalid_argument for a
  // request the daemon refused as bad (unknown set, untrusted file) and std::runtime_error for
  // anything else (busy, not authorised, device errors), each with the daemon's message.
  ipc::wire::Opened open(const ipc::wire::Open& request);
  // Restores the OA unit; safe to call twice and after the daemon went away.
  void close();

  const std::string& socket_path() const { return path_; }
  // Whether requests go through the shared-memory channel (after the first one).
  bool has_channel();

 private:
  // Says hello before the first request, asking for the shared-memory channel (unless
  // OAPROF_CHANNEL=off): requests then go through the mapping, not the socket.
  void greet_locked();

  std::string path_;
  std::unique_ptr<ipc::Client> client_;  // the socket, and the channel once it has one
  std::mutex mu_;
  bool greeted_ = false;
  std::optional<ipc::wire::Error> refused_;  // the daemon refused the connection at accept
  bool open_ = false;
};

// Throws std::runtime_error with the daemon's message when `reply` is an error.
void throw_if_error(const ipc::wire::Body& reply, const char* what);

// A CounterSource whose snapshots the daemon takes. start() checks the format against the one
// opened (the daemon programmed the metric set named at open); stop() closes the session. The
// kernel signal, which only the simulator's workload model uses, goes to the daemon only when
// its device is `simulated`: on a real GPU it would be a round trip per kernel boundary for
// nothing.
std::unique_ptr<gpu::CounterSource> make_remote_counter_source(std::shared_ptr<DaemonClient> client,
                                                               oa::ReportFormat opened_format,
                                                               bool simulated);

// The daemon's energy source, read through the session; null when it opened none.
std::unique_ptr<power::EnergySource> make_remote_energy_source(std::shared_ptr<DaemonClient> client,
                                                               const ipc::wire::Opened& opened);

}  // namespace oaprof::session
