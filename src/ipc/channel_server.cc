#include "ipc/channel_server.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

namespace oaprof::ipc {

std::unique_ptr<ChannelServer> ChannelServer::create(Answer answer, std::function<void()> settle,
                                                     int client_socket, channel::WaitPolicy policy,
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
  try {
    s->thread_ = std::thread([p = s.get()] { p->run(); });
  } catch (const std::system_error& e) {  // out of threads: the socket serves this client
    error = fmt::format("starting the channel's thread: {}", e.what());
    return nullptr;
  }
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

void ChannelServer::request_stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  channel::wake_consumer(layout_->to_server);
  channel::wake_producer(layout_->to_client);
}

void ChannelServer::stop() {
  if (!thread_.joinable()) return;
  request_stop();
  // One wake-up can come before the thread goes to sleep (it polls first): wake it until it has
  // seen the flag, so stopping never waits out a whole sleep slice.
  while (!finished_.load()) {
    channel::wake_consumer(layout_->to_server);
    channel::wake_producer(layout_->to_client);
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  thread_.join();
}

void ChannelServer::run() {
  try {
    serve();
  } catch (const std::exception&) {
    // Out of memory answering, say: this client loses its channel, the server goes on.
    fail();
  }
  finished_.store(true);
}

void ChannelServer::fail() {
  corrupt_.store(true);
  ::shutdown(client_socket_, SHUT_RDWR);  // the client sees the hang-up, our poll loop too
}

void ChannelServer::serve() {
  channel::Consumer in(layout_->to_server, layout_->to_server_slots);
  channel::Producer out(layout_->to_client, layout_->to_client_slots);
  std::vector<std::uint8_t> buf(ipc::wire::kMaxMessageBytes);
  for (std::uint32_t drained = 0;;) {
    const bool stopping = stop_.load();
    // A client keeps its mapping after it hangs up and can refill its ring as fast as we empty
    // it: once stopping, only a ring's worth is answered, what it queued before it went.
    if (stopping && drained == kMaxDrained) return;
    std::size_t n = 0;
    const channel::RingStatus got = in.try_pop(buf, &n);
    if (got == channel::RingStatus::kCorrupt) return fail();
    if (got == channel::RingStatus::kEmpty) {
      if (stopping) return;
      in.wait_for_message(policy_);
      continue;
    }
    if (stopping) ++drained;
    const std::vector<std::uint8_t> reply = answer_({buf.data(), n});
    if (!reply.empty() && !publish(out, reply)) return fail();
    answered_.fetch_add(1, std::memory_order_relaxed);
    settle_();
  }
}

bool ChannelServer::publish(channel::Producer& out, const std::vector<std::uint8_t>& reply) {
  // A client reads its replies at its next call; one that stops reading for a minute while
  // it keeps sending is broken, and is cut off.
  int slices = 0;
  channel::RingStatus put;
  while ((put = out.try_push(reply)) == channel::RingStatus::kFull && !stop_.load() &&
         slices++ < 600) {
    out.wait_for_room(policy_);
  }
  if (put == channel::RingStatus::kCorrupt) return false;
  // Full while stopping: the client has gone and reads no more replies. Its requests are still
  // answered (a launch record among them becomes a row); the replies are dropped.
  return put != channel::RingStatus::kFull || stop_.load();
}

}  // namespace oaprof::ipc
