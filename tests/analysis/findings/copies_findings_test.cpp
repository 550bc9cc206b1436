// Copies, blocking copies, idle gaps by cause and the optimizer's ops, on
// synthetic traces with planted problems: each rule fires on its planted
// case, says which case it found, advises by it, and stays silent on the
// case done right.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
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

bool has(const std::string& text, const char* words) { return text.find(words) != std::string::npos; }

const CopyGroup* group(const Profile& p, const char* direction, bool own_stream, const char* memory) {
  for (const CopyGroup& g : p.memcpys.groups)
    if (g.direction == direction && g.own_stream == own_stream && g.memory == memory) return &g;
  return nullptr;
}

// [SECTION] Copies by direction, stream and host memory ------------------------------------

TEST(CopyGroups, ByDirectionStreamAndHostMemory) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 4; ++s) {
    // A pinned input copy on copy stream 20 (no kernels there), a pageable one on compute stream 7.
    f.memcpy(0, 20, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 1 << 20, t, t + 100 * us);
    f.memcpy(0, 7, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, 2 << 20, t + 100 * us, t + 300 * us);
    f.kernel(0, 7, names::kConvTensorCore, t + 300 * us, t + 1300 * us, t);
    f.memcpy(0, 7, CopyKind::dtod, MemoryKind::device, MemoryKind::device, 4 << 20, t + 1300 * us, t + 1350 * us);
    f.memcpy(0, 7, CopyKind::ptop, MemoryKind::device, MemoryKind::device, 1 << 10, t + 1350 * us, t + 1360 * us);
    t += 2 * ms;
  }
  const Trace tr = f.build();
  const Profile p = analyze(tr);
  ASSERT_EQ(p.memcpys.groups.size(), 4u);
  const CopyGroup* pinned = group(p, "HtoD", true, "pinned");
  const CopyGroup* pageable = group(p, "HtoD", false, "pageable");
  const CopyGroup* dtod = group(p, "DtoD", false, "device");
  const CopyGroup* peer = group(p, "peer", false, "device");
  ASSERT_TRUE(pinned && pageable && dtod && peer);
  EXPECT_EQ(pinned->count, 4u);
  EXPECT_EQ(pinned->time_ns, 4 * 100 * us);
  EXPECT_EQ(pinned->bytes, 4u << 20);
  EXPECT_EQ(pinned->blocking, 0u);
  EXPECT_EQ(pageable->time_ns, 4 * 200 * us);
  EXPECT_EQ(pageable->blocking, 4u);  // pageable: the call waits for the queue
  EXPECT_EQ(dtod->time_ns, 4 * 50 * us);
  EXPECT_EQ(peer->count, 4u);
  EXPECT_EQ(p.memcpys.groups.front().direction, "HtoD");  // most time first
  EXPECT_FALSE(p.memcpys.groups.front().own_stream);
}

// [SECTION] Advice by the kind of copy -------------------------------------------------------

// Steps of a kernel and a copy with nothing alongside, the copy of the given kind.
// With `compiled` n, every n-th step's copy runs inside torch.compile's
// region (0: none); with `inference`, the whole run inside
// torch.inference_mode.
Trace copy_steps(std::uint32_t copy_stream, CopyKind kind, MemoryKind src, MemoryKind dst, bool pytorch = false,
                 int compiled = 0, bool inference = false) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  if (inference) f.range("torch.inference_mode", 0, 20 * ms, 1, RangeKind::annotation, "user_annotation");
  for (int s = 0; s < 10; ++s) {
    if (compiled && s % compiled == 0)
      f.range("Torch-Compiled Region: 0/0", t - 55 * us, t - 25 * us, 1, RangeKind::annotation, "cpu_op");
    if (pytorch) f.range("aten::copy_", t - 52 * us, t - 30 * us, 1, RangeKind::annotation, "cpu_op");
    f.memcpy(0, copy_stream, kind, src, dst, 8 << 20, t, t + 300 * us, "cudaMemcpyAsync", t - 50 * us);
    f.kernel(0, 7, names::kConvTensorCore, t + 301 * us, t + 1000 * us, t - 40 * us);
    f.range("step " + std::to_string(s), t - 60 * us, t + 1000 * us);
    t += 1001 * us;
  }
  return f.build();
}

TEST(CopyAdvice, DeviceToDeviceCopiesOnTheComputeStreamAreToBeRemoved) {
  const Trace t = copy_steps(7, CopyKind::dtod, MemoryKind::device, MemoryKind::device, true);
  const Profile p = analyze(t);
  ASSERT_EQ(p.workload.framework, "pytorch");
  const Finding* o = testing::find_finding(p, "low-memcpy-overlap");
  ASSERT_TRUE(o) << testing::describe_findings(p);
  EXPECT_TRUE(has(o->title, "DtoD on a compute stream")) << o->title;
  EXPECT_TRUE(has(o->recommendation, "Remove the copies")) << o->recommendation;
  EXPECT_TRUE(has(o->recommendation, "Pinned memory does not apply")) << o->recommendation;
  EXPECT_FALSE(has(o->recommendation, "pin_memory=True")) << o->recommendation;
  EXPECT_EQ(o->saving_ns, 10 * 300 * us);
  EXPECT_FALSE(testing::find_finding(p, "pageable-memcpy"));
  EXPECT_FALSE(testing::find_finding(p, "sync-memcpy"));  // async device copies do not block the host

  // Without framework ops, the advice speaks of CUDA, not of PyTorch's calls.
  const Profile q = analyze(copy_steps(7, CopyKind::dtod, MemoryKind::device, MemoryKind::device));
  const Finding* c = testing::find_finding(q, "low-memcpy-overlap");
  ASSERT_TRUE(c) << testing::describe_findings(q);
  EXPECT_TRUE(has(c->recommendation, "Pinned memory does not apply")) << c->recommendation;
  EXPECT_FALSE(has(c->recommendation, "clone()")) << c->recommendation;
  EXPECT_FALSE(has(c->recommendation, "torch.compile")) << c->recommendation;
}

// The same copies made inside torch.compile's compiled region: the compiler
// made them, so the advice is not to remove the model's clone() calls.
TEST(CopyAdvice, DeviceToDeviceCopiesInsideACompiledRegionAreTheCompilers) {
  const Profile p = analyze(copy_steps(7, CopyKind::dtod, MemoryKind::device, MemoryKind::device, true, 1));
  ASSERT_EQ(p.workload.execution, "compiled") << p.workload.execution_evidence;
  const CopyGroup& g = p.memcpys.groups.front();
  EXPECT_EQ(g.direction, "DtoD");
  EXPECT_EQ(g.compiled, 10u);
  EXPECT_EQ(p.workload.compiled_copies, 10u);
  const Finding* o = testing::find_finding(p, "low-memcpy-overlap");
  ASSERT_TRUE(o) << testing::describe_findings(p);
  EXPECT_TRUE(has(o->recommendation, "10 copies of these 10 were launched inside torch.compile's compiled regions"))
      << o->recommendation;
  // No graph is launched: not a graph replay's input copies.
  ASSERT_EQ(p.workload.graph_launches, 0u);
  EXPECT_TRUE(has(o->recommendation, "No CUDA graph is launched in this trace, so they are not a graph replay's"))
      << o->recommendation;
  EXPECT_FALSE(has(o->recommendation, "mark_static_address")) << o->recommendation;
  EXPECT_FALSE(has(o->recommendation, "Remove the copies")) << o->recommendation;
  // Outside the region (the test above): none is the compiler's.
  EXPECT_EQ(analyze(copy_steps(7, CopyKind::dtod, MemoryKind::device, MemoryKind::device, true))
                .memcpys.groups.front()
                .compiled,
            0u);
  // A run that compiles part of itself, most copies outside: compiling is
  // not news, the eager part is.
  const Profile q = analyze(copy_steps(7, CopyKind::dtod, MemoryKind::device, MemoryKind::device, true, 3));
  ASSERT_EQ(q.workload.execution, "compiled") << q.workload.execution_evidence;
  const Finding* r = testing::find_finding(q, "low-memcpy-overlap");
  ASSERT_TRUE(r) << testing::describe_findings(q);
  EXPECT_TRUE(has(r->recommendation, "6 copies of these 10 ran outside the compiled regions") &&
              !has(r->recommendation, "torch.compile fuses"))
      << r->recommendation;
}

// Device-to-device copies launched inside autograd's AccumulateGrad are the
// gradient accumulation's (under DDP, most likely its copy of each gradient
// into its bucket): not the model's clone() calls, and no compiling of the
// forward removes them.
TEST(CopyAdvice, CopiesInsideGradientAccumulationAreAutogradsNotTheModels) {
  for (const bool ddp : {false, true}) {
    SCOPED_TRACE(ddp);
    TraceFactory f;
    TimeNs t = 1 * ms;
    for (int s = 0; s < 10; ++s) {
      if (ddp)
        f.range("DistributedDataParallel.forward", t - 90 * us, t - 70 * us, 1, RangeKind::annotation,
                "user_annotation");
      f.range("torch::autograd::AccumulateGrad", t - 55 * us, t - 25 * us, 1, RangeKind::annotation, "cpu_op");
      f.range("aten::copy_", t - 52 * us, t - 30 * us, 1, RangeKind::annotation, "cpu_op");
      f.memcpy(0, 7, CopyKind::dtod, MemoryKind::device, MemoryKind::device, 8 << 20, t, t + 300 * us,
               "cudaMemcpyAsync", t - 50 * us);
      f.kernel(0, 7, names::kConvTensorCore, t + 301 * us, t + 1000 * us, t - 20 * us);
      f.range("step " + std::to_string(s), t - 100 * us, t + 1000 * us);
      t += 1001 * us;
    }
    const Profile p = analyze(f.build());
    EXPECT_EQ(p.memcpys.groups.front().gradient, 10u);
    const Finding* o = testing::find_finding(p, "low-memcpy-overlap");
    ASSERT_TRUE(o) << testing::describe_findings(p);
    EXPECT_TRUE(has(o->recommendation, "10 copies of these 10 were launched inside autograd's AccumulateGrad"))
        << o->recommendation;
    EXPECT_EQ(has(o->recommendation, "gradient_as_bucket_view=True"), ddp) << o->recommendation;
    EXPECT_FALSE(has(o->recommendation, "Remove the copies")) << o->recommendation;
  }
}

// The fix named for the gradient accumulation's copies removes those only:
// the saving is their time with no kernel beside them, and the other copies
// of the kind, launched elsewhere, are said with no fix the trace backs.
TEST(CopyAdvice, TheGradientCopiesFixSavesTheirTimeOnly) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 10; ++s) {
    f.range("DistributedDataParallel.forward", t - 95 * us, t - 90 * us, 1, RangeKind::annotation, "user_annotation");
    f.range("torch::autograd::AccumulateGrad", t - 55 * us, t - 25 * us, 1, RangeKind::annotation, "cpu_op");
    f.range("aten::copy_", t - 52 * us, t - 30 * us, 1, RangeKind::annotation, "cpu_op");
    f.memcpy(0, 7, CopyKind::dtod, MemoryKind::device, MemoryKind::device, 8 << 20, t, t + 300 * us, "cudaMemcpyAsync",
             t - 50 * us);
    f.range("aten::clone", t - 20 * us, t - 10 * us, 1, RangeKind::annotation, "cpu_op");
    f.memcpy(0, 7, CopyKind::dtod, MemoryKind::device, MemoryKind::device, 4 << 20, t + 301 * us, t + 501 * us,
             "cudaMemcpyAsync", t - 15 * us);
    f.kernel(0, 7, names::kConvTensorCore, t + 502 * us, t + 1200 * us, t - 5 * us);
    f.range("step " + std::to_string(s), t - 100 * us, t + 1200 * us);
    t += 1201 * us;
  }
  const Profile p = analyze(f.build());
  const CopyGroup& g = p.memcpys.groups.front();
  EXPECT_EQ(g.gradient, 10u);
  EXPECT_EQ(g.gradient_bytes, 10u * (8 << 20));
  EXPECT_EQ(g.exposed_ns, 10 * 500 * us);
  EXPECT_EQ(g.gradient_exposed_ns, 10 * 300 * us);
  const Finding* o = testing::find_finding(p, "low-memcpy-overlap");
  ASSERT_TRUE(o) << testing::describe_findings(p);
  EXPECT_TRUE(has(o->recommendation, "gradient_as_bucket_view=True")) << o->recommendation;
  EXPECT_EQ(o->saving_ns, 10 * 300 * us);
  EXPECT_TRUE(has(o->saving_note, "what the fixes named remove")) << o->saving_note;
  EXPECT_TRUE(has(o->recommendation,
                  "The other 10 copies of this kind (40.0 MiB, 2.0 ms with no kernel beside "
                  "them) were launched elsewhere: where they come from, and so their fix, the "
                  "trace does not show."))
      << o->recommendation;
}

// Under DDP the copies it makes itself: the all-reduced buckets copied back
// into the gradients (copy_bucket_to_grad: gradient_as_bucket_view=True) and
// the module's buffers broadcast at each forward (copies directly under a
// DistributedDataParallel.forward that broadcasts: broadcast_buffers=False).
// Copies queued before the recording have no launch: said as unknown, in no
// majority.
TraceFactory ddp_steps(bool broadcast) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int i = 0; i < 4; ++i)
    f.memcpy(0, 7, CopyKind::dtod, MemoryKind::device, MemoryKind::device, 1 << 20, 100 * us + i * 200 * us,
             200 * us + i * 200 * us, "cudaMemcpyAsync", TraceFactory::kNoLaunch);
  for (int s = 0; s < 10; ++s) {
    f.range("DistributedDataParallel.forward", t - 95 * us, t - 60 * us, 1, RangeKind::annotation, "cpu_op");
    f.range(broadcast ? "aten::copy_" : "aten::cat", t - 90 * us, t - 80 * us, 1, RangeKind::annotation, "cpu_op");
    f.memcpy(0, 7, CopyKind::dtod, MemoryKind::device, MemoryKind::device, 1 << 20, t, t + 100 * us, "cudaMemcpyAsync",
             t - 85 * us);
    if (broadcast) f.range("c10d::broadcast_", t - 75 * us, t - 65 * us, 1, RangeKind::annotation, "cpu_op");
    f.range("torch.distributed.ddp.reducer::copy_bucket_to_grad", t - 55 * us, t - 25 * us, 1, RangeKind::annotation,
            "cpu_op");
    f.range("aten::copy_", t - 52 * us, t - 30 * us, 1, RangeKind::annotation, "cpu_op");
    f.memcpy(0, 7, CopyKind::dtod, MemoryKind::device, MemoryKind::device, 8 << 20, t + 101 * us, t + 401 * us,
             "cudaMemcpyAsync", t - 50 * us);
    f.kernel(0, 7, names::kConvTensorCore, t + 402 * us, t + 1200 * us, t - 5 * us);
    f.range("step " + std::to_string(s), t - 100 * us, t + 1200 * us);
    t += 1201 * us;
  }
  return f;
}

TEST(CopyAdvice, DdpsOwnCopiesAreToldDdpsSwitches) {
  const Profile p = analyze(ddp_steps(true).build());
  const CopyGroup& g = p.memcpys.groups.front();
  EXPECT_EQ(g.gradient, 10u);
  EXPECT_EQ(g.buffers, 10u);
  EXPECT_EQ(g.ddp_forward, 0u);
  EXPECT_EQ(g.unlaunched, 4u);
  EXPECT_EQ(g.buffers_exposed_ns, 10 * 100 * us);
  const Finding* o = testing::find_finding(p, "low-memcpy-overlap");
  ASSERT_TRUE(o) << testing::describe_findings(p);
  EXPECT_TRUE(has(o->recommendation, "gradient_as_bucket_view=True")) << o->recommendation;
  EXPECT_TRUE(has(o->recommendation,
                  "10 copies were launched by ops directly under a DistributedDataParallel.forward that also "
                  "broadcasts: DDP's broadcast of the module's buffers"))
      << o->recommendation;
  EXPECT_TRUE(has(o->recommendation, "broadcast_buffers=False")) << o->recommendation;
  EXPECT_TRUE(has(o->recommendation, "4 copies were queued before the recording began")) << o->recommendation;
  EXPECT_FALSE(has(o->recommendation, "torch.compile")) << o->recommendation;
  EXPECT_EQ(o->saving_ns, 10 * 400 * us);
}

// Copies launched directly under a DistributedDataParallel.forward that
// broadcasts nothing are not DDP's buffer sync (the trace would show its
// broadcast): named by the op that launched them, with no
// broadcast_buffers advice and no share of the saving.
TEST(CopyAdvice, CopiesUnderADdpForwardWithoutABroadcastAreNotItsBufferSync) {
  const Profile p = analyze(ddp_steps(false).build());
  const CopyGroup& g = p.memcpys.groups.front();
  EXPECT_EQ(g.gradient, 10u);
  EXPECT_EQ(g.buffers, 0u);
  EXPECT_EQ(g.ddp_forward, 10u);
  EXPECT_EQ(g.ddp_forward_bytes, 10u << 20);
  EXPECT_EQ(g.ddp_forward_op, "aten::cat");
  EXPECT_EQ(g.ddp_forward_op_count, 10u);
  const Finding* o = testing::find_finding(p, "low-memcpy-overlap");
  ASSERT_TRUE(o) << testing::describe_findings(p);
  EXPECT_TRUE(has(o->recommendation, "gradient_as_bucket_view=True")) << o->recommendation;
  EXPECT_TRUE(has(o->recommendation,
                  "10 copies (10.0 MiB) were launched by aten::cat directly under DistributedDataParallel.forward, "
                  "which broadcasts nothing here: not DDP's buffer sync"))
      << o->recommendation;
  EXPECT_FALSE(has(o->recommendation, "broadcast_buffers")) << o->recommendation;
  EXPECT_EQ(o->saving_ns, 10 * 300 * us);
}

TEST(CopyAdvice, PinnedInputCopiesOnTheirOwnStreamAreDoneRight) {
  const Trace right = copy_steps(20, CopyKind::htod, MemoryKind::pinned, MemoryKind::device);
  const Profile p = analyze(right);
  EXPECT_FALSE(testing::find_finding(p, "low-memcpy-overlap")) << testing::describe_findings(p);
  EXPECT_FALSE(testing::find_finding(p, "pageable-memcpy"));
  EXPECT_FALSE(testing::find_finding(p, "sync-memcpy"));
  EXPECT_EQ(p.memcpys.synchronous, 0u);

  // The same copies on the compute stream: kernels wait for them; a copy stream is the fix.
  const Trace compute = copy_steps(7, CopyKind::htod, MemoryKind::pinned, MemoryKind::device);
  const Profile q = analyze(compute);
  const Finding* o = testing::find_finding(q, "low-memcpy-overlap");
  ASSERT_TRUE(o) << testing::describe_findings(q);
  EXPECT_TRUE(has(o->title, "HtoD from pinned memory on a compute stream")) << o->title;
  EXPECT_TRUE(has(o->recommendation, "dedicated copy stream")) << o->recommendation;
}

TEST(CopyAdvice, PageableCopiesAreAdvisedByDirection) {
  const Trace in = copy_steps(7, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, true);
  const Profile p = analyze(in);
  const Finding* g = testing::find_finding(p, "pageable-memcpy");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_TRUE(has(g->title, "mostly HtoD from pageable memory")) << g->title;
  EXPECT_TRUE(has(g->recommendation, "pin_memory=True")) << g->recommendation;
  // No DataLoader in the trace: pinning the tensor is the fix, a DataLoader
  // only where one makes it, and no batches of a loop the trace lacks.
  EXPECT_TRUE(has(g->recommendation, "fill a pinned buffer that is reused")) << g->recommendation;
  EXPECT_FALSE(has(g->recommendation, "batch i+1")) << g->recommendation;

  const Trace out = copy_steps(7, CopyKind::dtoh, MemoryKind::device, MemoryKind::pageable, true);
  const Profile q = analyze(out);
  const Finding* h = testing::find_finding(q, "pageable-memcpy");
  ASSERT_TRUE(h) << testing::describe_findings(q);
  EXPECT_TRUE(has(h->title, "mostly DtoH to pageable memory")) << h->title;
  EXPECT_TRUE(has(h->recommendation, "Copy into pinned host memory")) << h->recommendation;
  EXPECT_FALSE(has(h->recommendation, "DataLoader")) << h->recommendation;

  // A program without framework ops (a CUDA, OpenACC or MPI code) is told the
  // CUDA calls, not PyTorch's.
  for (const auto& [kind, src, dst] : {std::tuple{CopyKind::htod, MemoryKind::pageable, MemoryKind::device},
                                       std::tuple{CopyKind::dtoh, MemoryKind::device, MemoryKind::pageable}}) {
    const Profile c = analyze(copy_steps(7, kind, src, dst));
    const Finding* x = testing::find_finding(c, "pageable-memcpy");
    ASSERT_TRUE(x) << testing::describe_findings(c);
    EXPECT_TRUE(has(x->recommendation, "cudaMallocHost")) << x->recommendation;
    EXPECT_FALSE(has(x->recommendation, "pin_memory")) << x->recommendation;
    EXPECT_FALSE(has(x->recommendation, ".item()")) << x->recommendation;
  }
}

// What pinning saves is measured where the trace has pinned copies of the
// same direction: ten 8 MiB pageable copies at 8 GB/s (1.05 ms each) beside
// ten pinned ones at 16 GB/s save the time beyond 16 GB/s, half of theirs
// here; without pinned copies to measure by, half stays a rule of thumb and
// says the copies' own rate, against the buses'.
TEST(CopyAdvice, PinningSavesWhatThePinnedCopiesOfTheTraceShow) {
  for (const bool pinned : {true, false}) {
    TraceFactory f;
    TimeNs t = 1 * ms;
    const std::uint64_t bytes = 8u << 20;
    const TimeNs slow = static_cast<TimeNs>(double(bytes) / 8.0), fast = static_cast<TimeNs>(double(bytes) / 16.0);
    for (int i = 0; i < 10; ++i) {
      // Queued well ahead (its call returned 95 µs before it began): no staging wait.
      f.memcpy(0, 7, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, bytes, t, t + slow, "cudaMemcpyAsync",
               t - 100 * us);
      t += slow + 10 * us;
      if (pinned) f.memcpy(0, 7, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, bytes, t, t + fast);
      t += fast + 10 * us;
      f.kernel(0, 7, names::kConvTensorCore, t, t + 2 * ms, t - 5 * us);
      t += 2 * ms + 10 * us;
    }
    const Profile p = analyze(f.build());
    const Finding* g = testing::find_finding(p, "pageable-memcpy");
    ASSERT_TRUE(g) << testing::describe_findings(p);
    for (const IdleCharge& c : p.idle_charges) EXPECT_NE(c.cause, "pageable-staging");
    EXPECT_NEAR(double(g->saving_ns), 10.0 * double(slow) / 2, 10.0 * 1000) << g->recommendation;
    if (pinned) {
      EXPECT_TRUE(has(g->recommendation, "beyond the same bytes at the 16.0 GB/s this trace's pinned copies"))
          << g->recommendation;
    } else {
      EXPECT_TRUE(has(g->recommendation, "half the copy time, a rule of thumb")) << g->recommendation;
      EXPECT_TRUE(has(g->recommendation, "These ran at 8.00 GB/s")) << g->recommendation;
    }
  }
}

// An inference run needs its outputs: its read-backs are not told to happen
// every N steps (that is a training loop's metrics), but to wait later.
TEST(CopyAdvice, AnInferenceRunIsNotToldToReadItsOutputsLessOften) {
  const Profile p = analyze(copy_steps(7, CopyKind::dtoh, MemoryKind::device, MemoryKind::pageable, true, false, true));
  ASSERT_EQ(p.workload.phase, "inference") << p.workload.phase_evidence;
  const Finding* h = testing::find_finding(p, "pageable-memcpy");
  ASSERT_TRUE(h) << testing::describe_findings(p);
  const std::string& fix = h->recommendation;
  EXPECT_TRUE(has(fix, "Copy into pinned host memory") && has(fix, "before the host waits for these outputs") &&
              !has(fix, "every N steps") && !has(fix, "print(loss)"))
      << fix;
}

// [SECTION] Copies that block the host are synchronizations ------------------------------

// Steps of an 800 µs kernel and a device-to-host copy of the result (4
// bytes, or `bytes`) whose call starts with the kernel; the next kernel is
// launched 300 µs (or `after`) after the call returns. `blocking`: the call
// lasts until the copy is done (a pageable copy, or .item()); else it
// returns at once.
Trace read_back_steps(MemoryKind host, bool blocking, bool in_item, std::uint64_t bytes = 4, TimeNs after = 300'000) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 10; ++s) {
    f.kernel(0, 7, names::kConvTensorCore, t, t + 800 * us, t - 20 * us);
    const TimeNs call_end = blocking ? t + 810 * us : t + 5 * us;
    if (in_item)
      f.range("aten::_local_scalar_dense", t - 2 * us, call_end + 1 * us, 1, RangeKind::annotation, "cpu_op");
    f.memcpy(0, 7, CopyKind::dtoh, MemoryKind::device, host, bytes, t + 800 * us, t + 805 * us, "cudaMemcpyAsync", t,
             call_end - t);
    const TimeNs next = (blocking ? call_end : t + 805 * us) + after;
    f.kernel(0, 7, names::kRelu, next, next + 100 * us, next - 10 * us);
    t = next + 101 * us;
  }
  return f.build();
}

TEST(BlockingCopies, APageableCopyIsChargedAsAHostSync) {
  const Trace tr = read_back_steps(MemoryKind::pageable, true, false);
  const Profile p = analyze(tr);
  EXPECT_EQ(p.memcpys.synchronous, 10u);
  EXPECT_EQ(p.memcpys.synchronous_ns, 10 * 810 * us);
  EXPECT_EQ(p.syncs.copies, 10u);
  EXPECT_EQ(p.syncs.copy_ns, 10 * 810 * us);
  EXPECT_EQ(p.syncs.gpu_idle_after_copies_ns,
            10 * 305 * us);  // from the copy's end (the call still blocked) to the next kernel
  EXPECT_EQ(p.syncs.gpu_idle_after_ns, 10 * 305 * us);
  EXPECT_EQ(p.syncs.count, 0u);
  const Finding* s = testing::find_finding(p, "sync-memcpy");
  ASSERT_TRUE(s) << testing::describe_findings(p);
  // Rated by host time blocked + GPU idle after, not by the copies' 5 µs each.
  EXPECT_NEAR(s->metric, double(10 * (810 + 305) * us) / double(p.devices[0].span_ns), 1e-9);
  EXPECT_EQ(s->saving_ns, 10 * 305 * us);
  EXPECT_TRUE(has(s->title, "DtoH to pageable memory")) << s->title;
  EXPECT_TRUE(has(s->recommendation, ".item()")) << s->recommendation;  // a small read-back
  // The idle after the copies is sync-memcpy's: host-sync (no sync calls) stays silent.
  EXPECT_FALSE(testing::find_finding(p, "host-sync"));
}

// A read-back of results (4 MiB) followed by 2 ms of host work, longer than
// the 810 µs the copy held the host: that work most likely uses the results,
// so the gap is the host's (a late launch), not the copy's. Followed by 300
// µs, or a 4-byte value read back and 2 ms of work, the copy is charged.
TEST(BlockingCopies, AReadBackOfResultsTheHostThenWorksOnIsNotChargedTheGap) {
  const Profile p = analyze(read_back_steps(MemoryKind::pageable, true, false, 4 << 20, 2 * ms));
  EXPECT_EQ(p.syncs.copies, 10u);
  EXPECT_EQ(p.syncs.gpu_idle_after_copies_ns, 0);
  EXPECT_EQ(p.syncs.readback_gaps, 10u);
  const Finding* s = testing::find_any_finding(p, "sync-memcpy");
  ASSERT_TRUE(s) << testing::describe_findings(p);
  EXPECT_EQ(s->saving_ns, 0);
  EXPECT_TRUE(has(s->title,
                  "is charged to the host's work that follows, which most likely uses the results read "
                  "back"))
      << s->title;
  EXPECT_TRUE(has(s->evidence, "Not charged: 10 gaps after a read-back of results")) << s->evidence;
  EXPECT_EQ(analyze(read_back_steps(MemoryKind::pageable, true, false, 4 << 20)).syncs.gpu_idle_after_copies_ns,
            10 * 305 * us);
  const Profile scalar = analyze(read_back_steps(MemoryKind::pageable, true, false, 4, 2 * ms));
  EXPECT_EQ(scalar.syncs.readback_gaps, 0u);
  EXPECT_EQ(scalar.syncs.gpu_idle_after_copies_ns, 10 * 810 * us);
}

TEST(BlockingCopies, ItemReadsBackAsAHostSync) {
  const Trace item = read_back_steps(MemoryKind::pinned, true, true);
  const Profile p = analyze(item);
  EXPECT_EQ(p.memcpys.synchronous, 10u);
  EXPECT_EQ(p.syncs.gpu_idle_after_copies_ns, 10 * 305 * us);
  ASSERT_TRUE(testing::find_finding(p, "sync-memcpy")) << testing::describe_findings(p);

  // The same pinned copy outside .item(), asynchronous: nothing blocks.
  const Trace async = read_back_steps(MemoryKind::pinned, false, false);
  const Profile q = analyze(async);
  EXPECT_EQ(q.memcpys.synchronous, 0u);
  EXPECT_EQ(q.syncs.copies, 0u);
  EXPECT_EQ(q.syncs.gpu_idle_after_ns, 0);
  EXPECT_FALSE(testing::find_finding(q, "sync-memcpy")) << testing::describe_findings(q);
}

// [SECTION] The driver's staging of pageable copies ------------------------------------

// Ten steps of a 1 ms kernel, then a 4 MiB host-to-device copy from `host`
// memory, then the next kernel queued at once. The copy's call begins
// `call_at` after the kernel ends (negative: while it runs) and its copy
// 200 µs after the kernel ends: pageable, the driver stages the bytes first.
Trace staged_copies(MemoryKind host, TimeNs call_at) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 10; ++s) {
    f.kernel(0, 7, names::kConvTensorCore, t, t + 1 * ms, t - 20 * us);
    const TimeNs end = t + 1 * ms;
    f.memcpy(0, 7, CopyKind::htod, host, MemoryKind::device, 4 << 20, end + 200 * us, end + 500 * us, "cudaMemcpy",
             end + call_at, 200 * us - call_at + 10 * us);
    f.kernel(0, 7, names::kRelu, end + 500 * us, end + 600 * us, end + 220 * us);
    t = end + 600 * us;
  }
  return f.build();
}

const IdleCharge* charge(const Profile& p, const char* cause) {
  for (const IdleCharge& c : p.idle_charges)
    if (c.cause == cause) return &c;
  return nullptr;
}

TEST(PageableStaging, TheGpuWaitingForTheStagingIsPageableMemcpys) {
  // The call queued while the kernel ran: the whole 200 µs gap is staging.
  const Profile p = analyze(staged_copies(MemoryKind::pageable, -100 * us));
  const IdleCharge* c = charge(p, "pageable-staging");
  ASSERT_TRUE(c) << testing::describe_findings(p);
  EXPECT_EQ(c->ns, 10 * 200 * us);
  EXPECT_EQ(c->finding, "pageable-memcpy");
  EXPECT_FALSE(charge(p, "late-launch"));
  const Finding* f = testing::find_finding(p, "pageable-memcpy");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  // The staging's idle time (measured); no pinned copy to measure the bus by,
  // so the copies' own time is left out and said as unknown.
  EXPECT_EQ(f->saving_ns, 10 * 200 * us);
  EXPECT_TRUE(has(f->recommendation, "the trace has no pinned copy of that direction to tell")) << f->recommendation;
  EXPECT_TRUE(has(f->evidence, "Before 10 host-to-device copies the GPU sat idle 2.0 ms while the driver staged"))
      << f->evidence;
  EXPECT_TRUE(has(f->recommendation, "staged them (2.0 ms, measured)")) << f->recommendation;

  // The call came 50 µs after the kernel ended: that much is a late launch, the rest staging.
  const Profile late = analyze(staged_copies(MemoryKind::pageable, 50 * us));
  ASSERT_TRUE(charge(late, "pageable-staging"));
  EXPECT_EQ(charge(late, "pageable-staging")->ns, 10 * 150 * us);
  ASSERT_TRUE(charge(late, "late-launch"));
  EXPECT_EQ(charge(late, "late-launch")->ns, 10 * 50 * us);
}

TEST(PageableStaging, APinnedCopyHasNone) {
  // The same gap before a pinned copy: no staging (the copy waited for something else).
  const Profile p = analyze(staged_copies(MemoryKind::pinned, -100 * us));
  EXPECT_FALSE(charge(p, "pageable-staging"));
  EXPECT_FALSE(testing::find_finding(p, "pageable-memcpy"));
}

// A pageable copy whose call returned long before it began (queued behind
// other work) waited for something else; one of the size the driver passes
// inline waited a launch's latency. Neither is staging.
TEST(PageableStaging, NotAReturnedCallNorASmallCopy) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 10; ++s) {
    f.kernel(0, 7, names::kConvTensorCore, t, t + 1 * ms, t - 20 * us);
    const TimeNs end = t + 1 * ms;
    // Called while the kernel ran and returned at once; began 200 µs after it ended.
    f.memcpy(0, 7, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, 4 << 20, end + 200 * us, end + 500 * us,
             "cudaMemcpyAsync", end - 300 * us, 10 * us);
    // 4 KiB, its call running up to 2 µs before it began.
    f.memcpy(0, 7, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, 4 << 10, end + 520 * us, end + 521 * us,
             "cudaMemcpy", end + 505 * us, 13 * us);
    f.kernel(0, 7, names::kRelu, end + 530 * us, end + 600 * us, end + 522 * us);
    t = end + 600 * us;
  }
  const Profile p = analyze(f.build());
  EXPECT_FALSE(charge(p, "pageable-staging")) << charge(p, "pageable-staging")->ns;
}

// [SECTION] Idle gaps by what ended them ------------------------------------------------

// `steps` steps of a conv and a GEMM, `gap` between them; each step's first
// kernel launched `lead` before it starts (measured from its start).
Trace gap_steps(int steps, TimeNs gap, TimeNs lead) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < steps; ++s) {
    const TimeNs step_start = t;
    f.kernel(0, 7, names::kConvTensorCore, t, t + 500 * us, t - lead);
    f.kernel(0, 7, names::kGemmTensorCore, t + 501 * us, t + 800 * us, t);
    t += 801 * us;
    f.range("step " + std::to_string(s), step_start - lead - 10 * us, t);
    t += gap;
  }
  return f.build();
}

TEST(IdleGaps, LateLaunchesAreNamedAndSaved) {
  const Trace tr = gap_steps(10, 3 * ms, 20 * us);  // launched 20 µs before the step: after the gap began
  const Profile p = analyze(tr);
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_TRUE(has(g->title, "late host launches")) << g->title;
  EXPECT_EQ(g->saving_ns, 9 * (3 * ms + 1 * us));
  EXPECT_TRUE(has(g->recommendation, "launched late")) << g->recommendation;
  // The gaps are all the idle time: low-utilization would count it again.
  EXPECT_FALSE(testing::find_finding(p, "low-utilization")) << testing::describe_findings(p);
}

// The advice fits the program: a trace with no framework and no training or
// serving loop in it (an HPC code between MPI exchanges) is told to give the
// GPU work while the host computes, not about checkpoints and Python; one
// whose ops name PyTorch is told the training loop's words.
TEST(IdleGaps, LateLaunchAdviceFitsTheProgram) {
  const Profile p = analyze(gap_steps(10, 3 * ms, 20 * us));
  ASSERT_EQ(p.workload.framework, "unknown");
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_TRUE(has(g->recommendation, "non-blocking MPI")) << g->recommendation;
  EXPECT_FALSE(has(g->recommendation, "Python")) << g->recommendation;
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 10; ++s, t += 3801 * us) {
    f.range("aten::conv2d", t - 100 * us, t + 10 * us, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, names::kConvTensorCore, t, t + 800 * us, t - 100 * us);
    f.range("step " + std::to_string(s), t - 200 * us, t + 800 * us);
  }
  const Profile q = analyze(f.build());
  ASSERT_EQ(q.workload.framework, "pytorch") << q.workload.framework_evidence;
  const Finding* h = testing::find_finding(q, "gpu-idle-gaps");
  ASSERT_TRUE(h) << testing::describe_findings(q);
  EXPECT_TRUE(has(h->recommendation, "Python overhead")) << h->recommendation;
}

TEST(IdleGaps, QueuedWorkIsADependency) {
  const Trace tr = gap_steps(10, 3 * ms, 3500 * us);  // launched before the gap began: the GPU waited on something else
  const Profile p = analyze(tr);
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_TRUE(has(g->title, "work held by a dependency")) << g->title;
  EXPECT_TRUE(has(g->recommendation, "dependency")) << g->recommendation;
}

// A gap ended by ops whose launch the trace does not hold (a sampled or
// filtered trace) may have waited for that launch or for a dependency: the
// trace cannot tell, so it is said as unknown, never as held work, and
// claims no saving; the host's share of the wait is not quoted either.
TEST(IdleGaps, GapsEndedByOpsWithNoLaunchAreUnknown) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 10; ++s, t += 3801 * us) {
    f.kernel(0, 7, names::kConvTensorCore, t, t + 500 * us, TraceFactory::kNoLaunch);
    f.kernel(0, 7, names::kGemmTensorCore, t + 501 * us, t + 800 * us, TraceFactory::kNoLaunch);
  }
  const Profile p = analyze(f.build());
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_TRUE(has(g->title, "no launch in the trace (cause unknown)")) << g->title;
  EXPECT_FALSE(has(g->title, "held by a dependency")) << g->title;
  EXPECT_EQ(g->saving_ns, 0);
  EXPECT_TRUE(has(g->saving_note, "no launch in the trace")) << g->saving_note;
  EXPECT_TRUE(has(g->recommendation, "cannot tell")) << g->recommendation;
  TimeNs unlaunched = 0, queued = 0;
  for (const IdleCharge& c : p.idle_charges) {
    if (c.cause == "unlaunched-gap") unlaunched += c.ns;
    if (c.cause == "queued-gap") queued += c.ns;
  }
  EXPECT_EQ(unlaunched, 9 * 3001 * us);
  EXPECT_EQ(queued, 0);
  for (const HelpAnswer& a : p.helps) {
    if (a.id == "more-streams") {
      EXPECT_FALSE(has(a.reason, "(for the host")) << a.reason;
    }
  }
}

// A launch after the gap began holds the GPU up only until it returns (and a
// launch's latency after): a kernel that starts long after its launch
// returned waited for something else too, and that part is not the host's.
TEST(IdleGaps, ALateLaunchExplainsTheGapOnlyUntilItReturned) {
  // Each step's first kernel is launched 1 ms into a 3 ms gap; its call
  // returns 5 µs later, and the kernel starts 2 ms after that.
  const Trace tr = gap_steps(10, 3 * ms, 2 * ms);
  const Profile p = analyze(tr);
  const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_TRUE(has(g->title, "work held by a dependency")) << g->title;
  // Per gap: 1 ms + 1 µs before the launch, 5 µs of the call and 30 µs of latency.
  EXPECT_EQ(g->saving_ns, 9 * (1 * ms + 1 * us + 35 * us));
  EXPECT_TRUE(has(g->evidence, "after the launch returned")) << g->evidence;
  const DeviceSummary& d = p.devices.front();
  EXPECT_EQ(d.idle_host_wait_ns, 9 * (1 * ms + 1 * us + 35 * us));
  EXPECT_EQ(d.idle_host_wait_ns + d.idle_kernel_wait_ns + d.idle_other_ns, d.idle_ns);
}

TEST(IdleGaps, WarmUpAtTheStartIsNamedAndNotSaved) {
  TraceFactory f;
  // Step 0: a fill, then 50 ms of autotuning on the host before the first convolution.
  f.kernel(0, 7, names::kRelu, 1 * ms, 1 * ms + 10 * us, 1 * ms - 10 * us);
  TimeNs t = 51 * ms;
  for (int s = 0; s < 10; ++s) {
    f.kernel(0, 7, names::kConvTensorCore, t, t + 500 * us, t - 20 * us);
    f.kernel(0, 7, names::kGemmTensorCore, t + 501 * us, t + 800 * us, t);
    f.range("step " + std::to_string(s), s == 0 ? 1 * ms - 20 * us : t - 30 * us, t + 800 * us);
    t += 801 * us;
  }
  const Trace tr = f.build();
  const Profile p = analyze(tr);
  // Warm-up is a one-time cost no fix of the program saves: a minor line, not numbered.
  EXPECT_FALSE(testing::find_finding(p, "gpu-idle-gaps")) << testing::describe_findings(p);
  const Finding* g = testing::find_any_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_LT(g->share, kMaterialShare);
  EXPECT_TRUE(has(g->title, "warm-up")) << g->title;
  EXPECT_EQ(g->saving_ns, 0);
  EXPECT_TRUE(has(g->recommendation, "steady-state")) << g->recommendation;
  EXPECT_FALSE(testing::find_finding(p, "low-utilization")) << testing::describe_findings(p);

  // The same 50 ms gap later (after the first step), before a kernel seen before: not warm-up.
  TraceFactory later;
  TimeNs u = 1 * ms;
  for (int s = 0; s < 10; ++s) {
    if (s == 5) u += 50 * ms;
    later.kernel(0, 7, names::kConvTensorCore, u, u + 500 * us, u - 20 * us);
    later.kernel(0, 7, names::kGemmTensorCore, u + 501 * us, u + 800 * us, u);
    later.range("step " + std::to_string(s), u - 30 * us, u + 800 * us);
    u += 801 * us;
  }
  const Trace t2 = later.build();
  const Profile q = analyze(t2);
  const Finding* h = testing::find_finding(q, "gpu-idle-gaps");
  ASSERT_TRUE(h) << testing::describe_findings(q);
  EXPECT_TRUE(has(h->title, "late host launches")) << h->title;
  EXPECT_GT(h->saving_ns, 50 * ms);
}

// Without steps, a gap said to be warm-up only because a kernel's first call
// in the trace ended it may be the program's own pause: it still numbers the
// finding. The same gap inside a range the program named warm-up does not.
TEST(IdleGaps, FirstCallsWithoutStepsStillNumberTheGaps) {
  auto run = [](bool named) {
    TraceFactory f;
    f.kernel(0, 7, names::kRelu, 1 * ms, 1 * ms + 10 * us, 1 * ms - 10 * us);
    f.kernel(0, 7, names::kConvTensorCore, 51 * ms, 51 * ms + 500 * us, 51 * ms - 20 * us);
    f.kernel(0, 7, names::kGemmTensorCore, 51 * ms + 501 * us, 52 * ms, 51 * ms);
    if (named) f.range("warmup", 1 * ms, 51 * ms);
    const Trace tr = f.build();
    return analyze(tr);
  };
  const Profile unsure = run(false);
  ASSERT_TRUE(unsure.steps.steps.empty());
  const Finding* g = testing::find_finding(unsure, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(unsure);
  EXPECT_TRUE(has(g->title, "ended by kernels' first calls (warm-up)")) << g->title;
  EXPECT_GT(g->share, 0.9);
  EXPECT_EQ(g->saving_ns, 0);
  const Profile named = run(true);
  EXPECT_FALSE(testing::find_finding(named, "gpu-idle-gaps")) << testing::describe_findings(named);
  const Finding* h = testing::find_any_finding(named, "gpu-idle-gaps");
  ASSERT_TRUE(h);
  EXPECT_LT(h->share, kMaterialShare);
}

// Warm-up is the program's first call of a kernel holding the GPU up. A
// recording that starts at ProfilerStep#4 follows steps that already made
// those calls; a first call queued long before its gap did not hold it up.
// `call`: how long the first convolution's launching call lasts.
Trace first_steps_gap(const char* step_name, TimeNs lead, TimeNs call = 5 * us) {
  TraceFactory f;
  f.kernel(0, 7, names::kRelu, 1 * ms, 1 * ms + 10 * us, 400 * us);
  TimeNs t = 51 * ms;
  for (int s = 0; s < 10; ++s) {
    const TimeNs launch = s == 0 ? t - lead : t - 20 * us;
    f.kernel(0, 7, names::kConvTensorCore, t, t + 500 * us, launch, s == 0 ? call : 5 * us);
    f.kernel(0, 7, names::kGemmTensorCore, t + 501 * us, t + 800 * us, t);
    f.range(std::string(step_name) + std::to_string(s + 4), s == 0 ? 1 * ms - 20 * us : t - 30 * us, t + 800 * us, 1,
            RangeKind::annotation, "user_annotation");
    t += 801 * us;
  }
  return f.build();
}

TEST(IdleGaps, FirstCallsAreWarmUpOnlyWhereTheProgramMadeThemThere) {
  const Profile own = analyze(first_steps_gap("step ", 20 * us));  // steps named by the program: its first
  const Finding* g = testing::find_any_finding(own, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(own);
  EXPECT_TRUE(has(g->title, "warm-up")) << g->title;
  const Profile later = analyze(first_steps_gap("ProfilerStep#", 20 * us));
  ASSERT_EQ(later.steps.source, StepSource::profiler_step);
  const Finding* h = testing::find_finding(later, "gpu-idle-gaps");
  ASSERT_TRUE(h) << testing::describe_findings(later);
  EXPECT_TRUE(has(h->title, "late host launches")) << h->title;
  // There too, a first call whose launching call itself takes 5 ms (the
  // kernel's module loaded on its first use) is warm-up: a launch call that
  // long is setup, and no steady-state step pays it.
  const Profile setup = analyze(first_steps_gap("ProfilerStep#", 5 * ms, 5 * ms - 20 * us));
  const Finding* u = testing::find_any_finding(setup, "gpu-idle-gaps");
  ASSERT_TRUE(u) << testing::describe_findings(setup);
  EXPECT_TRUE(has(u->title, "warm-up")) << u->title;
  EXPECT_EQ(u->saving_ns, 0);
  const Profile queued = analyze(first_steps_gap("step ", 50500 * us));  // launched before the gap began
  const Finding* q = testing::find_finding(queued, "gpu-idle-gaps");
  ASSERT_TRUE(q) << testing::describe_findings(queued);
  EXPECT_TRUE(has(q->title, "work held by a dependency")) << q->title;
}

// An op's first call that takes ten times its slowest later call or more did
// one-time set-up (an MI300 norm test's first aten::arange: 28.6 ms, its
// later calls 0.03 ms at most): the gap the host spent in it is warm-up,
// wherever it falls, with no saving. Where the later calls take as long,
// the op costs that every time: a late launch.
// `later`: how long each of the op's calls after the first one takes.
Profile slow_first_call(TimeNs later) {
  TraceFactory f;
  TimeNs u = 1 * ms;
  for (int s = 0; s < 10; ++s) {
    if (s >= 5 && (s == 5 || later >= ms)) {
      const TimeNs call = s == 5 ? 30 * ms : later;
      f.cpu_op("aten::arange", u, u + call, "[[],[],[]]", "[\"Scalar\",\"Scalar\",\"Scalar\"]");
      u += call + 30 * us;
    } else if (s > 5) {
      f.cpu_op("aten::arange", u - 25 * us, u - 25 * us + later, "[[],[],[]]", "[\"Scalar\",\"Scalar\",\"Scalar\"]");
    }
    f.kernel(0, 7, names::kConvTensorCore, u, u + 500 * us, u - 20 * us);
    f.kernel(0, 7, names::kGemmTensorCore, u + 501 * us, u + 800 * us, u);
    f.range("step " + std::to_string(s), u - 30 * us, u + 800 * us);
    u += 801 * us;
  }
  return analyze(f.build());
}

TEST(IdleGaps, AnOpsFirstCallMuchSlowerThanItsLaterOnesIsWarmUp) {
  const Profile once = slow_first_call(20 * us);
  const Finding* g = testing::find_any_finding(once, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(once);
  EXPECT_TRUE(has(g->title, "warm-up")) << g->title;
  EXPECT_EQ(g->saving_ns, 0);
  const Profile every = slow_first_call(30 * ms);
  const Finding* h = testing::find_finding(every, "gpu-idle-gaps");
  ASSERT_TRUE(h) << testing::describe_findings(every);
  EXPECT_TRUE(has(h->title, "late host launches")) << h->title;
  EXPECT_GE(h->saving_ns, 5 * 30 * ms);
}

// The same per input shapes: the op ran before with other shapes, but its
// first call with new ones took 30 ms and every later one 20 µs (cuBLAS
// choosing an algorithm for each new GEMM shape): warm-up, no saving.
TEST(IdleGaps, AnOpsFirstCallWithNewShapesMuchSlowerThanItsLaterOnesIsWarmUp) {
  TraceFactory f;
  TimeNs u = 1 * ms;
  for (int s = 0; s < 10; ++s) {
    // Step 5's first call with the new shapes ends just before its kernel's launch.
    const bool fresh = s == 5;
    const TimeNs op_start = fresh ? u - 30 * ms - 25 * us : u - 25 * us, op_end = fresh ? u - 25 * us : u - 5 * us;
    f.cpu_op("aten::addmm", op_start, op_end, s >= 5 ? "[[16,16]]" : "[[8,8]]", "[\"float\"]");
    f.kernel(0, 7, names::kConvTensorCore, u, u + 500 * us, u - 20 * us);
    f.kernel(0, 7, names::kGemmTensorCore, u + 501 * us, u + 800 * us, u);
    f.range("step " + std::to_string(s), op_start - 5 * us, u + 800 * us);
    u += 801 * us + (s == 4 ? 30 * ms + 30 * us : 0);
  }
  const Profile p = analyze(f.build());
  const Finding* g = testing::find_any_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(p);
  EXPECT_TRUE(has(g->title, "warm-up")) << g->title;
  EXPECT_EQ(g->saving_ns, 0);
  EXPECT_FALSE(testing::find_finding(p, "gpu-idle-gaps")) << testing::describe_findings(p);
}

// A sync is charged the idle after it up to what it held the host: had it
// not blocked, the host's work after it would have begun that much earlier,
// and the next launch with it. `blocked`: how long before the kernel's end
// the sync is called; 2.2 ms of host work follow it.
Profile syncs_then_host_work(TimeNs blocked) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 10; ++s) {
    f.kernel(0, 7, names::kConvTensorCore, t, t + 800 * us, t - 50 * us);
    f.sync(SyncType::context, 0, kNoId, t + 800 * us - blocked, t + 800 * us);
    f.kernel(0, 7, names::kRelu, t + 3 * ms, t + 3100 * us, t + 2990 * us);  // 2.2 ms of host work after the sync
    t += 3101 * us;
  }
  return analyze(f.build());
}

// A sync the host was blocked in when the GPU ran dry holds the gap from the
// GPU's last op on, its slow return included: a loop that syncs after every
// kernel leaves nothing to a late launch.
TEST(IdleGaps, ASyncBlockingWhenTheGpuRanDryHoldsTheWholeGap) {
  TraceFactory f;
  f.device(0);
  TimeNs t = 1 * ms;
  for (int s = 0; s < 40; ++s) {
    f.kernel(0, 7, names::kConvTensorCore, t, t + 500 * us, t - 20 * us);
    // Called 100 µs into the kernel, returns 150 µs after it ended; the next
    // launch comes 20 µs later.
    f.sync(SyncType::context, 0, kNoId, t + 100 * us, t + 650 * us);
    t += 700 * us;
  }
  const Profile p = analyze(f.build());
  // Each 200 µs gap: all of it the sync's, none a late launch.
  EXPECT_EQ(p.syncs.gpu_idle_after_ns, 39 * 200 * us);
  EXPECT_EQ(p.launches.late_launch_idle_ns, 0);
}

// A device sync whose return the host's clock stamps a few µs before the
// GPU's clock ends the op it waited for returned with it: the gap after is
// the sync's, not a late launch's. 20 µs early is no clock's disagreement.
TEST(IdleGaps, ASyncStampedJustBeforeTheOpItWaitedForStillHoldsTheGap) {
  auto run = [](TimeNs early) {
    TraceFactory f;
    f.device(0);
    TimeNs t = 1 * ms;
    for (int s = 0; s < 40; ++s) {
      f.kernel(0, 7, names::kConvTensorCore, t, t + 500 * us, t - 20 * us);
      f.sync(SyncType::context, 0, kNoId, t + 100 * us, t + 500 * us - early);
      t += 700 * us;  // the next launch 180 µs after the kernel ended
    }
    return analyze(f.build());
  };
  const Profile skewed = run(7 * us);
  EXPECT_EQ(skewed.syncs.gpu_idle_after_ns, 39 * 200 * us);
  EXPECT_EQ(skewed.launches.late_launch_idle_ns, 0);
  const Profile before = run(20 * us);
  EXPECT_EQ(before.syncs.gpu_idle_after_ns, 0);
}

TEST(IdleGaps, GapsAfterSynchronizationsAreHostSyncsUpToWhatTheyHeldTheHost) {
  // Each sync holds the host 2.5 ms, longer than the 2.2 ms gap after it:
  // the gaps are the syncs' alone.
  const Profile p = syncs_then_host_work(2500 * us);
  const Finding* h = testing::find_finding(p, "host-sync");
  ASSERT_TRUE(h) << testing::describe_findings(p);
  EXPECT_EQ(p.syncs.gpu_idle_after_ns, 10 * 2200 * us);
  EXPECT_FALSE(testing::find_finding(p, "gpu-idle-gaps")) << testing::describe_findings(p);
  EXPECT_FALSE(testing::find_finding(p, "low-utilization")) << testing::describe_findings(p);
  // Each holds it 0.84 ms: that much of each gap is the sync's; the other
  // 1.36 ms the host's own work before its next launch (a late launch; the
  // first gap, before the first call of its kernel, is warm-up).
  const Profile q = syncs_then_host_work(840 * us);
  ASSERT_TRUE(testing::find_finding(q, "host-sync")) << testing::describe_findings(q);
  EXPECT_EQ(q.syncs.gpu_idle_after_ns, 10 * 840 * us);
  const Finding* g = testing::find_finding(q, "gpu-idle-gaps");
  ASSERT_TRUE(g) << testing::describe_findings(q);
  EXPECT_TRUE(has(g->evidence,
                  "warm-up 1.4 ms (1 gap ended by the first call of a kernel or of the framework op that launched "
                  "it before the first step ended, or by a launch the host made after set-up calls such as creating "
                  "streams or handles and loading modules, inside a range the program named warm-up or for emptying "
                  "caches, inside an "
                  "op's first call that took ten times its slowest later call or more, or while the host "
                  "captured a CUDA graph), a late host launch 12.2 ms"))
      << g->evidence;
  // A sync that returns at once on an idle GPU causes none of the gap.
  const Profile r = syncs_then_host_work(0);
  EXPECT_EQ(r.syncs.gpu_idle_after_ns, 0);
  EXPECT_FALSE(testing::find_finding(r, "host-sync")) << testing::describe_findings(r);
}

// [SECTION] The optimizer by its ops -----------------------------------------------------

// Steps of a convolution and then the weight update inside
// "Optimizer.step#SGD.step": `kernels` kernels named `name`, 3 µs each,
// launched one by one (a 10 µs call each).
// With `mix`, several names: that many kernels of each, in turn.
Trace optimizer_steps(const std::vector<std::pair<int, const char*>>& mix, bool range = true) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 5; ++s) {
    const TimeNs step_start = t;
    f.kernel(0, 7, names::kConvTensorCore, t, t + 800 * us, t - 50 * us);
    TimeNs host = t + 800 * us;
    const TimeNs opt_start = host;
    for (const auto& [kernels, name] : mix)
      for (int k = 0; k < kernels; ++k) {
        f.kernel(0, 7, name, host + 11 * us, host + 14 * us, host, 10 * us);
        host += 15 * us;
      }
    if (range)
      f.range("Optimizer.step#SGD.step", opt_start - 1 * us, host - 2 * us, 1, RangeKind::annotation,
              "user_annotation");
    f.range("step " + std::to_string(s), step_start - 60 * us, host);
    t = host + 100 * us;
  }
  return f.build();
}
Trace optimizer_steps(int kernels, const char* name, bool range = true) {
  return optimizer_steps({{kernels, name}}, range);
}

TEST(Optimizer, APerParameterOptimizerIsAFinding) {
  const Trace tr = optimizer_steps(300, names::kRelu);
  const Profile p = analyze(tr);
  const Finding* u = testing::find_finding(p, "unfused-optimizer");
  ASSERT_TRUE(u) << testing::describe_findings(p);
  EXPECT_DOUBLE_EQ(u->metric, 300.0);
  EXPECT_TRUE(has(u->title, "Optimizer.step#SGD.step launches 300 kernels per step")) << u->title;
  EXPECT_TRUE(has(u->recommendation, "foreach=True")) << u->recommendation;
  EXPECT_GT(u->saving_ns, 0);
  // Its kernels are the weight update, running alone, though their names are elementwise.
  const Finding* w = testing::find_finding(p, "serialized-weight-update");
  ASSERT_TRUE(w) << testing::describe_findings(p);
  EXPECT_TRUE(has(w->title, "1,500 optimizer kernels (300 per step launched by the optimizer's step)")) << w->title;
  EXPECT_EQ(w->metric, 0.0);
}

// The optimizer's kernels launched one by one, each later than the GPU could
// run it: the GPU's wait for them is late-launch idle, which launch-bound
// counts, and a CUDA graph of the step (its fix) removes the optimizer's
// host time with every other op's. The optimizer's saving is part of that
// finding's, not in addition to it.
TEST(Optimizer, ItsSavingIsPartOfLaunchBoundsWhereBothFire) {
  const Profile p = analyze(optimizer_steps(300, names::kRelu));
  const Finding* u = testing::find_any_finding(p, "unfused-optimizer");
  const Finding* l = testing::find_any_finding(p, "launch-bound");
  ASSERT_TRUE(u && l) << testing::describe_findings(p);
  EXPECT_GT(u->saving_ns, 0);
  EXPECT_EQ(u->saving_within, "launch-bound");
  EXPECT_TRUE(l->saving_within.empty());
  // Without launch-bound (its late launches under its threshold) the saving stands alone.
  Profile q = analyze(optimizer_steps(300, names::kRelu));
  q.findings.erase(
      std::remove_if(q.findings.begin(), q.findings.end(), [](const Finding& f) { return f.id == "launch-bound"; }),
      q.findings.end());
  q.minor_findings.erase(std::remove_if(q.minor_findings.begin(), q.minor_findings.end(),
                                        [](const Finding& f) { return f.id == "launch-bound"; }),
                         q.minor_findings.end());
  for (Finding& f : q.findings) f.saving_within.clear();
  for (Finding& f : q.minor_findings) f.saving_within.clear();
  settle_findings(&q);
  const Finding* alone = testing::find_any_finding(q, "unfused-optimizer");
  ASSERT_TRUE(alone) << testing::describe_findings(q);
  EXPECT_TRUE(alone->saving_within.empty());
}

TEST(Optimizer, MultiTensorOrUnannotatedOptimizersAreNot) {
  // foreach=True: a few multi-tensor kernels per step.
  const char* kForeach =
      "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
      "namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::FusedSgdMathFunctor<float, 3> >()";
  const Profile p = analyze(optimizer_steps(4, kForeach));
  EXPECT_FALSE(testing::find_finding(p, "unfused-optimizer")) << testing::describe_findings(p);
  // Many multi-tensor kernels are still not a per-parameter optimizer.
  const Profile q = analyze(optimizer_steps(300, kForeach));
  EXPECT_FALSE(testing::find_finding(q, "unfused-optimizer")) << testing::describe_findings(q);
  // Elementwise kernels outside an optimizer op are not the weight update.
  const Profile r = analyze(optimizer_steps(300, names::kRelu, false));
  EXPECT_FALSE(testing::find_finding(r, "unfused-optimizer")) << testing::describe_findings(r);
  EXPECT_FALSE(testing::find_finding(r, "serialized-weight-update")) << testing::describe_findings(r);
}

// [SECTION] The optimizer's kind in the workload ------------------------------------------------

constexpr const char* kForeachKernel =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, "
    "std::plus<float>, float>()";
constexpr const char* kFusedKernel =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::FusedSgdMathFunctor<float, 3> >()";

TEST(OptimizerKind, PerParameterForeachAndFusedAreTold) {
  const WorkloadKind per = analyze(optimizer_steps(300, names::kRelu)).workload;
  EXPECT_EQ(per.optimizer, "per-parameter") << per.optimizer_evidence;
  EXPECT_TRUE(has(per.optimizer_evidence, "1,500 kernels inside 5 optimizer steps")) << per.optimizer_evidence;
  EXPECT_TRUE(has(per.optimizer_evidence, "300 per step, 0% of them multi-tensor")) << per.optimizer_evidence;
  const WorkloadKind foreach = analyze(optimizer_steps(4, kForeachKernel)).workload;
  EXPECT_EQ(foreach.optimizer, "foreach") << foreach.optimizer_evidence;
  const WorkloadKind fused = analyze(optimizer_steps(4, kFusedKernel)).workload;
  EXPECT_EQ(fused.optimizer, "fused") << fused.optimizer_evidence;
  EXPECT_TRUE(has(fused.optimizer_evidence, "fused optimizer kernels")) << fused.optimizer_evidence;
  // Many multi-tensor kernels are still multi-tensor.
  EXPECT_EQ(analyze(optimizer_steps(300, kForeachKernel)).workload.optimizer, "foreach");
}

TEST(OptimizerKind, UnknownWhereTheTraceCannotTell) {
  // A few plain kernels per step: a small model's per-parameter update, or
  // one over a few flattened buffers.
  const WorkloadKind few = analyze(optimizer_steps(30, names::kRelu)).workload;
  EXPECT_EQ(few.optimizer, "unknown") << few.optimizer_evidence;
  EXPECT_TRUE(has(few.optimizer_evidence, "too few per step")) << few.optimizer_evidence;
  // Some multi-tensor kernels among many plain ones: a mix, named as such,
  // and not a per-parameter finding.
  const Profile mixed = analyze(optimizer_steps({{200, names::kRelu}, {40, kForeachKernel}}));
  EXPECT_EQ(mixed.workload.optimizer, "unknown") << mixed.workload.optimizer_evidence;
  EXPECT_TRUE(has(mixed.workload.optimizer_evidence, "a mix")) << mixed.workload.optimizer_evidence;
  EXPECT_FALSE(testing::find_finding(mixed, "unfused-optimizer")) << testing::describe_findings(mixed);
  // Half of them multi-tensor or more: multi-tensor.
  EXPECT_EQ(analyze(optimizer_steps({{100, names::kRelu}, {100, kForeachKernel}})).workload.optimizer, "foreach");
}

// The optimizers the trace names: the classes of PyTorch's step ranges,
// and the optimizer fbgemm fuses into its embedding backward kernels
// (split_embedding_backward_codegen_<optimizer>_…; "none" updates nothing).
TEST(OptimizerKind, TheNamedOptimizersAreSaid) {
  constexpr const char* kTbe =
      "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<c10::Half, float, "
      "c10::Half, 2ul, 32>()";
  constexpr const char* kTbeNone =
      "void split_embedding_backward_codegen_none_unweighted_kernel_cta_per_row_1<c10::Half, float, c10::Half>()";
  const WorkloadKind per = analyze(optimizer_steps(300, names::kRelu)).workload;
  EXPECT_TRUE(has(per.optimizer_evidence, "SGD (their Optimizer.step ranges); 1,500 kernels"))
      << per.optimizer_evidence;
  EXPECT_FALSE(has(per.optimizer_evidence, "fbgemm")) << per.optimizer_evidence;
  const WorkloadKind mixed = analyze(optimizer_steps({{200, names::kRelu}, {40, kForeachKernel}, {1, kTbe}})).workload;
  EXPECT_EQ(mixed.optimizer, "unknown") << mixed.optimizer_evidence;
  EXPECT_TRUE(has(mixed.optimizer_evidence,
                  "SGD (their Optimizer.step ranges), and rowwise_adagrad fused into fbgemm's embedding backward "
                  "kernels (split_embedding_backward_codegen_rowwise_adagrad_…)"))
      << mixed.optimizer_evidence;
  // The fused embedding update alone: a fused optimizer.
  const WorkloadKind tbe = analyze(optimizer_steps(4, kTbe, false)).workload;
  EXPECT_EQ(tbe.optimizer, "fused") << tbe.optimizer_evidence;
  EXPECT_TRUE(has(tbe.optimizer_evidence, "rowwise_adagrad fused into fbgemm's")) << tbe.optimizer_evidence;
  const WorkloadKind none = analyze(optimizer_steps(4, kTbeNone, false)).workload;
  EXPECT_EQ(none.optimizer, "") << none.optimizer_evidence;
}

TEST(OptimizerKind, NothingIsSaidWithoutAnOptimizer) {
  // Elementwise kernels outside an optimizer op: no optimizer at all.
  const WorkloadKind none = analyze(optimizer_steps(300, names::kRelu, false)).workload;
  EXPECT_EQ(none.optimizer, "") << none.optimizer_evidence;
  // Multi-tensor kernels by name, without the step's range: foreach by name.
  const WorkloadKind named = analyze(optimizer_steps(4, kForeachKernel, false)).workload;
  EXPECT_EQ(named.optimizer, "foreach") << named.optimizer_evidence;
  EXPECT_TRUE(has(named.optimizer_evidence, "no optimizer step range")) << named.optimizer_evidence;
}

}  // namespace
}  // namespace gpuscope
