// Level of detail for one timeline lane: which events to draw one by one and
// which runs to fold into a single block (Tracy's technique; docs/viewer.md
// describes what a folded block shows).
//
// A lane is a sequence of events sorted by start. At a zoom where `min_ns`
// nanoseconds make up the minimum visible size (3 px), an event at least that
// long is drawn on its own; a run of shorter events whose gaps are also
// shorter becomes ONE block carrying the number of events it stands for.
//
// The walk never visits every event of a dense run: it jumps with galloping
// searches, so its cost is O(items emitted × log(events per item)) — about
// width/3 items per lane whatever the zoom and however many million events
// the lane holds.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "trace/types.h"

namespace gpuscope::viewer {

struct LodItem {
  RowIndex first = 0;  // first row of the item
  RowIndex last = 0;   // one past its last row
  TimeNs start = 0, end = 0;
  std::uint32_t count() const { return last - first; }
  bool merged() const { return last - first > 1; }
};

// The first index in [lo, hi) whose value is >= target (hi if none), found
// by galloping from lo: the answer is usually a few hundred rows ahead (the
// events in 3 px), so probing 1, 2, 4, ... rows ahead touches a few nearby
// cache lines where a binary search over the whole lane (millions of rows)
// would miss the cache at every step.
inline RowIndex gallop_lower_bound(const TimeNs* a, RowIndex lo, RowIndex hi, TimeNs target) {
  if (lo >= hi || a[lo] >= target) return lo;
  const std::uint64_t n = hi - lo;
  std::uint64_t bound = 1;  // invariant: a[lo + bound / 2] < target (a[lo] when bound == 1)
  while (bound < n && a[lo + bound] < target) bound *= 2;
  const RowIndex first = static_cast<RowIndex>(lo + bound / 2 + 1);
  const RowIndex last = bound < n ? static_cast<RowIndex>(lo + bound) : hi;
  return static_cast<RowIndex>(std::lower_bound(a + first, a + last, target) - a);
}

// Calls emit(const LodItem&) for the rows [begin, end) of the lane given by
// the `start`/`end` columns. `ends_sorted` says whether ends are non-decreasing
// too (true for a stream's kernels and for a range depth lane); it lets the
// walk skip by end time, which keeps runs tight. Rows must be sorted by start.
template <class Emit>
void for_each_lod_item(const TimeNs* start, const TimeNs* end, RowIndex begin, RowIndex stop, bool ends_sorted,
                       TimeNs min_ns, Emit&& emit) {
  if (min_ns < 1) min_ns = 1;
  RowIndex i = begin;
  while (i < stop) {
    const TimeNs s = start[i], e = end[i];
    if (e - s >= min_ns) {
      emit(LodItem{i, i + 1, s, e});
      ++i;
      continue;
    }
    // A short event opens a run. Absorb everything that ends before
    // run_end + min_ns (binary search), then look at the next event: if it is
    // short and starts less than min_ns after the run, it extends the run.
    const RowIndex first = i;
    TimeNs run_end = e;
    ++i;
    while (i < stop) {
      const TimeNs target = run_end + min_ns;
      RowIndex j;
      if (ends_sorted) {
        j = gallop_lower_bound(end, i, stop, target);
        if (j > i) run_end = std::max(run_end, end[j - 1]);
      } else {
        // Ends unknown in order: everything starting before the target belongs to the run.
        j = gallop_lower_bound(start, i, stop, target);
        for (RowIndex k = j > i + 8 ? j - 8 : i; k < j; ++k) run_end = std::max(run_end, end[k]);
      }
      i = j;
      if (i >= stop) break;
      const TimeNs ns = start[i], ne = end[i];
      if (ne - ns < min_ns && ns - run_end < min_ns) {
        run_end = std::max(run_end, ne);
        ++i;
        continue;
      }
      break;
    }
    emit(LodItem{first, i, s, run_end});
  }
}

// Several lanes drawn in one row.
//
// A GPU stream's row holds its kernels, copies and memsets: three sorted
// lanes drawn at the same height. Folding each alone would draw one lane's
// blocks over another's (a stream of millions of kernels and thousands of
// memsets reading "15,338 memsets" over its kernels). Folded together, a run
// of short events of any lane is one block that counts each lane's events.

inline constexpr std::size_t kMaxLodLanes = 3;

struct LodLane {
  const TimeNs* start = nullptr;
  const TimeNs* end = nullptr;
  RowIndex begin = 0, stop = 0;
  bool ends_sorted = true;
};

struct MultiLodItem {
  std::array<RowIndex, kMaxLodLanes> first{}, last{};  // per lane: its rows in the item
  TimeNs start = 0, end = 0;
  std::uint64_t count() const {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < kMaxLodLanes; ++i) n += last[i] - first[i];
    return n;
  }
  bool merged() const { return count() > 1; }
  // The lane of an item that is one event (merged() false).
  std::size_t lane() const {
    for (std::size_t i = 0; i < kMaxLodLanes; ++i)
      if (last[i] > first[i]) return i;
    return 0;
  }
};

// Calls emit(const MultiLodItem&) for the rows [begin, stop) of every lane,
// in start order, by the rule of for_each_lod_item() applied to the lanes
// merged: a short event opens a run that absorbs, from every lane, what ends
// before the run's end + min_ns, and the next short event of any lane that
// starts less than min_ns after it. At most kMaxLodLanes lanes.
template <class Emit>
void for_each_lod_item(std::span<const LodLane> lanes, TimeNs min_ns, Emit&& emit) {
  const std::size_t n = std::min(lanes.size(), kMaxLodLanes);
  if (min_ns < 1) min_ns = 1;
  if (n == 1) {  // one lane: its own walk
    const LodLane& l = lanes[0];
    for_each_lod_item(l.start, l.end, l.begin, l.stop, l.ends_sorted, min_ns, [&](const LodItem& it) {
      MultiLodItem m;
      m.first[0] = it.first, m.last[0] = it.last, m.start = it.start, m.end = it.end;
      emit(m);
    });
    return;
  }
  std::array<RowIndex, kMaxLodLanes> pos{};
  for (std::size_t i = 0; i < n; ++i) pos[i] = lanes[i].begin;
  auto next_lane = [&]() -> int {  // the lane whose next event starts first
    int best = -1;
    for (std::size_t i = 0; i < n; ++i)
      if (pos[i] < lanes[i].stop &&
          (best < 0 || lanes[i].start[pos[i]] < lanes[static_cast<std::size_t>(best)].start[pos[best]]))
        best = static_cast<int>(i);
    return best;
  };
  for (int li = next_lane(); li >= 0; li = next_lane()) {
    const auto i = static_cast<std::size_t>(li);
    const TimeNs s = lanes[i].start[pos[i]], e = lanes[i].end[pos[i]];
    MultiLodItem item;
    item.first = pos;
    item.start = s;
    ++pos[i];
    TimeNs run_end = e;
    if (e - s < min_ns) {
      for (;;) {
        const TimeNs target = run_end + min_ns;
        for (std::size_t j = 0; j < n; ++j) {  // absorb what ends before the target, in every lane
          const LodLane& l = lanes[j];
          if (l.ends_sorted) {
            const RowIndex k = gallop_lower_bound(l.end, pos[j], l.stop, target);
            if (k > pos[j]) run_end = std::max(run_end, l.end[k - 1]);
            pos[j] = k;
          } else {
            const RowIndex k = gallop_lower_bound(l.start, pos[j], l.stop, target);
            for (RowIndex q = k > pos[j] + 8 ? k - 8 : pos[j]; q < k; ++q) run_end = std::max(run_end, l.end[q]);
            pos[j] = k;
          }
        }
        const int nl = next_lane();
        if (nl < 0) break;
        const auto j = static_cast<std::size_t>(nl);
        const TimeNs ns = lanes[j].start[pos[j]], ne = lanes[j].end[pos[j]];
        if (ne - ns < min_ns && ns - run_end < min_ns) {
          run_end = std::max(run_end, ne);
          ++pos[j];
          continue;
        }
        break;
      }
    }
    item.last = pos;
    item.end = run_end;
    emit(item);
  }
}

}  // namespace gpuscope::viewer
