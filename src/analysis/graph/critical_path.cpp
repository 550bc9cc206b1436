// Walking back along what held each point of a timeline.
//
// [SECTION] One step back
// [SECTION] Paths
// [SECTION] Summary
// [SECTION] Slack
//
// At a node's end: its own work held it (start + duration), or a to-end edge
// (a sync's GPU op plus the return latency; a collective's last arrival plus
// the transfer). At a node's start: the previous node of its chain plus the
// gap, or a to-start edge (another stream; a launch plus its latency). Ties
// go to the node's own chain: back-to-back GPU work is the GPU's, not the
// launch's. Each piece of time is charged to one kind: a GPU op's own kind
// only for its own work (at most its duration), the gap or wait before it
// to the gap's kind (PathKind::gpu_gap, gpu_wait, cpu_launch).
#include "analysis/graph/critical_path.h"

#include <algorithm>
#include <unordered_map>

#include "analysis/analyze.h"

namespace gpuscope::graph {

namespace {

// [SECTION] One step back ------------------------------------------------------------------------

struct Cursor {
  NodeId node = kNoNode;
  bool at_end = false;
  TimeNs time = 0;
};

class Walker {
 public:
  Walker(const Graph& g, const Timeline& tl, std::vector<PathSegment>* out) : g_(g), tl_(tl), out_(out) {}

  // Walks back from `c` until `stop` (segments clipped there).
  void walk(Cursor c, TimeNs stop) {
    std::uint64_t guard = 0;
    const std::uint64_t limit = 4 * g_.size() + 16;
    while (c.node != kNoNode && c.time > stop && ++guard < limit)
      c = c.at_end ? from_end(c, stop) : from_start(c, stop);
    std::reverse(out_->begin(), out_->end());
  }

  // Records [a, b) at n, clipped to what is not on the path yet: an edge
  // whose latency is slightly negative (clocks that disagree) can step back
  // to a point a little later than the one it left.
  void segment(NodeId n, TimeNs a, TimeNs b, PathKind k, TimeNs stop) {
    a = std::max(a, stop);
    b = std::min(b, frontier_);
    if (b > a) out_->push_back({n, a, b, k});
    frontier_ = std::min(frontier_, std::max(a, stop));
  }

 private:
  TimeNs point(NodeId n, const Edge& e) const { return (e.flags & kFromStart) ? tl_.start[n] : tl_.end[n]; }

  Cursor from_end(Cursor c, TimeNs stop) {
    const NodeId n = c.node;
    const TimeNs t = tl_.end[n];
    if (tl_.start[n] + g_.dur[n] >= t) {
      segment(n, tl_.start[n], t, g_.path_kind(n), stop);
      return {n, false, tl_.start[n]};
    }
    for (std::uint32_t i = g_.in_begin[n]; i < g_.in_begin[n + 1]; ++i) {
      const Edge& e = g_.in[i];
      if (!(e.flags & kToEnd) || (e.flags & kDisabled)) continue;
      if (e.type == EdgeType::collective) {
        const Group& gr = g_.groups[e.src];
        NodeId last = kNoNode;
        for (std::uint32_t m = gr.first; m < gr.first + gr.count; ++m) {
          const NodeId id = g_.group_members[m];
          if (last == kNoNode || tl_.start[id] > tl_.start[last]) last = id;
        }
        if (last != kNoNode && tl_.start[last] + e.lat == t) {
          segment(n, tl_.start[last], t, g_.path_kind(n), stop);
          return {last, false, tl_.start[last]};
        }
        continue;
      }
      const TimeNs at = point(e.src, e);
      if (at + e.lat == t) {
        segment(n, at, t, PathKind::sync_wait, stop);
        return {e.src, !(e.flags & kFromStart), at};
      }
    }
    // Nothing recorded held its end: a GPU op's own work is its duration,
    // what lies beyond it a wait the trace does not explain.
    if (is_gpu(g_.kind[n])) {
      segment(n, tl_.start[n] + g_.dur[n], t, PathKind::gpu_wait, stop);  // later piece first
      segment(n, tl_.start[n], tl_.start[n] + g_.dur[n], g_.path_kind(n), stop);
      return {n, false, tl_.start[n]};
    }
    segment(n, tl_.start[n], t, g_.path_kind(n), stop);
    return {n, false, tl_.start[n]};
  }

  Cursor from_start(Cursor c, TimeNs stop) {
    const NodeId n = c.node;
    const TimeNs t = tl_.start[n];
    const Chain& ch = g_.chains[chain_];
    if (n < ch.begin || n >= ch.end) chain_ = g_.chain_of(n);
    const Chain& own = g_.chains[chain_];
    if (n > own.begin) {
      const TimeNs prev_end = tl_.end[n - 1];
      if (prev_end + g_.lat[n] == t) {
        gap(n, prev_end, t, own.gpu, stop);
        return {n - 1, true, prev_end};
      }
    }
    for (std::uint32_t i = g_.in_begin[n]; i < g_.in_begin[n + 1]; ++i) {
      const Edge& e = g_.in[i];
      if ((e.flags & (kToEnd | kDisabled)) || e.type == EdgeType::launch) continue;
      const TimeNs at = point(e.src, e);
      if (at + e.lat == t) {
        // The time from what held it to its start is not its own work: on a
        // GPU stream the gap after the op it waited for, on a CPU thread
        // the time between calls.
        segment(n, at, t, own.gpu ? PathKind::gpu_gap : PathKind::cpu_other, stop);
        return {e.src, !(e.flags & kFromStart), at};
      }
    }
    for (std::uint32_t i = g_.in_begin[n]; i < g_.in_begin[n + 1]; ++i) {
      const Edge& e = g_.in[i];
      if ((e.flags & (kToEnd | kDisabled)) || e.type != EdgeType::launch) continue;
      const TimeNs at = point(e.src, e);
      if (at + e.lat == t) {
        // The launch holds the op for the device's typical launch latency
        // after the call's start, and at least until 30 µs after it returned
        // (the slack the device pass gives a late launch, which every
        // measured GPU starts its work within); an op that starts later
        // waited for something the trace does not record as well.
        const TimeNs held =
            std::clamp(std::max(at + typical_launch(own.device), tl_.end[e.src] + kConsecutiveKernelDelayNs), at, t);
        segment(n, held, t, PathKind::gpu_wait, stop);    // later piece first: the walk goes back in time
        segment(n, at, held, g_.path_kind(e.src), stop);  // a launch call, or setup work (Graph::path_kind)
        return {e.src, !(e.flags & kFromStart), at};
      }
    }
    if (n > own.begin && tl_.start[n - 1] == t) return {n - 1, false, t};  // held at its predecessor's start
    return {kNoNode, false, t};                                            // started on its own: the path begins here
  }

  // The gap before a node: on a GPU stream, up to the device's typical gap
  // between back-to-back ops is the stream's gap (not the op's own work)
  // and the rest is a wait nothing recorded explains; the CPU's is CPU
  // time, partly data loading.
  void gap(NodeId n, TimeNs a, TimeNs b, bool gpu, TimeNs stop) {
    if (gpu) {
      const TimeNs typical = std::min(b - a, typical_gap(g_.chains[chain_].device));
      segment(n, a + typical, b, PathKind::gpu_wait, stop);  // later piece first: the walk goes back in time
      return segment(n, a, a + typical, PathKind::gpu_gap, stop);
    }
    const TimeNs input = std::min(g_.input_of(n), std::max<TimeNs>(0, b - a));
    segment(n, b - input, b, PathKind::input_wait, stop);  // later piece first: the walk goes back in time
    segment(n, a, b - input, PathKind::cpu_other, stop);
  }

  TimeNs typical_gap(std::uint32_t device) const {
    const DeviceLatency* l = latency_of(g_, device);
    return l ? l->stream_gap_ns : 1'000;
  }
  // A launch call's start to its op's start, typical on the device.
  TimeNs typical_launch(std::uint32_t device) const {
    const DeviceLatency* l = latency_of(g_, device);
    return l ? l->launch_ns : 0;
  }

  const Graph& g_;
  const Timeline& tl_;
  std::vector<PathSegment>* out_;
  std::uint32_t chain_ = 0;
  TimeNs frontier_ = INT64_MAX;  // the earliest time the path covers so far
};

// [SECTION] Paths ------------------------------------------------------------------------------------

}  // namespace

namespace {

std::vector<PathSegment> walk_step(const Graph& g, const Timeline& tl, const std::vector<TimeRange>& steps,
                                   std::size_t i);

}  // namespace

// The walk back ends where something started on its own (a thread's first
// call, an op whose launch the trace does not have); the time from the step's
// start to there was the host's, before anything the trace recorded.
std::vector<PathSegment> step_path(const Graph& g, const Timeline& tl, const std::vector<TimeRange>& steps,
                                   std::size_t i) {
  std::vector<PathSegment> path = walk_step(g, tl, steps, i);
  const TimeRange r = steps[i];
  const TimeNs first = path.empty() ? r.end : path.front().start;
  if (first > r.start) {
    const NodeId at = path.empty() ? kNoNode : path.front().node;
    path.insert(path.begin(), PathSegment{at, r.start, first, PathKind::cpu_other});
  }
  return path;
}

namespace {

std::vector<PathSegment> walk_step(const Graph& g, const Timeline& tl, const std::vector<TimeRange>& steps,
                                   std::size_t i) {
  std::vector<PathSegment> out;
  const GraphStep& st = g.steps[i];
  const TimeRange r = steps[i];
  Walker w(g, tl, &out);
  // The step ends with its last op, or with its CPU range.
  NodeId last = kNoNode;
  for (std::uint32_t j = st.ops_begin; j < st.ops_end; ++j)
    if (tl.end[g.step_ops[j]] == r.end) last = g.step_ops[j];
  if (last == kNoNode && st.pattern && st.end_node != kNoNode && tl.start[st.end_node] == r.end) {
    // Up to the next anchor's start: what held it.
    w.walk({st.end_node, false, r.end}, r.start);
    // The anchor itself is not in this step.
    if (!out.empty() && out.back().node == st.end_node) out.pop_back();
    return out;
  }
  if (last != kNoNode) {
    w.walk({last, true, r.end}, r.start);
    return out;
  }
  const CpuPoint& p = st.end;
  if (!st.pattern && p.prev != kNoNode) {
    if (p.inside) {
      w.segment(p.prev, tl.start[p.prev], r.end, g.path_kind(p.prev), r.start);
      std::vector<PathSegment> rest;
      Walker w2(g, tl, &rest);
      w2.walk({p.prev, false, tl.start[p.prev]}, r.start);
      rest.insert(rest.end(), out.begin(), out.end());
      return rest;
    }
    w.segment(p.next != kNoNode ? p.next : p.prev, tl.end[p.prev], r.end, PathKind::cpu_other, r.start);
    std::vector<PathSegment> rest;
    Walker w2(g, tl, &rest);
    w2.walk({p.prev, true, tl.end[p.prev]}, r.start);
    rest.insert(rest.end(), out.begin(), out.end());
    return rest;
  }
  return out;
}

}  // namespace

std::vector<PathSegment> trace_path(const Graph& g, const Timeline& tl) {
  std::vector<PathSegment> out;
  if (g.size() == 0) return out;
  NodeId last = 0;
  TimeNs first = tl.start[0];
  for (NodeId n = 0; n < g.size(); ++n) {
    if (tl.end[n] > tl.end[last]) last = n;
    first = std::min(first, tl.start[n]);
  }
  Walker w(g, tl, &out);
  w.walk({last, true, tl.end[last]}, first);
  return out;
}

namespace {

// Path segments in time order cut at the bounds of `ranges` (in time order,
// not overlapping): pieces[k] the parts inside ranges[k].
void cut_into(const std::vector<PathSegment>& path, const std::vector<TimeRange>& ranges,
              std::vector<std::vector<PathSegment>*>& pieces) {
  std::size_t k = 0;
  for (const PathSegment& seg : path) {
    while (k < ranges.size() && ranges[k].end <= seg.start) ++k;
    for (std::size_t j = k; j < ranges.size() && ranges[j].start < seg.end; ++j) {
      const TimeNs a = std::max(seg.start, ranges[j].start), b = std::min(seg.end, ranges[j].end);
      if (a < b) pieces[j]->push_back(PathSegment{seg.node, a, b, seg.kind});
    }
  }
}

}  // namespace

std::vector<std::vector<PathSegment>> steps_paths(const Graph& g, const Timeline& tl,
                                                  const std::vector<TimeRange>& steps,
                                                  const std::vector<std::size_t>& which) {
  std::vector<std::vector<PathSegment>> out(which.size());
  std::vector<std::uint32_t> devices;
  for (std::size_t i : which)
    if (std::find(devices.begin(), devices.end(), g.steps[i].device) == devices.end())
      devices.push_back(g.steps[i].device);
  for (std::uint32_t d : devices) {
    std::vector<std::size_t> at;  // positions in `which` of this device's steps
    std::size_t last = which.size();
    TimeNs first = INT64_MAX;
    for (std::size_t k = 0; k < which.size(); ++k) {
      if (g.steps[which[k]].device != d) continue;
      at.push_back(k);
      first = std::min(first, steps[which[k]].start);
      if (last == which.size() || steps[which[k]].end > steps[which[last]].end) last = k;
    }
    // The last step's walk (from its last op, or its CPU range's end), back
    // to the first step's start.
    std::vector<TimeRange> stretched = steps;
    stretched[which[last]].start = first;
    const std::vector<PathSegment> path = step_path(g, tl, stretched, which[last]);
    std::vector<TimeRange> ranges;
    std::vector<std::vector<PathSegment>*> pieces;
    for (std::size_t k : at) ranges.push_back(steps[which[k]]), pieces.push_back(&out[k]);
    cut_into(path, ranges, pieces);
  }
  return out;
}

// [SECTION] Summary ------------------------------------------------------------------------------------

PathSummary summarize_paths(const Trace& trace, const Graph& g, const Timeline& tl, std::size_t top) {
  PathSummary s;
  std::unordered_map<std::string, PathSummary::Op> ops;
  std::vector<NodeId> counted;  // nodes whose own work was counted in this path
  auto add = [&](const std::vector<PathSegment>& path) {
    counted.clear();
    for (const PathSegment& seg : path) {
      const TimeNs d = seg.end - seg.start;
      s.length += d;
      s.by_kind[static_cast<int>(seg.kind)] += d;
      if (seg.node == kNoNode || !is_gpu(g.kind[seg.node]) ||
          (seg.kind != PathKind::gpu_compute && seg.kind != PathKind::communication && seg.kind != PathKind::copy))
        continue;
      const std::uint8_t cat = g.category[seg.node];
      if (cat < kKernelCategoryCount) s.by_category[cat] += d;
      if (top == 0) continue;
      // One row per kernel name and category, as the kernel table splits
      // them (a copy kernel placed in a layout copy by its launching op is
      // a transpose there, the same kernel elsewhere memory).
      std::string key = node_name(trace, g, seg.node);
      key += '\0';
      key += static_cast<char>(cat);
      PathSummary::Op& op = ops[key];
      op.category = cat;
      op.ns += d;
      if (std::find(counted.begin(), counted.end(), seg.node) == counted.end()) ++op.count, counted.push_back(seg.node);
    }
  };
  if (g.steps.empty()) {
    add(trace_path(g, tl));
  } else {
    const std::vector<TimeRange> steps = step_ranges(g, tl);
    std::vector<std::size_t> all(steps.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    for (const std::vector<PathSegment>& path : steps_paths(g, tl, steps, all)) add(path);
    s.steps = steps.size();
  }
  for (auto& [key, op] : ops) {
    op.name = key.substr(0, key.size() - 2);
    s.top.push_back(std::move(op));
  }
  std::sort(s.top.begin(), s.top.end(), [](const PathSummary::Op& a, const PathSummary::Op& b) {
    return a.ns != b.ns ? a.ns > b.ns : a.name < b.name;
  });
  if (s.top.size() > top) s.top.resize(top);
  return s;
}

// [SECTION] Slack ------------------------------------------------------------------------------------------

// Latest times, from the end of the timeline backwards, over the replay's own
// order of events reversed (a topological order of starts and ends): every
// constraint point(n) >= point(src) + lat gives latest(src) <= latest(n) - lat.
std::vector<TimeNs> slack(const Graph& g, const Timeline& tl, const std::vector<std::uint32_t>& order) {
  const std::size_t n = g.size();
  const TimeNs horizon = span(tl).end;
  std::vector<TimeNs> latest_start(n, horizon), latest_end(n, horizon);
  std::vector<TimeNs> group_latest(g.groups.size(), horizon);
  std::vector<std::uint32_t> chain(n);
  for (std::uint32_t c = 0; c < g.chains.size(); ++c)
    for (NodeId i = g.chains[c].begin; i < g.chains[c].end; ++i) chain[i] = c;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodeId v = *it >> 1;
    const bool end = *it & 1;
    if (end) {
      latest_start[v] = std::min(latest_start[v], latest_end[v] - g.dur[v]);
    }
    for (std::uint32_t i = g.in_begin[v]; i < g.in_begin[v + 1]; ++i) {
      const Edge& e = g.in[i];
      if ((e.flags & kDisabled) || ((e.flags & kToEnd) != 0) != end) continue;
      if (e.type == EdgeType::collective) {
        if (end) group_latest[e.src] = std::min(group_latest[e.src], latest_end[v] - e.lat);
        continue;
      }
      const TimeNs bound = (end ? latest_end[v] : latest_start[v]) - e.lat;
      TimeNs& src = (e.flags & kFromStart) ? latest_start[e.src] : latest_end[e.src];
      src = std::min(src, bound);
    }
    if (end) continue;
    for (std::uint32_t i = g.in_begin[v]; i < g.in_begin[v + 1]; ++i)
      if (g.in[i].type == EdgeType::collective && !(g.in[i].flags & kDisabled))
        latest_start[v] = std::min(latest_start[v], group_latest[g.in[i].src]);
    const Chain& c = g.chains[chain[v]];
    if (v > c.begin) {
      latest_end[v - 1] = std::min(latest_end[v - 1], latest_start[v] - g.lat[v]);
      latest_start[v - 1] = std::min(latest_start[v - 1], latest_start[v]);
    }
  }
  std::vector<TimeNs> out(n);
  for (NodeId i = 0; i < n; ++i) out[i] = std::max<TimeNs>(0, latest_start[i] - tl.start[i]);
  return out;
}

}  // namespace gpuscope::graph
