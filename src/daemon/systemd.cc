#include "daemon/systemd.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <charconv>
#include <cstddef>
#include <cstring>

namespace oaprof::daemon {
namespace {

std::optional<long> number(const std::map<std::string, std::string>& env, const char* key) {
  auto it = env.find(key);
  if (it == env.end()) return std::nullopt;
  long v = 0;
  const auto& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<int> activated_socket(const std::map<std::string, std::string>& env, int pid) {
  const auto listen_pid = number(env, "LISTEN_PID");
  const auto listen_fds = number(env, "LISTEN_FDS");
  if (!listen_pid || !listen_fds || *listen_pid != pid || *listen_fds < 1) return std::nullopt;
  return kListenFdsStart;
}

bool notify_systemd(std::string_view notify_socket, std::string_view state) {
  if (notify_socket.empty()) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (notify_socket.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, notify_socket.data(), notify_socket.size());
  if (notify_socket.front() == '@') addr.sun_path[0] = '\0';
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + notify_socket.size() +
                                          (notify_socket.front() == '@' ? 0 : 1));
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const ssize_t n = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                             reinterpret_cast<const sockaddr*>(&addr), len);
  ::close(fd);
  return n == static_cast<ssize_t>(state.size());
}

}  // namespace oaprof::daemon
