#include "daemon/oaprofd.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "daemon/seqpacket.h"

namespace oaprof::daemon {
namespace wire = oa::wire;

namespace {

sockaddr_un socket_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    throw std::runtime_error(fmt::format("socket path {} is too long (at most {} bytes)", path,
                                         sizeof addr.sun_path - 1));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

std::vector<gid_t> peer_groups(int fd) {
  std::vector<gid_t> groups(64);
  for (;;) {
    auto len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
      groups.resize(len / sizeof(gid_t));
      return groups;
    }
    if (errno != ERANGE || groups.size() >= 65536) return {};
    groups.resize(std::max<std::size_t>(groups.size() * 2, len / sizeof(gid_t)));
  }
}

}  // namespace

std::optional<std::string> refusal(const Peer& peer, std::span<const gid_t> groups,
                                   std::optional<gid_t> group, const std::string& group_name) {
  if (peer.uid == 0) return std::nullopt;
  if (group && (peer.gid == *group || std::find(groups.begin(), groups.end(), *group) !=
                                          groups.end())) {
    return std::nullopt;
  }
  return fmt::format(
      "uid {} may not use oaprofd: only root and members of the group '{}' may; add the user "
      "with `sudo usermod -aG {} USER` and log in again, or run `sudo oaprof ...`{}",
      peer.uid, group_name, group_name,
      group ? "" : fmt::format(" (group '{}' does not exist on this system)", group_name));
}

Oaprofd::Oaprofd(DaemonService& service, OaprofdOptions options)
    : service_(service), options_(std::move(options)) {
  if (options_.listen_fd >= 0) {
    listen_fd_ = options_.listen_fd;
  } else {
    const sockaddr_un addr = socket_address(options_.socket_path);
    struct stat st {};
    if (::lstat(options_.socket_path.c_str(), &st) == 0) {
      const int probe = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
      const bool live = probe >= 0 && ::connect(probe, reinterpret_cast<const sockaddr*>(&addr),
                                                sizeof addr) == 0;
      if (probe >= 0) ::close(probe);
      if (live) {
        throw std::runtime_error(fmt::format(
            "another oaprofd already answers on {}; stop it first (systemctl stop oaprofd)",
            options_.socket_path));
      }
      if (!S_ISSOCK(st.st_mode)) {
        throw std::runtime_error(fmt::format("{} exists and is not a socket; remove it or give "
                                             "another --socket", options_.socket_path));
      }
      ::unlink(options_.socket_path.c_str());
    }
    listen_fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    // Created 0600 and opened up to the group only once it is the group's.
    const mode_t old_mask = ::umask(0177);
    const bool ok = listen_fd_ >= 0 &&
                    ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    const int err = errno;
    ::umask(old_mask);
    if (!ok) {
      if (listen_fd_ >= 0) ::close(listen_fd_);
      throw std::runtime_error(
          fmt::format("cannot bind {}: {}", options_.socket_path, std::strerror(err)));
    }
    bound_ = true;
    if (options_.group) {
      // Opened to the group only once it is the group's: a failed chown leaves it root's alone.
      const char* failed = nullptr;
      int failure = 0;
      if (::chown(options_.socket_path.c_str(), static_cast<uid_t>(-1), *options_.group) != 0) {
        failed = "chown";
        failure = errno;
      } else if (::chmod(options_.socket_path.c_str(), 0660) != 0) {
        failed = "chmod 0660";
        failure = errno;
      }
      if (failed != nullptr && options_.log) {
        options_.log(4, fmt::format(
            "cannot give the socket {} to the group '{}' (gid {}): {} failed: {}; it stays mode "
            "0600, so only root can connect and members of '{}' are refused. Run oaprofd as "
            "root where that group exists (not in a user namespace without it), or let systemd "
            "create the socket (oaprofd.socket, SocketGroup={})",
            options_.socket_path, options_.group_name, *options_.group, failed,
            std::strerror(failure), options_.group_name, options_.group_name));
      }
    }
  }
  if (::listen(listen_fd_, 16) != 0) {
    const int err = errno;
    if (bound_) ::unlink(options_.socket_path.c_str());
    if (options_.listen_fd < 0) ::close(listen_fd_);
    throw std::runtime_error(
        fmt::format("cannot listen on {}: {}", options_.socket_path, std::strerror(err)));
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    const int err = errno;
    if (bound_) ::unlink(options_.socket_path.c_str());
    ::close(listen_fd_);
    throw std::runtime_error(fmt::format("eventfd: {}", std::strerror(err)));
  }
}

Oaprofd::~Oaprofd() {
  for (const auto& [fd, client] : clients_) ::close(fd);
  ::close(listen_fd_);
  ::close(wake_fd_);
  if (bound_) ::unlink(options_.socket_path.c_str());
}

void Oaprofd::request_stop() {
  const std::uint64_t one = 1;
  (void)::write(wake_fd_, &one, sizeof one);
}

void Oaprofd::run() {
  for (;;) {
    std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const auto& [fd, client] : clients_) fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) accept_client();
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto it = clients_.find(fds[i].fd);
      if (it == clients_.end()) continue;
      if (!serve_one(fds[i].fd, it->second)) {
        service_.client_gone(it->second.id);
        ::close(fds[i].fd);
        clients_.erase(it);
      }
    }
  }
  service_.close_session();
}

void Oaprofd::accept_client() {
  const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  const std::optional<ucred> cred = peer_credentials(fd);
  if (!cred) {
    ::close(fd);
    return;
  }
  const Peer peer{cred->uid, cred->gid, cred->pid};
  const std::vector<gid_t> groups = peer_groups(fd);
  if (auto why = refusal(peer, groups, options_.group, options_.group_name)) {
    ++refused_;
    send_datagram(fd, wire::encode({0, wire::Error{wire::ErrorCode::kNotAuthorised, *why}}));
    ::close(fd);
    return;
  }
  clients_[fd] = Client{next_client_++, peer};
}

bool Oaprofd::serve_one(int fd, const Client& client) {
  std::uint8_t buf[wire::kMaxMessageBytes];
  std::size_t n = 0;
  switch (receive_datagram(fd, buf, &n)) {
    case Receive::kGone: return false;
    case Receive::kNothing: return true;
    case Receive::kDatagram: break;
  }
  send_datagram(fd, n > sizeof buf ? wire::encode(oversized_reply(n))
                                   : service_.handle(client.id, client.peer,
                                                     std::span<const std::uint8_t>(buf, n)));
  return true;
}

}  // namespace oaprof::daemon
