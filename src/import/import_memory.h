// Memory of the importer: text buffers and column growth on huge pages
// (internal to src/import/).
//
// Why: first touches of fresh memory are the importer's largest hidden cost
// on the reference VM: a 4 KiB page fault costs ~13 µs there (paravirtualised
// MMU; measured with a 64 MiB mmap touched page by page), so that memory is
// first written at ~0.3 GB/s, slower than the parse. A 2 MiB transparent huge
// page costs about as much as one small page, i.e. ~25-50x less per byte.
//
// Text buffers: the stream's 4 MiB batch buffers (up to six) are 2 MiB-aligned and
// advised for huge pages (3 faults each instead of 1024).
//
// Columns: the importer appends rows to TraceBuilder's std::vector columns one
// push_back at a time, so each column grows by doubling: every step allocates
// fresh memory, copies the old rows and frees them. On the reference VM a
// first-touch page fault costs several µs (paravirtualised MMU), and a 268 MB
// Kineto file touched ~13k pages this way: ~20% of the calling thread's time.
// Growing each column in one step before a batch, into memory advised for
// transparent huge pages (MADV_HUGEPAGE; the system's THP mode is usually
// "madvise"), cuts the faults ~500x and the copies to one per doubling.
//
// Only speed depends on this: a batch that adds more rows than expected makes
// the vectors grow by themselves, as before. Rows and their order are never
// touched (the copy is element-wise and complete; tests check it).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "trace/fresh_memory.h"
#include "trace/tables.h"

namespace gpuscope::detail {

// kHugePageBytes, advise_huge_pages() and regrow() are trace/fresh_memory.h's.

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using TextBuffer = std::unique_ptr<char[], FreeDeleter>;

// A text buffer of `bytes` bytes (contents unspecified): 2 MiB-aligned and
// advised for huge pages when it is at least 2 MiB, so that filling it faults
// a few huge pages rather than a thousand small ones.
inline TextBuffer alloc_text_buffer(std::size_t bytes) {
  const bool huge = bytes >= kHugePageBytes;
  const std::size_t align = huge ? kHugePageBytes : 64;
  const std::size_t size = (bytes + align - 1) & ~(align - 1);  // aligned_alloc wants a multiple
  char* p = static_cast<char*>(std::aligned_alloc(align, size));
  if (!p) throw std::bad_alloc();
  if (huge) advise_huge_pages(p, size, kHugePageBytes);  // aligned: one huge page is worth it
  return TextBuffer(p);
}

// Makes room for `headroom` more rows in `col` if it lacks it, in one step
// to `target` rows (the importer's estimate of the final count; at least
// size + headroom and 1.5 x capacity, so growth stays geometric when the
// estimate is low): a new buffer, advised for huge pages before the rows are
// copied in, so that the copy itself faults huge pages.
//
// `untouched`, if given, receives the new buffer's part beyond the copied rows
// (memory not touched yet), for prefault_pages() on another thread.
struct MemoryRange {
  void* begin;
  std::size_t bytes;
};

template <class T>
void grow_column(std::vector<T>& col, std::size_t headroom, std::size_t target,
                 std::vector<MemoryRange>* untouched = nullptr) {
  if (col.capacity() - col.size() >= headroom) return;
  const std::size_t cap = std::max({target, col.size() + headroom, col.capacity() + col.capacity() / 2});
  regrow(col, cap);
  if (untouched) untouched->push_back(MemoryRange{col.data() + col.size(), (col.capacity() - col.size()) * sizeof(T)});
}

// grow_column on every column of `table` that rows will be appended to
// (stored columns; sparse ones only once they hold values).
template <class Table>
void grow_table(Table& table, std::size_t headroom, std::size_t target, std::vector<MemoryRange>* untouched = nullptr) {
  table.for_each_column([&](ColumnInfo info, auto& col) {
    if (info.flags & kDerived) return;
    if ((info.flags & kSparse) && col.empty()) return;
    grow_column(col, headroom, target, untouched);
  });
}

// Faults in the whole pages of `r` as writable (MADV_POPULATE_WRITE, Linux
// 5.14+) without writing them: one system call instead of a trap per page
// (~7 µs against ~13 µs a page on the reference VM), and it can run on a
// thread with time to spare while another fills the memory. Never changes
// what the memory holds, so it is harmless on memory another thread writes,
// or that has been freed and reused meanwhile (then it fails or faults in
// pages of the new owner). Advice only: failure changes nothing but speed.
inline void prefault_pages(const MemoryRange& r) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  constexpr std::uintptr_t kPage = 4096;
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(r.begin) + kPage - 1) & ~(kPage - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(r.begin) + r.bytes) & ~(kPage - 1);
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)r;
#endif
}

}  // namespace gpuscope::detail
