// The privileged side's end of one client's shared-memory channel (ipc/shm_channel.h): it makes
// the mapping (a memfd sealed against resizing, so a client cannot truncate it under us) and
// serves the client's ring on a thread of its own, answering each message exactly as the socket
// server answers a datagram. The client is untrusted: a ring it corrupts ends the channel and its
// connection, never the server.
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
  // Encodes the reply to one message of the client.
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
  // Answers what the client has already queued, then stops the thread. Idempotent.
  void stop();
  // Messages answered, and whether the client corrupted its ring.
  std::uint64_t answered() const { return answered_.load(); }
  bool corrupt() const { return corrupt_.load(); }

 private:
  ChannelServer() = default;
  void run();
  void serve();

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

}  // namespace oaprof::ipc
