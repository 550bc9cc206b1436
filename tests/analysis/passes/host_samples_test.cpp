// Where the host was while the GPU waited: host samples (marks of the
// host_sample domain) in each cause's idle time, on the thread the GPU waited
// for, summed up into the path most share; and the findings quoting it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analysis/analyze.h"
#include "support/findings.h"
#include "support/test_traces.h"
#include "trace/tables.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;

constexpr TimeNs us = 1'000;
constexpr TimeNs ms = 1'000'000;

constexpr const char* kLoading = "train.py(10): <module>;train.py(40): train;loader.py(88): next_batch;io.py(7): read";
constexpr const char* kForward = "train.py(10): <module>;train.py(40): train;model.py(12): forward";
constexpr const char* kWorker = "worker.py(3): <module>;worker.py(9): spin";

void sample(TraceFactory& f, std::string_view stack, TimeNs at, std::uint32_t tid = 1) {
  f.range(stack, at, at, tid, RangeKind::mark, kHostSampleDomain);
}

// `n` kernels of 1 ms, each after a 2 ms gap that its late launch ends (the
// launch 10 µs before the kernel, on thread 1). Thread 1 is sampled every
// 100 µs: in next_batch during the gaps, in forward while the GPU works;
// thread 2 spins the whole time. With `loader`, the first half of each gap
// is a DataLoader range (input wait). Returns the samples of thread 1 taken
// in the gaps (the second halves only, with `loader`).
struct Planted {
  Trace trace;
  std::uint64_t in_gaps = 0;
};
Planted late_launches(int n, bool loader = false, bool samples = true, std::string_view in_gap = kLoading) {
  TraceFactory f;
  Planted out;
  TimeNs t = 1 * ms;
  TimeNs prev_end = 0;
  for (int i = 0; i < n; ++i) {
    if (i > 0) {
      // The gap [prev_end, t): sampled every 100 µs from 50 µs in.
      if (loader)
        f.range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", prev_end, prev_end + 1 * ms, 1,
                RangeKind::annotation, "user_annotation");
      for (TimeNs at = prev_end + 50 * us; samples && at < t; at += 100 * us) {
        sample(f, in_gap, at);
        sample(f, kWorker, at + 10 * us, 2);
        if (!loader || at >= prev_end + 1 * ms) ++out.in_gaps;
      }
    }
    f.kernel(0, 7, "ampere_sgemm_128x64_nn", t, t + 1 * ms, t - 10 * us, 5 * us);
    for (TimeNs at = t + 50 * us; samples && at < t + 1 * ms; at += 100 * us) sample(f, kForward, at);
    prev_end = t + 1 * ms;
    t = prev_end + 2 * ms;
  }
  out.trace = f.build();
  return out;
}

const HostWhere* where(const Profile& p, std::string_view cause) {
  const auto it = std::find_if(p.host_while_idle.begin(), p.host_while_idle.end(),
                               [&](const HostWhere& w) { return w.cause == cause; });
  return it == p.host_while_idle.end() ? nullptr : &*it;
}

TEST(HostWhileIdle, LongGapsEndedByLateLaunchesAreWhereTheLaunchingThreadWas) {
  const Planted planted = late_launches(8);
  const Profile p = analyze(planted.trace);
  const HostWhere* w = where(p, "late-launch-gap");
  ASSERT_TRUE(w) << p.host_while_idle.size();
  EXPECT_EQ(w->samples, planted.in_gaps);  // thread 1's only: thread 2 launched nothing
  EXPECT_EQ(planted.in_gaps, 7u * 20u);
  EXPECT_EQ(w->threads, 1u);
  EXPECT_NE(w->thread.find("tid 1"), std::string::npos) << w->thread;
  EXPECT_TRUE(w->path_from_root);
  EXPECT_EQ(w->path_depth, 4u);
  ASSERT_EQ(w->path.size(), 3u);  // the innermost three of the four
  EXPECT_EQ(w->path[0], "train.py(40): train");
  EXPECT_EQ(w->path[2], "io.py(7): read");
  EXPECT_EQ(w->path_samples, w->samples);
  ASSERT_EQ(w->leaves.size(), 1u);
  EXPECT_EQ(w->leaves[0].frame, "io.py(7): read");
  EXPECT_TRUE(w->note.empty()) << w->note;
  // gpu-idle-gaps is charged those gaps and quotes where the host was.
  const Finding* gaps = testing::find_finding(p, "gpu-idle-gaps");
  ASSERT_TRUE(gaps) << testing::describe_findings(p);
  EXPECT_NE(gaps->evidence.find("`loader.py(88): next_batch` → `io.py(7): read` in 100% of 140 samples"),
            std::string::npos)
      << gaps->evidence;
}

TEST(HostWhileIdle, InputLoadingTakesTheSamplesItOverlaps) {
  const Planted planted = late_launches(8, /*loader=*/true);
  const Profile p = analyze(planted.trace);
  const HostWhere* input = where(p, "input-wait");
  const HostWhere* gap = where(p, "late-launch-gap");
  ASSERT_TRUE(input && gap);
  // Each gap's first millisecond is input wait (10 samples each), the rest
  // the late launch's: no sample is counted twice.
  EXPECT_EQ(input->samples, 7u * 10u);
  EXPECT_EQ(gap->samples, planted.in_gaps);
  EXPECT_EQ(input->samples + gap->samples, 7u * 20u);
}

TEST(HostWhileIdle, NothingWithoutSamplesAndTooFewSayNothing) {
  EXPECT_TRUE(analyze(late_launches(8, false, false).trace).host_while_idle.empty());
  // Two gaps with 20 samples each are enough; a trace whose only samples are
  // in the kernels' time has none in the idle time, and says so.
  TraceFactory f;
  f.kernel(0, 7, "k", 1 * ms, 2 * ms, 1 * ms - 10 * us);
  f.kernel(0, 7, "k", 4 * ms, 5 * ms, 4 * ms - 10 * us);
  sample(f, kForward, 1500 * us);
  sample(f, kLoading, 3 * ms);  // in the gap: one sample only
  const Profile p = analyze(f.build());
  const HostWhere* w = where(p, "late-launch-gap");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->samples, 1u);
  EXPECT_NE(w->note.find("too few host samples (1"), std::string::npos) << w->note;
  for (const Finding& x : p.findings) EXPECT_EQ(x.evidence.find("Host samples"), std::string::npos) << x.evidence;
}

// Stacks an unwinder cut short share no root: the path is read from the
// innermost frame up.
TEST(HostWhileIdle, StacksWithoutACommonRootAreReadFromTheLeaf) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int i = 0; i < 6; ++i) {
    f.kernel(0, 7, "k", t, t + 1 * ms, t - 10 * us);
    const TimeNs g0 = t + 1 * ms;
    for (int j = 0; j < 10; ++j)
      sample(f, j % 2 ? "[libcuda.so.1];cuStreamSynchronize;poll" : "main;solve;[libcuda.so.1];poll",
             g0 + 100 * us * j + 50 * us);
    t = g0 + 2 * ms;
  }
  const Profile p = analyze(f.build());
  const HostWhere* w = where(p, "late-launch-gap");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->samples, 50u);
  EXPECT_FALSE(w->path_from_root);
  ASSERT_EQ(w->path.size(), 1u);
  EXPECT_EQ(w->path[0], "poll");
  EXPECT_EQ(w->path_samples, 50u);
}

const HelpAnswer* help(const Profile& p, std::string_view id) {
  const auto it = std::find_if(p.helps.begin(), p.helps.end(), [&](const HelpAnswer& a) { return a.id == id; });
  return it == p.helps.end() ? nullptr : &*it;
}

// Without data-loading ranges, "more data-loader workers?" is answered from
// the Python samples in the GPUs' idle time: inside torch/utils/data → yes;
// elsewhere → no; native stacks (no Python frame) → unknown, as without samples.
TEST(HostWhileIdle, DataLoaderWorkersAreAnsweredFromPythonSamples) {
  constexpr const char* kInLoader =
      "train.py(10): <module>;/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py(631): __next__;"
      "/usr/lib/python3/dist-packages/torch/utils/data/_utils/fetch.py(54): fetch";
  const Profile loading = analyze(late_launches(8, false, true, kInLoader).trace);
  const HelpAnswer* yes = help(loading, "input-workers");
  ASSERT_TRUE(yes);
  EXPECT_EQ(yes->verdict, Verdict::yes) << yes->reason;
  EXPECT_NE(yes->reason.find("100% of the 140 Python host samples"), std::string::npos) << yes->reason;

  const HelpAnswer* no = help(analyze(late_launches(8).trace), "input-workers");
  ASSERT_TRUE(no);
  EXPECT_EQ(no->verdict, Verdict::no) << no->reason;
  EXPECT_NE(no->reason.find("only 0% of the 140"), std::string::npos) << no->reason;

  const HelpAnswer* native =
      help(analyze(late_launches(8, false, true, "main;solve;[libcuda.so.1]").trace), "input-workers");
  ASSERT_TRUE(native);
  EXPECT_EQ(native->verdict, Verdict::unknown) << native->reason;
  const HelpAnswer* none = help(analyze(late_launches(8, false, false).trace), "input-workers");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->verdict, Verdict::unknown) << none->reason;
}

}  // namespace
}  // namespace gpuscope
