// BufferPool: the activity buffers CUPTI fills, allocated ahead of time.
//
// CUPTI asks for a buffer on application threads (buffers are per thread) and
// hands it back full on its own thread. Both callbacks must be cheap and must
// never block or allocate: allocating while the application launches kernels
// distorts the launches we are measuring. So:
//  * acquire()   (application threads) pops a free buffer, or returns nullptr
//                when none is free (CUPTI then drops records and counts them);
//  * complete()  (CUPTI's thread) pushes {buffer, valid bytes} for the consumer;
//  * the consumer thread pops completed buffers, decodes them, recycles them,
//    and allocates more (reserve()) while the pool is under its cap.
// Both queues are bounded lock-free MPMC rings (Vyukov's design) sized for the
// cap, so a push never fails. Memory is bounded by max_buffers * buffer_bytes
// however long the program runs.
//
// complete() checks that a pointer is one of the pool's buffers (a scan of
// at most max_buffers atomics, once per multi-megabyte buffer) and refuses
// anything else.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace gpuscope::capture {

// A bounded multi-producer multi-consumer queue of trivially copyable values.
// push/pop never block; push fails only when full, pop only when empty (or
// when a producer that reserved the next cell has not published it yet).
template <class T>
class MpmcRing {
 public:
  explicit MpmcRing(std::size_t min_capacity) {
    std::size_t cap = 2;
    while (cap < min_capacity) cap *= 2;
    cells_ = std::make_unique<Cell[]>(cap);
    mask_ = cap - 1;
    for (std::size_t i = 0; i < cap; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }

  bool push(const T& value) noexcept {
    std::size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& c = cells_[pos & mask_];
      const std::size_t seq = c.seq.load(std::memory_order_acquire);
      const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.value = value;
          c.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  bool pop(T* out) noexcept {
    std::size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& c = cells_[pos & mask_];
      const std::size_t seq = c.seq.load(std::memory_order_acquire);
      const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos + 1);
      if (diff == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          *out = c.value;
          c.seq.store(pos + mask_ + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // empty
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

  std::size_t capacity() const { return mask_ + 1; }

 private:
  struct Cell {
    std::atomic<std::size_t> seq;
    T value;
  };
  std::unique_ptr<Cell[]> cells_;
  std::size_t mask_ = 0;
  alignas(64) std::atomic<std::size_t> tail_{0};
  alignas(64) std::atomic<std::size_t> head_{0};
};

class BufferPool {
 public:
  // A buffer CUPTI handed back, with the bytes it filled.
  struct Completed {
    std::uint8_t* data = nullptr;
    std::size_t valid_bytes = 0;
  };

  // No memory is allocated here; call reserve() before tracing starts.
  BufferPool(std::size_t buffer_bytes, std::size_t max_buffers);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // [any thread] A free buffer of buffer_bytes() bytes, 8-byte aligned, or
  // nullptr if none is free (counted in declined()).
  std::uint8_t* acquire() noexcept;
  // [any thread] Queues a filled buffer for the consumer. False (and nothing
  // queued) if `data` is not one of this pool's buffers.
  bool complete(std::uint8_t* data, std::size_t valid_bytes) noexcept;

  // [any thread] Records CUPTI reports it dropped (asked in bufferCompleted).
  void note_dropped(std::uint64_t n) noexcept { dropped_.fetch_add(n, std::memory_order_relaxed); }
  // [consumer] Dropped records noted since the last call.
  std::uint64_t take_dropped() noexcept { return dropped_.exchange(0, std::memory_order_relaxed); }

  // [consumer] The next filled buffer, if any.
  bool pop_completed(Completed* out) noexcept;
  // [consumer] Makes a buffer free again (after decoding it, or unused).
  void recycle(std::uint8_t* data) noexcept;
  // [consumer] Allocates buffers until `free_target` are free or the cap is
  // reached. Returns how many were allocated.
  std::size_t reserve(std::size_t free_target);
  // [consumer, while no tracing runs] Frees every free buffer. Returns how many.
  std::size_t trim();

  std::size_t buffer_bytes() const { return buffer_bytes_; }
  std::size_t max_buffers() const { return max_buffers_; }
  std::size_t allocated() const { return allocated_.load(std::memory_order_relaxed); }
  std::size_t free_count() const { return free_.load(std::memory_order_relaxed); }
  std::size_t in_use() const { return in_use_.load(std::memory_order_relaxed); }  // acquired, not yet recycled
  std::size_t peak_in_use() const { return peak_in_use_.load(std::memory_order_relaxed); }
  std::uint64_t declined() const { return declined_.load(std::memory_order_relaxed); }

 private:
  const std::size_t buffer_bytes_, max_buffers_;
  // Every buffer the pool owns, by slot (nullptr = empty slot). Written by the
  // consumer (reserve, trim), read by complete() on any thread.
  std::unique_ptr<std::atomic<std::uint8_t*>[]> slots_;
  MpmcRing<std::uint8_t*> free_list_;
  MpmcRing<Completed> completed_;
  std::atomic<std::size_t> allocated_{0}, free_{0}, in_use_{0}, peak_in_use_{0};
  std::atomic<std::uint64_t> declined_{0}, dropped_{0};
};

}  // namespace gpuscope::capture
