// Findings on synthetic training traces with planted problems: each planted
// problem gives exactly its finding, with the planted numbers; clean traces
// give none.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "support/findings.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;
namespace names = testing::names;

constexpr TimeNs us = 1'000;
constexpr TimeNs ms = 1'000'000;

struct K {
  const char* name;
  TimeNs duration;
  std::uint32_t stream = 7;
  std::uint32_t blocks = 1000;
};

// `steps` iterations on `device`: the kernels of each step back to back on
// their streams (1 µs apart), each launched 100 µs ahead (a full queue), an
// NVTX range "step i" around each. `host_gap` of nothing between steps.
void add_steps(TraceFactory& f, int steps, const std::vector<K>& kernels, TimeNs host_gap = 0, std::uint32_t device = 0,
               TimeNs start = 1 * ms) {
  TimeNs t = start;
  for (int s = 0; s < steps; ++s) {
    const TimeNs step_start = t;
    for (const K& k : kernels) {
      f.kernel(device, k.stream, k.name, t, t + k.duration, t - 100 * us, 5 * us, k.blocks);
      t += k.duration + 1 * us;
    }
    f.range("step " + std::to_string(s), step_start - 100 * us, t);
    t += host_gap;
  }
}

const std::vector<K> kCleanStep = {{names::kConvTensorCore, 500 * us},
                                   {names::kRelu, 100 * us},
                                   {names::kBatchNorm, 50 * us},
                                   {names::kGemmTensorCore, 200 * us}};

TEST(Findings, CleanTracesHaveNone) {
  {
    TraceFactory f;
    add_steps(f, 10, kCleanStep);
    const Trace t = f.build();
    const Profile p = analyze(t);
    EXPECT_TRUE(p.findings.empty()) << testing::describe_findings(p);
    EXPECT_GT(p.devices[0].utilization, 0.99);
  }
  {
    // Two GPUs, the all-reduce on its own stream under the backward pass, the
    // update overlapped with it, copies under compute.
    TraceFactory f;
    f.device(1);
    for (std::uint32_t dev : {0u, 1u}) {
      TimeNs t = 1 * ms;
      for (int s = 0; s < 8; ++s) {
        const TimeNs s0 = t;
        f.kernel(dev, 7, names::kConvTensorCore, t, t + 800 * us, t - 100 * us);
        f.kernel(dev, 13, names::kAllReduce, t + 300 * us, t + 700 * us, t - 90 * us);
        f.kernel(dev, 14, names::kSgd, t + 400 * us, t + 450 * us, t - 80 * us);
        f.memcpy(dev, 15, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 1 << 20, t + 100 * us, t + 200 * us,
                 "cudaMemcpyAsync", t - 70 * us);
        t += 801 * us;
        f.range("step " + std::to_string(s), s0 - 100 * us, t, 1 + dev);
      }
    }
    const Trace t = f.build();
    const Profile p = analyze(t);
    EXPECT_TRUE(p.findings.empty()) << testing::describe_findings(p);
  }
}

// A clean run that is GPU-bound has no finding, but whether its heaviest
// kernels could run faster the trace cannot tell without a roofline or
// counters: unmeasured_kernels() names them. Not where the steps wait
// outside the GPU, nor for kernels a roofline measures.
TEST(Findings, GpuBoundKernelsWithoutARooflineAreUnmeasured) {
  {
    TraceFactory f;
    add_steps(f, 10, kCleanStep);
    const Profile p = analyze(f.build());
    const UnmeasuredKernels u = unmeasured_kernels(p);
    ASSERT_EQ(u.hot.size(), 3u);
    EXPECT_EQ(u.hot[0]->name, names::kConvTensorCore);
    EXPECT_NEAR(u.share, (500.0 + 200 + 100) / 850, 1e-3);
    EXPECT_FALSE(u.shapes);
    EXPECT_GT(u.utilization, 0.99);
  }
  {
    TraceFactory f;
    add_steps(f, 10, kCleanStep, 3 * ms);  // host gaps between steps: not GPU-bound
    EXPECT_TRUE(unmeasured_kernels(analyze(f.build())).hot.empty());
  }
  {
    // The GEMM's op records its shapes: its roofline measures it, and the
    // kernels left hold under half the kernel time.
    TraceFactory f;
    f.device(0, 132, 9, "NVIDIA H100 80GB HBM3");
    TimeNs t = 1 * ms;
    for (int s = 0; s < 10; ++s) {
      f.cpu_op("aten::mm", t - 50 * us, t - 40 * us, "[[4096, 4096], [4096, 4096]]",
               "[\"c10::BFloat16\", \"c10::BFloat16\"]");
      f.kernel(0, 7, names::kGemmTensorCore, t, t + 800 * us, t - 45 * us);
      f.kernel(0, 7, names::kRelu, t + 801 * us, t + 1000 * us, t - 30 * us);
      t += 1001 * us;
    }
    const Profile p = analyze(f.build());
    ASSERT_FALSE(p.ops.empty());
    EXPECT_TRUE(unmeasured_kernels(p).hot.empty()) << unmeasured_kernels(p).hot.size();
  }
}

TEST(Findings, PaddingAndBroadcastTimeGiveExactlyThoseFindingsWithThoseShares) {
  TraceFactory f;
  add_steps(f, 10, {{names::kConvTensorCore, 590 * us}, {names::kPad, 210 * us}, {names::kBroadcast, 200 * us}});
  const Trace t = f.build();
  const Profile p = analyze(t);
  EXPECT_EQ(testing::finding_ids(p), (std::set<std::string>{"padding-hotspot", "broadcast-hotspot"}))
      << testing::describe_findings(p);
  const Finding* pad = testing::find_finding(p, "padding-hotspot");
  const Finding* bc = testing::find_finding(p, "broadcast-hotspot");
  ASSERT_TRUE(pad && bc);
  EXPECT_DOUBLE_EQ(pad->metric, 0.21);
  EXPECT_DOUBLE_EQ(bc->metric, 0.20);
  EXPECT_EQ(pad->threshold, 0.05);
  EXPECT_EQ(pad->severity, Severity::critical);
  EXPECT_NE(pad->title.find("21.0% of kernel time"), std::string::npos) << pad->title;
  EXPECT_NE(bc->title.find("20.0% of kernel time"), std::string::npos) << bc->title;
  EXPECT_EQ(pad->saving_ns, 10 * 210 * us);
  EXPECT_EQ(bc->saving_ns, 10 * 200 * us);
  EXPECT_EQ(p.findings.front().id, "padding-hotspot");  // largest saving first
  ASSERT_EQ(pad->kernels.size(), 1u);
  EXPECT_EQ(pad->kernels[0], names::kPad);
  EXPECT_EQ(pad->ranges.size(), 10u);
  EXPECT_EQ(pad->ranges[0].duration(), 210 * us);
  EXPECT_FALSE(pad->recommendation.empty());
  EXPECT_NE(pad->evidence.find("Eigen TensorPaddingOp"), std::string::npos) << pad->evidence;
  for (const CategoryTime& c : p.categories) {
    if (c.category == KernelCategory::padding) {
      EXPECT_DOUBLE_EQ(c.share, 0.21);
    }
    if (c.category == KernelCategory::broadcast) {
      EXPECT_DOUBLE_EQ(c.share, 0.20);
    }
  }
}

TEST(Findings, OneStreamWithoutOverlapHasZeroConcurrency) {
  TraceFactory f;
  // Small kernels (8 blocks on 80 SMs) one after the other on one stream.
  add_steps(f, 10,
            {{names::kConvTensorCore, 300 * us, 7, 8},
             {names::kRelu, 100 * us, 7, 8},
             {names::kGemmTensorCore, 200 * us, 7, 8}});
  const Trace t = f.build();
  const Profile p = analyze(t);
  EXPECT_EQ(p.devices[0].kernel_concurrency, 0.0);
  EXPECT_DOUBLE_EQ(p.devices[0].mean_kernels_in_flight, 1.0);
  EXPECT_EQ(p.devices[0].streams, 1u);
  const Finding* c = testing::find_finding(p, "low-concurrency");
  ASSERT_TRUE(c) << testing::describe_findings(p);
  EXPECT_EQ(c->metric, 0.0);
  EXPECT_NE(c->title.find("0.0%"), std::string::npos) << c->title;
  EXPECT_GT(c->saving_ns, 0);
}

TEST(Findings, AllReduceAfterBackwardWithIdleComputeIsExposed) {
  TraceFactory f;
  add_steps(f, 10, {{names::kConvTensorCore, 600 * us}, {names::kAllReduce, 300 * us, 13}});
  const Trace t = f.build();
  const Profile p = analyze(t);
  const Finding* e = testing::find_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_NEAR(e->metric, 300.0 / 902, 0.005);
  EXPECT_EQ(e->severity, Severity::critical);
  EXPECT_EQ(e->saving_ns, 10 * 300 * us);
  EXPECT_EQ(p.devices[0].communication_compute_overlap, 0.0);
  EXPECT_EQ(e->kernels.front(), names::kAllReduce);
}

// Overlap hides communication only under compute: where a step's
// communication outlasts its compute, the saving is the compute not yet
// beside communication, and the rest is said to need less communication.
TEST(Findings, ExposedCommunicationSavesAtMostTheComputeToHideUnder) {
  TraceFactory f;
  add_steps(f, 10, {{names::kConvTensorCore, 200 * us}, {names::kAllReduce, 500 * us, 13}});
  const Profile p = analyze(f.build());
  const Finding* e = testing::find_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_EQ(p.devices[0].exposed_communication_ns, 10 * 500 * us);
  EXPECT_EQ(e->saving_ns, 10 * 200 * us);  // not the 5 ms exposed
  EXPECT_NE(e->recommendation.find("has no compute to hide under"), std::string::npos) << e->recommendation;
}

// The fix follows the collective: all-reduce keeps the DDP advice; gathers
// get prefetching. A collective whose instances at the same place take far
// longer in some steps than its fastest is said to be likely waiting for
// another rank.
TEST(Findings, ExposedCommunicationIsAdvisedByCollectiveAndTail) {
  {
    TraceFactory f;
    add_steps(f, 10, {{names::kConvTensorCore, 600 * us}, {names::kAllReduce, 300 * us, 13}});
    const Profile p = analyze(f.build());
    const Finding* e = testing::find_finding(p, "exposed-communication");
    ASSERT_TRUE(e) << testing::describe_findings(p);
    EXPECT_NE(e->recommendation.find("bucket"), std::string::npos) << e->recommendation;
    EXPECT_NE(e->evidence.find("100% all_reduce"), std::string::npos) << e->evidence;
    EXPECT_EQ(e->recommendation.find("waiting"), std::string::npos) << e->recommendation;
    EXPECT_EQ(e->variant, "transfer");
  }
  // Point-to-point kernels with no annotation to say otherwise: pipeline
  // stages' sends get the schedule advice.
  {
    TraceFactory f;
    add_steps(f, 10,
              {{names::kConvTensorCore, 600 * us}, {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", 300 * us, 13}});
    const Profile p = analyze(f.build());
    const Finding* e = testing::find_finding(p, "exposed-communication");
    ASSERT_TRUE(e) << testing::describe_findings(p);
    EXPECT_NE(e->recommendation.find("For pipeline parallelism, overlap each send/recv"), std::string::npos)
        << e->recommendation;
  }
  // One all-gather per step waits 20x longer in one step. Without steps (and
  // without message sizes) one collective of a kind cannot be told from
  // another: no judgement.
  for (const bool steps : {true, false}) {
    SCOPED_TRACE(steps ? "steps" : "no steps");
    TraceFactory f;
    f.device(0);
    TimeNs t = 1 * ms;
    for (int s = 0; s < 10; ++s) {
      const TimeNs s0 = t;
      f.kernel(0, 7, names::kConvTensorCore, t, t + 600 * us);
      const TimeNs wait = s == 4 ? 6 * ms : 300 * us;
      f.kernel(0, 13, "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", t + 610 * us,
               t + 610 * us + wait);
      t += 610 * us + wait + 20 * us;
      if (steps) f.range("step " + std::to_string(s), s0 - 15 * us, t - 10 * us);
    }
    const Profile p = analyze(f.build());
    const Finding* e = testing::find_finding(p, "exposed-communication");
    ASSERT_TRUE(e) << testing::describe_findings(p);
    EXPECT_NE(e->evidence.find("100% all_gather"), std::string::npos) << e->evidence;
    EXPECT_NE(e->recommendation.find("prefetch"), std::string::npos) << e->recommendation;
    if (!steps) {
      EXPECT_EQ(e->variant, "");
      EXPECT_NE(e->evidence.find("neither steps nor message sizes"), std::string::npos) << e->evidence;
      continue;
    }
    EXPECT_EQ(e->variant, "waiting");
    EXPECT_NE(e->recommendation.find("likely waiting for another rank"), std::string::npos) << e->recommendation;
    EXPECT_NE(e->evidence.find("fastest 300.0 µs, median 300.0 µs, longest 6.0 ms over 10 instances"),
              std::string::npos)
        << e->evidence;
  }
}

// Six steps: the host loads a batch (`loader` names the DataLoader's
// iterator) for 400 µs while the GPU waits, copies it (`copy` memory, none:
// no copy), then the GPU computes 600 µs.
// `inside(f, t, s)` adds host ranges inside step s's loading, from t.
Trace data_loader_steps(const std::string& loader, MemoryKind copy = MemoryKind::unknown,
                        const std::function<void(TraceFactory&, TimeNs, int)>& inside = {}) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 6; ++s) {
    const TimeNs s0 = t;
    f.range("enumerate(DataLoader)#" + loader + ".__next__", t, t + 400 * us, 1, RangeKind::annotation, "cpu_op");
    if (inside) inside(f, t, s);
    t += 400 * us;
    if (copy != MemoryKind::unknown)
      f.memcpy(0, 7, CopyKind::htod, copy, MemoryKind::device, 1 << 20, t + 5 * us, t + 15 * us, "cudaMemcpyAsync", t);
    f.kernel(0, 7, names::kConvTensorCore, t + 20 * us, t + 620 * us, t + 1 * us);
    t += 621 * us;
    f.range("ProfilerStep#" + std::to_string(s), s0, t, 1, RangeKind::annotation, "user_annotation");
  }
  return f.build();
}

TEST(Findings, GpuWaitingForTheDataLoaderIsInputBound) {
  const Profile p = analyze(data_loader_steps("_SingleProcessDataLoaderIter"));
  const Finding* in = testing::find_finding(p, "input-bound");
  ASSERT_TRUE(in) << testing::describe_findings(p);
  EXPECT_EQ(in->severity, Severity::critical);
  EXPECT_NEAR(in->metric, 400.0 / 1021, 0.001);
  EXPECT_NE(in->title.find("Highly input-bound"), std::string::npos) << in->title;
  EXPECT_EQ(in->saving_ns, 6 * 400 * us);
  // The loader's iterator says it has no workers.
  EXPECT_NE(in->evidence.find("num_workers=0"), std::string::npos) << in->evidence;
  EXPECT_NE(in->recommendation.find("give the DataLoader worker processes"), std::string::npos) << in->recommendation;
}

// A loader that already has workers is told to make them keep up, not to
// get some; pin_memory is not prescribed where the input copies are pinned.
TEST(Findings, InputBoundAdviceFollowsWhatTheLoaderAlreadyDoes) {
  const Profile p = analyze(data_loader_steps("_MultiProcessingDataLoaderIter", MemoryKind::pinned));
  const Finding* in = testing::find_finding(p, "input-bound");
  ASSERT_TRUE(in) << testing::describe_findings(p);
  EXPECT_NE(in->evidence.find("already loads in worker processes"), std::string::npos) << in->evidence;
  EXPECT_EQ(in->recommendation.rfind("Make the workers keep up", 0), 0u) << in->recommendation;
  EXPECT_EQ(in->recommendation.find("pin_memory"), std::string::npos) << in->recommendation;

  const Profile q = analyze(data_loader_steps("_MultiProcessingDataLoaderIter", MemoryKind::pageable));
  const Finding* g = testing::find_finding(q, "input-bound");
  ASSERT_TRUE(g) << testing::describe_findings(q);
  EXPECT_NE(g->recommendation.find("pin_memory=True"), std::string::npos) << g->recommendation;
}

// Inside each batch's 400 µs of loading: fetch (390 µs) > the pipeline's
// __next__ (380 µs) > an image processor's preprocess (320 µs) > its resize
// (280 µs) > the library's zoom (270 µs), and 50 µs of other work.
// `callers`: each step's preprocess inside a caller of its own, alternating
// between two functions (1), or between two lines of one generator, which
// Python's tracer names by the line it resumed at (2).
void nested_loading(TraceFactory& f, TimeNs t, int step, int callers) {
  auto py = [&](std::string_view name, TimeNs a, TimeNs b) {
    f.range(name, t + a * us, t + b * us, 1, RangeKind::annotation, "python_function");
  };
  py("torch/utils/data/_utils/fetch.py(25): fetch", 5, 395);
  py("pipelines/pt_utils.py(180): __next__", 10, 390);
  if (callers == 1) py(step % 2 ? "a.py(1): f" : "b.py(2): g", 10, 335);
  if (callers == 2) py(step % 2 ? "detection.py(164): preprocess" : "detection.py(176): preprocess", 10, 335);
  py("image_processing_owlv2.py(368): preprocess", 10, 330);
  py("image_processing_owlv2.py(301): resize", 20, 300);
  py("scipy/ndimage/_interpolation.py(739): zoom", 25, 295);
  py("other.py(5): step", 335, 385);
}

// Where the loading time goes: the path down the nested ranges, each the
// heaviest inside the one before while it holds more than half; the fix
// names the preprocessing.
TEST(Findings, InputBoundSaysWhereTheLoadingTimeGoes) {
  const Profile p = analyze(data_loader_steps("_SingleProcessDataLoaderIter", MemoryKind::unknown,
                                              [](TraceFactory& f, TimeNs t, int s) { nested_loading(f, t, s, 0); }));
  EXPECT_EQ(p.workload.data_loading_ns, 6 * 400 * us);
  std::vector<std::string> path;
  for (const HostRange& h : p.workload.input_work) path.push_back(h.name);
  EXPECT_EQ(path, (std::vector<std::string>{
                      "torch/utils/data/_utils/fetch.py(25): fetch", "pipelines/pt_utils.py(180): __next__",
                      "image_processing_owlv2.py(368): preprocess", "image_processing_owlv2.py(301): resize",
                      "scipy/ndimage/_interpolation.py(739): zoom"}));
  const Finding* in = testing::find_finding(p, "input-bound");
  ASSERT_TRUE(in) << testing::describe_findings(p);
  EXPECT_NE(in->evidence.find("image_processing_owlv2.py(368): preprocess 1.9 ms (6 calls) > "
                              "image_processing_owlv2.py(301): resize 1.7 ms (6 calls) > "
                              "scipy/ndimage/_interpolation.py(739): zoom 1.6 ms (6 calls)."),
            std::string::npos)
      << in->evidence;
  EXPECT_EQ(in->recommendation.rfind("The input time is preprocessing on the host (image_processing_owlv2.py(301): "
                                     "resize, most of it in scipy/ndimage/_interpolation.py(739): zoom)",
                                     0),
            0u)
      << in->recommendation;
  // Resizing is array work, not decoding: no decoder is named for it.
  EXPECT_EQ(in->recommendation.find("DALI"), std::string::npos) << in->recommendation;
  EXPECT_NE(in->recommendation.find("a small dataset can also stay resident on the GPU"), std::string::npos)
      << in->recommendation;

  // The same preprocess under two callers, each holding half of the steps:
  // merged as a flame graph, neither caller holds more than half, and the
  // path stops above them (by name alone, preprocess would look whole).
  const Profile q = analyze(data_loader_steps("_SingleProcessDataLoaderIter", MemoryKind::unknown,
                                              [](TraceFactory& f, TimeNs t, int s) { nested_loading(f, t, s, 1); }));
  ASSERT_EQ(q.workload.input_work.size(), 2u);
  EXPECT_EQ(q.workload.input_work.back().name, "pipelines/pt_utils.py(180): __next__");
  const Finding* g = testing::find_finding(q, "input-bound");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->recommendation.find("The input time is preprocessing"), std::string::npos) << g->recommendation;
  // One generator recorded at two lines is one function: the path goes on
  // through it, every step's calls counted.
  const Profile r = analyze(data_loader_steps("_SingleProcessDataLoaderIter", MemoryKind::unknown,
                                              [](TraceFactory& f, TimeNs t, int s) { nested_loading(f, t, s, 2); }));
  ASSERT_EQ(r.workload.input_work.size(), 6u);
  EXPECT_EQ(r.workload.input_work[2].count, 6u);
  EXPECT_EQ(r.workload.input_work.back().name, "scipy/ndimage/_interpolation.py(739): zoom");
  EXPECT_EQ(r.workload.input_work.back().count, 6u);
}

// One inference step: the host preprocesses for 6 ms, then the GPU runs 4 ms.
// The GPU's span is its 4 ms, all busy: only the step shows the wait.
// `gpu`: the device's name; empty: a device without name or compute
// capability (whose GPU, unknown).
Trace preprocess_then_compute(std::string_view host_range, std::string_view domain,
                              const std::string& gpu = "Test GPU") {
  TraceFactory f;
  f.device(0, 80, gpu.empty() ? 0 : 8, gpu);
  const TimeNs s0 = 1 * ms;
  f.range(host_range, s0 + 100 * us, s0 + 6 * ms, 1, RangeKind::annotation, domain);
  for (int i = 0; i < 4; ++i)
    f.kernel(0, 7, names::kConvTensorCore, s0 + 6 * ms + i * ms, s0 + 7 * ms + i * ms, s0 + 6 * ms - 50 * us + i * us,
             1 * us);
  f.range("ProfilerStep#3", s0, s0 + 10 * ms, 1, RangeKind::annotation, "user_annotation");
  return f.build();
}

TEST(Findings, HostPreprocessingBeforeTheGpusFirstOpIsStepHostTime) {
  const Profile p = analyze(
      preprocess_then_compute("transformers/pipelines/video_classification.py(129): preprocess", "python_function"));
  EXPECT_EQ(p.steps.outside_gpu_ns, 6 * ms);
  EXPECT_EQ(p.steps.before_gpu_ns, 6 * ms);
  ASSERT_FALSE(p.steps.outside_ranges.empty());
  EXPECT_NE(p.steps.outside_ranges[0].name.find("preprocess"), std::string::npos);
  const Finding* f = testing::find_finding(p, "step-host-time");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_EQ(f->severity, Severity::critical);
  EXPECT_NEAR(f->metric, 0.6, 1e-9);
  EXPECT_EQ(f->saving_ns, 6 * ms);
  EXPECT_NE(f->evidence.find("preprocess 5.9 ms"), std::string::npos) << f->evidence;
  EXPECT_NE(f->recommendation.find("Preprocessing on the host"), std::string::npos) << f->recommendation;
  // The span-based rules see a GPU busy all its span.
  EXPECT_FALSE(testing::find_finding(p, "low-utilization"));
}

// "The host works" only where the trace records it: a step whose host time
// lies in no recorded range (the profiler's step range on another thread,
// nothing of the host's own work traced) says so instead.
TEST(Findings, StepHostTimeSaysTheHostWorksOnlyWhereItIsRecorded) {
  const Profile p = analyze(preprocess_then_compute("preprocess", "python_function"));
  const Finding* f = testing::find_finding(p, "step-host-time");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_NE(f->title.find("the host works"), std::string::npos) << f->title;
  TraceFactory bare;
  bare.device(0, 80, 8, "NVIDIA A100");
  for (int i = 0; i < 4; ++i)
    bare.kernel(0, 7, names::kConvTensorCore, 7 * ms + i * ms, 8 * ms + i * ms, 7 * ms - 50 * us + i * us, 1 * us);
  bare.range("ProfilerStep#3", 1 * ms, 11 * ms, 2, RangeKind::annotation, "user_annotation");
  const Profile q = analyze(bare.build());
  const Finding* g = testing::find_finding(q, "step-host-time");
  ASSERT_TRUE(g) << testing::describe_findings(q);
  EXPECT_EQ(g->title.find("the host works"), std::string::npos) << g->title;
  EXPECT_NE(g->title.find("the trace mostly does not record"), std::string::npos) << g->title;
}

// Loading whose ranges decode images gets the vendor's decoders.
TEST(Findings, InputBoundNamesDecodersWhereTheLoadingDecodes) {
  const Profile p = analyze(
      data_loader_steps("_SingleProcessDataLoaderIter", MemoryKind::unknown, [](TraceFactory& f, TimeNs t, int) {
        f.range("torch/utils/data/_utils/fetch.py(25): fetch", t + 5 * us, t + 395 * us, 1, RangeKind::annotation,
                "python_function");
        f.range("PIL/ImageFile.py(250): load", t + 10 * us, t + 380 * us, 1, RangeKind::annotation, "python_function");
      }));
  const Finding* in = testing::find_finding(p, "input-bound");
  ASSERT_TRUE(in) << testing::describe_findings(p);
  EXPECT_NE(in->recommendation.find("decode and augment on the GPU (NVIDIA DALI)"), std::string::npos)
      << in->recommendation;
}

// Decoding moved to the GPU names the decoders the GPU's vendor ships:
// NVDEC and DALI are NVIDIA's, rocDecode and rocJPEG ROCm's; a trace that
// does not say whose GPU ran it names both.
TEST(Findings, StepHostTimeNamesTheGpuVendorsDecoders) {
  const std::string range = "transformers/pipelines/video_classification.py(36): read_video_pyav";
  auto fix = [&](const std::string& gpu) {
    const Profile p = analyze(preprocess_then_compute(range, "python_function", gpu));
    const Finding* f = testing::find_finding(p, "step-host-time");
    EXPECT_TRUE(f) << testing::describe_findings(p);
    return f ? f->recommendation : std::string();
  };
  const std::string amd = fix("AMD Instinct MI300X VF");
  EXPECT_NE(amd.find("rocDecode and rocJPEG"), std::string::npos) << amd;
  EXPECT_EQ(amd.find("NVDEC"), std::string::npos) << amd;
  EXPECT_EQ(amd.find("DALI"), std::string::npos) << amd;
  const std::string nvidia = fix("NVIDIA H100 80GB HBM3");
  EXPECT_NE(nvidia.find("NVDEC, NVIDIA DALI"), std::string::npos) << nvidia;
  EXPECT_EQ(nvidia.find("rocDecode"), std::string::npos) << nvidia;
  const std::string unknown = fix("");
  EXPECT_NE(unknown.find("NVDEC or DALI on NVIDIA, rocDecode or rocJPEG on AMD"), std::string::npos) << unknown;
}

// Preprocessing whose ranges do not decode (resizing, normalizing arrays)
// moves to GPU tensors: no decoder is named for it.
TEST(Findings, StepHostTimeNamesNoDecoderForArrayWork) {
  for (const std::string gpu : {"NVIDIA H100 80GB HBM3", "AMD Instinct MI300X VF"}) {
    const Profile p = analyze(preprocess_then_compute(
        "transformers/models/videomae/image_processing_videomae.py(178): _preprocess_image", "python_function", gpu));
    const Finding* f = testing::find_finding(p, "step-host-time");
    ASSERT_TRUE(f) << testing::describe_findings(p);
    EXPECT_NE(f->recommendation.find("resize, rescale and normalize GPU tensors"), std::string::npos)
        << f->recommendation;
    for (const char* decoder : {"NVDEC", "DALI", "rocDecode", "rocJPEG", "decoding"})
      EXPECT_EQ(f->recommendation.find(decoder), std::string::npos) << decoder << ": " << f->recommendation;
  }
}

TEST(Findings, DataLoadingBeforeTheFirstOpIsInputBoundNotStepHostTime) {
  const Profile p =
      analyze(preprocess_then_compute("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "cpu_op"));
  EXPECT_TRUE(testing::find_finding(p, "input-bound")) << testing::describe_findings(p);
  EXPECT_FALSE(testing::find_finding(p, "step-host-time")) << testing::describe_findings(p);
}

TEST(Findings, HostWorkBetweenGpuOpsIsNotStepHostTime) {
  // Three steps, each 1 ms of host work then 1 ms of GPU work: only the first
  // step's lead is outside the GPU's span (1 of 6 ms, under the threshold).
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 3; ++s) {
    f.range("ProfilerStep#" + std::to_string(s), t, t + 2 * ms, 1, RangeKind::annotation, "user_annotation");
    f.range("my_host_work", t, t + 1 * ms, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, names::kConvTensorCore, t + 1 * ms, t + 2 * ms, t + 1 * ms - 20 * us, 1 * us);
    t += 2 * ms;
  }
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.steps.outside_gpu_ns, 1 * ms);
  EXPECT_FALSE(testing::find_finding(p, "step-host-time")) << testing::describe_findings(p);
}

TEST(Findings, TinyKernelsLaunchedOneByOneAreLaunchBound) {
  TraceFactory f;
  TimeNs cpu = 1 * ms;
  for (int i = 0; i < 2000; ++i) {
    // Launch call 5 µs; the 2 µs kernel starts 1 µs after it returns; the next call starts after it ends.
    f.kernel(0, 7, names::kRelu, cpu + 6 * us, cpu + 8 * us, cpu, 5 * us);
    cpu += 9 * us;
  }
  const Trace t = f.build();
  const Profile p = analyze(t);
  const Finding* l = testing::find_finding(p, "launch-bound");
  ASSERT_TRUE(l) << testing::describe_findings(p);
  EXPECT_DOUBLE_EQ(p.launches.short_kernel_share, 1.0);
  EXPECT_GT(l->metric, 0.5);
}

// The graph in the GPU vendor's words: a HIP graph and hip* calls on AMD,
// a CUDA graph and cuda* calls otherwise.
TEST(LaunchBound, TheGraphIsTheVendors) {
  for (const bool amd : {false, true}) {
    for (const bool framework : {false, true}) {
      TraceFactory f;
      f.device(0, amd ? 304 : 132, 9, amd ? "AMD Instinct MI300X" : "NVIDIA H100 80GB HBM3");
      TimeNs cpu = 1 * ms;
      for (int i = 0; i < 2000; ++i) {
        if (framework) f.range("aten::add", cpu - 1 * us, cpu + 5 * us, 1, RangeKind::annotation, "cpu_op");
        f.kernel(0, 7, framework ? names::kRelu : "saxpy_kernel", cpu + 6 * us, cpu + 8 * us, cpu, 5 * us);
        cpu += 9 * us;
      }
      const Profile p = analyze(f.build());
      const Finding* l = testing::find_finding(p, "launch-bound");
      ASSERT_TRUE(l) << testing::describe_findings(p);
      const std::string& fix = l->recommendation;
      EXPECT_NE(fix.find(amd ? "HIP graph" : "CUDA graph"), std::string::npos) << fix;
      EXPECT_EQ(fix.find(amd ? "CUDA graph" : "HIP graph"), std::string::npos) << fix;
      if (!framework) {
        EXPECT_NE(fix.find(amd ? "hipStreamBeginCapture, hipGraphLaunch" : "cudaStreamBeginCapture, cudaGraphLaunch"),
                  std::string::npos)
            << fix;
      }
    }
  }
}

// Launch-bound's advice fits what the run already does: a compiled run
// (Triton kernels) is told to add CUDA graphs, not to compile; a run that is
// not known to train is not told about fused optimizers.
TEST(LaunchBound, TheAdviceFitsACompiledRun) {
  for (const bool compiled : {false, true}) {
    TraceFactory f;
    TimeNs cpu = 1 * ms;
    for (int i = 0; i < 2000; ++i) {
      f.range("aten::add", cpu - 1 * us, cpu + 5 * us, 1, RangeKind::annotation, "cpu_op");
      f.kernel(0, 7, compiled ? "triton_poi_fused_add_mul_0" : names::kRelu, cpu + 6 * us, cpu + 8 * us, cpu, 5 * us);
      cpu += 9 * us;
    }
    const Profile p = analyze(f.build());
    ASSERT_EQ(p.workload.execution, compiled ? "compiled" : "eager");
    ASSERT_EQ(p.workload.framework, "pytorch");
    const Finding* l = testing::find_finding(p, "launch-bound");
    ASSERT_TRUE(l) << testing::describe_findings(p);
    EXPECT_EQ(l->recommendation.find("fused optimizers"), std::string::npos) << l->recommendation;
    if (compiled) {
      EXPECT_NE(l->recommendation.find("compiled but still launches kernel by kernel"), std::string::npos)
          << l->recommendation;
      EXPECT_EQ(l->recommendation.find("fuse small elementwise kernels"), std::string::npos) << l->recommendation;
    } else {
      EXPECT_NE(l->recommendation.find("fuse small elementwise kernels (torch.compile)"), std::string::npos)
          << l->recommendation;
    }
  }
}

// In a compiled run, the GPU's wait for launches of ops outside
// torch.compile's regions (eager code around the compiled model) is said
// apart: graphs of the compiled regions do not remove it. A run whose waits
// all lie inside the regions is not told so.
TEST(LaunchBound, ACompiledRunsEagerWaitsAreSaidApart) {
  for (const int eager : {0, 1000}) {
    TraceFactory f;
    TimeNs cpu = 1 * ms;
    const TimeNs region_start = cpu - 2 * us;
    for (int i = 0; i < 2000; ++i) {
      f.range(i < 2000 - eager ? "aten::add" : "aten::mul", cpu - 1 * us, cpu + 5 * us, 1, RangeKind::annotation,
              "cpu_op");
      f.kernel(0, 7, "triton_poi_fused_add_mul_0", cpu + 6 * us, cpu + 8 * us, cpu, 5 * us);
      cpu += 9 * us;
    }
    f.range("Torch-Compiled Region: 0/0", region_start, 1 * ms + (2000 - eager) * 9 * us - 3 * us, 1,
            RangeKind::annotation, "cpu_op");
    const Profile p = analyze(f.build());
    ASSERT_EQ(p.workload.execution, "compiled");
    const Finding* l = testing::find_finding(p, "launch-bound");
    ASSERT_TRUE(l) << testing::describe_findings(p);
    const bool said = l->recommendation.find("is for ops outside the compiled regions") != std::string::npos;
    EXPECT_EQ(said, eager > 0) << l->recommendation;
    if (eager) {
      EXPECT_NE(l->recommendation.find("(50%)"), std::string::npos) << l->recommendation;
    }
  }
}

TEST(Findings, SynchronizingEveryStepDrainsTheQueue) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 10; ++s) {
    f.kernel(0, 7, names::kConvTensorCore, t, t + 800 * us, t - 50 * us);
    f.sync(SyncType::context, 0, kNoId, t - 40 * us, t + 800 * us);            // .item()
    f.kernel(0, 7, names::kRelu, t + 1000 * us, t + 1100 * us, t + 990 * us);  // 200 µs of host work first
    t += 1101 * us;
  }
  const Trace tr = f.build();
  const Profile p = analyze(tr);
  const Finding* h = testing::find_finding(p, "host-sync");
  ASSERT_TRUE(h) << testing::describe_findings(p);
  EXPECT_EQ(p.syncs.gpu_idle_after_ns, 10 * 200 * us);
  EXPECT_EQ(h->saving_ns, 10 * 200 * us);
  // The late launch that ends each gap comes after the sync: the gap is
  // host-sync's, not launch overhead as well.
  EXPECT_EQ(p.launches.late_launch_idle_ns, 0);
  EXPECT_FALSE(testing::find_finding(p, "launch-bound")) << testing::describe_findings(p);
  EXPECT_NE(h->recommendation.find(".item()"), std::string::npos) << h->recommendation;  // PyTorch's kernels
}

// The same in a program of its own kernels (no framework): the advice names
// the CUDA calls, not PyTorch's.
TEST(Findings, AProgramWithoutAFrameworkIsAdvisedInCudaTerms) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 10; ++s) {
    f.kernel(0, 7, "advec_cell_kernel", t, t + 800 * us, t - 50 * us);
    f.sync(SyncType::context, 0, kNoId, t - 40 * us, t + 800 * us);
    f.kernel(0, 7, "field_summary_kernel", t + 1000 * us, t + 1100 * us, t + 990 * us);
    t += 1101 * us;
  }
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.workload.framework, "unknown");
  const Finding* h = testing::find_finding(p, "host-sync");
  ASSERT_TRUE(h) << testing::describe_findings(p);
  EXPECT_NE(h->recommendation.find("cudaDeviceSynchronize"), std::string::npos) << h->recommendation;
  EXPECT_EQ(h->recommendation.find(".item()"), std::string::npos) << h->recommendation;
}

TEST(Findings, OptimizerKernelsAloneAtTheEndOfTheStep) {
  TraceFactory f;
  std::vector<K> step = {{names::kConvTensorCore, 800 * us}};
  for (int i = 0; i < 40; ++i) step.push_back({names::kSgd, 5 * us});
  add_steps(f, 5, step);
  const Trace t = f.build();
  const Profile p = analyze(t);
  const Finding* w = testing::find_finding(p, "serialized-weight-update");
  ASSERT_TRUE(w) << testing::describe_findings(p);
  EXPECT_EQ(w->metric, 0.0);  // nothing runs alongside
  EXPECT_NE(w->title.find("40 per step"), std::string::npos) << w->title;
  EXPECT_NE(w->recommendation.find("Use a fused multi-tensor optimizer"), std::string::npos) << w->recommendation;
}

// A multi-tensor optimizer that still runs alone: fusing is done, overlap is
// what the advice is about.
TEST(Findings, AFusedOptimizerAloneIsToldToOverlapNotToFuse) {
  TraceFactory f;
  std::vector<K> step = {{names::kConvTensorCore, 800 * us}};
  for (int i = 0; i < 4; ++i)
    step.push_back(
        {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
         "namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::FusedSgdMathFunctor<float, "
         "3> >(int)",
         60 * us});
  add_steps(f, 5, step);
  const Profile p = analyze(f.build());
  const Finding* w = testing::find_finding(p, "serialized-weight-update");
  ASSERT_TRUE(w) << testing::describe_findings(p);
  EXPECT_EQ(p.workload.optimizer, "fused") << p.workload.optimizer_evidence;
  EXPECT_NE(w->evidence.find("The optimizer is already fused: 20 multi-tensor or fused kernels of 20 optimizer"),
            std::string::npos)
      << w->evidence;
  EXPECT_EQ(w->recommendation.find("Use a fused multi-tensor optimizer"), std::string::npos) << w->recommendation;
  EXPECT_NE(w->recommendation.find("overlap the update"), std::string::npos) << w->recommendation;
}

TEST(Findings, Fp32ConvolutionsOnTensorCoreHardware) {
  TraceFactory f;
  f.device(0, 80, 7, "Tesla V100");
  add_steps(f, 5, {{names::kConvFp32, 800 * us}, {names::kRelu, 100 * us}});
  const Trace t = f.build();
  const Profile p = analyze(t);
  const Finding* tc = testing::find_finding(p, "no-tensor-cores");
  ASSERT_TRUE(tc) << testing::describe_findings(p);
  EXPECT_EQ(tc->metric, 0.0);
  EXPECT_EQ(tc->saving_ns, 5 * 400 * us);
  EXPECT_NE(tc->title.find("Tesla V100"), std::string::npos);
  // The fp32 elementwise work (11.1% of kernel time) is memory-bound work
  // mixed precision speeds up too: the saving is a lower bound, and fusing
  // that work comes next.
  EXPECT_EQ(tc->variant, "lower-bound");
  EXPECT_NE(tc->recommendation.find("a lower bound: the replay makes only the convolutions and GEMMs 2× faster"),
            std::string::npos)
      << tc->recommendation;
  EXPECT_NE(tc->recommendation.find("(11.1% of kernel time here)"), std::string::npos) << tc->recommendation;
  EXPECT_NE(tc->recommendation.find("is a larger share of the step: fuse it ("), std::string::npos)
      << tc->recommendation;
  // Little of it: no such words.
  TraceFactory lean;
  lean.device(0, 80, 7, "Tesla V100");
  add_steps(lean, 5, {{names::kConvFp32, 800 * us}, {names::kRelu, 40 * us}});
  const Profile lp = analyze(lean.build());
  const Finding* l = testing::find_finding(lp, "no-tensor-cores");
  ASSERT_TRUE(l) << testing::describe_findings(lp);
  EXPECT_EQ(l->variant, "");
  EXPECT_EQ(l->recommendation.find("lower bound"), std::string::npos) << l->recommendation;

  TraceFactory old;
  old.device(0, 80, 6, "Tesla P100");  // no tensor cores: nothing to say
  add_steps(old, 5, {{names::kConvFp32, 800 * us}, {names::kRelu, 100 * us}});
  const Trace t2 = old.build();
  EXPECT_FALSE(testing::find_finding(analyze(t2), "no-tensor-cores"));

  // An AMD GPU (a ROCm trace): its matrix units' kernels are not named as
  // NVIDIA's, so neither the finding nor a yes.
  TraceFactory amd;
  amd.device(0, 304, 9, "AMD Instinct MI300X");
  add_steps(amd, 5, {{names::kConvFp32, 800 * us}, {names::kRelu, 100 * us}});
  const Profile q = analyze(amd.build());
  EXPECT_FALSE(testing::find_finding(q, "no-tensor-cores")) << testing::describe_findings(q);
  const auto precision =
      std::find_if(q.helps.begin(), q.helps.end(), [](const HelpAnswer& a) { return a.id == "mixed-precision"; });
  ASSERT_NE(precision, q.helps.end());
  EXPECT_EQ(precision->verdict, Verdict::unknown) << precision->reason;
}

TEST(Findings, PageableAndBlockingCopies) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 5; ++s) {
    f.memcpy(0, 7, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, 20 << 20, t, t + 2 * ms, "cudaMemcpyAsync",
             t - 10 * us);
    f.kernel(0, 7, names::kConvTensorCore, t + 2 * ms + 1 * us, t + 10 * ms, t);
    f.memcpy(0, 7, CopyKind::dtoh, MemoryKind::device, MemoryKind::pageable, 4 << 20, t + 10 * ms, t + 11 * ms,
             "cudaMemcpy", t + 20 * us, 11 * ms - 20 * us);
    t += 11 * ms + 1 * us;
  }
  const Trace tr = f.build();
  const Profile p = analyze(tr);
  EXPECT_TRUE(testing::find_finding(p, "pageable-memcpy")) << testing::describe_findings(p);
  // The blocking read-backs are found (numbered or minor: they leave the GPU idle only 1 µs each).
  EXPECT_TRUE(testing::find_any_finding(p, "sync-memcpy")) << testing::describe_findings(p);
  // Every copy is pageable: their time is pageable-memcpy's, not low-memcpy-overlap's as well.
  EXPECT_FALSE(testing::find_finding(p, "low-memcpy-overlap")) << testing::describe_findings(p);
  EXPECT_EQ(p.memcpys.pageable, 10u);
}

// Gaps ended by work held by a dependency (launched before the gap began): the
// trace does not show what that work waited for, so the finding says the
// gaps and claims no saving for them.
// 20 kernels 2 ms apart; the first `late` of the gaps are ended by a launch
// made 20 µs before its kernel starts, the others by work queued before the
// gap began.
Profile gaps_ended_by(int late) {
  TraceFactory f;
  f.device(0);
  TimeNs t = 5 * ms;
  for (int i = 0; i < 20; ++i) {
    f.kernel(0, 7, names::kConvTensorCore, t, t + 1 * ms, i > 0 && i <= late ? t - 20 * us : t - 2950 * us, 5 * us);
    t += 3 * ms;
  }
  return analyze(f.build());
}

// Gaps ended by work held by a dependency (launched before the gap began): the
// trace does not show what that work waited for, so the finding says the
// gaps and claims no saving for them. Late launches get advice of their own
// where they hold a tenth of the gaps a fix may remove.
TEST(Findings, GapsEndedByQueuedWorkClaimNoSaving) {
  const Profile p = gaps_ended_by(0);
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_NE(g->title.find("ended by work held by a dependency"), std::string::npos) << g->title;
  EXPECT_EQ(g->saving_ns, 0);
  EXPECT_NE(g->saving_note.find("unknown"), std::string::npos) << g->saving_note;
  EXPECT_NE(g->recommendation.find("save an unknown share"), std::string::npos) << g->recommendation;
  // One late gap of 19: under a tenth, no advice of its own.
  const Finding* one = testing::find_finding(gaps_ended_by(1), "gpu-idle-gaps");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->recommendation.find("Gaps ended by late launches"), std::string::npos) << one->recommendation;
  // Five of 19: a quarter, its own advice.
  const Finding* five = testing::find_finding(gaps_ended_by(5), "gpu-idle-gaps");
  ASSERT_TRUE(five);
  EXPECT_NE(five->recommendation.find("Gaps ended by late launches"), std::string::npos) << five->recommendation;
}

// Held work whose launching thread called cudaStreamWaitEvent just before
// the launch waited behind that event: the finding names the call (the
// trace shows it) and says what it cannot show (the event's producer). With
// no communication in the trace, a collective's peer is no candidate.
TEST(Findings, HeldWorkBehindAStreamWaitNamesTheWait) {
  auto held = [](bool wait) {
    TraceFactory f;
    f.device(0);
    TimeNs t = 5 * ms;
    for (int i = 0; i < 20; ++i) {
      if (wait && i > 0) f.api("cudaStreamWaitEvent", t - 2960 * us, t - 2956 * us);
      f.kernel(0, 7, names::kConvTensorCore, t, t + 1 * ms, i > 0 ? t - 2950 * us : t - 20 * us, 5 * us);
      t += 3 * ms;
    }
    return analyze(f.build());
  };
  const Profile p = held(true);
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_NE(g->recommendation.find("of the gaps' held time, 38.0 ms waited behind a cudaStreamWaitEvent"),
            std::string::npos)
      << g->recommendation;
  EXPECT_EQ(g->saving_ns, 0);
  const Profile q = held(false);
  const Finding* h = testing::find_finding(q, "gpu-idle-gaps");
  ASSERT_TRUE(h) << testing::describe_findings(q);
  EXPECT_EQ(h->recommendation.find("waited behind"), std::string::npos) << h->recommendation;
  EXPECT_EQ(h->recommendation.find("a collective's peer"), std::string::npos) << h->recommendation;
  EXPECT_NE(h->recommendation.find("a dependency the trace does not show"), std::string::npos) << h->recommendation;
}

// Held gaps at communication the trace did not record: 20 kernels 2 ms
// apart, each launched long before it ran (the gap's held work) inside the
// host range `range`; a recorded all-to-all earlier in the trace. Where
// `nccl_in_range`, each range also launches an NCCL kernel the trace
// records (it runs beside the previous kernel, not in the gap).
Profile held_at_range(std::string_view range, bool nccl_in_range) {
  TraceFactory f;
  f.device(0);
  f.range("nccl:all_to_all", 1 * ms, 1 * ms + 50 * us);
  f.kernel(0, 20, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 2 * ms, 12 * ms, 1 * ms + 10 * us);
  TimeNs t = 15 * ms;
  for (int i = 0; i < 20; ++i) {
    const TimeNs launch = t - 2950 * us;
    if (i > 0) {
      f.range(range, launch - 20 * us, launch + 20 * us);
      if (nccl_in_range)
        f.kernel(0, 20, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", t - 2900 * us, t - 2100 * us,
                 launch - 15 * us, 3 * us);
    }
    f.kernel(0, 7, names::kConvTensorCore, t, t + 1 * ms, i > 0 ? launch : t - 20 * us, 5 * us);
    t += 3 * ms;
  }
  return analyze(f.build());
}

TimeNs idle_charged(const Profile& p, std::string_view cause) {
  TimeNs ns = 0;
  for (const IdleCharge& c : p.idle_charges) ns += c.cause == cause ? c.ns : 0;
  return ns;
}

// A held gap whose work was launched in a host range named for
// communication that launched no communication kernel the trace records is
// most likely that communication, unrecorded: charged as such, said in the
// exposed communication ("at least … and up to … more"), and not told to
// wait on finer-grained events. The same gaps with no such range, or with
// the range's NCCL kernel recorded, stay held work.
TEST(Findings, HeldGapsAtUnrecordedCommunicationAreCommunication) {
  const Profile p = held_at_range("All2All_Pooled_ReqBackward", false);
  EXPECT_GT(idle_charged(p, "comm-gap"), 18 * 1900 * us);
  EXPECT_EQ(idle_charged(p, "queued-gap"), 0);
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_NE(g->title.find("held at communication the trace likely did not record"), std::string::npos) << g->title;
  EXPECT_NE(g->recommendation.find("All2All_Pooled_ReqBackward"), std::string::npos) << g->recommendation;
  EXPECT_EQ(g->recommendation.find("cudaStreamWaitEvent on finer-grained events"), std::string::npos)
      << g->recommendation;
  const Finding* c = testing::find_finding(p, "exposed-communication");
  ASSERT_TRUE(c) << testing::describe_findings(p);
  EXPECT_NE(c->title.find("at least 10.0 ms, and up to 38.0 ms more the trace likely did not record"),
            std::string::npos)
      << c->title;
  // Other comm-named spellings count too.
  EXPECT_GT(idle_charged(held_at_range("c10d::recv_", false), "comm-gap"), 0);
  EXPECT_GT(idle_charged(held_at_range("## reduce_scatter_fwd ##", false), "comm-gap"), 0);
  for (const Profile& q : {held_at_range("aten::mm", false), held_at_range("All2All_Pooled_ReqBackward", true),
                           held_at_range("sender_queue", false)}) {
    EXPECT_EQ(idle_charged(q, "comm-gap"), 0);
    EXPECT_GT(idle_charged(q, "queued-gap"), 18 * 1900 * us);
    const Finding* h = testing::find_finding(q, "gpu-idle-gaps");
    ASSERT_TRUE(h) << testing::describe_findings(q);
    EXPECT_NE(h->recommendation.find("finer-grained events"), std::string::npos) << h->recommendation;
    if (const Finding* e = testing::find_finding(q, "exposed-communication")) {
      EXPECT_EQ(e->title.find("did not record"), std::string::npos) << e->title;
    }
  }
}

// A late launch after the host spent the gap creating a stream (cuDNN's
// first convolution makes its own) is warm-up: a one-time cost, no saving.
// After the same time in cudaMalloc it is not, and the advice names the
// caching allocator (an emptied cache grows again).
TEST(Findings, LateLaunchesAfterSetUpCallsAreWarmUpAndAfterAllocationsNot) {
  auto late_after = [](std::string_view call) { return analyze(testing::late_launches_after(call)); };
  auto idle_of = [](const Profile& p, std::string_view cause) {
    TimeNs ns = 0;
    for (const IdleCharge& c : p.idle_charges) ns += c.cause == cause ? c.ns : 0;
    return ns;
  };
  const Profile setup = late_after("cudaStreamCreateWithFlags");
  EXPECT_GT(idle_of(setup, "warm-up"), 18 * 1900 * us);
  EXPECT_EQ(idle_of(setup, "late-launch-gap"), 0);
  const Profile alloc = late_after("cudaMalloc");
  EXPECT_EQ(idle_of(alloc, "warm-up"), 0);
  EXPECT_GT(idle_of(alloc, "late-launch-gap"), 18 * 1900 * us);
  const Finding* g = testing::find_finding(alloc, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(alloc);
  EXPECT_NE(g->recommendation.find("in the device allocator's own calls (cudaMalloc, cudaFree)"), std::string::npos)
      << g->recommendation;
  // No framework in the trace: its own allocations, not a caching allocator's.
  EXPECT_NE(g->recommendation.find("Allocate the buffers once and reuse them"), std::string::npos) << g->recommendation;
  const Finding* w = testing::find_any_finding(setup, "gpu-idle-gaps");
  ASSERT_TRUE(w) << testing::describe_findings(setup);
  EXPECT_EQ(w->saving_ns, 0) << w->saving_note;
}

// The late-launch gaps by the innermost range the program named around the
// host's time (an NVTX range, a benchmark's timed region), and the allocator's
// calls tied to the range that holds most of them; a range around the whole
// run says nothing of where in it the host was, and is left out.
TEST(Findings, LateLaunchGapsByTheProgramsOwnRanges) {
  constexpr TimeNs t0 = 5'000'000;
  TraceFactory f;
  f.device(0);
  f.range("[bench|all]", 1'000'000, t0 + 61'000'000);
  TimeNs t = t0;
  for (int i = 0; i < 20; ++i) {
    if (i > 0) {
      f.range("[bench|measure]", t - 1995 * us, t - 35 * us);
      f.api("cudaMalloc", t - 1990 * us, t - 40 * us);
    }
    f.kernel(0, 7, names::kConvTensorCore, t, t + 1 * ms, t - 20 * us, 5 * us);
    t += 3 * ms;
  }
  const Profile p = analyze(f.build());
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  const std::size_t named = g->evidence.find("By the innermost range the program named around it: [bench|measure]");
  ASSERT_NE(named, std::string::npos) << g->evidence;
  EXPECT_EQ(g->evidence.find("[bench|all]", named), std::string::npos) << g->evidence;
  // Nor is that range, around every launch, the launching op's first call: no warm-up.
  EXPECT_NE(g->evidence.find("warm-up 0 ns"), std::string::npos) << g->evidence;
  EXPECT_NE(g->recommendation.find("of them inside the program's range [bench|measure]"), std::string::npos)
      << g->recommendation;
}

// Under PyTorch's Python tracer (with_stack=True) the host's time between
// launches is the program's plus the tracer's: the saving gpu-idle-gaps
// claims for late launches is said to be an upper bound, as launch-bound's.
TEST(Findings, LateLaunchGapsUnderThePythonTracerAreAnUpperBound) {
  auto trace = [](bool traced) {
    TraceFactory f;
    f.device(0);
    TimeNs t = 5 * ms;
    for (int i = 0; i < 20; ++i) {
      if (i > 0 && traced)
        for (int k = 0; k < 10; ++k)
          f.range("model.py(" + std::to_string(10 + k) + "): forward", t - 1900 * us + k * 150 * us,
                  t - 1800 * us + k * 150 * us, 1, RangeKind::annotation, "python_function");
      f.kernel(0, 7, names::kConvTensorCore, t, t + 1 * ms, t - 20 * us, 5 * us);
      t += 3 * ms;
    }
    return analyze(f.build());
  };
  const Profile plain = trace(false), traced = trace(true);
  const Finding* a = testing::find_finding(plain, "gpu-idle-gaps");
  const Finding* b = testing::find_finding(traced, "gpu-idle-gaps");
  ASSERT_TRUE(a && b) << testing::describe_findings(plain) << testing::describe_findings(traced);
  ASSERT_GT(b->saving_ns, 0);
  EXPECT_EQ(a->evidence.find("Python tracer"), std::string::npos) << a->evidence;
  EXPECT_NE(b->evidence.find("recorded with PyTorch's Python tracer on (190 Python function ranges"), std::string::npos)
      << b->evidence;
}

// A program that empties its caches itself (a benchmark's "[param|clear_cache]"
// before each measured iteration) re-allocates by design: the allocator's
// calls in the late-launch gaps are said to be that, and are no saving;
// the flush's own range is warm-up (the harness's, not the program's cost).
TEST(Findings, AllocationAfterTheProgramsOwnCacheFlushIsNoSaving) {
  auto trace = [](bool flush) {
    TraceFactory f;
    f.device(0);
    TimeNs t = 5 * ms;
    for (int i = 0; i < 20; ++i) {
      if (i > 0) {
        if (flush) f.range("[bench|clear_cache]", t - 2990 * us, t - 2000 * us);
        f.range("[bench|measure]", t - 1995 * us, t - 35 * us);
        f.api("cudaMalloc", t - 1990 * us, t - 40 * us);
      }
      f.kernel(0, 7, names::kConvTensorCore, t, t + 1 * ms, t - 20 * us, 5 * us);
      t += 4 * ms;
    }
    return analyze(f.build());
  };
  const Profile plain = trace(false), flushed = trace(true);
  const Finding* a = testing::find_finding(plain, "gpu-idle-gaps");
  const Finding* b = testing::find_finding(flushed, "gpu-idle-gaps");
  ASSERT_TRUE(a && b) << testing::describe_findings(plain) << testing::describe_findings(flushed);
  EXPECT_GT(a->saving_ns, 30 * ms) << a->recommendation;
  EXPECT_NE(a->recommendation.find("the program allocates and frees device memory"), std::string::npos)
      << a->recommendation;
  // 19 cudaMalloc calls of 1.95 ms each in the gaps: all the allocator's.
  EXPECT_LT(b->saving_ns, a->saving_ns - 30 * ms) << b->recommendation;
  EXPECT_NE(b->recommendation.find("the program empties the caches itself ([bench|clear_cache])"), std::string::npos)
      << b->recommendation;
  EXPECT_NE(b->recommendation.find("in a program that empties its caches itself"), std::string::npos)
      << b->recommendation;
}

// A late launch after the host spent most of the gap inside the first call
// of the op that launched it (cuDNN's first convolution creating its
// handles, whichever of its ops ends the gap) is warm-up; after the same time
// in that op's second call it is not. Nor is time inside a range the program
// named as warm-up.
TEST(Findings, LateLaunchesInsideAnOpsFirstCallOrAWarmUpRangeAreWarmUp) {
  auto trace = [](std::string_view op2, std::string_view around) {
    TraceFactory f;
    f.device(0);
    f.kernel(0, 7, names::kConvTensorCore, 1 * ms, 2 * ms, 900 * us);
    if (!around.empty()) f.range(around, 2 * ms, 30 * ms);
    // Two calls of an op, each 8 ms on the host before its memset: the first
    // one's gap is its first call's.
    f.range("aten::cudnn_convolution", 2 * ms, 11 * ms, 1, RangeKind::annotation, "cpu_op");
    f.memset(0, 7, 10 * ms + 20 * us, 10 * ms + 40 * us, 10 * ms);
    f.range(op2, 11 * ms, 20 * ms, 1, RangeKind::annotation, "cpu_op");
    f.memset(0, 7, 19 * ms + 20 * us, 19 * ms + 40 * us, 19 * ms);
    f.kernel(0, 7, names::kConvTensorCore, 20 * ms, 21 * ms, 19 * ms + 100 * us);
    return analyze(f.build());
  };
  auto idle_of = [](const Profile& p, std::string_view cause) {
    TimeNs ns = 0;
    for (const IdleCharge& c : p.idle_charges) ns += c.cause == cause ? c.ns : 0;
    return ns;
  };
  const Profile again = trace("aten::cudnn_convolution", "");
  EXPECT_GT(idle_of(again, "warm-up"), 7 * ms);
  EXPECT_LT(idle_of(again, "warm-up"), 9 * ms);
  EXPECT_GT(idle_of(again, "late-launch-gap"), 7 * ms);
  // Both calls first of their names: both gaps warm-up.
  const Profile firsts = trace("aten::max_pool2d", "");
  EXPECT_GT(idle_of(firsts, "warm-up"), 16 * ms);
  EXPECT_EQ(idle_of(firsts, "late-launch-gap"), 0);
  // Inside "[param|…|warmup|forward]": warm-up whatever the op.
  const Profile named = trace("aten::cudnn_convolution", "[param|alex_net|warmup|forward]");
  EXPECT_GT(idle_of(named, "warm-up"), 16 * ms);
  EXPECT_EQ(idle_of(named, "late-launch-gap"), 0);
  // Inside a range named for emptying caches: the harness's cold-cache set-up.
  const Profile flush = trace("aten::cudnn_convolution", "[param|clear_cache]");
  EXPECT_GT(idle_of(flush, "warm-up"), 16 * ms);
  EXPECT_EQ(idle_of(flush, "late-launch-gap"), 0);
  // A learning-rate schedule's warm-up runs in every step: not a phase.
  for (const char* scheduler : {"WarmupLR.step", "lr_warmup", "LinearWarmupScheduler.step"}) {
    const Profile lr = trace("aten::cudnn_convolution", scheduler);
    EXPECT_GT(idle_of(lr, "late-launch-gap"), 7 * ms) << scheduler;
  }
}

// Ops with no launch in the trace that ran before their stream's first
// launched op were queued before the recording began: the gaps they end are
// queued work, not launches the trace lacks. Unlaunched ops after a launched
// one are not.
TEST(Findings, UnlaunchedOpsAheadOfAStreamsFirstLaunchAreABacklog) {
  auto trace = [](bool backlog_first) {
    TraceFactory f;
    f.device(0);
    TimeNs t = 1 * ms;
    auto unlaunched = [&](int n) {
      for (int i = 0; i < n; ++i, t += 3 * ms) f.kernel(0, 7, names::kRelu, t, t + 1 * ms, TraceFactory::kNoLaunch);
    };
    auto launched = [&](int n) {
      for (int i = 0; i < n; ++i, t += 1100 * us) f.kernel(0, 7, names::kRelu, t, t + 1 * ms, t - 500 * us);
    };
    if (backlog_first)
      unlaunched(5), launched(20);
    else
      launched(20), unlaunched(5);
    return analyze(f.build());
  };
  const Profile ahead = trace(true);
  EXPECT_EQ(ahead.launches.backlog_ops, 5u);
  auto idle_of = [](const Profile& p, std::string_view cause) {
    TimeNs ns = 0;
    for (const IdleCharge& c : p.idle_charges) ns += c.cause == cause ? c.ns : 0;
    return ns;
  };
  EXPECT_EQ(idle_of(ahead, "unlaunched-gap"), 0);
  EXPECT_GE(idle_of(ahead, "queued-gap"), 4 * 2 * ms);
  const Profile after = trace(false);
  EXPECT_EQ(after.launches.backlog_ops, 0u);
  EXPECT_GE(idle_of(after, "unlaunched-gap"), 4 * 2 * ms);
}

// A long gap ended by the first op a stream has in the trace, launched
// long before it ran: the stream may have been running work queued before
// the recording began (a serving engine's previous batch), so whether the
// GPU idled, the trace cannot tell. Neither gpu-idle-gaps nor
// low-utilization counts it; the idle table says it apart. The same gap
// ended by a stream's later op (the stream ran recorded work before) is
// held work, counted as ever; one ended by a late launch stays a late launch.
TEST(Findings, AGapBeforeAStreamsFirstRecordedOpIsUnknown) {
  enum Case { first_held, later_held, first_late };
  auto trace = [](Case c) {
    TraceFactory f;
    f.device(0);
    f.kernel(0, 7, names::kRelu, 0, 100 * us, TraceFactory::kAuto);  // another stream's work, then nothing
    if (c == later_held) f.kernel(0, 9, names::kRelu, 20 * us, 60 * us, 10 * us, 5 * us);
    // Stream 9's op: launched at 0.2 ms (or at 49.9 ms: late), run at 50 ms.
    f.kernel(0, 9, names::kRelu, 50 * ms, 60 * ms, c == first_late ? 49'900 * us : 200 * us, 5 * us);
    return analyze(f.build());
  };
  auto idle_of = [](const Profile& p, std::string_view cause) {
    TimeNs ns = 0;
    for (const IdleCharge& c : p.idle_charges) ns += c.cause == cause ? c.ns : 0;
    return ns;
  };
  const Profile held = trace(first_held);
  EXPECT_GE(idle_of(held, "unrecorded-gap"), 49 * ms) << testing::describe_findings(held);
  EXPECT_EQ(idle_of(held, "queued-gap"), 0);
  EXPECT_FALSE(testing::find_finding(held, "gpu-idle-gaps")) << testing::describe_findings(held);
  EXPECT_FALSE(testing::find_finding(held, "low-utilization")) << testing::describe_findings(held);
  for (const IdleCharge& c : held.idle_charges)
    if (c.cause == "unrecorded-gap") {
      EXPECT_TRUE(c.finding.empty());
      EXPECT_NE(c.note.find("stream 9 of GPU 0"), std::string::npos) << c.note;
    }
  const Profile later = trace(later_held);
  EXPECT_EQ(idle_of(later, "unrecorded-gap"), 0);
  EXPECT_GE(idle_of(later, "queued-gap"), 49 * ms);
  EXPECT_TRUE(testing::find_finding(later, "gpu-idle-gaps")) << testing::describe_findings(later);
  const Profile late = trace(first_late);
  EXPECT_LT(idle_of(late, "unrecorded-gap"), 1 * ms);
  EXPECT_GE(idle_of(late, "late-launch-gap"), 49 * ms);
}

TEST(Findings, LongHostGapsBetweenSteps) {
  TraceFactory f;
  add_steps(f, 10, kCleanStep, 3 * ms);
  const Trace t = f.build();
  const Profile p = analyze(t);
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_EQ(g->ranges.size(), 9u);  // the gap after the last step is outside the GPU's window
  EXPECT_EQ(g->ranges[0].duration(), 3 * ms + 1 * us);
  // The gaps are the idle time: low-utilization does not report it again.
  EXPECT_FALSE(testing::find_finding(p, "low-utilization"));
  // Nothing records what the host did in them: the saving is an upper bound.
  EXPECT_NE(g->saving_note.find("an upper bound: the trace does not record what the host did"), std::string::npos)
      << g->saving_note;
  EXPECT_NE(g->recommendation.find("Estimated saving: at most the gaps ended by late launches"), std::string::npos)
      << g->recommendation;
}

// A program whose GPU work already runs on several streams, idle for its
// host: "more streams? no" says so, not as if it had one.
TEST(Findings, MoreStreamsSaysTheStreamsTheProgramHas) {
  TraceFactory f;
  add_steps(f, 10, {{names::kConvTensorCore, 500 * us, 7}, {names::kRelu, 100 * us, 9}}, 3 * ms);
  const Profile p = analyze(f.build());
  const HelpAnswer* a = nullptr;
  for (const HelpAnswer& h : p.helps) a = h.id == "more-streams" ? &h : a;
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_NE(a->reason.find("it already runs its GPU work on 2 streams"), std::string::npos) << a->reason;
}

// Gaps ended by late launches name where the launching thread was meanwhile:
// the innermost op or call by time, and the outermost framework op around it.
// `ddp`: inside DDP's forward, with the broadcast between the flattening.
Trace late_gaps_in_unflatten(bool ddp) {
  TraceFactory f;
  for (int i = 0; i < 10; ++i) {
    const TimeNs t0 = 10 * ms + i * 5 * ms;
    if (ddp) {
      f.range("DistributedDataParallel.forward", t0 + 900 * us, t0 + 4900 * us, 1, RangeKind::annotation,
              "user_annotation");
      f.range("nccl:broadcast", t0 + 950 * us, t0 + 990 * us, 1, RangeKind::annotation, "cpu_op");
    }
    f.range("aten::conv2d", t0, t0 + 20 * us, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, names::kConvTensorCore, t0 + 30 * us, t0 + 1 * ms, t0 + 5 * us, 5 * us);
    f.range("aten::unflatten_dense_tensors", t0 + 1 * ms, t0 + 4 * ms, 1, RangeKind::annotation, "cpu_op");
    f.range("aten::view", t0 + 1500 * us, t0 + 3500 * us, 1, RangeKind::annotation, "cpu_op");
  }
  return f.build();
}

TEST(Findings, LateLaunchGapsSayWhereTheHostWas) {
  const Profile p = analyze(late_gaps_in_unflatten(false));
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_NE(g->evidence.find("the launching thread was in (the innermost op, range or CUDA call, by time): "
                             "aten::view 18.0 ms; no recorded op or call 9.1 ms; aten::unflatten_dense_tensors 9.0 ms"),
            std::string::npos)
      << g->evidence;
  EXPECT_NE(g->evidence.find("By the outermost framework op: aten::unflatten_dense_tensors 27.0 ms"), std::string::npos)
      << g->evidence;
  EXPECT_NE(g->recommendation.find("the host was busy with the work the evidence names"), std::string::npos)
      << g->recommendation;
  EXPECT_EQ(g->recommendation.find("checkpointing"), std::string::npos) << g->recommendation;
  EXPECT_EQ(g->recommendation.find("broadcast_buffers"), std::string::npos) << g->recommendation;
  EXPECT_EQ(g->saving_note.find("upper bound"), std::string::npos) << g->saving_note;  // the host's work is known
  // Under DDP, with its broadcast: the buffer broadcast is named, with its switch.
  const Profile q = analyze(late_gaps_in_unflatten(true));
  ASSERT_EQ(q.workload.data_parallel, "ddp");
  const Finding* h = testing::find_finding(q, "gpu-idle-gaps");
  ASSERT_TRUE(h) << testing::describe_findings(q);
  EXPECT_NE(h->recommendation.find("broadcast_buffers=False"), std::string::npos) << h->recommendation;
}

// Where the launching thread was, from ranges that do not nest exactly (a
// Python frame ending after the op inside it began, as the Python tracer
// records them): each instant goes to one name, the latest begun, so the
// names add up to the gaps. Most of it in torch.compile's generated wrapper
// (Inductor's compiled module, its input checks): the advice names it.
TEST(Findings, LateLaunchGapsInTheCompiledWrapperAreNamedOnce) {
  TraceFactory f;
  for (int i = 0; i < 10; ++i) {
    const TimeNs t0 = 10 * ms + i * 5 * ms;
    f.range("aten::conv2d", t0, t0 + 20 * us, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, names::kConvTensorCore, t0 + 30 * us, t0 + 1 * ms, t0 + 5 * us, 5 * us);
    f.range("Torch-Compiled Region: 0/0", t0 + 1 * ms, t0 + 4500 * us, 1, RangeKind::annotation, "cpu_op");
    f.range("/tmp/torchinductor_u/ab/cab.py(10): call", t0 + 1 * ms, t0 + 3 * ms, 1, RangeKind::annotation,
            "python_function");
    f.range("<built-in function assert_size_stride>", t0 + 2 * ms, t0 + 4 * ms, 1, RangeKind::annotation,
            "python_function");
  }
  const Profile p = analyze(f.build());
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  // 9 gaps: 1 ms in call(), then 2 ms in the check that outlives it, 0.5 ms in the region alone.
  EXPECT_NE(g->evidence.find("the launching thread was in (the innermost op, range or CUDA call, by time): "
                             "<built-in function assert_size_stride> 18.0 ms; "),
            std::string::npos)
      << g->evidence;
  EXPECT_NE(g->evidence.find("/tmp/torchinductor_u/ab/cab.py(10): call 9.0 ms"), std::string::npos) << g->evidence;
  EXPECT_NE(g->evidence.find("Torch-Compiled Region: 0/0 4.5 ms"), std::string::npos) << g->evidence;
  EXPECT_NE(g->evidence.find("By the outermost framework op: Torch-Compiled Region: 0/0 31.5 ms"), std::string::npos)
      << g->evidence;
  EXPECT_NE(g->recommendation.find("Of those gaps, 27.0 ms were spent in torch.compile's generated wrapper "
                                   "(<built-in function assert_size_stride> the most)"),
            std::string::npos)
      << g->recommendation;
  EXPECT_NE(g->recommendation.find("torch._inductor.config.size_asserts=False"), std::string::npos)
      << g->recommendation;
  // Without the compiled module's frames: no such advice.
  const Profile q = analyze(late_gaps_in_unflatten(false));
  const Finding* h = testing::find_finding(q, "gpu-idle-gaps");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->recommendation.find("torch.compile"), std::string::npos) << h->recommendation;
}

// A gap both the input wait and a late launch end: the data loading in it is
// the input wait's, said by input-bound; where the launching thread was
// names only the rest, so no wait is charged twice.
TEST(Findings, LateLaunchGapsLeaveTheInputWaitToInputBound) {
  TraceFactory f;
  for (int i = 0; i < 10; ++i) {
    const TimeNs t0 = 10 * ms + i * 5 * ms;
    f.range("aten::conv2d", t0, t0 + 20 * us, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, names::kConvTensorCore, t0 + 30 * us, t0 + 1 * ms, t0 + 5 * us, 5 * us);
    f.range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t0 + 1 * ms, t0 + 3 * ms, 1,
            RangeKind::annotation, "cpu_op");
    f.range("aten::view", t0 + 3 * ms, t0 + 4 * ms, 1, RangeKind::annotation, "cpu_op");
  }
  const Profile p = analyze(f.build());
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  const std::size_t at = g->evidence.find("the launching thread was in");
  ASSERT_NE(at, std::string::npos) << g->evidence;
  EXPECT_EQ(g->evidence.find("DataLoader", at), std::string::npos) << g->evidence;
  EXPECT_NE(g->evidence.find("aten::view 9.0 ms", at), std::string::npos) << g->evidence;
}

// Kernels all launched up front, with idle gaps between them on the GPU:
// what ended each gap was queued work, not the host, so low-utilization's
// advice is about dependencies, not about the host.
TEST(Findings, LowUtilizationFromQueuedWorkIsNotBlamedOnTheHost) {
  TraceFactory f;
  for (int i = 0; i < 200; ++i)
    f.kernel(0, 7, names::kRelu, 5 * ms + i * 500 * us, 5 * ms + i * 500 * us + 200 * us, 1 * ms + i * us, 1 * us);
  const Profile p = analyze(f.build());
  const Finding* u = testing::find_finding(p, "low-utilization");
  ASSERT_TRUE(u) << testing::describe_findings(p);
  EXPECT_FALSE(testing::find_finding(p, "launch-bound")) << testing::describe_findings(p);
  EXPECT_NE(u->evidence.find("That rest by cause: short gaps ended by queued work or dependencies"), std::string::npos)
      << u->evidence;
  EXPECT_NE(u->recommendation.find("other than the host"), std::string::npos) << u->recommendation;
  EXPECT_EQ(u->recommendation.find("The host does not keep the GPU fed"), std::string::npos) << u->recommendation;
  // What that work waited for the trace does not show: no saving is claimed
  // for it, and the finding is numbered by its share, saying why.
  EXPECT_EQ(u->saving_ns, 0);
  EXPECT_NE(u->saving_note.find("what fixing it saves is unknown, so none is claimed: "), std::string::npos)
      << u->saving_note;
  EXPECT_NE(
      u->saving_note.find("of short gaps ended by queued work or dependencies (a dependency the trace does not show)"),
      std::string::npos)
      << u->saving_note;
  EXPECT_NE(u->recommendation.find("What it saves is unknown"), std::string::npos) << u->recommendation;
  EXPECT_GE(u->share, 0.05);
}

// Back-to-back queued kernels shorter than the GPU's switch between them.
TEST(Findings, LowUtilizationFromKernelSwitchesAdvisesFewerKernels) {
  TraceFactory f;
  for (int i = 0; i < 2000; ++i)
    f.kernel(0, 7, names::kRelu, 5 * ms + i * 30 * us, 5 * ms + i * 30 * us + 10 * us, 1 * ms + i * us / 2, 1 * us / 2);
  const Profile p = analyze(f.build());
  const Finding* u = testing::find_finding(p, "low-utilization");
  ASSERT_TRUE(u) << testing::describe_findings(p);
  EXPECT_NE(u->evidence.find("That rest by cause: gaps under 30.0 µs between queued kernels"), std::string::npos)
      << u->evidence;
  EXPECT_NE(u->recommendation.find("switch from one kernel to the next"), std::string::npos) << u->recommendation;
  // Fewer, larger kernels remove an unknown share of the switches.
  EXPECT_EQ(u->saving_ns, 0);
  EXPECT_NE(u->saving_note.find("fewer, larger kernels remove an unknown share"), std::string::npos) << u->saving_note;
}

// Five steps, each an Optimizer.zero_grad that launches `fills` fill kernels
// one by one (the GPU waits for each launch) and then compute launched ahead.
Trace zero_grad_trace(int fills, const char* phase) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 5; ++s) {
    const TimeNs begin = t;
    for (int i = 0; i < fills; ++i) {
      f.kernel(0, 7, "at::native::vectorized_elementwise_kernel<4, FillFunctor<float>>", t + 11 * us, t + 13 * us, t,
               10 * us);
      t += 14 * us;
    }
    f.range(phase, begin - 1 * us, t - 1 * us, 1, RangeKind::annotation, "cpu_op");
    for (int i = 0; i < 10; ++i) {
      f.kernel(0, 7, names::kConvTensorCore, t + 20 * us + i * 100 * us, t + 20 * us + (i + 1) * 100 * us, t + i * us,
               1 * us);
    }
    t += 1100 * us;
  }
  return f.build();
}

TEST(LaunchBound, AZeroGradThatWritesZerosIsToldToSetThemToNone) {
  const Profile p = analyze(zero_grad_trace(100, "Optimizer.zero_grad#SGD.zero_grad"));
  const Finding* l = testing::find_finding(p, "launch-bound");
  ASSERT_TRUE(l) << testing::describe_findings(p);
  EXPECT_EQ(l->recommendation.rfind("Optimizer.zero_grad#SGD.zero_grad launches 100 kernels per call", 0), 0u)
      << l->recommendation << "\n"
      << l->evidence;
  EXPECT_NE(l->recommendation.find("zero_grad(set_to_none=True)"), std::string::npos) << l->recommendation;
}

TEST(LaunchBound, OtherOpsLaunchingFillsAreNotToldAboutZeroGrad) {
  const Profile p = analyze(zero_grad_trace(100, "aten::zero_"));
  const Finding* l = testing::find_finding(p, "launch-bound");
  ASSERT_TRUE(l) << testing::describe_findings(p);
  EXPECT_EQ(l->recommendation.find("set_to_none"), std::string::npos) << l->recommendation;
}

// Three launch-bound steps of tiny kernels launched one by one; with
// `read_back`, each reads a scalar back between its launches, inside a
// Python function > aten::is_nonzero > aten::item >
// aten::_local_scalar_dense (a device-to-host copy and a stream
// synchronization, one read back). With `parts`, the steps' launches lie in
// "## forward ##" and "## backward ##" and the read back in
// "## sparse_data_dist ##" between them (TorchRec's pipeline names them so).
constexpr const char* kMaskFrame = "transformers/modeling_attn_mask_utils.py(429): _prepare_4d_attention_mask_for_sdpa";
Trace read_back_trace(bool read_back, bool parts) {
  TraceFactory f;
  TimeNs cpu = 1 * ms;
  auto launches = [&](int n, const char* part) {
    const TimeNs begin = cpu;
    for (int i = 0; i < n; ++i) {
      f.range("aten::add", cpu - 1 * us, cpu + 5 * us, 1, RangeKind::annotation, "cpu_op");
      f.kernel(0, 7, names::kRelu, cpu + 6 * us, cpu + 8 * us, cpu, 5 * us);
      cpu += 9 * us;
    }
    if (parts) f.range(part, begin - 2 * us, cpu, 1, RangeKind::annotation, "user_annotation");
    cpu += 5 * us;
  };
  for (int s = 0; s < 3; ++s) {
    const TimeNs begin = cpu;
    launches(300, "## forward ##");
    if (read_back) {
      const TimeNs r = cpu;
      if (parts)
        f.range("## sparse_data_dist ##", r - 1 * us, r + 61 * us, 1, RangeKind::annotation, "user_annotation");
      f.range(kMaskFrame, r, r + 60 * us, 1, RangeKind::annotation, "python_function");
      f.range("aten::is_nonzero", r + 1 * us, r + 59 * us, 1, RangeKind::annotation, "cpu_op");
      f.range("aten::item", r + 2 * us, r + 58 * us, 1, RangeKind::annotation, "cpu_op");
      f.range("aten::_local_scalar_dense", r + 3 * us, r + 57 * us, 1, RangeKind::annotation, "cpu_op");
      f.memcpy(0, 7, CopyKind::dtoh, MemoryKind::device, MemoryKind::pinned, 4, r + 10 * us, r + 12 * us,
               "cudaMemcpyAsync", r + 4 * us, 10 * us);
      f.sync(SyncType::stream, 0, 7, r + 20 * us, r + 50 * us);
    }
    cpu += 70 * us;
    launches(100, "## backward ##");
    f.range("ProfilerStep#" + std::to_string(s), begin - 5 * us, cpu, 1, RangeKind::annotation, "user_annotation");
    cpu += 20 * us;
  }
  return f.build();
}

// A capture cannot hold a synchronization: the advice to capture names the
// read back first, by its Python function, before telling to capture.
TEST(LaunchBound, ACaptureIsToldOfTheReadsBackItCannotHold) {
  const Profile p = analyze(read_back_trace(true, false));
  EXPECT_EQ(p.syncs.mid_step, 3u);  // one a step: the copy and its synchronization are one read back
  EXPECT_EQ(p.syncs.mid_step_steps, 3u);
  EXPECT_EQ(p.syncs.mid_step_ns, 3 * (10 * us + 30 * us));
  ASSERT_EQ(p.syncs.mid_step_sites.size(), 1u);
  EXPECT_EQ(p.syncs.mid_step_sites[0].where, kMaskFrame);
  EXPECT_EQ(p.syncs.mid_step_sites[0].op, "aten::is_nonzero");
  EXPECT_EQ(p.syncs.mid_step_sites[0].count, 3u);
  const Finding* l = testing::find_finding(p, "launch-bound");
  ASSERT_TRUE(l) << testing::describe_findings(p);
  const std::string& fix = l->recommendation;
  EXPECT_EQ(fix.rfind("A CUDA graph capture cannot hold a synchronization with the host, and the steps synchronize "
                      "with it 1 per step between their launches: `" +
                          std::string(kMaskFrame) + "` (aten::is_nonzero",
                      0),
            0u)
      << fix;
  EXPECT_NE(fix.find("remove them before capturing. "), std::string::npos) << fix;
  EXPECT_LT(fix.find(kMaskFrame), fix.find("capture the forward pass in a CUDA graph")) << fix;
  const HelpAnswer* graphs = testing::find_help(p, "cuda-graphs");
  ASSERT_TRUE(graphs);
  EXPECT_NE(graphs->reason.find(std::string("but a CUDA graph capture cannot hold")), std::string::npos)
      << graphs->reason;
  EXPECT_NE(graphs->reason.find(kMaskFrame), std::string::npos) << graphs->reason;
}

TEST(LaunchBound, WithoutReadsBackTheCaptureAdviceIsUnchanged) {
  const Profile p = analyze(read_back_trace(false, false));
  EXPECT_EQ(p.syncs.mid_step, 0u);
  EXPECT_TRUE(p.syncs.mid_step_sites.empty());
  const Finding* l = testing::find_finding(p, "launch-bound");
  ASSERT_TRUE(l) << testing::describe_findings(p);
  EXPECT_EQ(l->recommendation.rfind("Launch less: capture the forward pass in a CUDA graph (torch.cuda.CUDAGraph, "
                                    "torch.compile(mode='reduce-overhead')), fuse small elementwise kernels",
                                    0),
            0u)
      << l->recommendation;
  EXPECT_EQ(l->recommendation.find("cannot hold"), std::string::npos) << l->recommendation;
  const HelpAnswer* graphs = testing::find_help(p, "cuda-graphs");
  ASSERT_TRUE(graphs);
  EXPECT_EQ(graphs->reason.find("cannot hold"), std::string::npos) << graphs->reason;
}

// The read backs lie between the parts that issue the launches: those parts
// are what to capture, not the whole step.
TEST(LaunchBound, ReadsBackBetweenTheStepsPartsLeaveThePartsToCapture) {
  const Profile p = analyze(read_back_trace(true, true));
  ASSERT_EQ(p.syncs.mid_step_sites.size(), 1u);
  EXPECT_EQ(p.syncs.mid_step_sites[0].part, "## sparse_data_dist ##");
  ASSERT_GE(p.syncs.step_parts.size(), 3u);
  EXPECT_EQ(p.syncs.step_parts[0].name, "## forward ##");
  EXPECT_EQ(p.syncs.step_parts[0].launches, 900u);
  EXPECT_EQ(p.syncs.step_parts[0].syncs, 0u);
  const Finding* l = testing::find_finding(p, "launch-bound");
  ASSERT_TRUE(l) << testing::describe_findings(p);
  const std::string& fix = l->recommendation;
  const std::string none = "none lies in ## forward ## or ## backward ##, which issue ";
  EXPECT_NE(fix.find(none + "100% of the steps' launches: capture those rather than the whole step. "),
            std::string::npos)
      << fix;
  EXPECT_NE(fix.find("capture ## forward ## and ## backward ## in CUDA graphs"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("capture the forward pass"), std::string::npos) << fix;
}

TEST(Findings, NormalizationAndTransposeHotspots) {
  TraceFactory f;
  add_steps(f, 5,
            {{names::kConvTensorCore, 400 * us},
             {"bn_forward_naive_stats_kernel(float const*, float*, float*, int, int, int)", 300 * us},
             {"void nchwToNhwcKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>(int, int, int, int, "
              "float const*, float*, float, float)",
              100 * us}});
  const Trace t = f.build();
  const Profile p = analyze(t);
  EXPECT_EQ(testing::finding_ids(p), (std::set<std::string>{"slow-normalization", "layout-transpose"}))
      << testing::describe_findings(p);
  EXPECT_DOUBLE_EQ(testing::find_finding(p, "slow-normalization")->metric, 0.375);
}

TEST(Findings, DroppedRecordsAreReported) {
  TraceFactory f;
  add_steps(f, 3, kCleanStep);
  f.meta().set_stat(stat_key::kDroppedRecords, 500);
  const Trace t = f.build();
  const Profile p = analyze(t);
  const Finding* d = testing::find_finding(p, "dropped-records");
  ASSERT_TRUE(d) << testing::describe_findings(p);
  EXPECT_EQ(d->saving_ns, 0);
  EXPECT_NE(d->title.find("500 records"), std::string::npos);
  EXPECT_EQ(d->severity, Severity::critical);  // 500 of 512 ops
}

// Two ranks on different hosts: rank 1 computes 30% longer, rank 0 waits in
// the all-reduce. Rank 1's clock runs 7 µs behind.
TEST(Findings, StragglerAcrossRanksWithAlignedClocks) {
  constexpr TimeNs kSkew = -7 * us;
  TraceFactory r0(0), r1(1);
  r0.meta().host = "node-a";
  r1.meta().host = "node-b";
  TimeNs t = 1 * ms;
  for (int s = 0; s < 6; ++s) {
    const TimeNs end = t + 1300 * us + 400 * us;  // both all-reduces end together
    r0.kernel(0, 7, names::kConvTensorCore, t, t + 1000 * us, t - 50 * us);
    r0.kernel(0, 13, names::kAllReduce, t + 1000 * us, end, t - 40 * us);
    r0.range("step", t - 100 * us, end);
    r1.kernel(0, 7, names::kConvTensorCore, t + kSkew, t + 1300 * us + kSkew, t - 50 * us + kSkew);
    r1.kernel(0, 13, names::kAllReduce, t + 1300 * us + kSkew, end + kSkew, t - 40 * us + kSkew);
    r1.range("step", t - 100 * us + kSkew, end + kSkew);
    t = end + 1 * us;
  }
  const Trace a = r0.build(), b = r1.build();
  const JobInput in[] = {{&a, "rank0.gscope"}, {&b, "rank1.gscope"}};
  const Profile p = analyze_job(in);
  ASSERT_EQ(p.ranks.size(), 2u);
  EXPECT_EQ(p.ranks[1].clock_offset_ns, -kSkew);
  EXPECT_NE(p.clock_alignment.find("aligned on the ends of 6 collectives"), std::string::npos) << p.clock_alignment;
  EXPECT_EQ(p.temporal_breakdown.size(), 2u);
  EXPECT_EQ(p.skew.slowest_rank, 1);
  const Finding* s = testing::find_finding(p, "straggler");
  ASSERT_TRUE(s) << testing::describe_findings(p);
  EXPECT_NEAR(s->metric, 0.3, 0.01);
  EXPECT_NE(s->title.find("Rank 1"), std::string::npos) << s->title;
  // Aligned: the steps of both ranks end at the same job time.
  TimeNs end0 = 0, end1 = 0;
  for (const Step& st : p.steps.steps)
    (st.rank == 0 ? end0 : end1) = std::max(st.rank == 0 ? end0 : end1, st.range.end);
  EXPECT_EQ(end0, end1);
  EXPECT_EQ(p.files, (std::vector<std::string>{"rank0.gscope", "rank1.gscope"}));
}

TEST(Findings, SeverityAndSavingOrderTheList) {
  TraceFactory f;
  add_steps(f, 10, {{names::kConvTensorCore, 590 * us}, {names::kPad, 60 * us}, {names::kBroadcast, 350 * us}});
  const Trace t = f.build();
  const Profile p = analyze(t);
  ASSERT_GE(p.findings.size(), 2u);
  for (std::size_t i = 1; i < p.findings.size(); ++i) EXPECT_GE(p.findings[i - 1].saving_ns, p.findings[i].saving_ns);
  EXPECT_EQ(p.findings[0].id, "broadcast-hotspot");
  EXPECT_EQ(testing::find_finding(p, "padding-hotspot")->severity, Severity::warning);  // 6% < 3 x 5%
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// An op "aten::add" called `calls` times: each call's launch takes `launch`,
// its kernel `gpu`, and the GPU waits for each launch; then `long_kernels`
// GEMMs of 100 µs launched well ahead (no wait), which make the run long
// enough that the GPU's wait for launches stays under launch-bound's 5 % of
// the run (by default), so that only the op's own finding speaks.
Profile launch_overhead_trace(int calls, TimeNs launch, TimeNs gpu, int long_kernels = 400) {
  TraceFactory f;
  f.device(0);
  TimeNs t = 1 * ms;
  for (int i = 0; i < calls; ++i) {
    f.range("aten::add", t, t + launch + 2 * us, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, "vectorized_elementwise_kernel", t + launch + 1 * us, t + launch + 1 * us + gpu, t + 1 * us,
             launch - 1 * us);
    t += launch + 10 * us;
  }
  for (int i = 0; i < std::max(1, long_kernels); ++i) {
    f.kernel(0, 7, "volta_sgemm_128x64_nn", t, t + 100 * us, t - 5 * us, 1 * us);
    t += 100 * us;
  }
  return analyze(f.build());
}

TEST(OpLaunchOverhead, AnOpWhoseLaunchesOutlastItsKernels) {
  const Profile p = launch_overhead_trace(20, 40 * us, 2 * us);
  const Finding* f = testing::find_finding(p, "op-launch-overhead");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_NE(f->title.find("aten::add"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("in 20 calls"), std::string::npos) << f->title;
  EXPECT_EQ(f->variant, "launch");
  EXPECT_NE(f->recommendation.find("CUDA graph"), std::string::npos) << f->recommendation;
  EXPECT_LE(f->saving_ns, p.window.duration());
  EXPECT_FALSE(testing::find_finding(p, "launch-bound")) << testing::describe_findings(p);
}

// When most ops are launch-bound, launch-bound has the same idle time: its
// evidence ranks the ops, and op-launch-overhead does not say it again.
TEST(OpLaunchOverhead, LaunchBoundHasItsOpsWhenItFires) {
  const Profile p = launch_overhead_trace(20, 40 * us, 2 * us, 0);
  const Finding* lb = testing::find_finding(p, "launch-bound");
  ASSERT_TRUE(lb) << testing::describe_findings(p);
  EXPECT_NE(lb->evidence.find("waited longest for the launches of: aten::add"), std::string::npos) << lb->evidence;
  EXPECT_FALSE(testing::find_finding(p, "op-launch-overhead")) << testing::describe_findings(p);
}

// The ops the GPU waited for are counted by their calls that launched GPU
// work: 30 calls of aten::add recorded into a CUDA graph capture (each a
// launch call that runs nothing then), which the GPU never waited for, then
// 20 eager ones (the xDiT Flux capture trace: 171 of aten::mm's 598 calls).
TEST(LaunchBound, TheOpsWaitedForCountTheirCallsThatLaunchedGpuWork) {
  TraceFactory f;
  f.device(0);
  TimeNs t = 1 * ms;
  f.api("cudaStreamBeginCapture", t, t + 2 * us);
  t += 5 * us;
  for (int i = 0; i < 30; ++i) {
    f.range("aten::add", t, t + 10 * us, 1, RangeKind::annotation, "cpu_op");
    f.api("cudaLaunchKernel", t + 1 * us, t + 6 * us);
    t += 20 * us;
  }
  f.api("cudaStreamEndCapture", t, t + 5 * us);
  t += 10 * us;
  const TimeNs launch = 40 * us, gpu = 2 * us;
  for (int i = 0; i < 20; ++i) {
    f.range("aten::add", t, t + launch + 2 * us, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, "vectorized_elementwise_kernel", t + launch + 1 * us, t + launch + 1 * us + gpu, t + 1 * us,
             launch - 1 * us);
    t += launch + 10 * us;
  }
  const Profile p = analyze(f.build());
  // A capture never replayed: the waits are a one-time capture's, a minor
  // line that says so.
  EXPECT_FALSE(testing::find_finding(p, "launch-bound")) << testing::describe_findings(p);
  const Finding* lb = testing::find_any_finding(p, "launch-bound");
  ASSERT_TRUE(lb) << testing::describe_findings(p);
  EXPECT_TRUE(launch_wait_in_capture(p, *lb));
  EXPECT_NE(lb->evidence.find("waited longest for the launches of: aten::add "), std::string::npos) << lb->evidence;
  EXPECT_NE(lb->evidence.find("(20 of its 50 calls launched GPU work)"), std::string::npos) << lb->evidence;
  // Every call launching: the calls alone.
  const Profile eager = launch_overhead_trace(20, 40 * us, 2 * us, 0);
  const Finding* e = testing::find_finding(eager, "launch-bound");
  ASSERT_TRUE(e) << testing::describe_findings(eager);
  EXPECT_NE(e->evidence.find("(20 calls)"), std::string::npos) << e->evidence;
}

// The GPU's wait for launches decides, not the share of short kernels: with
// two long GEMMs per short op the GPU still waits 16 % of the time for the
// short ops' launches (host-per-op); at 2 % of the run it does not fire.
TEST(LaunchBound, LongKernelsDoNotHideTheWaitForLaunches) {
  const Profile p = launch_overhead_trace(20, 40 * us, 2 * us, 40);
  const Finding* lb = testing::find_finding(p, "launch-bound");
  ASSERT_TRUE(lb) << testing::describe_findings(p);
  EXPECT_EQ(lb->variant, "host-per-op");
  EXPECT_LT(p.launches.short_kernel_share, 0.5);
  EXPECT_LE(lb->saving_ns, p.window.duration());
  EXPECT_FALSE(testing::find_finding(launch_overhead_trace(20, 40 * us, 2 * us), "launch-bound"));
}

// Short kernels launched by short calls, but 200 µs of the host's own time
// between launches: the host's time per op is what the GPU waits for, not
// the launch calls (host-per-op), though most kernels are shorter than their
// launch call. With the host only a little slower than its calls, short-ops.
// Without steps (one pass, a serving engine's batch), the recording is the
// host's time.
TEST(LaunchBound, HostTimePerOpBeyondTheLaunchCallIsHostPerOp) {
  for (const bool stepped : {true, false})
    for (const TimeNs between : {200 * us, 12 * us}) {
      SCOPED_TRACE(::testing::Message() << between << (stepped ? " stepped" : " no steps"));
      TraceFactory f;
      TimeNs t = 1 * ms;
      for (int s = 0; s < 5; ++s) {
        const TimeNs s0 = t;
        for (int i = 0; i < 50; ++i, t += between) f.kernel(0, 7, names::kRelu, t + 6 * us, t + 8 * us, t, 5 * us);
        if (stepped) f.range("step " + std::to_string(s), s0 - 10 * us, t);
      }
      const Profile p = analyze(f.build());
      const Finding* lb = testing::find_finding(p, "launch-bound");
      ASSERT_TRUE(lb) << testing::describe_findings(p);
      EXPECT_GT(p.launches.short_kernel_share, 0.5);
      EXPECT_EQ(lb->variant, between == 200 * us ? "host-per-op" : "short-ops") << lb->evidence;
      EXPECT_EQ(lb->title.starts_with("Host-bound between launches"), between == 200 * us) << lb->title;
      if (between != 200 * us) continue;
      EXPECT_EQ(p.steps.total_ns > 0, stepped);
      EXPECT_NE(lb->evidence.find(p.steps.total_ns > 0
                                      ? "per launch over the steps (step time / launches)"
                                      : "per launch over the recording (its time to the last GPU op / launches)"),
                std::string::npos)
          << lb->evidence;
    }
}

// The host's time blocked in synchronizations inside the steps is no time
// per launch: it waited for the GPU then (an MI300 trace's step ends in 4.1
// ms of hipDeviceSynchronize). Short launches 12 µs apart with a 900 µs
// sync in each step are short-ops; 200 µs apart, host-per-op, the sync
// said as left out.
TEST(LaunchBound, TimeBlockedInSyncsIsNoHostTimePerLaunch) {
  for (const TimeNs between : {200 * us, 12 * us}) {
    SCOPED_TRACE(::testing::Message() << between);
    TraceFactory f;
    TimeNs t = 1 * ms;
    for (int s = 0; s < 5; ++s) {
      const TimeNs s0 = t;
      for (int i = 0; i < 50; ++i, t += between) f.kernel(0, 7, names::kRelu, t + 6 * us, t + 8 * us, t, 5 * us);
      f.api("cudaDeviceSynchronize", t, t + 900 * us);
      t += 900 * us;
      f.range("step " + std::to_string(s), s0 - 10 * us, t);
    }
    const Profile p = analyze(f.build());
    EXPECT_EQ(p.steps.sync_blocked_ns, 5 * 900 * us);
    const Finding* lb = testing::find_finding(p, "launch-bound");
    ASSERT_TRUE(lb) << testing::describe_findings(p);
    EXPECT_EQ(lb->variant, between == 200 * us ? "host-per-op" : "short-ops") << lb->evidence;
    if (between == 200 * us) {
      EXPECT_NE(lb->evidence.find("200.0 µs per launch over the steps (step time less the 4.5 ms it spent blocked in "
                                  "synchronizations, / launches)"),
                std::string::npos)
          << lb->evidence;
    }
  }
}

// Nor is its time blocked in a copy that blocks it (a synchronous copy call,
// a pageable copy): a step that ends in a 900 µs cudaMemcpy is said as such.
TEST(LaunchBound, TimeBlockedInCopiesIsNoHostTimePerLaunch) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 5; ++s) {
    const TimeNs s0 = t;
    for (int i = 0; i < 50; ++i, t += 200 * us) f.kernel(0, 7, names::kRelu, t + 6 * us, t + 8 * us, t, 5 * us);
    f.memcpy(0, 7, CopyKind::dtoh, MemoryKind::device, MemoryKind::pageable, 64 << 20, t + 880 * us, t + 895 * us,
             "cudaMemcpy", t, 900 * us);
    t += 900 * us;
    f.range("step " + std::to_string(s), s0 - 10 * us, t);
  }
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.launches.host_not_launching_ns, 5 * 900 * us);
  const Finding* lb = testing::find_finding(p, "launch-bound");
  ASSERT_TRUE(lb) << testing::describe_findings(p);
  EXPECT_NE(lb->evidence.find("(step time less the 4.5 ms it spent blocked in synchronizations and blocking copies, "
                              "/ launches)"),
            std::string::npos)
      << lb->evidence;
}

// Nor is its time in kernel launch calls of 1 ms or more (loading the
// kernel's module on its first launch, a launch into a full queue): a 6 ms
// first launch in a step of 50 launches 200 µs apart is said as such, and
// the time per launch is the rest's.
TEST(LaunchBound, LongLaunchCallsAreNoHostTimePerLaunch) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 5; ++s) {
    const TimeNs s0 = t;
    const TimeNs first = s == 0 ? 6 * ms : 5 * us;  // the first launch loads the module
    f.kernel(0, 7, names::kRelu, t + first + 1 * us, t + first + 3 * us, t, first);
    t += first + 200 * us;
    for (int i = 1; i < 50; ++i, t += 200 * us) f.kernel(0, 7, names::kRelu, t + 6 * us, t + 8 * us, t, 5 * us);
    f.range("step " + std::to_string(s), s0 - 10 * us, t);
  }
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.launches.long_launch_ns, 6 * ms);
  EXPECT_EQ(p.launches.host_not_launching_ns, 6 * ms);
  const Finding* lb = testing::find_finding(p, "launch-bound");
  ASSERT_TRUE(lb) << testing::describe_findings(p);
  EXPECT_NE(lb->evidence.find("per launch over the steps (step time less the 6.0 ms it spent in kernel launch calls "
                              "of 1 ms or more (loading a kernel's module on its first launch, or a launch "
                              "into a full queue), / launches)"),
            std::string::npos)
      << lb->evidence;
}

TEST(OpLaunchOverhead, OneOrTwoCallsAreNotAPattern) {
  // A first call's launch carries one-off costs (lazy module loading): not a finding.
  for (int calls : {1, 2}) {
    const Profile p = launch_overhead_trace(calls, 40 * us, 2 * us, 40);
    EXPECT_FALSE(testing::find_finding(p, "op-launch-overhead")) << calls << testing::describe_findings(p);
  }
  EXPECT_TRUE(testing::find_finding(launch_overhead_trace(3, 40 * us, 2 * us, 40), "op-launch-overhead"));
}

// Launch calls of 300 ms leave gaps far longer than a launch: the idle time is
// gpu-idle-gaps' (by what ended it), not charged again as launch overhead.
TEST(OpLaunchOverhead, MillisecondLaunchGapsAreIdleGapsNotLaunchOverhead) {
  const Profile p = launch_overhead_trace(5, 300 * ms, 2 * us);
  EXPECT_FALSE(testing::find_finding(p, "op-launch-overhead")) << testing::describe_findings(p);
  EXPECT_TRUE(testing::find_finding(p, "gpu-idle-gaps")) << testing::describe_findings(p);
}

TEST(OpLaunchOverhead, KernelsLongerThanTheirLaunchesGiveNone) {
  const Profile p = launch_overhead_trace(20, 5 * us, 50 * us);
  EXPECT_FALSE(testing::find_finding(p, "op-launch-overhead")) << testing::describe_findings(p);
}

}  // namespace
}  // namespace gpuscope
