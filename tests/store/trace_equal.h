// Compares two traces: meta, strings, devices, processes, tracks, counter
// series and every column of every table (stored and derived). A sparse
// column that is empty equals one that is all zero.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "trace/trace.h"

namespace gpuscope::testing {

template <class T>
::testing::AssertionResult columns_equal(const std::vector<T>& a, const std::vector<T>& b, std::size_t rows,
                                         const std::string& what) {
  const bool a_empty = a.empty(), b_empty = b.empty();
  if (!a_empty && a.size() != rows)
    return ::testing::AssertionFailure() << what << ": left has " << a.size() << " rows";
  if (!b_empty && b.size() != rows)
    return ::testing::AssertionFailure() << what << ": right has " << b.size() << " rows";
  for (std::size_t i = 0; i < rows; ++i) {
    const T x = a_empty ? T{} : a[i];
    const T y = b_empty ? T{} : b[i];
    // Doubles compared bit for bit (so -0.0 and NaN payloads must survive).
    if (std::memcmp(&x, &y, sizeof(T)) != 0)
      return ::testing::AssertionFailure() << what << " differs at row " << i << ": " << +x << " vs " << +y;
  }
  return ::testing::AssertionSuccess();
}

inline void expect_traces_equal(const Trace& a, const Trace& b) {
  EXPECT_EQ(a.meta(), b.meta());
  ASSERT_EQ(a.strings().size(), b.strings().size());
  for (StringId i = 0; i < a.strings().size(); ++i) ASSERT_EQ(a.str(i), b.str(i)) << "string " << i;
  EXPECT_EQ(a.devices(), b.devices());
  EXPECT_EQ(a.processes(), b.processes());
  EXPECT_EQ(a.tracks(), b.tracks());
  EXPECT_EQ(a.counter_series(), b.counter_series());
  a.tables().for_each_table([&](TableId id, const auto& ta) {
    b.tables().for_each_table([&](TableId id2, const auto& tb) {
      if constexpr (std::is_same_v<decltype(ta), decltype(tb)>) {
        if (id != id2) return;
        ASSERT_EQ(ta.size(), tb.size()) << to_string(id);
        const std::size_t rows = ta.size();
        // Columns are visited in the same order on both sides.
        int ca = 0;
        ta.for_each_column([&](ColumnInfo info, const auto& col_a) {
          int cb = 0;
          tb.for_each_column([&](ColumnInfo, const auto& col_b) {
            if constexpr (std::is_same_v<decltype(col_a), decltype(col_b)>) {
              if (ca == cb) {
                const std::string what = std::string(to_string(id)) + "." + std::string(info.name);
                using C = std::remove_cvref_t<decltype(col_a)>;
                if constexpr (gpuscope::detail::is_compact_column<C>) {
                  // Compared as rows: the two may keep a column in different forms.
                  EXPECT_TRUE(columns_equal(gpuscope::detail::stored_rows(ta, col_a),
                                            gpuscope::detail::stored_rows(tb, col_b), rows, what));
                } else {
                  EXPECT_TRUE(columns_equal(col_a, col_b, rows, what));
                }
              }
            }
            ++cb;
          });
          ++ca;
        });
      }
    });
  });
  EXPECT_EQ(a.begin_time(), b.begin_time());
  EXPECT_EQ(a.end_time(), b.end_time());
  EXPECT_EQ(a.gpu_begin_time(), b.gpu_begin_time());
  EXPECT_EQ(a.gpu_end_time(), b.gpu_end_time());
  // rows_overlapping reads the per-track index (longest event, whether ends
  // are sorted): windows at a few points of each track's span compare it.
  auto windows = [](TimeNs lo, TimeNs hi) {
    const TimeNs step = hi / 4 - lo / 4;  // no overflow even for extreme spans
    std::vector<std::pair<TimeNs, TimeNs>> w;
    for (int i = 0; i < 4; ++i) w.emplace_back(lo + i * step, lo + i * step + step / 2);
    return w;
  };
  for (TrackId t = 0; t < a.tracks().size(); ++t)
    for (int ti = 0; ti < kTableCount; ++ti) {
      const auto table = static_cast<TableId>(ti);
      if (table == TableId::counters || table == TableId::memory_events) continue;  // per series, not track
      EXPECT_EQ(a.rows_of(table, t).begin, b.rows_of(table, t).begin);
      EXPECT_EQ(a.rows_of(table, t).end, b.rows_of(table, t).end);
      for (const auto& [t0, t1] : windows(a.begin_time(), a.end_time())) {
        EXPECT_EQ(a.rows_overlapping(table, t, t0, t1).begin, b.rows_overlapping(table, t, t0, t1).begin);
        EXPECT_EQ(a.rows_overlapping(table, t, t0, t1).end, b.rows_overlapping(table, t, t0, t1).end);
      }
    }
}

}  // namespace gpuscope::testing
