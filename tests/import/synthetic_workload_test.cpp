// Synthetic traces in the bundled workload's shape (SyntheticOptions::
// workload_shape, synthetic_workload.cpp): its kernels and NVTX ranges, the
// report's job (--preset report) and its tuned one (--preset tuned).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "import/synthetic.h"
#include "import/synthetic_program.h"

namespace gpuscope {
namespace {

SyntheticOptions report_job(std::uint64_t steps_per_gpu, std::uint32_t gpus = 4) {
  SyntheticOptions o = SyntheticOptions::report_job();
  o.gpus = gpus;
  o.kernels = steps_per_gpu * gpus * synthetic_kernels_per_step(o);
  return o;
}

SyntheticOptions tuned_job(std::uint64_t steps_per_gpu) {
  SyntheticOptions o = SyntheticOptions::tuned_job();
  o.kernels = steps_per_gpu * o.gpus * synthetic_kernels_per_step(o);
  return o;
}

struct Span {
  TimeNs start = 0, end = 0;
  TimeNs duration() const { return end - start; }
};

std::uint32_t stream_of(const Trace& t, TrackId track) { return t.tracks()[track].stream; }
std::uint32_t device_of(const Trace& t, TrackId track) { return t.tracks()[track].device; }

// Ranges of one name on GPU `device`'s host thread, in time order.
std::vector<Span> ranges_named(const Trace& t, std::string_view name, std::uint32_t device = 0) {
  std::vector<Span> out;
  const RangeTable& r = t.ranges();
  for (std::size_t i = 0; i < r.size(); ++i)
    if (t.str(r.name[i]) == name && t.tracks()[r.track_at(i)].tid == 4250 + device)
      out.push_back({r.start[i], r.end[i]});
  std::sort(out.begin(), out.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  return out;
}

// Time two kernel sets of one device overlap (each set is one stream: no overlap within it).
TimeNs overlap(const Trace& t, std::uint32_t device, std::uint32_t stream_a, std::uint32_t stream_b) {
  std::vector<Span> a, b;
  const KernelTable& k = t.kernels();
  for (std::size_t i = 0; i < k.size(); ++i) {
    if (device_of(t, k.track_at(i)) != device) continue;
    if (stream_of(t, k.track_at(i)) == stream_a) a.push_back({k.start[i], k.end[i]});
    if (stream_of(t, k.track_at(i)) == stream_b) b.push_back({k.start[i], k.end[i]});
  }
  TimeNs sum = 0;
  for (const Span& x : a)
    for (const Span& y : b) sum += std::max<TimeNs>(0, std::min(x.end, y.end) - std::max(x.start, y.start));
  return sum;
}

TEST(SyntheticWorkload, RunsTheWorkloadsKernelsInItsRanges) {
  const Trace t = make_synthetic_trace(report_job(3));
  std::set<std::string> kernels;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    const std::string name(t.str(t.kernels().name[i]));
    EXPECT_NE(t.kernels().category_at(i), KernelCategory::other) << name;
    kernels.insert(name.substr(0, name.find('(')));
  }
  for (const char* k :
       {"void gpuscope::kernels::pad_nchw_kernel<float>", "void gpuscope::kernels::pad_nchw_backward_kernel<float>",
        "void gpuscope::kernels::broadcast_channel_kernel<float>",
        "void gpuscope::kernels::bn_forward_naive_stats_kernel<float>",
        "void gpuscope::kernels::sgd_momentum_kernel<float>", "void gpuscope::kernels::augment_crop_flip_kernel<float>",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL"})
    EXPECT_TRUE(kernels.count(k)) << k;
  // resnet-train's ranges: step > data, forward, backward, all-reduce, optimizer; one per layer and per tensor.
  std::map<std::string, int> count;
  for (std::size_t i = 0; i < t.ranges().size(); ++i)
    if (t.tracks()[t.ranges().track_at(i)].tid == 4250) ++count[std::string(t.str(t.ranges().name[i]))];
  for (const char* phase : {"step", "data", "forward", "backward", "all-reduce", "optimizer", "stem.conv",
                            "stage4.block1.bn2", "stage2.block0.proj.backward", "avgpool", "fc", "loss",
                            "all-reduce.stage3.block0.conv1.weight", "optimizer.fc.bias"})
    EXPECT_EQ(count[phase], 3) << phase;
  // 62 parameter tensors: one all-reduce and one SGD kernel each, per step.
  EXPECT_EQ(std::count_if(count.begin(), count.end(), [](const auto& c) { return c.first.starts_with("optimizer."); }),
            62);
  std::size_t sgd = 0, nccl = 0;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    sgd += t.kernels().category_at(i) == KernelCategory::optimizer;
    nccl += t.kernels().category_at(i) == KernelCategory::communication;
  }
  EXPECT_EQ(sgd, 4u * 3 * 62);
  EXPECT_EQ(nccl, 4u * 3 * 62);
}

// The report's input: each batch prepared on the host in the step's data
// range, then copied from pageable memory with cudaMemcpy on the compute
// stream, the host held until the copy is done.
TEST(SyntheticWorkload, TheReportsBatchesArePreparedThenCopiedFromPageableMemoryBlocking) {
  const SyntheticOptions o = report_job(3);
  const Trace t = make_synthetic_trace(o);
  const MemcpyTable& m = t.memcpys();
  ASSERT_EQ(m.size(), 12u);
  for (std::size_t i = 0; i < m.size(); ++i) {
    EXPECT_EQ(m.kind_at(i), CopyKind::htod);
    EXPECT_EQ(m.src_kind_at(i), MemoryKind::pageable);
    EXPECT_EQ(stream_of(t, m.track_at(i)), 7u);
    const RowIndex a = m.api[i];
    ASSERT_NE(a, kNoRow);
    EXPECT_EQ(t.str(t.api_calls().name[a]), "cudaMemcpy");
    EXPECT_GE(t.api_calls().end[a], m.end[i]) << "the call returns once the copy is done";
  }
  const std::vector<Span> data = ranges_named(t, "data");
  ASSERT_EQ(data.size(), 3u);
  for (const Span& d : data) EXPECT_GT(d.duration(), o.input_wait_ns * 9 / 10);
}

// The report's host: Python between steps (in no range), the same for every
// GPU (one training loop drives them all), and a cudaDeviceSynchronize before
// the all-reduce, which runs per tensor on the compute stream.
TEST(SyntheticWorkload, TheReportsHostRunsPythonBetweenStepsAndSyncsBeforeTheAllReduce) {
  const SyntheticOptions o = report_job(4);
  const Trace t = make_synthetic_trace(o);
  std::vector<std::vector<Span>> steps;
  for (std::uint32_t d = 0; d < 4; ++d) steps.push_back(ranges_named(t, "step", d));
  for (std::size_t s = 1; s < 4; ++s) {
    const TimeNs gap = steps[0][s].start - steps[0][s - 1].end;
    EXPECT_GT(gap, o.loop_host_ns * 9 / 10) << "step " << s;
    for (std::uint32_t d = 1; d < 4; ++d)  // the loop's host time is every GPU's
      EXPECT_NEAR(double(steps[d][s].start - steps[d][s - 1].end), double(gap), 200'000.0) << "GPU " << d;
    const RowRange calls =
        t.rows_overlapping(TableId::api_calls, t.ranges().track_at(0), steps[0][s - 1].end, steps[0][s].start);
    EXPECT_EQ(calls.size(), 0u) << "a call between steps";
  }
  for (std::size_t i = 0; i < t.syncs().size(); ++i) EXPECT_EQ(t.syncs().type_at(i), SyncType::context);
  std::size_t device_syncs = 0;
  for (std::size_t i = 0; i < t.api_calls().size(); ++i)
    device_syncs += t.str(t.api_calls().name[i]) == "cudaDeviceSynchronize";
  EXPECT_EQ(t.syncs().size(), 4u * 4) << "one cudaDeviceSynchronize per step, no sync at its end";
  EXPECT_EQ(device_syncs, 4u * 4);
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    if (t.kernels().category_at(i) == KernelCategory::communication) {
      EXPECT_EQ(stream_of(t, t.kernels().track_at(i)), 7u);
    }
  }
}

TEST(SyntheticWorkload, PlantedSharesAreExactWithoutNoise) {
  SyntheticOptions o = report_job(5);
  o.jitter = 0;
  const Trace t = make_synthetic_trace(o);
  TimeNs all = 0, pad = 0, bcast = 0;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    const TimeNs d = t.kernels().end[i] - t.kernels().start[i];
    all += d;
    pad += t.kernels().category_at(i) == KernelCategory::padding ? d : 0;
    bcast += t.kernels().category_at(i) == KernelCategory::broadcast ? d : 0;
  }
  EXPECT_NEAR(double(pad) / double(all), 0.214, 1e-6);
  EXPECT_NEAR(double(bcast) / double(all), 0.20, 1e-6);
}

// Tuned: per-stage all-reduces on the NCCL stream during backward, each
// stage's update on its own stream as soon as its all-reduce ends, pinned
// copies of the next batch on the copy stream; no padding or broadcast.
TEST(SyntheticWorkload, TheTunedJobOverlapsTheAllReduceTheUpdateAndTheCopies) {
  const Trace t = make_synthetic_trace(tuned_job(4));
  std::map<std::uint32_t, std::set<KernelCategory>> by_stream;
  for (std::size_t i = 0; i < t.kernels().size(); ++i)
    by_stream[stream_of(t, t.kernels().track_at(i))].insert(t.kernels().category_at(i));
  EXPECT_EQ(by_stream[8], (std::set<KernelCategory>{KernelCategory::optimizer}));
  EXPECT_EQ(by_stream[22], (std::set<KernelCategory>{KernelCategory::communication}));
  EXPECT_FALSE(by_stream[7].count(KernelCategory::padding));
  EXPECT_FALSE(by_stream[7].count(KernelCategory::broadcast));
  EXPECT_GT(overlap(t, 0, 7, 8), 0) << "the update runs beside the backward";
  EXPECT_GT(overlap(t, 0, 7, 22), 0) << "the all-reduce runs beside the backward";
  for (std::size_t i = 0; i < t.memcpys().size(); ++i) {
    EXPECT_EQ(t.memcpys().src_kind_at(i), MemoryKind::pinned);
    EXPECT_EQ(stream_of(t, t.memcpys().track_at(i)), 21u);
  }
  EXPECT_EQ(t.memcpys().size(), 4u * 3) << "the next step's batch; the last step has none to fetch";
  EXPECT_EQ(t.syncs().size(), 0u);
}

// An update on its own stream must be done before the next step reads the
// weights of its stage: the first forward op of the stem and of each
// projection block (stages 2-4) waits for that stage's update, and each
// stage's update is the one SGD kernel that completes it.
TEST(SyntheticWorkload, TheNextForwardWaitsForItsStagesUpdate) {
  using namespace detail::synth;
  for (std::uint32_t gpus : {1u, 4u}) {
    SyntheticOptions o = SyntheticOptions::tuned_job();
    o.gpus = gpus;
    const Program p = build_workload_program(o);
    std::vector<int> waits, updates;
    for (const Op& op : p.ops) {
      if (op.wait == Wait::updated) waits.push_back(op.bucket);
      if (op.updates >= 0) updates.push_back(op.updates);
    }
    EXPECT_EQ(waits, (std::vector<int>{0, 1, 2, 3})) << gpus << " GPUs";
    EXPECT_EQ(updates, (std::vector<int>{3, 2, 1, 0})) << gpus << " GPUs";  // backward reaches stage 4 first
    EXPECT_EQ(p.updates, 4u);
  }
  // Without the overlapped update nothing waits.
  for (const auto& op : detail::synth::build_workload_program(SyntheticOptions::report_job()).ops)
    EXPECT_NE(op.wait, detail::synth::Wait::updated);
}

TEST(SyntheticWorkload, HasExactlyTheRequestedKernelCountAndIsDeterministic) {
  for (std::uint64_t n : {1ull, 400ull, 573ull, 574ull, 3000ull})
    for (std::uint32_t gpus : {1u, 2u, 4u}) {
      SyntheticOptions o = SyntheticOptions::report_job();
      o.kernels = n;
      o.gpus = gpus;
      const Trace t = make_synthetic_trace(o);
      EXPECT_EQ(t.kernels().size(), n) << n << " kernels on " << gpus << " GPUs";
      for (std::size_t i = 0; i < t.ranges().size(); ++i) ASSERT_LE(t.ranges().start[i], t.ranges().end[i]);
    }
  const SyntheticOptions o = report_job(2);
  const Trace a = make_synthetic_trace(o), b = make_synthetic_trace(o);
  EXPECT_EQ(a.kernels().start, b.kernels().start);
  EXPECT_EQ(a.api_calls().end, b.api_calls().end);
}

TEST(SyntheticWorkload, RefusesWhatItsShapeDoesNotHave) {
  SyntheticOptions o = report_job(1);
  o.framework_ops = true;
  EXPECT_THROW(make_synthetic_trace(o), std::invalid_argument);
  o = report_job(1);
  o.kernels_per_step = 600;
  EXPECT_THROW(make_synthetic_trace(o), std::invalid_argument);
  o = report_job(1);
  o.prefetch_input = true;  // pageable copies cannot be prefetched
  EXPECT_THROW(make_synthetic_trace(o), std::invalid_argument);
  o = report_job(1);
  o.loop_host_ns = -1;
  EXPECT_THROW(make_synthetic_trace(o), std::invalid_argument);
}

}  // namespace
}  // namespace gpuscope
