// The privileged side's end of one client's shared-memory channel (ipc/shm_channel.h): it makes
// the mapping (a memfd sealed against resizing, so a client cannot truncate it under us) and
// serves the client's ring on a thread of its own, answering each message exactly as the socket
// server answers a datagram. The client is untrusted: a ring it corrupts ends the channel and its
// connection, never the server; and as it keeps the mapping after it hangs up, it can refill its
// ring for ever: once stopping, the thread answers at most kMaxDrained more messages, so stopping
// it is bounded, and a server's loop need not wait for it at all (request_stop, finished).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "ipc/shm_channel.h"

namespace oaprof::ipc {

class ChannelServer {
 public:
  // Encodes the reply to one message of the client; empty when none is due (a launch record
  // accepted for a client that asked for error replies only).
  using Answer = std::function<std::vector<std::uint8_t>(std::span<const std::uint8_t>)>;

  // Makes the mapping and starts serving it; nullptr with `error` set when the kernel refuses
  // (no memfd, no memory). `settle` runs after each reply is published (Session::settle);
  // `client_socket` is shut down if the client corrupts its ring, so both ends notice.
  static std::unique_ptr<ChannelServer> create(Answer answer, std::function<void()> settle,
                                               int client_socket, ipc::channel::WaitPolicy policy,
                                               std::string& error);
  ~ChannelServer();  // stop()
  ChannelServer(const ChannelServer&) = delete;
  ChannelServer& operator=(const ChannelServer&) = delete;

  // The mapping's descriptor, to pass to the client once (SCM_RIGHTS), then close_fd().
  int fd() const { return fd_; }
  void close_fd();
  // The most messages answered once a stop is asked: what an honest client can have queued
  // before it went (a ring's worth), so its last launch record still becomes a row.
  static constexpr std::uint32_t kMaxDrained = channel::kRingSlots;
  // Asks the thread to answer what the client has queued (at most kMaxDrained) and end; returns
  // at once. finished() says when it has.
  void request_stop();
  bool finished() const { return finished_.load(); }
  // request_stop(), then waits for the thread: bounded by kMaxDrained answers. Idempotent.
  void stop();
  // Messages answered, and whether the client corrupted its ring.
  std::uint64_t answered() const { return answered_.load(); }
  bool corrupt() const { return corrupt_.load(); }

 private:
  ChannelServer() = default;
  void run();
  void serve();
  // Publishes `reply`, waiting for room while the client is still there: false when the ring
  // is corrupt or the client stopped reading (then the channel is over).
  bool publish(channel::Producer& out, const std::vector<std::uint8_t>& reply);
  void fail();

  Answer answer_;
  std::function<void()> settle_;
  int client_socket_ = -1;
  ipc::channel::WaitPolicy policy_;
  int fd_ = -1;
  void* mapping_ = nullptr;
  ipc::channel::ChannelLayout* layout_ = nullptr;
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};  // run() has returned
  std::atomic<bool> corrupt_{false};
  std::atomic<std::uint64_t> answered_{0};
  std::thread thread_;
};

// For a server's dropped connections, kept (socket number → client with a `channel`) until their
// channels have ended: calls `forget(socket, client)` for each whose channel has, after joining
// it, and erases it. The server closes the socket in `forget`, never before: a channel shuts its
// socket down on a corrupt ring, which must not hit a number reused by then.
template <class Clients, class Forget>
void reap_finished_channels(Clients& closing, Forget forget) {
  for (auto it = closing.begin(); it != closing.end();) {
    if (!it->second.channel->finished()) {
      ++it;
      continue;
    }
    it->second.channel.reset();  // joins a thread that has already returned
    forget(it->first, it->second);
    it = closing.erase(it);
  }
}

}  // namespace oaprof::ipc
