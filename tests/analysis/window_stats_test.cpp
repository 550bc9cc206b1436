// window_stats(): a hand-worked window (clipping, concurrency, ops around
// ops), and, over a window that holds the whole trace, the report's own
// numbers (hotspots, categories, op table, device summaries) on a training
// trace and on every real trace.
#include "analysis/window_stats.h"

#include <gtest/gtest.h>

#include <map>

#include "analysis/analyze.h"
#include "import/open_trace.h"
#include "support/real_traces.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;

const WindowRow* row(const std::vector<WindowRow>& rows, std::string_view name) {
  for (const WindowRow& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

// GPU 0: stream 7 runs A [0, 100) and B [150, 300); stream 8 runs C [50, 200)
// and a copy [400, 500). Launches start 10 µs before their op.
Trace hand_worked() {
  TraceFactory f;
  f.device(0);
  f.range("outer", -100'000, 1'000, 1);
  f.range("inner", -50'000, -9'950, 1);  // A's launch is inside both, B's and the copy's in "outer" alone
  f.kernel(0, 7, "A", 0, 100);
  f.kernel(0, 7, "B", 150, 300);
  f.kernel(0, 8, "C", 50, 200, TraceFactory::kNoLaunch);
  f.memcpy(0, 8, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 1 << 20, 400, 500);
  return f.build();
}

TEST(WindowStats, ClipsEveryOpToTheWindow) {
  const Trace t = hand_worked();
  const WindowStats w = window_stats(t, {80, 420});
  EXPECT_EQ(w.kernels, 3u);
  EXPECT_EQ(w.memcpys, 1u);
  // Inside the window: A 20, B 150, C 120; the copy 20.
  EXPECT_EQ(w.kernel_time_ns, 20 + 150 + 120);
  EXPECT_EQ(w.gpu_op_time_ns, 20 + 150 + 120 + 20);
  ASSERT_NE(row(w.kernel_names, "B"), nullptr);
  EXPECT_EQ(row(w.kernel_names, "B")->total_ns, 150);
  EXPECT_EQ(w.kernel_names.front().name, "B");  // most time first
  EXPECT_DOUBLE_EQ(row(w.kernel_names, "A")->share, 20.0 / 290);
  EXPECT_DOUBLE_EQ(row(w.kernel_names, "A")->of_window, 20.0 / 340);
  ASSERT_EQ(w.devices.size(), 1u);
  const WindowDevice& d = w.devices[0];
  // Busy: [80, 300) and [400, 420) = 240; kernels [80, 300) = 220; two
  // kernels at once in [80, 100) and [150, 200) = 70.
  EXPECT_EQ(d.busy_ns, 240);
  EXPECT_EQ(d.idle_ns, 100);
  EXPECT_DOUBLE_EQ(d.utilization, 240.0 / 340);
  EXPECT_EQ(d.kernel_busy_ns, 220);
  EXPECT_EQ(d.concurrent_ns, 70);
  EXPECT_DOUBLE_EQ(d.kernel_concurrency, 70.0 / 220);
  EXPECT_DOUBLE_EQ(d.mean_kernels_in_flight, 290.0 / 220);
  ASSERT_EQ(w.streams.size(), 2u);
  EXPECT_EQ(w.streams[0].stream, 7u);
  EXPECT_EQ(w.streams[0].busy_ns, 170);
  EXPECT_EQ(w.streams[1].busy_ns, 140);
  EXPECT_EQ(w.streams[1].memcpys, 1u);
  // Framework ops: A inside "inner" inside "outer"; B and the copy inside
  // "outer" alone; C launched by no call.
  ASSERT_NE(row(w.ops, "inner"), nullptr);
  EXPECT_EQ(row(w.ops, "inner")->total_ns, 20);
  EXPECT_EQ(row(w.ops, "outer")->total_ns, 150 + 20);
  EXPECT_EQ(row(w.ops, "outer")->with_children_ns, 150 + 20 + 20);
  EXPECT_EQ(row(w.ops, "outer")->count_with_children, 3u);
  ASSERT_NE(row(w.ops, "(no op)"), nullptr);
  EXPECT_EQ(row(w.ops, "(no op)")->total_ns, 120);
  EXPECT_EQ(w.categories.size(), 1u);
}

TEST(WindowStats, NothingOutsideTheWindowAndAnEmptyWindow) {
  const Trace t = hand_worked();
  const WindowStats gap = window_stats(t, {300, 400});
  EXPECT_EQ(gap.kernels + gap.memcpys + gap.memsets, 0u);
  EXPECT_TRUE(gap.devices.empty());
  EXPECT_TRUE(window_stats(t, {500, 400}).kernel_names.empty());
  // A kernel that ends where the window starts is not in it.
  const WindowStats after_a = window_stats(t, {100, 150});
  EXPECT_EQ(row(after_a.kernel_names, "A"), nullptr);
  EXPECT_EQ(after_a.kernels, 1u);  // C
}

// The whole trace as the window: the Profile's numbers.
void expect_whole_trace_is_the_profile(const Trace& t, const std::string& what) {
  const Profile p = analyze(t);
  const WindowStats w = window_stats(t, {t.begin_time(), t.end_time() + 1});
  SCOPED_TRACE(what);
  EXPECT_EQ(w.kernel_time_ns, p.kernel_time_ns);
  // Per name and category, as the hotspots are.
  std::map<std::pair<std::string, KernelCategory>, const Hotspot*> hot;
  for (const Hotspot& h : p.hotspots) hot[{h.name, h.category}] = &h;
  ASSERT_EQ(w.kernel_names.size(), p.hotspots.size());
  for (const WindowRow& r : w.kernel_names) {
    const auto it = hot.find({r.name, r.category});
    ASSERT_NE(it, hot.end()) << r.name;
    EXPECT_EQ(r.count, it->second->stats.count) << r.name;
    EXPECT_EQ(r.total_ns, it->second->stats.total) << r.name;
    EXPECT_NEAR(r.share, it->second->share, 1e-12) << r.name;
  }
  ASSERT_EQ(w.categories.size(), p.categories.size());
  for (std::size_t i = 0; i < w.categories.size(); ++i) {
    EXPECT_EQ(w.categories[i].category, p.categories[i].category);
    EXPECT_EQ(w.categories[i].total_ns, p.categories[i].time_ns);
    EXPECT_EQ(w.categories[i].count, p.categories[i].count);
  }
  // Every op that launched GPU work (the op table also lists those that launched none).
  std::map<std::string, const OpRow*> ops;
  for (const OpRow& o : p.op_names)
    if (o.kernels_total > 0) ops[o.name] = &o;
  EXPECT_EQ(w.ops.size(), ops.size());
  for (const WindowRow& r : w.ops) {
    ASSERT_TRUE(ops.count(r.name)) << r.name;
    EXPECT_EQ(r.total_ns, ops[r.name]->gpu_self_ns) << r.name;
    EXPECT_EQ(r.with_children_ns, ops[r.name]->gpu_total_ns) << r.name;
    EXPECT_EQ(r.count, ops[r.name]->kernels) << r.name;
    EXPECT_EQ(r.count_with_children, ops[r.name]->kernels_total) << r.name;
  }
  std::map<std::uint32_t, const DeviceSummary*> devs;
  for (const DeviceSummary& d : p.devices) devs[d.id] = &d;
  EXPECT_EQ(w.devices.size(), p.devices.size());
  for (const WindowDevice& d : w.devices) {
    ASSERT_TRUE(devs.count(d.device)) << d.device;
    const DeviceSummary& s = *devs[d.device];
    EXPECT_EQ(d.busy_ns, s.busy_ns) << d.device;
    EXPECT_EQ(d.kernel_busy_ns, s.kernel_busy_ns) << d.device;
    EXPECT_EQ(d.kernel_time_ns, s.kernel_time_ns) << d.device;
    EXPECT_EQ(d.kernels, s.kernels) << d.device;
    EXPECT_EQ(d.memcpys, s.memcpys) << d.device;
    EXPECT_EQ(d.memsets, s.memsets) << d.device;
    EXPECT_NEAR(d.kernel_concurrency, s.kernel_concurrency, 1e-9) << d.device;
    EXPECT_NEAR(d.mean_kernels_in_flight, s.mean_kernels_in_flight, 1e-9) << d.device;
  }
}

TEST(WindowStats, TheWholeTraceIsTheReportsNumbers) {
  testing::TrainingTraceOptions o;
  o.kernels = 20'000;
  expect_whole_trace_is_the_profile(testing::training_trace(o), "training trace");
  expect_whole_trace_is_the_profile(hand_worked(), "hand-worked trace");
}

class RealTraces : public ::testing::TestWithParam<std::string> {};

TEST_P(RealTraces, TheWholeTraceIsTheReportsNumbers) {
  const Trace t = open_trace(testing::real_trace(GetParam()));
  expect_whole_trace_is_the_profile(t, GetParam());
}

INSTANTIATE_TEST_SUITE_P(WindowStats, RealTraces, ::testing::ValuesIn(testing::real_trace_files()),
                         testing::TraceFileName());

}  // namespace
}  // namespace gpuscope
