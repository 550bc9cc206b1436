// Interval arithmetic on small sets of time ranges: unions, clipped lengths
// and the length of an intersection, exact in integer ns and tested against
// a brute-force reference (tests/analysis/intervals_test.cpp).
//
// Used where a metric is built from a few thousand ranges at most: the input
// waits the device sweep charges idle time to, and HTA's
// communication/computation overlap. The device sweep itself computes busy
// time, overlaps and concurrency of every GPU op in one pass of its own
// (device_pass.cpp, tested against brute force in sweep_test.cpp): a set per
// quantity would cost a pass and an allocation per op.
//
// An IntervalSet is the canonical form of a set of instants: ranges sorted by
// start, pairwise disjoint and non-touching ([1,2) and [2,3) are merged into
// [1,3)), none empty. Ranges are half-open [start, end).
#pragma once

#include <vector>

#include "analysis/profile.h"

namespace gpuscope::intervals {

using IntervalSet = std::vector<TimeRange>;

// Union of ranges in any order (they may overlap; empty ones are dropped).
IntervalSet union_of(std::vector<TimeRange> ranges);

// Appends one range to a set being built from ranges whose starts never
// decrease: O(1). Empty ranges are ignored.
inline void append_sorted(IntervalSet& set, TimeNs start, TimeNs end) {
  if (end <= start) return;
  if (!set.empty() && start <= set.back().end) {
    if (end > set.back().end) set.back().end = end;
    return;
  }
  set.push_back({start, end});
}

TimeNs length(const IntervalSet& set);
TimeNs intersection_length(const IntervalSet& a, const IntervalSet& b);  // |a ∩ b| in O(|a| + |b|)
// Length of the part of `set` inside `window`, O(log n + ranges inside).
TimeNs length_within(const IntervalSet& set, TimeRange window);

}  // namespace gpuscope::intervals
