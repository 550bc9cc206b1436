#include "analysis/util/intervals.h"

#include <algorithm>

namespace gpuscope::intervals {

IntervalSet union_of(std::vector<TimeRange> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const TimeRange& a, const TimeRange& b) { return a.start < b.start; });
  IntervalSet out;
  out.reserve(ranges.size());
  for (const TimeRange& r : ranges) append_sorted(out, r.start, r.end);
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

}  // namespace gpuscope::intervals
