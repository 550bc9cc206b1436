// Synthetic traces: exact sizes, determinism, realistic structure, planted problems.
#include "import/synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuscope {
namespace {

SyntheticOptions small(std::uint64_t kernels, std::uint32_t gpus = 2) {
  SyntheticOptions o;
  o.kernels = kernels;
  o.gpus = gpus;
  return o;
}

TimeNs kernel_time(const Trace& t, KernelCategory c) {
  TimeNs sum = 0;
  for (std::size_t i = 0; i < t.kernels().size(); ++i)
    if (t.kernels().category_at(i) == c) sum += t.kernels().end[i] - t.kernels().start[i];
  return sum;
}

TimeNs kernel_time(const Trace& t) {
  TimeNs sum = 0;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) sum += t.kernels().end[i] - t.kernels().start[i];
  return sum;
}

// Every column of every table, as bytes (doubles compare bitwise).
std::vector<std::string> column_bytes(const Trace& t, TableId which) {
  std::vector<std::string> out;
  t.tables().for_each_table([&](TableId id, const auto& table) {
    if (id != which) return;
    table.for_each_column([&](ColumnInfo, const auto& col) {
      using T = typename std::remove_cvref_t<decltype(col)>::value_type;
      std::vector<T> rows(col.begin(), col.end());
      if constexpr (detail::is_compact_column<std::remove_cvref_t<decltype(col)>>)
        if (col.compacted()) detail::expand_rows(table, col, 0, table.size(), rows);
      out.emplace_back(reinterpret_cast<const char*>(rows.data()), rows.size() * sizeof(T));
    });
  });
  return out;
}

// Compares every column of every table, the strings, tracks and meta.
void expect_same(const Trace& a, const Trace& b) {
  EXPECT_EQ(a.meta(), b.meta());
  EXPECT_EQ(a.tracks(), b.tracks());
  EXPECT_EQ(a.devices(), b.devices());
  EXPECT_EQ(a.processes(), b.processes());
  EXPECT_EQ(a.counter_series(), b.counter_series());
  EXPECT_EQ(a.strings().arena(), b.strings().arena());
  EXPECT_EQ(a.strings().offsets(), b.strings().offsets());
  for (int i = 0; i < kTableCount; ++i) {
    const auto id = static_cast<TableId>(i);
    EXPECT_EQ(column_bytes(a, id), column_bytes(b, id)) << to_string(id);
  }
}

TEST(Synthetic, HasExactlyTheRequestedKernelCount) {
  for (std::uint64_t n : {0ull, 1ull, 7ull, 163ull, 164ull, 165ull, 1000ull, 12345ull})
    for (std::uint32_t gpus : {1u, 2u, 3u, 4u}) {
      const Trace t = make_synthetic_trace(small(n, gpus));
      EXPECT_EQ(t.kernels().size(), n) << n << " kernels on " << gpus << " GPUs";
      // Split over the GPUs as evenly as possible.
      std::map<std::uint32_t, std::uint64_t> per_device;
      for (std::size_t i = 0; i < t.kernels().size(); ++i) ++per_device[t.tracks()[t.kernels().track_at(i)].device];
      for (const auto& [d, count] : per_device) {
        EXPECT_GE(count, n / gpus);
        EXPECT_LE(count, n / gpus + 1);
      }
    }
}

TEST(Synthetic, SameSeedSameTraceOtherSeedOtherTrace) {
  SyntheticOptions o = small(5000, 3);
  o.seed = 42;
  const Trace a = make_synthetic_trace(o);
  const Trace b = make_synthetic_trace(o);
  expect_same(a, b);

  o.seed = 43;
  const Trace c = make_synthetic_trace(o);
  ASSERT_EQ(c.kernels().size(), a.kernels().size());
  EXPECT_NE(a.kernels().start, c.kernels().start);
  EXPECT_NE(a.kernels().end, c.kernels().end);
  // The structure does not depend on the seed, only the noise does.
  EXPECT_EQ(a.kernels().name, c.kernels().name);
}

TEST(Synthetic, SaysItIsSynthetic) {
  SyntheticOptions o = small(500, 2);
  o.command_line = "gpuscope synth -o x.gscope --kernels 500";
  const Trace t = make_synthetic_trace(o);
  EXPECT_EQ(t.meta().source, TraceSource::synthetic);
  EXPECT_NE(t.meta().producer.find("synthetic"), std::string::npos);
  EXPECT_EQ(t.meta().command_line, o.command_line);
  EXPECT_EQ(t.meta().property("synthetic.gpus"), "2");
  ASSERT_EQ(t.devices().size(), 2u);
  for (const Device& d : t.devices()) {
    EXPECT_NE(d.name.find("Synthetic"), std::string::npos);
    EXPECT_EQ(d.sm_count, 132u);
    EXPECT_GT(d.memory_bytes, 0u);
  }
  ASSERT_EQ(t.processes().size(), 1u);
  EXPECT_NE(t.processes()[0].name.find("synthetic"), std::string::npos);
}

TEST(Synthetic, EveryGpuOpHasItsLaunchCallAndCorrelationIsUnique) {
  const Trace t = make_synthetic_trace(small(3000, 3));
  const auto& api = t.api_calls();
  std::set<std::uint32_t> ids(api.correlation.begin(), api.correlation.end());
  EXPECT_EQ(ids.size(), api.size()) << "correlation ids repeat";
  EXPECT_EQ(ids.count(0), 0u);
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    const RowIndex a = t.kernels().api[i];
    ASSERT_NE(a, kNoRow);
    EXPECT_EQ(t.str(api.name[a]), "cudaLaunchKernel");
    EXPECT_EQ(api.correlation[a], t.kernels().correlation[i]);
    EXPECT_GE(t.kernels().start[i], api.end[a]) << "a kernel starts after its launch call returns";
    // The launching thread drives the kernel's GPU.
    EXPECT_EQ(t.tracks()[api.track_at(a)].tid - 4250, t.tracks()[t.kernels().track_at(i)].device);
  }
  ASSERT_GT(t.memcpys().size(), 0u);
  for (std::size_t i = 0; i < t.memcpys().size(); ++i) {
    ASSERT_NE(t.memcpys().api[i], kNoRow);
    EXPECT_EQ(t.str(api.name[t.memcpys().api[i]]), "cudaMemcpyAsync");
    EXPECT_EQ(t.memcpys().kind_at(i), CopyKind::htod);
    EXPECT_EQ(t.memcpys().src_kind_at(i), MemoryKind::pinned);
  }
  ASSERT_GT(t.memsets().size(), 0u);
  for (std::size_t i = 0; i < t.memsets().size(); ++i) ASSERT_NE(t.memsets().api[i], kNoRow);
  // Every API call launched something, except the synchronizations.
  for (std::size_t i = 0; i < api.size(); ++i) {
    if (t.str(api.name[i]) == "cudaStreamSynchronize") continue;
    EXPECT_NE(static_cast<OpTable>(api.op_table[i]), OpTable::none) << t.str(api.name[i]);
  }
}

TEST(Synthetic, KernelsAreClassifiedAndCategoriesArePresent) {
  SyntheticOptions o = small(20000, 4);
  o.padding_share = 0.1;
  o.broadcast_share = 0.1;
  o.transpose_share = 0.05;
  const Trace t = make_synthetic_trace(o);
  std::set<KernelCategory> seen;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    const KernelCategory c = t.kernels().category_at(i);
    EXPECT_NE(c, KernelCategory::other) << t.str(t.kernels().name[i]);
    seen.insert(c);
  }
  for (KernelCategory c :
       {KernelCategory::padding, KernelCategory::broadcast, KernelCategory::transpose, KernelCategory::convolution,
        KernelCategory::gemm, KernelCategory::normalization, KernelCategory::elementwise, KernelCategory::pooling,
        KernelCategory::softmax_loss, KernelCategory::optimizer, KernelCategory::communication})
    EXPECT_TRUE(seen.count(c)) << to_string(c);

  // Without planted problems there are no such kernels at all.
  const Trace clean = make_synthetic_trace(small(20000, 4));
  EXPECT_EQ(kernel_time(clean, KernelCategory::padding), 0);
  EXPECT_EQ(kernel_time(clean, KernelCategory::broadcast), 0);
  EXPECT_EQ(kernel_time(clean, KernelCategory::transpose), 0);
}

TEST(Synthetic, PlantedSharesAreExactWithoutNoise) {
  SyntheticOptions o = SyntheticOptions::report_pathologies();
  o.jitter = 0;
  o.gpus = 4;
  o.kernels = 4ull * 10 * synthetic_kernels_per_step(o);  // whole steps
  const Trace t = make_synthetic_trace(o);
  const double total = static_cast<double>(kernel_time(t));
  EXPECT_NEAR(kernel_time(t, KernelCategory::padding) / total, 0.214, 1e-6);
  EXPECT_NEAR(kernel_time(t, KernelCategory::broadcast) / total, 0.20, 1e-6);
}

TEST(Synthetic, PlantedSharesAreCloseWithNoiseAndAStraggler) {
  SyntheticOptions o = small(50000, 4);
  o.padding_share = 0.25;
  o.straggler_gpu = 1;
  o.straggler_slowdown = 1.2;
  const Trace t = make_synthetic_trace(o);
  const double share = static_cast<double>(kernel_time(t, KernelCategory::padding)) / kernel_time(t);
  EXPECT_NEAR(share, 0.25, 0.001);
}

// The planted shares are steered step by step; with noise and GPUs that wait
// for each other in the all-reduce, the steering must settle, not swing (it
// once made padding kernels range from 0 ns to 20x their median and step times
// grow tenfold).
TEST(Synthetic, PlantedKernelDurationsStaySteadyWithNoise) {
  SyntheticOptions o = SyntheticOptions::report_pathologies();
  o.gpus = 4;
  o.kernels = 4ull * 40 * synthetic_kernels_per_step(o);
  const Trace t = make_synthetic_trace(o);
  std::vector<TimeNs> pad;
  for (std::size_t i = 0; i < t.kernels().size(); ++i)
    if (t.kernels().category_at(i) == KernelCategory::padding) pad.push_back(t.kernels().end[i] - t.kernels().start[i]);
  ASSERT_GT(pad.size(), 100u);
  std::sort(pad.begin(), pad.end());
  const double median = static_cast<double>(pad[pad.size() / 2]);
  EXPECT_GT(static_cast<double>(pad.front()), 0.5 * median);
  EXPECT_LT(static_cast<double>(pad.back()), 2.0 * median);
}

// Kernels on one stream never overlap; returns the time with two or more
// kernels running at once on `device`.
TimeNs concurrent_time(const Trace& t, std::uint32_t device) {
  std::vector<std::pair<TimeNs, int>> edges;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    if (t.tracks()[t.kernels().track_at(i)].device != device) continue;
    edges.push_back({t.kernels().start[i], +1});
    edges.push_back({t.kernels().end[i], -1});
  }
  std::sort(edges.begin(), edges.end());  // ends (-1) before starts (+1) at equal times
  TimeNs total = 0, since = 0;
  int running = 0;
  for (const auto& [time, delta] : edges) {
    if (running >= 2) total += time - since;
    running += delta;
    since = time;
  }
  return total;
}

TEST(Synthetic, StreamsRunInOrder) {
  const Trace t = make_synthetic_trace(small(10000, 2));
  for (TrackId track = 0; track < t.tracks().size(); ++track) {
    if (t.tracks()[track].kind != TrackKind::gpu) continue;
    const RowRange r = t.rows_of(TableId::kernels, track);
    for (RowIndex i = r.begin + 1; i < r.end; ++i)
      ASSERT_GE(t.kernels().start[i], t.kernels().end[i - 1]) << "kernels overlap on " << t.tracks()[track].name;
  }
}

TEST(Synthetic, OneStreamAndAllReduceAfterBackwardMeansNoConcurrency) {
  SyntheticOptions o = small(10000, 4);
  o.compute_streams = 1;
  o.overlap_communication = false;
  o.overlap_weight_update = false;
  const Trace serial = make_synthetic_trace(o);
  for (std::uint32_t d = 0; d < 4; ++d) EXPECT_EQ(concurrent_time(serial, d), 0) << "device " << d;

  const Trace overlapped = make_synthetic_trace(small(10000, 4));  // 2 compute streams, bucketed all-reduce
  for (std::uint32_t d = 0; d < 4; ++d) EXPECT_GT(concurrent_time(overlapped, d), 0) << "device " << d;
}

TEST(Synthetic, StepsAreNvtxRangesWithTheirPhases) {
  SyntheticOptions o = small(0, 2);
  const std::uint32_t per_step = synthetic_kernels_per_step(o);
  o.kernels = 2ull * 5 * per_step;
  const Trace t = make_synthetic_trace(o);
  std::map<std::string, int> count;
  const auto& r = t.ranges();
  for (std::size_t i = 0; i < r.size(); ++i) {
    const std::string name(t.str(r.name[i]));
    EXPECT_EQ(r.kind_at(i), RangeKind::push_pop);
    EXPECT_EQ(t.tracks()[r.track_at(i)].kind, TrackKind::cpu);
    if (name.rfind("step ", 0) == 0) {
      EXPECT_EQ(r.depth[i], 0u);
      ++count["step"];
    } else {
      EXPECT_EQ(r.depth[i], 1u) << name;
      ++count[name];
    }
  }
  EXPECT_EQ(count["step"], 10);
  EXPECT_EQ(count["forward"], 10);
  EXPECT_EQ(count["backward"], 10);
  EXPECT_EQ(count["all-reduce"], 10);
  EXPECT_EQ(count["optimizer"], 10);
  // Kernels per step per GPU are exactly what synthetic_kernels_per_step says.
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (t.str(r.name[i]).rfind("step ", 0) != 0) continue;
    std::uint64_t launched = 0;
    const RowRange calls = t.rows_overlapping(TableId::api_calls, r.track_at(i), r.start[i], r.end[i]);
    for (RowIndex a = calls.begin; a < calls.end; ++a)
      launched += static_cast<OpTable>(t.api_calls().op_table[a]) == OpTable::kernel;
    EXPECT_EQ(launched, per_step);
  }
  // One sync per step per GPU, waiting on the compute stream.
  EXPECT_EQ(t.syncs().size(), 10u);
  for (std::size_t i = 0; i < t.syncs().size(); ++i) {
    EXPECT_EQ(t.syncs().type_at(i), SyncType::stream);
    EXPECT_EQ(t.syncs().stream[i], 7u);
  }
}

TEST(Synthetic, KernelsPerStepIsExact) {
  for (std::uint32_t want : {150u, 200u, 333u, 1000u}) {
    SyntheticOptions o = small(0, 2);
    o.kernels_per_step = want;
    EXPECT_EQ(synthetic_kernels_per_step(o), want);
    o.kernels = 2ull * 3 * want;
    const Trace t = make_synthetic_trace(o);
    EXPECT_EQ(t.kernels().size(), o.kernels);
    std::size_t steps = 0;
    for (std::size_t i = 0; i < t.ranges().size(); ++i) steps += t.str(t.ranges().name[i]).rfind("step ", 0) == 0;
    EXPECT_EQ(steps, 6u);
  }
  SyntheticOptions tiny = small(10, 2);
  tiny.kernels_per_step = 3;
  EXPECT_THROW(synthetic_kernels_per_step(tiny), std::invalid_argument);
}

TEST(Synthetic, AStragglerMakesTheOthersWaitInNccl) {
  SyntheticOptions o = small(0, 4);
  o.jitter = 0;
  o.straggler_gpu = 2;
  o.straggler_slowdown = 1.5;
  o.overlap_communication = false;
  o.kernels = 4ull * 4 * synthetic_kernels_per_step(o);
  const Trace t = make_synthetic_trace(o);
  std::map<std::uint32_t, TimeNs> comm;
  for (std::size_t i = 0; i < t.kernels().size(); ++i)
    if (t.kernels().category_at(i) == KernelCategory::communication)
      comm[t.tracks()[t.kernels().track_at(i)].device] += t.kernels().end[i] - t.kernels().start[i];
  ASSERT_EQ(comm.size(), 4u);
  for (std::uint32_t d : {0u, 1u, 3u}) EXPECT_GT(comm[d], 2 * comm[2]) << "device " << d;
  // All-reduce kernels of one bucket end together on every GPU.
  std::map<std::uint32_t, std::set<TimeNs>> ends_by_device;
  for (std::size_t i = 0; i < t.kernels().size(); ++i)
    if (t.kernels().category_at(i) == KernelCategory::communication)
      ends_by_device[t.tracks()[t.kernels().track_at(i)].device].insert(t.kernels().end[i]);
  EXPECT_EQ(ends_by_device[0], ends_by_device[2]);
}

TEST(Synthetic, OneGpuHasNoAllReduce) {
  const Trace t = make_synthetic_trace(small(2000, 1));
  EXPECT_EQ(kernel_time(t, KernelCategory::communication), 0);
  for (std::size_t i = 0; i < t.ranges().size(); ++i) EXPECT_NE(t.str(t.ranges().name[i]), "all-reduce");
}

TEST(Synthetic, InputWaitLeavesTheGpuIdle) {
  SyntheticOptions o = small(0, 1);
  o.jitter = 0;
  o.kernels = 5ull * synthetic_kernels_per_step(o);
  const Trace busy = make_synthetic_trace(o);
  o.input_wait_ns = 5'000'000;
  const Trace starved = make_synthetic_trace(o);
  const TimeNs span_busy = busy.gpu_end_time() - busy.gpu_begin_time();
  const TimeNs span_starved = starved.gpu_end_time() - starved.gpu_begin_time();
  EXPECT_GE(span_starved - span_busy, 4 * 5'000'000);  // four waits between five steps
  EXPECT_EQ(kernel_time(busy), kernel_time(starved));
}

TEST(Synthetic, CountersArePresent) {
  const Trace t = make_synthetic_trace(small(5000, 2));
  ASSERT_EQ(t.counter_series().size(), 2u);
  EXPECT_EQ(t.counter_series()[0].unit, "W");
  EXPECT_GT(t.counters().size(), 0u);
  for (double v : t.counters().value) {
    EXPECT_GE(v, 150.0);
    EXPECT_LE(v, 700.0);
  }
}

// hardware_metrics: per GPU the hw.* and nvml.* series a capture records,
// sampled at the interval from the GPU's first kernel to its last, each hw.*
// sample following the kernel then running; the same for the same seed, and
// the GPU timeline is that of the trace without them.
TEST(Synthetic, HardwareSeriesFollowTheKernelsAndTheSeed) {
  SyntheticOptions o = small(3000, 2);
  o.padding_share = 0.2;
  const Trace plain = make_synthetic_trace(o);
  o.hardware_metrics = true;
  const Trace a = make_synthetic_trace(o);
  expect_same(a, make_synthetic_trace(o));
  EXPECT_EQ(a.kernels().start, plain.kernels().start);
  EXPECT_EQ(a.kernels().end, plain.kernels().end);
  EXPECT_EQ(a.meta().property("synthetic.hardware_metrics"), "true");
  EXPECT_EQ(plain.meta().property("synthetic.hardware_metrics"), "");
  for (std::uint32_t gpu = 0; gpu < 2; ++gpu) {
    for (const char* name :
         {"hw.sm_active", "hw.sm_occupancy", "hw.sm_issue", "hw.tensor_active", "hw.dram_read", "hw.dram_write",
          "nvml.sm_clock", "nvml.power", "nvml.temperature", "nvml.throttle_reasons"})
      EXPECT_NE(a.find_counter_series(name, gpu), kNoSeries) << name << " on GPU " << gpu;
    const std::uint32_t sm = a.find_counter_series("hw.sm_active", gpu);
    const std::uint32_t clock = a.find_counter_series("nvml.sm_clock", gpu);
    const RowRange rows = a.rows_of(TableId::counters, sm);
    const RowRange clocks = a.rows_of(TableId::counters, clock);
    EXPECT_EQ(clocks.end - clocks.begin, (rows.end - rows.begin) / 10);
    for (RowIndex i = rows.begin + 1; i < rows.end; ++i)
      ASSERT_EQ(a.counters().time[i] - a.counters().time[i - 1], o.hw_interval_ns);
    for (RowIndex i = clocks.begin; i < clocks.end; ++i) EXPECT_EQ(a.counters().value[i], 1980);  // not throttled
  }
  // SMs active under each kind of kernel: low under the planted padding, high under convolutions.
  double pad = 0, conv = 0;
  int npad = 0, nconv = 0;
  const KernelTable& k = a.kernels();
  const std::uint32_t sm = a.find_counter_series("hw.sm_active", 0);
  const RowRange rows = a.rows_of(TableId::counters, sm);
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (a.tracks()[k.track_at(i)].device != 0) continue;
    const KernelCategory c = k.category_at(i);
    if (c != KernelCategory::padding && c != KernelCategory::convolution) continue;
    for (RowIndex r = rows.begin; r < rows.end; ++r) {
      const TimeNs at = a.counters().time[r];
      if (at <= k.start[i] || at >= k.end[i]) continue;
      (c == KernelCategory::padding ? pad : conv) += a.counters().value[r];
      ++(c == KernelCategory::padding ? npad : nconv);
    }
  }
  ASSERT_GT(npad, 0);
  ASSERT_GT(nconv, 0);
  EXPECT_LT(pad / npad, 40.0);
  EXPECT_GT(conv / nconv, 80.0);
  // Another seed, other noise.
  o.seed = 7;
  EXPECT_NE(make_synthetic_trace(o).counters().value, a.counters().value);
}

// throttle_share: the last steps run with the clock held down, slower, and
// NVML's samples say so from the first of them.
TEST(Synthetic, ThrottledStepsAreSlowerAndSaySo) {
  SyntheticOptions o = small(4000, 1);
  o.jitter = 0;
  o.throttle_share = 0.5;
  o.hardware_metrics = true;
  const Trace t = make_synthetic_trace(o);
  SyntheticOptions unthrottled = o;
  unthrottled.throttle_share = 0;
  const Trace cool = make_synthetic_trace(unthrottled);
  EXPECT_EQ(t.meta().property("synthetic.throttle_share"), "0.5");
  // Kernel time grows by the clock ratio on half the steps: (1 + 1980/1410) / 2.
  auto kernel_ns = [](const Trace& x) {
    TimeNs sum = 0;
    for (RowIndex i = 0; i < x.kernels().size(); ++i)
      if (x.kernels().category_at(i) != KernelCategory::communication) sum += x.kernels().end[i] - x.kernels().start[i];
    return static_cast<double>(sum);
  };
  EXPECT_NEAR(kernel_ns(t) / kernel_ns(cool), (1 + 1980.0 / 1410.0) / 2, 0.03);
  const std::uint32_t reasons = t.find_counter_series("nvml.throttle_reasons", 0);
  const std::uint32_t clock = t.find_counter_series("nvml.sm_clock", 0);
  const RowRange rr = t.rows_of(TableId::counters, reasons), cr = t.rows_of(TableId::counters, clock);
  ASSERT_EQ(rr.end - rr.begin, cr.end - cr.begin);
  int hot = 0;
  for (RowIndex i = 0; i < rr.end - rr.begin; ++i) {
    const bool thermal = t.counters().value[rr.begin + i] == 0x20;
    hot += thermal;
    EXPECT_EQ(t.counters().value[cr.begin + i], thermal ? 1410 : 1980);
  }
  EXPECT_GT(hot, 0);
  EXPECT_LT(hot, static_cast<int>(rr.end - rr.begin));
  // Once throttled, it stays throttled to the end.
  EXPECT_EQ(t.counters().value[rr.end - 1], 0x20);
}

// framework_ops: every kernel, copy and fill is launched inside a cpu_op
// range with recorded shapes and types, directly under the NVTX phase ranges;
// the GPU ops and their times are those of the trace without ops.
TEST(Synthetic, FrameworkOpsWrapEveryLaunchWithShapes) {
  SyntheticOptions o = small(6000, 2);
  o.framework_ops = true;
  const Trace t = make_synthetic_trace(o);
  const Trace plain = make_synthetic_trace(small(6000, 2));
  EXPECT_EQ(t.kernels().start, plain.kernels().start);
  EXPECT_EQ(t.kernels().end, plain.kernels().end);
  EXPECT_EQ(t.meta().property("synthetic.framework_ops"), "true");
  std::set<std::string> names;
  for (RowIndex i = 0; i < t.kernels().size(); ++i) {
    const RowIndex op = t.launching_op({OpTable::kernel, i});
    ASSERT_NE(op, kNoRow) << i;
    const RangeTable& g = t.ranges();
    EXPECT_NE(g.input_dims_at(op), 0u);
    EXPECT_NE(g.input_types_at(op), 0u);
    EXPECT_EQ(g.kind_at(op), RangeKind::annotation);
    EXPECT_EQ(t.str(g.domain[op]), "cpu_op");
    ASSERT_NE(t.parent_op(op), kNoRow);  // forward, backward, all-reduce or optimizer
    names.insert(std::string(t.str(g.name[op])));
  }
  for (RowIndex i = 0; i < t.memcpys().size(); ++i) EXPECT_NE(t.launching_op({OpTable::memcpy, i}), kNoRow);
  for (const char* n : {"aten::conv2d", "aten::convolution_backward", "aten::addmm", "aten::mm", "aten::batch_norm",
                        "aten::relu_", "nccl:all_reduce", "aten::add_"})
    EXPECT_TRUE(names.contains(n)) << n;
  // The first convolution: a CIFAR batch of 128 RGB images, 16 filters of 3x3.
  for (RowIndex r = 0; r < t.ranges().size(); ++r)
    if (t.str(t.ranges().name[r]) == "aten::conv2d") {
      EXPECT_EQ(t.str(t.ranges().input_dims_at(r)), "[[128, 3, 32, 32], [16, 3, 3, 3], [], [], [], [], []]");
      EXPECT_EQ(t.str(t.ranges().concrete_inputs_at(r)), R"(["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"])");
      break;
    }
}

TEST(Synthetic, RefusesBadOptions) {
  auto bad = [](auto change) {
    SyntheticOptions o = small(100, 2);
    change(o);
    EXPECT_THROW(make_synthetic_trace(o), std::invalid_argument);
  };
  bad([](SyntheticOptions& o) { o.gpus = 0; });
  bad([](SyntheticOptions& o) { o.gpus = 65; });
  bad([](SyntheticOptions& o) { o.layers = 0; });
  bad([](SyntheticOptions& o) { o.compute_streams = 0; });
  bad([](SyntheticOptions& o) { o.compute_streams = 9; });
  bad([](SyntheticOptions& o) { o.padding_share = -0.1; });
  bad([](SyntheticOptions& o) { o.padding_share = 0.5, o.broadcast_share = 0.5; });
  bad([](SyntheticOptions& o) { o.jitter = 0.9; });
  bad([](SyntheticOptions& o) { o.straggler_gpu = 2; });
  bad([](SyntheticOptions& o) { o.straggler_slowdown = 0.5; });
  bad([](SyntheticOptions& o) { o.kernels = 2'000'000'000; });
  bad([](SyntheticOptions& o) { o.normalization_slowdown = std::numeric_limits<double>::quiet_NaN(); });
  bad([](SyntheticOptions& o) { o.hw_interval_ns = 999; });
  bad([](SyntheticOptions& o) { o.throttle_share = 1.5; });
  bad([](SyntheticOptions& o) { o.throttle_share = std::numeric_limits<double>::quiet_NaN(); });
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// Both networks (the workload's: synthetic_workload_test.cpp), every switch.
TEST(Synthetic, EverySwitchCombinationGivesAConsistentTrace) {
  for (const bool workload : {false, true})
    for (int bits = 0; bits < 32; ++bits) {
      SyntheticOptions o;
      o.workload_shape = workload;
      o.kernels = 2345;
      o.gpus = 1 + bits % 3;
      o.overlap_communication = bits & 1;
      o.overlap_weight_update = bits & 2;
      o.prefetch_input = bits & 4;
      o.sync_every_step = bits & 8;
      o.padding_share = 0.1;
      if (workload) {  // its own streams and layers; the report's host knobs
        o.pageable_input = !o.prefetch_input && (bits & 16);
        o.broadcast_share = (bits & 16) ? 0.1 : 0;
        o.transpose_share = (bits & 2) ? 0.05 : 0;
        o.input_wait_ns = 100'000;
        o.loop_host_ns = 50'000;
      } else {
        o.compute_streams = (bits & 16) ? 3 : 1;
        o.layers = 7;
      }
      const Trace t = make_synthetic_trace(o);
      SCOPED_TRACE("switches " + std::to_string(bits) + (workload ? ", the workload's shape" : ""));
      ASSERT_EQ(t.kernels().size(), o.kernels);
      for (TrackId track = 0; track < t.tracks().size(); ++track) {
        const RowRange r = t.rows_of(TableId::kernels, track);
        for (RowIndex i = r.begin + 1; i < r.end; ++i) ASSERT_GE(t.kernels().start[i], t.kernels().end[i - 1]);
      }
      for (std::size_t i = 0; i < t.kernels().size(); ++i) {
        ASSERT_NE(t.kernels().api[i], kNoRow);
        ASSERT_GE(t.kernels().start[i], t.api_calls().end[t.kernels().api[i]]);
      }
      for (std::size_t i = 0; i < t.memcpys().size(); ++i) ASSERT_NE(t.memcpys().api[i], kNoRow);
      if (!workload || o.gpus == 1 || o.overlap_communication) {  // else a device sync before the all-reduce
        EXPECT_EQ(t.syncs().size() > 0, o.sync_every_step);
      }
      // Ranges nest: every phase lies inside a step on its thread (the workload's layers deeper).
      for (std::size_t i = 0; i < t.ranges().size(); ++i) {
        ASSERT_LE(t.ranges().start[i], t.ranges().end[i]);
        ASSERT_LE(t.ranges().depth[i], workload ? 4u : 1u);
      }
    }
}

}  // namespace
}  // namespace gpuscope
