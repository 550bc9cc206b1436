// Interval arithmetic against a brute-force reference: random ranges on a
// small integer grid, where every instant [t, t+1) can simply be counted.
#include "analysis/util/intervals.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "analysis/util/search.h"
#include "analysis/util/stats.h"

namespace gpuscope::intervals {
namespace {

constexpr int kGrid = 64;

std::vector<TimeRange> random_ranges(std::mt19937& rng, int max_count) {
  std::uniform_int_distribution<int> n(0, max_count), t(0, kGrid);
  std::vector<TimeRange> out;
  const int count = n(rng);
  for (int i = 0; i < count; ++i) {
    TimeNs a = t(rng), b = t(rng);
    if (a > b) std::swap(a, b);
    out.push_back({a, b});  // empty ranges included on purpose
  }
  return out;
}

std::vector<bool> covered(const std::vector<TimeRange>& ranges) {
  std::vector<bool> c(kGrid, false);
  for (const TimeRange& r : ranges)
    for (TimeNs t = r.start; t < r.end; ++t) c[static_cast<std::size_t>(t)] = true;
  return c;
}

// Canonical form: sorted, disjoint, non-touching, non-empty.
void expect_canonical(const IntervalSet& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    EXPECT_LT(s[i].start, s[i].end);
    if (i) {
      EXPECT_LT(s[i - 1].end, s[i].start);
    }
  }
}

void expect_same_set(const IntervalSet& s, const std::vector<bool>& want) {
  expect_canonical(s);
  EXPECT_EQ(covered(s), want);
}

TEST(Intervals, UnionAndLengthsMatchBruteForce) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 3000; ++iter) {
    const auto ra = random_ranges(rng, 8), rb = random_ranges(rng, 8);
    const IntervalSet a = union_of(ra), b = union_of(rb);
    const auto ca = covered(ra), cb = covered(rb);
    TimeNs n_both = 0, n_a = 0;
    for (int t = 0; t < kGrid; ++t) {
      n_both += ca[t] && cb[t];
      n_a += ca[t];
    }
    expect_same_set(a, ca);
    EXPECT_EQ(length(a), n_a);
    EXPECT_EQ(intersection_length(a, b), n_both);

    // A window: the clipped length.
    std::uniform_int_distribution<int> t(0, kGrid);
    TimeNs w0 = t(rng), w1 = t(rng);
    if (w0 > w1) std::swap(w0, w1);
    TimeNs inside = 0;
    for (TimeNs x = w0; x < w1; ++x) inside += ca[static_cast<std::size_t>(x)];
    EXPECT_EQ(length_within(a, {w0, w1}), inside);
  }
}

TEST(Intervals, AppendSortedBuildsTheUnionOfSortedRanges) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 1000; ++iter) {
    auto r = random_ranges(rng, 10);
    std::sort(r.begin(), r.end(), [](const TimeRange& x, const TimeRange& y) { return x.start < y.start; });
    IntervalSet s;
    for (const TimeRange& x : r) append_sorted(s, x.start, x.end);
    expect_same_set(s, covered(r));
    EXPECT_EQ(union_of(r), s);
  }
}

// A forward cursor gives length_within's answer for every window of a run
// whose starts never decrease (ends in any order), and its pieces cover the
// same instants.
TEST(Intervals, ForwardLengthMatchesLengthWithinOnWindowsInStartOrder) {
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> t(0, kGrid);
  for (int iter = 0; iter < 2000; ++iter) {
    const auto ra = random_ranges(rng, 8);
    const IntervalSet a = union_of(ra);
    const auto ca = covered(ra);
    std::vector<TimeRange> windows(static_cast<std::size_t>(t(rng) % 12));
    for (TimeRange& w : windows) {
      w.start = t(rng), w.end = t(rng);
      if (w.start > w.end) std::swap(w.start, w.end);
    }
    std::sort(windows.begin(), windows.end(), [](const TimeRange& x, const TimeRange& y) { return x.start < y.start; });
    ForwardLength forward(a);
    for (const TimeRange& w : windows) {
      std::vector<bool> seen(kGrid, false);
      TimeNs last_end = w.start;
      forward.pieces(w.start, w.end, [&](TimeNs s, TimeNs e) {
        EXPECT_LE(last_end, s);
        EXPECT_LT(s, e);
        for (TimeNs x = s; x < e; ++x) seen[static_cast<std::size_t>(x)] = true;
        last_end = e;
      });
      for (TimeNs x = 0; x < kGrid; ++x)
        EXPECT_EQ(seen[static_cast<std::size_t>(x)], x >= w.start && x < w.end && ca[static_cast<std::size_t>(x)]);
      EXPECT_EQ(forward.length(w.start, w.end), length_within(a, w));
    }
  }
}

TEST(Intervals, TouchingRangesMerge) {
  EXPECT_EQ(union_of({{0, 10}, {10, 20}}), (IntervalSet{{0, 20}}));
  EXPECT_EQ(intersection_length({{0, 10}}, {{10, 20}}), 0);
}

TEST(Stats, SelectKthMatchesSortingForSmallAndLargeInputs) {
  std::mt19937_64 rng(9);
  for (std::size_t n : {1u, 2u, 3u, 10u, 4095u, 4096u, 5000u, 100000u}) {
    std::vector<TimeNs> v(n);
    for (TimeNs& x : v) x = static_cast<TimeNs>(rng() % 1'000'000'000) - 300'000'000;  // negative values too
    if (n > 10) v[n / 2] = v[0];                                                       // duplicates
    auto sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t k : {std::size_t{0}, (n - 1) / 2, n - 1}) {
      auto copy = v;
      EXPECT_EQ(select_kth(copy, k), sorted[k]) << "n=" << n << " k=" << k;
    }
  }
  std::vector<TimeNs> same(10000, 42);
  EXPECT_EQ(select_kth(same, 5000), 42);
}

// The bucket rounds on inputs that stress them: extremes of int64 (the range
// needs every round), a few huge outliers over a narrow band (the first round
// puts nearly everything in one bucket), many duplicates, and the overload
// that is given the minimum and maximum.
TEST(Stats, SelectKthNarrowsSkewedAndExtremeInputs) {
  std::mt19937_64 rng(10);
  std::vector<std::vector<TimeNs>> inputs;
  {
    std::vector<TimeNs> v(50000);
    for (TimeNs& x : v) x = static_cast<TimeNs>(rng());  // all of int64
    v[1] = std::numeric_limits<TimeNs>::min();
    v[2] = std::numeric_limits<TimeNs>::max();
    inputs.push_back(v);
  }
  {
    std::vector<TimeNs> v(60000);
    for (TimeNs& x : v) x = 1'000 + static_cast<TimeNs>(rng() % 50);                           // a narrow band…
    for (int i = 0; i < 5; ++i) v[rng() % v.size()] = std::numeric_limits<TimeNs>::max() - i;  // …and outliers
    v[7] = -5;
    inputs.push_back(v);
  }
  {
    std::vector<TimeNs> v(20000);
    for (TimeNs& x : v) x = static_cast<TimeNs>(rng() % 3);  // duplicates only
    inputs.push_back(v);
  }
  for (const auto& v : inputs) {
    auto sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t k :
         {std::size_t{0}, std::size_t{1}, v.size() / 3, (v.size() - 1) / 2, v.size() - 2, v.size() - 1}) {
      auto a = v;
      EXPECT_EQ(select_kth(a, k), sorted[k]) << "n=" << v.size() << " k=" << k;
      auto b = v;
      EXPECT_EQ(select_kth(b, k, sorted.front(), sorted.back()), sorted[k]) << "n=" << v.size() << " k=" << k;
    }
  }
}

// Galloping from a hint finds what lower_bound finds, from every hint, on
// sorted columns with runs of equal values, and on empty and one-row ranges.
TEST(Search, FirstAtOrAfterMatchesLowerBoundFromAnyHint) {
  std::mt19937_64 rng(14);
  for (int round = 0; round < 200; ++round) {
    std::vector<TimeNs> v(rng() % 300);
    TimeNs x = 0;
    for (TimeNs& e : v) e = x += static_cast<TimeNs>(rng() % 4);  // sorted, with repeats
    const auto n = static_cast<RowIndex>(v.size());
    const RowIndex lo = n ? static_cast<RowIndex>(rng() % (n + 1)) : 0;
    const RowIndex hi = lo + (n - lo ? static_cast<RowIndex>(rng() % (n - lo + 1)) : 0);
    for (int q = 0; q < 50; ++q) {
      const TimeNs want_at =
          static_cast<TimeNs>(rng() % (v.empty() ? 3 : static_cast<std::uint64_t>(v.back()) + 3)) - 1;
      const RowIndex hint = static_cast<RowIndex>(rng() % (n + 5));
      const auto expect = static_cast<RowIndex>(std::lower_bound(v.begin() + lo, v.begin() + hi, want_at) - v.begin());
      ASSERT_EQ(detail::first_at_or_after(v.data(), lo, hi, hint, want_at), expect)
          << "n=" << n << " lo=" << lo << " hi=" << hi << " hint=" << hint << " x=" << want_at;
    }
  }
}

// The first row of a byte column with a value: what a loop over the rows finds,
// from any start, at either end of the column and past a 32-byte block.
TEST(Search, FirstWithByteMatchesALoop) {
  std::mt19937_64 rng(15);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::uint8_t> v(rng() % 200);
    for (std::uint8_t& b : v) b = static_cast<std::uint8_t>(rng() % (round % 3 == 0 ? 40 : 4));
    const auto n = static_cast<RowIndex>(v.size());
    for (int q = 0; q < 20; ++q) {
      const RowIndex from = static_cast<RowIndex>(rng() % (n + 2)), to = static_cast<RowIndex>(rng() % (n + 1));
      const auto value = static_cast<std::uint8_t>(rng() % 4);
      RowIndex expect = to;
      for (RowIndex i = from; i < to; ++i)
        if (v[i] == value) {
          expect = i;
          break;
        }
      ASSERT_EQ(detail::first_with_byte(v.data(), from, to, value), expect)
          << "n=" << n << " from=" << from << " to=" << to << " value=" << int{value};
    }
  }
}

// BracketMedian against sorting: a sample of one value in kStride brackets the
// median, the second scan keeps only what falls inside. Spread values, a
// single repeated value (counted, not kept), a small input (kept whole), a
// sample that aliases with a period of the data (finish() says it missed),
// and more values inside the bracket than it may keep.
TEST(Stats, BracketMedianIsExactOrSaysItMissed) {
  auto run = [](const std::vector<TimeNs>& v, std::size_t stride, DurationStats* out) {
    BracketMedian m;
    for (std::size_t i = 0; i < v.size(); i += stride) m.sample(v[i]);
    m.bracket();
    for (TimeNs x : v) m.add(x);
    const bool ok = m.finish();
    *out = m.stats();
    return ok;
  };
  auto expect_exact = [&](std::vector<TimeNs> v, std::size_t stride, const char* what) {
    DurationStats got;
    ASSERT_TRUE(run(v, stride, &got)) << what;
    std::sort(v.begin(), v.end());
    EXPECT_EQ(got.count, v.size()) << what;
    EXPECT_EQ(got.min, v.front()) << what;
    EXPECT_EQ(got.max, v.back()) << what;
    EXPECT_EQ(got.total, std::accumulate(v.begin(), v.end(), TimeNs{0})) << what;
    EXPECT_EQ(got.median, v[(v.size() - 1) / 2]) << what;
  };
  std::mt19937_64 rng(12);
  {
    std::vector<TimeNs> v(400'000);
    for (TimeNs& x : v) x = static_cast<TimeNs>(rng() % 1'000'000) - 1'000;
    expect_exact(v, BracketMedian::kStride, "spread");
  }
  expect_exact(std::vector<TimeNs>(300'000, 4'200), BracketMedian::kStride, "one value");
  {
    std::vector<TimeNs> v(3'000);
    for (TimeNs& x : v) x = static_cast<TimeNs>(rng() % 100);
    expect_exact(v, BracketMedian::kStride, "small");
  }
  {
    // Every kStride-th value is large, the rest small: the sample sees only
    // large ones, the bracket misses the median.
    std::vector<TimeNs> v(300'000);
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = i % BracketMedian::kStride == 0 ? 1'000'000 : 50 + static_cast<TimeNs>(i % 7);
    DurationStats got;
    EXPECT_FALSE(run(v, BracketMedian::kStride, &got));
    EXPECT_EQ(got.count, v.size());  // the rest is still exact
    EXPECT_EQ(got.max, 1'000'000);
  }
  // A sample of 2,100 spread values brackets a range that 2.1M values fall
  // in: more than kKeep to keep when the bracket is wide (finish() says it
  // missed); counted per value, and exact, when it is narrow.
  for (const TimeNs spacing : {TimeNs{100'000}, TimeNs{1}}) {
    std::vector<TimeNs> all;
    BracketMedian m;
    for (int i = 0; i < 2'100; ++i) m.sample(i * spacing), all.push_back(i * spacing);
    m.bracket();
    for (int i = 0; i < 2'100'000; ++i) all.push_back(1'050 * spacing + static_cast<TimeNs>(rng() % 3));
    for (TimeNs x : all) m.add(x);
    if (spacing > 1) {
      EXPECT_FALSE(m.finish());
    } else {
      ASSERT_TRUE(m.finish());
      std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>((all.size() - 1) / 2), all.end());
      EXPECT_EQ(m.stats().median, all[(all.size() - 1) / 2]);
    }
  }
}

// The stream passes hand BracketMedian their values through a Placer, in
// runs (LaunchValues' chunks): the same answer as add() one by one, for spread
// values (a narrow bracket: counted per value), one repeated value (counted),
// many equal values in the bracket, values spread wider than the histogram
// (kept, branch-free), and more inside than it may keep (finish() says so
// either way).
TEST(Stats, BracketMedianPlacerRunsMatchOneByOne) {
  std::mt19937_64 rng(13);
  std::vector<std::pair<const char*, std::vector<TimeNs>>> inputs;
  {
    std::vector<TimeNs> v(300'000);
    for (TimeNs& x : v) x = static_cast<TimeNs>(rng() % 1'000'000) - 1'000;
    inputs.push_back({"spread", v});
  }
  inputs.push_back({"one value", std::vector<TimeNs>(200'000, 4'200)});
  {
    std::vector<TimeNs> v(300'000);  // 40% at the median, the rest on both sides
    for (TimeNs& x : v) x = rng() % 10 < 4 ? 2'000 : static_cast<TimeNs>(rng() % 4'000);
    inputs.push_back({"equal values", v});
  }
  {
    std::vector<TimeNs> v(300'000);  // spread wider than the histogram: values kept
    for (TimeNs& x : v) x = static_cast<TimeNs>(rng() % 1'000'000'000);
    inputs.push_back({"wide", v});
  }
  {
    // A crowded bracket: a sample of 2,100 spread values brackets a wide
    // range that more than kKeep values fall in (as in the test above).
    std::vector<TimeNs> v(BracketMedian::kKeep + 300'000);
    for (TimeNs& x : v) x = 105'000'000 + static_cast<TimeNs>(rng() % 3);
    inputs.push_back({"crowded", v});
  }
  for (const auto& [what, v] : inputs) {
    const bool crowded = std::string_view(what) == "crowded";
    auto sampled = [&] {
      BracketMedian m;
      if (crowded) {
        for (int i = 0; i < 2'100; ++i) m.sample(i * TimeNs{100'000});
      } else {
        for (std::size_t i = 0; i < v.size(); i += BracketMedian::kStride) m.sample(v[i]);
      }
      m.bracket();
      return m;
    };
    BracketMedian one = sampled();
    for (TimeNs x : v) one.add(x);
    const bool one_ok = one.finish();
    for (std::size_t run : {std::size_t{1}, std::size_t{7}, std::size_t{2'048}, v.size()}) {
      BracketMedian m = sampled();
      BracketMedian::Placer place(m);
      TimeNs total = 0, lo = v[0], hi = v[0];
      for (std::size_t i = 0; i < v.size(); i += run) {
        const std::size_t n = std::min(run, v.size() - i);
        if (i % (3 * run) == 0)
          place.place(v[i]), place.place(v.data() + i + 1, n - 1);  // both entry points
        else
          place.place(v.data() + i, n);
        if (i % (5 * run) == 0) place.done();  // handed over now and then, as per stream
      }
      place.done();
      for (TimeNs x : v) total += x, lo = std::min(lo, x), hi = std::max(hi, x);
      m.add_totals(v.size(), total, lo, hi);
      EXPECT_EQ(m.finish(), one_ok) << what << " run " << run;
      EXPECT_EQ(m.stats().count, one.stats().count) << what << " run " << run;
      if (one_ok) {
        EXPECT_EQ(m.stats().median, one.stats().median) << what << " run " << run;
      }
    }
    if (crowded) {
      EXPECT_FALSE(one_ok);
    } else {
      EXPECT_TRUE(one_ok) << what;
    }
  }
}

// StreamingStats against sorting: the same count/total/min/max/mean/median as
// summarize(), over several quantities at once, including inputs whose median
// bucket holds more than kKeep values (narrowed by further scans) and extremes.
TEST(Stats, StreamingStatsMatchSummarize) {
  std::mt19937_64 rng(11);
  const std::size_t big = StreamingStats::kKeep * 3;
  std::vector<std::vector<TimeNs>> inputs;
  inputs.push_back({});
  inputs.push_back({7});
  inputs.push_back({5, 1, 4, 2});
  inputs.push_back(std::vector<TimeNs>(big, 42));  // one value: resolved without keeping any
  {
    std::vector<TimeNs> v(big);  // a narrow band: the median bucket is crowded
    for (TimeNs& x : v) x = 4'750 + static_cast<TimeNs>(rng() % 500);
    inputs.push_back(v);
  }
  {
    std::vector<TimeNs> v(big);  // crowded and wide: linear buckets of 2^shift
    for (TimeNs& x : v) x = (TimeNs{1} << 40) + static_cast<TimeNs>(rng() % (std::uint64_t{1} << 33));
    inputs.push_back(v);
  }
  {
    std::vector<TimeNs> v(200'000);  // negatives, duplicates, extremes
    for (TimeNs& x : v) x = static_cast<TimeNs>(rng() % 2'000'000) - 1'000'000;
    v[1] = std::numeric_limits<TimeNs>::min() / 4;
    v[2] = std::numeric_limits<TimeNs>::max() / 4;
    v[3] = std::numeric_limits<TimeNs>::min() / 4 + 1;
    inputs.push_back(v);
  }
  inputs.push_back({std::numeric_limits<TimeNs>::min()});  // the one value of the lowest bucket
  inputs.push_back({std::numeric_limits<TimeNs>::max()});
  {
    std::vector<TimeNs> v(big);  // negative and crowded
    for (TimeNs& x : v) x = -static_cast<TimeNs>(rng() % 3000) - 1'000'000;
    inputs.push_back(v);
  }
  StreamingStats s(inputs.size());
  int scans = 0;
  do {
    for (std::size_t q = 0; q < inputs.size(); ++q)
      for (TimeNs v : inputs[q]) s.add(q, v);
    s.end_pass();
    ++scans;
  } while (!s.done());
  EXPECT_LE(scans, 5);
  for (std::size_t q = 0; q < inputs.size(); ++q) {
    auto copy = inputs[q];
    const DurationStats want = summarize(copy);
    const DurationStats& got = s.stats(q);
    EXPECT_EQ(got.count, inputs[q].size()) << q;
    if (inputs[q].empty()) continue;
    auto sorted = inputs[q];
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(got.median, sorted[(sorted.size() - 1) / 2]) << q;
    EXPECT_EQ(got.min, sorted.front()) << q;
    EXPECT_EQ(got.max, sorted.back()) << q;
    EXPECT_EQ(got.total, want.total) << q;
    EXPECT_EQ(got.mean, want.mean) << q;
  }
}

TEST(Stats, SummarizeGivesTheLowerMedianAndExactTotals) {
  std::vector<TimeNs> v{5, 1, 4, 2};
  const DurationStats s = summarize(v);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.total, 12);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 5);
  EXPECT_EQ(s.mean, 3);
  EXPECT_EQ(s.median, 2);
  std::vector<TimeNs> none;
  EXPECT_EQ(summarize(none).count, 0u);
}

}  // namespace
}  // namespace gpuscope::intervals
