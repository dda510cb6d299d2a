// oaprofd's socket: a SOCK_SEQPACKET Unix socket (bound here, or handed over by systemd socket
// activation), one datagram per ipc/wire.h message. Each connection's peer is checked once with
// SO_PEERCRED and SO_PEERGROUPS: root, or a member of oaprofd's group, may talk; anyone else
// gets one kNotAuthorised reply and is hung up on, and so (kBusy) is a connection past the bounds
// on connections, all together and of one uid. Requests go to the DaemonService; a closed
// connection ends its session at once. A reply the client's socket has no room for is kept, and
// the client not read from, until it goes; a client that leaves it unread for reply_timeout is
// hung up on, which is logged. One poll loop, stopped by request_stop() (safe in a signal
// handler); a client that asks for the shared-memory channel in its hello (ipc/shm_channel.h) is
// answered on a thread of its own from then on (ChannelServer), as oaprof's run answers the
// layer, with the service behind one lock that serves in turn (base::FairMutex): one client's
// stream of requests cannot keep the loop, and so the other clients, out. A closed connection's
// channel is told to stop and left to end on its own (at most a ring's worth more answers, all
// refused, as its session has ended): the loop never waits for a client, even one that keeps
// refilling its ring after it hung up.
#pragma once

#include <sys/types.h>
#include <sys/un.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/fair_mutex.h"
#include "daemon/daemon_service.h"
#include "ipc/channel_server.h"
#include "session/daemon_paths.h"

namespace oaprof::daemon {

struct OaprofdOptions {
  std::string socket_path = session::kDefaultDaemonSocket;
  int listen_fd = -1;          // a socket systemd passed (it then owns the path and its mode)
  std::optional<gid_t> group;  // members may connect; nullopt: root only
  std::string group_name = session::kDefaultDaemonGroup;  // for messages
  std::size_t max_clients = 64;          // connections at once; more are refused (kBusy)
  std::size_t max_clients_per_uid = 16;  // of one uid, so that one user cannot take them all
  std::chrono::milliseconds reply_timeout{10'000};  // a reply left unread this long: hung up
  bool channels = true;  // false: no client is given a shared-memory channel
  // Problems worth an administrator's attention that do not stop the daemon (syslog's levels).
  std::function<void(int level, const std::string& line)> log;
};

// Why `peer` (with supplementary `groups`) may not use the daemon, or nullopt when it may.
std::optional<std::string> refusal(const Peer& peer, std::span<const gid_t> groups,
                                   std::optional<gid_t> group, const std::string& group_name);

class Oaprofd {
 public:
  // Binds and listens at options.socket_path unless a listen_fd is given: a stale socket file
  // (nobody answers) is replaced, a live one is refused. The socket gets mode 0660 and the group;
  // when it cannot be given to the group it stays 0600 (root only), which is logged. Throws
  // std::runtime_error on failure.
  Oaprofd(DaemonService& service, OaprofdOptions options);
  ~Oaprofd();
  Oaprofd(const Oaprofd&) = delete;
  Oaprofd& operator=(const Oaprofd&) = delete;

  // Serves until request_stop(); closes the open session before returning.
  void run();
  // Async-signal-safe.
  void request_stop();
  // Before run(): `tick` is called on the loop, between requests, every `period()` (the
  // exporter's sampling), the first time at once.
  void set_tick(std::function<void()> tick, std::function<std::chrono::milliseconds()> period) {
    tick_ = std::move(tick);
    tick_period_ = std::move(period);
  }

  std::uint64_t clients_refused() const { return refused_; }
  std::uint64_t clients_dropped() const { return dropped_; }

 private:
  struct Client {
    std::uint64_t id;
    Peer peer;
    std::deque<std::vector<std::uint8_t>> pending;  // replies its socket had no room for yet
    std::chrono::steady_clock::time_point stuck_since;
    std::unique_ptr<ipc::ChannelServer> channel;  // once its hello asked for one
    // Set (under service_mu_) when the connection is dropped: its channel's thread may still
    // answer a few queued requests, which must not reach the service (an open among them would
    // take the OA unit for a client that is gone).
    std::shared_ptr<bool> gone = std::make_shared<bool>(false);
  };
  // The service's answer to one message of `client` (under service_mu_); a refusal once `gone`.
  std::vector<std::uint8_t> answer(std::uint64_t client_id, const Peer& peer, const bool& gone,
                                   std::span<const std::uint8_t> bytes);
  // A hello that asked for the channel was answered `reply` (encoded Ok): the channel is made
  // and the reply goes with its descriptor; without one (the kernel refused a memfd) it goes
  // plain and the client stays on the socket. False: the connection is gone.
  bool offer_channel(int fd, Client& client, const std::vector<std::uint8_t>& reply);
  void bind_socket(const sockaddr_un& addr);
  std::optional<std::pair<ipc::wire::ErrorCode, std::string>> admission(
      const Peer& peer, std::span<const gid_t> groups) const;
  void accept_client();
  // Each false: the connection is gone.
  bool serve_one(int fd, Client& client);
  bool send_or_queue(int fd, Client& client, std::vector<std::uint8_t> reply);
  bool send_pending(int fd, Client& client);
  // Ends the client's session at once and asks its channel to stop, without waiting for it.
  void drop_client(std::map<int, Client>::iterator it);
  void drop_clients_not_reading();
  // Closes the connections whose channels have ended since they were dropped.
  void reap_closed_channels();
  // Stops every channel (at shutdown): each is bounded, and they drain side by side.
  void stop_all_channels();
  int poll_timeout_ms() const;

  DaemonService& service_;
  // The service is not thread-safe: the loop and the channels' threads take it in turn, in the
  // order they asked (a fair lock), so each waits for at most one turn of every other client.
  base::FairMutex service_mu_;
  ipc::channel::WaitPolicy channel_policy_;
  OaprofdOptions options_;
  bool bound_ = false;  // we created the socket file, so we remove it
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::map<int, Client> clients_;
  // Dropped clients whose channels are still ending: not polled; their sockets stay open (a
  // channel shuts its socket down when the ring is corrupt, which must not hit a reused number).
  std::map<int, Client> closing_;
  std::uint64_t next_client_ = 1;
  std::function<void()> tick_;
  std::function<std::chrono::milliseconds()> tick_period_;
  std::uint64_t refused_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace oaprof::daemon
