#include "daemon/oaprofd.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "base/ignore_result.h"
#include "ipc/seqpacket.h"

namespace oaprof::daemon {
namespace wire = ipc::wire;

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
  if (group &&
      (peer.gid == *group || std::find(groups.begin(), groups.end(), *group) != groups.end())) {
    return std::nullopt;
  }
  return fmt::format(
      "uid {} may not use oaprofd: only root and members of the group '{}' may; add the user "
      "with `sudo usermod -aG {} USER` and log in again, or run `sudo oaprof ...`{}",
      peer.uid, group_name, group_name,
      group ? "" : fmt::format(" (group '{}' does not exist on this system)", group_name));
}

Oaprofd::Oaprofd(DaemonService& service, OaprofdOptions options)
    : service_(service),
      channel_policy_(ipc::channel::wait_policy_from_env()),
      options_(std::move(options)) {
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
        throw std::runtime_error(
            fmt::format("{} exists and is not a socket; remove it or give "
                        "another --socket",
                        options_.socket_path));
      }
      ::unlink(options_.socket_path.c_str());
    }
    bind_socket(addr);
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
  stop_all_channels();  // before their sockets close: a channel may still shut its socket down
  for (const auto& [fd, client] : clients_) ::close(fd);
  for (const auto& [fd, client] : closing_) ::close(fd);
  ::close(listen_fd_);
  ::close(wake_fd_);
  if (bound_) ::unlink(options_.socket_path.c_str());
}

// The socket is born with its final owner and mode: bound with the group as this thread's
// filesystem gid and a umask that leaves 0660 (0600, root only, when the group cannot be taken),
// so nothing is changed by path after the bind, where the path could be another file by then.
void Oaprofd::bind_socket(const sockaddr_un& addr) {
  listen_fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  const gid_t old_fsgid = static_cast<gid_t>(::setfsgid(options_.group.value_or(::getegid())));
  // setfsgid answers with the previous id whether or not it changed: ask again to see.
  const bool group_taken =
      options_.group && static_cast<gid_t>(::setfsgid(static_cast<gid_t>(-1))) == *options_.group;
  const mode_t old_mask = ::umask(group_taken ? 0117 : 0177);
  const bool ok = listen_fd_ >= 0 &&
                  ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  const int err = errno;
  ::umask(old_mask);
  (void)::setfsgid(old_fsgid);
  if (!ok) {
    if (listen_fd_ >= 0) ::close(listen_fd_);
    throw std::runtime_error(
        fmt::format("cannot bind {}: {}", options_.socket_path, std::strerror(err)));
  }
  bound_ = true;
  if (options_.group && !group_taken && options_.log) {
    options_.log(
        4,
        fmt::format(
            "cannot give the socket {} to the group '{}' (gid {}): the kernel refused that group "
            "as "
            "oaprofd's filesystem gid; it stays mode 0600, so only root can connect and members of "
            "'{}' are refused. Run oaprofd as root where that group exists (not in a user "
            "namespace "
            "without it), or let systemd create the socket (oaprofd.socket, SocketGroup={})",
            options_.socket_path, options_.group_name, *options_.group, options_.group_name,
            options_.group_name));
  }
}

void Oaprofd::request_stop() {
  const std::uint64_t one = 1;
  base::ignore_result(::write(wake_fd_, &one, sizeof one));
}

void Oaprofd::run() {
  auto next_tick = std::chrono::steady_clock::now();
  for (;;) {
    std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    // A client with a reply still queued is not read from until the reply has gone: it cannot
    // make the daemon hold more than one reply for it.
    for (const auto& [fd, client] : clients_) {
      fds.push_back({fd, static_cast<short>(client.pending.empty() ? POLLIN : POLLOUT), 0});
    }
    int timeout = poll_timeout_ms();
    // A dropped client's channel ends on its own, soon: look again shortly to close its socket.
    if (!closing_.empty()) timeout = timeout < 0 ? 10 : std::min(timeout, 10);
    if (tick_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          next_tick - std::chrono::steady_clock::now());
      const int until_tick =
          static_cast<int>(std::clamp<std::int64_t>(left.count() + 1, 0, 60'000));
      timeout = timeout < 0 ? until_tick : std::min(timeout, until_tick);
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) accept_client();
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto it = clients_.find(fds[i].fd);
      if (it == clients_.end()) continue;
      const bool alive = it->second.pending.empty() ? serve_one(fds[i].fd, it->second)
                                                    : send_pending(fds[i].fd, it->second);
      if (!alive) drop_client(it);
    }
    drop_clients_not_reading();
    reap_closed_channels();
    if (tick_ && std::chrono::steady_clock::now() >= next_tick) {
      {
        std::lock_guard lock(service_mu_);
        tick_();
      }
      next_tick = std::chrono::steady_clock::now() +
                  (tick_period_ ? tick_period_() : std::chrono::seconds(1));
    }
  }
  // The channels answer what their clients already queued (a bounded drain), then stop: none
  // uses the session after it is closed.
  stop_all_channels();
  std::lock_guard lock(service_mu_);
  service_.close_session();
}

void Oaprofd::stop_all_channels() {
  for (auto* clients : {&clients_, &closing_}) {
    for (auto& [fd, client] : *clients) {
      if (client.channel) client.channel->request_stop();
    }
  }
  for (auto* clients : {&clients_, &closing_}) {
    for (auto& [fd, client] : *clients) {
      if (client.channel) client.channel->stop();
    }
  }
}

// The session ends first, so the OA unit is free at once; the client's channel is only asked to
// stop. Waiting for it here would let a client that keeps refilling its ring after it hung up
// hold this loop, and with it every other client, the exporter and SIGTERM, for as long as it
// likes.
void Oaprofd::drop_client(std::map<int, Client>::iterator it) {
  {
    std::lock_guard lock(service_mu_);
    *it->second.gone = true;
    service_.client_gone(it->second.id);
  }
  if (!it->second.channel) {
    ::close(it->first);
    clients_.erase(it);
    return;
  }
  it->second.channel->request_stop();
  closing_.insert(clients_.extract(it));  // the node moves: the channel's thread sees no change
}

void Oaprofd::reap_closed_channels() {
  ipc::reap_finished_channels(closing_, [](int fd, const Client&) { ::close(fd); });
}

int Oaprofd::poll_timeout_ms() const {
  std::optional<std::chrono::steady_clock::time_point> first;
  for (const auto& [fd, client] : clients_) {
    if (!client.pending.empty() && (!first || client.stuck_since < *first)) {
      first = client.stuck_since;
    }
  }
  if (!first) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      *first + options_.reply_timeout - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count() + 1, 0, 60'000));
}

void Oaprofd::drop_clients_not_reading() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = clients_.begin(); it != clients_.end();) {
    const Client& c = it->second;
    if (c.pending.empty() || now - c.stuck_since < options_.reply_timeout) {
      ++it;
      continue;
    }
    ++dropped_;
    if (options_.log) {
      options_.log(4, fmt::format("hung up on uid {}, pid {}: it did not read its reply for {} ms "
                                  "(its session, if any, is ended and restored)",
                                  c.peer.uid, c.peer.pid, options_.reply_timeout.count()));
    }
    auto gone = it++;
    drop_client(gone);
  }
}

// Why this connection cannot be served, or nullopt when it can: the daemon's group, then the
// bounds on connections (all together, and one uid's).
std::optional<std::pair<wire::ErrorCode, std::string>> Oaprofd::admission(
    const Peer& peer, std::span<const gid_t> groups) const {
  if (auto why = refusal(peer, groups, options_.group, options_.group_name)) {
    return std::pair{wire::ErrorCode::kNotAuthorised, *why};
  }
  if (clients_.size() >= options_.max_clients) {
    return std::pair{wire::ErrorCode::kBusy,
                     fmt::format("busy: oaprofd serves at most {} connections at once; try again "
                                 "when other oaprof runs have ended",
                                 options_.max_clients)};
  }
  const auto same_uid = std::count_if(clients_.begin(), clients_.end(),
                                      [&](const auto& c) { return c.second.peer.uid == peer.uid; });
  if (static_cast<std::size_t>(same_uid) >= options_.max_clients_per_uid) {
    return std::pair{wire::ErrorCode::kBusy,
                     fmt::format("busy: uid {} already has {} connections to oaprofd, the most "
                                 "one user may hold; end some of its oaprof runs first",
                                 peer.uid, options_.max_clients_per_uid)};
  }
  return std::nullopt;
}

void Oaprofd::accept_client() {
  const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  const std::optional<ucred> cred = ipc::peer_credentials(fd);
  if (!cred) {
    ::close(fd);
    return;
  }
  const Peer peer{cred->uid, cred->gid, cred->pid, PeerProcess::of_socket(fd, cred->pid)};
  const std::vector<gid_t> groups = peer_groups(fd);
  if (const auto refused = admission(peer, groups)) {
    ++refused_;
    ipc::refuse_and_close(fd, wire::encode({0, wire::Error{refused->first, refused->second}}));
    return;
  }
  clients_[fd] = Client{next_client_++, peer, {}, {}, nullptr, std::make_shared<bool>(false)};
}

bool Oaprofd::send_or_queue(int fd, Client& client, std::vector<std::uint8_t> reply) {
  switch (ipc::send_datagram(fd, reply)) {
    case ipc::Sent::kSent:
      return true;
    case ipc::Sent::kGone:
      return false;
    case ipc::Sent::kWouldBlock:
      break;
  }
  client.pending.push_back(std::move(reply));
  client.stuck_since = std::chrono::steady_clock::now();
  return true;
}

bool Oaprofd::send_pending(int fd, Client& client) {
  while (!client.pending.empty()) {
    switch (ipc::send_datagram(fd, client.pending.front())) {
      case ipc::Sent::kGone:
        return false;
      case ipc::Sent::kWouldBlock:
        return true;  // still stuck since the first try
      case ipc::Sent::kSent:
        break;
    }
    client.pending.pop_front();
    client.stuck_since = std::chrono::steady_clock::now();
  }
  return true;
}

std::vector<std::uint8_t> Oaprofd::answer(std::uint64_t client_id, const Peer& peer,
                                          const bool& gone, std::span<const std::uint8_t> bytes) {
  std::lock_guard lock(service_mu_);
  if (gone) {
    // Nobody reads this: the connection has closed. Only the service must not act on it.
    return wire::encode(
        {0, wire::Error{wire::ErrorCode::kNoSession, "this connection has been closed"}});
  }
  return service_.handle(client_id, peer, bytes);
}

namespace {

// A hello whose flags ask for the shared-memory channel.
bool asks_for_channel(std::span<const std::uint8_t> bytes) {
  const auto decoded = wire::decode(bytes);
  const auto* msg = std::get_if<wire::Message>(&decoded);
  const auto* hello = msg != nullptr ? std::get_if<wire::Hello>(&msg->body) : nullptr;
  return hello != nullptr && (hello->flags & ipc::channel::kHelloWantsChannel) != 0;
}

bool is_ok(std::span<const std::uint8_t> reply) {
  const auto decoded = wire::decode(reply);
  const auto* msg = std::get_if<wire::Message>(&decoded);
  return msg != nullptr && std::holds_alternative<wire::Ok>(msg->body);
}

}  // namespace

bool Oaprofd::offer_channel(int fd, Client& client, const std::vector<std::uint8_t>& reply) {
  std::string error;
  const std::uint64_t id = client.id;
  const Peer peer = client.peer;
  client.channel = ipc::ChannelServer::create(
      [this, id, peer, gone = client.gone](std::span<const std::uint8_t> bytes) {
        return answer(id, peer, *gone, bytes);
      },
      [] {}, fd, channel_policy_, error);
  if (client.channel && ipc::channel::send_with_fd(fd, reply, client.channel->fd())) {
    client.channel->close_fd();  // the client holds its own copy now
    return true;
  }
  if (!client.channel && options_.log) {
    options_.log(4,
                 fmt::format("uid {}, pid {} stays on the socket: {}", peer.uid, peer.pid, error));
  }
  client.channel.reset();
  return send_or_queue(fd, client, reply);
}

bool Oaprofd::serve_one(int fd, Client& client) {
  std::uint8_t buf[wire::kMaxMessageBytes];
  std::size_t n = 0;
  switch (ipc::receive_datagram(fd, buf, &n)) {
    case ipc::Receive::kGone:
      return false;
    case ipc::Receive::kNothing:
      return true;
    case ipc::Receive::kDatagram:
      break;
  }
  if (n > sizeof buf) return send_or_queue(fd, client, wire::encode(ipc::oversized_reply(n)));
  const std::span<const std::uint8_t> request(buf, n);
  std::vector<std::uint8_t> reply = answer(client.id, client.peer, *client.gone, request);
  if (options_.channels && !client.channel && asks_for_channel(request) && is_ok(reply)) {
    return offer_channel(fd, client, reply);
  }
  return send_or_queue(fd, client, std::move(reply));
}

}  // namespace oaprof::daemon
