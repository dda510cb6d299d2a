#include "daemon/seqpacket.h"

#include <cerrno>

#include <fmt/format.h>

namespace oaprof::daemon {

std::optional<ucred> peer_credentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
  return cred;
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

oa::wire::Message oversized_reply(std::size_t size) {
  return {0, oa::wire::Error{oa::wire::ErrorCode::kBadMessage,
                             fmt::format("message of {} bytes exceeds the {}-byte limit", size,
                                         oa::wire::kMaxMessageBytes)}};
}

void send_datagram(int fd, std::span<const std::uint8_t> bytes) {
  (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace oaprof::daemon
