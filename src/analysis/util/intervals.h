// Interval arithmetic on small sets of time ranges: unions, clipped lengths
// and the length of an intersection, exact in integer ns and tested against
// a brute-force reference (tests/analysis/util/intervals_test.cpp).
//
// Used where a metric is built from a few thousand ranges at most: the input
// waits the device sweep charges idle time to, HTA's
// communication/computation overlap, and each collective call's part of its
// GPU's exposed communication (a forward cursor, ForwardLength). The device sweep itself computes busy
// time, overlaps and concurrency of every GPU op in one pass of its own
// (device_pass.cpp, tested against brute force in sweep_test.cpp): a set per
// quantity would cost a pass and an allocation per op.
//
// An IntervalSet is the canonical form of a set of instants: ranges sorted by
// start, pairwise disjoint and non-touching ([1,2) and [2,3) are merged into
// [1,3)), none empty. Ranges are half-open [start, end).
#pragma once

#include <algorithm>
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

// "How much of [a, b) is inside this set", for windows whose starts never
// decrease (a sweep in time order): the ranges already behind are skipped
// once, not searched again for every window.
class ForwardLength {
 public:
  explicit ForwardLength(const IntervalSet& set) : set_(&set) {}
  // f(s, e) for each non-empty piece of [a, b) inside the set, in time order.
  template <class F>
  void pieces(TimeNs a, TimeNs b, F&& f) {
    const IntervalSet& set = *set_;
    while (i_ < set.size() && set[i_].end <= a) ++i_;
    for (std::size_t j = i_; j < set.size() && set[j].start < b; ++j) {
      const TimeNs s = std::max(a, set[j].start), e = std::min(b, set[j].end);
      if (s < e) f(s, e);
    }
  }
  // The same as length_within(set, {a, b}).
  TimeNs length(TimeNs a, TimeNs b) {
    TimeNs n = 0;
    pieces(a, b, [&](TimeNs s, TimeNs e) { n += e - s; });
    return n;
  }

 private:
  const IntervalSet* set_;
  std::size_t i_ = 0;
};

}  // namespace gpuscope::intervals
