// HTA emulation on hand-made traces: the ProfilerStep filter, the µs grid of
// sub-µs JSON with its double rounding, pandas-style merging, the per-stream
// idle rules. The real traces are checked against HTA's own numbers in
// golden_test.cpp.
#include "analysis/passes/hta.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;

void sub_us(TraceFactory& f, TimeNs origin = 0) {
  f.meta().set_property("chrome.sub_us_timestamps", "1");
  f.meta().set_property("chrome.ts_origin_ns", std::to_string(origin));
}

TEST(Hta, TemporalBreakdownOfAnIntegerMicrosecondTrace) {
  TraceFactory f(3);
  f.kernel(0, 7, "conv", 0, 10'000);
  f.kernel(0, 7, "ncclKernel_AllReduce", 12'000, 20'000);
  f.memcpy(0, 8, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 10, 15'000, 25'000);
  const Trace t = f.build();
  const TemporalBreakdown b = hta_temporal_breakdown(t);
  EXPECT_EQ(b.rank, 3);
  EXPECT_EQ(b.span_ns, 25'000);
  EXPECT_EQ(b.idle_ns, 2'000);
  EXPECT_EQ(b.compute_ns, 10'000);
  EXPECT_EQ(b.non_compute_ns, 13'000);
  EXPECT_DOUBLE_EQ(b.idle_share + b.compute_share + b.non_compute_share, 1.0);
}

TEST(Hta, StreamSyncsCountAsNonComputeGpuOps) {
  TraceFactory f;
  f.kernel(0, 7, "conv", 0, 10'000);
  f.sync(SyncType::stream, 0, 7, 10'000, 20'000);     // Kineto's "Stream Sync" has a stream
  f.sync(SyncType::event, 0, kNoId, 20'000, 90'000);  // "Event Sync": stream -1, dropped
  const Trace t = f.build();
  const TemporalBreakdown b = hta_temporal_breakdown(t);
  EXPECT_EQ(b.span_ns, 20'000);
  EXPECT_EQ(b.non_compute_ns, 10'000);
}

TEST(Hta, ProfilerStepFilterDropsTheLastIteration) {
  TraceFactory f;
  for (int s = 0; s < 3; ++s)
    f.range("ProfilerStep#" + std::to_string(s), s * 100'000, s * 100'000 + 90'000, 1, RangeKind::annotation,
            "user_annotation");
  f.kernel(0, 7, "a", 10'000, 20'000, 5'000);                      // launched in step 0: kept
  f.kernel(0, 7, "b", 150'000, 160'000, 140'000);                  // step 1: kept
  f.kernel(0, 7, "c", 210'000, 290'000, 205'000);                  // launched in the last step: dropped
  f.kernel(0, 7, "d", 295'000, 300'000, TraceFactory::kNoLaunch);  // no correlation (0): kept
  const Trace t = f.build();
  const TemporalBreakdown b = hta_temporal_breakdown(t);
  EXPECT_EQ(b.span_ns, 290'000);
  EXPECT_EQ(b.compute_ns, 25'000);
}

TEST(Hta, SubMicrosecondTracesUseThePandasDoubleOfTheJsonMicroseconds) {
  // ts = 1712195495519689.047 µs is 1712195495519689.0 as a double (spacing
  // 0.25 at 1.7e15), so HTA's ceil gives ...689, not ...690.
  TraceFactory f;
  sub_us(f);
  const TimeNs start = 1712195495519689047;
  f.kernel(0, 7, "conv", start, start + 63'813, TraceFactory::kNoLaunch);
  const Trace t = f.build();
  const TemporalBreakdown b = hta_temporal_breakdown(t);
  EXPECT_EQ(b.span_ns, 63'000);  // [689, floor(689.0 + 63.813) = 752]
}

// What HTA's pandas reads: the JSON text of the µs, parsed by strtod (which
// rounds correctly, as Python's float() does).
double json_us_through_text(TimeNs ns) {
  char buf[48];
  const long long whole = ns / 1000, frac = ns % 1000;
  if (ns < 0)
    std::snprintf(buf, sizeof buf, "-%llu.%03lld", 0ull - static_cast<unsigned long long>(whole), -frac);
  else
    std::snprintf(buf, sizeof buf, "%lld.%03lld", whole, frac);
  return std::strtod(buf, nullptr);
}

void expect_same_as_text(TimeNs ns) {
  const double want = json_us_through_text(ns), got = detail::hta_json_us(ns);
  ASSERT_EQ(got, want) << ns;  // the same double, bit for bit (never NaN)
}

TEST(Hta, JsonMicrosecondsAreTheDoubleTheTextParsesTo) {
  constexpr TimeNs kMin = std::numeric_limits<TimeNs>::min(), kMax = std::numeric_limits<TimeNs>::max();
  std::vector<TimeNs> edges = {0, 1, -1, 999, 1000, 1001, kMin, kMin + 1, kMax, kMax - 1};
  for (int b = 50; b < 63; ++b) {  // around each power of two from below 2^53 to 2^62
    const TimeNs p = TimeNs{1} << b;
    for (TimeNs d = -3000; d <= 3000; ++d) edges.push_back(p + d), edges.push_back(-p - d);
  }
  // Halfway cases: at 2^50 µs and above a double's spacing is 1/4 µs or more,
  // and odd multiples of 125 ns fall exactly between two doubles.
  for (TimeNs base : {TimeNs{1712195495519689047}, TimeNs{1} << 60, TimeNs{4'000'000'000'000'000'000}})
    for (TimeNs k = 0; k < 20'000; ++k) edges.push_back(base / 1000 * 1000 + k * 125), edges.push_back(-base - k * 125);
  for (TimeNs ns : edges) expect_same_as_text(ns);
  std::mt19937_64 rng(42);
  for (int i = 0; i < 1'000'000; ++i) {
    const int bits = 40 + static_cast<int>(rng() % 24);  // magnitudes 2^40 .. 2^63
    const std::uint64_t r = rng() >> (64 - bits);
    const auto ns = static_cast<TimeNs>(r);
    expect_same_as_text(i % 2 ? ns : -ns);
  }
}

TEST(Hta, RoundedIntervalsMergeThePandasWay) {
  // Relative µs: [5.2, 5.7] becomes [6, 5] (inverted, -1 µs), [10, 12] stays.
  TraceFactory f;
  sub_us(f);
  f.kernel(0, 7, "tiny", 5'200, 5'700, TraceFactory::kNoLaunch);
  f.kernel(0, 7, "k", 10'000, 12'000, TraceFactory::kNoLaunch);
  const Trace t = f.build();
  const TemporalBreakdown b = hta_temporal_breakdown(t);
  EXPECT_EQ(b.span_ns, 6'000);
  EXPECT_EQ(b.idle_ns, 6'000 - (-1'000 + 2'000));
  EXPECT_EQ(b.compute_ns, 1'000);
}

TEST(Hta, IdleBreakdownPerStream) {
  TraceFactory f;
  f.kernel(0, 7, "a", 0, 100'000, -10'000);
  f.kernel(0, 7, "b", 110'000, 200'000, 50'000);   // launched before a ended; gap 10 µs < 30: kernel wait
  f.kernel(0, 7, "c", 300'000, 400'000, 250'000);  // launched after b ended: host wait 100 µs
  f.kernel(0, 7, "d", 500'000, 600'000, 350'000);  // gap 100 µs: other
  f.kernel(0, 9, "e", 0, 10'000, -5'000);
  const Trace t = f.build();
  const auto rows = hta_idle_breakdown(t);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].stream, 7u);
  EXPECT_EQ(rows[0].kernel_wait_ns, 10'000);
  EXPECT_EQ(rows[0].host_wait_ns, 100'000);
  EXPECT_EQ(rows[0].other_ns, 100'000);
  EXPECT_EQ(rows[1].stream, 9u);
  EXPECT_EQ(rows[1].host_wait_ns + rows[1].kernel_wait_ns + rows[1].other_ns, 0);
}

TEST(Hta, CommunicationComputeOverlap) {
  TraceFactory f;
  f.kernel(0, 7, "conv", 0, 100);
  f.kernel(0, 13, "ncclKernel_AllReduce_RING", 50, 250);
  const Trace t = f.build();
  EXPECT_DOUBLE_EQ(hta_comm_comp_overlap(t), 0.25);
  TraceFactory g;
  g.kernel(0, 7, "conv", 0, 100);
  const Trace t2 = g.build();
  EXPECT_LT(hta_comm_comp_overlap(t2), 0);
}

}  // namespace
}  // namespace gpuscope
