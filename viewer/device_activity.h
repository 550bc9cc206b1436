// Per-GPU activity lanes: utilization (share of time with any GPU op running)
// and kernels in flight, sampled per pixel column at any zoom in O(width).
//
// Precomputed once per trace: the device's time span is cut into uniform
// buckets and two prefix sums are kept — busy ns (union of kernels, memcpys and
// memsets over all of the device's streams) and kernel ns (sum of kernel
// durations, so kernel_ns / bucket_ns is the mean number of kernels in
// flight). A pixel covering [a, b) reads both prefix sums at a and b with
// linear interpolation inside a bucket: two loads and a division per column.
//
// When the view is zoomed in so far that a pixel is narrower than a bucket,
// the lanes are computed exactly from the visible ops instead (few by then):
// see sample_exact.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trace/trace.h"

namespace gpuscope::viewer {

struct LaneSample {
  float busy = 0;       // fraction of the column's time with >= 1 op running, [0, 1]
  float in_flight = 0;  // mean number of kernels running during the column
};

class DeviceActivity {
 public:
  // Builds the lanes of `device` from every GPU track of that device.
  // `max_buckets` bounds memory (16 bytes per bucket).
  static DeviceActivity build(const Trace& trace, std::uint32_t device, std::size_t max_buckets = 1u << 22);

  std::uint32_t device() const { return device_; }
  const std::vector<TrackId>& tracks() const { return tracks_; }
  TimeNs begin() const { return t0_; }
  TimeNs end() const { return t1_; }
  TimeNs bucket_ns() const { return bucket_ns_; }
  std::size_t buckets() const { return busy_prefix_.empty() ? 0 : busy_prefix_.size() - 1; }
  TimeNs total_busy_ns() const { return busy_prefix_.empty() ? 0 : busy_prefix_.back(); }
  TimeNs total_kernel_ns() const { return kernel_prefix_.empty() ? 0 : kernel_prefix_.back(); }
  std::uint64_t ops() const { return ops_; }

  // Fills out[i] for the columns [view_start + i*ns_per_px, … + ns_per_px).
  // Uses the buckets when a column spans at least one bucket, else the exact
  // path (bounded by `exact_limit` visible ops; beyond it the buckets again).
  void sample(const Trace& trace, TimeNs view_start, double ns_per_px, std::span<LaneSample> out,
              std::size_t exact_limit = 100'000) const;

  // The bucket path alone (public for tests).
  void sample_buckets(TimeNs view_start, double ns_per_px, std::span<LaneSample> out) const;
  // The exact path alone: returns false (and leaves `out` alone) if more than
  // `limit` ops are visible.
  bool sample_exact(const Trace& trace, TimeNs view_start, double ns_per_px, std::span<LaneSample> out,
                    std::size_t limit) const;

  std::size_t memory_bytes() const {
    return (busy_prefix_.capacity() + kernel_prefix_.capacity()) * sizeof(TimeNs) +
           tracks_.capacity() * sizeof(TrackId);
  }

 private:
  // `rel`: ns after begin(). Times are made relative in integers first: an
  // epoch-scale time (1.7e18 ns) is a double with a 256 ns step, which would
  // make the columns of a µs-wide view jitter by a quarter of their width.
  double busy_at(double rel) const { return at(busy_prefix_, rel); }
  double kernel_at(double rel) const { return at(kernel_prefix_, rel); }
  double at(const std::vector<TimeNs>& prefix, double rel) const;

  std::uint32_t device_ = 0;
  std::vector<TrackId> tracks_;
  TimeNs t0_ = 0, t1_ = 0, bucket_ns_ = 1;
  std::uint64_t ops_ = 0;
  std::vector<TimeNs> busy_prefix_, kernel_prefix_;  // buckets + 1 entries, [0] = 0
};

// The union of intervals sorted by start, streamed: feed intervals in start
// order, get back disjoint merged intervals in order (exposed for tests).
class IntervalUnion {
 public:
  template <class Out>
  void add(TimeNs s, TimeNs e, Out&& out) {
    if (!open_) {
      s_ = s;
      e_ = e;
      open_ = true;
    } else if (s > e_) {
      out(s_, e_);
      s_ = s;
      e_ = e;
    } else if (e > e_) {
      e_ = e;
    }
  }
  template <class Out>
  void finish(Out&& out) {
    if (open_) out(s_, e_);
    open_ = false;
  }

 private:
  TimeNs s_ = 0, e_ = 0;
  bool open_ = false;
};

}  // namespace gpuscope::viewer
