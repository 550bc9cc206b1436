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

// job(i) for i in [0, n) on up to `threads` threads (0 counts as 1), the
// calling one among them. Every job runs whatever the others throw; the
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
  const std::size_t workers = std::min<std::size_t>(threads > 0 ? threads : 1, n);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace gpuscope
