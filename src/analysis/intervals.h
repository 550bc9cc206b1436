// Interval arithmetic on time ranges: the one place where unions,
// intersections and "two or more in flight" are computed.
//
// Every metric that says "time during which …" (busy, overlap, concurrency,
// idle gaps, step breakdowns) is a length of some set built here, so the
// functions are small, exact (integer ns) and tested against a brute-force
// reference (tests/analysis/intervals_test.cpp).
//
// An IntervalSet is the canonical form of a set of instants: ranges sorted by
// start, pairwise disjoint and non-touching ([1,2) and [2,3) are merged into
// [1,3)), none empty. Ranges are half-open [start, end).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/profile.h"

namespace gpuscope::intervals {

using IntervalSet = std::vector<TimeRange>;

// [SECTION] Building sets

// Union of ranges in any order (they may overlap; empty ones are dropped).
IntervalSet union_of(std::vector<TimeRange> ranges);

// Appends one range to a set being built from ranges whose starts never
// decrease (a track's rows): O(1). Empty ranges are ignored.
inline void append_sorted(IntervalSet& set, TimeNs start, TimeNs end) {
  if (end <= start) return;
  if (!set.empty() && start <= set.back().end) {
    if (end > set.back().end) set.back().end = end;
    return;
  }
  set.push_back({start, end});
}

// Union of ranges given as parallel start/end columns sorted by start.
IntervalSet union_of_sorted(std::span<const TimeNs> starts, std::span<const TimeNs> ends);

// [SECTION] Set algebra (all linear in the sizes of the inputs)

IntervalSet unite(const IntervalSet& a, const IntervalSet& b);      // a ∪ b
IntervalSet intersect(const IntervalSet& a, const IntervalSet& b);  // a ∩ b
IntervalSet subtract(const IntervalSet& a, const IntervalSet& b);   // a \ b
// Union of many sets (pairwise, balanced: O(n log k)).
IntervalSet unite_all(std::vector<IntervalSet> sets);

// Complement of `set` within `window`: the gaps.
IntervalSet gaps_within(const IntervalSet& set, TimeRange window);

// [SECTION] Measures

TimeNs length(const IntervalSet& set);
TimeNs intersection_length(const IntervalSet& a, const IntervalSet& b);

// Length of the part of `set` inside `window`: O(log n) with a prefix-sum
// index (see LengthIndex) or O(n) without.
TimeNs length_within(const IntervalSet& set, TimeRange window);

// Answers length_within() for many windows in O(log n) each.
class LengthIndex {
 public:
  explicit LengthIndex(const IntervalSet& set);
  TimeNs length_within(TimeRange window) const;

 private:
  const IntervalSet* set_;
  std::vector<TimeNs> prefix_;  // prefix_[i] = total length of set[0..i)
};

// Coverage of a multiset of ranges (they may overlap each other).
struct Coverage {
  TimeNs covered = 0;  // time with >= 1 range in flight (length of the union)
  TimeNs multi = 0;    // time with >= 2 ranges in flight
  TimeNs total = 0;    // sum of the ranges' durations (= integral of the number in flight)
};

// `starts` and `ends` are the ranges' start and end times, each sorted
// ascending (independently: the k-th end need not belong to the k-th start).
Coverage coverage(std::span<const TimeNs> starts, std::span<const TimeNs> ends);

// Merges sorted runs in place: `runs` holds the boundaries (run i is
// [runs[i], runs[i+1]) of `values`), each run sorted. O(n log k).
void merge_sorted_runs(std::vector<TimeNs>& values, std::vector<std::size_t> runs);

}  // namespace gpuscope::intervals
