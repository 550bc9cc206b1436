// The statistics of the selected time range (analysis/window_stats.h),
// computed on a worker thread: over a range of millions of GPU ops they take
// longer than a frame, and the timeline keeps drawing meanwhile. A newer
// request replaces one not started yet; a result is shown only for the range
// and the document it was asked for.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>

#include "analysis/window_stats.h"
#include "viewer/document.h"

namespace gpuscope::viewer {

class RangeStatsWorker {
 public:
  RangeStatsWorker() = default;
  ~RangeStatsWorker();
  RangeStatsWorker(const RangeStatsWorker&) = delete;
  RangeStatsWorker& operator=(const RangeStatsWorker&) = delete;

  // Computes window_stats(doc's trace, range) on the worker.
  void request(std::shared_ptr<const Document> doc, TimeRange range);
  // Forgets the request (its result, if it comes, is dropped).
  void clear();
  // The statistics of the latest request once ready; null before, or with none.
  std::shared_ptr<const WindowStats> result() const;
  // A request is waiting or being computed.
  bool busy() const;

 private:
  void run(std::stop_token stop);

  mutable std::mutex mutex_;
  std::condition_variable_any wake_;
  std::shared_ptr<const Document> doc_;  // the latest request
  TimeRange range_;
  bool pending_ = false;    // … not started yet
  bool computing_ = false;  // the worker is on a request
  std::shared_ptr<const WindowStats> done_;
  std::shared_ptr<const Document> done_doc_;
  TimeRange done_range_;
  std::jthread worker_;  // started by the first request; last member, so it stops first
};

}  // namespace gpuscope::viewer
