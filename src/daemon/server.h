// The privileged side's socket: SOCK_SEQPACKET on a Unix path, one datagram per message of
// oa/wire.h. Each peer's credentials come from SO_PEERCRED and are checked against the uids the
// run allows (root always). Clients are untrusted: a malformed message gets an error reply and
// the server goes on serving. A client whose hello asks for it gets a shared-memory channel for
// its further messages (channel_server.h), served on a thread of its own.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "daemon/channel_server.h"
#include "daemon/session.h"

namespace oaprof::daemon {

class Server {
 public:
  // Binds and listens at `path` (which must not exist). Throws std::runtime_error on failure.
  Server(std::string path, Session& session, std::vector<uid_t> allowed_uids);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Serves on a thread of its own until stop().
  void start();
  void stop();

  const std::string& path() const { return path_; }
  std::uint64_t clients_refused() const { return refused_; }
  std::uint64_t messages_rejected() const { return rejected_; }
  // Clients whose messages come through a shared-memory channel (oa/shm_channel.h).
  std::uint64_t channels_opened() const { return channels_; }

 private:
  struct Client {
    std::uint64_t id;
    pid_t pid;
    uid_t uid;
    // The shared-memory fast path, once the client's hello asked for it and it could be made.
    std::unique_ptr<ChannelServer> channel;
  };
  struct Answer {
    oa::wire::Message reply;
    bool wants_channel = false;  // a hello asking for a channel, answered kOk
  };
  void loop();
  void accept_client();
  enum class Served { kMessage, kNothing, kGone };
  Served serve_one(int fd, Client& client);
  // The reply to one message of `client`, from the socket or its channel alike.
  Answer answer(const Client& client, std::span<const std::uint8_t> bytes);
  void offer_channel(int fd, Client& client, const oa::wire::Message& ok);
  // The client's connection is over: its channel answers what it still holds, then the session
  // forgets the client.
  void drop_client(int fd);

  std::string path_;
  Session& session_;
  std::vector<uid_t> allowed_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd that stop() signals
  std::map<int, Client> clients_;
  std::uint64_t next_client_ = 1;
  std::thread thread_;
  std::atomic<std::uint64_t> refused_{0};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> channels_{0};
  oa::channel::WaitPolicy wait_policy_;
};

}  // namespace oaprof::daemon
