// Summary statistics of durations (count, total, min, max, mean, median),
// exact, and fast on tens of millions of values.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "analysis/profile.h"

namespace gpuscope {

// The k-th smallest value (0-based) of `values`, which it reorders. Exact:
// histogram passes narrow the search to one bucket, then nth_element on it,
// so it stays linear with a small constant even for 10^7 values.
TimeNs select_kth(std::span<TimeNs> values, std::size_t k);
// The same when the caller knows the smallest and largest value (lo, hi):
// saves the pass that finds them.
TimeNs select_kth(std::span<TimeNs> values, std::size_t k, TimeNs lo, TimeNs hi);
// … and for values that fit 32 bits (durations under 4.29 s: half the memory).
std::uint32_t select_kth(std::span<std::uint32_t> values, std::size_t k, std::uint32_t lo, std::uint32_t hi);

// The median of a few values, the lower of the two middle ones for an even
// count (as summarize() takes it); 0 for none.
template <class T>
T lower_median(std::vector<T> v) {
  if (v.empty()) return 0;
  const std::size_t k = (v.size() - 1) / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

// Statistics of `values` (reordered). The median of an even count is the
// lower of the two middle values, so it is always an observed duration.
DurationStats summarize(std::span<TimeNs> values);

// Merges count/total/min/max/mean of two summaries; the median cannot be
// merged exactly and is taken from the larger one (callers that need the exact
// median summarize the pooled values instead).
DurationStats merge_approx(const DurationStats& a, const DurationStats& b);

// Exact statistics of a quantity seen in two scans, the first of them cheap:
// the first scan gives sample() one value in every kStride or so (the caller
// picks which), the second gives add() every value. In between, bracket()
// picks from the sample a value range that holds the median with near
// certainty (the sample's quantiles 0.5 -/+ 2/sqrt(sample size)), so the
// second scan only counts the values outside it and keeps the few inside (or,
// when the range spans fewer than kHistogram values, counts each value inside:
// durations cluster, and clocks are often quantized, so that is the usual
// case); finish() selects the median among those. When the sample misled (a pattern
// in the data aliased with the sampling) or the range held more than kKeep
// values, finish() says so and the median is left to the caller
// (StreamingStats over more scans): exact either way.
class BracketMedian {
 public:
  static constexpr std::uint32_t kStride = 61;  // a prime: unlikely to alias with a period of the data
  static constexpr std::size_t kKeep = std::size_t{1} << 20;

  void sample(TimeNs v) { sample_.push_back(v); }
  // Room for n more samples, mapped at once (the sample of a 10^7-op trace
  // is a few MB: page by page, its faults would cost more than taking it).
  void reserve_sample(std::size_t n);
  void bracket();
  void add(TimeNs v) {
    ++stats_.count;
    stats_.total += v;
    stats_.min = v < stats_.min ? v : stats_.min;
    stats_.max = v > stats_.max ? v : stats_.max;
    place(v);
  }
  // add() in two halves, for a caller that keeps count/total/min/max of a
  // run of values itself (in registers) and hands them over at its end.
  // Which side of the bracket a value falls on is as good as random: counted
  // without a branch (a mispredicted one costs more than the rest of place()).
  void place(TimeNs v) {
    Placer p(*this);
    p.place(v);
    p.done();
  }
  // place() for a long run of values: the bracket and the counts in a local
  // object (registers) for the run, handed back by done().
  class Placer {
   public:
    explicit Placer(BracketMedian& m)
        : m_(&m),
          lo_(m.lo_),
          width_(static_cast<std::uint64_t>(m.hi_) - static_cast<std::uint64_t>(m.lo_)),
          hist_(m.hist_.empty() ? nullptr : m.hist_.data()),
          keep_(m.keep_),
          buf_(m.kept_.data()),
          n_(m.kept_n_),
          cap_(m.kept_.size()) {}
    // Which side of the bracket a value falls on is as good as random, and
    // with many equal values (quantized clocks, a steady launch pattern) a
    // good part of them falls inside too: so no branch on either. Inside a
    // narrow bracket a value is counted in its slot of a histogram; inside a
    // wide one it is written to the next free slot every time, and the slot
    // taken only when it is inside. Values above are the rest (done()).
    void place(TimeNs v) {
      ++count_;
      below_ += v < lo_;
      const bool in = inside(v);
      inside_ += in;
      if (hist_) {
        hist_[in ? static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(lo_) : 0] += in;
      } else if (keep_) {
        if (n_ == cap_) [[unlikely]]
          grow();
        buf_[n_] = v;
        n_ += in;
      }
    }
    // place() for n values, with the room for them made first.
    void place(const TimeNs* v, std::size_t n) {
      place(v, n, [](TimeNs) {});
    }
    // … and each value to `also` in the same loop (a caller's sums of the
    // values: one read of each, in the loop's registers).
    template <class Also>
    [[gnu::always_inline]] void place(const TimeNs* v, std::size_t n, Also&& also) {
      if (!hist_ && keep_ && n_ + n >= cap_) {
        if (n_ + n >= kKeep + 1) {  // the room may run out: value by value
          for (std::size_t i = 0; i < n; ++i) also(v[i]), place(v[i]);
          return;
        }
        m_->reserve_kept(n_ + n + 1);
        buf_ = m_->kept_.data(), cap_ = m_->kept_.size();
      }
      std::uint64_t below = 0, in = 0;
      if (hist_) {
        for (std::size_t i = 0; i < n; ++i) {
          also(v[i]);
          below += v[i] < lo_;
          const bool inside_i = inside(v[i]);
          in += inside_i;
          hist_[inside_i ? static_cast<std::uint64_t>(v[i]) - static_cast<std::uint64_t>(lo_) : 0] += inside_i;
        }
      } else if (keep_) {
        std::size_t k = n_;
        for (std::size_t i = 0; i < n; ++i) {
          also(v[i]);
          below += v[i] < lo_;
          buf_[k] = v[i];
          k += inside(v[i]);
        }
        in = k - n_;
        n_ = k;
      } else {
        for (std::size_t i = 0; i < n; ++i) {
          also(v[i]);
          below += v[i] < lo_;
          in += inside(v[i]);
        }
      }
      below_ += below;
      inside_ += in;
      count_ += n;
    }
    void done() {
      m_->below_ += below_;
      m_->above_ += count_ - below_ - inside_;
      m_->kept_n_ = n_;
      below_ = inside_ = count_ = 0;
    }

   private:
    bool inside(TimeNs v) const { return static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(lo_) <= width_; }
    void grow() {
      m_->grow_kept();  // past kKeep values: overflow_, and n_ stays at the spare slot
      buf_ = m_->kept_.data();
      cap_ = m_->kept_.size();
      if (n_ >= cap_) n_ = cap_ - 1;
    }
    BracketMedian* m_;
    TimeNs lo_;
    std::uint64_t width_;  // hi - lo: "inside" is one unsigned comparison
    std::uint32_t* hist_;  // a count per value in [lo, hi], for a narrow bracket
    bool keep_;
    TimeNs* buf_;
    std::size_t n_, cap_;
    std::uint64_t below_ = 0, inside_ = 0, count_ = 0;
  };
  void add_totals(std::uint64_t count, TimeNs total, TimeNs min, TimeNs max) {
    if (count == 0) return;
    stats_.count += count;
    stats_.total += total;
    stats_.min = min < stats_.min ? min : stats_.min;
    stats_.max = max > stats_.max ? max : stats_.max;
  }
  // count/total/min/max/mean, and the median when it returns true.
  bool finish();
  const DurationStats& stats() const { return stats_; }

 private:
  void grow_kept();
  void reserve_kept(std::size_t slots);
  static constexpr std::uint64_t kHistogram = std::uint64_t{1} << 15;  // the widest bracket counted per value
  std::vector<TimeNs> sample_, kept_;  // kept_: the first kept_n_ are the values inside, then free slots
  std::vector<std::uint32_t> hist_;    // or, for a bracket narrower than kHistogram values, a count per
                                       // value (32 bits: 2^32 equal values would need > 100 GB of trace)
  std::size_t kept_n_ = 0;
  TimeNs lo_ = 0, hi_ = -1;
  bool keep_ = true, overflow_ = false;
  std::uint64_t below_ = 0, above_ = 0;
  DurationStats stats_{0, 0, std::numeric_limits<TimeNs>::max(), std::numeric_limits<TimeNs>::min(), 0, 0};
};

// Exact statistics of several quantities whose values can be produced again
// (a scan over trace columns), without storing them: each scan feeds every
// value to add(); after it, end_pass() narrows each median to a value range
// (a log-linear histogram, then linear ones inside the chosen bucket) until
// one value is left or few enough to keep, which the last scan collects.
// Typically two scans; memory: 256 KiB per quantity plus at most kKeep
// values.
//
//   StreamingStats s(3);
//   do { for (each value v of quantity q) s.add(q, v); s.end_pass(); } while (!s.done());
class StreamingStats {
 public:
  explicit StreamingStats(std::size_t quantities);
  void add(std::size_t q, TimeNs v) {
    Quantity& x = q_[q];
    if (first_) {  // the first scan: totals and the log-linear histogram, for every quantity
      x.first(v);
      ++x.count[static_cast<std::size_t>(log_bucket(v))];
      return;
    }
    if (x.resolved || v < x.lo || v > x.hi) return;
    if (x.collecting)
      x.kept.push_back(v);
    else
      ++x.count[(static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(x.lo)) >> x.shift];
  }
  void end_pass();
  bool done() const;
  // count, total, min, max and mean after the first pass; the median once done().
  const DurationStats& stats(std::size_t q) const { return q_[q].stats; }

  static constexpr std::size_t kKeep = std::size_t{1} << 20;
  static constexpr std::uint64_t kLinear = std::uint64_t{1} << 16;  // buckets of the narrowing scans

  // An order-preserving log-linear bucket of an int64: 64 buckets per power
  // of two (six bits after the leading one), negatives mirrored below zero.
  // 8192 buckets cover every int64; a bucket spans at most 1/64 of its
  // values' magnitude.
  static constexpr int kHalf = 64 * 64;
  static int log_bucket(TimeNs v) {
    const std::uint64_t m = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    const int width = std::bit_width(m);  // 0..64
    const int shift = width > 7 ? width - 7 : 0;
    const int sub = static_cast<int>((m >> shift) & 63);
    const int b = width == 64 ? 4095 : width * 64 + sub;  // 0 .. 4095 (2^63 only from INT64_MIN)
    return v < 0 ? kHalf - 1 - b : kHalf + b;
  }

 private:
  struct Quantity {
    DurationStats stats;
    bool resolved = false;
    bool collecting = false;  // this scan keeps the values in [lo, hi]
    int level = 0;            // 0: log-linear buckets; then linear ones of 2^shift over [lo, hi]
    int shift = 0;
    TimeNs lo = 0, hi = 0;
    std::size_t k = 0;  // rank of the median among the values in [lo, hi]
    std::vector<std::uint32_t> count;
    std::vector<TimeNs> kept;
    // min/max start at the far ends (end_pass() zeroes them for no values).
    void first(TimeNs v) {
      ++stats.count;
      stats.total += v;
      stats.min = v < stats.min ? v : stats.min;
      stats.max = v > stats.max ? v : stats.max;
    }
  };
  std::vector<Quantity> q_;
  bool first_ = true;
};

// Durations of one quantity in a form that merges across the ranks of a job
// (each rank's trace is analysed alone and freed): exact (value, count) pairs
// while there are at most kExact distinct values, else log-linear buckets of
// 1/1024 of their magnitude. The median of merged sketches is exact while
// every part stayed exact (quantized clocks, repeated kernels: the usual
// case), else within 0.1 % (the bucket's middle, kept within min..max).
class DurationSketch {
 public:
  static constexpr std::size_t kExact = 1024;
  // Builds from raw values (reordered); exact up to `exact_cap` distinct values.
  static DurationSketch of(std::span<TimeNs> values, std::size_t exact_cap = kExact);
  void merge(const DurationSketch& o, std::size_t exact_cap = kExact);
  DurationStats stats() const;
  bool exact() const { return exact_; }
  std::uint64_t count() const { return count_; }

  // Its whole state, for a digest's binary form (analysis/job/digest_codec.h).
  struct State {
    std::vector<std::pair<TimeNs, std::uint64_t>> items;  // strictly ascending values, counts > 0
    bool exact = true;
    std::uint64_t count = 0;
    TimeNs total = 0, min = 0, max = 0;
  };
  State state() const { return {items_, exact_, count_, total_, min_, max_}; }
  // Nullopt when `s` is not a state some sketch had: items not strictly
  // ascending, a zero count, counts not adding up to `count`, min > max.
  static std::optional<DurationSketch> from_state(State s);

 private:
  static TimeNs bucket(TimeNs v);
  void to_buckets();
  std::vector<std::pair<TimeNs, std::uint64_t>> items_;  // sorted by value (or bucket floor)
  bool exact_ = true;
  std::uint64_t count_ = 0;
  TimeNs total_ = 0, min_ = 0, max_ = 0;
};

}  // namespace gpuscope
