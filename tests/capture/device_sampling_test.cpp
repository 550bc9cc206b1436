// Device sampling into the trace: samples of each source become counter
// series (name, device, unit) and rows, loss counts go to the stats and every
// source that cannot run leaves a line in the meta properties (NVML absent,
// --gpu-metrics none, no device, PM sampling refused).
#include "capture/device_sampling.h"

#include <gtest/gtest.h>

#include <atomic>

#include "trace/trace.h"

namespace gpuscope::capture {
namespace {

class TwoSeriesSource final : public SampleSource {
 public:
  explicit TwoSeriesSource(std::uint64_t fail_after = 0) : fail_after_(fail_after) {}
  const std::vector<SampleSeries>& series() const override { return series_; }
  bool read(std::int64_t now_ns, std::vector<Sample>* out) override {
    if (fail_after_ && ++reads_ > fail_after_) return false;
    out->push_back({now_ns, 0, 50});
    out->push_back({now_ns, 1, 1.5e9});
    return true;
  }
  std::string message() const override { return "device lost"; }

 private:
  std::uint64_t fail_after_, reads_ = 0;
  std::vector<SampleSeries> series_ = {{"hw.sm_active", 0, "%", "fake"}, {"hw.dram_read", 1, "B/s", "fake"}};
};

// Ten reads 1 ms apart, then waits until stop().
class TenReadsClock final : public SamplerClock {
 public:
  std::int64_t now_ns() override { return now_.load(); }
  bool wait_until(std::int64_t deadline, std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                  const bool& stop) override {
    if (deadline < 10'000'000) {
      now_.store(deadline);
      return !stop;
    }
    done.fetch_add(1);
    cv.wait(lock, [&] { return stop; });
    return false;
  }
  std::atomic<int> done{0};

 private:
  std::atomic<std::int64_t> now_{0};
};

TEST(DeviceSampling, SamplesBecomeCounterSeriesOfTheTrace) {
  TenReadsClock clock;
  DeviceSampling ds(clock);
  ds.add("pm_sampling", std::make_unique<TwoSeriesSource>(), 1'000'000, 1000);
  ds.note(kMetaGpuMetrics, "device 0 (GH100): sm_active at 10000 Hz");
  ds.start();
  while (clock.done.load() == 0) std::this_thread::yield();
  ds.stop();
  TraceBuilder b;
  Device d0, d1;
  d0.id = 0;
  d1.id = 1;
  b.add_device(d0);
  b.add_device(d1);
  ds.drain(b);
  ds.drain(b);  // nothing new: no duplicates
  const Trace t = b.freeze();
  const std::uint32_t sm = t.find_counter_series("hw.sm_active", 0);
  const std::uint32_t dram = t.find_counter_series("hw.dram_read", 1);
  ASSERT_NE(sm, kNoSeries);
  ASSERT_NE(dram, kNoSeries);
  EXPECT_EQ(t.counter_series()[sm].unit, "%");
  EXPECT_EQ(t.counter_series()[dram].unit, "B/s");
  EXPECT_EQ(t.counters().size(), 20u);
  EXPECT_EQ(t.meta().stat("capture.samples.pm_sampling.read"), 20u);
  EXPECT_EQ(t.meta().stat("capture.samples.pm_sampling.lost"), 0u);
  EXPECT_EQ(t.meta().property(kMetaGpuMetrics), "device 0 (GH100): sm_active at 10000 Hz");
}

TEST(DeviceSampling, AFullRingAndAFailingSourceAreSaid) {
  TenReadsClock clock;
  DeviceSampling ds(clock);
  ds.add("nvml", std::make_unique<TwoSeriesSource>(4), 1'000'000, 5);
  ds.start();
  TraceBuilder b;
  // The source fails after four reads: the sampler ends by itself.
  for (int i = 0; i < 1000 && b.meta().property(kMetaNvml).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ds.drain(b);
  }
  ds.stop();
  ds.drain(b);
  EXPECT_EQ(b.meta().stat("capture.samples.nvml.read"), 8u);
  EXPECT_EQ(b.meta().stat("capture.samples.nvml.lost") + b.tables().counters.size(), 8u);
  EXPECT_NE(std::string(b.meta().property(kMetaNvml)).find("sampling stopped: device lost"), std::string::npos);
}

TEST(DeviceSampling, WhatCannotBeSampledIsNamedInTheMeta) {
  auto clock = system_sampler_clock();
  Options o;
  {
    auto ds = open_device_sampling(o, 0, *clock, "libnvidia-ml-absent.so.1", "no CUDA device: no driver");
    TraceBuilder b;
    ds->drain(b);
    EXPECT_EQ(ds->sources(), 0u);
    EXPECT_NE(std::string(b.meta().property(kMetaNvml)).find("off: NVML not loaded: libnvidia-ml-absent.so.1"),
              std::string::npos)
        << b.meta().property(kMetaNvml);
    EXPECT_EQ(b.meta().property(kMetaGpuMetrics), "off: no CUDA device: no driver");
  }
  {
    o.gpu_metrics = "none";
    auto ds = open_device_sampling(o, 1, *clock, "libnvidia-ml-absent.so.1");
    TraceBuilder b;
    ds->drain(b);
    EXPECT_EQ(b.meta().property(kMetaGpuMetrics), "off: --gpu-metrics none");
  }
  {
    o.gpu_metrics = "default";
    auto ds = open_device_sampling(o, 1, *clock, "libnvidia-ml-absent.so.1");
    TraceBuilder b;
    ds->drain(b);
    if (ds->sources() != 0) GTEST_SKIP() << "PM sampling works here (a GPU): tests/gpu checks it";
    // Without a GPU, CUPTI refuses: the reason names the device and the call.
    const std::string m(b.meta().property(kMetaGpuMetrics));
    EXPECT_EQ(m.rfind("device 0: off: ", 0), 0u) << m;
    EXPECT_NE(m.find("(cupti"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace gpuscope::capture
