// The layer's end of the socket to the privileged side: blocking request/reply over
// SOCK_SEQPACKET with a receive timeout, so a stuck privileged side can delay the profiled
// program but never hang it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "oa/wire.h"

namespace oaprof::launch {

class Client {
 public:
  // nullptr and `error` set when the socket cannot be reached.
  static std::unique_ptr<Client> connect(const std::string& path, std::string& error,
                                         int timeout_ms = 10000);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends one request and waits for its reply. True on kOk; false with `error` set otherwise.
  // Replies to earlier post()s that arrive first are read on the way.
  bool call(const oa::wire::Body& request, std::string& error);
  // Sends one request without waiting for its reply, which a later call() reads: for requests
  // whose timing does not matter (the launch record), one round trip fewer per launch. False with
  // `error` set when the send itself failed.
  bool post(const oa::wire::Body& request, std::string& error);
  // The first error reply to a post() seen so far, cleared by reading it; empty when none.
  std::string take_post_error();

 private:
  explicit Client(int fd) : fd_(fd) {}
  bool send(const oa::wire::Body& request, std::uint32_t id, std::string& error);

  int fd_;
  std::uint32_t next_id_ = 1;
  std::string post_error_;
};

}  // namespace oaprof::launch
