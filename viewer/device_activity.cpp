#include "viewer/device_activity.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

namespace gpuscope::viewer {
namespace {

// One sorted run of GPU ops: the rows of one table on one track.
struct Source {
  const TimeNs* start;
  const TimeNs* end;
  RowIndex begin, stop;
  bool kernel;
};

std::vector<Source> sources_of(const Trace& trace, const std::vector<TrackId>& tracks) {
  std::vector<Source> out;
  for (TrackId t : tracks) {
    auto add = [&](TableId id, const std::vector<TimeNs>& s, const std::vector<TimeNs>& e, bool kernel) {
      const RowRange r = trace.rows_of(id, t);
      if (!r.empty()) out.push_back({s.data(), e.data(), r.begin, r.end, kernel});
    };
    add(TableId::kernels, trace.kernels().start, trace.kernels().end, true);
    add(TableId::memcpys, trace.memcpys().start, trace.memcpys().end, false);
    add(TableId::memsets, trace.memsets().start, trace.memsets().end, false);
  }
  return out;
}

// Visits the rows of all sources in order of start time (k-way merge; each
// source is already sorted by start, so this is O(n log k), no sort of n).
template <class F>
void merge_by_start(std::vector<Source>& sources, F&& f) {
  using Head = std::pair<TimeNs, std::uint32_t>;  // (start of the next row, source)
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap;
  for (std::uint32_t i = 0; i < sources.size(); ++i)
    if (sources[i].begin < sources[i].stop) heap.emplace(sources[i].start[sources[i].begin], i);
  while (!heap.empty()) {
    const std::uint32_t si = heap.top().second;
    heap.pop();
    Source& s = sources[si];
    // Drain this source while it stays ahead of the others (the common case
    // of one busy stream): saves heap traffic.
    const TimeNs limit = heap.empty() ? std::numeric_limits<TimeNs>::max() : heap.top().first;
    do {
      f(s.start[s.begin], s.end[s.begin], s.kernel);
      ++s.begin;
    } while (s.begin < s.stop && s.start[s.begin] <= limit);
    if (s.begin < s.stop) heap.emplace(s.start[s.begin], si);
  }
}

// Times are taken relative to the lanes' start in unsigned arithmetic: a
// damaged or hostile trace may span more than an int64 holds (t1 - t0 would
// overflow). The lanes then cover the first kMaxSpan ns; ops beyond are cut.
constexpr std::uint64_t kMaxSpan = static_cast<std::uint64_t>(std::numeric_limits<TimeNs>::max());
std::uint64_t after(TimeNs t, TimeNs t0) { return static_cast<std::uint64_t>(t) - static_cast<std::uint64_t>(t0); }

// Adds the length of [s, e) (s >= t0) to the buckets of width `bw` starting at t0.
void add_to_buckets(std::vector<TimeNs>& buckets, TimeNs t0, std::uint64_t bw, TimeNs s, TimeNs e) {
  if (e <= s) return;
  const std::uint64_t cap = static_cast<std::uint64_t>(buckets.size()) * bw;
  const std::uint64_t rs = after(s, t0), re = std::min(after(e, t0), cap);
  if (rs >= re) return;
  const std::size_t b0 = static_cast<std::size_t>(rs / bw);
  const std::size_t b1 = std::min(static_cast<std::size_t>(re / bw), buckets.size() - 1);
  auto add = [&](std::size_t b, std::uint64_t ns) {  // saturating: overlapping kernels of a hostile trace
    const auto room = static_cast<std::uint64_t>(std::numeric_limits<TimeNs>::max() - buckets[b]);
    buckets[b] += static_cast<TimeNs>(std::min(ns, room));
  };
  if (b0 >= b1) return add(std::min(b0, buckets.size() - 1), re - rs);
  add(b0, (b0 + 1) * bw - rs);
  for (std::size_t b = b0 + 1; b < b1; ++b) add(b, bw);
  add(b1, re - b1 * bw);
}

// Prefix sums that saturate instead of overflowing (kernel time summed over
// many overlapping kernels of a hostile trace could pass 2^63).
void prefix_sums(const std::vector<TimeNs>& v, std::vector<TimeNs>& prefix) {
  prefix.resize(v.size() + 1);
  prefix[0] = 0;
  for (std::size_t b = 0; b < v.size(); ++b)
    prefix[b + 1] =
        v[b] > std::numeric_limits<TimeNs>::max() - prefix[b] ? std::numeric_limits<TimeNs>::max() : prefix[b] + v[b];
}

// Adds the coverage of [a, b) (in column units, relative to column 0) to
// `cols` through a difference array for the fully covered middle.
void rasterize(std::vector<double>& cols, std::vector<double>& diff, double a, double b, double weight) {
  const double n = static_cast<double>(cols.size());
  a = std::max(a, 0.0);
  b = std::min(b, n);
  if (b <= a) return;
  const auto ca = static_cast<std::size_t>(a), cb = static_cast<std::size_t>(b);
  if (ca == cb || (cb == ca + 1 && b == static_cast<double>(cb))) {
    cols[ca] += (b - a) * weight;
    return;
  }
  cols[ca] += (static_cast<double>(ca + 1) - a) * weight;
  // Full columns ca+1 .. cb-1.
  diff[ca + 1] += weight;
  diff[cb] -= weight;
  if (cb < cols.size()) cols[cb] += (b - static_cast<double>(cb)) * weight;
}

}  // namespace

DeviceActivity DeviceActivity::build(const Trace& trace, std::uint32_t device, std::size_t max_buckets) {
  DeviceActivity a;
  a.device_ = device;
  for (TrackId t = 0; t < trace.tracks().size(); ++t)
    if (trace.tracks()[t].kind == TrackKind::gpu && trace.tracks()[t].device == device) a.tracks_.push_back(t);
  std::vector<Source> sources = sources_of(trace, a.tracks_);
  if (sources.empty()) return a;

  TimeNs t0 = std::numeric_limits<TimeNs>::max(), t1 = std::numeric_limits<TimeNs>::min();
  for (const Source& s : sources) {
    t0 = std::min(t0, s.start[s.begin]);
    for (RowIndex i = s.begin; i < s.stop; ++i) t1 = std::max(t1, s.end[i]);
    a.ops_ += s.stop - s.begin;
  }
  a.t0_ = t0;
  const std::uint64_t span = t1 > t0 ? std::min(after(t1, t0), kMaxSpan) : 1;
  a.t1_ = static_cast<TimeNs>(static_cast<std::uint64_t>(t0) + span);
  // About four ops per bucket: fine enough that the bucket path is used only
  // where a pixel column covers many ops, coarse enough to stay small.
  const std::size_t want = std::clamp<std::size_t>(a.ops_ / 4, 1024, std::max<std::size_t>(max_buckets, 1));
  const std::uint64_t bw = std::max<std::uint64_t>(1, (span + want - 1) / want);
  a.bucket_ns_ = static_cast<TimeNs>(bw);
  const std::size_t nb = static_cast<std::size_t>((span + bw - 1) / bw);

  std::vector<TimeNs> busy(nb, 0), kern(nb, 0);
  IntervalUnion u;
  auto emit = [&](TimeNs s, TimeNs e) { add_to_buckets(busy, a.t0_, bw, s, e); };
  merge_by_start(sources, [&](TimeNs s, TimeNs e, bool kernel) {
    if (kernel) add_to_buckets(kern, a.t0_, bw, s, e);
    u.add(s, e, emit);
  });
  u.finish(emit);

  prefix_sums(busy, a.busy_prefix_);
  prefix_sums(kern, a.kernel_prefix_);
  return a;
}

double DeviceActivity::at(const std::vector<TimeNs>& prefix, double rel) const {
  if (prefix.empty()) return 0;
  if (rel <= 0) return 0;
  const double pos = rel / static_cast<double>(bucket_ns_);
  const std::size_t nb = prefix.size() - 1;
  if (pos >= static_cast<double>(nb)) return static_cast<double>(prefix.back());
  const auto i = static_cast<std::size_t>(pos);
  const double frac = pos - static_cast<double>(i);
  return static_cast<double>(prefix[i]) + frac * static_cast<double>(prefix[i + 1] - prefix[i]);
}

void DeviceActivity::sample_buckets(TimeNs view_start, double ns_per_px, std::span<LaneSample> out) const {
  TimeNs rel = 0;  // exact when it fits (see busy_at), else as near as a double gets
  const double base = __builtin_sub_overflow(view_start, t0_, &rel)
                          ? static_cast<double>(view_start) - static_cast<double>(t0_)
                          : static_cast<double>(rel);
  double prev_busy = busy_at(base);
  double prev_kern = kernel_at(base);
  for (std::size_t c = 0; c < out.size(); ++c) {
    const double t = base + static_cast<double>(c + 1) * ns_per_px;
    const double b = busy_at(t), k = kernel_at(t);
    out[c].busy = static_cast<float>(std::clamp((b - prev_busy) / ns_per_px, 0.0, 1.0));
    out[c].in_flight = static_cast<float>(std::max(0.0, (k - prev_kern) / ns_per_px));
    prev_busy = b;
    prev_kern = k;
  }
}

bool DeviceActivity::sample_exact(const Trace& trace, TimeNs view_start, double ns_per_px, std::span<LaneSample> out,
                                  std::size_t limit) const {
  const auto view_end =
      static_cast<TimeNs>(std::ceil(static_cast<double>(view_start) + ns_per_px * static_cast<double>(out.size())));
  std::vector<Source> sources;
  std::size_t visible = 0;
  for (TrackId t : tracks_) {
    auto add = [&](TableId id, const std::vector<TimeNs>& s, const std::vector<TimeNs>& e, bool kernel) {
      const RowRange r = trace.rows_overlapping(id, t, view_start, view_end);
      if (r.empty()) return;
      visible += r.size();
      sources.push_back({s.data(), e.data(), r.begin, r.end, kernel});
    };
    add(TableId::kernels, trace.kernels().start, trace.kernels().end, true);
    add(TableId::memcpys, trace.memcpys().start, trace.memcpys().end, false);
    add(TableId::memsets, trace.memsets().start, trace.memsets().end, false);
  }
  if (visible > limit) return false;

  const std::size_t n = out.size();
  std::vector<double> busy(n, 0), busy_diff(n + 1, 0), kern(n, 0), kern_diff(n + 1, 0);
  const double v0 = static_cast<double>(view_start);
  auto col = [&](TimeNs t) { return (static_cast<double>(t) - v0) / ns_per_px; };
  IntervalUnion u;
  auto emit = [&](TimeNs s, TimeNs e) { rasterize(busy, busy_diff, col(s), col(e), 1.0); };
  merge_by_start(sources, [&](TimeNs s, TimeNs e, bool kernel) {
    if (kernel) rasterize(kern, kern_diff, col(s), col(e), 1.0);
    u.add(s, e, emit);
  });
  u.finish(emit);
  double run_b = 0, run_k = 0;
  for (std::size_t c = 0; c < n; ++c) {
    run_b += busy_diff[c];
    run_k += kern_diff[c];
    out[c].busy = static_cast<float>(std::clamp(busy[c] + run_b, 0.0, 1.0));
    out[c].in_flight = static_cast<float>(std::max(0.0, kern[c] + run_k));
  }
  return true;
}

void DeviceActivity::sample(const Trace& trace, TimeNs view_start, double ns_per_px, std::span<LaneSample> out,
                            std::size_t exact_limit) const {
  if (busy_prefix_.empty() || !(ns_per_px > 0)) {
    std::fill(out.begin(), out.end(), LaneSample{});
    return;
  }
  if (ns_per_px < static_cast<double>(bucket_ns_) && sample_exact(trace, view_start, ns_per_px, out, exact_limit))
    return;
  sample_buckets(view_start, ns_per_px, out);
}

}  // namespace gpuscope::viewer
