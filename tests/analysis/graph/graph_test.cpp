// The dependency graph and its replay on hand-built traces: what each edge
// holds, that the replay gives back the trace, and that each change moves
// what it should move (and nothing else).
#include <gtest/gtest.h>

#include <string>

#include "analysis/graph/changes.h"
#include "analysis/graph/critical_path.h"
#include "analysis/graph/graph.h"
#include "analysis/graph/replay.h"
#include "analysis/graph/tiny_trace.h"
#include "analysis/graph/whatif.h"

namespace gpuscope::graph {
namespace {

using testing::TinyTrace;
constexpr TimeNs us(double v) { return static_cast<TimeNs>(v * 1000.0); }

NodeId node_named(const Trace& t, const Graph& g, const std::string& name) {
  for (NodeId n = 0; n < g.size(); ++n)
    if (node_name(t, g, n) == name) return n;
  ADD_FAILURE() << "no node " << name;
  return 0;
}

// Replays the graph and checks every node lands where the trace has it.
Timeline replay_exactly(const Graph& g) {
  ReplayInfo info;
  Timeline tl = replay(g, &info);
  EXPECT_EQ(info.cycles_broken, 0u);
  for (NodeId n = 0; n < g.size(); ++n) {
    EXPECT_EQ(tl.start[n], g.obs_start[n]) << "node " << n;
    EXPECT_EQ(tl.end[n], g.obs_end[n]) << "node " << n;
  }
  return tl;
}

Timeline changed(const Trace& t, const Graph& g, std::vector<Change> changes, Graph* out = nullptr) {
  std::vector<ChangeResult> results;
  Graph c = apply_changes(g, t, changes, &results);
  Timeline tl = replay(c);
  if (out) *out = std::move(c);
  return tl;
}

// Three kernels back to back on one stream, launched long before they run:
// the GPU is the bottleneck, each kernel follows the previous one.
TEST(Graph, RemovingAnOpPullsTheGpuBoundOnesAfterItForward) {
  TinyTrace b;
  b.kernel("k1", 0, 7, 10, 110, 0);
  b.kernel("k2", 0, 7, 111, 211, 3);
  b.kernel("k3", 0, 7, 213, 313, 6);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  EXPECT_FALSE(g.stream_order_only);
  replay_exactly(g);
  const Timeline p = changed(t, g, {parse_remove("/k2/")});
  const NodeId k1 = node_named(t, g, "k1"), k3 = node_named(t, g, "k3");
  // k3 keeps its own gap (2 µs after its predecessor), now after k1.
  EXPECT_EQ(p.start[k3], p.end[k1] + us(2));
  EXPECT_EQ(p.end[k3] - p.start[k3], us(100));
}

// A kernel name of 50,000 characters: std::regex recursed once per character
// and overflowed the stack (a segmentation fault); RE2 does not recurse.
TEST(Graph, ARegexOverAFiftyThousandCharacterNameMatchesWithoutCrashing) {
  TinyTrace b;
  const std::string long_name = std::string(50'000, 'x') + "gemm_k";
  b.kernel(long_name, 0, 7, 10, 110, 0);
  b.kernel("k2", 0, 7, 111, 211, 3);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  std::vector<ChangeResult> results;
  (void)apply_changes(g, t, std::vector<Change>{parse_remove("/.*gemm/")}, &results);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].matched, 1u);
}

// Kernels that wait for their launches: removing one does not move the next,
// which still waits for its own launch; making the first one long does.
TEST(Graph, LaunchBoundOpsWaitForTheirLaunch) {
  TinyTrace b;
  b.kernel("k1", 0, 7, 7, 17, 0, 5);
  b.kernel("k2", 0, 7, 107, 117, 100, 5);
  b.kernel("k3", 0, 7, 207, 217, 200, 5);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  replay_exactly(g);
  const NodeId k2 = node_named(t, g, "k2"), k3 = node_named(t, g, "k3");
  const Timeline removed = changed(t, g, {parse_remove("/k2/")});
  EXPECT_EQ(removed.start[k3], us(207 - 5));                        // only as much earlier as k2's launch call took
  const Timeline slower = changed(t, g, {parse_scale("/k1/=20")});  // k1 now ends at 207 µs
  EXPECT_GT(slower.start[k2], us(207));
  EXPECT_LT(slower.start[k2], us(207) + us(5));  // right after k1, with a back-to-back gap
}

// An op on another stream that starts the moment one on this stream ends
// waited for it (an event the trace does not show): it moves with it.
TEST(Graph, WaitsBetweenStreamsAreInferredFromTiming) {
  TinyTrace b;
  b.kernel("producer", 0, 7, 10, 110, 0);
  b.kernel("consumer", 0, 8, 110, 150, 2);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  EXPECT_EQ(g.stat("graph.inferred_waits"), 1u);
  replay_exactly(g);
  const Timeline p = changed(t, g, {parse_scale("/producer/=0.5")});
  EXPECT_EQ(p.start[node_named(t, g, "consumer")], us(60));
}

// A host sync ends when the op it waits for does (plus its return latency),
// and the calls after it follow.
TEST(Graph, HostSyncWaitsForTheStreamItSynchronises) {
  TinyTrace b;
  b.kernel("long", 0, 7, 10, 1010, 0);
  b.stream_sync(0, 7, 5, 1013);
  b.kernel("next", 0, 7, 1030, 1040, 1020);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  replay_exactly(g);
  const NodeId sync = node_named(t, g, "cudaStreamSynchronize");
  EXPECT_EQ(g.kind[sync], NodeKind::sync);
  const Timeline p = changed(t, g, {parse_scale("/long/=0.5")});
  EXPECT_EQ(p.end[sync], us(510) + us(3));
  EXPECT_EQ(p.start[node_named(t, g, "next")], us(510) + us(3) + us(7) + us(10));
  // Without the sync's wait, the CPU goes on at once.
  Graph c;
  const Timeline free = changed(t, g, {make_change(ChangeKind::no_host_sync)}, &c);
  EXPECT_LT(free.end[sync], us(20));
}

// A trace that begins with work already queued: the stream's first kernels
// have no launch in it. A sync at the start waits for them, so the path goes
// through their GPU time, not the sync's; a kernel without a launch that ran
// after the sync returned was not waited for (a thread the trace does not hold
// launched it).
TEST(Graph, ASyncWaitsForTheWorkQueuedBeforeTheTraceBegan) {
  TinyTrace b;
  b.call("cudaGetDevice", 0, 1);
  b.kernel("queued a", 0, 7, 2, 400);
  b.kernel("queued b", 0, 7, 401, 800);
  b.call("cudaDeviceSynchronize", 5, 803);
  b.kernel("late", 0, 8, 850, 870);  // launched by no recorded call, after the sync
  b.kernel("other", 0, 8, 880, 890, 815);
  b.kernel("next", 0, 7, 960, 1000, 820);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  const Timeline tl = replay_exactly(g);
  const NodeId sync = node_named(t, g, "cudaDeviceSynchronize");
  EXPECT_EQ(g.kind[sync], NodeKind::sync);
  const NodeId late = node_named(t, g, "late");
  for (std::uint32_t i = g.in_begin[sync]; i < g.in_begin[sync + 1]; ++i) EXPECT_NE(g.in[i].src, late);
  EXPECT_EQ(g.stat("graph.syncs_ending_before_op"), 0u);
  TimeNs by_kind[kPathKindCount] = {};
  for (const PathSegment& seg : trace_path(g, tl)) by_kind[static_cast<int>(seg.kind)] += seg.end - seg.start;
  EXPECT_LE(by_kind[static_cast<int>(PathKind::sync_wait)], us(3));      // the return only
  EXPECT_GE(by_kind[static_cast<int>(PathKind::gpu_compute)], us(798));  // both queued kernels
  // Halving the queued kernels lets the sync return sooner.
  const Timeline p = changed(t, g, {parse_scale("/queued/=0.5")});
  EXPECT_LT(p.end[sync], us(500));
}

// A stream idle before an op for longer than its typical gap, with nothing in
// the trace to explain it (the launch long before, no sync, no other stream):
// that wait is the path's, of unknown cause, not the op's time; the typical
// gap is the path's gap before a GPU op, not the op's time either.
TEST(Graph, AnUnexplainedGapOnTheGpuIsAWaitNotTheNextOpsTime) {
  TinyTrace b;
  for (int i = 0; i < 10; ++i) b.kernel("relu", 0, 7, 10 + 10 * i, 19 + 10 * i, 1 + 2 * i);  // typical gap: 1 µs
  b.kernel("after the wait", 0, 7, 600, 605, 25);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  const Timeline tl = replay_exactly(g);
  TimeNs wait = 0;
  const NodeId after = node_named(t, g, "after the wait");
  TimeNs after_own = 0, after_gap = 0;
  for (const PathSegment& seg : trace_path(g, tl)) {
    if (seg.kind == PathKind::gpu_wait) wait += seg.end - seg.start;
    if (seg.node == after && seg.kind == PathKind::gpu_compute) after_own += seg.end - seg.start;
    if (seg.node == after && seg.kind == PathKind::gpu_gap) after_gap += seg.end - seg.start;
  }
  EXPECT_EQ(wait, us(600) - us(109) - us(1));  // the gap less the typical one
  EXPECT_EQ(after_own, us(5));                 // its own time only
  EXPECT_EQ(after_gap, us(1));                 // the typical gap
  const PathSummary s = summarize_paths(t, g, tl);
  EXPECT_EQ(s.by_kind[static_cast<int>(PathKind::gpu_wait)], wait);
  ASSERT_FALSE(s.top.empty());
  EXPECT_EQ(s.top[0].name, "relu");  // the wait is no op's time
}

// A launch holds its op until it returned (and a launch's latency after): an
// op that started long after that, on an idle stream, waited for something
// the trace does not record, and the path says so instead of calling the wait
// launch overhead.
TEST(Graph, ALaunchHoldsItsOpOnlyUntilItReturned) {
  TinyTrace b;
  for (int i = 0; i < 10; ++i) b.kernel("relu", 0, 7, 10 + 10 * i, 19 + 10 * i, 8 + 10 * i);  // launch: 2 µs
  b.kernel("held", 0, 7, 1200, 1205, 150);  // launched at 150 µs, returned at 152 µs, ran at 1,200 µs
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  const Timeline tl = replay_exactly(g);
  const NodeId held = node_named(t, g, "held");
  TimeNs launch = 0, wait = 0;
  for (const PathSegment& seg : trace_path(g, tl)) {
    if (seg.node != held) continue;
    launch += seg.kind == PathKind::cpu_launch ? seg.end - seg.start : 0;
    wait += seg.kind == PathKind::gpu_wait ? seg.end - seg.start : 0;
  }
  EXPECT_EQ(launch, us(2) + us(30));  // the call, and 30 µs after it returned
  EXPECT_EQ(wait, us(1200) - us(182));
}

// The k-th communication kernel of each device is one collective: all end
// when the last one has started plus the transfer time.
TEST(Graph, CollectivesEndWhenTheLastDeviceArrives) {
  TinyTrace b;
  b.kernel("compute", 0, 7, 10, 110, 0, 2, 1);
  b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 22, 110, 250, 3, 2, 1);
  b.kernel("compute", 1, 7, 10, 210, 0, 2, 2);  // device 1 is twice as slow
  b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1, 22, 210, 250, 3, 2, 2);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  ASSERT_EQ(g.groups.size(), 1u);
  replay_exactly(g);
  const Timeline p = changed(t, g, {make_change(ChangeKind::balance_ranks)});
  // Median compute (the lower of two) is 100 µs: both reach the all-reduce at 110 µs.
  for (NodeId m : g.group_members) EXPECT_EQ(p.end[m], us(150));
}

TEST(Graph, WithoutCorrelationsOnlyStreamOrderIsLeft) {
  TinyTrace b;
  b.kernel("a", 0, 7, 10, 20);
  b.kernel("b", 0, 7, 25, 40);
  b.call("cudaLaunchKernel", 0, 2);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  EXPECT_TRUE(g.stream_order_only);
  EXPECT_EQ(g.stat("graph.ops_without_launch"), 2u);
  replay_exactly(g);
  const Timeline p = changed(t, g, {parse_remove("/^a$/")});
  EXPECT_EQ(p.start[node_named(t, g, "b")], us(15));  // b keeps the gap before it
}

// PyTorch's main thread hands backward to the autograd thread and waits for
// it: the other thread resumes right after, and moves with it.
TEST(Graph, ThreadHandoversAreInferredFromTiming) {
  TinyTrace b;
  b.call("cudaGetDevice", 0, 1, 2);  // the autograd thread exists from the start
  b.kernel("forward", 0, 7, 3010, 3020, 3000, 5, 1);
  b.kernel("backward", 0, 7, 3110, 3120, 3100, 5, 2);  // 3.1 ms idle, then 95 µs after thread 1's call
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  EXPECT_EQ(g.stat("graph.thread_handovers"), 1u);
  replay_exactly(g);
  // Data loading on thread 1 before its launch: removing it moves thread 2 too.
  TinyTrace b2;
  b2.call("cudaGetDevice", 0, 1, 2);
  b2.call("cudaGetDevice", 3000, 3001, 1);
  b2.range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 3010, 5990, 1);
  b2.kernel("forward", 0, 7, 6010, 6020, 6000, 5, 1);
  b2.kernel("backward", 0, 7, 6110, 6120, 6100, 5, 2);
  const Trace t2 = b2.freeze();
  const Graph g2 = build_graph(t2);
  replay_exactly(g2);
  const Timeline p = changed(t2, g2, {make_change(ChangeKind::no_input_wait)});
  EXPECT_LT(p.start[node_named(t2, g2, "backward")], us(3200));
}

TEST(Graph, InputCopiesStopHoldingComputeWithoutInputWait) {
  TinyTrace b;
  b.copy(0, 21, 10, 140, 0, 3);
  b.kernel("conv", 0, 7, 140, 240, 5);  // waited for the copy on the copy stream
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  replay_exactly(g);
  const Timeline p = changed(t, g, {make_change(ChangeKind::no_input_wait)});
  EXPECT_LT(p.start[node_named(t, g, "conv")], us(20));
}

TEST(Graph, CudaGraphsMakeLaunchesCheap) {
  TinyTrace b;
  for (int i = 0; i < 10; ++i) b.kernel("small", 0, 7, 20 * i + 12, 20 * i + 14, 20 * i, 10);
  b.range("step 1", 0, 200);
  b.range("step 2", 200, 201);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  replay_exactly(g);
  Graph c;
  const Timeline p = changed(t, g, {make_change(ChangeKind::cuda_graphs)}, &c);
  EXPECT_LT(span(p).duration(), span(observed(g)).duration() / 3);
}

// A CUDA graph replays the step's launches: the host time before the step's
// first launch (a harness's device synchronisation, profiler.step, Python
// before the first op) and after its last is outside it, and --cuda-graphs
// keeps it; the time between launches goes.
TEST(Graph, CudaGraphsKeepTheHostTimeBeforeTheFirstLaunch) {
  auto trace = [](double lead) {
    TinyTrace b;
    b.range("step 1", 0, 400 + lead);
    b.call("cudaDeviceSynchronize", 5, 10);
    for (int i = 0; i < 10; ++i) b.kernel("small", 0, 7, lead + 40 * i + 12, lead + 40 * i + 14, lead + 40 * i, 10);
    b.call("cudaGetDevice", lead + 390, lead + 391);
    b.range("step 2", 400 + lead, 401 + lead);
    return b.freeze();
  };
  const Trace late = trace(300), early = trace(20);
  const Graph g = build_graph(late), h = build_graph(early);
  replay_exactly(g);
  replay_exactly(h);
  const TimeNs with_lead = span(changed(late, g, {make_change(ChangeKind::cuda_graphs)})).duration();
  const TimeNs without = span(changed(early, h, {make_change(ChangeKind::cuda_graphs)})).duration();
  // The 280 µs more before the first launch stay; the 360 µs between the
  // launches go in both.
  EXPECT_GE(with_lead - without, us(270));
  EXPECT_LT(without, us(200));
}

// A host far ahead of a busy GPU fills the launch queue: once 1,024 ops of
// the stream are pending, each launch call returns only when an op ahead of
// it ends and frees a slot. That time is the GPU's, not the host's: halving
// the kernels halves the step in the replay. A launch that slow with the
// queue not full (a setup call) stays the host's.
TEST(Graph, ALaunchIntoAFullQueueWaitsForTheGpu) {
  auto trace = [](bool full) {
    TinyTrace b;
    constexpr int kOps = 3000, kQueue = 1024;
    double free_at = 0;  // when the host's previous call returned
    for (int i = 0; i < kOps; ++i) {
      const double start = 10 + 1000.0 * i, end = start + 999;
      // The first kQueue + 1 launches take 0.5 µs each; then each returns 1 µs after op i - kQueue ends.
      const double call = free_at + 0.5;
      const double returns = full && i > kQueue ? 10 + 1000.0 * (i - kQueue) + 999 + 1 : call + 0.5;
      b.kernel("k", 0, 7, start, end, call, returns - call);
      free_at = returns;
    }
    b.range("step 1", 0, 10 + 1000.0 * kOps + 10);
    b.range("step 2", 10 + 1000.0 * kOps + 10, 10 + 1000.0 * kOps + 11);
    return b.freeze();
  };
  for (const bool full : {true, false}) {
    const Trace t = trace(full);
    const Graph g = build_graph(t);
    replay_exactly(g);
    const TimeNs before = span(observed(g)).duration();
    const TimeNs after = span(changed(t, g, parse_changes("--scale /k/=0.5"))).duration();
    // Both ways the GPU decides the step: half the kernels, about half the step.
    EXPECT_LT(after, before * 6 / 10) << (full ? "full queue" : "free queue");
    EXPECT_EQ(g.stat("graph.full_queue_waits") > 0, full);
  }
}

// A launch call of a millisecond or more is one-off setup (the kernel's
// module loading on its first call): a CUDA graph does not take it out of the
// trace's step, so --cuda-graphs keeps its time (an MI250 trace whose one
// 6.5 ms hipLaunchKernel made the replay predict 7.8x).
TEST(Graph, CudaGraphsKeepASetupLaunchCall) {
  TinyTrace b;
  for (int i = 0; i < 10; ++i) b.kernel("small", 0, 7, 20 * i + 12, 20 * i + 14, 20 * i, 10);
  b.kernel("first call", 0, 7, 2210, 2212, 200, 2000);  // a 2 ms launch call
  b.range("step 1", 0, 2300);
  b.range("step 2", 2300, 2301);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  replay_exactly(g);
  const Timeline p = changed(t, g, {make_change(ChangeKind::cuda_graphs)});
  EXPECT_GE(span(p).duration(), us(2000));
  EXPECT_LT(span(p).duration(), span(observed(g)).duration());
}

// The host's time recording launches into a CUDA graph (BeginCapture to
// EndCapture) is one-time set-up, graphs or not: --cuda-graphs keeps it as
// recorded. The same calls under names that capture nothing are the
// step's host time between launches, which it removes.
TEST(Graph, CudaGraphsKeepTheCaptureOfAGraph) {
  auto trace = [](std::string_view begin, std::string_view end) {
    TinyTrace b;
    for (int i = 0; i < 10; ++i) b.kernel("small", 0, 7, 20 * i + 12, 20 * i + 14, 20 * i, 10);
    b.call(begin, 200, 201);
    for (int i = 0; i < 20; ++i) b.call("cudaLaunchKernel", 210 + 100 * i, 212 + 100 * i);  // recorded: run nothing
    b.call(end, 2200, 2201);
    b.kernel("after", 0, 7, 2222, 2224, 2210, 10);
    b.range("step 1", 0, 2300);
    b.range("step 2", 2300, 2301);
    return b.freeze();
  };
  const Trace captured = trace("cudaStreamBeginCapture", "cudaStreamEndCapture");
  const Graph g = build_graph(captured);
  ASSERT_EQ(g.setup.size(), 1u);
  EXPECT_EQ(g.setup[0].start, us(200));
  replay_exactly(g);
  EXPECT_GE(span(changed(captured, g, {make_change(ChangeKind::cuda_graphs)})).duration(), us(2000));
  const Trace plain = trace("cudaEventRecord", "cudaEventQuery");
  const Graph h = build_graph(plain);
  EXPECT_TRUE(h.setup.empty());
  replay_exactly(h);
  EXPECT_LT(span(changed(plain, h, {make_change(ChangeKind::cuda_graphs)})).duration(), us(1000));
}

TEST(Graph, ChangesThatMatchNothingAreErrors) {
  TinyTrace b;
  b.kernel("k", 0, 7, 10, 20, 0);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  auto fails = [&](const Change& c, const std::string& part) {
    try {
      apply_changes(g, t, std::vector<Change>{c}, nullptr);
      ADD_FAILURE() << c.text << " did not fail";
    } catch (const ChangeError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  fails(parse_remove("padding"), "--remove padding: matches no op");
  fails(parse_remove("/nothing/"), "--remove /nothing/");
  fails(make_change(ChangeKind::no_input_wait), "--no-input-wait");
  fails(make_change(ChangeKind::overlap_allreduce), "--overlap-allreduce");
  fails(make_change(ChangeKind::overlap_update), "--overlap-update");
  fails(make_change(ChangeKind::balance_ranks), "--balance-ranks");
  fails(make_change(ChangeKind::no_host_sync), "--no-host-sync");
}

TEST(Graph, BadChangesAreRefusedWithTheValidChoices) {
  try {
    parse_remove("paddding");
    ADD_FAILURE();
  } catch (const ChangeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown category 'paddding'"), std::string::npos) << m;
    EXPECT_NE(m.find("padding, broadcast, transpose"), std::string::npos) << m;
  }
  EXPECT_THROW(parse_scale("normalization"), ChangeError);
  EXPECT_THROW(parse_scale("normalization=-1"), ChangeError);
  EXPECT_THROW(parse_scale("normalization=x"), ChangeError);
  EXPECT_THROW(parse_remove("/(/"), ChangeError);
  EXPECT_THROW(parse_remove("//"), ChangeError);
  // A bad expression says what and where (RE2's message, the character).
  try {
    parse_remove("/gemm[/");
    ADD_FAILURE();
  } catch (const ChangeError& e) {
    EXPECT_NE(std::string(e.what()).find("--remove /gemm[/: not a regular expression: missing ]: [ (at character 5)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(parse_scale("normalization=0.5").factor, 0.5);
  EXPECT_EQ(parse_scale("/bn_fw/=2").pattern, "bn_fw");
}

// Steps from NVTX ranges: measured the way analysis measures them, and the
// critical path of each adds up to its length.
// A change that makes an op wait for one that waits for it: the replay has
// to break the cycle, and the what-if says its timeline is no prediction.
TEST(Graph, AChangeThatMakesACycleIsNotAPrediction) {
  const Trace t = testing::cyclic_allreduce_trace();
  const Graph g = build_graph(t);
  EXPECT_EQ(g.stat("graph.inferred_waits"),
            4u);  // each step: the all-reduce waited for conv_wgrad_a, conv_wgrad_b for it
  replay_exactly(g);
  const std::vector<Change> overlap{make_change(ChangeKind::overlap_allreduce)};
  const WhatIf w = what_if(t, g, overlap);
  EXPECT_FALSE(w.simulated);
  EXPECT_GT(w.predicted_cycles, 0u);
  EXPECT_NE(w.not_simulated.find("dependency cycle"), std::string::npos) << w.not_simulated;
  EXPECT_EQ(w.graph.cycles_broken, 0u);  // the measured graph has none
  // A change without a cycle is a prediction; each change alone is said too.
  const std::vector<Change> both{parse_scale("/wgrad_a/=0.5"), make_change(ChangeKind::overlap_allreduce)};
  const WhatIf s = what_if(t, g, std::vector<Change>{both[0]});
  EXPECT_TRUE(s.simulated) << s.not_simulated;
  EXPECT_LT(s.predicted.median, s.replayed.median);
  const WhatIf b = what_if(t, g, both);
  EXPECT_FALSE(b.simulated);
  ASSERT_EQ(b.each.size(), 2u);
  EXPECT_TRUE(b.each[0].simulated);
  EXPECT_EQ(b.each[0].predicted.median, s.predicted.median);
  EXPECT_FALSE(b.each[1].simulated);
}

TEST(Graph, StepsAndTheirCriticalPaths) {
  TinyTrace b;
  b.call("cudaGetDevice", 0, 1);
  for (int s = 0; s < 3; ++s) {
    const double t0 = 100 + 1000.0 * s;
    b.range("step " + std::to_string(s), t0, t0 + 50);
    b.kernel("conv", 0, 7, t0 + 10, t0 + 400, t0 + 1);
    b.kernel("bn", 0, 7, t0 + 401, t0 + 600, t0 + 4);
    b.stream_sync(0, 7, t0 + 8, t0 + 603);
  }
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  ASSERT_EQ(g.steps.size(), 3u);
  const Timeline tl = replay_exactly(g);
  const std::vector<TimeRange> steps = step_ranges(g, tl);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].duration(), us(600));  // from the range's start to its last op's end
    TimeNs sum = 0, gpu = 0, gap = 0;
    for (const PathSegment& seg : step_path(g, tl, steps, i)) {
      sum += seg.end - seg.start;
      if (seg.kind == PathKind::gpu_compute) gpu += seg.end - seg.start;
      if (seg.kind == PathKind::gpu_gap) gap += seg.end - seg.start;
    }
    EXPECT_EQ(sum, steps[i].duration());
    EXPECT_EQ(gpu, us(589));  // both kernels
    EXPECT_EQ(gap, us(1));    // and the gap between them
  }
  const PathSummary s = summarize_paths(t, g, tl);
  EXPECT_EQ(s.steps, 3u);
  ASSERT_FALSE(s.top.empty());
  EXPECT_EQ(s.top[0].name, "conv");
  EXPECT_EQ(s.top[0].count, 3u);
}

// A loop whose host loads each batch for 600 µs and then launches 495 µs of
// GPU work that ends 100 µs into the next load: each step's window ends with
// its kernel, yet the pace is the host's. The steps' paths are the run's one
// path cut at their bounds: the GPU work is on it only at the run's end, not
// in every step (its own walk back from each step's kernel would say so).
TEST(Graph, StepsWhosePaceTheHostSetsHaveTheHostOnTheirPaths) {
  TinyTrace b;
  b.call("cudaGetDevice", 0, 1);
  for (int s = 0; s < 4; ++s) {
    const double t0 = 100 + 1000.0 * s;
    b.range("step " + std::to_string(s), t0, t0 + 1000);
    b.range("load", t0, t0 + 600);
    b.kernel("conv", 0, 7, t0 + 605, t0 + 1100, t0 + 600);
  }
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  ASSERT_EQ(g.steps.size(), 4u);
  const Timeline tl = replay_exactly(g);
  const std::vector<TimeRange> steps = step_ranges(g, tl);
  const std::vector<std::vector<PathSegment>> paths = steps_paths(g, tl, steps, {0, 1, 2, 3});
  ASSERT_EQ(paths.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    TimeNs sum = 0, gpu = 0;
    for (const PathSegment& seg : paths[i]) {
      sum += seg.end - seg.start;
      if (seg.kind == PathKind::gpu_compute) gpu += seg.end - seg.start;
    }
    EXPECT_EQ(sum, steps[i].duration()) << i;
    if (i < 3)
      EXPECT_EQ(gpu, 0) << i;  // the next load does not wait for it
    else
      EXPECT_GE(gpu, us(490));  // the run ends with it
  }
  const PathSummary s = summarize_paths(t, g, tl);
  EXPECT_EQ(s.steps, 4u);
  ASSERT_FALSE(s.top.empty());
  EXPECT_EQ(s.top[0].count, 1u);  // the last step's conv only
  EXPECT_LT(s.by_kind[static_cast<int>(PathKind::gpu_compute)] * 3, s.length);
}

TEST(Graph, SlackIsZeroOnTheCriticalPathAndPositiveOffIt) {
  TinyTrace b;
  b.kernel("long", 0, 7, 10, 1010, 0);
  b.kernel("short", 0, 8, 10, 110, 2);
  const Trace t = b.freeze();
  const Graph g = build_graph(t);
  std::vector<std::uint32_t> order;
  const Timeline tl = replay(g, nullptr, &order);
  const std::vector<TimeNs> s = slack(g, tl, order);
  EXPECT_EQ(s[node_named(t, g, "long")], 0);
  EXPECT_EQ(s[node_named(t, g, "short")], us(900));
}

}  // namespace
}  // namespace gpuscope::graph
