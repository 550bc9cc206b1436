// The sampling thread and its ring, against a fake source and a fake clock:
// reads come one period apart, a full ring counts what it could not keep,
// a failing source stops sampling with its reason, stop() ends the thread at
// once (also while it waits a long period on the real clock).
#include "capture/sampler.h"

#include <gtest/gtest.h>

#include <atomic>

namespace gpuscope::capture {
namespace {

// Gives `per_read` samples per read, each stamped with the read's time; fails
// after `fail_after` reads when that is not 0.
class FakeSource final : public SampleSource {
 public:
  explicit FakeSource(std::uint32_t per_read, std::uint64_t fail_after = 0)
      : per_read_(per_read), fail_after_(fail_after) {
    for (std::uint32_t i = 0; i < per_read; ++i) {
      std::string name = "s";
      name += std::to_string(i);
      series_.push_back({name, 0, "%", "fake"});
    }
  }
  const std::vector<SampleSeries>& series() const override { return series_; }
  bool read(std::int64_t now_ns, std::vector<Sample>* out) override {
    ++reads;
    if (fail_after_ && reads > fail_after_) return false;
    for (std::uint32_t i = 0; i < per_read_; ++i) out->push_back({now_ns, i, static_cast<double>(reads)});
    return true;
  }
  std::string message() const override { return "fake device went away"; }
  std::atomic<std::uint64_t> reads{0};

 private:
  std::uint32_t per_read_;
  std::uint64_t fail_after_;
  std::vector<SampleSeries> series_;
};

// Time moves only when the sampler waits, up to `end_ns`; past it the
// sampler waits until stop().
class FakeClock final : public SamplerClock {
 public:
  explicit FakeClock(std::int64_t start_ns, std::int64_t end_ns) : now_(start_ns), end_(end_ns) {}
  std::int64_t now_ns() override { return now_.load(); }
  bool wait_until(std::int64_t deadline_ns, std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                  const bool& stop) override {
    if (deadline_ns <= end_) {
      now_.store(deadline_ns);
      return !stop;
    }
    reached_end.store(true);
    cv.wait(lock, [&] { return stop; });
    return false;
  }
  std::atomic<bool> reached_end{false};

 private:
  std::atomic<std::int64_t> now_;
  const std::int64_t end_;
};

void wait_for(const std::atomic<bool>& flag) {
  while (!flag.load()) std::this_thread::yield();
}

TEST(SampleRing, KeepsOrderAndCountsWhatDoesNotFit) {
  SampleRing ring(4);
  EXPECT_EQ(ring.push({{1, 0, 1}, {2, 0, 2}, {3, 0, 3}}), 0u);
  std::vector<Sample> out;
  EXPECT_EQ(ring.drain(&out), 3u);
  EXPECT_EQ(ring.push({{4, 0, 4}, {5, 0, 5}, {6, 0, 6}, {7, 0, 7}, {8, 0, 8}}), 1u);  // wraps around, one too many
  EXPECT_EQ(ring.size(), 4u);
  EXPECT_EQ(ring.drain(&out), 4u);
  ASSERT_EQ(out.size(), 7u);
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].time_ns, static_cast<std::int64_t>(i + 1));
  EXPECT_EQ(ring.size(), 0u);
}

TEST(Sampler, ReadsOncePerPeriodAtTheRateAsked) {
  // 10 kHz for one (fake) second: 10001 reads, 100 µs apart.
  FakeSource source(2);
  FakeClock clock(1'000'000'000, 2'000'000'000);
  Sampler sampler(source, 100'000, 1 << 16, clock);
  sampler.start();
  wait_for(clock.reached_end);
  sampler.stop();
  EXPECT_FALSE(sampler.running());
  const SamplerStats st = sampler.stats();
  EXPECT_EQ(st.reads, 10001u);
  EXPECT_EQ(st.samples, 20002u);
  EXPECT_EQ(st.lost, 0u);
  EXPECT_FALSE(st.failed);
  std::vector<Sample> out;
  ASSERT_EQ(sampler.drain(&out), 20002u);
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].series, i % 2);
    ASSERT_EQ(out[i].time_ns, 1'000'000'000 + static_cast<std::int64_t>(i / 2) * 100'000) << i;
  }
}

TEST(Sampler, AFullRingCountsTheSamplesLost) {
  FakeSource source(3);
  FakeClock clock(0, 99 * 1'000'000);  // 100 reads at 1 kHz
  Sampler sampler(source, 1'000'000, 250, clock);
  sampler.start();
  wait_for(clock.reached_end);
  sampler.stop();
  const SamplerStats st = sampler.stats();
  EXPECT_EQ(st.reads, 100u);
  EXPECT_EQ(st.samples, 300u);
  EXPECT_EQ(st.lost, 50u);
  std::vector<Sample> out;
  EXPECT_EQ(sampler.drain(&out), 250u);
  EXPECT_EQ(out.back().time_ns, 83 * 1'000'000);  // the oldest are kept: the 84th read fit only partly
  EXPECT_EQ(st.samples, out.size() + st.lost);
}

TEST(Sampler, AFailingSourceStopsSamplingWithItsReason) {
  FakeSource source(1, 5);
  FakeClock clock(0, 1'000'000'000);
  Sampler sampler(source, 1'000'000, 100, clock);
  sampler.start();
  while (!sampler.stats().failed) std::this_thread::yield();
  sampler.stop();
  const SamplerStats st = sampler.stats();
  EXPECT_EQ(st.reads, 6u);
  EXPECT_EQ(st.samples, 5u);
  EXPECT_EQ(st.message, "fake device went away");
}

TEST(Sampler, StopEndsTheThreadWithoutWaitingForThePeriod) {
  // A one-hour period on the real clock: stop() must not wait for it (the
  // test would hang, and ctest's timeout would fail it).
  FakeSource source(1);
  auto clock = system_sampler_clock();
  Sampler sampler(source, 3'600'000'000'000, 16, *clock);
  sampler.start();
  while (source.reads.load() == 0) std::this_thread::yield();
  sampler.stop();
  EXPECT_FALSE(sampler.running());
  EXPECT_EQ(sampler.stats().reads, 1u);
  std::vector<Sample> out;
  EXPECT_EQ(sampler.drain(&out), 1u);
  sampler.stop();  // twice is harmless
}

TEST(Sampler, DestroyingARunningSamplerStopsIt) {
  FakeSource source(1);
  auto clock = system_sampler_clock();
  {
    Sampler sampler(source, 1'000'000, 16, *clock);
    sampler.start();
    while (source.reads.load() == 0) std::this_thread::yield();
  }
  const std::uint64_t reads = source.reads.load();
  EXPECT_GE(reads, 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(source.reads.load(), reads);  // nothing reads after the destructor
}

}  // namespace
}  // namespace gpuscope::capture
