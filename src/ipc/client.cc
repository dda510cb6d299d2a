#include "ipc/client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <variant>

#include "ipc/seqpacket.h"
#include "ipc/unix_address.h"

namespace oaprof::ipc {

struct Client::Channel {
  void* mapping = nullptr;
  channel::ChannelLayout* layout = nullptr;
  channel::Producer out;
  channel::Consumer in;
  channel::WaitPolicy policy;

  Channel(void* m, channel::ChannelLayout* l, const channel::WaitPolicy& p)
      : mapping(m),
        layout(l),
        out(l->to_server, l->to_server_slots),
        in(l->to_client, l->to_client_slots),
        policy(p) {}
  ~Channel() { ::munmap(mapping, channel::kChannelBytes); }
};

std::unique_ptr<Client> Client::connect(const std::string& address, std::string& error,
                                        int timeout_ms, channel::WaitPolicy policy) {
  sockaddr_un addr{};
  const socklen_t addr_len = ipc::unix_address(address, addr);
  if (addr_len == 0) {
    error = "socket address '" + address + "' is empty or too long";
    return nullptr;
  }
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return nullptr;
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), addr_len) != 0) {
    error = "cannot connect to " + address + ": " + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  if (const std::string why = untrusted_server(fd); !why.empty()) {
    error = "will not talk to " + address + ": " + why;
    ::close(fd);
    return nullptr;
  }
  return adopt(fd, timeout_ms, policy);
}

std::unique_ptr<Client> Client::adopt(int fd, int timeout_ms, channel::WaitPolicy policy) {
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return std::unique_ptr<Client>(new Client(fd, timeout_ms, policy));
}

Client::Client(int fd, int timeout_ms, channel::WaitPolicy policy)
    : fd_(fd), timeout_ms_(timeout_ms), policy_(policy), buf_(wire::kMaxMessageBytes) {}

Client::~Client() {
  channel_.reset();
  ::close(fd_);
}

// A mapping the other side can shrink would kill this process with SIGBUS at the next access
// past its new end: only a memfd sealed against shrinking and growing (as ChannelServer makes
// it) is mapped.
namespace {
bool sealed_against_resizing(int fd) {
  const int seals = ::fcntl(fd, F_GET_SEALS);
  return seals >= 0 && (seals & F_SEAL_SHRINK) != 0 && (seals & F_SEAL_GROW) != 0;
}
}  // namespace

bool Client::attach_channel(int fd) {
  struct stat st {};
  void* m = MAP_FAILED;
  if (sealed_against_resizing(fd) && ::fstat(fd, &st) == 0 &&
      static_cast<std::size_t>(st.st_size) >= channel::kChannelBytes) {
    m = ::mmap(nullptr, channel::kChannelBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  ::close(fd);  // the mapping stays
  if (m == MAP_FAILED) return false;
  channel::ChannelLayout* layout = channel::attach(m, channel::kChannelBytes);
  if (layout == nullptr) {
    ::munmap(m, channel::kChannelBytes);
    return false;
  }
  channel_ = std::make_unique<Channel>(m, layout, policy_);
  return true;
}

bool Client::hello(std::uint32_t pid, bool want_channel, std::string& error, wire::Error* refusal,
                   bool launch_errors_only) {
  const std::uint32_t id = next_id_++;
  std::uint32_t flags = 0;
  if (want_channel) flags |= channel::kHelloWantsChannel;
  if (want_channel && launch_errors_only) flags |= channel::kHelloLaunchErrorsOnly;
  if (!send(wire::Hello{pid, flags}, id, error)) return false;
  launch_errors_only_ = (flags & channel::kHelloLaunchErrorsOnly) != 0;
  std::vector<std::uint8_t>& buf = buf_;
  int passed = -1;
  const long n = channel::receive_with_fd(fd_, buf, &passed);
  if (n <= 0) {
    if (passed >= 0) ::close(passed);
    error = n == 0 ? "the privileged side closed the connection"
                   : std::string("no reply: ") + std::strerror(errno);
    return false;
  }
  auto decoded = wire::decode({buf.data(), static_cast<std::size_t>(n)});
  const auto* reply = std::get_if<wire::Message>(&decoded);
  if (reply == nullptr || reply->request_id != id ||
      !std::holds_alternative<wire::Ok>(reply->body)) {
    if (passed >= 0) ::close(passed);
    const auto* e = reply != nullptr ? std::get_if<wire::Error>(&reply->body) : nullptr;
    error = e != nullptr ? e->message : "unexpected reply to hello";
    if (e != nullptr && refusal != nullptr) *refusal = *e;
    return false;
  }
  // Without a usable mapping the socket serves: slower, never wrong.
  if (passed >= 0 && want_channel) {
    (void)attach_channel(passed);
  } else if (passed >= 0) {
    ::close(passed);
  }
  return true;
}

bool Client::send(const wire::Body& request, std::uint32_t id, std::string& error) {
  const auto bytes = wire::encode({id, request});
  if (channel_) {
    // While the ring is full, the replies that have come are read: a privileged side waiting
    // for room for them takes no more requests. This message's own reply cannot be among them.
    std::string drain_error;
    return retry_on_ring([&] { return channel_->out.try_push(bytes); },
                         [&] {
                           (void)read_arrived_replies(drain_error);
                           return channel_->out.wait_for_room(channel_->policy);
                         },
                         "the privileged side takes no more requests", error);
  }
  if (::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(bytes.size())) {
    error = std::string("send: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool Client::post(const wire::Body& request, std::string& error) {
  return send(request, next_id_++, error);
}

Client::Posted Client::post_if_room(const wire::Body& request, std::string& error) {
  if (!channel_) return post(request, error) ? Posted::kSent : Posted::kFailed;
  switch (channel_->out.try_push(wire::encode({next_id_, request}))) {
    case channel::RingStatus::kOk:
      ++next_id_;
      return Posted::kSent;
    case channel::RingStatus::kFull:
      return Posted::kFull;
    default:
      error = "the channel to the privileged side is corrupt";
      return Posted::kFailed;
  }
}

std::string Client::take_post_error() { return std::exchange(post_error_, {}); }

void Client::note_post_reply(const wire::Message& reply) {
  const auto* e = std::get_if<wire::Error>(&reply.body);
  if (e != nullptr && post_error_.empty()) post_error_ = e->message;
}

bool Client::read_arrived_replies(std::string& error) {
  for (;;) {
    std::size_t n = 0;
    if (channel_) {
      const channel::RingStatus st = channel_->in.try_pop(buf_, &n);
      if (st == channel::RingStatus::kEmpty) return true;
      if (st == channel::RingStatus::kCorrupt) {
        error = "the channel to the privileged side is corrupt";
        return false;
      }
    } else {
      const ssize_t got = ::recv(fd_, buf_.data(), buf_.size(), MSG_DONTWAIT);
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
      if (got <= 0) {
        error = got == 0 ? "the privileged side closed the connection"
                         : std::string("recv: ") + std::strerror(errno);
        return false;
      }
      n = static_cast<std::size_t>(got);
    }
    const auto decoded = wire::decode({buf_.data(), n});
    if (const auto* reply = std::get_if<wire::Message>(&decoded)) note_post_reply(*reply);
  }
}

bool Client::peer_hung_up() const {
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

template <class Attempt, class Wait>
bool Client::retry_on_ring(Attempt attempt, Wait wait, const char* timeout_error,
                           std::string& error) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
  for (;;) {
    const channel::RingStatus st = attempt();
    if (st == channel::RingStatus::kOk) return true;
    if (st == channel::RingStatus::kCorrupt) {
      error = "the channel to the privileged side is corrupt";
      return false;
    }
    if (wait()) continue;
    // A slice passed without progress: a privileged side that went away does not move any more.
    if (peer_hung_up()) {
      error = "the privileged side closed the connection";
      return false;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      error = timeout_error;
      return false;
    }
  }
}

bool Client::receive_from_channel(std::vector<std::uint8_t>& buf, std::size_t* size,
                                  std::string& error) {
  return retry_on_ring([&] { return channel_->in.try_pop(buf, size); },
                       [&] { return channel_->in.wait_for_message(channel_->policy); },
                       "no reply: the privileged side did not answer in time", error);
}

bool Client::receive(std::vector<std::uint8_t>& buf, wire::Message& reply, std::string& error) {
  std::size_t n = 0;
  if (channel_) {
    if (!receive_from_channel(buf, &n, error)) return false;
  } else {
    ssize_t got;
    do {
      got = ::recv(fd_, buf.data(), buf.size(), 0);
    } while (got < 0 && errno == EINTR);
    if (got <= 0) {
      error = got == 0 ? "the privileged side closed the connection"
                       : std::string("no reply: ") + std::strerror(errno);
      return false;
    }
    n = static_cast<std::size_t>(got);
  }
  auto decoded = wire::decode({buf.data(), n});
  if (auto* bad = std::get_if<wire::DecodeError>(&decoded)) {
    error = "unreadable reply: " + bad->reason;
    return false;
  }
  reply = std::move(std::get<wire::Message>(decoded));
  return true;
}

bool Client::exchange(const wire::Body& request, wire::Body& reply, std::string& error) {
  if (launch_errors_only_ && std::holds_alternative<wire::Launch>(request)) {
    // Its kOk may never come: waiting for it would run into the receive timeout.
    error = "a launch record is posted on this connection (its hello asked for error replies only)";
    return false;
  }
  const std::uint32_t id = next_id_++;
  if (!send(request, id, error)) return false;
  for (;;) {
    wire::Message message;
    if (!receive(buf_, message, error)) return false;
    // Id 0 is the other side speaking first (a refusal at accept): it answers this.
    if (message.request_id == id || message.request_id == 0) {
      reply = std::move(message.body);
      return true;
    }
    note_post_reply(message);  // a reply to a post(), or a late one to a timed-out call
  }
}

bool Client::call(const wire::Body& request, std::string& error) {
  wire::Body reply;
  if (!exchange(request, reply, error)) return false;
  if (std::holds_alternative<wire::Ok>(reply)) return true;
  if (const auto* e = std::get_if<wire::Error>(&reply)) {
    error = e->message;
    return false;
  }
  error = "unexpected reply type";
  return false;
}

}  // namespace oaprof::ipc
