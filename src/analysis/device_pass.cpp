// The device pass: per GPU, the unions of its ops and everything measured on
// them — busy, utilization, kernel concurrency, copy/compute and
// communication/compute overlap, idle gaps and their causes.
//
// [SECTION] Helpers (input ranges, gap causes)
// [SECTION] One device
// [SECTION] Entry point
//
// Rows of a track are sorted by start, so each track's union is one linear
// pass (intervals::append_sorted) and a device's union merges a few tracks.
// Concurrency needs every start and every end in order: per-track runs merged.
#include <algorithm>
#include <map>

#include "analysis/detail/context.h"

namespace gpuscope::detail {

namespace {

using namespace intervals;

// [SECTION] Helpers ---------------------------------------------------------------------------

// Union of the trace's data-loading CPU ranges.
IntervalSet input_ranges(const Trace& t) {
  const RangeTable& r = t.ranges();
  std::vector<std::uint8_t> is_input(t.strings().size(), 2);  // 2 = not decided yet
  std::vector<TimeRange> found;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (t.tracks()[r.track[i]].kind != TrackKind::cpu || r.kind_at(i) == RangeKind::mark) continue;
    std::uint8_t& decided = is_input[r.name[i]];
    if (decided == 2) decided = is_input_range_name(t.str(r.name[i])) ? 1 : 0;
    if (decided) found.push_back({r.start[i], r.end[i]});
  }
  return union_of(std::move(found));
}

// Walks the ops of a device in start order, per (table, track), to find the
// op that ends each idle gap and when it was launched.
class GapCloser {
 public:
  GapCloser(const Trace& t, const std::vector<TrackId>& tracks) : t_(t) {
    for (TrackId tr : tracks) {
      add(TableId::kernels, t.rows_of(TableId::kernels, tr), t.kernels().start, t.kernels().api);
      add(TableId::memcpys, t.rows_of(TableId::memcpys, tr), t.memcpys().start, t.memcpys().api);
      add(TableId::memsets, t.rows_of(TableId::memsets, tr), t.memsets().start, t.memsets().api);
    }
  }
  // Earliest launch (API call start) of the ops starting exactly at `when`;
  // false if none of them is linked to a launch. Calls must come with
  // non-decreasing `when`.
  bool launch_of_op_at(TimeNs when, TimeNs* launch) {
    bool found = false;
    for (Cursor& c : cursors_) {
      while (c.row < c.end && (*c.start)[c.row] < when) ++c.row;
      for (RowIndex r = c.row; r < c.end && (*c.start)[r] == when; ++r) {
        const RowIndex api = (*c.api)[r];
        if (api == kNoRow) continue;
        const TimeNs s = t_.api_calls().start[api];
        if (!found || s < *launch) *launch = s;
        found = true;
      }
    }
    return found;
  }

 private:
  struct Cursor {
    const std::vector<TimeNs>* start;
    const std::vector<RowIndex>* api;
    RowIndex row, end;
  };
  void add(TableId, RowRange rows, const std::vector<TimeNs>& start, const std::vector<RowIndex>& api) {
    if (!rows.empty()) cursors_.push_back({&start, &api, rows.begin, rows.end});
  }
  const Trace& t_;
  std::vector<Cursor> cursors_;
};

// [SECTION] One device --------------------------------------------------------------------------

void analyse_device(const RankedTrace& rt, const AnalysisOptions& opt, std::uint32_t device,
                    const std::vector<TrackId>& tracks, const IntervalSet& inputs, DeviceSummary* d, DeviceSets* s,
                    Evidence* ev) {
  const Trace& t = *rt.trace;
  const KernelTable& k = t.kernels();
  const MemcpyTable& mc = t.memcpys();
  const MemsetTable& ms = t.memsets();
  const Device* info = t.device(device);
  const std::uint32_t sms = info ? info->sm_count : 0;

  d->id = device;
  d->rank = rt.rank;
  if (info) {
    d->name = info->name;
    d->compute_major = info->compute_major;
    d->compute_minor = info->compute_minor;
    d->sm_count = info->sm_count;
  }
  s->device = device;

  std::vector<IntervalSet> comp_sets, comm_sets, copy_sets, fill_sets;
  std::vector<TimeNs> starts, ends;
  std::vector<std::size_t> runs{0};
  TimeNs lo = 0, hi = 0;
  bool any = false;
  auto widen = [&](TimeNs a, TimeNs b) {
    if (!any) lo = a, hi = b, any = true;
    lo = std::min(lo, a);
    hi = std::max(hi, b);
  };
  double sm_weighted = 0;  // sum of duration * min(blocks / SMs, 1)

  for (TrackId tr : tracks) {
    const RowRange kr = t.rows_of(TableId::kernels, tr);
    const RowRange cr = t.rows_of(TableId::memcpys, tr);
    const RowRange sr = t.rows_of(TableId::memsets, tr);
    if (kr.empty() && cr.empty() && sr.empty()) continue;
    ++d->streams;

    IntervalSet comp, comm;
    const std::size_t run_begin = starts.size();
    bool ends_sorted = true;
    for (RowIndex i = kr.begin; i < kr.end; ++i) {
      const TimeNs a = k.start[i], b = k.end[i];
      const KernelCategory cat = k.category_at(i);
      if (cat == KernelCategory::communication) append_sorted(comm, a, b);
      else append_sorted(comp, a, b);
      if (!ends.empty() && starts.size() > run_begin && b < ends.back()) ends_sorted = false;
      starts.push_back(a);
      ends.push_back(b);
      d->kernel_time_ns += b - a;
      ev->ops_by_category[static_cast<int>(cat)].add(rt.shift({a, b}), b - a);
      if (sms) {
        const double blocks = double(k.grid_x[i]) * double(k.grid_y[i]) * double(k.grid_z[i]);
        sm_weighted += double(b - a) * std::min(blocks / double(sms), 1.0);
      }
    }
    if (!kr.empty()) {
      widen(k.start[kr.begin], *std::max_element(k.end.begin() + kr.begin, k.end.begin() + kr.end));
      if (!ends_sorted) std::sort(ends.begin() + static_cast<std::ptrdiff_t>(run_begin), ends.end());
      runs.push_back(starts.size());
      d->kernels += kr.size();
    }
    IntervalSet copies, fills;
    for (RowIndex i = cr.begin; i < cr.end; ++i) {
      append_sorted(copies, mc.start[i], mc.end[i]);
      widen(mc.start[i], mc.end[i]);
    }
    for (RowIndex i = sr.begin; i < sr.end; ++i) {
      append_sorted(fills, ms.start[i], ms.end[i]);
      widen(ms.start[i], ms.end[i]);
    }
    d->memcpys += cr.size();
    d->memsets += sr.size();
    comp_sets.push_back(std::move(comp));
    comm_sets.push_back(std::move(comm));
    copy_sets.push_back(std::move(copies));
    fill_sets.push_back(std::move(fills));
  }
  if (!any) return;

  // Kernels in flight: all starts and all ends, each in order.
  merge_sorted_runs(starts, runs);
  merge_sorted_runs(ends, runs);
  const Coverage cov = coverage(starts, ends);
  std::vector<TimeNs>().swap(starts);
  std::vector<TimeNs>().swap(ends);

  IntervalSet compute = unite_all(std::move(comp_sets));
  const IntervalSet comm = unite_all(std::move(comm_sets));
  const IntervalSet copies = unite_all(std::move(copy_sets));
  const IntervalSet kernels = unite(compute, comm);
  const IntervalSet mem = unite(copies, unite_all(std::move(fill_sets)));
  s->all = unite(kernels, mem);
  s->window = {lo, hi};

  d->window = rt.shift(s->window);
  d->span_ns = hi - lo;
  d->busy_ns = length(s->all);
  d->utilization = ratio(d->busy_ns, d->span_ns);
  d->idle_ns = d->span_ns - d->busy_ns;
  d->kernel_busy_ns = cov.covered;
  d->kernel_concurrency = ratio(cov.multi, cov.covered);
  d->mean_kernels_in_flight = ratio(cov.total, cov.covered);
  d->compute_ns = length(compute);
  d->communication_ns = length(comm);
  d->communication_compute_overlap = ratio(intersection_length(comm, compute), d->communication_ns);
  d->memcpy_ns = length(copies);
  d->memcpy_compute_overlap = ratio(intersection_length(copies, kernels), d->memcpy_ns);
  if (sms && d->kernel_time_ns > 0) d->sm_efficiency = sm_weighted / double(d->kernel_time_ns);

  s->exposed_comm = subtract(comm, compute);
  d->exposed_communication_ns = length(s->exposed_comm);
  for (const TimeRange& r : s->exposed_comm) ev->exposed_comm.add(rt.shift(r), r.duration());
  for (const TimeRange& r : subtract(copies, kernels)) {
    d->memcpy_exposed_ns += r.duration();
    ev->memcpy_exposed.add(rt.shift(r), r.duration());
  }
  s->mem_exposed = subtract(mem, kernels);
  s->compute = std::move(compute);

  // Idle gaps and what ended each: HTA's causes, applied to the device.
  const IntervalSet gaps = gaps_within(s->all, s->window);
  GapCloser closer(t, tracks);
  const TimeNs big = opt.thresholds.idle_gap_ns;
  for (const TimeRange& g : gaps) {
    TimeNs launch = 0;
    const bool linked = closer.launch_of_op_at(g.end, &launch);
    if (linked && launch > g.start) {
      d->idle_host_wait_ns += g.duration();
      s->host_wait_gaps.push_back(g);
      if (g.duration() < big) ev->launch_gaps.add(rt.shift(g), g.duration());
    } else if (g.duration() < opt.consecutive_kernel_delay_ns) {
      d->idle_kernel_wait_ns += g.duration();
    } else {
      d->idle_other_ns += g.duration();
    }
    if (g.duration() >= big) ev->idle_gaps.add(rt.shift(g), g.duration());
  }
  if (!inputs.empty()) {
    // Over the whole trace, not only the device's window: a GPU that has not
    // started yet because the first batch is still loading waits for input too.
    const TimeRange whole{std::min(lo, t.begin_time()), std::max(hi, t.end_time())};
    s->input_wait = intersect(gaps_within(s->all, whole), inputs);
    for (const TimeRange& r : s->input_wait) ev->input_wait.add(rt.shift(r), r.duration());
  }
}

}  // namespace

// [SECTION] Entry point ----------------------------------------------------------------------------

void device_pass(const RankedTrace& rt, const AnalysisOptions& opt, std::vector<DeviceSummary>* summaries,
                 std::vector<DeviceSets>* sets, Evidence* ev) {
  const Trace& t = *rt.trace;
  std::map<std::uint32_t, std::vector<TrackId>> by_device;
  for (TrackId i = 0; i < t.tracks().size(); ++i)
    if (on_device(t, i, opt.device)) by_device[t.tracks()[i].device].push_back(i);
  const IntervalSet inputs = input_ranges(t);
  if (!inputs.empty()) ev->has_input_ranges = true;
  for (const auto& [device, tracks] : by_device) {
    DeviceSummary d;
    DeviceSets s;
    analyse_device(rt, opt, device, tracks, inputs, &d, &s, ev);
    if (d.kernels + d.memcpys + d.memsets == 0) continue;
    summaries->push_back(std::move(d));
    sets->push_back(std::move(s));
  }
}

}  // namespace gpuscope::detail
