#include "launch/client.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <variant>

namespace oaprof::launch {
namespace wire = oa::wire;

std::unique_ptr<Client> Client::connect(const std::string& path, std::string& error,
                                        int timeout_ms) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    error = "socket path '" + path + "' is empty or too long";
    return nullptr;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return nullptr;
  }
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    error = "cannot connect to " + path + ": " + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<Client>(new Client(fd));
}

Client::~Client() { ::close(fd_); }

bool Client::send(const wire::Body& request, std::uint32_t id, std::string& error) {
  const auto bytes = wire::encode({id, request});
  if (::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(bytes.size())) {
    error = std::string("send: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool Client::post(const wire::Body& request, std::string& error) {
  return send(request, next_id_++, error);
}

std::string Client::take_post_error() { return std::exchange(post_error_, {}); }

bool Client::call(const wire::Body& request, std::string& error) {
  const std::uint32_t id = next_id_++;
  if (!send(request, id, error)) return false;
  std::uint8_t buf[wire::kMaxMessageBytes];
  for (;;) {
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n == 0 ? "the privileged side closed the connection"
                     : std::string("no reply: ") + std::strerror(errno);
      return false;
    }
    auto decoded = wire::decode({buf, static_cast<std::size_t>(n)});
    if (auto* bad = std::get_if<wire::DecodeError>(&decoded)) {
      error = "unreadable reply: " + bad->reason;
      return false;
    }
    const auto& reply = std::get<wire::Message>(decoded);
    if (reply.request_id != id && reply.request_id != 0) {
      // A reply to a post(), or a late one to a timed-out call.
      const auto* e = std::get_if<wire::Error>(&reply.body);
      if (e != nullptr && post_error_.empty()) post_error_ = e->message;
      continue;
    }
    if (std::holds_alternative<wire::Ok>(reply.body)) return true;
    if (const auto* e = std::get_if<wire::Error>(&reply.body)) {
      error = e->message;
      return false;
    }
    error = "unexpected reply type";
    return false;
  }
}

}  // namespace oaprof::launch
