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
  bool call(const oa::wire::Body& request, std::string& error);

 private:
  explicit Client(int fd) : fd_(fd) {}
  int fd_;
  std::uint32_t next_id_ = 1;
};

}  // namespace oaprof::launch
