// Steps found without step markers: a TensorFlow-shaped training trace (4
// GPUs, one stream each, Python between steps, kernel names reused many
// times a step and launched in a slightly different order each step) gets
// its steps from the bursts of GPU work between host gaps; one inference
// pass of repeating layers, a single burst, or bursts that do not look alike
// get none.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/check.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;
namespace names = testing::names;

// Kernel names as TensorFlow 2 on cuDNN 8 writes them.
constexpr const char* kConv = "volta_scudnn_128x64_relu_interior_nn_v1";
constexpr const char* kConvTried = "volta_scudnn_128x128_relu_small_nn_v1";  // autotuning tries it at the first step
constexpr const char* kWgrad = "cudnn::detail::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>";
constexpr const char* kDgrad = "volta_scudnn_128x64_stridedB_splitK_small_nn_v1";
constexpr const char* kBatchNorm =
    "void tensorflow::functor::FusedBatchNormInferenceMetaKernel<float, float, (tensorflow::TensorFormat)1, true, "
    "(tensorflow::functor::FusedBatchNormActivationMode)1>";
constexpr const char* kBatchNormGrad = "void tensorflow::functor::FusedBatchNormGradMetaKernel<float>";
constexpr const char* kReluGrad =
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 1, 1, long>, 16>, Eigen::TensorCwiseBinaryOp<Eigen::internal::scalar_product_op<float, float>, "
    "Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, long>, 16> const> const> const, Eigen::GpuDevice>, long>";
constexpr const char* kBiasGrad = "void tensorflow::BiasGradNHWC_SharedAtomics<float>(int, float const*, float*, int)";
constexpr const char* kReduce =
    "void tensorflow::functor::BlockReduceKernel<float*, float*, 256, tensorflow::functor::Sum<float> >";
constexpr const char* kApply =
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 1, 1, long>, 16>, Eigen::TensorCwiseBinaryOp<Eigen::internal::scalar_difference_op<float, float>, "
    "Eigen::TensorMap<Eigen::Tensor<float, 1, 1, long>, 16> const> const> const, Eigen::GpuDevice>, long>";
constexpr const char* kNccl = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)";

struct TfOptions {
  int gpus = 4;
  int steps = 30;
  int layers = 16;
  std::uint32_t seed = 7;
  TimeNs python = 3'000'000;  // host time between steps (plus up to a third more)
  std::string around;         // a range around the whole loop on every launching thread ("" none)
};

// A TensorFlow-shaped training run: per GPU one stream (7) and one launching
// thread (10 + GPU); each step a forward pass (pad, conv, bias broadcast,
// batch norm per layer), a loss, a backward pass whose weight and data
// gradients come in either order and whose updates interleave with it, an
// all-reduce every 4 layers; the first step also tries a second convolution
// algorithm per layer (cuDNN autotuning). Kernel durations jitter by up to
// 20%. Returns the trace; `bursts` gets each GPU's burst starts.
Trace tf_training_trace(const TfOptions& o, std::vector<std::vector<TimeNs>>* bursts = nullptr) {
  TraceFactory f;
  for (int d = 1; d < o.gpus; ++d) f.device(static_cast<std::uint32_t>(d));
  std::mt19937 rng(o.seed);
  auto jitter = [&](TimeNs v) { return v + static_cast<TimeNs>(rng() % static_cast<std::uint32_t>(v / 5 + 1)); };
  std::vector<TimeNs> gpu_free(static_cast<std::size_t>(o.gpus), 1'000'000);
  if (bursts) bursts->assign(static_cast<std::size_t>(o.gpus), {});
  TimeNs host = 1'000'000;
  for (int s = 0; s < o.steps; ++s) {
    for (int g = 0; g < o.gpus; ++g) {
      const auto gpu = static_cast<std::uint32_t>(g);
      TimeNs now = std::max(gpu_free[gpu], host);
      if (bursts) (*bursts)[gpu].push_back(now);
      auto k = [&](const char* name, TimeNs dur) {
        const TimeNs d = jitter(dur);
        f.kernel(gpu, 7, name, now, now + d, now - 8'000, 4'000, 1000, 10 + gpu);
        now += d + jitter(2'000);
      };
      for (int l = 0; l < o.layers; ++l) {
        if (s == 0) k(kConvTried, 300'000), k(kConv, 250'000);
        k(names::kPad, 40'000), k(kConv, 250'000), k(names::kBroadcast, 30'000), k(kBatchNorm, 60'000);
      }
      k(kReduce, 20'000), k(kReluGrad, 10'000);
      for (int l = o.layers - 1; l >= 0; --l) {
        k(kBatchNormGrad, 80'000), k(kReluGrad, 15'000);
        if (l % 2 == 0) k(kReduce, 12'000);
        if (rng() & 1)
          k(kWgrad, 300'000), k(kDgrad, 280'000);
        else
          k(kDgrad, 280'000), k(kWgrad, 300'000);
        k(kBiasGrad, 20'000);
        if (l % 4 == 0) k(kNccl, 150'000);
        if (rng() % 3 == 0) k(kApply, 10'000);
      }
      for (int v = 0; v < 6; ++v) k(kApply, 10'000);
      gpu_free[gpu] = now;
    }
    host = *std::max_element(gpu_free.begin(), gpu_free.end()) + o.python + jitter(o.python) / 3 - o.python / 3;
  }
  if (!o.around.empty())
    for (int g = 0; g < o.gpus; ++g) f.range(o.around, 0, host + 1'000'000, 10 + static_cast<std::uint32_t>(g));
  return f.build();
}

// "name_12" (appended: GCC 12 warns wrongly on "literal" + std::to_string()).
std::string numbered(std::string_view name, int n) {
  std::string s(name);
  s += '_';
  s += std::to_string(n);
  return s;
}

std::vector<const Step*> steps_of(const Profile& p, std::uint32_t device) {
  std::vector<const Step*> v;
  for (const Step& s : p.steps.steps)
    if (s.device == device) v.push_back(&s);
  return v;
}

// A serving engine's annotated batches ("step[DECODE bs=32]", SGLang) are steps.
TEST(StepsFromRanges, ABracketedDescriptionAfterStepIsAStep) {
  testing::TraceFactory f;
  for (int i = 0; i < 3; ++i) {
    const TimeNs t0 = 1'000'000 + i * 2'000'000;
    f.range(i == 1 ? "step[EXTEND bs=15 toks=15360]" : "step[DECODE bs=32]", t0, t0 + 1'500'000, 1,
            RangeKind::annotation, "user_annotation");
    f.kernel(0, 7, "k", t0 + 100'000, t0 + 1'400'000, t0 + 10'000);
  }
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.steps.source, StepSource::nvtx);
  EXPECT_EQ(p.steps.steps.size(), 3u);
  testing::TraceFactory g;  // "stepper[x]" is no step
  g.range("stepper[x]", 1'000'000, 2'000'000, 1, RangeKind::annotation, "user_annotation");
  g.range("stepper[x]", 3'000'000, 4'000'000, 1, RangeKind::annotation, "user_annotation");
  g.kernel(0, 7, "k", 1'100'000, 1'900'000, 1'010'000);
  g.kernel(0, 7, "k", 3'100'000, 3'900'000, 3'010'000);
  EXPECT_NE(analyze(g.build()).steps.source, StepSource::nvtx);
}

// A GPU behind its host when the trace begins (work queued before it, with
// no launch in the trace, or launched before the first step) runs that
// backlog first: the first step starts when it is done, not when the host
// began the step, so it does not absorb the backlog. Later steps start where
// the one before ended.
TEST(StepsFromRanges, TheFirstStepStartsWhenTheBacklogAheadOfItIsDone) {
  auto run = [](bool backlog) {
    testing::TraceFactory f;
    TimeNs gpu = 1'000'000;
    if (backlog) {
      for (int i = 0; i < 10; ++i, gpu += 10'000'000)
        f.kernel(0, 7, "queued", gpu, gpu + 10'000'000, TraceFactory::kNoLaunch);
      f.kernel(0, 8, "launched before", gpu, gpu + 5'000'000, 500'000);  // another stream, launched before step 0
      gpu += 5'000'000;
    }
    for (int s = 0; s < 3; ++s) {
      const TimeNs host = 1'000'000 + s * 20'000'000;
      f.range("ProfilerStep#" + std::to_string(s), host, host + 20'000'000, 1, RangeKind::annotation,
              "user_annotation");
      gpu = std::max(gpu, host + 100'000);
      f.kernel(0, 7, "step work", gpu, gpu + 18'000'000, host + 50'000);
      gpu += 18'000'000;
    }
    return analyze(f.build());
  };
  const Profile clean = run(false);
  ASSERT_EQ(clean.steps.steps.size(), 3u);
  EXPECT_EQ(clean.steps.steps[0].range.start, 1'000'000);  // the host's start
  // Each step's GPU idles 100 µs before its first op: where a loop waits for its batch.
  for (const Step& s : clean.steps.steps) EXPECT_EQ(s.lead_idle_ns, 100'000) << s.name;
  EXPECT_EQ(clean.steps.lead_idle_ns, 300'000);
  const Profile behind = run(true);
  ASSERT_EQ(behind.steps.steps.size(), 3u);
  // The backlog: 100 ms queued before the trace, then 5 ms launched before the first step.
  EXPECT_EQ(behind.steps.steps[0].range.start, 106'000'000);
  EXPECT_EQ(behind.steps.steps[0].range.duration(), 18'000'000);
  EXPECT_EQ(behind.steps.steps[1].range.duration(), 18'000'000);
  EXPECT_EQ(behind.steps.steps[1].lead_idle_ns, 0);  // the GPU is still busy when the host starts it
}

// The first step's own ops that run beside the backlog, on another stream,
// are counted and said, not taken in (they would bring the backlog back in).
TEST(StepsFromRanges, TheFirstStepsOwnOpsBesideTheBacklogAreCounted) {
  testing::TraceFactory f;
  f.kernel(0, 7, "queued", 1'000'000, 100'000'000, TraceFactory::kNoLaunch);  // the backlog
  f.range("ProfilerStep#0", 2'000'000, 110'000'000, 1, RangeKind::annotation, "user_annotation");
  f.kernel(0, 8, "own, beside it", 3'000'000, 4'000'000, 2'100'000);
  f.kernel(0, 7, "own, behind it", 100'000'000, 105'000'000, 2'200'000);
  f.range("ProfilerStep#1", 110'000'000, 120'000'000, 1, RangeKind::annotation, "user_annotation");
  f.kernel(0, 7, "next", 110'100'000, 119'000'000, 110'050'000);
  const Profile p = analyze(f.build());
  ASSERT_EQ(p.steps.steps.size(), 2u);
  EXPECT_EQ(p.steps.steps[0].range.start, 100'000'000);
  EXPECT_EQ(p.steps.early_ops, 1u);
  EXPECT_EQ(p.steps.early_ops_ns, 1'000'000);
}

// Work with no launch in the trace that runs at the first step's start
// while the host waits in a synchronization it began there (a benchmark
// harness's torch.cuda.synchronize() before the timed forward) was queued
// before that sync, and the step launched nothing before it: the previous
// iteration's tail, not the step's own. Without that sync, ops with no
// launch that ended before the step's first launch may be the step's own
// with their launches lost, and stay in it.
TEST(StepsFromRanges, WorkASyncAtTheStepsStartWaitedForIsBacklog) {
  auto run = [](bool sync) {
    testing::TraceFactory f;
    f.range("ProfilerStep#6", 1'000'000, 60'000'000, 1, RangeKind::annotation, "user_annotation");
    f.kernel(0, 7, "previous tail", 900'000, 15'000'000, TraceFactory::kNoLaunch);
    if (sync) f.api("cudaDeviceSynchronize", 1'050'000, 15'010'000);
    f.kernel(0, 7, "step work", 15'100'000, 50'000'000, 15'050'000);
    return analyze(f.build());
  };
  const Profile waited = run(true);
  ASSERT_EQ(waited.steps.steps.size(), 1u);
  EXPECT_EQ(waited.steps.steps[0].range.start, 15'000'000);
  const Profile lost = run(false);
  ASSERT_EQ(lost.steps.steps.size(), 1u);
  EXPECT_EQ(lost.steps.steps[0].range.start, 1'000'000);
}

// The backlog's kernels are kept by category (backlog_categories), and the
// findings that weigh shares of kernel time leave them out: the previous
// iteration's elementwise tail does not make the step's own work look
// memory-bound. Where no sync shows it queued before the step, it stays the
// step's, and counts.
TEST(StepsFromRanges, TheBacklogsKernelsStayOutOfTheShareFindings) {
  auto run = [](bool sync) {
    testing::TraceFactory f;
    f.range("ProfilerStep#6", 1'000'000, 60'000'000, 1, RangeKind::annotation, "user_annotation");
    for (int i = 0; i < 20; ++i)
      f.kernel(0, 7, names::kRelu, 900'000 + i * 700'000, 1'600'000 + i * 700'000, TraceFactory::kNoLaunch);
    if (sync) f.api("cudaDeviceSynchronize", 1'050'000, 14'910'000);
    f.kernel(0, 7, names::kGemmTensorCore, 15'000'000, 40'000'000, 14'950'000);
    for (int i = 0; i < 20; ++i)
      f.kernel(0, 7, names::kRelu, 40'000'000 + i * 250'000, 40'250'000 + i * 250'000, 14'960'000 + i * 10'000);
    return analyze(f.build());
  };
  auto fired = [](const Profile& p) {
    for (const Finding& f : p.findings)
      if (f.id == "memory-bound-aux") return true;
    for (const Finding& f : p.minor_findings)
      if (f.id == "memory-bound-aux") return true;
    return false;
  };
  const Profile queued = run(true);
  ASSERT_EQ(queued.steps.backlog_ops, 20u);
  ASSERT_EQ(queued.steps.backlog_categories.size(), 1u);
  EXPECT_EQ(queued.steps.backlog_categories[0].category, KernelCategory::elementwise);
  EXPECT_EQ(queued.steps.backlog_categories[0].time_ns, 14'000'000);
  EXPECT_EQ(queued.steps.backlog_categories[0].count, 20u);
  EXPECT_FALSE(fired(queued));  // the step's own: 5 ms of elementwise against 25 ms of GEMM
  const Profile own = run(false);
  EXPECT_EQ(own.steps.backlog_ops, 0u);
  EXPECT_TRUE(own.steps.backlog_categories.empty());
  EXPECT_TRUE(fired(own));  // 19 ms of elementwise, 43 % of kernel time
}

// The host's and the GPU's clocks need not agree to the microsecond: a sync
// that returns a little before the backlog's recorded end (7.5 µs in an
// MI300 trace) was still blocking when its last op began, so it waited for
// it, and the backlog stays out of the step (said as backlog_ops). A sync
// that returned before that op began did not wait for it. The host's time
// blocked in syncs inside the step is counted (sync_blocked_ns).
TEST(StepsFromRanges, ASyncThatReturnsJustBeforeTheBacklogsRecordedEndWaitedForIt) {
  auto run = [](TimeNs sync_end) {
    testing::TraceFactory f;
    f.range("ProfilerStep#6", 1'000'000, 60'000'000, 1, RangeKind::annotation, "user_annotation");
    f.kernel(0, 7, "previous tail", 900'000, 14'000'000, TraceFactory::kNoLaunch);
    f.kernel(0, 7, "previous tail", 14'000'000, 15'000'000, TraceFactory::kNoLaunch);
    f.api("hipDeviceSynchronize", 1'050'000, sync_end);
    f.kernel(0, 7, "step work", 15'100'000, 50'000'000, 15'050'000);
    f.api("hipDeviceSynchronize", 50'000'000, 50'100'000);  // the step's own, at its end
    return analyze(f.build());
  };
  const Profile skewed = run(14'992'500);
  ASSERT_EQ(skewed.steps.steps.size(), 1u);
  EXPECT_EQ(skewed.steps.steps[0].range.start, 15'000'000);
  EXPECT_EQ(skewed.steps.backlog_ops, 2u);
  EXPECT_EQ(skewed.steps.backlog_ns, 14'100'000);
  EXPECT_EQ(skewed.steps.sync_blocked_ns, 100'000);  // the first sync ended before the step began on the GPU
  const Profile early = run(13'900'000);
  ASSERT_EQ(early.steps.steps.size(), 1u);
  EXPECT_EQ(early.steps.steps[0].range.start, 1'000'000);
  EXPECT_EQ(early.steps.backlog_ops, 0u);
  EXPECT_EQ(early.steps.sync_blocked_ns, 12'850'000 + 100'000);  // both syncs lie in the step
}

// Work launched before the first step that does not run at its start (held
// by a dependency: the GPU idle meanwhile) is no backlog of a GPU behind its
// host: the wait is the step's, which starts when the host began it (an
// SGLang decode step whose queued ops waited 463 ms for an event).
TEST(StepsFromRanges, WorkHeldAtTheFirstStepsStartIsNoBacklog) {
  testing::TraceFactory f;
  f.kernel(0, 7, "held", 50'000'000, 50'010'000, 900'000);  // launched before the step, started 49 ms after it
  for (int s = 0; s < 2; ++s) {
    const TimeNs host = 1'000'000 + s * 60'000'000;
    f.range("step", host, host + 55'000'000, 1, RangeKind::push_pop, "nvtx");
    const TimeNs gpu = s == 0 ? 50'020'000 : host + 100'000;
    f.kernel(0, 7, "step work", gpu, gpu + 5'000'000, host + 50'000);
  }
  const Profile p = analyze(f.build());
  ASSERT_EQ(p.steps.steps.size(), 2u);
  EXPECT_EQ(p.steps.steps[0].range.start, 1'000'000);  // the host's start
  EXPECT_EQ(p.steps.steps[0].lead_idle_ns, 49'000'000);
  EXPECT_GE(p.steps.steps[0].idle_ns, 49'000'000);
}

// One step range on its thread (a serving engine's trace of one batch) is a
// step, as one ProfilerStep is.
TEST(StepsFromRanges, OneStepRangeIsOneStep) {
  testing::TraceFactory f;
  f.range("step[DECODE bs=32]", 1'000'000, 9'000'000, 1, RangeKind::annotation, "user_annotation");
  f.kernel(0, 7, "k", 1'100'000, 8'000'000, 1'010'000);
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.steps.source, StepSource::nvtx);
  ASSERT_EQ(p.steps.steps.size(), 1u);
  EXPECT_EQ(p.steps.steps[0].range.start, 1'000'000);
}

TEST(StepsWithoutMarkers, TensorFlowShapedRunGetsItsStepsFromTheBursts) {
  std::vector<std::vector<TimeNs>> bursts;
  const Profile p = analyze(tf_training_trace({}, &bursts));
  // Every kernel name comes many times a step, in a varying order: no
  // kernel marks the steps (and the first step's 16 autotuned layers, which
  // repeat evenly, are no steps either).
  EXPECT_EQ(p.steps.source, StepSource::bursts) << p.steps.source_evidence;
  ASSERT_EQ(p.steps.steps.size(), 4u * 29);  // a step ends where the next burst starts: the last burst is none
  for (std::uint32_t g = 0; g < 4; ++g) {
    const std::vector<const Step*> s = steps_of(p, g);
    ASSERT_EQ(s.size(), 29u) << "GPU " << g;
    for (std::size_t i = 0; i < s.size(); ++i) {
      EXPECT_EQ(s[i]->index, static_cast<std::int32_t>(i));
      EXPECT_EQ(s[i]->range, (TimeRange{bursts[g][i], bursts[g][i + 1]})) << "GPU " << g << " step " << i;
      EXPECT_GT(s[i]->idle_ns, 2'000'000) << "the host gap after the burst is in the step";
    }
    EXPECT_GT(s[0]->range.duration(), s[1]->range.duration());  // the first step autotunes
  }
  EXPECT_GT(p.steps.step_time.median, 20'000'000);
  EXPECT_NE(p.steps.source_evidence.find("29 steps per GPU (4 GPUs)"), std::string::npos) << p.steps.source_evidence;
  EXPECT_NE(p.steps.source_evidence.find("host gap"), std::string::npos) << p.steps.source_evidence;
  EXPECT_TRUE(p.steps.not_steps.empty()) << p.steps.not_steps;
}

TEST(StepsWithoutMarkers, ARangeAroundTheWholeLoopKeepsThem) {
  TfOptions o;
  o.around = "train";
  const Profile p = analyze(tf_training_trace(o));
  EXPECT_EQ(p.steps.source, StepSource::bursts);
  EXPECT_EQ(p.steps.steps.size(), 4u * 29);
}

TEST(StepsWithoutMarkers, TheRegressionGateCanCompareTwoSuchRuns) {
  TfOptions other;
  other.seed = 8;
  const CheckReport r = check_profiles(analyze(tf_training_trace({})), analyze(tf_training_trace(other)), {});
  const CheckResult* step = r.find("step-time");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->outcome, CheckOutcome::passed) << step->message;
}

// One inference pass of 12 identical layers: each layer's kernels, launched
// 10 µs ahead; with `late`, each layer is launched only after the previous
// one finished (the GPU waits 500 µs for the host between layers); with
// `named`, each layer's kernels carry its number (no kernel name repeats).
Trace layered_inference(std::string_view call, bool late, bool named = false) {
  TraceFactory f;
  TimeNs t = 1'000'000;
  const char* layer[] = {names::kGemmTensorCore, "softmax_warp_forward", names::kGemmTensorCore, "layer_norm_kernel"};
  f.kernel(0, 7, "embedding_kernel", t, t + 20'000), t += 20'000;
  for (int l = 0; l < 12; ++l) {
    if (late) t += 500'000;
    for (const char* k : layer) {
      f.kernel(0, 7, named ? numbered(k, l) : std::string(k), t, t + 20'000);
      t += 22'000;
    }
  }
  f.kernel(0, 7, "pooler_kernel", t, t + 20'000), t += 20'000;
  if (!call.empty()) f.range(call, 0, t + 10'000, 1, RangeKind::push_pop, "nvtx");
  return f.build();
}

TEST(StepsWithoutMarkers, LayersOfOneForwardCallAreNoSteps) {
  for (const bool late : {false, true}) {
    const Profile p = analyze(layered_inference("forward", late));
    EXPECT_EQ(p.steps.source, StepSource::none) << late;
    EXPECT_TRUE(p.steps.steps.empty()) << late;
    EXPECT_NE(p.steps.not_steps.find("inside one call (forward)"), std::string::npos) << p.steps.not_steps;
  }
  // No kernel name repeats, but the layers come in bursts: refused for the call around them.
  const Profile p = analyze(layered_inference("forward", true, true));
  EXPECT_TRUE(p.steps.steps.empty());
  EXPECT_NE(p.steps.not_steps.find("13 bursts inside one call (forward)"), std::string::npos) << p.steps.not_steps;
  // Without the call, the same bursts are steps (an eager loop: 12 steps and the last burst).
  EXPECT_EQ(analyze(layered_inference("", true, true)).steps.source, StepSource::bursts);
}

TEST(StepsWithoutMarkers, ASingleBurstIsNoSteps) {
  TraceFactory f;
  TimeNs t = 1'000'000;
  for (int i = 0; i < 40; ++i) f.kernel(0, 7, numbered("kernel", i), t, t + 10'000), t += 11'000;
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.steps.source, StepSource::none);
  EXPECT_TRUE(p.steps.steps.empty());
  EXPECT_TRUE(p.steps.not_steps.empty());
}

TEST(StepsWithoutMarkers, BurstsThatDoNotLookAlikeAreNoSteps) {
  // Host gaps of 2 ms between bursts of 2, 9, 3, 14, 5 and 8 kernels.
  TraceFactory f;
  TimeNs t = 1'000'000;
  int name = 0;
  for (int n : {2, 9, 3, 14, 5, 8}) {
    for (int i = 0; i < n; ++i) f.kernel(0, 7, numbered("k", name++), t, t + 10'000), t += 11'000;
    t += 2'000'000;
  }
  EXPECT_TRUE(analyze(f.build()).steps.steps.empty());
}

TEST(StepsWithoutMarkers, TwoBurstsAreTooFewToCall) {
  TfOptions o;
  o.steps = 3;  // three bursts make two steps
  const Profile p = analyze(tf_training_trace(o));
  EXPECT_EQ(p.steps.source, StepSource::none);
}

TEST(StepsWithoutMarkers, GapsTheGpuDidNotWaitForTheHostAreNoStepBoundaries) {
  // Bursts between gaps whose next kernel was launched long before: the GPU
  // waited for something else (an event, another stream), not the host.
  TraceFactory f;
  TimeNs t = 1'000'000;
  for (int s = 0; s < 6; ++s) {
    const TimeNs launched = t - 2'500'000;  // before the previous burst ended
    for (int i = 0; i < 8; ++i)
      f.kernel(0, 7, numbered("k", s * 8 + i), t + i * 10'000, t + i * 10'000 + 10'000, launched + i * 10'000);
    t += 8 * 10'000 + 2'000'000;
  }
  EXPECT_TRUE(analyze(f.build()).steps.steps.empty());
}

// Six steps of 20 ms; one the host ran slower in (each op on its thread
// takes 1.5x as long), one that waited 12 ms in one op: both are named as
// slow steps, with the ops that grew against their median, most first.
TEST(SlowSteps, TheOpsThatGrewAreNamedAgainstTheirMedian) {
  TraceFactory f;
  TimeNs host = 1'000'000;
  for (int s = 0; s < 6; ++s) {
    const bool slower = s == 2, waits = s == 4;
    const TimeNs scale = slower ? 3 : 2;  // halves
    const TimeNs a = 6'000'000 * scale / 2, b = 4'000'000 * scale / 2, c = 2'000'000 * scale / 2;
    const TimeNs extra = waits ? 12'000'000 : 0;
    const TimeNs len = 20'000'000 + (slower ? 6'000'000 : 0) + extra;
    f.range("ProfilerStep#" + std::to_string(s), host, host + len, 1, RangeKind::annotation, "user_annotation");
    f.range("aten::conv2d", host + 100'000, host + 100'000 + a, 1, RangeKind::annotation, "cpu_op");
    f.range("aten::batch_norm", host + 100'000 + a, host + 100'000 + a + b, 1, RangeKind::annotation, "cpu_op");
    f.range("aten::to", host + 100'000 + a + b, host + 100'000 + a + b + c + extra, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, "step work", host + 200'000, host + 10'000'000, host + 150'000);
    host += len;
  }
  const Profile p = analyze(f.build());
  ASSERT_EQ(p.steps.slow_steps.size(), 2u);
  const SlowStep& wait = p.steps.slow_steps[0];  // 32 ms, slowest first
  EXPECT_EQ(wait.name, "ProfilerStep#4");
  EXPECT_EQ(wait.ns, 32'000'000);
  EXPECT_EQ(wait.median_ns, 20'000'000);
  ASSERT_FALSE(wait.ops.empty());
  EXPECT_EQ(wait.ops[0].name, "aten::to");
  EXPECT_EQ(wait.ops[0].ns, 14'000'000);
  EXPECT_EQ(wait.ops[0].median_ns, 2'000'000);
  EXPECT_EQ(wait.ops.size(), 1u);  // the others did not grow
  const SlowStep& slow = p.steps.slow_steps[1];
  EXPECT_EQ(slow.name, "ProfilerStep#2");
  ASSERT_EQ(slow.ops.size(), 3u);
  EXPECT_EQ(slow.ops[0].name, "aten::conv2d");  // +3 ms
  EXPECT_EQ(slow.ops[0].ns, 9'000'000);
  EXPECT_EQ(slow.ops[0].median_ns, 6'000'000);
  EXPECT_EQ(slow.ops[1].name, "aten::batch_norm");  // +2 ms
  EXPECT_EQ(slow.ops[2].name, "aten::to");          // +1 ms
}

// Steps within a fifth of the median are not slow; nor are steps of a GPU
// with fewer than four.
TEST(SlowSteps, NoneWithinAFifthOrWithFewSteps) {
  for (const int n : {3, 6}) {
    TraceFactory f;
    TimeNs host = 1'000'000;
    for (int s = 0; s < n; ++s) {
      const TimeNs len = s == 1 ? (n == 3 ? 40'000'000 : 23'000'000) : 20'000'000;
      f.range("ProfilerStep#" + std::to_string(s), host, host + len, 1, RangeKind::annotation, "user_annotation");
      f.kernel(0, 7, "step work", host + 200'000, host + 10'000'000, host + 150'000);
      host += len;
    }
    const Profile p = analyze(f.build());
    ASSERT_EQ(p.steps.steps.size(), static_cast<std::size_t>(n));
    EXPECT_TRUE(p.steps.slow_steps.empty()) << n;
  }
}

// The host's issue time per step: from the first launch in the step to the
// end of the last, less the time the launching thread was blocked in a
// synchronization meanwhile (a .item() mid-step); launches before the step
// (its backlog) are not the step's.
TEST(StepsFromRanges, TheHostsIssueTimeLeavesOutItsSyncs) {
  TraceFactory f;
  TimeNs host = 1'000'000;
  for (int s = 0; s < 3; ++s) {
    f.range("ProfilerStep#" + std::to_string(s), host, host + 10'000'000, 1, RangeKind::annotation, "user_annotation");
    // Launches at +1 ms and +2 ms (5 µs each), a 3 ms sync from +3 ms, a launch at +7 ms.
    f.kernel(0, 7, "a", host + 1'100'000, host + 1'500'000, host + 1'000'000);
    f.kernel(0, 7, "b", host + 2'100'000, host + 2'900'000, host + 2'000'000);
    f.sync(SyncType::stream, 0, 7, host + 3'000'000, host + 6'000'000);
    f.kernel(0, 7, "c", host + 7'100'000, host + 7'500'000, host + 7'000'000);
    host += 10'000'000;
  }
  const Profile p = analyze(f.build());
  ASSERT_EQ(p.steps.steps.size(), 3u);
  // Per step: 6.005 ms from the first launch's start (+1 ms) to the last's end, less the 3 ms sync.
  EXPECT_EQ(p.steps.host_issue_ns, 3 * (6'005'000 - 3'000'000));
}

}  // namespace
}  // namespace gpuscope
