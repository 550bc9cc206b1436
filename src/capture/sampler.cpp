#include "capture/sampler.h"

#include <time.h>

#include <algorithm>
#include <chrono>

namespace gpuscope::capture {

// [SECTION] Ring ---------------------------------------------------------------------------------

SampleRing::SampleRing(std::size_t capacity) : buffer_(std::max<std::size_t>(capacity, 1)) {}

std::size_t SampleRing::push(const std::vector<Sample>& samples) {
  std::lock_guard lock(mutex_);
  const std::size_t room = buffer_.size() - count_;
  const std::size_t kept = std::min(room, samples.size());
  for (std::size_t i = 0; i < kept; ++i) buffer_[(head_ + count_ + i) % buffer_.size()] = samples[i];
  count_ += kept;
  return samples.size() - kept;
}

std::size_t SampleRing::drain(std::vector<Sample>* out) {
  std::lock_guard lock(mutex_);
  const std::size_t n = count_;
  out->reserve(out->size() + n);
  for (std::size_t i = 0; i < n; ++i) out->push_back(buffer_[(head_ + i) % buffer_.size()]);
  head_ = (head_ + n) % buffer_.size();
  count_ = 0;
  return n;
}

std::size_t SampleRing::size() const {
  std::lock_guard lock(mutex_);
  return count_;
}

// [SECTION] Clock --------------------------------------------------------------------------------

namespace {

class SystemClock final : public SamplerClock {
 public:
  std::int64_t now_ns() override {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }
  bool wait_until(std::int64_t deadline_ns, std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                  const bool& stop) override {
    const auto deadline = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::nanoseconds(deadline_ns)));
    cv.wait_until(lock, deadline, [&] { return stop; });
    return !stop;
  }
};

}  // namespace

std::unique_ptr<SamplerClock> system_sampler_clock() { return std::make_unique<SystemClock>(); }

// [SECTION] Sampler ------------------------------------------------------------------------------

Sampler::Sampler(SampleSource& source, std::int64_t period_ns, std::size_t ring_capacity, SamplerClock& clock)
    : source_(source), period_ns_(std::max<std::int64_t>(period_ns, 1)), clock_(clock), ring_(ring_capacity) {}

Sampler::~Sampler() { stop(); }

void Sampler::start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = false;
  }
  thread_ = std::thread([this] { run(); });
}

void Sampler::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

SamplerStats Sampler::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void Sampler::run() {
  std::vector<Sample> batch;
  std::int64_t next = clock_.now_ns();
  std::unique_lock lock(mutex_);
  while (!stop_) {
    lock.unlock();
    batch.clear();
    bool ok = false;
    std::string why;
    try {
      ok = source_.read(clock_.now_ns(), &batch);
      if (!ok) why = source_.message();
    } catch (const std::exception& e) {
      why = e.what();
    }
    const std::size_t lost = ring_.push(batch);
    lock.lock();
    ++stats_.reads;
    stats_.samples += batch.size();
    stats_.lost += lost;
    if (!ok) {
      stats_.failed = true;
      stats_.message = why.empty() ? "the sample source failed" : why;
      return;
    }
    // Periods missed while a read took longer are skipped, not caught up in a burst.
    next += period_ns_;
    const std::int64_t now = clock_.now_ns();
    if (next < now) next = now;
    if (!clock_.wait_until(next, lock, cv_, stop_)) return;
  }
}

}  // namespace gpuscope::capture
