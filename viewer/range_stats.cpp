#include "viewer/range_stats.h"

namespace gpuscope::viewer {

RangeStatsWorker::~RangeStatsWorker() = default;  // worker_ goes first: stopped and joined

void RangeStatsWorker::request(std::shared_ptr<const Document> doc, TimeRange range) {
  {
    std::lock_guard lock(mutex_);
    doc_ = std::move(doc);
    range_ = range;
    pending_ = doc_ != nullptr;
  }
  if (!worker_.joinable()) worker_ = std::jthread([this](std::stop_token stop) { run(stop); });
  wake_.notify_one();
}

void RangeStatsWorker::clear() {
  std::lock_guard lock(mutex_);
  doc_.reset();
  pending_ = false;
}

std::shared_ptr<const WindowStats> RangeStatsWorker::result() const {
  std::lock_guard lock(mutex_);
  if (!doc_ || pending_ || done_doc_ != doc_ || !(done_range_ == range_)) return nullptr;
  return done_;
}

bool RangeStatsWorker::busy() const {
  std::lock_guard lock(mutex_);
  return pending_ || (computing_ && doc_ != nullptr);
}

void RangeStatsWorker::run(std::stop_token stop) {
  std::unique_lock lock(mutex_);
  while (!stop.stop_requested()) {
    if (!wake_.wait(lock, stop, [&] { return pending_; })) return;
    std::shared_ptr<const Document> doc = doc_;
    const TimeRange range = range_;
    pending_ = false;
    computing_ = true;
    lock.unlock();
    auto stats = std::make_shared<const WindowStats>(window_stats(doc->trace(), range));
    lock.lock();
    computing_ = false;
    done_ = std::move(stats);
    done_doc_ = std::move(doc);
    done_range_ = range;
  }
}

}  // namespace gpuscope::viewer
