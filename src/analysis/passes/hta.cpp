// HTA-exact numbers. See hta.h for the rules; this file only applies them.
//
// [SECTION] HTA's op rules (shared with the device sweep: detail/hta_rules.h)
// [SECTION] HTA's µs grid
// [SECTION] pandas-style interval merging
// [SECTION] Temporal breakdown, idle breakdown, comm/comp overlap
//
// This is the reference emulation: it sorts every selected op, as pandas
// does, which is simple and exact. The Profile's per-device numbers come from
// the device sweep (device_pass.cpp) with the same rules and no sort; golden
// tests check both against HTA's own output.
#include "analysis/passes/hta.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <string_view>

#include "analysis/detail/context.h"
#include "analysis/passes/hta_rules.h"
#include "analysis/util/intervals.h"

namespace gpuscope {

// [SECTION] HTA's op rules ----------------------------------------------------------------------

namespace detail {

namespace {

// The start of the last ProfilerStep#N when there are >= 2 distinct ones, else
// "no filter". Step ranges on GPU tracks (Kineto also writes a GPU-side
// gpu_user_annotation copy) have the same names and never start earlier.
bool last_profiler_step_start(const Trace& t, TimeNs* cutoff) {
  std::map<std::string_view, TimeNs> first_start;  // a handful of steps
  const RangeTable& r = t.ranges();
  for (std::size_t i = 0; i < r.size(); ++i) {
    const std::string_view name = t.str(r.name[i]);
    if (!detail::is_profiler_step(name)) continue;
    auto [it, added] = first_start.emplace(name, r.start[i]);
    if (!added) it->second = std::min(it->second, r.start[i]);
  }
  if (first_start.size() < 2) return false;
  TimeNs last = first_start.begin()->second;
  for (const auto& [name, start] : first_start) last = std::max(last, start);
  *cutoff = last;
  return true;
}

}  // namespace

HtaOpFilter::HtaOpFilter(const Trace& t) : t_(t) {
  active_ = last_profiler_step_start(t, &cutoff_);
  if (!active_) return;
  // Correlations of CPU-side events that are not API calls: cuda_sync events
  // without a stream (other than Event/Context Sync, which HTA counts as GPU ops).
  const SyncTable& s = t.syncs();
  for (std::size_t i = 0; i < s.size(); ++i) {
    const SyncType type = s.type_at(i);
    if (s.stream[i] == kNoId && type != SyncType::event && type != SyncType::context && s.start[i] < cutoff_)
      extra_.insert(s.correlation[i]);
  }
  // Syncs that are GPU ops find their API call by correlation.
  if (s.size()) {
    const ApiCallTable& a = t.api_calls();
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a.start[i] < cutoff_) api_before_.insert(a.correlation[i]);
  }
}

bool hta_non_compute(std::string_view name) {
  if (name.starts_with("nccl") || name.starts_with("Stream Wait Event") || name.starts_with("runFunction") ||
      name.starts_with("hip") || name.starts_with("hccl"))
    return true;
  if (name.find("Memcpy") != std::string_view::npos || name.find("Memset") != std::string_view::npos ||
      name.find("dma") != std::string_view::npos || name.find("Sync") != std::string_view::npos)
    return true;
  const std::size_t c = name.find("cuda");  // cuda.*LaunchKernel
  return c != std::string_view::npos && name.find("LaunchKernel", c + 4) != std::string_view::npos;
}

// ns/1000 rounded to the nearest double, ties to even, as Python's float()
// (and strtod) round the JSON text "<ns/1000>.<ns%1000>". Below 2^53 both
// operands of one IEEE division are exact, so it is correctly rounded; beyond
// (absolute epoch times) integers do it: the quotient scaled to 63 bits (the
// whole µs shifted up, the remainder's bits below them), 10 of them past the
// 53 kept, plus a sticky bit for what the division left.
double hta_json_us(TimeNs ns) {
  if (ns > -(TimeNs{1} << 53) && ns < (TimeNs{1} << 53)) return static_cast<double>(ns) / 1000.0;
  const std::uint64_t mag = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  const std::uint64_t whole = mag / 1000, rem = mag % 1000;  // whole: 44 to 54 bits
  const int k = std::countl_zero(whole) - 1;                 // 9 to 19
  const std::uint64_t low = rem << k;                        // < 1000 * 2^19
  const std::uint64_t q = (whole << k) | (low / 1000);       // in [2^62, 2^63)
  const bool sticky = low % 1000 != 0;
  std::uint64_t m = q >> 10;
  const std::uint64_t rest = q & 1023;
  if (rest > 512 || (rest == 512 && (sticky || (m & 1)))) ++m;  // m may become 2^53: still exact
  // m * 2^(10 - k), exactly: a power of two from its bits.
  const double scale = std::bit_cast<double>(static_cast<std::uint64_t>(1023 + 10 - k) << 52);
  const double d = static_cast<double>(m) * scale;
  return ns < 0 ? -d : d;
}

}  // namespace detail

namespace {

using detail::HtaComputeNames;
using detail::HtaOpFilter;

// [SECTION] HTA's µs grid -----------------------------------------------------------------

// Converts trace times to what HTA computes with: exact ns for traces on an
// integer-µs (or ns) grid; for sub-µs JSON, the pandas double of the JSON's
// µs text, rounded to [ceil(ts), floor(ts + dur)].
class Grid {
 public:
  explicit Grid(const Trace& t) : sub_us_(has_sub_us_timestamps(t)) {
    const std::string_view origin = t.meta().property("chrome.ts_origin_ns");
    if (!origin.empty()) std::from_chars(origin.data(), origin.data() + origin.size(), origin_);
  }

  TimeRange op(TimeNs start, TimeNs end) const {
    if (!sub_us_) return {start, end};
    const double ts = detail::hta_json_us(start - origin_);
    const double dur = static_cast<double>(end - start) / 1000.0;  // exact operands: correctly rounded
    return {static_cast<TimeNs>(std::ceil(ts)) * 1000, static_cast<TimeNs>(std::floor(ts + dur)) * 1000};
  }
  TimeNs point(TimeNs t) const {
    if (!sub_us_) return t;
    return static_cast<TimeNs>(std::ceil(detail::hta_json_us(t - origin_))) * 1000;
  }

 private:
  bool sub_us_;
  TimeNs origin_ = 0;
};

// [SECTION] pandas-style interval merging -------------------------------------------------

struct Iv {
  TimeNs start, end;
  bool compute;
};

struct Merged {
  TimeNs first_start = 0, last_end = 0, length = 0;
  bool any = false;
};

// HTA's merge_kernel_intervals then sums: pandas' group = (ts >
// end.shift().cummax()).cumsum(), each group min(ts) .. max(end). A group may
// be inverted (end < start) after rounding and then subtracts, as in HTA.
Merged merge_pandas(const std::vector<Iv>& sorted, bool compute_only) {
  Merged m;
  TimeNs group_start = 0, group_end = 0, cummax = 0;
  bool open = false;
  for (const Iv& iv : sorted) {
    if (compute_only && !iv.compute) continue;
    if (!open || iv.start > cummax) {
      if (open)
        m.length += group_end - group_start;
      else
        m.first_start = iv.start;
      group_start = iv.start;
      group_end = iv.end;
      cummax = open ? std::max(cummax, iv.end) : iv.end;
      open = true;
    } else {
      group_end = std::max(group_end, iv.end);
      cummax = std::max(cummax, iv.end);
    }
  }
  if (open) {
    m.length += group_end - group_start;
    m.last_end = group_end;
    m.any = true;
  }
  return m;
}

constexpr TrackId kNoTrack = 0xffffffffu;

// Calls f(track, start, end, compute, api row) for HTA's op set on `device`
// (kNoDevice: all): kernels, memcpys, memsets, and — for the temporal
// breakdown — the syncs that carry a stream.
template <class F>
void for_each_hta_op(const Trace& t, std::uint32_t device, bool with_syncs, F&& f) {
  const HtaOpFilter filter(t);
  HtaComputeNames compute(t);
  const KernelTable& k = t.kernels();
  const MemcpyTable& m = t.memcpys();
  const MemsetTable& z = t.memsets();
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    const Track& track = t.tracks()[tr];
    if (track.kind != TrackKind::gpu || (device != kNoDevice && track.device != device)) continue;
    RowRange r = t.rows_of(TableId::kernels, tr);
    for (RowIndex i = r.begin; i < r.end; ++i)
      if (filter.keep(k.correlation[i], k.api[i])) f(tr, k.start[i], k.end[i], compute(k.name[i]), k.api[i]);
    r = t.rows_of(TableId::memcpys, tr);
    for (RowIndex i = r.begin; i < r.end; ++i)
      if (filter.keep(m.correlation[i], m.api[i])) f(tr, m.start[i], m.end[i], false, m.api[i]);
    r = t.rows_of(TableId::memsets, tr);
    for (RowIndex i = r.begin; i < r.end; ++i)
      if (filter.keep(z.correlation[i], z.api[i])) f(tr, z.start[i], z.end[i], false, z.api[i]);
  }
  if (!with_syncs) return;
  const SyncTable& y = t.syncs();
  for (std::size_t i = 0; i < y.size(); ++i)
    if (y.stream[i] != kNoId && (device == kNoDevice || y.device[i] == device) && filter.keep_sync(y.correlation[i]))
      f(kNoTrack, y.start[i], y.end[i], false, kNoRow);  // "… Sync": non-compute
}

}  // namespace

// [SECTION] Temporal breakdown, idle breakdown, comm/comp overlap -----------------------------

bool has_sub_us_timestamps(const Trace& trace) { return trace.meta().property("chrome.sub_us_timestamps") == "1"; }

TemporalBreakdown hta_temporal_breakdown(const Trace& t, std::uint32_t device) {
  const Grid grid(t);
  std::vector<Iv> ivs;
  for_each_hta_op(t, device, true, [&](TrackId, TimeNs s, TimeNs e, bool compute, RowIndex) {
    const TimeRange r = grid.op(s, e);
    ivs.push_back({r.start, r.end, compute});
  });
  std::sort(ivs.begin(), ivs.end(),
            [](const Iv& a, const Iv& b) { return a.start != b.start ? a.start < b.start : a.end < b.end; });
  const Merged all = merge_pandas(ivs, false);
  const Merged comp = merge_pandas(ivs, true);
  TemporalBreakdown tb;
  tb.rank = std::max(0, t.meta().rank);
  tb.device = device;
  if (!all.any) return tb;
  return make_temporal_breakdown(tb.rank, device, all.last_end - all.first_start, all.length, comp.length);
}

TemporalBreakdown make_temporal_breakdown(std::int32_t rank, std::uint32_t device, TimeNs span, TimeNs busy,
                                          TimeNs compute) {
  TemporalBreakdown tb;
  tb.rank = rank;
  tb.device = device;
  tb.span_ns = span;
  tb.idle_ns = span - busy;
  tb.compute_ns = compute;
  tb.non_compute_ns = span - tb.idle_ns - compute;
  if (span > 0) {
    const double d = static_cast<double>(span);
    tb.idle_share = static_cast<double>(tb.idle_ns) / d;
    tb.compute_share = static_cast<double>(tb.compute_ns) / d;
    tb.non_compute_share = static_cast<double>(tb.non_compute_ns) / d;
  }
  if (tb.non_compute_ns < 0) {
    char raw[32];
    std::snprintf(raw, sizeof raw, "%.3f%%", tb.non_compute_share * 100);
    tb.non_compute_note = std::string("HTA's own non-compute figure is ") + raw +
                          ": it rounds times to whole µs, and ops shorter than that rounding count against the busy "
                          "time; shown as 0";
    tb.non_compute_ns = 0;
    tb.non_compute_share = 0;
  }
  return tb;
}

std::vector<IdleByCause> hta_idle_breakdown(const Trace& t, double consecutive_kernel_delay_us) {
  const Grid grid(t);
  struct Op {
    TrackId track;
    TimeNs start, end, runtime;  // runtime: launching call's start, or min() if none
  };
  std::vector<Op> ops;
  constexpr TimeNs kNone = std::numeric_limits<TimeNs>::min();
  for_each_hta_op(t, kNoDevice, false, [&](TrackId track, TimeNs s, TimeNs e, bool, RowIndex api) {
    const TimeRange r = grid.op(s, e);
    ops.push_back({track, r.start, r.end, api == kNoRow ? kNone : grid.point(t.api_calls().start[api])});
  });
  std::stable_sort(ops.begin(), ops.end(),
                   [](const Op& a, const Op& b) { return a.track != b.track ? a.track < b.track : a.start < b.start; });
  const double delay_ns = consecutive_kernel_delay_us * 1000.0;
  std::vector<IdleByCause> out;
  for (std::size_t i = 0; i < ops.size();) {
    std::size_t j = i;
    IdleByCause row;
    row.rank = std::max(0, t.meta().rank);
    row.device = t.tracks()[ops[i].track].device;
    row.stream = t.tracks()[ops[i].track].stream;
    for (++j; j < ops.size() && ops[j].track == ops[i].track; ++j) {
      const TimeNs prev_end = ops[j - 1].end;
      const TimeNs gap = ops[j].start - prev_end;
      if (ops[j].runtime != kNone && ops[j].runtime > prev_end)
        row.host_wait_ns += gap;
      else if (static_cast<double>(gap) < delay_ns)
        row.kernel_wait_ns += gap;
      else
        row.other_ns += gap;
    }
    out.push_back(row);
    i = j;
  }
  return out;
}

double hta_comm_comp_overlap(const Trace& t) {
  const HtaOpFilter filter(t);
  const Grid grid(t);
  std::vector<TimeRange> comm, comp;
  const KernelTable& k = t.kernels();
  for (std::size_t i = 0; i < k.size(); ++i) {
    if (!filter.keep(k.correlation[i], k.api[i])) continue;
    const std::string_view name = t.str(k.name[i]);
    const TimeRange r = grid.op(k.start[i], k.end[i]);
    if (r.end <= r.start) continue;
    if (name.starts_with("nccl") || name.find("ncclKernel") != std::string_view::npos)
      comm.push_back(r);
    else if (name.find("Memcpy") == std::string_view::npos && name.find("Memset") == std::string_view::npos)
      comp.push_back(r);
  }
  const intervals::IntervalSet cm = intervals::union_of(std::move(comm)), cp = intervals::union_of(std::move(comp));
  const TimeNs comm_len = intervals::length(cm);
  if (comm_len <= 0) return -1;
  const TimeNs both = intervals::intersection_length(cm, cp);
  return static_cast<double>(both) / static_cast<double>(comm_len);
}

}  // namespace gpuscope
