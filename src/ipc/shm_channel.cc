#include "ipc/shm_channel.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>

namespace oaprof::ipc::channel {
namespace {

static_assert((kRingSlots & (kRingSlots - 1)) == 0, "slot indices wrap with the u32 counters");
static_assert(sizeof(Slot) == kSlotBytes);

// The futex word is the atomic's own storage: std::atomic<std::uint32_t> is lock-free and
// standard-layout, so its address is the address of the u32 the kernel compares.
std::uint32_t* word(std::atomic<std::uint32_t>& a) { return reinterpret_cast<std::uint32_t*>(&a); }

// Not FUTEX_PRIVATE_FLAG: the waiter and the waker are different processes.
void futex_wait(std::atomic<std::uint32_t>& a, std::uint32_t expected,
                std::chrono::nanoseconds timeout) {
  const auto ns = timeout.count();
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  (void)::syscall(SYS_futex, word(a), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>& a) {
  (void)::syscall(SYS_futex, word(a), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Polls `ready` for up to `budget`, politely: every few polls it yields the core to any thread
// that is ready to run there. Where the OpenCL device is the CPU (PoCL), that thread is the
// kernel itself, which a poll that never yielded would hold up for the whole budget.
template <class Ready>
bool spin_until(Ready ready, std::chrono::nanoseconds budget) {
  if (budget.count() <= 0) return ready();
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    cpu_relax();
    if (i % 16 == 0) {
      ::sched_yield();
      if (std::chrono::steady_clock::now() >= deadline) return ready();
    }
  }
}

// Sleeps on `counter` while it still holds `seen`, announcing the sleep in `waiting` first. The
// other side stores the counter, then reads `waiting` (both sequentially consistent), so either
// it sees the announcement and wakes us, or we see its new counter and do not sleep.
void sleep_while(std::atomic<std::uint32_t>& counter, std::uint32_t seen,
                 std::atomic<std::uint32_t>& waiting, std::chrono::nanoseconds slice) {
  waiting.store(1, std::memory_order_seq_cst);
  if (counter.load(std::memory_order_seq_cst) == seen) futex_wait(counter, seen, slice);
  waiting.store(0, std::memory_order_seq_cst);
}

}  // namespace

WaitPolicy wait_policy(const char* spin_us) {
  WaitPolicy policy;
  if (spin_us == nullptr || *spin_us == '\0') return policy;
  char* end = nullptr;
  errno = 0;
  const long us = std::strtol(spin_us, &end, 10);
  if (errno == 0 && *end == '\0' && us >= 0 && us <= kMaxSpin.count()) {
    policy.spin = std::chrono::microseconds(us);
  }
  return policy;
}

WaitPolicy wait_policy_from_env() { return wait_policy(std::getenv(kSpinEnv)); }

bool channel_wanted_from_env() {
  const char* channel = std::getenv(kChannelEnv);
  return channel == nullptr || std::strcmp(channel, "off") != 0;
}

ChannelLayout* initialise(void* memory) {
  std::memset(memory, 0, kChannelBytes);
  auto* layout = new (memory) ChannelLayout;
  layout->magic = kMagic;
  layout->version = kVersion;
  layout->slots = kRingSlots;
  layout->slot_bytes = static_cast<std::uint32_t>(kSlotBytes);
  for (RingControl* c : {&layout->to_server, &layout->to_client}) {
    c->tail.store(0);
    c->head.store(0);
    c->consumer_waiting.store(0);
    c->producer_waiting.store(0);
  }
  return layout;
}

ChannelLayout* attach(void* memory, std::size_t size) {
  if (memory == nullptr || size < kChannelBytes) return nullptr;
  auto* layout = static_cast<ChannelLayout*>(memory);
  if (layout->magic != kMagic || layout->version != kVersion || layout->slots != kRingSlots ||
      layout->slot_bytes != kSlotBytes) {
    return nullptr;
  }
  return layout;
}

RingStatus Producer::try_push(std::span<const std::uint8_t> message) {
  if (message.size() > wire::kMaxMessageBytes) return RingStatus::kCorrupt;
  const std::uint32_t used = tail_ - control_.head.load(std::memory_order_acquire);
  if (used > kRingSlots) return RingStatus::kCorrupt;
  if (used == kRingSlots) return RingStatus::kFull;
  Slot& slot = slots_[tail_ % kRingSlots];
  slot.length = static_cast<std::uint32_t>(message.size());
  std::memcpy(slot.bytes, message.data(), message.size());
  ++tail_;
  control_.tail.store(tail_, std::memory_order_seq_cst);
  if (control_.consumer_waiting.load(std::memory_order_seq_cst) != 0) futex_wake(control_.tail);
  return RingStatus::kOk;
}

bool Producer::wait_for_room(const WaitPolicy& policy) {
  auto room = [&] { return tail_ - control_.head.load(std::memory_order_acquire) < kRingSlots; };
  if (spin_until(room, policy.spin)) return true;
  // Full means the consumer's head is exactly kRingSlots behind our tail: sleep while it is.
  sleep_while(control_.head, tail_ - kRingSlots, control_.producer_waiting, policy.slice);
  return room();
}

RingStatus Consumer::try_pop(std::span<std::uint8_t> out, std::size_t* size) {
  const std::uint32_t available = control_.tail.load(std::memory_order_acquire) - head_;
  if (available == 0) return RingStatus::kEmpty;
  if (available > kRingSlots) return RingStatus::kCorrupt;
  const Slot& slot = slots_[head_ % kRingSlots];
  // Read once: the producer may rewrite the shared length at any time.
  const std::uint32_t length = *static_cast<const volatile std::uint32_t*>(&slot.length);
  if (length > wire::kMaxMessageBytes || length > out.size()) return RingStatus::kCorrupt;
  std::memcpy(out.data(), slot.bytes, length);
  *size = length;
  ++head_;
  control_.head.store(head_, std::memory_order_seq_cst);
  if (control_.producer_waiting.load(std::memory_order_seq_cst) != 0) futex_wake(control_.head);
  return RingStatus::kOk;
}

bool Consumer::wait_for_message(const WaitPolicy& policy) {
  auto ready = [&] { return control_.tail.load(std::memory_order_acquire) != head_; };
  if (spin_until(ready, policy.spin)) return true;
  sleep_while(control_.tail, head_, control_.consumer_waiting, policy.slice);
  return ready();
}

void wake_consumer(RingControl& control) { futex_wake(control.tail); }

void wake_producer(RingControl& control) { futex_wake(control.head); }

namespace {

struct FdMessage {
  explicit FdMessage(void* data, std::size_t size) : iov{data, size} {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  FdMessage(const FdMessage&) = delete;  // msg points into it
  FdMessage& operator=(const FdMessage&) = delete;
  iovec iov;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
};

}  // namespace

bool send_with_fd(int socket, std::span<const std::uint8_t> bytes, int fd) {
  FdMessage m(const_cast<std::uint8_t*>(bytes.data()), bytes.size());
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return ::sendmsg(socket, &m.msg, MSG_NOSIGNAL | MSG_DONTWAIT) ==
         static_cast<ssize_t>(bytes.size());
}

long receive_with_fd(int socket, std::span<std::uint8_t> buf, int* fd) {
  FdMessage m(buf.data(), buf.size());
  ssize_t n;
  do {
    n = ::recvmsg(socket, &m.msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  *fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m.msg); c != nullptr; c = CMSG_NXTHDR(&m.msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int))) {
      std::memcpy(fd, CMSG_DATA(c), sizeof(int));
    }
  }
  return n;
}

}  // namespace oaprof::ipc::channel
