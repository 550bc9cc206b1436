// The device sweep against a brute-force reference: random ops on a few
// streams of one GPU — overlapping across streams, back to back, with gaps,
// zero-length, starting at the same instant, now and then overlapping the
// previous op of their own stream — and every union and overlap figure
// recomputed from the elementary intervals between all starts and ends.
// The sweep takes most of a stream's ops in stretches without its merge;
// these traces make it leave and re-enter that path in every way.
#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/analyze.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;
namespace names = testing::names;

enum class Kind { compute, comm, optimizer, copy, fill };

struct Op {
  TimeNs start, end;
  Kind kind;
};

struct Figures {
  TimeNs busy = 0, kernel_busy = 0, multi = 0, compute = 0, comm = 0, exposed_comm = 0, copy = 0, copy_exposed = 0,
         kernel_time = 0;
};

Figures brute_force(const std::vector<Op>& ops) {
  std::vector<TimeNs> at;
  for (const Op& o : ops) at.push_back(o.start), at.push_back(o.end);
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  Figures f;
  for (const Op& o : ops)
    if (o.kind != Kind::copy && o.kind != Kind::fill) f.kernel_time += o.end - o.start;
  for (std::size_t i = 0; i + 1 < at.size(); ++i) {
    const TimeNs a = at[i], b = at[i + 1], dt = b - a;
    int kernels = 0, compute = 0, comm = 0, copies = 0, any = 0;
    for (const Op& o : ops) {
      if (o.start > a || o.end < b || o.start == o.end) continue;  // covers [a, b)
      ++any;
      switch (o.kind) {
        case Kind::compute:
        case Kind::optimizer: ++kernels, ++compute; break;
        case Kind::comm: ++kernels, ++comm; break;
        case Kind::copy: ++copies; break;
        case Kind::fill: break;
      }
    }
    if (any) f.busy += dt;
    if (kernels) f.kernel_busy += dt;
    if (kernels >= 2) f.multi += dt;
    if (compute) f.compute += dt;
    if (comm) f.comm += dt;
    if (comm && !compute) f.exposed_comm += dt;
    if (copies) f.copy += dt;
    if (copies && !kernels) f.copy_exposed += dt;
  }
  return f;
}

TEST(Sweep, DeviceFiguresMatchBruteForceOnRandomStreams) {
  for (unsigned seed = 0; seed < 300; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    TraceFactory f;
    f.device(0, 10);
    std::vector<Op> ops;
    const int streams = 1 + pick(4);
    for (int s = 1; s <= streams; ++s) {
      TimeNs t = 1'000'000 + 1'000 * pick(20);
      const int n = 1 + pick(s == 1 ? 60 : 15);  // one busy stream, a few lighter ones
      for (int i = 0; i < n; ++i) {
        const int g = pick(6);
        t += g == 0 ? 0 : g < 3 ? 1'000 * pick(5) : 20'000 * (1 + pick(3));  // back to back, short or long gaps
        if (pick(12) == 0) t -= 2'000;                                       // overlaps its predecessor
        const int d = pick(8);
        const TimeNs dur = d == 0 ? 0 : d < 6 ? 1'000 * (1 + pick(8)) : 50'000;
        const Kind kind = static_cast<Kind>(pick(10) < 6 ? 0 : pick(5));
        const TimeNs start = std::max<TimeNs>(t, 1'000'000), end = start + dur;
        switch (kind) {
          case Kind::compute: f.kernel(0, s, names::kRelu, start, end); break;
          case Kind::comm: f.kernel(0, s, names::kAllReduce, start, end); break;
          case Kind::optimizer: f.kernel(0, s, names::kSgd, start, end); break;
          case Kind::copy:
            f.memcpy(0, s, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 4096, start, end);
            break;
          case Kind::fill: f.memset(0, s, start, end); break;
        }
        ops.push_back({start, end, kind});
        t = std::max(t, end);
      }
    }
    const Trace trace = f.build();
    const Profile p = analyze(trace);
    ASSERT_EQ(p.devices.size(), 1u) << "seed " << seed;
    const DeviceSummary& d = p.devices[0];
    const Figures want = brute_force(ops);
    SCOPED_TRACE("seed " + std::to_string(seed));
    EXPECT_EQ(d.busy_ns, want.busy);
    EXPECT_EQ(d.kernel_busy_ns, want.kernel_busy);
    EXPECT_EQ(d.compute_ns, want.compute);
    EXPECT_EQ(d.communication_ns, want.comm);
    EXPECT_EQ(d.exposed_communication_ns, want.exposed_comm);
    EXPECT_EQ(d.memcpy_ns, want.copy);
    EXPECT_EQ(d.memcpy_exposed_ns, want.copy_exposed);
    EXPECT_EQ(d.kernel_time_ns, want.kernel_time);
    if (want.kernel_busy > 0) {
      EXPECT_DOUBLE_EQ(d.kernel_concurrency, double(want.multi) / double(want.kernel_busy));
      EXPECT_DOUBLE_EQ(d.mean_kernels_in_flight, double(want.kernel_time) / double(want.kernel_busy));
    }
    TimeNs first = ops[0].start, last = ops[0].end;
    for (const Op& o : ops) first = std::min(first, o.start), last = std::max(last, o.end);
    EXPECT_EQ(d.span_ns, last - first);
    EXPECT_EQ(d.idle_ns, d.span_ns - want.busy);
    EXPECT_EQ(d.idle_host_wait_ns + d.idle_kernel_wait_ns + d.idle_other_ns, d.idle_ns);
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace gpuscope
