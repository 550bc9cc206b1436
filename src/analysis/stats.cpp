#include "analysis/stats.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>

namespace gpuscope {

namespace {

// An order-preserving log-linear bucket of an int64: 64 buckets per power of
// two (six bits after the leading one), negatives mirrored below zero. 8192
// buckets cover every int64; a bucket spans at most 1/64 of its values'
// magnitude.
constexpr int kHalf = 64 * 64;

int bucket_of(TimeNs v) {
  const std::uint64_t m = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  const int width = std::bit_width(m);  // 0..64
  const int shift = std::max(0, width - 7);
  const int sub = static_cast<int>((m >> shift) & 63);
  const int b = width == 64 ? 4095 : width * 64 + sub;  // 0 .. 4095 (2^63 only from INT64_MIN)
  return v < 0 ? kHalf - 1 - b : kHalf + b;
}

}  // namespace

TimeNs select_kth(std::span<TimeNs> values, std::size_t k) {
  const std::size_t n = values.size();
  if (n < 4096) {
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
    return values[k];
  }
  // One pass to find the bucket holding the k-th value, one to move that
  // bucket's values to the front (in place: no memory), then select among them.
  std::array<std::uint32_t, 2 * kHalf> count{};
  for (TimeNs v : values) ++count[static_cast<std::size_t>(bucket_of(v))];
  std::size_t bucket = 0, before = 0;
  while (before + count[bucket] <= k) before += count[bucket++];
  const int wanted = static_cast<int>(bucket);
  const auto mid = std::partition(values.begin(), values.end(), [&](TimeNs v) { return bucket_of(v) == wanted; });
  const std::size_t kk = k - before;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(kk), mid);
  return values[kk];
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
