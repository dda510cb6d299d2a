// A client that turns its shared-memory channel (ipc/shm_channel.h) against the server that gave
// it: it says hello asking for a channel, keeps the mapping, and floods its ring with a cycle of
// requests from a thread of its own, reading the replies as they come so the server goes on
// answering. It can hang up its socket while it goes on: the mapping stays, and so does the flood.
// For the tests of oaprofd and of the run server (`sudo oaprof`) alike.
#pragma once

#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "ipc/shm_channel.h"
#include "ipc/unix_address.h"
#include "ipc/wire.h"

namespace oaprof::security {

class RingFlooder {
 public:
  // Connects to `address` (a path or "@name") and takes a channel; ready() says whether it did.
  explicit RingFlooder(const std::string& address) {
    sockaddr_un addr{};
    const socklen_t len = ipc::unix_address(address, addr);
    socket_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (len == 0 || ::connect(socket_, reinterpret_cast<sockaddr*>(&addr), len) != 0) return;
    const auto hello =
        ipc::wire::encode({1, ipc::wire::Hello{static_cast<std::uint32_t>(::getpid()),
                                               ipc::channel::kHelloWantsChannel}});
    if (::send(socket_, hello.data(), hello.size(), MSG_NOSIGNAL) < 0) return;
    std::vector<std::uint8_t> buf(ipc::wire::kMaxMessageBytes);
    int memfd = -1;
    if (ipc::channel::receive_with_fd(socket_, buf, &memfd) <= 0 || memfd < 0) return;
    void* m =
        ::mmap(nullptr, ipc::channel::kChannelBytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    ::close(memfd);
    if (m == MAP_FAILED) return;
    mapping_ = m;
    layout_ = ipc::channel::attach(m, ipc::channel::kChannelBytes);
  }
  ~RingFlooder() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    if (mapping_ != nullptr) ::munmap(mapping_, ipc::channel::kChannelBytes);
    hang_up();
  }
  RingFlooder(const RingFlooder&) = delete;
  RingFlooder& operator=(const RingFlooder&) = delete;

  bool ready() const { return layout_ != nullptr; }
  int socket() const { return socket_; }

  // Sends the requests of `cycle` (encoded), in turn and over and over, through the ring until
  // destroyed.
  void flood(std::vector<std::vector<std::uint8_t>> cycle) {
    thread_ = std::thread([this, cycle = std::move(cycle)] { run(cycle); });
  }
  // Replies read from the ring so far: the server answering the flood.
  std::uint64_t replies() const { return replies_.load(); }
  // Closes the socket; the mapping and the flood go on.
  void hang_up() {
    if (socket_ >= 0) ::close(socket_);
    socket_ = -1;
  }

 private:
  void run(const std::vector<std::vector<std::uint8_t>>& cycle) {
    ipc::channel::Producer out(layout_->to_server, layout_->to_server_slots);
    ipc::channel::Consumer in(layout_->to_client, layout_->to_client_slots);
    std::vector<std::uint8_t> reply(ipc::wire::kMaxMessageBytes);
    std::uint64_t sent = 0;
    while (!stop_.load()) {
      bool moved = false;
      while (out.try_push(cycle[sent % cycle.size()]) == ipc::channel::RingStatus::kOk) {
        ++sent;
        moved = true;
      }
      std::size_t n = 0;
      while (in.try_pop(reply, &n) == ipc::channel::RingStatus::kOk) {
        replies_.fetch_add(1);
        moved = true;
      }
      // As an attacker would: it never sleeps on the futex (which would make the server wake
      // it, and give others a moment), but yields the core, so the test runs on two.
      if (!moved) ::sched_yield();
    }
  }

  int socket_ = -1;
  void* mapping_ = nullptr;
  ipc::channel::ChannelLayout* layout_ = nullptr;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> replies_{0};
  std::thread thread_;
};

}  // namespace oaprof::security
