// BufferPool: bounded, never blocks, never allocates on the request path.
// The concurrent cases also run under ThreadSanitizer (capture_tsan_tests).
#include "capture/buffer_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

namespace gpuscope::capture {
namespace {

TEST(BufferPool, ReservesUpToItsCapAndDeclinesWhenEmpty) {
  BufferPool pool(64 * 1024, 4);
  EXPECT_EQ(pool.allocated(), 0u);
  EXPECT_EQ(pool.acquire(), nullptr);  // nothing reserved yet: declined, not allocated
  EXPECT_EQ(pool.declined(), 1u);
  EXPECT_EQ(pool.reserve(2), 2u);
  EXPECT_EQ(pool.reserve(10), 2u);  // capped at 4
  EXPECT_EQ(pool.allocated(), 4u);
  std::set<std::uint8_t*> got;
  for (int i = 0; i < 4; ++i) {
    std::uint8_t* b = pool.acquire();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 8, 0u);
    got.insert(b);
  }
  EXPECT_EQ(got.size(), 4u);
  EXPECT_EQ(pool.acquire(), nullptr);
  EXPECT_EQ(pool.declined(), 2u);
  EXPECT_EQ(pool.in_use(), 4u);
  EXPECT_EQ(pool.peak_in_use(), 4u);
  for (std::uint8_t* b : got) pool.recycle(b);
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(pool.free_count(), 4u);
}

TEST(BufferPool, CompletedBuffersComeBackWithTheirValidBytes) {
  BufferPool pool(64 * 1024, 2);
  pool.reserve(2);
  std::uint8_t* a = pool.acquire();
  std::uint8_t* b = pool.acquire();
  EXPECT_TRUE(pool.complete(a, 100));
  EXPECT_TRUE(pool.complete(b, 1 << 30));  // clamped to the buffer size
  BufferPool::Completed c;
  ASSERT_TRUE(pool.pop_completed(&c));
  EXPECT_EQ(c.data, a);
  EXPECT_EQ(c.valid_bytes, 100u);
  ASSERT_TRUE(pool.pop_completed(&c));
  EXPECT_EQ(c.data, b);
  EXPECT_EQ(c.valid_bytes, pool.buffer_bytes());
  EXPECT_FALSE(pool.pop_completed(&c));
}

TEST(BufferPool, RefusesForeignBuffers) {
  BufferPool pool(64 * 1024, 2);
  pool.reserve(1);
  std::uint8_t other[64];
  EXPECT_FALSE(pool.complete(other, 10));
  EXPECT_FALSE(pool.complete(nullptr, 10));
  BufferPool::Completed c;
  EXPECT_FALSE(pool.pop_completed(&c));
}

TEST(BufferPool, TrimFreesOnlyFreeBuffers) {
  BufferPool pool(64 * 1024, 4);
  pool.reserve(4);
  std::uint8_t* held = pool.acquire();
  EXPECT_EQ(pool.trim(), 3u);
  EXPECT_EQ(pool.allocated(), 1u);
  EXPECT_TRUE(pool.complete(held, 8));  // still known after the trim
  BufferPool::Completed c;
  ASSERT_TRUE(pool.pop_completed(&c));
  pool.recycle(c.data);
  EXPECT_EQ(pool.reserve(4), 3u);  // empty slots are reused
  EXPECT_EQ(pool.allocated(), 4u);
}

TEST(BufferPool, DroppedCountsAccumulateUntilTaken) {
  BufferPool pool(64 * 1024, 2);
  pool.note_dropped(3);
  pool.note_dropped(4);
  EXPECT_EQ(pool.take_dropped(), 7u);
  EXPECT_EQ(pool.take_dropped(), 0u);
}

TEST(MpmcRing, KeepsOrderAndReportsFullAndEmpty) {
  MpmcRing<int> ring(3);  // rounded up to 4
  EXPECT_EQ(ring.capacity(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(ring.push(i));
  EXPECT_FALSE(ring.push(99));
  int v = -1;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(ring.pop(&v));
    EXPECT_EQ(v, i);
  }
  EXPECT_FALSE(ring.pop(&v));
}

// Many "application threads" acquire and complete; one consumer recycles.
// Every buffer must come back exactly once and the pool never exceeds its cap.
TEST(BufferPoolConcurrency, ManyProducersOneConsumer) {
  constexpr int kThreads = 8, kRounds = 2000;
  BufferPool pool(64 * 1024, 16);
  pool.reserve(16);
  std::atomic<int> completed{0}, producers_done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        std::uint8_t* b = pool.acquire();
        if (!b) {
          std::this_thread::yield();
          continue;
        }
        b[0] = static_cast<std::uint8_t>(t);  // CUPTI writes the buffer
        EXPECT_TRUE(pool.complete(b, 1 + i % 100));
        completed.fetch_add(1);
      }
      producers_done.fetch_add(1);
    });
  int consumed = 0;
  BufferPool::Completed c;
  while (producers_done.load() < kThreads || consumed < completed.load()) {
    if (pool.pop_completed(&c)) {
      EXPECT_GE(c.valid_bytes, 1u);
      EXPECT_LT(c.data[0], kThreads);
      pool.recycle(c.data);
      ++consumed;
    } else {
      std::this_thread::yield();
    }
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(consumed, completed.load());
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(pool.free_count(), 16u);
  EXPECT_EQ(pool.allocated(), 16u);
  EXPECT_LE(pool.peak_in_use(), 16u);
}

}  // namespace
}  // namespace gpuscope::capture
