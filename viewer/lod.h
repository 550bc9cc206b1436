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
#include <cstdint>

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

}  // namespace gpuscope::viewer
