#include "analysis/util/parallel.h"

#include <thread>

#include "trace/parallel.h"

namespace gpuscope {

unsigned default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

void parallel_for(std::size_t n, unsigned jobs, const std::function<void(std::size_t)>& task) {
  run_jobs(n, jobs == 0 ? default_jobs() : jobs, task);
}

}  // namespace gpuscope
