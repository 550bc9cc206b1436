// CUDA graphs' one-time set-up (GraphSetup): a capture up to the graph's
// first run, and torch's cudagraph trees recording one. A sync made in it is
// set-up, not a step's sync; the host's time in it issues no launches; the
// GPU idle of a capture is said to be the capture.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "analysis/analyze.h"
#include "support/findings.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;

// A graph launch at `at` replaying 20 kernels of 300 µs on (0, 7); returns
// where its work ends.
TimeNs replay(TraceFactory& f, TimeNs at) {
  const std::uint32_t id = f.api("cudaGraphLaunch", at, at + 10'000);
  TimeNs end = at;
  for (int i = 0; i < 20; ++i) {
    KernelRow k;
    k.start = at + 20'000 + i * 300'000;
    k.end = k.start + 300'000;
    k.track = f.builder().gpu_track(0, 7);
    k.name = f.builder().intern("graph_kernel");
    k.grid_x = k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
    k.correlation = id;
    f.builder().add_kernel(k);
    end = k.end;
  }
  return end;
}

struct Planted {
  bool capture = true;          // BeginCapture/EndCapture around the recorded launches
  std::string_view range = {};  // a Python frame around the first run and its sync
};

// 20 eager kernels; with `capture`, a 20 ms capture recording 20 launches;
// the graph's first run and a device sync until its work ends, the host then
// busy 5 ms; then 10 replays, each with a sync and 2 ms of host work after it.
Profile graph_run(const Planted& how) {
  TraceFactory f;
  f.device(0);
  TimeNs t = 1'000'000;
  for (int i = 0; i < 20; ++i, t += 30'000) f.kernel(0, 7, "eager_kernel", t + 20'000, t + 25'000, t + 5'000);
  if (how.capture) {
    f.api("cudaStreamBeginCapture", t, t + 2'000);
    for (int i = 0; i < 20; ++i) f.api("cudaLaunchKernel", t + 3'000 + i * 1'000'000, t + 8'000 + i * 1'000'000);
    f.api("cudaStreamEndCapture", t + 20'000'000, t + 20'005'000);
    f.api("cudaGraphInstantiateWithFlags", t + 20'006'000, t + 20'200'000);
  }
  t += 21'000'000;
  const TimeNs first = t;
  TimeNs end = replay(f, t);
  f.sync(SyncType::context, 0, 7, t + 50'000, end + 5'000);
  if (!how.range.empty()) f.range(how.range, first - 1'000, end + 10'000, 1, RangeKind::push_pop, "python");
  t = end + 5'000'000;
  for (int s = 0; s < 10; ++s) {
    end = replay(f, t);
    f.sync(SyncType::context, 0, 7, t + 50'000, end + 5'000);
    t = end + 2'000'000;
  }
  return analyze(f.build());
}

// The sync after the graph's first run waits for set-up: it counts apart,
// and the GPU idle after it is warm-up, not the host-sync finding's.
TEST(GraphSetup, ASyncAfterAGraphsFirstRunIsSetUp) {
  const Profile p = graph_run({});
  EXPECT_EQ(p.syncs.setup_syncs, 1u);
  EXPECT_EQ(p.syncs.count, 10u);
  EXPECT_EQ(p.syncs.device_syncs, 10u);
  EXPECT_NEAR(static_cast<double>(p.syncs.setup_ns), 5'975'000.0, 1.0);
  // The GPU idles from each run's end to the next replay's first kernel
  // (20 µs after its launch); the last replay has no gap after it.
  EXPECT_EQ(p.syncs.setup_idle_ns, 5'020'000);
  EXPECT_EQ(p.syncs.gpu_idle_after_ns, 9 * 2'020'000);
  const Finding* f = testing::find_finding(p, "host-sync");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_EQ(f->title.rfind("10 host synchronizations", 0), 0u) << f->title;
  EXPECT_NE(f->evidence.find("Not counted either: 1 synchronization of CUDA graphs' one-time set-up"),
            std::string::npos)
      << f->evidence;
  TimeNs warm_up = 0, sync = 0;
  for (const IdleCharge& c : p.idle_charges) {
    if (c.cause == "warm-up") warm_up += c.ns;
    if (c.cause == "host-sync") sync += c.ns;
  }
  EXPECT_GE(warm_up, 5'020'000);
  EXPECT_EQ(sync, 9 * 2'020'000);
}

// The same run with no capture before the first graph launch: its sync is a
// sync like the others.
TEST(GraphSetup, ASyncAfterAGraphLaunchWithNoCaptureIsASync) {
  const Profile p = graph_run({.capture = false});
  EXPECT_EQ(p.syncs.setup_syncs, 0u);
  EXPECT_EQ(p.syncs.count, 11u);
  EXPECT_EQ(p.syncs.gpu_idle_after_ns, 5'020'000 + 9 * 2'020'000);
  const Finding* f = testing::find_finding(p, "host-sync");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_EQ(f->evidence.find("one-time set-up"), std::string::npos) << f->evidence;
}

// torch's cudagraph trees recording a graph (its Python frame around the
// sync) is set-up wherever the capture calls are; another frame is not.
TEST(GraphSetup, ASyncInsideTorchsCudagraphRecordingIsSetUp) {
  const Profile in =
      graph_run({.capture = false, .range = "torch/_inductor/cudagraph_trees.py(2205): record_function"});
  EXPECT_EQ(in.syncs.setup_syncs, 1u);
  EXPECT_EQ(in.syncs.count, 10u);
  const Profile other =
      graph_run({.capture = false, .range = "diffusers/pipelines/flux/pipeline_flux.py(652): __call__"});
  EXPECT_EQ(other.syncs.setup_syncs, 0u);
  EXPECT_EQ(other.syncs.count, 11u);
}

// The host's time in the capture (up to the graph's first run, its sync
// included) and in the other syncs issued no launches: launch-bound's time
// per launch leaves it out. Without a capture, only the syncs. The kernel
// pattern's steps (one per replay) count it, and they end before the last
// replay's sync.
TEST(GraphSetup, TheHostIssuesNoLaunchesInACaptureOrASync) {
  const Profile p = graph_run({});
  ASSERT_EQ(p.steps.steps.size(), 11u);
  // The capture from its BeginCapture (at 1.6 ms) to the first run's end
  // plus the sync's 5 µs after it; each sync from 50 µs after its replay to
  // 5 µs after its work.
  const TimeNs capture = (1'600'000 + 21'000'000 + 20'000 + 20 * 300'000 + 5'000) - 1'600'000;
  const TimeNs sync = 20'000 + 20 * 300'000 + 5'000 - 50'000;
  EXPECT_EQ(p.launches.host_not_launching_ns, capture + 9 * sync);
  const Profile plain = graph_run({.capture = false});
  EXPECT_EQ(plain.launches.host_not_launching_ns, 10 * sync);
}

// A GPU idle through a capture is said to be the capture (set-up, no
// saving); idle ended by first calls with no capture is warm-up in general.
TEST(GraphSetup, AnIdleGapThroughACaptureIsTheCapture) {
  const Profile p = graph_run({});
  const Finding* f = testing::find_any_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_NE(f->title.find("warm-up: the CUDA graph capture"), std::string::npos) << f->title;
  EXPECT_NE(f->evidence.find("1 gap lies mostly in a CUDA graph capture (cudaStreamBeginCapture to "
                             "cudaStreamEndCapture, "),
            std::string::npos)
      << f->evidence;
  EXPECT_EQ(f->recommendation.rfind("Most of the idle time is the CUDA graph capture", 0), 0u) << f->recommendation;
  EXPECT_EQ(f->saving_ns, 0);
  const Profile plain = graph_run({.capture = false});
  if (const Finding* g = testing::find_finding(plain, "gpu-idle-gaps")) {
    EXPECT_EQ(g->title.find("capture"), std::string::npos) << g->title;
    EXPECT_EQ(g->evidence.find("graph captures"), std::string::npos) << g->evidence;
  }
}

}  // namespace
}  // namespace gpuscope
