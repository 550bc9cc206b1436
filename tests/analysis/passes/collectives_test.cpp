// Collectives compared with themselves (analysis/passes/collectives.h): the
// kind from the framework's annotation before the kernel's name, the message
// size from the recorded inputs or Kineto's collective arguments, the call
// site (kind, size, place in the step) across steps; and what the
// exposed-communication finding and the "overlap all-reduce?" answer make of
// it. Planted traces: two sizes under one kernel name (the kernel-name rule
// calls that waiting), DDP's all-reduce as SendRecv kernels inside backward,
// one site that waits in half the steps.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/detail/context.h"
#include "analysis/findings/rules.h"
#include "analysis/passes/collectives.h"
#include "support/findings.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;
namespace names = testing::names;
constexpr TimeNs us = 1'000, ms = 1'000 * us;

using testing::find_help;

// A collective's kernel [t, t + d) on stream 13, launched 50 µs ahead inside
// `annotation` (with its recorded inputs), itself inside `outer` when given
// (with Kineto's collective arguments).
struct Coll {
  const char* kernel = names::kAllReduce;
  const char* annotation = "nccl:all_reduce";
  std::string dims, types;
  const char* outer = nullptr;
  std::string args;
};
void collective(TraceFactory& f, TimeNs t, TimeNs d, const Coll& c) {
  const TimeNs launch = t - 50 * us;
  if (c.outer) f.comm_op(c.outer, launch - 20 * us, launch + 20 * us, {}, {}, c.args);
  if (c.annotation) f.comm_op(c.annotation, launch - 10 * us, launch + 10 * us, c.dims, c.types);
  f.kernel(0, 13, c.kernel, t, t + d, launch, 5 * us);
}

// `n` steps on GPU 0: a 600 µs convolution, then the collectives `body(step,
// t)` adds from t on (it returns where they end), an NVTX range "step i"
// around each.
template <class Body>
void add_steps(TraceFactory& f, int n, Body&& body) {
  f.device(0);
  TimeNs t = 1 * ms;
  for (int s = 0; s < n; ++s) {
    const TimeNs s0 = t;
    f.kernel(0, 7, names::kConvTensorCore, t, t + 600 * us, t - 100 * us);
    t = body(s, t + 601 * us);
    f.range("step " + std::to_string(s), s0 - 200 * us, t);
    t += 10 * us;
  }
}

Coll sized(std::uint64_t floats) {
  return {names::kAllReduce, "nccl:all_reduce", "[[" + std::to_string(floats) + "]]", "[\"float\"]"};
}

TEST(Collectives, AnnotationsNameTheKindAndSize) {
  using detail::annotation_kind;
  EXPECT_EQ(annotation_kind("nccl:all_reduce"), 1);
  EXPECT_EQ(annotation_kind("nccl:_all_gather_base"), 2);
  EXPECT_EQ(annotation_kind("c10d::_reduce_scatter_base_"), 3);
  EXPECT_EQ(annotation_kind("nccl:all_to_all"), 7);
  EXPECT_EQ(annotation_kind("ncclAllReduce"), 1);
  EXPECT_EQ(annotation_kind("CollectiveReduceV2"), 1);  // TensorFlow's all-reduce, not a reduce
  EXPECT_EQ(annotation_kind("all-gather.3"), 2);        // XLA
  EXPECT_EQ(annotation_kind("nccl:all_reduce_barrier"), 0);
  EXPECT_EQ(annotation_kind("record_param_comms"), 0);
  EXPECT_EQ(annotation_kind("record_param_comms", R"({"Collective name":"_allgather_base","In msg nelems":4})"), 2);
  EXPECT_EQ(annotation_kind("aten::add"), -1);
  EXPECT_EQ(annotation_kind("aten::scatter_reduce"), -1);
  EXPECT_EQ(detail::input_bytes("[[19618307]]", R"(["float"])"), 78'473'228u);
  EXPECT_EQ(detail::input_bytes("[[2,3],[]]", R"(["c10::BFloat16","Scalar"])"), 12u);
  EXPECT_EQ(detail::input_bytes("[[],[]]", R"(["TensorList","Scalar"])"), 0u);
  EXPECT_EQ(detail::collective_args_bytes(
                R"({"Collective name":"allgather","In msg nelems":1024,"Out msg nelems":8192,"dtype":"BFloat16"})"),
            16'384u);
  EXPECT_EQ(detail::collective_args_bytes(R"({"Collective name":"allreduce","In msg nelems":1024})"), 0u);
}

// Three small all-reduces and a large one per step, all one kernel name: the
// longest call is 20x the median, which the kernel-name rule took for
// waiting. Compared with itself, each site takes the same time every step.
TEST(Collectives, TwoSizesUnderOneKernelNameAreTransferNotWaiting) {
  for (const bool annotated : {true, false}) {
    SCOPED_TRACE(annotated ? "sizes from the annotations" : "no annotations: place in the step only");
    TraceFactory f;
    add_steps(f, 10, [&](int, TimeNs t) {
      for (int k = 0; k < 3; ++k, t += 51 * us)
        collective(f, t, 50 * us, annotated ? sized(262'144) : Coll{names::kAllReduce, nullptr});
      collective(f, t, 1 * ms, annotated ? sized(26'214'400) : Coll{names::kAllReduce, nullptr});
      return t + 1001 * us;
    });
    const Profile p = analyze(f.build());
    const Hotspot& h = *std::find_if(p.hotspots.begin(), p.hotspots.end(),
                                     [](const Hotspot& x) { return x.name == names::kAllReduce; });
    EXPECT_GE(h.stats.max, 10 * h.stats.median);  // the trap: one name, two sizes
    ASSERT_EQ(p.collective_sites.size(), 4u);
    for (const CollectiveSite& site : p.collective_sites) {
      EXPECT_EQ(site.durations.count, 10u);
      EXPECT_EQ(site.wait_ns, 0);
      EXPECT_EQ(site.kind, "all_reduce");
    }
    const CollectiveSite& big = p.collective_sites.front();
    EXPECT_EQ(big.durations.min, 1 * ms);
    EXPECT_EQ(big.bytes, annotated ? 104'857'600u : 0u);
    EXPECT_EQ(big.ordinal, annotated ? 0 : 3);
    EXPECT_EQ(big.named_by, annotated ? "nccl:all_reduce" : "kernel name");
    const Finding* e = testing::find_finding(p, "exposed-communication");
    ASSERT_TRUE(e) << testing::describe_findings(p);
    EXPECT_EQ(e->variant, "transfer");
    EXPECT_EQ(e->title.find("waiting"), std::string::npos) << e->title;
    EXPECT_EQ(e->recommendation.find("waiting"), std::string::npos) << e->recommendation;
    EXPECT_NE(e->evidence.find("0 ns (0%) is beyond each site's fastest instance"), std::string::npos) << e->evidence;
  }
}

// Inference with an exposed all-reduce after each step's compute (tensor
// parallelism): there are no gradients, so the fix speaks of overlapping the
// collectives with the GEMMs, not of the backward pass.
TEST(Collectives, InferenceIsNotToldToOverlapGradients) {
  TraceFactory f;
  add_steps(f, 6, [&](int, TimeNs t) {
    collective(f, t, 300 * us, {});
    return t + 301 * us;
  });
  f.range("aten::inference_mode", 0, 100 * ms, 1, RangeKind::annotation, "cpu_op");
  const Profile p = analyze(f.build());
  ASSERT_EQ(p.workload.phase, "inference") << p.workload.phase_evidence;
  const Finding* e = testing::find_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_EQ(e->recommendation.rfind("Overlap the collectives with compute: in tensor-parallel inference", 0), 0u)
      << e->recommendation;
  EXPECT_EQ(e->recommendation.find("backward"), std::string::npos) << e->recommendation;
}

// DDP: each bucket's all-reduce launched from inside the backward pass
// (the hooks its reducer hangs on AccumulateGrad) under record_param_comms and nccl:all_reduce, run as
// SendRecv kernels beside the next layer's gradients; the last one exposed.
Trace ddp_trace(bool inside_backward) {
  TraceFactory f;
  f.device(0);
  const Coll bucket{names::kSendRecv,
                    "nccl:all_reduce",
                    {},
                    {},
                    "record_param_comms",
                    R"({"Collective name":"allreduce","In msg nelems":1048576,"Out msg nelems":1048576,)"
                    R"("dtype":"Float","Group size":8})"};
  TimeNs t = 1 * ms;
  for (int s = 0; s < 6; ++s) {
    const TimeNs s0 = t;
    f.range("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", s0 - 300 * us,
            s0 + (inside_backward ? 1000 : 0) * us, 1, RangeKind::annotation, "cpu_op");
    for (int k = 0; k < 3; ++k) {
      f.kernel(0, 7, names::kConvTensorCore, t, t + 300 * us, s0 - 250 * us + k * 10 * us);
      t += 301 * us;
      if (inside_backward || k == 2) {
        const int buckets = inside_backward ? 1 : 3;
        for (int b = 0; b < buckets; ++b) {
          collective(f, t + b * 201 * us, 200 * us, bucket);
        }
      }
    }
    t += (inside_backward ? 201 : 3 * 201) * us + 50 * us;
    f.range("step " + std::to_string(s), s0 - 400 * us, t);
    t += 400 * us;  // the next step's first launch (250 µs ahead) after this step's range
  }
  return f.build();
}

TEST(Collectives, DdpAllReduceAsSendRecvKernelsIsNamedByItsAnnotation) {
  const Trace tr = ddp_trace(true);
  const Profile p = analyze(tr);
  EXPECT_EQ(p.workload.data_parallel, "ddp") << p.workload.data_parallel_evidence;
  ASSERT_EQ(p.collective_sites.size(), 3u);  // one per bucket: the 1st, 2nd, 3rd all-reduce of 4 MiB in the step
  for (const CollectiveSite& s : p.collective_sites) {
    EXPECT_EQ(s.kind, "all_reduce");
    EXPECT_EQ(s.named_by, "nccl:all_reduce");
    EXPECT_EQ(s.bytes, 4u * 1048576);  // from record_param_comms's arguments
    EXPECT_EQ(s.durations.count, 6u);
  }
  const CollectiveSummary& c = p.collective_summary;
  ASSERT_EQ(c.kinds.size(), 1u);
  EXPECT_EQ(c.kinds[0].kind, "all_reduce");
  EXPECT_EQ(c.renamed_sites, 3u);
  const HelpAnswer* a = find_help(p, "overlap-communication");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_NE(a->reason.find("already buckets gradients"), std::string::npos) << a->reason;
  // Its exposed time is still a finding (the last bucket after the backward
  // pass); the fix does not prescribe what DDP already does: it starts from
  // DDP and tunes it.
  const Finding* e = testing::find_any_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_EQ(e->recommendation.rfind("This run already uses DDP (", 0), 0u) << e->recommendation;
  EXPECT_EQ(e->recommendation.find("Overlap the gradient all-reduce"), std::string::npos) << e->recommendation;
}

// The same all-reduces after the backward pass, outside it: not DDP, and
// their own exposed time says yes.
TEST(Collectives, AllReduceAfterBackwardIsOverlapped) {
  const Profile p = analyze(ddp_trace(false));
  EXPECT_EQ(p.workload.data_parallel, "");
  const Finding* e = testing::find_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_NE(e->evidence.find("100% all_reduce"), std::string::npos) << e->evidence;
  EXPECT_NE(e->evidence.find("not as the kernels' names say (send_recv)"), std::string::npos) << e->evidence;
  EXPECT_NE(e->recommendation.find("bucket"), std::string::npos) << e->recommendation;
  const HelpAnswer* a = find_help(p, "overlap-communication");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, Verdict::yes) << a->reason;
  EXPECT_NE(a->reason.find("the all-reduce is exposed 3.6 ms"), std::string::npos) << a->reason;
}

// DDP whose gradients are nearly all in one bucket: per step a 1 MiB bucket
// all-reduced beside the backward pass's compute, then (`split`: two equal
// 50 MiB buckets, else) one 100 MiB bucket launched the moment the last
// compute kernel ends, nothing beside it; then the fused optimizer's update.
Trace ddp_one_bucket_trace(bool split) {
  TraceFactory f;
  f.device(0);
  TimeNs t = 1 * ms;
  for (int s = 0; s < 6; ++s) {
    const TimeNs s0 = t;
    f.range("DistributedDataParallel.forward", s0 - 350 * us, s0 - 320 * us, 1, RangeKind::annotation,
            "user_annotation");
    for (int k = 0; k < 3; ++k) {
      f.kernel(0, 7, names::kConvTensorCore, t, t + 300 * us, s0 - 250 * us + k * 10 * us);
      if (k == 1) collective(f, t + 10 * us, 200 * us, sized(262'144));
      t += 300 * us;
    }
    if (split)
      for (int b = 0; b < 2; ++b, t += 1001 * us) collective(f, t, 1 * ms, sized(13'107'200));
    else
      collective(f, t, 2 * ms, sized(26'214'400)), t += 2001 * us;
    f.range("Optimizer.step#FusedAdam.step", t - 60 * us, t - 20 * us, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, "void multi_tensor_apply_kernel<TensorListMetadata<4>, FusedAdamMathFunctor<float, 4> >()", t,
             t + 300 * us, t - 50 * us);
    t += 301 * us;
    f.range("step " + std::to_string(s), s0 - 400 * us, t);
    t += 400 * us;
  }
  return f.build();
}

// DDP launches each bucket when its gradients are ready: with 99% of the
// bytes in one bucket, ready at the end of the backward pass, "launch each
// bucket as soon as it is ready" is done already; what splitting it saves
// the trace cannot tell, so the answer is unknown, the finding's saving
// leaves that bucket out, and its fix gives the buckets.
TEST(Collectives, DdpWithOneBucketAfterTheBackwardPassIsNotToldToOverlap) {
  const Profile p = analyze(ddp_one_bucket_trace(false));
  ASSERT_EQ(p.workload.data_parallel, "ddp") << p.workload.data_parallel_evidence;
  const std::optional<detail::DdpOneBucket> one = detail::ddp_one_bucket(p);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->sizes, (std::vector<std::uint64_t>{104'857'600, 1'048'576}));
  EXPECT_NEAR(one->share, 100.0 / 101.0, 1e-9);
  EXPECT_EQ(one->under_compute, 0.0);
  EXPECT_EQ(one->exposed_ns, 6 * 2 * ms);
  const std::string words =
      "99.0% of the bytes all-reduced per step are in one 100.0 MiB bucket (2 buckets per "
      "step, by the all-reduce calls seen at the same place in each step: 100.0 MiB, 1.0 MiB), "
      "with no compute kernel beside it";
  EXPECT_EQ(one->words().rfind(words, 0), 0u) << one->words();
  const HelpAnswer* a = find_help(p, "overlap-communication");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_NE(a->reason.find("already launches each bucket's all-reduce when its gradients are ready: " + words),
            std::string::npos)
      << a->reason;
  EXPECT_EQ(a->reason.find("launch each bucket's all-reduce as soon as"), std::string::npos) << a->reason;
  const Finding* e = testing::find_any_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_NE(e->recommendation.find("which launches each gradient bucket's all-reduce as soon as its gradients are "
                                   "ready: here " +
                                   words),
            std::string::npos)
      << e->recommendation;
  // Its saving leaves the bucket out: the rest is the small bucket's exposed
  // time (none: it runs beside compute).
  EXPECT_EQ(e->saving_ns, 0);
  EXPECT_NE(e->saving_note.find("what hiding that bucket's 12.0 ms would save is unknown"), std::string::npos)
      << e->saving_note;
  // The update cannot start per bucket: the one bucket holds its gradients.
  const Finding* u = testing::find_any_finding(p, "serialized-weight-update");
  ASSERT_TRUE(u) << testing::describe_findings(p);
  EXPECT_NE(
      u->recommendation.find("Updating each gradient bucket as its all-reduce completes gains little here: " + words),
      std::string::npos)
      << u->recommendation;
  EXPECT_EQ(u->recommendation.find("update each gradient bucket as soon as"), std::string::npos) << u->recommendation;

  // The same bytes in two equal buckets: no bucket holds most of them, and
  // the answer and the fix are as for any DDP run.
  const Profile q = analyze(ddp_one_bucket_trace(true));
  EXPECT_FALSE(detail::ddp_one_bucket(q));
  const HelpAnswer* b = find_help(q, "overlap-communication");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->reason.find("bytes all-reduced per step are in one"), std::string::npos) << b->reason;
  const Finding* g = testing::find_any_finding(q, "exposed-communication");
  ASSERT_TRUE(g) << testing::describe_findings(q);
  EXPECT_EQ(g->recommendation.rfind("This run already uses DDP (", 0), 0u) << g->recommendation;
  EXPECT_NE(g->recommendation.find("Tune the buckets"), std::string::npos) << g->recommendation;
}

// All-to-all as SendRecv kernels: the all-reduce question does not apply,
// and the fix is the all-to-all's.
TEST(Collectives, AllToAllIsNotAnAllReduce) {
  TraceFactory f;
  add_steps(f, 6, [&](int, TimeNs t) {
    collective(f, t, 400 * us, {names::kSendRecv, "nccl:all_to_all", "[[1024]]", "[\"long\"]"});
    return t + 401 * us;
  });
  const Profile p = analyze(f.build());
  const Finding* e = testing::find_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_NE(e->evidence.find("100% all_to_all"), std::string::npos) << e->evidence;
  EXPECT_NE(e->recommendation.find("all-to-all"), std::string::npos) << e->recommendation;
  const HelpAnswer* a = find_help(p, "overlap-communication");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, Verdict::not_applicable) << a->reason;
  EXPECT_NE(a->reason.find("no all-reduce in this trace"), std::string::npos) << a->reason;
}

// Two kinds, two fixes: an all-gather launched inside the optimizer's step
// (a sharded optimizer's own exchange, Shampoo's) beside a dominant
// all-to-all gets a fix of its own, not the all-to-all's nor FSDP's
// layer-by-layer prefetching; the same all-gather outside it gets the
// general all-gather fix.
TEST(Collectives, AnAllGatherInTheOptimizersStepGetsItsOwnFix) {
  auto run = [](bool in_optimizer) {
    TraceFactory f;
    add_steps(f, 6, [&](int, TimeNs t) {
      collective(f, t, 400 * us, {names::kSendRecv, "nccl:all_to_all", "[[1024]]", "[\"long\"]"});
      const TimeNs g = t + 401 * us;
      if (in_optimizer) f.cpu_op("Optimizer.step#Shampoo.step", g - 100 * us, g - 20 * us, "", "");
      collective(f, g, 300 * us,
                 {"ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "nccl:_all_gather_base",
                  "[[4096]]", "[\"float\"]"});
      return g + 301 * us;
    });
    return analyze(f.build());
  };
  const Profile p = run(true);
  const Finding* e = testing::find_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  ASSERT_FALSE(p.collective_summary.kinds.empty());
  EXPECT_EQ(p.collective_summary.kinds.front().kind, "all_to_all");
  EXPECT_NE(e->recommendation.find("Hide the all-to-all"), std::string::npos) << e->recommendation;
  EXPECT_NE(e->recommendation.find("The all_gather (43% of the exposed time) is launched inside the optimizer's step "
                                   "(Optimizer.step#Shampoo.step)"),
            std::string::npos)
      << e->recommendation;
  EXPECT_EQ(e->recommendation.find("FSDP"), std::string::npos) << e->recommendation;
  const Profile q = run(false);
  const Finding* h = testing::find_finding(q, "exposed-communication");
  ASSERT_TRUE(h) << testing::describe_findings(q);
  EXPECT_NE(h->recommendation.find("The all_gather holds 43% of the exposed time. Overlap the all-gathers"),
            std::string::npos)
      << h->recommendation;
  for (const CollectiveKind& k : q.collective_summary.kinds) EXPECT_EQ(k.optimizer_exposed_ns, 0) << k.kind;
}

// TorchRec's pipelined training (its phases named sparse_data_dist and
// wait_sparse_data_dist) already pipelines the input distribution: the fix
// of an exposed all-to-all is not to pipeline it.
TEST(Collectives, AllToAllOfAPipelinedInputIsNotToldToPipelineIt) {
  TraceFactory f;
  add_steps(f, 6, [&](int, TimeNs t) {
    f.range("## sparse_data_dist ##", t - 60 * us, t - 40 * us, 1, RangeKind::annotation, "user_annotation");
    f.range("## wait_sparse_data_dist ##", t - 30 * us, t - 20 * us, 1, RangeKind::annotation, "user_annotation");
    collective(f, t, 400 * us, {names::kSendRecv, "nccl:all_to_all", "[[1024]]", "[\"long\"]"});
    return t + 401 * us;
  });
  const Profile p = analyze(f.build());
  const Finding* e = testing::find_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_NE(e->recommendation.find("The input distribution is already pipelined"), std::string::npos)
      << e->recommendation;
  EXPECT_EQ(e->recommendation.find("pipeline the input distribution"), std::string::npos) << e->recommendation;
}

// Calls with neither a place in a step (no steps) nor a size (no
// annotation): a site of any size, anywhere, whose calls are not comparable,
// so no waiting is said of it however much they differ.
TEST(Collectives, ASiteWithoutPlaceOrSizeSaysNoWaiting) {
  TraceFactory f;
  f.device(0);
  for (int i = 0; i < 4; ++i) collective(f, (i + 1) * 10 * ms, (i ? 100 : 5000) * us, Coll{names::kSendRecv, nullptr});
  const Profile p = analyze(f.build());
  ASSERT_EQ(p.collective_sites.size(), 1u);
  EXPECT_EQ(p.collective_sites[0].ordinal, -1);
  EXPECT_EQ(p.collective_sites[0].bytes, 0u);
  EXPECT_EQ(p.collective_sites[0].wait_ns, 0);
  EXPECT_EQ(p.collective_summary.wait_ns, 0);
}

// Rank 1 of a 4-rank job: the 64 MiB all-reduce, the 2nd collective of each
// step, takes 1 ms in half the steps and 6 ms in the others (it waits for a
// late rank); the 1 MiB one before it is steady. With `steady`, the large
// one takes 3.5 ms every step (the same total): transfer.
Profile waiting_rank(bool steady) {
  TraceFactory f(1);
  f.meta().world_size = 4;
  add_steps(f, 10, [&](int step, TimeNs t) {
    collective(f, t, 100 * us, sized(262'144));
    t += 101 * us;
    const TimeNs d = steady ? 3500 * us : step % 2 ? 6 * ms : 1 * ms;
    collective(f, t, d, sized(16'777'216));
    return t + d + 1 * us;
  });
  return analyze(f.build());
}

TEST(Collectives, OneSiteThatWaitsInSomeStepsIsWaitingForAnotherRank) {
  const Profile p = waiting_rank(false);
  const Finding* e = testing::find_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_EQ(e->variant, "waiting");
  EXPECT_NE(e->title.find("likely waiting for another rank"), std::string::npos) << e->title;
  EXPECT_NE(e->evidence.find("Widest: all_reduce of 64.0 MiB (the 1st of its kind and size in each step, named by "
                             "nccl:all_reduce), fastest 1.0 ms, median 1.0 ms, longest 6.0 ms over 10 instances"),
            std::string::npos)
      << e->evidence;
  EXPECT_NE(e->recommendation.find("one rank of a 4-rank job"), std::string::npos) << e->recommendation;
  EXPECT_NE(e->recommendation.find("gpuscope report DIR"), std::string::npos) << e->recommendation;
  const CollectiveSummary& c = p.collective_summary;
  EXPECT_EQ(c.wait_ns, 5 * 5 * ms);
  EXPECT_EQ(c.widest.bytes, 64u << 20);
  const HelpAnswer* a = find_help(p, "overlap-communication");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_NE(a->reason.find("waits for another rank"), std::string::npos) << a->reason;
}

TEST(Collectives, SteadySitesAreTransfer) {
  const Profile p = waiting_rank(true);
  const Finding* e = testing::find_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_EQ(e->variant, "transfer");
  EXPECT_EQ(e->title.find("waiting"), std::string::npos) << e->title;
  EXPECT_EQ(p.collective_summary.wait_ns, 0);
  // 64 MiB in 3.5 ms and 1 MiB in 100 µs are faster than 100 MB/s: the
  // sizes prove no waiting either.
  EXPECT_EQ(p.collective_summary.size_wait_ns, 0);
  EXPECT_EQ(p.collective_summary.size_widest.durations.count, 0u);
  const HelpAnswer* a = find_help(p, "overlap-communication");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, Verdict::yes) << a->reason;
}

// A 3 KiB all-to-all that takes 30 ms in every step: its instances agree, so
// comparing the site with itself proves nothing, but 3 KiB needs 61 µs at
// 100 MB/s (slower than any link a GPU job runs on, 1 GbE included) plus
// 2 ms of latency: the rest is waiting, whatever the link. One that takes
// 2 ms is within the bound: no waiting said.
TEST(Collectives, MessageSizesProveWaitingWithoutASecondInstance) {
  for (const TimeNs d : {30 * ms, 2 * ms}) {
    TraceFactory f;
    add_steps(f, 6, [&](int, TimeNs t) {
      collective(f, t, d, {names::kSendRecv, "nccl:all_to_all", "[[768]]", "[\"float\"]"});
      return t + d + 1 * us;
    });
    const Profile p = analyze(f.build());
    const CollectiveSummary& c = p.collective_summary;
    EXPECT_EQ(c.wait_ns, 0);
    if (d == 2 * ms) {
      EXPECT_EQ(c.size_wait_ns, 0);
      continue;
    }
    EXPECT_EQ(c.size_wait_ns, 6 * (d - 3072 * 2 * 10 - 2 * ms));
    EXPECT_EQ(c.size_widest.bytes, 3072u);
    const Finding* e = testing::find_finding(p, "exposed-communication");
    ASSERT_TRUE(e) << testing::describe_findings(p);
    EXPECT_EQ(e->variant, "waiting");
    EXPECT_NE(e->evidence.find("at 100 MB/s, slower than any link"), std::string::npos) << e->evidence;
  }
}

// Rank 0 of an 8-rank job whose 16 MiB all-reduce takes `d` in every step
// after a 600 µs convolution: nothing to hide it under.
Profile steady_all_reduce(TimeNs d) {
  TraceFactory f(0);
  f.meta().world_size = 8;
  add_steps(f, 6, [&](int, TimeNs t) {
    collective(f, t, d, sized(4'194'304));
    return t + d + 1 * us;
  });
  return analyze(f.build());
}

// An all-reduce slow for its size: 16 MiB in 8.7 ms is 1.9 GB/s of
// algorithm bandwidth, 3.4 GB/s of bus bandwidth over 8 ranks, below any
// link between GPUs but Ethernet. Overlap cannot hide it: the finding says
// what to look for (a late rank, the transport), claims no saving and stays
// numbered; "overlap all-reduce?" is no. In 1 ms (29 GB/s of bus
// bandwidth) it is not slow.
TEST(Collectives, AnAllReduceSlowForItsSizeIsSaidSlowNotToOverlap) {
  const Profile p = steady_all_reduce(8700 * us);
  const Finding* e = testing::find_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_EQ(e->variant, "slow");
  EXPECT_EQ(e->saving_ns, 0);
  EXPECT_NE(e->evidence.find("3.4 GB/s of bus bandwidth over 8 ranks"), std::string::npos) << e->evidence;
  EXPECT_NE(e->recommendation.find("NCCL_DEBUG=INFO"), std::string::npos) << e->recommendation;
  const HelpAnswer* a = find_help(p, "overlap-communication");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_NE(a->reason.find("slow for its size"), std::string::npos) << a->reason;

  const Profile fast = steady_all_reduce(1 * ms);
  const Finding* g = testing::find_finding(fast, "exposed-communication");
  ASSERT_TRUE(g) << testing::describe_findings(fast);
  EXPECT_NE(g->variant, "slow");
  EXPECT_GT(g->saving_ns, 0);
}

// Rank 0 of an 8-rank job whose steps each run two all-reduces one after
// the other: {floats, duration} each.
Profile two_all_reduces(std::pair<std::uint64_t, TimeNs> a, std::pair<std::uint64_t, TimeNs> b) {
  TraceFactory f(0);
  f.meta().world_size = 8;
  add_steps(f, 6, [&](int, TimeNs t) {
    collective(f, t, a.second, sized(a.first));
    const TimeNs u = t + a.second + 1 * us;
    collective(f, u, b.second, sized(b.first));
    return u + b.second + 1 * us;
  });
  return analyze(f.build());
}

// A 16 MiB all-reduce in 9.0 ms beside a 64 MiB one in 8.9 ms: the
// larger one moves its bytes at 13.2 GB/s of bus bandwidth, so the link is not
// slow, and the time that does not grow with the size is a fixed cost (a
// wait, a per-call cost), not a slow transfer.
TEST(Collectives, AnAllReduceAsLongAsALargerOneIsNotSlowForItsSize) {
  const Profile p = two_all_reduces({4'194'304, 9000 * us}, {16'777'216, 8900 * us});
  const Finding* e = testing::find_any_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_NE(e->variant, "slow") << e->title;
  EXPECT_EQ(detail::rules::slow_all_reduce(p), "");
}

// A 16 MiB all-reduce in 8.7 ms beside a 4 MiB one in 6.7 ms: through the
// two, 6.0 ms of each call does not grow with its size, so the time is a
// cost each call pays (a rank late at every step, a per-call cost), not a
// slow link: the finding and "overlap all-reduce?" say so, with no saving.
TEST(Collectives, AnAllReduceWhoseTimeDoesNotGrowWithItsSizeIsAFixedCost) {
  const Profile p = two_all_reduces({1'048'576, 6700 * us}, {4'194'304, 8700 * us});
  EXPECT_EQ(detail::rules::slow_all_reduce(p), "");
  const std::string fixed = detail::rules::all_reduce_fixed_cost(p);
  EXPECT_NE(fixed.find("the 4.0 MiB all-reduce's fastest instance took 6.7 ms, 77% of the 16.0 MiB one's 8.7 ms for "
                       "25% of its bytes: about 6.0 ms of each call does not grow with its size"),
            std::string::npos)
      << fixed;
  const Finding* e = testing::find_finding(p, "exposed-communication");
  ASSERT_TRUE(e) << testing::describe_findings(p);
  EXPECT_EQ(e->variant, "fixed-cost") << e->title;
  EXPECT_EQ(e->saving_ns, 0);
  const HelpAnswer* a = find_help(p, "overlap-communication");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_NE(a->reason.find("a cost each call pays whatever its size"), std::string::npos) << a->reason;
  // Time that grows with the size (2 ms for the 4 MiB one): no such words.
  EXPECT_EQ(detail::rules::all_reduce_fixed_cost(two_all_reduces({1'048'576, 2000 * us}, {4'194'304, 8700 * us})), "");
}

// Gradients all-reduced a tensor at a time: 120 small all-reduces in each
// step are not DDP's 25 MB buckets; 20 are too few to say so.
TEST(Collectives, ManySmallAllReducesPerStepAreToldToBucket) {
  for (const int per_step : {120, 20}) {
    TraceFactory f;
    add_steps(f, 5, [&](int, TimeNs t) {
      for (int i = 0; i < per_step; ++i, t += 31 * us) collective(f, t, 30 * us, sized(1024));
      return t;
    });
    const Profile p = analyze(f.build());
    const Finding* e = testing::find_finding(p, "exposed-communication");
    ASSERT_TRUE(e) << testing::describe_findings(p);
    const bool told = e->recommendation.find("a tensor at a time (" + std::to_string(per_step) +
                                             " all-reduces in each step, median 30.0 µs, median message "
                                             "4.0 KiB)") != std::string::npos;
    EXPECT_EQ(told, per_step == 120) << e->recommendation;
  }
}

// Without sizes, 120 short all-reduces per step say latency only where they
// hold most of the time: beside 10 of 2 ms each (4x their time) they do not.
// Under DDP, 130 a step are not said to be its buckets, nor not to be.
TEST(Collectives, ManyShortAllReducesBesideLongOnesAreNotToldToBucket) {
  for (const bool long_ones : {false, true}) {
    TraceFactory f;
    add_steps(f, 5, [&](int, TimeNs t) {
      if (long_ones)
        f.range("DistributedDataParallel.forward", t - 300 * us, t - 250 * us, 1, RangeKind::annotation,
                "user_annotation");
      for (int i = 0; i < 120; ++i, t += 31 * us) collective(f, t, 30 * us, {});
      for (int i = 0; long_ones && i < 10; ++i, t += 2001 * us) collective(f, t, 2 * ms, {});
      return t;
    });
    const Profile p = analyze(f.build());
    const Finding* e = testing::find_any_finding(p, "exposed-communication");
    ASSERT_TRUE(e) << testing::describe_findings(p);
    const bool told = e->recommendation.find("a tensor at a time") != std::string::npos;
    EXPECT_EQ(told, !long_ones) << e->recommendation;
    if (!long_ones) continue;
    ASSERT_EQ(p.workload.data_parallel, "ddp");
    EXPECT_NE(e->recommendation.find("yet 130 all-reduces run in each step, far more than DDP's 25 MB buckets make"),
              std::string::npos)
        << e->recommendation;
    EXPECT_EQ(e->recommendation.find("which buckets gradients"), std::string::npos) << e->recommendation;
  }
}

// Gradients all-reduced one parameter at a time from inside a compiled
// backward, with no DistributedDataParallel.forward and no DDP reducer op:
// data parallel, not DDP's reducer. 40 large all-reduces a step, as many as
// the gradients zero_grad fills per call: the trace shows one all-reduce per
// parameter, unbucketed, and the fix is to bucket them, not DDP's hooks or
// no_sync(). With 60 fills a step the counts differ: no such words.
TEST(Collectives, OneAllReducePerParameterInACompiledBackwardIsToldToBucketNotDdp) {
  for (const int fills : {40, 60}) {
    SCOPED_TRACE(fills);
    TraceFactory f;
    add_steps(f, 5, [&](int, TimeNs t) {
      const TimeNs begin = t;
      for (int i = 0; i < 40; ++i, t += 201 * us) collective(f, t, 200 * us, sized(4'194'304));
      f.range("autograd::engine::evaluate_function: CompiledFunctionBackward", begin - 100 * us, t, 1,
              RangeKind::annotation, "cpu_op");
      f.range("Optimizer.zero_grad#SGD.zero_grad", t, t + fills * 10 * us, 1, RangeKind::annotation, "cpu_op");
      for (int i = 0; i < fills; ++i)
        f.kernel(0, 7, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >()",
                 t + 100 * us + i * 10 * us, t + 105 * us + i * 10 * us, t + i * 10 * us + 1 * us, 5 * us);
      return t + 400 * us + fills * 10 * us;  // the next step's range opens after zero_grad's
    });
    const Profile p = analyze(f.build());
    EXPECT_EQ(p.workload.data_parallel, "all-reduce") << p.workload.data_parallel_evidence;
    EXPECT_NE(p.workload.data_parallel_evidence.find("nccl:all_reduce inside autograd::engine::evaluate_function: "
                                                     "CompiledFunctionBackward"),
              std::string::npos)
        << p.workload.data_parallel_evidence;
    const Finding* e = testing::find_any_finding(p, "exposed-communication");
    ASSERT_TRUE(e) << testing::describe_findings(p);
    const bool told = e->recommendation.find(
                          "The trace shows one all-reduce per parameter, unbucketed (40 "
                          "all-reduces in each step, as many as the gradients "
                          "Optimizer.zero_grad#SGD.zero_grad fills per call (40)") != std::string::npos;
    EXPECT_EQ(told, fills == 40) << e->recommendation;

    EXPECT_EQ(e->recommendation.find("no_sync()"), std::string::npos) << e->recommendation;
    EXPECT_EQ(e->recommendation.find("already uses DDP"), std::string::npos) << e->recommendation;
  }
}

// Sites are per step only where steps exist: without them, the instances of
// one kind and size are one site.
TEST(Collectives, WithoutStepsOneSitePerKindAndSize) {
  TraceFactory f;
  f.device(0);
  for (int i = 0; i < 4; ++i) {
    const TimeNs t = 1 * ms + i * 2 * ms;
    collective(f, t, (i + 1) * 100 * us, sized(1024));
  }
  const Profile p = analyze(f.build());
  ASSERT_EQ(p.collective_sites.size(), 1u);
  EXPECT_EQ(p.collective_sites[0].ordinal, -1);
  EXPECT_EQ(p.collective_sites[0].durations.count, 4u);
  EXPECT_EQ(p.collective_sites[0].wait_ns, (0 + 100 + 200 + 300) * us);
}

}  // namespace
}  // namespace gpuscope
