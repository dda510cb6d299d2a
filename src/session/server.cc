#include "session/server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "base/ignore_result.h"
#include "ipc/seqpacket.h"
#include "ipc/unix_address.h"

namespace oaprof::session {
namespace wire = ipc::wire;

namespace {

// A reply to a client that may have stopped reading: false when it must be hung up on.
bool send_message(int fd, const wire::Message& m) {
  return ipc::send_datagram_within(fd, wire::encode(m), kReplyTimeout);
}

bool is_abstract(const std::string& address) { return address.starts_with('@'); }

}  // namespace

std::string private_socket_address() {
  unsigned char random[16];
  std::size_t got = 0;
  while (got < sizeof random) {
    const ssize_t n = ::getrandom(random + got, sizeof random - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw std::runtime_error(fmt::format("getrandom: {}", std::strerror(errno)));
    }
    got += static_cast<std::size_t>(n);
  }
  std::string name = "@oaprof-";
  for (const unsigned char b : random) name += fmt::format("{:02x}", b);
  return name;
}

Server::Server(std::string path, Session& session, std::vector<uid_t> allowed_uids,
               std::size_t max_clients)
    : path_(std::move(path)),
      session_(session),
      allowed_(std::move(allowed_uids)),
      max_clients_(max_clients),
      wait_policy_(ipc::channel::wait_policy_from_env()) {
  sockaddr_un addr{};
  const socklen_t addr_len = ipc::unix_address(path_, addr);
  if (addr_len == 0) {
    throw std::runtime_error(fmt::format("socket address {} is empty or too long", path_));
  }
  listen_fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), addr_len) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    const int err = errno;
    if (listen_fd_ >= 0) ::close(listen_fd_);
    throw std::runtime_error(fmt::format("cannot listen on {}: {}", path_, std::strerror(err)));
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    const int err = errno;
    ::close(listen_fd_);
    if (!is_abstract(path_)) ::unlink(path_.c_str());
    throw std::runtime_error(fmt::format("eventfd: {}", std::strerror(err)));
  }
}

Server::~Server() {
  stop();
  for (auto* clients : {&clients_, &closing_}) {
    for (auto& [fd, client] : *clients) {
      client.channel.reset();
      ::close(fd);
    }
  }
  ::close(listen_fd_);
  ::close(wake_fd_);
  if (!is_abstract(path_)) ::unlink(path_.c_str());
}

void Server::start() {
  thread_ = std::thread([this] { loop(); });
}

void Server::stop() {
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  base::ignore_result(::write(wake_fd_, &one, sizeof one));
  thread_.join();
}

void Server::loop() {
  for (;;) {
    std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const auto& [fd, client] : clients_) fds.push_back({fd, POLLIN, 0});
    // A dropped client's channel ends on its own, soon: look again shortly to forget the client.
    if (::poll(fds.data(), fds.size(), closing_.empty() ? -1 : 10) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) return drain_at_stop();
    if (fds[1].revents & POLLIN) accept_client();
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto it = clients_.find(fds[i].fd);
      if (it == clients_.end()) continue;
      if (serve_one(fds[i].fd, it->second) == Served::kGone) drop_client(fds[i].fd);
    }
    reap_closed_channels();
  }
}

void Server::drain_at_stop() {
  // Requests already queued are still answered, so a client mid-launch is not left hanging; a
  // bounded number, as a client can go on sending.
  for (auto& [fd, client] : clients_) {
    if (client.channel) client.channel->request_stop();
    for (int n = 0; n < kMaxAnsweredAtStop && serve_one(fd, client) == Served::kMessage; ++n) {
    }
  }
  for (auto* clients : {&clients_, &closing_}) {
    for (auto& [fd, client] : *clients) {
      if (client.channel) client.channel->stop();  // each bounded (ChannelServer::kMaxDrained)
    }
  }
}

void Server::accept_client() {
  const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  const std::optional<ucred> peer = ipc::peer_credentials(fd);
  if (!peer) {
    ::close(fd);
    return;
  }
  const ucred cred = *peer;
  if (clients_.size() >= max_clients_) {
    ++refused_;
    ipc::refuse_and_close(fd,
                          wire::encode({0, wire::Error{wire::ErrorCode::kBusy,
                                                       fmt::format("this oaprof run serves at most "
                                                                   "{} connections at once; the "
                                                                   "process runs unprofiled",
                                                                   max_clients_)}}));
    return;
  }
  const bool allowed =
      cred.uid == 0 || std::find(allowed_.begin(), allowed_.end(), cred.uid) != allowed_.end();
  if (!allowed) {
    ++refused_;
    // kNotAuthorised, as oaprofd says it: the client can tell a refusal from its own bad bytes.
    ipc::refuse_and_close(
        fd, wire::encode({0, wire::Error{wire::ErrorCode::kNotAuthorised,
                                         fmt::format("uid {} may not use this oaprof session: only "
                                                     "root and the user oaprof runs the program as "
                                                     "may; run the program under that oaprof",
                                                     cred.uid)}}));
    return;
  }
  clients_[fd] = Client{next_client_++, cred.pid, cred.uid, nullptr};
}

void Server::drop_client(int fd) {
  auto it = clients_.find(fd);
  if (it == clients_.end()) return;
  // A program that posts its last launch record and exits leaves the record in the ring: the
  // channel answers it before the session hears the client is gone. Only asked here, not waited
  // for: a client that keeps refilling its ring would hold this loop, and the whole run, with it.
  if (it->second.channel) {
    it->second.channel->request_stop();
    closing_.insert(clients_.extract(it));  // the node moves: the channel's `client` stays put
    return;
  }
  session_.client_gone(it->second.id);
  ::close(fd);
  clients_.erase(it);
}

void Server::reap_closed_channels() {
  ipc::reap_finished_channels(closing_, [this](int fd, const Client& client) {
    session_.client_gone(client.id);
    ::close(fd);
  });
}

Server::Answer Server::answer(const Client& client, std::span<const std::uint8_t> bytes) {
  auto decoded = wire::decode(bytes);
  if (auto* err = std::get_if<wire::DecodeError>(&decoded)) {
    ++rejected_;
    return {{err->request_id, wire::Error{err->code, err->reason}}};
  }
  const auto& msg = std::get<wire::Message>(decoded);
  Answer a{{msg.request_id, {}}};
  {
    std::lock_guard turn(turn_);
    a.reply.body = session_.handle(client.id, static_cast<std::uint32_t>(client.pid), msg.body);
  }
  const auto* hello = std::get_if<wire::Hello>(&msg.body);
  const bool ok = std::holds_alternative<wire::Ok>(a.reply.body);
  a.wants_channel =
      hello != nullptr && (hello->flags & ipc::channel::kHelloWantsChannel) != 0 && ok;
  a.launch_errors_only =
      a.wants_channel && (hello->flags & ipc::channel::kHelloLaunchErrorsOnly) != 0;
  a.launch_accepted = ok && std::holds_alternative<wire::Launch>(msg.body);
  return a;
}

bool Server::offer_channel(int fd, Client& client, const wire::Message& ok) {
  std::string error;
  const std::uint64_t id = client.id;
  client.channel = ipc::ChannelServer::create(
      [this, &client](std::span<const std::uint8_t> bytes) {
        const Answer a = answer(client, bytes);
        // No reply for an accepted record: the layer would only read and discard it.
        if (a.launch_accepted && client.launch_errors_only) return std::vector<std::uint8_t>{};
        return wire::encode(a.reply);
      },
      [this, id] { session_.settle(id); }, fd, wait_policy_, error);
  // Counted before the reply goes: the client may act on it at once.
  if (client.channel) ++channels_;
  // Without a channel (the kernel refused a memfd), the plain reply keeps the client on the socket.
  if (!client.channel || !ipc::channel::send_with_fd(fd, wire::encode(ok), client.channel->fd())) {
    if (client.channel) --channels_;
    client.channel.reset();
    return send_message(fd, ok);
  }
  client.channel->close_fd();  // the client holds its own copy now
  return true;
}

Server::Served Server::serve_one(int fd, Client& client) {
  std::uint8_t buf[wire::kMaxMessageBytes];
  std::size_t n = 0;
  switch (ipc::receive_datagram(fd, buf, &n)) {
    case ipc::Receive::kGone:
      return Served::kGone;
    case ipc::Receive::kNothing:
      return Served::kNothing;
    case ipc::Receive::kDatagram:
      break;
  }
  bool sent = false;
  if (n > sizeof buf) {
    ++rejected_;
    sent = send_message(fd, ipc::oversized_reply(n));
  } else {
    const Answer a = answer(client, std::span<const std::uint8_t>(buf, n));
    // Before the channel's thread starts, which reads it.
    if (a.wants_channel && !client.channel) client.launch_errors_only = a.launch_errors_only;
    sent = a.wants_channel && !client.channel ? offer_channel(fd, client, a.reply)
                                              : send_message(fd, a.reply);
    session_.settle(client.id);  // the energy reading and the like, once the client can go on
  }
  if (!sent) {
    ++dropped_;  // a reply is never lost while the client goes on as if it had one
    return Served::kGone;
  }
  return Served::kMessage;
}

}  // namespace oaprof::session
