#include "capture/buffer_pool.h"

#include <cstdlib>

namespace gpuscope::capture {

namespace {
constexpr std::size_t kAlignment = 64;  // CUPTI needs 8; a cache line keeps buffers apart

std::size_t round_up(std::size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }
}  // namespace

BufferPool::BufferPool(std::size_t buffer_bytes, std::size_t max_buffers)
    : buffer_bytes_(round_up(buffer_bytes)),
      max_buffers_(max_buffers),
      slots_(std::make_unique<std::atomic<std::uint8_t*>[]>(max_buffers)),
      free_list_(max_buffers),
      completed_(max_buffers) {
  for (std::size_t i = 0; i < max_buffers_; ++i) slots_[i].store(nullptr, std::memory_order_relaxed);
}

BufferPool::~BufferPool() {
  for (std::size_t i = 0; i < max_buffers_; ++i) std::free(slots_[i].load(std::memory_order_relaxed));
}

std::uint8_t* BufferPool::acquire() noexcept {
  std::uint8_t* data = nullptr;
  if (!free_list_.pop(&data)) {
    declined_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  free_.fetch_sub(1, std::memory_order_relaxed);
  const std::size_t now = in_use_.fetch_add(1, std::memory_order_relaxed) + 1;
  std::size_t peak = peak_in_use_.load(std::memory_order_relaxed);
  while (now > peak && !peak_in_use_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return data;
}

bool BufferPool::complete(std::uint8_t* data, std::size_t valid_bytes) noexcept {
  if (!data) return false;
  bool ours = false;
  for (std::size_t i = 0; i < max_buffers_ && !ours; ++i) ours = slots_[i].load(std::memory_order_acquire) == data;
  if (!ours) return false;
  // Never fails: a buffer is in at most one queue and each holds max_buffers.
  return completed_.push(Completed{data, valid_bytes < buffer_bytes_ ? valid_bytes : buffer_bytes_});
}

bool BufferPool::pop_completed(Completed* out) noexcept { return completed_.pop(out); }

void BufferPool::recycle(std::uint8_t* data) noexcept {
  if (!data) return;
  in_use_.fetch_sub(1, std::memory_order_relaxed);
  free_.fetch_add(1, std::memory_order_relaxed);
  free_list_.push(data);
}

std::size_t BufferPool::reserve(std::size_t free_target) {
  std::size_t added = 0;
  for (std::size_t slot = 0; slot < max_buffers_ && free_.load(std::memory_order_relaxed) < free_target; ++slot) {
    if (slots_[slot].load(std::memory_order_relaxed) != nullptr) continue;
    auto* data = static_cast<std::uint8_t*>(std::aligned_alloc(kAlignment, buffer_bytes_));
    if (!data) break;  // out of memory: run with what we have
    slots_[slot].store(data, std::memory_order_release);
    allocated_.fetch_add(1, std::memory_order_relaxed);
    free_.fetch_add(1, std::memory_order_relaxed);
    free_list_.push(data);
    ++added;
  }
  return added;
}

std::size_t BufferPool::trim() {
  std::size_t freed = 0;
  std::uint8_t* data = nullptr;
  while (free_list_.pop(&data)) {
    free_.fetch_sub(1, std::memory_order_relaxed);
    for (std::size_t i = 0; i < max_buffers_; ++i)
      if (slots_[i].load(std::memory_order_relaxed) == data) {
        slots_[i].store(nullptr, std::memory_order_release);
        break;
      }
    std::free(data);
    allocated_.fetch_sub(1, std::memory_order_relaxed);
    ++freed;
  }
  return freed;
}

}  // namespace gpuscope::capture
