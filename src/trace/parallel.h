// Running n independent jobs on a few threads: the one loop behind
// parallel_for() (analysis/util/parallel.h) and the Nsight Systems reader's
// table parts (import/nsys/row_parts.h).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace gpuscope {

// job(i) for i in [0, n) on up to `threads` threads (0 counts as 1). Every job runs whatever the others throw; the
// exception of the lowest failing i, if any, is rethrown once all are done.
template <class Job>
void run_jobs(std::size_t n, unsigned threads, Job&& job) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        job(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  // With more than one, all run on threads of their own and the caller
  // waits: jobs then allocate from those threads' malloc arenas, not the
  // caller's, which in Python's process also holds the interpreter's objects
  // (a job's freed memory there stays part of the process's peak).
  const std::size_t workers = std::min<std::size_t>(threads > 0 ? threads : 1, n);
  if (workers <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < workers; ++t) pool.emplace_back(work);
    for (std::thread& t : pool) t.join();
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace gpuscope
