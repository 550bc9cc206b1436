// Per-category kernel time over any run of rows (viewer/category_time.h),
// against brute force on random lanes: every block boundary case, short and
// long runs, rows past the end, a trace of one category.
#include "viewer/category_time.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace gpuscope::viewer {
namespace {

struct Lane {
  std::vector<TimeNs> start, end;
  std::vector<std::uint8_t> category;
};

Lane random_lane(std::mt19937_64& rng, std::size_t n, int categories) {
  Lane l;
  TimeNs t = 1'000'000;
  for (std::size_t i = 0; i < n; ++i) {
    t += static_cast<TimeNs>(rng() % 50);
    const TimeNs d = rng() % 7 == 0 ? 0 : static_cast<TimeNs>(rng() % 100'000);  // zero-length kernels too
    l.start.push_back(t);
    l.end.push_back(t + d);
    l.category.push_back(static_cast<std::uint8_t>(rng() % static_cast<unsigned>(categories)));
    t += d;
  }
  return l;
}

CategoryTimes brute_force(const Lane& l, RowIndex first, RowIndex last) {
  CategoryTimes t{};
  for (RowIndex r = first; r < last && r < l.start.size(); ++r) t[l.category[r]] += l.end[r] - l.start[r];
  return t;
}

TEST(CategoryTime, SumsMatchBruteForceOnRandomLanes) {
  std::mt19937_64 rng(11);
  for (std::size_t n : {0, 1, 63, 64, 65, 127, 128, 1000, 5003, 40'000}) {
    for (int categories : {1, 3, kKernelCategoryCount}) {
      const Lane l = random_lane(rng, n, categories);
      const CategoryTimeIndex ix = CategoryTimeIndex::build(l.start, l.end, l.category);
      ASSERT_EQ(ix.rows(), n);
      for (int q = 0; q < 400; ++q) {
        const auto a = static_cast<RowIndex>(n ? rng() % (n + 1) : 0);
        // Short runs, runs ending on and next to block boundaries, long runs.
        RowIndex b = a;
        switch (q % 4) {
          case 0: b = a + static_cast<RowIndex>(rng() % 10); break;
          case 1: b = static_cast<RowIndex>((a / 64 + 1 + rng() % 3) * 64 + rng() % 3) - 1; break;
          default: b = a + static_cast<RowIndex>(n ? rng() % (n + 1) : 0);
        }
        b = std::min<RowIndex>(b, static_cast<RowIndex>(n));
        ASSERT_EQ(ix.sum(a, b), brute_force(l, a, b)) << "n " << n << " [" << a << ", " << b << ")";
        ASSERT_EQ(ix.prefix(b), brute_force(l, 0, b)) << "n " << n << " row " << b;
      }
      // The whole lane, and empty or reversed ranges.
      EXPECT_EQ(ix.sum(0, static_cast<RowIndex>(n)), brute_force(l, 0, static_cast<RowIndex>(n)));
      EXPECT_EQ(ix.sum(5, 5), CategoryTimes{});
      EXPECT_EQ(ix.sum(9, 3), CategoryTimes{});
    }
  }
}

TEST(CategoryTime, KeepsOnlyTheCategoriesTheTraceHas) {
  std::mt19937_64 rng(3);
  const Lane one = random_lane(rng, 100'000, 1);
  const Lane all = random_lane(rng, 100'000, kKernelCategoryCount);
  const CategoryTimeIndex a = CategoryTimeIndex::build(one.start, one.end, one.category);
  const CategoryTimeIndex b = CategoryTimeIndex::build(all.start, all.end, all.category);
  // One int64 per block of 64 rows and category present: ~1.6 bytes per kernel of one category.
  EXPECT_LT(a.memory_bytes(), 100'000 * 2);
  EXPECT_GT(b.memory_bytes(), a.memory_bytes() * (kKernelCategoryCount - 1));
}

}  // namespace
}  // namespace gpuscope::viewer
