#include "analysis/stats.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

namespace gpuscope {

TimeNs select_kth(std::span<TimeNs> values, std::size_t k) {
  const std::size_t n = values.size();
  if (n < 4096) {
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
    return values[k];
  }
  TimeNs lo = values[0], hi = values[0];
  for (TimeNs v : values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo == hi) return lo;
  // 2^16 buckets over [lo, hi]: one counting pass, then only the bucket that
  // holds the k-th value is gathered and selected.
  const auto range = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  const int shift = std::max(0, static_cast<int>(std::bit_width(range)) - 16);
  std::vector<std::uint32_t> count(std::size_t{1} << 16, 0);
  for (TimeNs v : values) ++count[(static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(lo)) >> shift];
  std::size_t bucket = 0, before = 0;
  while (before + count[bucket] <= k) before += count[bucket++];
  std::vector<TimeNs> in_bucket;
  in_bucket.reserve(count[bucket]);
  for (TimeNs v : values)
    if (((static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(lo)) >> shift) == bucket) in_bucket.push_back(v);
  const std::size_t kk = k - before;
  std::nth_element(in_bucket.begin(), in_bucket.begin() + static_cast<std::ptrdiff_t>(kk), in_bucket.end());
  return in_bucket[kk];
}

DurationStats summarize(std::span<TimeNs> values) {
  DurationStats s;
  if (values.empty()) return s;
  s.count = values.size();
  s.min = std::numeric_limits<TimeNs>::max();
  s.max = std::numeric_limits<TimeNs>::min();
  for (TimeNs v : values) {
    s.total += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  s.mean = s.total / static_cast<TimeNs>(s.count);
  s.median = select_kth(values, (values.size() - 1) / 2);
  return s;
}

DurationStats merge_approx(const DurationStats& a, const DurationStats& b) {
  if (a.count == 0) return b;
  if (b.count == 0) return a;
  DurationStats s;
  s.count = a.count + b.count;
  s.total = a.total + b.total;
  s.min = std::min(a.min, b.min);
  s.max = std::max(a.max, b.max);
  s.mean = s.total / static_cast<TimeNs>(s.count);
  s.median = a.count >= b.count ? a.median : b.median;
  return s;
}

}  // namespace gpuscope
