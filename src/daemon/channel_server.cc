#include "daemon/channel_server.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace oaprof::daemon {
namespace channel = oa::channel;

std::unique_ptr<ChannelServer> ChannelServer::create(Answer answer, std::function<void()> settle,
                                                     int client_socket,
                                                     channel::WaitPolicy policy,
                                                     std::string& error) {
  std::unique_ptr<ChannelServer> s(new ChannelServer());
  s->answer_ = std::move(answer);
  s->settle_ = std::move(settle);
  s->client_socket_ = client_socket;
  s->policy_ = policy;
  s->fd_ = ::memfd_create("oaprof-channel", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (s->fd_ < 0) {
    error = fmt::format("memfd_create: {}", std::strerror(errno));
    return nullptr;
  }
  if (::ftruncate(s->fd_, static_cast<off_t>(channel::kChannelBytes)) != 0 ||
      ::fcntl(s->fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    error = fmt::format("sizing the channel: {}", std::strerror(errno));
    return nullptr;  // the destructor closes the descriptor
  }
  void* m = ::mmap(nullptr, channel::kChannelBytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd_, 0);
  if (m == MAP_FAILED) {
    error = fmt::format("mapping the channel: {}", std::strerror(errno));
    return nullptr;
  }
  s->mapping_ = m;
  s->layout_ = channel::initialise(m);
  s->thread_ = std::thread([p = s.get()] { p->run(); });
  return s;
}

ChannelServer::~ChannelServer() {
  stop();
  close_fd();
  if (mapping_ != nullptr) ::munmap(mapping_, channel::kChannelBytes);
}

void ChannelServer::close_fd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void ChannelServer::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  channel::wake_consumer(layout_->to_server);
  thread_.join();
}

void ChannelServer::run() {
  channel::Consumer in(layout_->to_server, layout_->to_server_slots);
  channel::Producer out(layout_->to_client, layout_->to_client_slots);
  std::vector<std::uint8_t> buf(oa::wire::kMaxMessageBytes);
  auto fail = [&] {
    corrupt_.store(true);
    ::shutdown(client_socket_, SHUT_RDWR);  // the client sees the hang-up, our poll loop too
  };
  for (;;) {
    std::size_t n = 0;
    const channel::RingStatus got = in.try_pop(buf, &n);
    if (got == channel::RingStatus::kCorrupt) return fail();
    if (got == channel::RingStatus::kEmpty) {
      // Stop only with the ring empty: a record the client queued before it went is kept.
      if (stop_.load()) return;
      in.wait_for_message(policy_);
      continue;
    }
    const std::vector<std::uint8_t> reply = answer_({buf.data(), n});
    // A client reads its replies at its next call; one that stops reading for a minute while
    // it keeps sending is broken, and is cut off.
    int slices = 0;
    channel::RingStatus put;
    while ((put = out.try_push(reply)) == channel::RingStatus::kFull && !stop_.load() &&
           slices++ < 600) {
      out.wait_for_room(policy_);
    }
    if (put == channel::RingStatus::kCorrupt || put == channel::RingStatus::kFull) return fail();
    answered_.fetch_add(1, std::memory_order_relaxed);
    settle_();
  }
}

}  // namespace oaprof::daemon
