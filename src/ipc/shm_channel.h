// The per-launch fast path between the layer and the privileged side: two single-producer,
// single-consumer rings of wire messages (ipc/wire.h, unchanged) in one memory mapping the two
// processes share. A snapshot round trip over the socket costs two system calls on each side and
// two wake-ups; through the rings, a waiting side polls for a short while before it sleeps on a
// futex, so a back-to-back launch pays neither. The socket stays: it carries the hello that hands
// the mapping over (SCM_RIGHTS), and its hang-up tells the privileged side the client is gone.
//
// Layout of the mapping (kChannelBytes, little-endian, all counters free-running u32):
//   ChannelHeader   magic 'OAPC' | version | slot count | slot bytes
//   RingControl     to_server: tail (producer), head (consumer), consumer_waiting, producer_waiting
//   RingControl     to_client: the same
//   kRingSlots × Slot to_server, then kRingSlots × Slot to_client; a Slot is u32 length | bytes
//
// The consumer of a ring keeps its own head and the producer its own tail: a peer that scribbles
// over the shared counters or lengths makes the other side see a corrupt ring (and drop the
// channel), never read or write outside the mapping. Lives in oa beside the wire format, as both
// ends use it; its only system call is futex, the wait primitive.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "ipc/wire.h"

namespace oaprof::ipc::channel {

inline constexpr std::uint32_t kMagic = 0x4350414F;  // 'OAPC'
inline constexpr std::uint32_t kVersion = 1;
// A power of two. A snapshot has one request in flight, but sampled attribution posts its launch
// records in bursts (attach/interceptor.cc kPostBurst, 64): with room for a whole burst the
// program does not wait while the privileged side takes them one by one (about 2 µs each). With
// 8 slots it did, for 56 of every 64 records: 2–3 µs a launch on NVIDIA's OpenCL (issue 33).
// Each ring costs kRingSlots × kSlotBytes (256 KiB) of the client's mapping.
inline constexpr std::uint32_t kRingSlots = 64;
inline constexpr std::size_t kSlotBytes = 4 + wire::kMaxMessageBytes;
// Hello.flags bit: the layer would take a channel. The reply to such a hello carries the
// mapping's file descriptor when the privileged side offers one.
inline constexpr std::uint32_t kHelloWantsChannel = 1;
// Hello.flags bit, with kHelloWantsChannel: the layer needs no kOk for a launch record it posts
// through the channel, only an error reply. A privileged side that honours it publishes nothing
// for an accepted record, so neither side waits for room for a reply per launch; one that
// predates it ignores the bit and replies, which the layer reads and discards as before.
inline constexpr std::uint32_t kHelloLaunchErrorsOnly = 2;

struct alignas(64) RingControl {
  alignas(64) std::atomic<std::uint32_t> tail;              // messages the producer has published
  alignas(64) std::atomic<std::uint32_t> head;              // messages the consumer has taken
  alignas(64) std::atomic<std::uint32_t> consumer_waiting;  // 1: asleep on tail's futex
  alignas(64) std::atomic<std::uint32_t> producer_waiting;  // 1: asleep on head's futex
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

struct Slot {
  std::uint32_t length;
  std::uint8_t bytes[wire::kMaxMessageBytes];
};

struct alignas(64) ChannelLayout {
  std::uint32_t magic;
  std::uint32_t version;
  std::uint32_t slots;
  std::uint32_t slot_bytes;
  RingControl to_server;
  RingControl to_client;
  Slot to_server_slots[kRingSlots];
  Slot to_client_slots[kRingSlots];
};

inline constexpr std::size_t kChannelBytes = sizeof(ChannelLayout);

// Writes a fresh header and empty rings into `memory` (kChannelBytes, zeroed or not).
ChannelLayout* initialise(void* memory);
// The layout in a mapping the peer initialised; nullptr when it is not one (wrong magic,
// version or geometry).
ChannelLayout* attach(void* memory, std::size_t size);

// How a side waits: polls for up to `spin` (a reply or the next request is usually microseconds
// away), then sleeps on the futex, in slices of at most `slice` so the caller can check the
// peer is still there.
struct WaitPolicy {
  std::chrono::nanoseconds spin{200'000};
  std::chrono::nanoseconds slice{100'000'000};
};

// The longest spin OAPROF_SPIN_US may ask for: longer burns a core for nothing.
inline constexpr std::chrono::microseconds kMaxSpin{10000};

// The policy with OAPROF_SPIN_US's value (`spin_us`: microseconds, 0 to kMaxSpin) as its spin;
// the default for null or anything else. Both ends read the same variable: the layer through
// attach/layer_config.h, oaprof and oaprofd through this.
WaitPolicy wait_policy(const char* spin_us);

// The two variables that tune the channel, as the layer (attach/layer_config.h) and oaprof's and
// oaprofd's ends read them.
inline constexpr const char* kSpinEnv = "OAPROF_SPIN_US";
inline constexpr const char* kChannelEnv = "OAPROF_CHANNEL";
// wait_policy with this process's OAPROF_SPIN_US.
WaitPolicy wait_policy_from_env();
// Whether this process may use the channel: not when OAPROF_CHANNEL is "off" (the socket alone).
bool channel_wanted_from_env();

enum class RingStatus { kOk, kEmpty, kFull, kCorrupt };

// The producing end of one ring.
class Producer {
 public:
  Producer(RingControl& control, Slot* slots) : control_(control), slots_(slots) {}
  // Publishes one message (at most kMaxMessageBytes). kFull when the consumer is kRingSlots
  // behind; kCorrupt when its head is nonsense.
  RingStatus try_push(std::span<const std::uint8_t> message);
  // Waits up to one slice of `policy` for room; false when there is still none.
  bool wait_for_room(const WaitPolicy& policy);

 private:
  RingControl& control_;
  Slot* slots_;
  std::uint32_t tail_ = 0;  // ours; the shared one is only published
};

// The consuming end of one ring.
class Consumer {
 public:
  Consumer(RingControl& control, const Slot* slots) : control_(control), slots_(slots) {}
  // Copies the next message into `out` (kMaxMessageBytes) and sets `size`. kEmpty when there is
  // none; kCorrupt when the producer's tail or the slot's length is nonsense.
  RingStatus try_pop(std::span<std::uint8_t> out, std::size_t* size);
  // Waits up to one slice of `policy` for a message; false when none came.
  bool wait_for_message(const WaitPolicy& policy);

 private:
  RingControl& control_;
  const Slot* slots_;
  std::uint32_t head_ = 0;  // ours; the shared one is only published
};

// Wake a consumer asleep in wait_for_message(), or a producer asleep in wait_for_room() (the
// privileged side stopping its channel).
void wake_consumer(RingControl& control);

// The mapping's hand-over: one datagram over the SOCK_SEQPACKET socket with a descriptor passed
// along (SCM_RIGHTS). send_with_fd never blocks; true when the whole datagram went.
bool send_with_fd(int socket, std::span<const std::uint8_t> bytes, int fd);
// Receives one datagram into `buf` (again after EINTR) and returns recvmsg's result; `*fd` is the
// descriptor that came with it, close-on-exec, or -1 when none did.
long receive_with_fd(int socket, std::span<std::uint8_t> buf, int* fd);
void wake_producer(RingControl& control);

}  // namespace oaprof::ipc::channel
