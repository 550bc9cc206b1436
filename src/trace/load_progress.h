// Progress reporting and cancellation for long loads (the viewer shows a
// progress bar while a multi-GB file loads on a worker thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace gpuscope {

struct LoadProgress {
  // Called now and then from the loading thread with bytes consumed so far and
  // the total (0 if unknown). Must be cheap and thread-safe.
  std::function<void(std::uint64_t done, std::uint64_t total)> on_progress;
  // When set and true, the loader stops early and throws InputError("cancelled").
  const std::atomic<bool>* cancel = nullptr;
};

}  // namespace gpuscope
