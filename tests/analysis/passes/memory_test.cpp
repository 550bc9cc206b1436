// Memory: peaks per GPU and per step from the memory series, unknown where
// the trace has none, and the two memory findings on planted cases.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/diff.h"
#include "support/findings.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;

constexpr TimeNs us = 1'000;
constexpr TimeNs ms = 1'000'000;
constexpr std::uint64_t GiB = std::uint64_t{1} << 30;

// Numbered or minor: larger-batch-fits is advice with no saving of its own.
const Finding* find(const Profile& p, std::string_view id) { return testing::find_any_finding(p, id); }

struct Plan {
  std::uint64_t capacity = 40 * GiB;
  std::uint64_t persistent = 1 * GiB;  // allocated through every step
  std::uint64_t per_step = 2 * GiB;    // allocated and freed within each step
  std::uint64_t reserved = 0;          // 0: no reserved series
  int steps = 5;
  int allocator_calls_per_step = 0;
  const char* allocator_call = "cudaFree";
};

// `steps` steps on GPU 0 (NVTX "step i", 10 ms each, a kernel filling each),
// the allocated series stepping from the persistent level up by per_step in
// the middle of each step and back at its end; before the first step the
// level is 0 (the model not loaded yet).
Trace planned(const Plan& plan) {
  TraceFactory f;
  Device d;
  d.id = 0;
  d.name = "Test GPU";
  d.sm_count = 80;
  d.compute_major = 8;
  d.memory_bytes = plan.capacity;
  f.builder().add_device(d);
  TraceBuilder& b = f.builder();
  const std::uint32_t alloc = b.counter_series(series_name::kMemoryAllocated, 0, "B");
  const std::uint32_t reserved = plan.reserved ? b.counter_series(series_name::kMemoryReserved, 0, "B") : 0;
  b.add_counter(CounterRow{0, alloc, 0});
  b.add_counter(CounterRow{500 * us, alloc, double(plan.persistent)});
  if (plan.reserved) b.add_counter(CounterRow{500 * us, reserved, double(plan.reserved)});
  for (int s = 0; s < plan.steps; ++s) {
    const TimeNs t0 = 1 * ms + s * 10 * ms;
    f.kernel(0, 7, "gemm_kernel", t0 + 100 * us, t0 + 9900 * us, t0);
    f.range("step " + std::to_string(s), t0, t0 + 10 * ms);
    b.add_counter(CounterRow{t0 + 5 * ms, alloc, double(plan.persistent + plan.per_step)});
    b.add_memory_event(MemoryEventRow{t0 + 5 * ms, alloc, std::int64_t(plan.per_step), 0x1000});
    b.add_counter(CounterRow{t0 + 9 * ms, alloc, double(plan.persistent)});
    b.add_memory_event(MemoryEventRow{t0 + 9 * ms, alloc, -std::int64_t(plan.per_step), 0x1000});
    for (int c = 0; c < plan.allocator_calls_per_step; ++c)
      f.api(plan.allocator_call, t0 + 200 * us + c * 10 * us, t0 + 205 * us + c * 10 * us);
  }
  return f.build();
}

TEST(Memory, PeaksPerGpuAndPerStep) {
  const Profile p = analyze(planned({}));
  ASSERT_EQ(p.devices.size(), 1u);
  const DeviceSummary& d = p.devices[0];
  ASSERT_TRUE(d.memory_bytes);
  EXPECT_EQ(*d.memory_bytes, 40 * GiB);
  ASSERT_TRUE(d.peak_allocated_bytes);
  EXPECT_EQ(*d.peak_allocated_bytes, 3 * GiB);
  EXPECT_FALSE(d.peak_reserved_bytes);  // no reserved series: unknown, not 0
  ASSERT_EQ(p.steps.steps.size(), 5u);
  for (const Step& s : p.steps.steps) {
    ASSERT_TRUE(s.peak_allocated_bytes) << s.name;
    EXPECT_EQ(*s.peak_allocated_bytes, 3 * GiB) << s.name;
    ASSERT_TRUE(s.min_allocated_bytes) << s.name;
    EXPECT_EQ(*s.min_allocated_bytes, 1 * GiB) << s.name;  // the level at the step's start counts
  }
}

TEST(Memory, UnknownWithoutMemorySeries) {
  TraceFactory f;
  f.device(0);
  f.kernel(0, 7, "k", 1 * ms, 2 * ms);
  f.range("step 0", 1 * ms, 3 * ms);
  const Profile p = analyze(f.build());
  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_FALSE(p.devices[0].memory_bytes);
  EXPECT_FALSE(p.devices[0].peak_allocated_bytes);
  EXPECT_FALSE(p.devices[0].peak_reserved_bytes);
  for (const Step& s : p.steps.steps) EXPECT_FALSE(s.peak_allocated_bytes);
  EXPECT_FALSE(find(p, "larger-batch-fits"));
  EXPECT_FALSE(find(p, "memory-pressure"));
}

// 3 GiB of 40 GiB at the peak, 1 GiB of it persistent: (0.9 × 40 − 1) / 2 = 17.5.
TEST(Memory, LargerBatchFitsWithAnEstimate) {
  const Profile p = analyze(planned({}));
  const Finding* f = find(p, "larger-batch-fits");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::info);
  EXPECT_DOUBLE_EQ(f->metric, 3.0 / 40.0);
  EXPECT_DOUBLE_EQ(f->threshold, 0.5);
  EXPECT_NE(f->title.find("3.00 GiB of 40.00 GiB"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("about 17× larger"), std::string::npos) << f->title;
  EXPECT_NE(f->evidence.find("1.00 GiB stays allocated"), std::string::npos) << f->evidence;
  EXPECT_FALSE(find(p, "memory-pressure"));

  Plan half;
  half.persistent = 10 * GiB;
  half.per_step = 11 * GiB;  // 21 of 40 GiB: above half, no finding
  EXPECT_FALSE(find(analyze(planned(half)), "larger-batch-fits"));
}

TEST(Memory, CloseToCapacityWithFragmentation) {
  Plan plan;
  plan.capacity = 16 * GiB;
  plan.persistent = 6 * GiB;
  plan.per_step = 4 * GiB;
  plan.reserved = 15 * GiB + GiB / 2;  // 96.9 % of the memory, 1.55× the 10 GiB allocated
  const Profile p = analyze(planned(plan));
  const Finding* f = find(p, "memory-pressure");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::warning);
  EXPECT_NEAR(f->metric, 15.5 / 16, 1e-12);
  EXPECT_EQ(f->device, 0u);
  EXPECT_NE(f->title.find("reserved 15.50 GiB vs 10.00 GiB allocated"), std::string::npos) << f->title;
  EXPECT_FALSE(find(p, "larger-batch-fits"));

  plan.reserved = 15 * GiB;  // 1.5× still; 93.8 %
  EXPECT_TRUE(find(analyze(planned(plan)), "memory-pressure"));
  plan.reserved = 14 * GiB;  // 87.5 %, 1.4×: neither close nor fragmented
  EXPECT_FALSE(find(analyze(planned(plan)), "memory-pressure"));
  plan.reserved = 12 * GiB;  // 75 %: not close
  plan.allocator_calls_per_step = 4;
  EXPECT_FALSE(find(analyze(planned(plan)), "memory-pressure"));
}

TEST(Memory, CloseToCapacityWithDirectAllocatorCalls) {
  Plan plan;
  plan.capacity = 16 * GiB;
  plan.persistent = 12 * GiB;
  plan.per_step = 3 * GiB;
  plan.reserved = 15 * GiB + GiB / 2 + GiB / 4;  // 98.4 %, only 1.05× allocated
  plan.allocator_calls_per_step = 2;
  const Profile p = analyze(planned(plan));
  const Finding* f = find(p, "memory-pressure");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::critical);
  EXPECT_NE(f->title.find("10 cudaMalloc/cudaFree calls"), std::string::npos) << f->title;
  EXPECT_EQ(f->saving_ns, 10 * 5 * us);  // the calls' time
  EXPECT_EQ(f->ranges.size(), 10u);

  plan.allocator_call = "cudaMallocAsync";  // stream-ordered: not churn
  EXPECT_FALSE(find(analyze(planned(plan)), "memory-pressure"));
  plan.allocator_call = "cudaFreeHost";  // pinned host memory: not the GPU's
  EXPECT_FALSE(find(analyze(planned(plan)), "memory-pressure"));
}

TEST(Memory, DiffShowsPeakChanges) {
  Plan more;
  more.per_step = 6 * GiB;
  more.reserved = 8 * GiB;
  const ProfileDiff d = diff_profiles(analyze(planned({})), analyze(planned(more)));
  ASSERT_TRUE(d.before_peak_allocated && d.after_peak_allocated);
  EXPECT_EQ(*d.before_peak_allocated, 3 * GiB);
  EXPECT_EQ(*d.after_peak_allocated, 7 * GiB);
  EXPECT_FALSE(d.before_peak_reserved);
  ASSERT_TRUE(d.after_peak_reserved);
  EXPECT_EQ(*d.after_peak_reserved, 8 * GiB);
  bool said = false;
  for (const std::string& s : d.summary) said = said || s.find("Peak memory allocated 3.00 GiB -> 7.00 GiB") == 0;
  EXPECT_TRUE(said);

  auto plain = [] {
    TraceFactory f;
    f.device(0);
    f.kernel(0, 7, "k", 1 * ms, 2 * ms);
    return f.build();
  };
  const ProfileDiff none = diff_profiles(analyze(plain()), analyze(plain()));
  EXPECT_FALSE(none.before_peak_allocated);
  EXPECT_FALSE(none.after_peak_allocated);
  for (const std::string& s : none.summary) EXPECT_EQ(s.find("Peak memory"), std::string::npos) << s;
}

}  // namespace
}  // namespace gpuscope
