// The Level Zero layer's books of the program's event pools and events (sampled attribution
// asks them which events have kernel timestamps): each entry goes with its pool or event, so a
// program that keeps creating and destroying them does not grow the books. The interceptor is
// driven directly, with handles no driver made: these calls only keep books.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "attach/ze_interceptor.h"

namespace oaprof::attach::ze {
namespace {

template <typename Handle>
Handle fake(std::uintptr_t n) {
  return reinterpret_cast<Handle>(n * 64);
}

ze_event_pool_desc_t pool_desc(bool timestamps) {
  return {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
          timestamps ? ze_event_pool_flags_t{ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP} : 0u, 4};
}

TEST(ZeEventBooksTest, PoolsAndEventsLeaveTheBooksAtTheirDestruction) {
  const std::size_t before = event_books_size();
  const ze_event_pool_desc_t desc = pool_desc(true);
  for (std::uintptr_t cycle = 0; cycle < 1000; ++cycle) {
    // Fresh handles every cycle, as a driver that never reuses them would give.
    const auto pool = fake<ze_event_pool_handle_t>(1 + cycle * 8);
    event_pool_created(pool, &desc);
    std::vector<ze_event_handle_t> events;
    for (std::uintptr_t i = 1; i <= 4; ++i) {
      events.push_back(fake<ze_event_handle_t>(1 + cycle * 8 + i));
      event_created(pool, events.back());
    }
    ASSERT_EQ(event_books_size(), before + 5);
    // Half the cycles destroy the events first; the others destroy the pool with them alive.
    if (cycle % 2 == 0) {
      for (ze_event_handle_t e : events) event_destroying(e);
      ASSERT_EQ(event_books_size(), before + 1);
    }
    event_pool_destroying(pool);
  }
  EXPECT_EQ(event_books_size(), before);
}

// A handle the driver gives again, to a pool without kernel timestamps, is that pool's now.
TEST(ZeEventBooksTest, AHandleGivenAgainBelongsToItsNewPool) {
  const std::size_t before = event_books_size();
  const auto first = fake<ze_event_pool_handle_t>(100001),
             second = fake<ze_event_pool_handle_t>(100002);
  const auto event = fake<ze_event_handle_t>(100003);
  const ze_event_pool_desc_t with = pool_desc(true), without = pool_desc(false);
  event_pool_created(first, &with);
  event_created(first, event);
  event_pool_created(second, &without);
  event_created(second, event);  // the first's event was destroyed unseen, its handle reused
  EXPECT_EQ(event_books_size(), before + 3);
  event_pool_destroying(second);
  EXPECT_EQ(event_books_size(), before + 1);
  event_pool_destroying(first);
  EXPECT_EQ(event_books_size(), before);
}

}  // namespace
}  // namespace oaprof::attach::ze
