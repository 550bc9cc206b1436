// Every metric of analyze() on small traces whose numbers are worked out by
// hand in the comments.
#include <gtest/gtest.h>
#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <tuple>

#include "analysis/analyze.h"
#include "analysis/util/stats.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;
namespace names = testing::names;

// Device 0 with 10 SMs:
//   stream 1: conv  [0,100)   10 blocks, launched by a call [-50,-40)
//             relu  [150,250)  5 blocks, launched [130,140)
//   stream 2: nccl  [50,120)   1 block,  launched [10,20)
//   stream 3: memcpy HtoD pageable [200,300), launched [180,190)
Trace small_trace() {
  TraceFactory f;
  f.device(0, 10);
  f.kernel(0, 1, names::kConvTensorCore, 0, 100, -50, 10, 10);
  f.kernel(0, 1, names::kRelu, 150, 250, 130, 10, 5);
  f.kernel(0, 2, names::kAllReduce, 50, 120, 10, 10, 1);
  f.memcpy(0, 3, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, 1000, 200, 300, "cudaMemcpyAsync", 180, 10);
  return f.build();
}

TEST(Metrics, DeviceSummaryOfAHandWorkedTrace) {
  const Trace t = small_trace();
  const Profile p = analyze(t);
  ASSERT_EQ(p.devices.size(), 1u);
  const DeviceSummary& d = p.devices[0];
  EXPECT_EQ(d.window, (TimeRange{0, 300}));
  EXPECT_EQ(d.span_ns, 300);
  EXPECT_EQ(d.busy_ns, 270);  // [0,120) + [150,300)
  EXPECT_DOUBLE_EQ(d.utilization, 0.9);
  EXPECT_EQ(d.idle_ns, 30);
  EXPECT_EQ(d.kernel_busy_ns, 220);                    // [0,120) + [150,250)
  EXPECT_DOUBLE_EQ(d.kernel_concurrency, 50.0 / 220);  // [50,100) has conv and nccl
  EXPECT_DOUBLE_EQ(d.mean_kernels_in_flight, 270.0 / 220);
  EXPECT_EQ(d.compute_ns, 200);
  EXPECT_EQ(d.communication_ns, 70);
  EXPECT_DOUBLE_EQ(d.communication_compute_overlap, 50.0 / 70);
  EXPECT_EQ(d.exposed_communication_ns, 20);  // [100,120)
  EXPECT_EQ(d.memcpy_ns, 100);
  EXPECT_DOUBLE_EQ(d.memcpy_compute_overlap, 0.5);  // [200,250) under relu
  EXPECT_EQ(d.memcpy_exposed_ns, 50);
  EXPECT_DOUBLE_EQ(d.sm_efficiency, (100 * 1.0 + 100 * 0.5 + 70 * 0.1) / 270);
  EXPECT_EQ(d.kernel_time_ns, 270);
  EXPECT_EQ(d.kernels, 3u);
  EXPECT_EQ(d.memcpys, 1u);
  EXPECT_EQ(d.streams, 3u);
  // The one device gap [120,150) ends with relu, launched at 130 > 120: host wait.
  EXPECT_EQ(d.idle_host_wait_ns, 30);
  EXPECT_EQ(d.idle_kernel_wait_ns, 0);
  EXPECT_EQ(d.idle_other_ns, 0);
  EXPECT_EQ(d.compute_major, 8);
  EXPECT_EQ(d.sm_count, 10u);
}

TEST(Metrics, CategoriesAndHotspotsShareTheKernelTime) {
  const Trace t = small_trace();
  const Profile p = analyze(t);
  EXPECT_EQ(p.kernel_time_ns, 270);  // copies are not kernels
  ASSERT_EQ(p.categories.size(), 3u);
  for (const CategoryTime& c : p.categories) {
    const TimeNs want = c.category == KernelCategory::communication ? 70 : 100;
    EXPECT_EQ(c.time_ns, want) << to_string(c.category);
    EXPECT_DOUBLE_EQ(c.share, double(want) / 270);
    EXPECT_EQ(c.count, 1u);
    EXPECT_EQ(c.stats.total, want);
  }
  EXPECT_EQ(p.categories.back().category, KernelCategory::communication);  // largest first
  ASSERT_EQ(p.hotspots.size(), 3u);
  EXPECT_EQ(p.hotspots.back().name, names::kAllReduce);
  for (const Hotspot& h : p.hotspots) {
    if (h.name == names::kConvTensorCore) {
      EXPECT_TRUE(h.tensor_cores);
    }
    if (h.name == names::kRelu) {
      EXPECT_FALSE(h.tensor_cores);
    }
  }
  EXPECT_EQ(p.memcpys.time_ns, 100);
}

TEST(Metrics, HotspotStatisticsAreExact) {
  TraceFactory f;
  const TimeNs durations[] = {30, 10, 20, 50, 40};  // median 30, mean 30
  TimeNs t = 0;
  for (TimeNs d : durations) f.kernel(0, 7, "my_kernel", t, t + d), t += 100;
  f.kernel(0, 7, "other_kernel", t, t + 5);
  const Trace tr = f.build();
  const Profile p = analyze(tr);
  ASSERT_EQ(p.hotspots.size(), 2u);
  const Hotspot& h = p.hotspots[0];
  EXPECT_EQ(h.name, "my_kernel");
  EXPECT_EQ(h.stats.count, 5u);
  EXPECT_EQ(h.stats.total, 150);
  EXPECT_EQ(h.stats.min, 10);
  EXPECT_EQ(h.stats.max, 50);
  EXPECT_EQ(h.stats.mean, 30);
  EXPECT_EQ(h.stats.median, 30);
  EXPECT_DOUBLE_EQ(h.share, 150.0 / 155);
}

// The Python line that launched a kernel: the innermost python_function
// range around its launch call, torch's own frames passed over; the frame
// with most of the kernel's time, and its share. No Python frames: none.
TEST(Metrics, HotspotsNameThePythonLineThatLaunchedThem) {
  constexpr TimeNs us = 1'000;
  TraceFactory f;
  const auto py = [&](std::string_view name, TimeNs a, TimeNs b) {
    f.range(name, a, b, 1, RangeKind::annotation, "python_function");
  };
  // Three launches from model.py's forward (through torch's Module call),
  // one from train.py's loop: 300 of 400 µs from the model.
  for (int i = 0; i < 4; ++i) {
    const TimeNs t = i * 100 * us;
    const bool model = i < 3;
    py("train.py(57): <module>", t, t + 90 * us);
    if (model) {
      py("model.py(12): forward", t + 1 * us, t + 80 * us);
      py("torch/nn/modules/module.py(1750): _call_impl", t + 2 * us, t + 70 * us);
    }
    f.kernel(0, 7, "my_kernel", t + 20 * us, t + 120 * us, t + 10 * us, 5 * us);
  }
  const Profile p = analyze(f.build());
  ASSERT_FALSE(p.hotspots.empty());
  EXPECT_EQ(p.hotspots[0].python_frame, "model.py(12): forward");
  EXPECT_DOUBLE_EQ(p.hotspots[0].python_frame_share, 0.75);

  TraceFactory g;
  g.kernel(0, 7, "my_kernel", 10 * us, 20 * us);
  const Profile q = analyze(g.build());
  ASSERT_FALSE(q.hotspots.empty());
  EXPECT_EQ(q.hotspots[0].python_frame, "");
  EXPECT_EQ(q.hotspots[0].python_frame_share, 0);
}

// Many kernels per name (the bucketed select), three names in two categories,
// checked against sorting; once with durations that fit 32 bits and once with
// a fifth of them just over 2^32 ns (the 64-bit path: truncated to 32 bits,
// they would move the medians).
TEST(Metrics, HotspotAndCategoryMediansMatchSortingAtScale) {
  for (const bool long_kernel : {false, true}) {
    std::mt19937_64 rng(long_kernel ? 5 : 4);
    TraceFactory f;
    const char* names[] = {"volta_sgemm_128x64_nn", "ampere_sgemm_64x32_tn", "vectorized_elementwise_kernel"};
    std::map<std::string, std::vector<TimeNs>> by_name;
    TimeNs t = 0;
    for (int i = 0; i < 15000; ++i) {
      const char* name = names[rng() % 3];
      TimeNs d = 1'000 + static_cast<TimeNs>(rng() % (i % 2 ? 100'000 : 3'000));
      if (long_kernel && i % 5 == 0)
        d = (TimeNs{1} << 32) + static_cast<TimeNs>(rng() % 1'000);  // would wrap in 32 bits
      f.kernel(0, 7, name, t, t + d);
      by_name[name].push_back(d);
      t += d + 10;
    }
    const Trace tr = f.build();
    const Profile p = analyze(tr);
    ASSERT_EQ(p.hotspots.size(), 3u);
    std::map<KernelCategory, std::vector<TimeNs>> by_category;
    for (const Hotspot& h : p.hotspots) {
      auto v = by_name.at(h.name);
      by_category[h.category].insert(by_category[h.category].end(), v.begin(), v.end());
      std::sort(v.begin(), v.end());
      EXPECT_EQ(h.stats.count, v.size()) << h.name;
      EXPECT_EQ(h.stats.min, v.front()) << h.name;
      EXPECT_EQ(h.stats.max, v.back()) << h.name;
      EXPECT_EQ(h.stats.median, v[(v.size() - 1) / 2]) << h.name << " long=" << long_kernel;
      EXPECT_EQ(h.stats.total, std::accumulate(v.begin(), v.end(), TimeNs{0})) << h.name;
    }
    ASSERT_EQ(p.categories.size(), by_category.size());
    for (const CategoryTime& c : p.categories) {
      auto v = by_category.at(c.category);
      std::sort(v.begin(), v.end());
      EXPECT_EQ(c.count, v.size());
      EXPECT_EQ(c.stats.min, v.front());
      EXPECT_EQ(c.stats.max, v.back());
      EXPECT_EQ(c.stats.median, v[(v.size() - 1) / 2]) << "long=" << long_kernel;
      EXPECT_EQ(c.time_ns, std::accumulate(v.begin(), v.end(), TimeNs{0}));
    }
  }
}

TEST(Metrics, IdleByCauseFollowsHtaRulesPerStream) {
  TraceFactory f;
  // stream 7: a [0,100); b [200,300) launched at 50 (< 100: not host wait) -> gap 100 >= 30 µs? no: 100 ns < 30 µs ->
  // kernel wait
  //           c [400,500) launched at 350 (> 300): host wait 100
  //           d [100'000, 100'100) launched at 450 (< 500) -> gap 99'500 >= 30 µs: other
  f.kernel(0, 7, "k", 0, 100, -20, 5);
  f.kernel(0, 7, "k", 200, 300, 50, 5);
  f.kernel(0, 7, "k", 400, 500, 350, 5);
  f.kernel(0, 7, "k", 100'000, 100'100, 450, 5);
  const Trace t = f.build();
  const Profile p = analyze(t);
  ASSERT_EQ(p.idle.size(), 1u);
  EXPECT_EQ(p.idle[0].stream, 7u);
  EXPECT_EQ(p.idle[0].kernel_wait_ns, 100);
  EXPECT_EQ(p.idle[0].host_wait_ns, 100);
  EXPECT_EQ(p.idle[0].other_ns, 99'500);
}

TEST(Metrics, LaunchStatisticsAndQueueDepth) {
  const Trace t = small_trace();
  const Profile p = analyze(t);
  const LaunchStats& l = p.launches;
  EXPECT_EQ(l.launches, 4u);
  EXPECT_EQ(l.cpu_launch.median, 10);
  EXPECT_EQ(l.gpu_duration.median, 100);  // 70,100,100,100: the lower middle
  EXPECT_EQ(l.launch_delay.min, 10);
  EXPECT_EQ(l.launch_delay.max, 40);
  EXPECT_EQ(l.launch_delay.median, 10);  // 10,10,30,40
  EXPECT_EQ(l.short_kernels, 0u);
  EXPECT_EQ(l.max_queue_depth, 1u);

  // Five launches in a row before the first kernel starts: depth 5.
  TraceFactory f;
  for (int i = 0; i < 5; ++i) f.kernel(0, 7, "k", 1000 + i * 100, 1000 + i * 100 + 100, i * 10, 5);
  const Trace t2 = f.build();
  EXPECT_EQ(analyze(t2).launches.max_queue_depth, 5u);
}

// A graph launch starts every op of the graph from one call: its duration
// and the delay from its end to each op are no per-launch figures, so the
// ops it replayed are counted apart, not as launches (the vLLM decode trace's
// "CPU launch call median 506.8 µs" was one graph launch counted per kernel).
TEST(Metrics, OpsReplayedByAGraphLaunchAreLeftOutOfTheLaunchStatistics) {
  TraceFactory f;
  for (int i = 0; i < 3; ++i)
    f.kernel(0, 7, "eager", 100'000 + i * 100'000, 100'000 + i * 100'000 + 2'000, 90'000 + i * 100'000, 4'000);
  const std::uint32_t c = f.api("cudaGraphLaunch", 1'000'000, 1'500'000);  // 500 µs
  for (int k = 0; k < 50; ++k) {
    KernelRow row;
    row.start = 1'510'000 + k * 10'000;
    row.end = row.start + 3'000;
    row.track = f.builder().gpu_track(0, 7);
    row.name = f.builder().intern("replayed");
    row.correlation = c;
    f.builder().add_kernel(row);
  }
  const Trace t = f.build();
  const LaunchStats l = analyze(t).launches;
  EXPECT_EQ(l.launches, 3u);
  EXPECT_EQ(l.graph_ops, 50u);
  EXPECT_EQ(l.cpu_launch.median, 4'000);
  EXPECT_EQ(l.cpu_launch.max, 4'000);
  EXPECT_EQ(l.gpu_duration.max, 2'000);
  EXPECT_EQ(l.launch_delay.max, 6'000);
  EXPECT_EQ(l.short_kernels, 3u);  // 2 µs on the GPU, 4 µs on the CPU: the replayed ones are not compared
  EXPECT_EQ(l.short_kernel_share, 1.0);
  EXPECT_GE(l.max_queue_depth, 1u);  // the graph's ops are still queued by its launch
}

// A synchronous copy call (cudaMemcpy) returns only after its copy ended:
// its duration is the copy's, and its "delay" is negative. Such copies are
// counted apart, not as launches (a saxpy's 15 blocking copies had made the
// launch call median 18.2 ms and the launch delay median -18.8 ms); an
// asynchronous copy call stays a launch.
TEST(Metrics, CopiesBySynchronousCallsAreLeftOutOfTheLaunchStatistics) {
  TraceFactory f;
  for (int i = 0; i < 3; ++i)
    f.kernel(0, 7, "k", 100'000 + i * 100'000, 100'000 + i * 100'000 + 20'000, 90'000 + i * 100'000, 4'000);
  // Two blocking copies: the call spans the copy (18 ms) and returns after it.
  for (int i = 0; i < 2; ++i)
    f.memcpy(0, 7, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, 64 << 20, 1'000'000 + i * 20'000'000,
             19'000'000 + i * 20'000'000, "cudaMemcpy", 999'000 + i * 20'000'000, 18'002'000);
  // One asynchronous copy from pinned memory: a launch.
  f.memcpy(0, 7, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 1 << 20, 50'000'000, 50'100'000,
           "cudaMemcpyAsync", 49'990'000, 4'000);
  const Trace t = f.build();
  const Profile p = analyze(t);
  const LaunchStats& l = p.launches;
  EXPECT_EQ(l.launches, 4u);
  EXPECT_EQ(l.synchronous_copies, 2u);
  EXPECT_EQ(l.cpu_launch.max, 4'000);
  EXPECT_GT(l.launch_delay.min, 0);
  EXPECT_EQ(l.short_kernels, 0u);
  EXPECT_EQ(p.memcpys.synchronous, 2u);  // still blocking copies for the copy and sync figures
}

// Launch statistics when the sampled ops mislead the bracket: every
// kStride-th kernel (the ones the device pass samples) runs long, the rest
// short; the medians still come out exact (StreamingStats' extra scans).
TEST(Metrics, LaunchMediansStayExactWhenTheSampleMisleads) {
  TraceFactory f;
  std::vector<TimeNs> gpu;
  TimeNs t = 0;
  for (std::uint32_t i = 0; i < 200'000; ++i) {
    const TimeNs d = i % BracketMedian::kStride == 0 ? 90'000 : 1'000 + (i % 13);
    f.kernel(0, 7, "k", t + 20'000, t + 20'000 + d, t, 5'000);
    gpu.push_back(d);
    t += d + 30'000;
  }
  const Trace tr = f.build();
  const LaunchStats l = analyze(tr).launches;
  std::sort(gpu.begin(), gpu.end());
  EXPECT_EQ(l.launches, gpu.size());
  EXPECT_EQ(l.gpu_duration.median, gpu[(gpu.size() - 1) / 2]);
  EXPECT_EQ(l.gpu_duration.max, 90'000);
  EXPECT_EQ(l.cpu_launch.median, 5'000);
  EXPECT_EQ(l.launch_delay.median, 15'000);
}

// Queue depth against its definition (the most launched-but-not-started ops at
// any launch), on random streams: launches in order, then from two threads
// out of order (the general path), a queue deep enough for the FIFO to be
// compacted, and a stream mixing kernels with memsets (the merge).
TEST(Metrics, QueueDepthMatchesItsDefinition) {
  auto brute = [](std::vector<TimeNs> launches, std::vector<TimeNs> starts) {
    std::sort(launches.begin(), launches.end());
    std::sort(starts.begin(), starts.end());
    std::uint64_t best = 0;
    for (std::size_t k = 0; k < launches.size(); ++k) {
      const auto started =
          static_cast<std::uint64_t>(std::upper_bound(starts.begin(), starts.end(), launches[k]) - starts.begin());
      best = std::max<std::uint64_t>(best, k + 1 > started ? k + 1 - started : 0);
    }
    return best;
  };
  for (int variant = 0; variant < 5; ++variant) {
    std::mt19937_64 rng(100 + variant);
    TraceFactory f;
    std::vector<TimeNs> launches, starts;
    TimeNs launch = 0, gpu = 0;
    const int n = variant == 2 || variant == 4 ? 12000 : 3000;
    for (int i = 0; i < n; ++i) {
      launch += 1'000 + static_cast<TimeNs>(rng() % 2'000);
      // Variants 2 and 4: the GPU is far behind (a deep queue), then catches up.
      const TimeNs run = (variant == 2 || variant == 4) && i < 9000 ? 20'000 : 300 + static_cast<TimeNs>(rng() % 4'000);
      // Variant 4: now and then an op without a launching call (it never
      // waits in the queue), first while the queue is deep.
      if (variant == 4 && i % 997 == 500) {
        gpu = std::max(gpu, launch + 5'000 + 100);
        f.kernel(0, 7, "k", gpu, gpu + run, TraceFactory::kNoLaunch);
        gpu += run;
        continue;
      }
      gpu = std::max(gpu, launch + 5'000 + 100);
      TimeNs api = launch;
      // Variant 1: every third call from another thread, a little late or early.
      if (variant == 1 && i % 3 == 0) api = launch - 1'500 + static_cast<TimeNs>(rng() % 3'000);
      const std::uint32_t tid = variant == 1 && i % 3 == 0 ? 2 : 1;
      if (variant == 3 && i % 4 == 0)
        f.memset(0, 7, gpu, gpu + run, api);
      else
        f.kernel(0, 7, "k", gpu, gpu + run, api, 5'000, 1000, tid);
      launches.push_back(api);
      starts.push_back(gpu);
      gpu += run;
    }
    const Trace t = f.build();
    EXPECT_EQ(analyze(t).launches.max_queue_depth, brute(launches, starts)) << "variant " << variant;
  }
}

TEST(Metrics, StepsFromNvtxRangesWithTheirBreakdown) {
  TraceFactory f;
  // Two steps of 1000 ns launched from thread 1; each: compute [s, s+600),
  // all-reduce [s+600, s+800) alone, idle after.
  for (int s = 0; s < 2; ++s) {
    const TimeNs base = s * 1000;
    f.range("step " + std::to_string(s), base, base + 1000);
    f.kernel(0, 7, names::kConvTensorCore, base + 0, base + 600, base + 1, 5);
    f.kernel(0, 13, names::kAllReduce, base + 600, base + 800, base + 10, 5);
  }
  const Trace t = f.build();
  const Profile p = analyze(t);
  EXPECT_EQ(p.steps.source, StepSource::nvtx);
  ASSERT_EQ(p.steps.steps.size(), 2u);
  for (const Step& st : p.steps.steps) {
    EXPECT_EQ(st.range.duration(), 1000);
    EXPECT_EQ(st.compute_ns, 600);
    EXPECT_EQ(st.communication_ns, 200);
    EXPECT_EQ(st.memcpy_ns, 0);
    EXPECT_EQ(st.idle_ns, 200);
    EXPECT_EQ(st.device, 0u);
    // The range outlasts the step's last GPU op (ends at +800) by 200 ns of CPU time.
    EXPECT_EQ(st.host_tail_ns, 200);
  }
  EXPECT_EQ(p.steps.steps[1].index, 1);
  EXPECT_EQ(p.steps.step_time.mean, 1000);
  EXPECT_EQ(p.steps.total_ns, 2000);
  EXPECT_EQ(p.steps.host_tail_ns, 400);
}

TEST(Metrics, ProfilerStepsWinOverOtherRanges) {
  TraceFactory f;
  for (int s = 0; s < 3; ++s) {
    const TimeNs base = s * 1000;
    f.range("ProfilerStep#" + std::to_string(s + 5), base, base + 900, 1, RangeKind::annotation, "user_annotation");
    f.range("step", base, base + 900);
    f.kernel(0, 7, "k", base + 100, base + 950, base + 10, 5);
  }
  const Trace t = f.build();
  const Profile p = analyze(t);
  EXPECT_EQ(p.steps.source, StepSource::profiler_step);
  ASSERT_EQ(p.steps.steps.size(), 3u);
  EXPECT_EQ(p.steps.steps[0].name, "ProfilerStep#5");
  EXPECT_EQ(p.steps.steps[0].index, 5);
  // The step runs until the GPU work it launched ends: no CPU time after it.
  EXPECT_EQ(p.steps.steps[0].range, (TimeRange{0, 950}));
  EXPECT_EQ(p.steps.steps[0].host_tail_ns, 0);
}

TEST(Metrics, StepsFromTheRepeatingKernelPattern) {
  TraceFactory f;
  const char* seq[] = {"conv_fwd", "relu", "conv_fwd", "loss", "conv_bwd", "relu_bwd", "sgd_update"};
  TimeNs t = 5000;
  for (int warmup = 0; warmup < 2; ++warmup) f.kernel(0, 7, "init_kernel", t, t + 10), t += 20;
  for (int step = 0; step < 5; ++step)
    for (const char* k : seq) f.kernel(0, 7, k, t, t + 10), t += 20;
  const Trace tr = f.build();
  const Profile p = analyze(tr);
  EXPECT_EQ(p.steps.source, StepSource::pattern);
  // "relu", "loss", "conv_bwd"… occur once per iteration, evenly 7 kernels
  // apart; the earliest is the first "relu" (kernel 3). Iterations start at
  // each relu; the last one lacks its final kernel, so 4 complete steps.
  ASSERT_EQ(p.steps.steps.size(), 4u);
  for (const Step& st : p.steps.steps) EXPECT_EQ(st.range.duration(), 140);
  for (const Step& st : p.steps.steps) EXPECT_EQ(st.host_tail_ns, 0);  // steps of the GPU alone
  EXPECT_EQ(p.steps.steps[0].range.start, 5000 + 3 * 20);
}

// One forward pass of a 6-layer model: the layers' kernels repeat evenly, like
// iterations, but inside one call. Kernels of 10 µs every 20 µs, launched
// 10 µs ahead; `wrapper` (if any) encloses every launch.
Trace layered_forward(std::string_view wrapper, std::string_view domain = "nvtx",
                      RangeKind kind = RangeKind::push_pop) {
  TraceFactory f;
  const char* layer[] = {"gemm_qkv", "softmax", "gemm_out", "layer_norm"};
  TimeNs t = 100'000;
  f.kernel(0, 7, "embedding", t, t + 10'000), t += 20'000;
  for (int l = 0; l < 6; ++l)
    for (const char* k : layer) f.kernel(0, 7, k, t, t + 10'000), t += 20'000;
  f.kernel(0, 7, "pooler", t, t + 10'000), t += 20'000;
  if (!wrapper.empty()) f.range(wrapper, 50'000, t, 1, kind, domain);
  return f.build();
}

TEST(Metrics, RepeatingLayersInsideOneForwardAreNotSteps) {
  for (const auto& [name, domain, kind] :
       {std::tuple{"BertModel.forward", "nvtx", RangeKind::push_pop},
        std::tuple{"nn.Module: BertEncoder", "python_function", RangeKind::annotation},
        std::tuple{"aten::lstm", "cpu_op", RangeKind::annotation}}) {
    const Profile p = analyze(layered_forward(name, domain, kind));
    EXPECT_EQ(p.steps.source, StepSource::none) << name;
    EXPECT_TRUE(p.steps.steps.empty()) << name;
    EXPECT_NE(p.steps.not_steps.find("repeats 6 times inside one call"), std::string::npos) << p.steps.not_steps;
    EXPECT_NE(p.steps.not_steps.find(name), std::string::npos) << p.steps.not_steps;
  }
}

TEST(Metrics, RepeatingKernelsUnderALoopRangeAreSteps) {
  // A user's range around the whole loop, or none: the pattern is the steps.
  for (std::string_view wrapper : {"train", ""}) {
    const Profile p = analyze(layered_forward(wrapper));
    EXPECT_EQ(p.steps.source, StepSource::pattern) << wrapper;
    EXPECT_EQ(p.steps.steps.size(), 6u) << wrapper;
    EXPECT_TRUE(p.steps.not_steps.empty()) << p.steps.not_steps;
  }
}

TEST(Metrics, DeviceFilterKeepsOneGpu) {
  TraceFactory f;
  f.device(1);
  f.kernel(0, 7, "a", 0, 100);
  f.kernel(1, 7, "b", 0, 50);
  const Trace t = f.build();
  AnalysisOptions o;
  o.device = 1;
  const Profile p = analyze(t, o);
  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_EQ(p.devices[0].id, 1u);
  ASSERT_EQ(p.hotspots.size(), 1u);
  EXPECT_EQ(p.hotspots[0].name, "b");
  EXPECT_EQ(analyze(t).devices.size(), 2u);
}

// Without synchronization records (an imported ROCm trace), synchronizing
// calls are known by name: CUDA's and HIP's alike.
TEST(Metrics, SyncCallsByNameIncludeHips) {
  TraceFactory f;
  f.kernel(0, 7, "k", 0, 1000, -100, 5);
  f.api("hipDeviceSynchronize", 10, 1010);
  f.kernel(0, 7, "k", 2000, 3000, 1900, 5);
  f.api("hipEventSynchronize", 1950, 3010);
  f.api("hipEventDestroy", 3100, 3110);
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.syncs.count, 2u);
  EXPECT_EQ(p.syncs.device_syncs, 1u);
  EXPECT_EQ(p.syncs.event_syncs, 1u);
}

// CUPTI files a cudaEventQuery (a poll that returns at once) as an event
// synchronization: the host never waited in it, so it is no host sync.
TEST(Metrics, EventQueriesAreNotHostSyncs) {
  TraceFactory f;
  f.kernel(0, 7, "k", 0, 1000, -100, 5);
  f.sync(SyncType::event, 0, kNoId, 1500, 2500);  // cudaEventSynchronize: counted
  const std::uint32_t c = f.api("cudaEventQuery", 3000, 3004);
  SyncRow q;
  q.start = 3001;
  q.end = 3003;
  q.track = f.builder().cpu_track(TraceFactory::kPid, 1);
  q.correlation = c;
  q.type = SyncType::event;
  q.device = 0;
  f.builder().add_sync(q);
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.syncs.count, 1u);
  EXPECT_EQ(p.syncs.event_syncs, 1u);
  EXPECT_EQ(p.syncs.total_ns, 1000);
}

TEST(Metrics, SyncAndCopyStatistics) {
  TraceFactory f;
  f.kernel(0, 7, "k", 0, 1000, -100, 5);
  f.sync(SyncType::context, 0, kNoId, 10, 1000);  // returns when k ends; the GPU then idles until 5000
  f.kernel(0, 7, "k", 5000, 6000, 4000, 5);
  f.memcpy(0, 7, CopyKind::dtoh, MemoryKind::device, MemoryKind::pageable, 1 << 20, 6000, 7000, "cudaMemcpy", 5990,
           1100);
  f.memcpy(0, 7, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 100, 7000, 7100, "cudaMemcpy", 6990, 200);
  const Trace t = f.build();
  const Profile p = analyze(t);
  EXPECT_EQ(p.syncs.count, 1u);
  EXPECT_EQ(p.syncs.device_syncs, 1u);
  EXPECT_EQ(p.syncs.total_ns, 990);
  // The GPU idles 4000 after the sync, of which the sync is charged what it
  // held the host (990): the rest is the host's late launch.
  EXPECT_EQ(p.syncs.gpu_idle_after_ns, 990);
  EXPECT_EQ(p.memcpys.count, 2u);
  EXPECT_EQ(p.memcpys.pageable, 1u);
  EXPECT_EQ(p.memcpys.pageable_bytes, 1u << 20);
  EXPECT_EQ(p.memcpys.dtoh, 1u);
  EXPECT_EQ(p.memcpys.htod, 1u);
  EXPECT_EQ(p.memcpys.synchronous, 1u);  // the small pinned H2D is exempt
  EXPECT_EQ(p.memcpys.synchronous_ns, 1100);
}

// A small host-to-device copy by a synchronous call is exempt (staged, the
// call returns at once), unless the call returned only after the GPU began
// the copy and took longer than a launch: it waited for the queued work.
TEST(Metrics, ASmallSynchronousCopyThatWaitedForItsStreamBlocks) {
  for (const bool waited : {true, false}) {
    SCOPED_TRACE(waited);
    TraceFactory f;
    f.kernel(0, 7, "k", 0, 10'000'000, -100, 5);
    const TimeNs call = waited ? 10'050'000 : 2'000;  // from 100 µs: until after the copy, or 2 µs
    f.memcpy(0, 7, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 60, 10'000'000, 10'002'000,
             "hipMemcpyWithStream", 100'000, call);
    const Profile p = analyze(f.build());
    EXPECT_EQ(p.memcpys.synchronous, waited ? 1u : 0u);
    EXPECT_EQ(p.memcpys.synchronous_ns, waited ? call : 0);
  }
}

TEST(Metrics, EmptyTraceGivesAnEmptyProfile) {
  TraceFactory f;
  const Trace t = f.build();
  const Profile p = analyze(t);
  EXPECT_TRUE(p.devices.empty());
  EXPECT_TRUE(p.findings.empty());
  EXPECT_EQ(p.kernel_time_ns, 0);
}

}  // namespace
}  // namespace gpuscope
