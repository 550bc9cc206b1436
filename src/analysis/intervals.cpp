#include "analysis/intervals.h"

#include <algorithm>
#include <utility>

namespace gpuscope::intervals {

IntervalSet union_of(std::vector<TimeRange> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const TimeRange& a, const TimeRange& b) { return a.start < b.start; });
  IntervalSet out;
  out.reserve(ranges.size());
  for (const TimeRange& r : ranges) append_sorted(out, r.start, r.end);
  return out;
}

IntervalSet union_of_sorted(std::span<const TimeNs> starts, std::span<const TimeNs> ends) {
  IntervalSet out;
  out.reserve(starts.size());
  for (std::size_t i = 0; i < starts.size(); ++i) append_sorted(out, starts[i], ends[i]);
  return out;
}

IntervalSet unite(const IntervalSet& a, const IntervalSet& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  IntervalSet out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const TimeRange& r = (j == b.size() || (i < a.size() && a[i].start <= b[j].start)) ? a[i++] : b[j++];
    append_sorted(out, r.start, r.end);
  }
  return out;
}

IntervalSet intersect(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const TimeNs s = std::max(a[i].start, b[j].start);
    const TimeNs e = std::min(a[i].end, b[j].end);
    if (s < e) out.push_back({s, e});  // disjoint inputs give disjoint, non-touching pieces
    if (a[i].end < b[j].end)
      ++i;
    else
      ++j;
  }
  return out;
}

IntervalSet subtract(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  out.reserve(a.size());
  std::size_t j = 0;
  for (const TimeRange& r : a) {
    TimeNs s = r.start;
    while (j < b.size() && b[j].end <= s) ++j;
    std::size_t k = j;
    while (k < b.size() && b[k].start < r.end) {
      if (b[k].start > s) out.push_back({s, b[k].start});
      s = std::max(s, b[k].end);
      if (b[k].end > r.end) break;  // b[k] also cuts into the next range of a
      ++k;
    }
    if (s < r.end) out.push_back({s, r.end});
    j = k;
  }
  return out;
}

IntervalSet unite_all(std::vector<IntervalSet> sets) {
  if (sets.empty()) return {};
  while (sets.size() > 1) {
    std::vector<IntervalSet> next;
    next.reserve((sets.size() + 1) / 2);
    for (std::size_t i = 0; i + 1 < sets.size(); i += 2) next.push_back(unite(sets[i], sets[i + 1]));
    if (sets.size() % 2) next.push_back(std::move(sets.back()));
    sets = std::move(next);
  }
  return std::move(sets.front());
}

IntervalSet gaps_within(const IntervalSet& set, TimeRange window) {
  IntervalSet out;
  TimeNs cursor = window.start;
  auto it =
      std::lower_bound(set.begin(), set.end(), window.start, [](const TimeRange& r, TimeNs t) { return r.end <= t; });
  for (; it != set.end() && it->start < window.end; ++it) {
    if (it->start > cursor) out.push_back({cursor, it->start});
    cursor = std::max(cursor, it->end);
  }
  if (cursor < window.end) out.push_back({cursor, window.end});
  return out;
}

TimeNs length(const IntervalSet& set) {
  TimeNs total = 0;
  for (const TimeRange& r : set) total += r.end - r.start;
  return total;
}

TimeNs intersection_length(const IntervalSet& a, const IntervalSet& b) {
  TimeNs total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const TimeNs s = std::max(a[i].start, b[j].start);
    const TimeNs e = std::min(a[i].end, b[j].end);
    if (s < e) total += e - s;
    if (a[i].end < b[j].end)
      ++i;
    else
      ++j;
  }
  return total;
}

TimeNs length_within(const IntervalSet& set, TimeRange window) {
  TimeNs total = 0;
  auto it =
      std::lower_bound(set.begin(), set.end(), window.start, [](const TimeRange& r, TimeNs t) { return r.end <= t; });
  for (; it != set.end() && it->start < window.end; ++it)
    total += std::min(it->end, window.end) - std::max(it->start, window.start);
  return total;
}

LengthIndex::LengthIndex(const IntervalSet& set) : set_(&set) {
  prefix_.resize(set.size() + 1, 0);
  for (std::size_t i = 0; i < set.size(); ++i) prefix_[i + 1] = prefix_[i] + (set[i].end - set[i].start);
}

TimeNs LengthIndex::length_within(TimeRange window) const {
  const IntervalSet& s = *set_;
  if (window.end <= window.start || s.empty()) return 0;
  // First range ending after the window starts, first range starting at or after its end.
  const std::size_t lo = static_cast<std::size_t>(
      std::lower_bound(s.begin(), s.end(), window.start, [](const TimeRange& r, TimeNs t) { return r.end <= t; }) -
      s.begin());
  const std::size_t hi =
      static_cast<std::size_t>(std::lower_bound(s.begin() + static_cast<std::ptrdiff_t>(lo), s.end(), window.end,
                                                [](const TimeRange& r, TimeNs t) { return r.start < t; }) -
                               s.begin());
  if (lo >= hi) return 0;
  TimeNs total = prefix_[hi] - prefix_[lo];
  total -= std::max<TimeNs>(0, window.start - s[lo].start);  // clip the first range
  total -= std::max<TimeNs>(0, s[hi - 1].end - window.end);  // clip the last range
  return total;
}

Coverage coverage(std::span<const TimeNs> starts, std::span<const TimeNs> ends) {
  Coverage c;
  const std::size_t n = starts.size();
  std::size_t i = 0, j = 0;
  std::int64_t depth = 0;
  TimeNs last = 0;
  // Sweep: at equal times ends go first, so touching ranges do not count as
  // overlapping and zero-length ranges add nothing.
  while (j < n) {
    const bool take_start = i < n && starts[i] < ends[j];
    const TimeNs t = take_start ? starts[i] : ends[j];
    if (depth > 0) {
      const TimeNs dt = t - last;
      c.covered += dt;
      if (depth >= 2) c.multi += dt;
      c.total += dt * depth;
    }
    last = t;
    if (take_start) {
      ++depth;
      ++i;
    } else {
      --depth;
      ++j;
    }
  }
  return c;
}

void merge_sorted_runs(std::vector<TimeNs>& values, std::vector<std::size_t> runs) {
  // runs: boundaries, first 0 and last values.size().
  while (runs.size() > 2) {
    std::vector<std::size_t> next;
    next.reserve(runs.size() / 2 + 2);
    std::size_t r = 0;
    for (; r + 2 < runs.size(); r += 2) {
      std::inplace_merge(values.begin() + static_cast<std::ptrdiff_t>(runs[r]),
                         values.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]),
                         values.begin() + static_cast<std::ptrdiff_t>(runs[r + 2]));
      next.push_back(runs[r]);
    }
    for (; r + 1 < runs.size(); ++r) next.push_back(runs[r]);
    next.push_back(runs.back());
    runs = std::move(next);
  }
}

}  // namespace gpuscope::intervals
