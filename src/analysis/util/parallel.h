// parallel_for(): n independent tasks on up to `jobs` threads. Each task
// writes only its own slot of the caller's results, so the outcome does not
// depend on `jobs`; the exception of the lowest failing index (if any) is
// rethrown once every task has finished.
#pragma once

#include <cstddef>
#include <functional>

namespace gpuscope {

// The default for `jobs` (0): every core the machine has.
unsigned default_jobs();

void parallel_for(std::size_t n, unsigned jobs, const std::function<void(std::size_t)>& task);

}  // namespace gpuscope
