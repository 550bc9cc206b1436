#include "viewer/match_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "support/test_traces.h"
#include "trace/time_columns.h"

namespace gpuscope::viewer {
namespace {

std::vector<MatchRef> all_in_order(const Trace& t, const std::vector<std::uint8_t>& ids) {
  std::vector<std::tuple<TimeNs, int, RowIndex>> keys;
  int slot = 0;
  for (TableId table : MatchSet::kTables) {
    const auto& names = table == TableId::kernels     ? t.kernels().name
                        : table == TableId::api_calls ? t.api_calls().name
                                                      : t.ranges().name;
    const auto& start = *detail::time_columns(t.tables(), table).start;
    for (RowIndex r = 0; r < names.size(); ++r)
      if (ids[names[r]]) keys.emplace_back(start[r], slot, r);
    ++slot;
  }
  std::sort(keys.begin(), keys.end());
  std::vector<MatchRef> out;
  for (auto [s, sl, r] : keys) out.push_back({MatchSet::kTables[sl], r});
  return out;
}

TEST(MatchSet, NextPrevAndOrdinalWalkAllMatchesInTimeOrder) {
  testing::TrainingTraceOptions o;
  o.kernels = 3000;
  const Trace t = testing::training_trace(o);
  for (const char* text : {"gemm", "step", "ward", "cudaLaunch", "zzz-none"}) {
    const auto ids = match_names(t.strings(), text, false);
    const MatchSet m = MatchSet::by_names(t, ids);
    const std::vector<MatchRef> want = all_in_order(t, ids);
    ASSERT_EQ(m.size(), want.size()) << text;
    std::optional<MatchRef> cur;
    for (std::size_t i = 0; i < want.size(); ++i) {
      cur = m.next(t, cur);
      ASSERT_TRUE(cur.has_value());
      ASSERT_EQ(*cur, want[i]) << text << " #" << i;
      ASSERT_EQ(m.ordinal(t, *cur), i);
    }
    EXPECT_FALSE(m.next(t, cur).has_value());
    cur.reset();
    for (std::size_t i = want.size(); i-- > 0;) {
      cur = m.prev(t, cur);
      ASSERT_TRUE(cur.has_value());
      ASSERT_EQ(*cur, want[i]);
    }
    EXPECT_FALSE(m.prev(t, cur).has_value());
  }
}

TEST(MatchSet, FirstFromAndPerTrackLists) {
  testing::TrainingTraceOptions o;
  o.kernels = 2000;
  const Trace t = testing::training_trace(o);
  const MatchSet m = MatchSet::by_category(t, KernelCategory::gemm);
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(m.count(TableId::kernels), m.size());
  std::uint64_t per_track = 0;
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    const auto rows = m.on_track(TableId::kernels, tr);
    per_track += rows.size();
    for (RowIndex r : rows) {
      ASSERT_EQ(t.kernels().track_at(r), tr);
      ASSERT_EQ(t.kernels().category_at(r), KernelCategory::gemm);
    }
  }
  EXPECT_EQ(per_track, m.size());
  const TimeNs mid = (t.begin_time() + t.end_time()) / 2;
  const auto f = m.first_from(t, mid);
  ASSERT_TRUE(f.has_value());
  EXPECT_GE(t.kernels().start[f->row], mid);
  const auto before = m.prev(t, f);
  ASSERT_TRUE(before.has_value());
  EXPECT_LT(t.kernels().start[before->row], mid);
}

TEST(MatchNames, SubstringIsCaseInsensitiveAndRegexWorksAndBadRegexThrows) {
  TraceBuilder b;
  const StringId a = b.intern("volta_sgemm_128x64_nn"), c = b.intern("ncclKernel_AllReduce"), d = b.intern("GEMM big");
  Trace t = b.freeze();
  auto m = match_names(t.strings(), "Gemm", false);
  EXPECT_TRUE(m[a]);
  EXPECT_TRUE(m[d]);
  EXPECT_FALSE(m[c]);
  EXPECT_FALSE(m[0]);  // the empty string never matches
  m = match_names(t.strings(), "^nccl.*reduce$", true);
  EXPECT_TRUE(m[c]);
  EXPECT_FALSE(m[a]);
  EXPECT_THROW(match_names(t.strings(), "([", true), PatternError);
}

// RE2 does not recurse: a 50,000-character name (std::regex overflowed the
// stack on it) is searched like any other.
TEST(MatchNames, ARegexOverAFiftyThousandCharacterName) {
  TraceBuilder b;
  const StringId long_name = b.intern(std::string(50'000, 'x') + "gemm");
  Trace t = b.freeze();
  EXPECT_TRUE(match_names(t.strings(), ".*GEMM", true)[long_name]);
  EXPECT_FALSE(match_names(t.strings(), "^gemm", true)[long_name]);
}

}  // namespace
}  // namespace gpuscope::viewer
