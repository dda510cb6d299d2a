// The layer's end of the connection to the privileged side: request/reply with ids, over the
// SOCK_SEQPACKET socket or, once the hello has brought one, over the shared-memory channel
// (ipc/shm_channel.h) that avoids a system call and a wake-up per message. Every wait is bounded
// (the receive timeout), so a stuck privileged side can delay the profiled program but never
// hang it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ipc/shm_channel.h"
#include "ipc/wire.h"

namespace oaprof::ipc {

class Client {
 public:
  // `address` is a path or "@name" (abstract, as oaprof's run socket is: ipc/unix_address.h).
  // nullptr and `error` set when the socket cannot be reached. `policy`: how to wait on the
  // shared-memory channel, given by the caller (who reads OAPROF_SPIN_US) rather than read here,
  // so the layer's configuration is read in one place.
  static std::unique_ptr<Client> connect(const std::string& address, std::string& error,
                                         int timeout_ms = 10000, channel::WaitPolicy policy = {});
  // The same for a socket already connected (`fd`, which the Client then owns).
  static std::unique_ptr<Client> adopt(int fd, int timeout_ms, channel::WaitPolicy policy = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Says hello for process `pid` and asks for a shared-memory channel (`want_channel`). True on
  // kOk; the channel is used from then on when the privileged side handed one over.
  // `refusal`, when given, gets the error reply that refused it (a connection refused at
  // accept: not authorised, busy). `launch_errors_only`: launch records only ever go through
  // post(), so a privileged side may leave out their kOk on the channel
  // (channel::kHelloLaunchErrorsOnly); call() then refuses a launch record.
  bool hello(std::uint32_t pid, bool want_channel, std::string& error,
             ipc::wire::Error* refusal = nullptr, bool launch_errors_only = false);
  bool has_channel() const { return channel_ != nullptr; }

  // Sends one request and waits for its reply. True on kOk; false with `error` set otherwise.
  // Replies to earlier post()s that arrive first are read on the way.
  bool call(const ipc::wire::Body& request, std::string& error);
  // The same, for requests whose reply carries more than kOk: true when a reply came (an
  // error reply among them, in `reply`); false with `error` set when none could.
  bool exchange(const ipc::wire::Body& request, ipc::wire::Body& reply, std::string& error);
  // Sends one request without waiting for its reply, which a later call() reads: for requests
  // whose timing does not matter (the launch record), one round trip fewer per launch. False with
  // `error` set when the send itself failed.
  bool post(const ipc::wire::Body& request, std::string& error);
  // post(), where the channel's ring has room; where it is full, kFull at once with nothing
  // sent (the caller keeps the request for later) rather than a wait for the privileged side to
  // take one. On the socket, post() itself.
  enum class Posted { kSent, kFull, kFailed };
  Posted post_if_room(const ipc::wire::Body& request, std::string& error);
  // The first error reply to a post() seen so far, cleared by reading it; empty when none.
  std::string take_post_error();
  // Reads the replies that have already arrived, without waiting: for a client that only
  // posts (sampled attribution), whose replies no call() would read. False with `error` set
  // when the channel or the socket broke.
  bool read_arrived_replies(std::string& error);

 private:
  Client(int fd, int timeout_ms, channel::WaitPolicy policy);
  bool send(const ipc::wire::Body& request, std::uint32_t id, std::string& error);
  // The next reply, from the channel or the socket, decoded into `reply`.
  bool receive(std::vector<std::uint8_t>& buf, ipc::wire::Message& reply, std::string& error);
  bool receive_from_channel(std::vector<std::uint8_t>& buf, std::size_t* size, std::string& error);
  bool peer_hung_up() const;
  // Keeps the first error among replies to post()s.
  void note_post_reply(const ipc::wire::Message& reply);
  // Runs a ring operation until `attempt` succeeds, with `wait` for the other side between tries;
  // a corrupt ring, a peer that hung up or the receive timeout ends it with `error` set
  // (`timeout_error` for the last).
  template <class Attempt, class Wait>
  bool retry_on_ring(Attempt attempt, Wait wait, const char* timeout_error, std::string& error);
  // Takes the mapping passed with the hello's reply; false (and no channel) when it is unusable.
  bool attach_channel(int fd);

  int fd_;
  int timeout_ms_;
  channel::WaitPolicy policy_;
  std::uint32_t next_id_ = 1;
  std::string post_error_;
  bool launch_errors_only_ = false;  // asked for in the hello: a launch record gets no kOk
  std::vector<std::uint8_t> buf_;    // one reply at a time
  struct Channel;
  std::unique_ptr<Channel> channel_;
};

}  // namespace oaprof::ipc
