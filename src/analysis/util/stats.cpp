#include "analysis/util/stats.h"

#include "trace/fresh_memory.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

namespace gpuscope {

namespace {

constexpr int kHalf = StreamingStats::kHalf;

// The values bucket_of() maps to bucket b: [*lo, *hi].
void bucket_range(int b, TimeNs* lo, TimeNs* hi) {
  const bool negative = b < kHalf;
  const int bb = negative ? kHalf - 1 - b : b - kHalf;
  const int width = bb / 64, sub = bb % 64;
  std::uint64_t mlo = static_cast<std::uint64_t>(sub), mhi = mlo;
  if (width >= 7) {
    const int shift = width - 7;
    mlo = static_cast<std::uint64_t>(64 + sub) << shift;
    mhi = mlo + ((std::uint64_t{1} << shift) - 1);
  }
  if (negative) {
    // The last bucket's magnitudes run up to 2^63 on this side (INT64_MIN).
    *lo = bb == 4095 ? std::numeric_limits<TimeNs>::min() : -static_cast<TimeNs>(mhi);
    *hi = -static_cast<TimeNs>(mlo);
  } else {
    *lo = static_cast<TimeNs>(mlo);
    *hi = static_cast<TimeNs>(mhi);
  }
}

}  // namespace

TimeNs select_kth(std::span<TimeNs> values, std::size_t k) {
  if (values.size() < 4096) return select_kth(values, k, 0, 0);
  TimeNs lo = values[0], hi = values[0];
  for (TimeNs v : values) lo = std::min(lo, v), hi = std::max(hi, v);
  return select_kth(values, k, lo, hi);
}

namespace {

// Each round: 4096 linear buckets over [lo, hi] (a 16 KiB histogram that
// stays in L1; one subtract and shift per value), move the bucket holding the
// k-th value to the front (in place: no memory), and narrow [lo, hi] to it.
// A round shrinks the range 4096-fold, so even values spread over all of
// int64 need at most 6; typical durations need one.
template <class T>
T select_in_range(std::span<T> values, std::size_t k, T lo, T hi) {
  constexpr int kBits = 12;
  std::array<std::uint32_t, std::size_t{1} << kBits> count;
  while (values.size() >= 4096 && lo < hi) {
    const std::uint64_t base = static_cast<std::uint64_t>(lo);
    const std::uint64_t range = static_cast<std::uint64_t>(hi) - base;
    const int shift = std::max(0, static_cast<int>(std::bit_width(range)) - kBits);
    count.fill(0);
    for (T v : values) ++count[(static_cast<std::uint64_t>(v) - base) >> shift];
    std::size_t bucket = 0, before = 0;
    while (before + count[bucket] <= k) before += count[bucket++];
    const auto in_bucket = [&](T v) { return ((static_cast<std::uint64_t>(v) - base) >> shift) == bucket; };
    const auto mid = std::partition(values.begin(), values.end(), in_bucket);
    values = values.first(static_cast<std::size_t>(mid - values.begin()));
    k -= before;
    const std::uint64_t new_lo = base + (std::uint64_t{bucket} << shift);
    const std::uint64_t width_minus_1 = (std::uint64_t{1} << shift) - 1;
    lo = static_cast<T>(new_lo);
    hi = static_cast<std::uint64_t>(hi) - new_lo < width_minus_1 ? hi : static_cast<T>(new_lo + width_minus_1);
  }
  if (lo == hi && values.size() >= 4096) return lo;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

}  // namespace

TimeNs select_kth(std::span<TimeNs> values, std::size_t k, TimeNs lo, TimeNs hi) {
  return select_in_range(values, k, lo, hi);
}

std::uint32_t select_kth(std::span<std::uint32_t> values, std::size_t k, std::uint32_t lo, std::uint32_t hi) {
  return select_in_range(values, k, lo, hi);
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
  s.median = select_kth(values, (values.size() - 1) / 2, s.min, s.max);
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

// [SECTION] BracketMedian

void BracketMedian::reserve_sample(std::size_t n) {
  const std::size_t had = sample_.size();
  sample_.reserve(had + n);
  detail::populate(sample_.data() + had, n * sizeof(TimeNs));
}

void BracketMedian::bracket() {
  const std::size_t m = sample_.size();
  if (m < 2048) {  // a small job: keep every value (under 2048 * kStride of them, or the sampling was sparse)
    lo_ = std::numeric_limits<TimeNs>::min();
    hi_ = std::numeric_limits<TimeNs>::max();
  } else {
    const double d = 2.0 / std::sqrt(static_cast<double>(m));
    const auto rank = [&](double q) {
      return std::min(m - 1, static_cast<std::size_t>(std::max(0.0, q * static_cast<double>(m - 1))));
    };
    const std::size_t a = rank(0.5 - d), b = rank(0.5 + d);
    std::nth_element(sample_.begin(), sample_.begin() + static_cast<std::ptrdiff_t>(a), sample_.end());
    lo_ = sample_[a];
    std::nth_element(sample_.begin() + static_cast<std::ptrdiff_t>(a), sample_.begin() + static_cast<std::ptrdiff_t>(b),
                     sample_.end());
    hi_ = sample_[b];
  }
  keep_ = lo_ < hi_;  // one value: count it, no need to keep it
  // A narrow bracket (durations in ns cluster tightly around their median,
  // and clocks are often quantized): a count per value instead of the values.
  if (keep_ && static_cast<std::uint64_t>(hi_) - static_cast<std::uint64_t>(lo_) < kHistogram)
    hist_.assign(static_cast<std::uint64_t>(hi_) - static_cast<std::uint64_t>(lo_) + 1, 0);
  std::vector<TimeNs>().swap(sample_);
}

bool BracketMedian::finish() {
  if (stats_.count == 0) {
    stats_ = {};
    return true;
  }
  stats_.mean = stats_.total / static_cast<TimeNs>(stats_.count);
  const std::uint64_t k = (stats_.count - 1) / 2;
  const std::uint64_t inside = stats_.count - below_ - above_;
  const bool found = !overflow_ && k >= below_ && k < below_ + inside;
  if (found) {
    if (!keep_) {
      stats_.median = lo_;
    } else if (!hist_.empty()) {
      std::uint64_t before = below_;
      std::size_t i = 0;
      while (before + hist_[i] <= k) before += hist_[i++];
      stats_.median = static_cast<TimeNs>(static_cast<std::uint64_t>(lo_) + i);
    } else {
      const auto kk = static_cast<std::ptrdiff_t>(k - below_);
      const auto end = kept_.begin() + static_cast<std::ptrdiff_t>(kept_n_);
      std::nth_element(kept_.begin(), kept_.begin() + kk, end);
      stats_.median = kept_[static_cast<std::size_t>(kk)];
    }
  }
  std::vector<TimeNs>().swap(kept_);
  std::vector<std::uint32_t>().swap(hist_);
  kept_n_ = 0;
  return found;
}

// Room for more values inside: the slots double up to kKeep (+1, the slot
// place() writes before it knows whether the value is inside). Past kKeep
// values inside, the median is left to the caller (overflow_).
void BracketMedian::grow_kept() {
  if (kept_.size() < kKeep + 1)
    reserve_kept(std::max<std::size_t>(2 * kept_.size(), 4096));
  else
    overflow_ = true;
}

void BracketMedian::reserve_kept(std::size_t slots) {
  slots = std::min(slots, kKeep + 1);
  if (kept_.size() < slots) kept_.resize(std::max(slots, std::min(2 * kept_.size(), kKeep + 1)));
}

// [SECTION] StreamingStats

StreamingStats::StreamingStats(std::size_t quantities) : q_(quantities) {
  for (Quantity& x : q_) {
    x.count.assign(2 * kHalf, 0);
    x.stats.min = std::numeric_limits<TimeNs>::max();
    x.stats.max = std::numeric_limits<TimeNs>::min();
  }
}

void StreamingStats::end_pass() {
  for (Quantity& x : q_) {
    if (x.resolved) continue;
    if (first_) {
      if (x.stats.count == 0) {
        x.stats.min = x.stats.max = 0;
        x.resolved = true;
        continue;
      }
      x.stats.mean = x.stats.total / static_cast<TimeNs>(x.stats.count);
      x.k = (x.stats.count - 1) / 2;
    }
    if (x.collecting) {
      std::nth_element(x.kept.begin(), x.kept.begin() + static_cast<std::ptrdiff_t>(x.k), x.kept.end());
      x.stats.median = x.kept[x.k];
      x.resolved = true;
      std::vector<TimeNs>().swap(x.kept);
      continue;
    }
    // The bucket holding the k-th value, and its value range.
    std::size_t b = 0, before = 0;
    while (before + x.count[b] <= x.k) before += x.count[b++];
    const std::size_t in_bucket = x.count[b];
    x.k -= before;
    if (x.level == 0) {
      bucket_range(static_cast<int>(b), &x.lo, &x.hi);
    } else {
      const std::uint64_t width = std::uint64_t{1} << x.shift;
      const std::uint64_t lo = static_cast<std::uint64_t>(x.lo) + b * width;
      const std::uint64_t span = static_cast<std::uint64_t>(x.hi) - lo;
      x.lo = static_cast<TimeNs>(lo);
      x.hi = static_cast<TimeNs>(lo + std::min(span, width - 1));
    }
    const std::uint64_t span = static_cast<std::uint64_t>(x.hi) - static_cast<std::uint64_t>(x.lo);
    if (x.lo == x.hi) {
      x.stats.median = x.lo;
      x.resolved = true;
    } else if (in_bucket <= kKeep && (in_bucket <= kLinear / 4 || span >= kLinear)) {
      x.collecting = true;
      x.kept.reserve(in_bucket);
    } else {
      // Linear buckets over [lo, hi], as narrow as kLinear of them allow:
      // one ns wide when the range is under kLinear ns (durations under
      // ~4 ms), so the next scan settles the median without keeping values.
      x.shift = 0;
      while ((span >> x.shift) >= kLinear) ++x.shift;
      ++x.level;
      x.count.assign(kLinear, 0);
    }
  }
  first_ = false;
}

bool StreamingStats::done() const {
  for (const Quantity& x : q_)
    if (!x.resolved) return false;
  return !first_;
}

// [SECTION] DurationSketch

TimeNs DurationSketch::bucket(TimeNs v) {
  const std::uint64_t m = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  const int width = std::bit_width(m);
  const int shift = width > 11 ? width - 11 : 0;  // keep the top 11 bits: 1/1024 of the magnitude
  const std::uint64_t floor = (m >> shift) << shift;
  return v < 0 ? -static_cast<TimeNs>(floor) : static_cast<TimeNs>(floor);
}

namespace {

// Sorts durations ascending: a least-significant-digit radix sort of their
// distance from the smallest, 11 bits a pass, as many passes as the range
// needs (three for ranges under 8.6 s in ns), for the large lists (a rank's
// 200,000 kernels: several times faster than a comparison sort).
void sort_durations(std::span<TimeNs> v) {
  if (v.size() < 2048) {
    std::sort(v.begin(), v.end());
    return;
  }
  const auto [lo_it, hi_it] = std::minmax_element(v.begin(), v.end());
  const TimeNs lo = *lo_it;
  const std::uint64_t range = static_cast<std::uint64_t>(*hi_it) - static_cast<std::uint64_t>(lo);
  if (range == 0) return;
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  const int passes = (std::bit_width(range) + kBits - 1) / kBits;
  std::vector<std::uint64_t> a(v.size()), b(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) a[i] = static_cast<std::uint64_t>(v[i]) - static_cast<std::uint64_t>(lo);
  std::vector<std::size_t> count(kBuckets);
  for (int p = 0; p < passes; ++p) {
    const int shift = p * kBits;
    std::fill(count.begin(), count.end(), 0);
    for (std::uint64_t x : a) ++count[(x >> shift) & (kBuckets - 1)];
    std::size_t at = 0;
    for (std::size_t& c : count) at += std::exchange(c, at);
    for (std::uint64_t x : a) b[count[(x >> shift) & (kBuckets - 1)]++] = x;
    a.swap(b);
  }
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<TimeNs>(a[i] + static_cast<std::uint64_t>(lo));
}

// Adds n at value v to (value, count) pairs sorted by value: to the last pair
// when it holds v, else as a new pair.
void add_sorted(std::vector<std::pair<TimeNs, std::uint64_t>>& items, TimeNs v, std::uint64_t n) {
  if (!items.empty() && items.back().first == v)
    items.back().second += n;
  else
    items.push_back({v, n});
}

}  // namespace

DurationSketch DurationSketch::of(std::span<TimeNs> values, std::size_t exact_cap) {
  DurationSketch s;
  if (values.empty()) return s;
  sort_durations(values);
  s.count_ = values.size();
  s.min_ = values.front();
  s.max_ = values.back();
  for (TimeNs v : values) {
    s.total_ += v;
    add_sorted(s.items_, v, 1);
  }
  if (s.items_.size() > exact_cap) s.to_buckets();
  return s;
}

void DurationSketch::to_buckets() {
  std::vector<std::pair<TimeNs, std::uint64_t>> b;
  for (const auto& [v, n] : items_) add_sorted(b, exact_ ? bucket(v) : v, n);
  // Negative values' floors run toward zero: equal floors may not be adjacent.
  std::sort(b.begin(), b.end());
  items_.clear();
  for (const auto& [v, n] : b) add_sorted(items_, v, n);
  exact_ = false;
}

void DurationSketch::merge(const DurationSketch& o, std::size_t exact_cap) {
  if (o.count_ == 0) return;
  if (count_ == 0) {
    *this = o;
    return;
  }
  DurationSketch other = o;
  if (exact_ != other.exact_) {
    if (exact_) to_buckets();
    if (other.exact_) other.to_buckets();
  }
  std::vector<std::pair<TimeNs, std::uint64_t>> merged;
  merged.reserve(items_.size() + other.items_.size());
  std::merge(items_.begin(), items_.end(), other.items_.begin(), other.items_.end(), std::back_inserter(merged),
             [](const auto& a, const auto& b) { return a.first < b.first; });
  items_.clear();
  for (const auto& [v, n] : merged) add_sorted(items_, v, n);
  count_ += o.count_;
  total_ += o.total_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  if (exact_ && items_.size() > exact_cap) to_buckets();
}

std::optional<DurationSketch> DurationSketch::from_state(State st) {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < st.items.size(); ++i) {
    if (st.items[i].second == 0 || (i > 0 && st.items[i - 1].first >= st.items[i].first)) return std::nullopt;
    if (st.items[i].second > st.count - n) return std::nullopt;
    n += st.items[i].second;
  }
  if (n != st.count || (st.count > 0 && st.min > st.max)) return std::nullopt;
  DurationSketch s;
  s.items_ = std::move(st.items);
  s.exact_ = st.exact;
  s.count_ = st.count;
  s.total_ = st.total;
  s.min_ = st.min;
  s.max_ = st.max;
  return s;
}

DurationStats DurationSketch::stats() const {
  DurationStats s;
  if (count_ == 0) return s;
  s.count = count_;
  s.total = total_;
  s.min = min_;
  s.max = max_;
  s.mean = total_ / static_cast<TimeNs>(count_);
  const std::uint64_t k = (count_ - 1) / 2;  // the lower middle value, as summarize()
  std::uint64_t seen = 0;
  for (const auto& [v, n] : items_) {
    seen += n;
    if (seen <= k) continue;
    if (exact_) {
      s.median = v;
    } else {
      const std::uint64_t m = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
      const int width = std::bit_width(m);
      const TimeNs half = width > 11 ? (TimeNs{1} << (width - 11)) / 2 : 0;
      s.median = std::clamp(v < 0 ? v - half : v + half, min_, max_);
    }
    break;
  }
  return s;
}

}  // namespace gpuscope
