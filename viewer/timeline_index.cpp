#include "viewer/timeline_index.h"

#include <algorithm>
#include <thread>
#include <unordered_map>

#include "trace/time_columns.h"
#include "viewer/text.h"

namespace gpuscope::viewer {

void LaneSegment::visible(TimeNs t0, TimeNs t1, RowIndex* lo, RowIndex* hi) const {
  const RowIndex h = static_cast<RowIndex>(std::upper_bound(start + begin, start + stop, t1) - start);
  RowIndex l;
  if (ends_sorted)
    l = static_cast<RowIndex>(std::lower_bound(end + begin, end + h, t0) - end);
  else
    l = static_cast<RowIndex>(std::lower_bound(start + begin, start + h, t0 - max_duration) - start);
  *lo = l;
  *hi = std::max(l, h);
}

namespace {

constexpr std::uint16_t kMaxRangeRows = 32;  // deeper NVTX nesting shares the last row

// A segment over rows [r.begin, r.end) of a table, used in place.
LaneSegment contiguous(TableId table, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end, RowRange r) {
  LaneSegment s;
  s.table = table;
  s.start = start.data();
  s.end = end.data();
  s.begin = r.begin;
  s.stop = r.end;
  TimeNs prev_end = std::numeric_limits<TimeNs>::min();
  for (RowIndex i = r.begin; i < r.end; ++i) {
    s.max_duration = std::max(s.max_duration, end[i] - start[i]);
    if (end[i] < prev_end) s.ends_sorted = false;
    prev_end = std::max(prev_end, end[i]);
  }
  return s;
}

// Splits rows [r.begin, r.end) (sorted by start) into lanes of
// non-overlapping events: each goes to the lowest lane free at its start —
// which puts nested calls one lane below their parent.
std::vector<std::vector<RowIndex>> greedy_lanes(const std::vector<TimeNs>& start, const std::vector<TimeNs>& end,
                                                RowRange r, std::size_t max_lanes) {
  std::vector<std::vector<RowIndex>> lanes;
  std::vector<TimeNs> lane_end;
  for (RowIndex i = r.begin; i < r.end; ++i) {
    std::size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > start[i]) ++lane;
    if (lane >= max_lanes) lane = max_lanes - 1;
    if (lane == lane_end.size()) {
      lane_end.push_back(end[i]);
      lanes.emplace_back();
    } else {
      lane_end[lane] = std::max(lane_end[lane], end[i]);
    }
    lanes[lane].push_back(i);
  }
  return lanes;
}

std::string gpu_group_label(const Trace& trace, std::uint32_t device) {
  std::string s = "GPU " + std::to_string(device);
  if (const Device* d = trace.device(device); d && !d->name.empty()) s += " · " + d->name;
  return s;
}

std::string cpu_group_label(const Trace& trace, std::uint32_t pid) {
  std::string s = "Process " + std::to_string(pid);
  if (const Process* p = trace.process(pid)) {
    if (!p->name.empty()) s += " · " + p->name;
    if (p->rank >= 0) s += " (rank " + std::to_string(p->rank) + ")";
  }
  return s;
}

std::string track_label(const Track& t) {
  // The source's name when it has one ("stream 7 (compute)", "thread 12 (python)"),
  // with the id in front unless the name already carries it.
  const bool gpu = t.kind == TrackKind::gpu;
  const std::string id = std::to_string(gpu ? t.stream : t.tid);
  const std::string plain = cat(gpu ? "stream " : "thread ", id);
  if (t.name.empty()) return plain;
  if (t.name.find(id) != std::string::npos) return t.name;
  return cat(plain, " · ", t.name);
}

}  // namespace

TimelineIndex TimelineIndex::build(const Trace& trace) {
  TimelineIndex ix;
  ix.add_tracks(trace, ix.gather_lanes(trace));
  ix.add_groups(trace);
  ix.build_lanes(trace);
  return ix;
}

std::vector<std::vector<TimelineIndex::PendingLane>> TimelineIndex::gather_lanes(const Trace& trace) {
  const auto& tracks = trace.tracks();
  const TraceTables& tb = trace.tables();
  std::vector<std::vector<PendingLane>> pending(tracks.size());
  samples_of_track_.assign(tracks.size(), kNone);
  // Host samples are not ranges: they get a samples row of their own.
  const StringId sample_domain = trace.strings().find(kHostSampleDomain);
  const bool has_samples = sample_domain != StringTable::kNoString;
  std::vector<RowIndex> sample_rows;
  std::unordered_map<std::string_view, std::uint32_t> frame_ids;
  auto gather = [&](TrackId t, RowKind kind, std::uint16_t depth, TableId table, std::vector<RowIndex> rows) {
    if (rows.empty()) return;
    Gathered g;
    g.rows = std::move(rows);
    const detail::TimeColumns tc = detail::time_columns(tb, table);
    g.start.reserve(g.rows.size());
    g.end.reserve(g.rows.size());
    for (RowIndex r : g.rows) {
      g.start.push_back((*tc.start)[r]);
      g.end.push_back((*tc.end)[r]);
    }
    pending[t].push_back({kind, depth, table, static_cast<std::uint32_t>(gathered_.size())});
    gathered_.push_back(std::move(g));
  };
  for (TrackId t = 0; t < tracks.size(); ++t) {
    // Ranges by nesting depth (GPU tracks carry GPU-side annotations).
    const RowRange rr = trace.rows_of(TableId::ranges, t);
    if (!rr.empty()) {
      std::vector<std::vector<RowIndex>> by_depth;
      sample_rows.clear();
      for (RowIndex i = rr.begin; i < rr.end; ++i) {
        if (has_samples && tb.ranges.domain[i] == sample_domain && tb.ranges.kind_at(i) == RangeKind::mark &&
            tracks[t].kind == TrackKind::cpu) {
          sample_rows.push_back(i);
          continue;
        }
        const std::size_t d = std::min<std::size_t>(tb.ranges.depth[i], kMaxRangeRows - 1);
        if (d >= by_depth.size()) by_depth.resize(d + 1);
        by_depth[d].push_back(i);
      }
      for (std::size_t d = 0; d < by_depth.size(); ++d)
        gather(t, RowKind::ranges, static_cast<std::uint16_t>(d), TableId::ranges, std::move(by_depth[d]));
      if (!sample_rows.empty()) add_samples(trace, t, sample_rows, frame_ids);
    }
    if (tracks[t].kind == TrackKind::cpu) {
      auto lanes_of = [&](TableId table, RowKind kind, const std::vector<TimeNs>& s, const std::vector<TimeNs>& e,
                          std::size_t max_lanes) {
        auto lanes = greedy_lanes(s, e, trace.rows_of(table, t), max_lanes);
        for (std::size_t d = 0; d < lanes.size(); ++d)
          gather(t, kind, static_cast<std::uint16_t>(d), table, std::move(lanes[d]));
      };
      lanes_of(TableId::api_calls, RowKind::api_calls, tb.api_calls.start, tb.api_calls.end, 4);
      lanes_of(TableId::syncs, RowKind::syncs, tb.syncs.start, tb.syncs.end, 2);
      lanes_of(TableId::overheads, RowKind::overheads, tb.overheads.start, tb.overheads.end, 1);
      lanes_of(TableId::os_calls, RowKind::os_calls, tb.os_calls.start, tb.os_calls.end, 2);
    }
  }
  return pending;
}

void TimelineIndex::add_samples(const Trace& trace, TrackId t, const std::vector<RowIndex>& rows,
                                std::unordered_map<std::string_view, std::uint32_t>& frame_ids) {
  const RangeTable& rt = trace.tables().ranges;
  ThreadSamples s;
  s.time.reserve(rows.size());
  s.rows.reserve(rows.size());
  s.frame_begin.reserve(rows.size() + 1);
  s.common.reserve(rows.size());
  s.frame_begin.push_back(0);
  for (RowIndex r : rows) {
    // Frames outermost first, separated by ';' (empty frames skipped; an
    // empty stack keeps one frame, "?", so every sample has a leaf).
    const std::string_view stack = trace.str(rt.name[r]);
    const std::size_t before = s.frames.size();
    auto add = [&](std::string_view f) {
      auto [it, fresh] = frame_ids.try_emplace(f, static_cast<std::uint32_t>(frame_names_.size()));
      if (fresh) frame_names_.emplace_back(f);
      s.frames.push_back(it->second);
    };
    for (std::size_t at = 0; at <= stack.size();) {
      std::size_t semi = stack.find(';', at);
      if (semi == std::string_view::npos) semi = stack.size();
      if (semi > at) add(stack.substr(at, semi - at));
      at = semi + 1;
    }
    if (s.frames.size() == before) add("?");
    // Frames shared with the previous sample from the root.
    std::uint16_t common = 0;
    if (!s.time.empty()) {
      const std::uint32_t pb = s.frame_begin[s.frame_begin.size() - 2];
      while (pb + common < before && before + common < s.frames.size() &&
             s.frames[pb + common] == s.frames[before + common] && common < 0xffff)
        ++common;
    }
    s.common.push_back(common);
    s.max_depth = std::max(s.max_depth, static_cast<std::uint32_t>(s.frames.size() - before));
    s.frame_begin.push_back(static_cast<std::uint32_t>(s.frames.size()));
    s.time.push_back(rt.start[r]);
    s.rows.push_back(r);
  }
  // The median interval (a copy: the samples of one thread are few).
  std::vector<TimeNs> gaps;
  gaps.reserve(s.time.size());
  for (std::size_t i = 1; i < s.time.size(); ++i)
    if (s.time[i] > s.time[i - 1]) gaps.push_back(s.time[i] - s.time[i - 1]);
  TimeNs median = 1'000'000;  // one sample alone: 1 ms
  if (!gaps.empty()) {
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
    median = gaps[gaps.size() / 2];
  }
  s.cap = std::max<TimeNs>(1, 2 * median);
  samples_of_track_[t] = static_cast<std::uint32_t>(samples_.size());
  samples_.push_back(std::move(s));
}

bool TimelineIndex::sample_of(const Trace& trace, RowIndex row, const ThreadSamples** s, std::size_t* i) const {
  const RangeTable& rt = trace.tables().ranges;
  if (row >= rt.size()) return false;
  const TrackId t = rt.track_at(row);
  if (t >= samples_of_track_.size() || samples_of_track_[t] == kNone) return false;
  const ThreadSamples& ts = samples_[samples_of_track_[t]];
  for (std::size_t p = ts.first_at(rt.start[row]); p < ts.size() && ts.time[p] == rt.start[row]; ++p)
    if (ts.rows[p] == row) {
      *s = &ts;
      *i = p;
      return true;
    }
  return false;
}

void TimelineIndex::add_tracks(const Trace& trace, const std::vector<std::vector<PendingLane>>& pending) {
  const auto& tracks = trace.tracks();
  const TraceTables& tb = trace.tables();
  by_track_.assign(tracks.size(), kNone);
  for (TrackId t = 0; t < tracks.size(); ++t) {
    TrackInfo info;
    info.track = t;
    info.label = track_label(tracks[t]);
    for (const PendingLane& p : pending[t]) {
      if (p.kind != RowKind::ranges) continue;
      const Gathered& g = gathered_[p.gathered];
      LaneSegment s = contiguous(p.table, g.start, g.end, RowRange{0, static_cast<RowIndex>(g.rows.size())});
      s.rows = g.rows.data();
      info.rows.push_back({RowKind::ranges, p.depth, {s}});
      info.events += g.rows.size();
    }
    if (tracks[t].kind == TrackKind::gpu) {
      TrackRow ops{RowKind::gpu_ops, 0, {}};
      auto add = [&](TableId id, const std::vector<TimeNs>& s, const std::vector<TimeNs>& e) {
        const RowRange r = trace.rows_of(id, t);
        if (r.empty()) return;
        ops.segments.push_back(contiguous(id, s, e, r));
        info.events += r.size();
      };
      add(TableId::kernels, tb.kernels.start, tb.kernels.end);
      add(TableId::memcpys, tb.memcpys.start, tb.memcpys.end);
      add(TableId::memsets, tb.memsets.start, tb.memsets.end);
      // A GPU track always shows its ops row, even if empty (it has annotations only).
      info.rows.push_back(std::move(ops));
    } else {
      for (const PendingLane& p : pending[t]) {
        if (p.kind == RowKind::ranges) continue;
        const Gathered& g = gathered_[p.gathered];
        LaneSegment s = contiguous(p.table, g.start, g.end, RowRange{0, static_cast<RowIndex>(g.rows.size())});
        s.rows = g.rows.data();
        info.rows.push_back({p.kind, p.depth, {s}});
        info.events += g.rows.size();
      }
      if (samples_of_track_[t] != kNone) {  // last: the flame chart grows below it
        info.samples = static_cast<int>(samples_of_track_[t]);
        info.rows.push_back({RowKind::samples, 0, {}});
        info.events += samples_[samples_of_track_[t]].size();
      }
    }
    if (info.rows.empty()) continue;  // a CPU track with nothing to draw
    by_track_[t] = static_cast<std::uint32_t>(tracks_.size());
    tracks_.push_back(std::move(info));
  }
}

void TimelineIndex::add_groups(const Trace& trace) {
  const auto& tracks = trace.tracks();
  // Groups in track order: GPUs by device, then processes by pid.
  for (const TrackInfo& info : tracks_) {
    const Track& tr = tracks[info.track];
    const bool gpu = tr.kind == TrackKind::gpu;
    const bool same = !groups_.empty() && groups_.back().kind == tr.kind &&
                      (gpu ? groups_.back().device == tr.device : groups_.back().pid == tr.pid);
    if (!same) {
      TrackGroup g;
      g.kind = tr.kind;
      if (gpu) {
        g.device = tr.device;
        g.label = gpu_group_label(trace, tr.device);
      } else {
        g.pid = tr.pid;
        g.label = cpu_group_label(trace, tr.pid);
      }
      groups_.push_back(std::move(g));
    }
    groups_.back().tracks.push_back(by_track_[info.track]);
  }
}

void TimelineIndex::build_lanes(const Trace& trace) {
  const TraceTables& tb = trace.tables();
  // Activity lanes, one GPU per thread (independent, read-only on the trace).
  std::vector<std::uint32_t> devices;
  for (TrackGroup& g : groups_)
    if (g.kind == TrackKind::gpu) {
      g.activity = static_cast<int>(devices.size());
      devices.push_back(g.device);
    }
  activity_.resize(devices.size());
  std::jthread kernel_time(
      [&] { kernel_time_ = CategoryTimeIndex::build(tb.kernels.start, tb.kernels.end, tb.kernels.category); });
  const unsigned workers =
      std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), static_cast<unsigned>(devices.size())));
  {
    std::vector<std::jthread> pool;
    for (unsigned w = 0; w < workers; ++w)
      pool.emplace_back([&, w] {
        for (std::size_t d = w; d < devices.size(); d += workers)
          activity_[d] = DeviceActivity::build(trace, devices[d]);
      });
  }
}

std::size_t TimelineIndex::memory_bytes() const {
  std::size_t n = sizeof(*this);
  for (const Gathered& g : gathered_)
    n += g.rows.capacity() * sizeof(RowIndex) + (g.start.capacity() + g.end.capacity()) * sizeof(TimeNs);
  for (const DeviceActivity& a : activity_) n += a.memory_bytes();
  for (const ThreadSamples& s : samples_)
    n += s.time.capacity() * sizeof(TimeNs) + s.rows.capacity() * sizeof(RowIndex) +
         (s.frame_begin.capacity() + s.frames.capacity()) * sizeof(std::uint32_t) +
         s.common.capacity() * sizeof(std::uint16_t);
  for (const std::string& f : frame_names_) n += sizeof(std::string) + f.capacity();
  n += kernel_time_.memory_bytes();
  for (const TrackInfo& t : tracks_) n += sizeof(TrackInfo) + t.rows.capacity() * sizeof(TrackRow);
  return n;
}

}  // namespace gpuscope::viewer
