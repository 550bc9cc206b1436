// Periodic sampling of device state (NVML, hardware counters) on a thread of
// the capture's own, into a bounded ring the capture drains as it writes.
//
// A SampleSource says which series it has and appends what it reads now;
// the Sampler calls it every period until stop(). When the ring is full the
// newest samples are not kept and are counted as lost (never silently
// dropped). The clock is an interface so that tests run the thread against a
// fake source and a fake clock, without real waiting.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpuscope::capture {

// One series a source samples: "sm_clock" of device 0 in MHz from "nvml".
struct SampleSeries {
  std::string name;
  std::uint32_t device = 0;
  std::string unit;
  std::string source;  // "nvml", "cupti-pm-sampling"

  friend bool operator==(const SampleSeries&, const SampleSeries&) = default;
};

struct Sample {
  std::int64_t time_ns = 0;
  std::uint32_t series = 0;  // index into the source's series()
  double value = 0;

  friend bool operator==(const Sample&, const Sample&) = default;
};

class SampleSource {
 public:
  virtual ~SampleSource() = default;
  virtual const std::vector<SampleSeries>& series() const = 0;
  // Appends the samples available at `now_ns`. A failed read of one value is
  // counted by the source, not fatal; false stops sampling (message() says why).
  virtual bool read(std::int64_t now_ns, std::vector<Sample>* out) = 0;
  virtual std::string message() const { return {}; }
  // Times the source itself lost samples (a hardware buffer that overflowed).
  virtual std::uint64_t overflows() const { return 0; }
};

// A bounded FIFO of samples shared by the sampling thread and the consumer.
class SampleRing {
 public:
  explicit SampleRing(std::size_t capacity);
  // Keeps as many of `samples` as fit; returns how many did not.
  std::size_t push(const std::vector<Sample>& samples);
  // Moves everything queued to the end of *out; returns how many.
  std::size_t drain(std::vector<Sample>* out);
  std::size_t capacity() const { return buffer_.size(); }
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::vector<Sample> buffer_;
  std::size_t head_ = 0, count_ = 0;
};

class SamplerClock {
 public:
  virtual ~SamplerClock() = default;
  virtual std::int64_t now_ns() = 0;
  // Waits until `deadline_ns` or until `stop` (checked under the sampler's
  // lock through `wait`); returns false when it stopped early.
  virtual bool wait_until(std::int64_t deadline_ns, std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                          const bool& stop) = 0;
};
// CLOCK_REALTIME (CUPTI's timestamps), waiting on the condition variable.
std::unique_ptr<SamplerClock> system_sampler_clock();

struct SamplerStats {
  std::uint64_t reads = 0;    // times the source was read
  std::uint64_t samples = 0;  // samples the source gave
  std::uint64_t lost = 0;     // samples that did not fit the ring
  bool failed = false;        // the source stopped sampling
  std::string message;        // why it stopped, when it failed
};

class Sampler {
 public:
  // Reads `source` every `period_ns` on its own thread (after start()) into a
  // ring of `ring_capacity` samples. The source and clock must outlive it.
  Sampler(SampleSource& source, std::int64_t period_ns, std::size_t ring_capacity, SamplerClock& clock);
  ~Sampler();  // stops
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  void start();
  // Ends the thread (at once, not at the next period) and keeps what was read.
  void stop();
  bool running() const { return thread_.joinable(); }

  std::size_t drain(std::vector<Sample>* out) { return ring_.drain(out); }
  SamplerStats stats() const;
  const SampleRing& ring() const { return ring_; }

 private:
  void run();

  SampleSource& source_;
  const std::int64_t period_ns_;
  SamplerClock& clock_;
  SampleRing ring_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  SamplerStats stats_;
  std::thread thread_;
};

}  // namespace gpuscope::capture
