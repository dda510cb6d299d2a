#include "ipc/seqpacket.h"

#include <poll.h>

#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace oaprof::ipc {

std::optional<ucred> peer_credentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
  return cred;
}

std::string untrusted_server(int fd) {
  const std::optional<ucred> peer = peer_credentials(fd);
  if (!peer) return "the kernel does not say who serves the socket";
  if (peer->uid == 0 || peer->uid == ::geteuid()) return {};
  return fmt::format("the socket is served by uid {} (pid {}), neither root nor uid {}", peer->uid,
                     peer->pid, ::geteuid());
}

Receive receive_datagram(int fd, std::span<std::uint8_t> buf, std::size_t* size) {
  const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT | MSG_TRUNC);
  if (n == 0) return Receive::kGone;
  if (n < 0) {
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Receive::kNothing
                                                                     : Receive::kGone;
  }
  *size = static_cast<std::size_t>(n);
  return Receive::kDatagram;
}

ipc::wire::Message oversized_reply(std::size_t size) {
  return {0, ipc::wire::Error{ipc::wire::ErrorCode::kBadMessage,
                              fmt::format("message of {} bytes exceeds the {}-byte limit", size,
                                          ipc::wire::kMaxMessageBytes)}};
}

void refuse_and_close(int fd, std::span<const std::uint8_t> reply) {
  (void)send_datagram(fd, reply);
  std::uint8_t sink[ipc::wire::kMaxMessageBytes];
  for (int i = 0; i < 16 && ::recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; ++i) {
  }
  ::close(fd);
}

Sent send_datagram(int fd, std::span<const std::uint8_t> bytes) {
  ssize_t n;
  do {
    n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(bytes.size())) return Sent::kSent;
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? Sent::kWouldBlock : Sent::kGone;
}

bool send_datagram_within(int fd, std::span<const std::uint8_t> bytes,
                          std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    switch (send_datagram(fd, bytes)) {
      case Sent::kSent:
        return true;
      case Sent::kGone:
        return false;
      case Sent::kWouldBlock:
        break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) return false;
  }
}

}  // namespace oaprof::ipc
