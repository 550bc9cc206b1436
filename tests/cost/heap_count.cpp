// The cost driver's malloc (heap_count.h): glibc's allocator underneath
// (__libc_malloc and friends, which glibc exports for this), with the usable
// size of every block added to a count of live bytes and taken away when it
// is freed. glibc sends its own internal allocations, and libstdc++'s
// operator new, through these symbols once a program defines them.
#include "cost/heap_count.h"

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

extern "C" {
void* __libc_malloc(std::size_t n);
void* __libc_calloc(std::size_t count, std::size_t n);
void* __libc_realloc(void* p, std::size_t n);
void* __libc_memalign(std::size_t align, std::size_t n);
void __libc_free(void* p);
}

namespace {

std::atomic<std::int64_t> live{0}, peak{0}, base{0};

void added(void* p) {
  if (!p) return;
  const auto bytes = static_cast<std::int64_t>(malloc_usable_size(p));
  const std::int64_t now = live.fetch_add(bytes) + bytes;
  std::int64_t seen = peak.load(std::memory_order_relaxed);
  while (now > seen && !peak.compare_exchange_weak(seen, now)) {
  }
}

void removed(void* p) {
  if (p) live.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)));
}

}  // namespace

namespace gpuscope::cost {

void start_heap_stretch() {
  base = live.load();
  peak = base.load();
}

std::int64_t heap_stretch_peak() { return peak.load() - base.load(); }

}  // namespace gpuscope::cost

extern "C" {

void* malloc(std::size_t n) noexcept {
  void* p = __libc_malloc(n);
  added(p);
  return p;
}

void free(void* p) noexcept {
  removed(p);
  __libc_free(p);
}

void* calloc(std::size_t count, std::size_t n) noexcept {
  void* p = __libc_calloc(count, n);
  added(p);
  return p;
}

void* realloc(void* p, std::size_t n) noexcept {
  const std::size_t old = p ? malloc_usable_size(p) : 0;
  void* q = __libc_realloc(p, n);
  if (q) {
    live.fetch_sub(static_cast<std::int64_t>(old));
    added(q);
  } else if (p && n == 0) {
    live.fetch_sub(static_cast<std::int64_t>(old));  // realloc(p, 0) freed p
  }
  return q;
}

void* reallocarray(void* p, std::size_t count, std::size_t n) noexcept {
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(count, n, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, bytes);
}

void* memalign(std::size_t align, std::size_t n) noexcept {
  void* p = __libc_memalign(align, n);
  added(p);
  return p;
}

void* aligned_alloc(std::size_t align, std::size_t n) noexcept { return memalign(align, n); }

int posix_memalign(void** out, std::size_t align, std::size_t n) noexcept {
  if (align < sizeof(void*) || (align & (align - 1)) != 0) return EINVAL;
  void* p = memalign(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(std::size_t n) noexcept { return memalign(static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), n); }

void* pvalloc(std::size_t n) noexcept {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return memalign(page, (n + page - 1) / page * page);
}

}  // extern "C"
