// The privileged side's socket: SOCK_SEQPACKET on a Unix address, one datagram per message of
// ipc/wire.h. A run listens on an abstract name (private_socket_address()): no file, so nothing a
// user could swap under root. Each peer's credentials come from SO_PEERCRED and are checked
// against the uids the run allows (root always); the number of clients is bounded, and a client
// that does not read its replies is hung up on. Clients are untrusted: a malformed message gets an
// error reply and the server goes on serving. A client whose hello asks for it gets a shared-memory
// channel for its further messages (channel_server.h), served on a thread of its own. The loop and
// the channels' threads answer in turn (base::FairMutex), so one client's stream of requests
// cannot keep the others out; and the loop never waits for a channel: a closed connection's
// channel answers at most a ring's worth more (its last launch records) and ends on its own, even
// when the client keeps refilling its ring after it hung up.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/fair_mutex.h"
#include "ipc/channel_server.h"
#include "session/session.h"

namespace oaprof::session {

// A fresh abstract address, "@oaprof-" and 32 random hex digits, for a run's Server and its
// OAPROF_SOCKET. Throws std::runtime_error when the kernel gives no randomness.
std::string private_socket_address();

// Connections a run serves at once: far more OpenCL processes than one program starts.
inline constexpr std::size_t kMaxRunClients = 1024;
// How long a reply waits for a client that is slow to read before it is hung up on.
inline constexpr std::chrono::milliseconds kReplyTimeout{5000};
// The most requests one client's socket gets answered once the server is stopping: what a
// program posts and leaves (a few launch records), not what a client can keep sending.
inline constexpr int kMaxAnsweredAtStop = 64;

class Server {
 public:
  // Binds and listens at `address`: "@name" (abstract) or a path (which must not exist). Throws
  // std::runtime_error on failure.
  Server(std::string address, Session& session, std::vector<uid_t> allowed_uids,
         std::size_t max_clients = kMaxRunClients);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Serves on a thread of its own until stop().
  void start();
  void stop();

  const std::string& path() const { return path_; }
  std::uint64_t clients_refused() const { return refused_; }
  // Clients hung up on because a reply could not be delivered: gone, or not reading it within
  // kReplyTimeout.
  std::uint64_t clients_dropped() const { return dropped_; }
  std::uint64_t messages_rejected() const { return rejected_; }
  // Clients whose messages come through a shared-memory channel (ipc/shm_channel.h).
  std::uint64_t channels_opened() const { return channels_; }

 private:
  struct Client {
    std::uint64_t id;
    pid_t pid;
    uid_t uid;
    // The shared-memory fast path, once the client's hello asked for it and it could be made.
    std::unique_ptr<ipc::ChannelServer> channel;
    // Its hello asked for no kOk to a launch record on the channel (kHelloLaunchErrorsOnly).
    bool launch_errors_only = false;
  };
  struct Answer {
    ipc::wire::Message reply;
    bool wants_channel = false;       // a hello asking for a channel, answered kOk
    bool launch_errors_only = false;  // that hello also asked for kHelloLaunchErrorsOnly
    bool launch_accepted = false;     // a launch record, answered kOk
  };
  void loop();
  void accept_client();
  enum class Served { kMessage, kNothing, kGone };
  Served serve_one(int fd, Client& client);
  // The reply to one message of `client`, from the socket or its channel alike.
  Answer answer(const Client& client, std::span<const std::uint8_t> bytes);
  // False when the reply could not be delivered (see kReplyTimeout).
  bool offer_channel(int fd, Client& client, const ipc::wire::Message& ok);
  // The client's connection is over: its channel is asked to stop (without waiting for it:
  // reap_closed_channels() ends the client once it has), or the session forgets it at once.
  void drop_client(int fd);
  // The session forgets each dropped client whose channel has answered what it held.
  void reap_closed_channels();
  // At stop: what clients already queued is answered (bounded), every channel is stopped.
  void drain_at_stop();

  std::string path_;
  Session& session_;
  std::vector<uid_t> allowed_;
  std::size_t max_clients_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd that stop() signals
  std::map<int, Client> clients_;
  // Dropped clients whose channels are still answering their last requests: not polled; their
  // sockets stay open until then (a channel shuts its socket down on a corrupt ring, which must
  // not hit a reused number).
  std::map<int, Client> closing_;
  // Every answer takes its turn here, in the order asked: the session's own lock (std::mutex)
  // would let a channel's thread retake it back to back and keep the loop out.
  base::FairMutex turn_;
  std::uint64_t next_client_ = 1;
  std::thread thread_;
  std::atomic<std::uint64_t> refused_{0};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> channels_{0};
  ipc::channel::WaitPolicy wait_policy_;
};

}  // namespace oaprof::session
