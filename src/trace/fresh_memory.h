// Hints to the kernel for big, freshly allocated columns (a load fills ~1 GB).
//
// On the VMs we measure on, a page fault costs ~10 us per 4 KiB page (about
// as much as decoding the data in it), so a column of 80 MB faulted page by
// page costs ~0.2 s. Two hints cut that: transparent huge pages for the
// 2 MiB-aligned interior of a big allocation (one fault per 2 MiB), and
// MADV_POPULATE_WRITE for a range about to be written (one call maps every
// page of it, including the unaligned head and tail that huge pages cannot
// cover). Both are hints: errors are ignored, and the contents never change.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuscope::detail {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// Asks for transparent huge pages for the whole 2 MiB pages inside
// [data, data + bytes). Ranges under `at_least` bytes are left alone: by
// default under two huge pages, which share their pages with other
// allocations (a caller that aligned its buffer passes kHugePageBytes).
inline void advise_huge_pages(const void* data, std::size_t bytes, std::size_t at_least = 2 * kHugePageBytes) {
#ifdef MADV_HUGEPAGE
  if (bytes < at_least) return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHugePageBytes - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
  (void)at_least;
#endif
}

// Moves `v` into a fresh buffer of `capacity` elements (>= its size), advised
// for huge pages before the elements are copied in, so that the copy itself
// faults huge pages (std::vector's own growth would fault 4 KiB ones).
template <class T>
void regrow(std::vector<T>& v, std::size_t capacity) {
  std::vector<T> fresh;
  fresh.reserve(capacity);
  advise_huge_pages(fresh.data(), capacity * sizeof(T));
  fresh.insert(fresh.end(), v.begin(), v.end());
  v.swap(fresh);
}

// Maps the pages of [data, data + bytes) (rounded out to whole 4 KiB pages,
// which hold the caller's own bytes) before they are written. Use it only for
// memory about to be filled, never for a capacity an untrusted count chose.
inline void populate(void* data, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  if (bytes < (16u << 10)) return;  // a few pages are cheaper to fault one by one
  constexpr std::uintptr_t kPage = 4096;
  const auto begin = reinterpret_cast<std::uintptr_t>(data) & ~(kPage - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes + kPage - 1) & ~(kPage - 1);
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)data;
  (void)bytes;
#endif
}

// Makes room for n values in a fresh column and maps it: for columns that
// are filled whole right after (derived columns, lookup tables).
template <class T>
void prepare_column(std::vector<T>& v, std::size_t n) {
  if (v.capacity() < n) {
    v.reserve(n);
    advise_huge_pages(v.data(), v.capacity() * sizeof(T));
  }
  populate(v.data() + v.size(), (n - std::min(n, v.size())) * sizeof(T));
}

}  // namespace gpuscope::detail
