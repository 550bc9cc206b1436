// Large scratch arrays for the analysis passes.
//
// Fresh memory is the dominant cost of a pass over 10^7 events: every 4 KiB
// page is zeroed by the kernel on first touch (and on virtual machines that
// fault is expensive). Arrays of several MiB therefore ask for transparent
// huge pages, which fault 512 times less often. The contents start
// uninitialized.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <span>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gpuscope::detail {

template <class T>
class ScratchArray {
 public:
  explicit ScratchArray(std::size_t n) : size_(n) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= 2 * kHuge) {
      const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
      data_ = static_cast<T*>(std::aligned_alloc(kHuge, rounded));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
      if (data_) madvise(data_, rounded, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
    } else {
      data_ = static_cast<T*>(std::malloc(bytes ? bytes : 1));
    }
    if (!data_) throw std::bad_alloc();
  }
  ~ScratchArray() { std::free(data_); }
  ScratchArray(const ScratchArray&) = delete;
  ScratchArray& operator=(const ScratchArray&) = delete;

  T* data() { return data_; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  std::span<T> span() { return {data_, size_}; }
  std::span<T> span(std::size_t offset, std::size_t count) { return {data_ + offset, count}; }

 private:
  T* data_ = nullptr;
  std::size_t size_;
};

}  // namespace gpuscope::detail
