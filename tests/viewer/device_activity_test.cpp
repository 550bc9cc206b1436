#include "viewer/device_activity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "trace/builder.h"

namespace gpuscope::viewer {
namespace {

struct Op {
  TimeNs s, e;
  bool kernel;
};

// Random GPU ops on `streams` streams of device 0 (overlapping across
// streams, back to back or with gaps within one), plus a decoy device 1.
Trace random_trace(std::mt19937_64& rng, std::vector<Op>* ops, int streams, int per_stream) {
  TraceBuilder b;
  for (int s = 0; s < streams; ++s) {
    const TrackId t = b.gpu_track(0, static_cast<std::uint32_t>(s));
    TimeNs now = static_cast<TimeNs>(rng() % 10'000);
    for (int i = 0; i < per_stream; ++i) {
      now += static_cast<TimeNs>(rng() % 3 == 0 ? rng() % 20'000 : rng() % 100);
      const TimeNs len = 1 + static_cast<TimeNs>(rng() % 5'000);
      if (rng() % 8 == 0) {
        MemcpyRow m;
        m.track = t;
        m.start = now;
        m.end = now + len;
        b.add_memcpy(m);
        ops->push_back({now, now + len, false});
      } else {
        KernelRow k;
        k.track = t;
        k.start = now;
        k.end = now + len;
        b.add_kernel(k);
        ops->push_back({now, now + len, true});
      }
      now += len;
    }
  }
  KernelRow decoy;
  decoy.track = b.gpu_track(1, 0);
  decoy.start = 0;
  decoy.end = 1'000'000'000;
  b.add_kernel(decoy);
  return b.freeze();
}

// Exact coverage of [a, b) by the union of ops and by the kernel sum.
void brute(const std::vector<Op>& ops, double a, double b, double* busy, double* kern) {
  std::vector<std::pair<double, double>> iv;
  *kern = 0;
  for (const Op& o : ops) {
    const double s = std::max(a, static_cast<double>(o.s)), e = std::min(b, static_cast<double>(o.e));
    if (e <= s) continue;
    iv.emplace_back(s, e);
    if (o.kernel) *kern += e - s;
  }
  std::sort(iv.begin(), iv.end());
  *busy = 0;
  double cs = 0, ce = -1;
  for (auto [s, e] : iv) {
    if (s > ce) {
      if (ce > cs) *busy += ce - cs;
      cs = s;
      ce = e;
    } else {
      ce = std::max(ce, e);
    }
  }
  if (ce > cs) *busy += ce - cs;
}

TEST(DeviceActivity, TotalsMatchBruteForce) {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 30; ++iter) {
    std::vector<Op> ops;
    const Trace t = random_trace(rng, &ops, 1 + static_cast<int>(rng() % 5), 1 + static_cast<int>(rng() % 3000));
    const DeviceActivity a = DeviceActivity::build(t, 0);
    double busy = 0, kern = 0;
    brute(ops, -1e18, 1e18, &busy, &kern);
    EXPECT_EQ(a.total_busy_ns(), static_cast<TimeNs>(busy));
    EXPECT_EQ(a.total_kernel_ns(), static_cast<TimeNs>(kern));
    EXPECT_EQ(a.ops(), ops.size());
    EXPECT_EQ(a.tracks().size(), t.tracks().size() - 1);  // not the decoy device's track
  }
}

TEST(DeviceActivity, ExactColumnsMatchBruteForce) {
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 40; ++iter) {
    std::vector<Op> ops;
    const Trace t = random_trace(rng, &ops, 1 + static_cast<int>(rng() % 4), 50 + static_cast<int>(rng() % 300));
    const DeviceActivity a = DeviceActivity::build(t, 0);
    const std::size_t cols = 1 + rng() % 300;
    const double npp = 1 + static_cast<double>(rng() % 3000);
    const TimeNs v0 = a.begin() + static_cast<TimeNs>(rng() % 100'000) - 20'000;
    std::vector<LaneSample> out(cols);
    ASSERT_TRUE(a.sample_exact(t, v0, npp, out, 1'000'000));
    for (std::size_t c = 0; c < cols; ++c) {
      double busy = 0, kern = 0;
      const double ca = static_cast<double>(v0) + static_cast<double>(c) * npp;
      brute(ops, ca, ca + npp, &busy, &kern);
      ASSERT_NEAR(out[c].busy, busy / npp, 1e-4) << "column " << c;
      ASSERT_NEAR(out[c].in_flight, kern / npp, 1e-4 * std::max(1.0, kern / npp)) << "column " << c;
    }
  }
}

// The bucket path interpolates inside a bucket, so one column is only
// approximately right; summed over a window it is off by at most the two
// partial buckets at the window's ends.
TEST(DeviceActivity, BucketColumnsSumToTheWindowWithinTwoBuckets) {
  std::mt19937_64 rng(9);
  for (int iter = 0; iter < 20; ++iter) {
    std::vector<Op> ops;
    const Trace t = random_trace(rng, &ops, 3, 5000);
    const DeviceActivity a = DeviceActivity::build(t, 0, 4096);
    const std::size_t cols = 200 + rng() % 800;
    const double span = static_cast<double>(a.end() - a.begin());
    const double npp = span / static_cast<double>(cols) * (0.2 + static_cast<double>(rng() % 100) / 100.0);
    const TimeNs v0 = a.begin() + static_cast<TimeNs>(static_cast<double>(rng() % 1000) / 1000.0 * span * 0.5);
    std::vector<LaneSample> out(cols);
    a.sample_buckets(v0, npp, out);
    double sum_busy = 0, sum_kern = 0;
    for (const LaneSample& s : out) {
      ASSERT_GE(s.busy, 0.0f);
      ASSERT_LE(s.busy, 1.0f);
      sum_busy += s.busy * npp;
      sum_kern += s.in_flight * npp;
    }
    double busy = 0, kern = 0;
    brute(ops, static_cast<double>(v0), static_cast<double>(v0) + npp * static_cast<double>(cols), &busy, &kern);
    const double tol =
        2.0 * static_cast<double>(a.bucket_ns()) * 3 + 1e-3 * busy;  // 3 streams: kernel ns per bucket ≤ 3× its width
    EXPECT_NEAR(sum_busy, busy, tol);
    EXPECT_NEAR(sum_kern, kern, tol);
  }
}

TEST(DeviceActivity, SampleFallsBackToBucketsWhenTooManyOpsAreVisible) {
  std::mt19937_64 rng(1);
  std::vector<Op> ops;
  const Trace t = random_trace(rng, &ops, 2, 20000);
  const DeviceActivity a = DeviceActivity::build(t, 0, 1u << 20);
  std::vector<LaneSample> out(100);
  // Zoomed in below a bucket but with a tiny limit: the exact path refuses.
  EXPECT_FALSE(a.sample_exact(t, a.begin(), static_cast<double>(a.end() - a.begin()) / 100, out, 10));
  a.sample(t, a.begin(), static_cast<double>(a.end() - a.begin()) / 100, out, 10);
  double s = 0;
  for (const LaneSample& x : out) s += x.busy;
  EXPECT_GT(s, 0);
}

TEST(IntervalUnion, MergesTouchingAndOverlappingIntervals) {
  IntervalUnion u;
  std::vector<std::pair<TimeNs, TimeNs>> out;
  auto emit = [&](TimeNs s, TimeNs e) { out.emplace_back(s, e); };
  u.add(0, 10, emit);
  u.add(5, 12, emit);
  u.add(12, 15, emit);
  u.add(20, 21, emit);
  u.finish(emit);
  EXPECT_EQ(out, (std::vector<std::pair<TimeNs, TimeNs>>{{0, 15}, {20, 21}}));
}

// Epoch-scale timestamps (Kineto and CUPTI record ns since 1970: 1.7e18) are
// doubles with a 256 ns step. A view 1 ms wide over a half-busy bucket must
// read the same share in every column, not one jittered by that step.
TEST(DeviceActivity, EpochScaleTimesSampleEvenlyInsideABucket) {
  constexpr TimeNs kEpoch = 1'700'000'001'239'343'245;
  TraceBuilder b;
  const TrackId t = b.gpu_track(0, 0);
  for (int i = 0; i < 2000; ++i) {  // 10 µs period, 5 µs busy: half busy everywhere
    KernelRow k;
    k.track = t;
    k.start = kEpoch + i * 10'000;
    k.end = k.start + 5'000;
    b.add_kernel(k);
  }
  const Trace trace = b.freeze();
  const DeviceActivity a = DeviceActivity::build(trace, 0, 16);  // 16 buckets: 1.25 ms each
  ASSERT_GE(a.bucket_ns(), 1'000'000);
  std::vector<LaneSample> cols(1000);
  a.sample_buckets(a.begin() + a.bucket_ns() / 8, 700.0, cols);  // 0.7 ms inside one bucket
  for (const LaneSample& c : cols) EXPECT_NEAR(c.busy, 0.5, 0.01);
}

// A damaged or hostile trace may hold times at both ends of int64: its span
// does not fit in one. The lanes are built over what fits, never throw, and
// read shares in [0, 1].
TEST(DeviceActivity, TimesAtBothEndsOfInt64BuildBoundedLanes) {
  constexpr TimeNs kMin = std::numeric_limits<TimeNs>::min(), kMax = std::numeric_limits<TimeNs>::max();
  TraceBuilder b;
  const TrackId t0 = b.gpu_track(0, 0), t1 = b.gpu_track(0, 1);
  auto kernel = [&](TrackId t, TimeNs s, TimeNs e) {
    KernelRow k;
    k.track = t;
    k.start = s;
    k.end = e;
    b.add_kernel(k);
  };
  kernel(t0, kMin, kMin + 1000);
  kernel(t0, -5, 5);
  kernel(t0, kMax - 1000, kMax);
  kernel(t1, kMin + 10, kMin / 2);  // long ones at both ends
  kernel(t1, kMax / 2, kMax);
  const Trace trace = b.freeze();
  const DeviceActivity a = DeviceActivity::build(trace, 0, 64);
  EXPECT_GT(a.buckets(), 0u);
  EXPECT_LE(a.buckets(), 1025u);
  EXPECT_GE(a.total_busy_ns(), 0);
  EXPECT_GE(a.total_kernel_ns(), 0);
  std::vector<LaneSample> cols(200);
  for (TimeNs start : {kMin, TimeNs{0}, kMax - 1'000'000}) {
    a.sample_buckets(start, 1e15, cols);
    for (const LaneSample& c : cols) {
      EXPECT_GE(c.busy, 0.0f);
      EXPECT_LE(c.busy, 1.0f);
    }
  }
}

}  // namespace
}  // namespace gpuscope::viewer
