#include "viewer/lod.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace gpuscope::viewer {
namespace {

// The rule the binary-search walk implements, written as a plain scan.
std::vector<LodItem> reference(const std::vector<TimeNs>& s, const std::vector<TimeNs>& e, RowIndex lo, RowIndex hi,
                               TimeNs min_ns) {
  std::vector<LodItem> out;
  RowIndex i = lo;
  while (i < hi) {
    if (e[i] - s[i] >= min_ns) {
      out.push_back({i, i + 1, s[i], e[i]});
      ++i;
      continue;
    }
    const RowIndex first = i;
    TimeNs run_end = e[i];
    ++i;
    while (i < hi) {
      if (e[i] < run_end + min_ns) {  // ends inside the run's reach: absorbed whatever its size
        run_end = std::max(run_end, e[i]);
        ++i;
      } else if (e[i] - s[i] < min_ns && s[i] - run_end < min_ns) {  // short and close: extends the run
        run_end = std::max(run_end, e[i]);
        ++i;
      } else {
        break;
      }
    }
    out.push_back({first, i, s[first], run_end});
  }
  return out;
}

struct Lane {
  std::vector<TimeNs> start, end;
};

// Non-overlapping events (a stream's kernels): ends sorted.
Lane random_lane(std::mt19937_64& rng, std::size_t n) {
  Lane l;
  TimeNs t = static_cast<TimeNs>(rng() % 1000);
  const int mode = static_cast<int>(rng() % 3);
  for (std::size_t i = 0; i < n; ++i) {
    // Mixed scales: dense runs of tiny events, long ones, big gaps.
    const TimeNs gap = mode == 0 ? static_cast<TimeNs>(rng() % 50) : static_cast<TimeNs>(rng() % 5000);
    const TimeNs len = rng() % 10 == 0 ? static_cast<TimeNs>(rng() % 100'000) : static_cast<TimeNs>(rng() % 200);
    t += gap;
    l.start.push_back(t);
    l.end.push_back(t + len);
    t += len;
  }
  return l;
}

TEST(Lod, GallopLowerBoundMatchesStdLowerBound) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2000; ++round) {
    const std::size_t n = rng() % 300;
    std::vector<TimeNs> a(n);
    TimeNs t = static_cast<TimeNs>(rng() % 50);
    for (TimeNs& x : a) x = t += static_cast<TimeNs>(rng() % 4);  // with duplicates
    const RowIndex lo = n ? static_cast<RowIndex>(rng() % (n + 1)) : 0;
    const RowIndex hi = static_cast<RowIndex>(lo + (n > lo ? rng() % (n - lo + 1) : 0));
    const TimeNs target = static_cast<TimeNs>(rng() % (t + 60)) - 5;
    const RowIndex want = static_cast<RowIndex>(std::lower_bound(a.data() + lo, a.data() + hi, target) - a.data());
    ASSERT_EQ(gallop_lower_bound(a.data(), lo, hi, target), want) << "n=" << n << " lo=" << lo << " hi=" << hi;
  }
}

TEST(Lod, MatchesTheReferenceScanOnRandomLanes) {
  std::mt19937_64 rng(42);
  for (int iter = 0; iter < 3000; ++iter) {
    const Lane l = random_lane(rng, 1 + rng() % 400);
    const auto n = static_cast<RowIndex>(l.start.size());
    const RowIndex lo = static_cast<RowIndex>(rng() % n);
    const RowIndex hi = lo + static_cast<RowIndex>(rng() % (n - lo + 1));
    const TimeNs min_ns = 1 + static_cast<TimeNs>(rng() % 2000);
    std::vector<LodItem> got;
    for_each_lod_item(l.start.data(), l.end.data(), lo, hi, true, min_ns,
                      [&](const LodItem& it) { got.push_back(it); });
    const std::vector<LodItem> want = reference(l.start, l.end, lo, hi, min_ns);
    ASSERT_EQ(got.size(), want.size()) << "iter " << iter;
    for (std::size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].first, want[k].first);
      ASSERT_EQ(got[k].last, want[k].last);
      ASSERT_EQ(got[k].start, want[k].start);
      ASSERT_EQ(got[k].end, want[k].end);
    }
  }
}

TEST(Lod, ItemsPartitionTheRowsAndAreBoundedByTheSpan) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 2000; ++iter) {
    const Lane l = random_lane(rng, 1 + rng() % 2000);
    const auto n = static_cast<RowIndex>(l.start.size());
    const TimeNs min_ns = 1 + static_cast<TimeNs>(rng() % 5000);
    const bool ends_sorted = rng() % 2 == 0;  // the start-based walk must partition too
    RowIndex next = 0;
    std::size_t items = 0;
    for_each_lod_item(l.start.data(), l.end.data(), 0, n, ends_sorted, min_ns, [&](const LodItem& it) {
      ASSERT_EQ(it.first, next);
      ASSERT_GT(it.last, it.first);
      ASSERT_EQ(it.start, l.start[it.first]);
      ASSERT_GE(it.end, l.end[it.last - 1]);
      if (!it.merged() && it.end - it.start < min_ns) {
        // A lone short event: the next one is long or too far to join it.
      }
      next = it.last;
      ++items;
    });
    ASSERT_EQ(next, n);
    // Any two consecutive items are separated by a long event or a gap of at
    // least min_ns, so there are at most ~2 per min_ns of span.
    const TimeNs span = l.end.back() - l.start.front();
    ASSERT_LE(items, 2 * static_cast<std::size_t>(span / min_ns + 2));
  }
}

TEST(Lod, ZoomedInDrawsEveryEventAlone) {
  std::vector<TimeNs> s, e;
  for (TimeNs i = 0; i < 100; ++i) {
    s.push_back(i * 1000);
    e.push_back(i * 1000 + 600);
  }
  int singles = 0;
  for_each_lod_item(s.data(), e.data(), 0, 100, true, 10, [&](const LodItem& it) { singles += it.merged() ? 0 : 1; });
  EXPECT_EQ(singles, 100);
}

TEST(Lod, ZoomedOutFoldsADenseLaneIntoOneBlockQuickly) {
  // 10 M back-to-back 1 µs events, viewed so that 3 px = 1 s: one block,
  // found with a few dozen binary searches rather than 10 M steps.
  const std::size_t n = 10'000'000;
  std::vector<TimeNs> s(n), e(n);
  for (std::size_t i = 0; i < n; ++i) {
    s[i] = static_cast<TimeNs>(i) * 1000;
    e[i] = s[i] + 900;
  }
  std::vector<LodItem> items;
  for_each_lod_item(s.data(), e.data(), 0, static_cast<RowIndex>(n), true, 1'000'000'000,
                    [&](const LodItem& it) { items.push_back(it); });
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].count(), n);
  EXPECT_EQ(items[0].start, 0);
  EXPECT_EQ(items[0].end, e.back());
}

}  // namespace
}  // namespace gpuscope::viewer
