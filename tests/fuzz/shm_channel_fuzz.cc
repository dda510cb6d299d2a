// Fuzzes the privileged side's reading of a shared-memory channel (ipc/shm_channel.h). The input
// is what a hostile client leaves in its half of the mapping: the ring's counters and the slots'
// lengths and bytes, at the offsets the layout gives them. Every pop must copy at most one
// message's worth from inside the slots or say the ring is corrupt; what it copies goes through
// the wire decoder, as the server does.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <variant>
#include <vector>

#include "ipc/shm_channel.h"
#include "ipc/wire.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace oaprof::ipc;
  static void* memory = ::operator new (channel::kChannelBytes, std::align_val_t{64});
  channel::ChannelLayout* layout = channel::initialise(memory);
  // The client's writable part: to_server's control block, then (after to_client's) its slots.
  auto* control = reinterpret_cast<std::uint8_t*>(&layout->to_server);
  const std::size_t control_bytes = std::min(size, sizeof(channel::RingControl));
  std::memcpy(control, data, control_bytes);
  auto* slots = reinterpret_cast<std::uint8_t*>(layout->to_server_slots);
  std::memcpy(slots, data + control_bytes,
              std::min(size - control_bytes, sizeof layout->to_server_slots));

  channel::Consumer in(layout->to_server, layout->to_server_slots);
  std::vector<std::uint8_t> buf(wire::kMaxMessageBytes);
  for (std::uint32_t i = 0; i <= channel::kRingSlots; ++i) {
    std::size_t n = 0;
    const channel::RingStatus st = in.try_pop(buf, &n);
    if (st != channel::RingStatus::kOk) break;
    if (n > wire::kMaxMessageBytes) std::abort();
    (void)wire::decode({buf.data(), n});
  }
  return 0;
}
