#include "daemon/seqpacket.h"

#include <cerrno>
#include <cstring>

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

bool send_datagram_with_fd(int fd, std::span<const std::uint8_t> bytes, int pass_fd) {
  iovec iov{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  return ::sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) == static_cast<ssize_t>(bytes.size());
}

}  // namespace oaprof::daemon
