#include "ipc/shm_channel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace oaprof::ipc::channel {
namespace {
using namespace std::chrono_literals;

// One channel in private memory: both ends in this process, as the tests need them.
struct TestChannel {
  std::unique_ptr<unsigned char[]> memory{new unsigned char[kChannelBytes + 64]};
  ChannelLayout* layout;
  TestChannel() {
    void* p = memory.get();
    std::size_t space = kChannelBytes + 64;
    layout = initialise(std::align(alignof(ChannelLayout), kChannelBytes, p, space));
  }
  Producer producer() { return {layout->to_server, layout->to_server_slots}; }
  Consumer consumer() { return {layout->to_server, layout->to_server_slots}; }
};

std::vector<std::uint8_t> bytes_of(std::uint32_t n, std::size_t size = 9) {
  std::vector<std::uint8_t> v(size, static_cast<std::uint8_t>(n));
  std::memcpy(v.data(), &n, sizeof n);
  return v;
}

TEST(ShmChannelTest, MessagesArriveInOrderAcrossManyWrapsOfTheRing) {
  TestChannel c;
  Producer out = c.producer();
  Consumer in = c.consumer();
  std::vector<std::uint8_t> buf(wire::kMaxMessageBytes);
  std::size_t n = 0;
  EXPECT_EQ(in.try_pop(buf, &n), RingStatus::kEmpty);
  for (std::uint32_t i = 0; i < 10 * kRingSlots + 3; ++i) {
    ASSERT_EQ(out.try_push(bytes_of(i, 5 + i % 40)), RingStatus::kOk);
    ASSERT_EQ(in.try_pop(buf, &n), RingStatus::kOk);
    ASSERT_EQ(n, 5 + i % 40);
    std::uint32_t got = 0;
    std::memcpy(&got, buf.data(), sizeof got);
    EXPECT_EQ(got, i);
  }
  EXPECT_EQ(in.try_pop(buf, &n), RingStatus::kEmpty);
}

TEST(ShmChannelTest, AFullRingRefusesUntilTheConsumerTakesOne) {
  TestChannel c;
  Producer out = c.producer();
  Consumer in = c.consumer();
  for (std::uint32_t i = 0; i < kRingSlots; ++i) {
    ASSERT_EQ(out.try_push(bytes_of(i)), RingStatus::kOk);
  }
  EXPECT_EQ(out.try_push(bytes_of(99)), RingStatus::kFull);
  std::vector<std::uint8_t> buf(wire::kMaxMessageBytes);
  std::size_t n = 0;
  ASSERT_EQ(in.try_pop(buf, &n), RingStatus::kOk);
  EXPECT_EQ(out.try_push(bytes_of(99)), RingStatus::kOk);
  // A message over the wire format's limit is never published.
  EXPECT_EQ(in.try_pop(buf, &n), RingStatus::kOk);
  EXPECT_EQ(out.try_push(std::vector<std::uint8_t>(wire::kMaxMessageBytes + 1)),
            RingStatus::kCorrupt);
}

// The peer owns the shared counters and lengths: whatever it writes there, the other end reads
// nothing outside its slots and says the ring is corrupt.
TEST(ShmChannelTest, ScribbledCountersAndLengthsReadAsCorruptNeverOutOfBounds) {
  std::vector<std::uint8_t> buf(wire::kMaxMessageBytes);
  std::size_t n = 0;
  {
    TestChannel c;
    Consumer in = c.consumer();
    c.layout->to_server.tail.store(kRingSlots + 1);  // more messages than slots
    EXPECT_EQ(in.try_pop(buf, &n), RingStatus::kCorrupt);
    c.layout->to_server.tail.store(0xFFFFFFFFu);  // "behind" the consumer
    EXPECT_EQ(in.try_pop(buf, &n), RingStatus::kCorrupt);
  }
  {
    TestChannel c;
    Producer out = c.producer();
    Consumer in = c.consumer();
    ASSERT_EQ(out.try_push(bytes_of(1)), RingStatus::kOk);
    c.layout->to_server_slots[0].length = wire::kMaxMessageBytes + 1;
    EXPECT_EQ(in.try_pop(buf, &n), RingStatus::kCorrupt);
  }
  {
    TestChannel c;
    Producer out = c.producer();
    ASSERT_EQ(out.try_push(bytes_of(1)), RingStatus::kOk);
    c.layout->to_server.head.store(12345);  // the consumer claims to be far ahead
    EXPECT_EQ(out.try_push(bytes_of(2)), RingStatus::kCorrupt);
  }
}

TEST(ShmChannelTest, AttachRefusesWhatIsNotAChannel) {
  TestChannel c;
  EXPECT_EQ(attach(c.layout, kChannelBytes), c.layout);
  EXPECT_EQ(attach(c.layout, kChannelBytes - 1), nullptr);
  c.layout->version = kVersion + 1;
  EXPECT_EQ(attach(c.layout, kChannelBytes), nullptr);
  std::vector<unsigned char> zeros(kChannelBytes);
  EXPECT_EQ(attach(zeros.data(), zeros.size()), nullptr);
}

// With no spinning, each side goes to sleep on the futex at once; the other must wake it. A lost
// wake-up shows as a wait that ends with its 10 s slice and no message.
TEST(ShmChannelTest, ASleepingConsumerIsWokenByEveryMessage) {
  TestChannel c;
  WaitPolicy sleep_at_once{0ns, 10s};
  constexpr std::uint32_t kMessages = 2000;
  std::atomic<int> slices_expired{0};
  std::thread consumer([&] {
    Consumer in = c.consumer();
    Producer back{c.layout->to_client, c.layout->to_client_slots};
    std::vector<std::uint8_t> buf(wire::kMaxMessageBytes);
    for (std::uint32_t got = 0; got < kMessages;) {
      std::size_t n = 0;
      if (in.try_pop(buf, &n) == RingStatus::kOk) {
        ++got;
        while (back.try_push({buf.data(), n}) == RingStatus::kFull) {
          if (!back.wait_for_room(sleep_at_once)) ++slices_expired;
        }
      } else if (!in.wait_for_message(sleep_at_once)) {
        ++slices_expired;
      }
    }
  });
  Producer out = c.producer();
  Consumer replies{c.layout->to_client, c.layout->to_client_slots};
  std::vector<std::uint8_t> buf(wire::kMaxMessageBytes);
  for (std::uint32_t i = 0; i < kMessages; ++i) {
    ASSERT_EQ(out.try_push(bytes_of(i)), RingStatus::kOk);
    std::size_t n = 0;
    while (replies.try_pop(buf, &n) != RingStatus::kOk) {
      if (!replies.wait_for_message(sleep_at_once)) ++slices_expired;
    }
    std::uint32_t got = 0;
    std::memcpy(&got, buf.data(), sizeof got);
    ASSERT_EQ(got, i);
  }
  consumer.join();
  EXPECT_EQ(slices_expired.load(), 0);
}

TEST(ShmChannelTest, WaitPolicyReadsMicrosecondsAndIgnoresNonsense) {
  EXPECT_EQ(wait_policy("0").spin, 0ns);
  EXPECT_EQ(wait_policy("250").spin, 250us);
  const auto fallback = WaitPolicy{}.spin;
  for (const char* bad : {"", "-1", "12us", "100000", "x"}) {
    EXPECT_EQ(wait_policy(bad).spin, fallback) << bad;
  }
  EXPECT_EQ(wait_policy(nullptr).spin, fallback);
}

}  // namespace
}  // namespace oaprof::ipc::channel
