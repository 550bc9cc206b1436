// The simulation loop, step ranges on a timeline, and replay errors.
//
// [SECTION] The scheduler
// [SECTION] Steps and errors
//
// The scheduler keeps a stack of chains that may run. A chain runs its next
// node's start, then its end, as long as what they wait for has happened;
// when a source is not there yet, the chain registers with the source's chain
// (or collective) and stops, and is woken when that one stops or completes.
// Every node is visited twice (start, end), every edge twice at most: linear.
#include "analysis/graph/replay.h"

#include <algorithm>
#include <cmath>

#include "analysis/util/stats.h"
#include "trace/fresh_memory.h"

namespace gpuscope::graph {

namespace {

// [SECTION] The scheduler ------------------------------------------------------------------------

enum : std::uint8_t { kWaiting = 0, kStarted = 1, kEnded = 2 };

class Scheduler {
 public:
  Scheduler(const Graph& g, Timeline& tl, std::vector<std::uint32_t>* order) : g_(g), tl_(tl), order_(order) {
    if (order_) order_->clear(), order_->reserve(2 * g.size());
    const std::size_t n = g.size();
    detail::prepare_column(tl.start, n);
    detail::prepare_column(tl.end, n);
    tl.start.resize(n);
    tl.end.resize(n);
    detail::prepare_column(state_, n);
    state_.assign(n, kWaiting);
    cursor_.resize(g.chains.size());
    waiters_.resize(g.chains.size());
    queued_.assign(g.chains.size(), 1);
    group_max_.assign(g.groups.size(), INT64_MIN);
    group_arrived_.assign(g.groups.size(), 0);
    group_waiters_.resize(g.groups.size());
    for (std::uint32_t c = 0; c < g.chains.size(); ++c) cursor_[c] = g.chains[c].begin;
    for (std::uint32_t c = static_cast<std::uint32_t>(g.chains.size()); c-- > 0;) runnable_.push_back(c);
  }

  std::uint64_t run() {
    std::uint64_t forced = 0;
    for (;;) {
      while (!runnable_.empty()) {
        const std::uint32_t c = runnable_.back();
        runnable_.pop_back();
        queued_[c] = 0;
        // Only a chain that moved can have released anyone (two chains that
        // wait for each other would otherwise wake each other forever).
        if (advance(c)) wake(waiters_[c]);
      }
      // Nothing can run: done, or a cycle. Let the first stuck chain go on
      // without the source it waits for.
      // Chains before scan_ have ended (and stay ended): the scan is linear
      // over the whole run, however many times a cycle is broken.
      while (scan_ < g_.chains.size() && cursor_[scan_] >= g_.chains[scan_].end) ++scan_;
      if (scan_ == g_.chains.size()) return forced + self_cycles_;
      const std::uint32_t stuck = scan_;
      ++forced;
      force_ = true;
      advance(stuck);
      force_ = false;
      wake(waiters_[stuck]);
      for (std::uint32_t gr : groups_waited_) wake(group_waiters_[gr]);
      groups_waited_.clear();
    }
  }

 private:
  void wake(std::vector<std::uint32_t>& list) {
    for (std::uint32_t c : list)
      if (!queued_[c]) queued_[c] = 1, runnable_.push_back(c);
    list.clear();
  }

  // The time of an edge's source point, or false (and registered) if it is not there yet.
  bool source_time(std::uint32_t chain, const Edge& e, TimeNs* out) {
    const std::uint8_t need = (e.flags & kFromStart) ? kStarted : kEnded;
    if (state_[e.src] < need) {
      if (force_) return false;
      const std::uint32_t from = g_.chain_of(e.src);
      if (from == chain) {
        // A later node of the node's own chain (a change can make one): it
        // cannot come first, so the edge is a cycle and goes.
        ++self_cycles_;
        return false;
      }
      waiters_[from].push_back(chain);
      blocked_ = true;
      return false;
    }
    *out = ((e.flags & kFromStart) ? tl_.start[e.src] : tl_.end[e.src]) + e.lat;
    return true;
  }

  // Runs chain c as far as it can go; true if it started or ended a node.
  bool advance(std::uint32_t c) {
    bool moved = false;
    const Chain& ch = g_.chains[c];
    const Edge* edges = g_.in.data();
    for (NodeId n = cursor_[c]; n < ch.end; n = ++cursor_[c]) {
      blocked_ = false;
      const std::uint32_t e0 = g_.in_begin[n], e1 = g_.in_begin[n + 1];
      if (state_[n] == kWaiting) {
        bool held = n > ch.begin;
        TimeNs t = held ? std::max(tl_.end[n - 1] + g_.lat[n], tl_.start[n - 1]) : INT64_MIN;
        for (std::uint32_t i = e0; i < e1; ++i) {
          const Edge& e = edges[i];
          if (e.flags & (kToEnd | kDisabled)) continue;
          TimeNs at = 0;
          if (!source_time(c, e, &at)) {
            if (blocked_) return moved;
            continue;
          }
          t = std::max(t, at);
          held = true;
        }
        tl_.start[n] = held ? t : g_.obs_start[n];
        state_[n] = kStarted;
        moved = true;
        if (order_) order_->push_back(2 * n);
        for (std::uint32_t i = e0; i < e1; ++i)
          if (edges[i].type == EdgeType::collective && !(edges[i].flags & kDisabled)) arrive(edges[i].src, n);
      }
      TimeNs t = tl_.start[n] + g_.dur[n];
      for (std::uint32_t i = e0; i < e1; ++i) {
        const Edge& e = edges[i];
        if (!(e.flags & kToEnd) || (e.flags & kDisabled)) continue;
        if (e.type == EdgeType::collective) {
          if (group_arrived_[e.src] < g_.groups[e.src].count) {
            if (force_) continue;
            if (group_waiters_[e.src].empty()) groups_waited_.push_back(e.src);
            group_waiters_[e.src].push_back(c);
            return moved;
          }
          t = std::max(t, group_max_[e.src] + e.lat);
          continue;
        }
        TimeNs at = 0;
        if (!source_time(c, e, &at)) {
          if (blocked_) return moved;
          continue;
        }
        t = std::max(t, at);
      }
      tl_.end[n] = t;
      state_[n] = kEnded;
      moved = true;
      if (order_) order_->push_back(2 * n + 1);
      force_ = false;  // a forced chain goes past one node only
    }
    return moved;
  }

  void arrive(std::uint32_t group, NodeId n) {
    group_max_[group] = std::max(group_max_[group], tl_.start[n]);
    if (++group_arrived_[group] == g_.groups[group].count) wake(group_waiters_[group]);
  }

  const Graph& g_;
  Timeline& tl_;
  std::vector<std::uint32_t>* order_;
  std::vector<std::uint8_t> state_;
  std::vector<NodeId> cursor_;
  std::vector<std::vector<std::uint32_t>> waiters_;  // per chain: chains waiting on one of its nodes
  std::vector<std::uint8_t> queued_;
  std::vector<std::uint32_t> runnable_;
  std::vector<TimeNs> group_max_;
  std::vector<std::uint32_t> group_arrived_;
  std::vector<std::vector<std::uint32_t>> group_waiters_;
  std::vector<std::uint32_t> groups_waited_;  // groups whose waiters a forced step wakes
  std::uint32_t scan_ = 0;                    // the first chain that may not have ended
  std::uint64_t self_cycles_ = 0;             // edges from a later node of the same chain, ignored
  bool blocked_ = false, force_ = false;
};

// [SECTION] Steps and errors ------------------------------------------------------------------------

using Times = std::vector<TimeNs>;

// `moved`: the timeline is not the observed one, so gaps may have changed.
TimeNs point_time(const Graph& g, const Times& start, const Times& end, const CpuPoint& p, bool moved) {
  if (p.prev == kNoNode && p.next == kNoNode) return p.offset;
  if (p.inside) return start[p.prev] + std::min(p.offset, end[p.prev] - start[p.prev]);
  if (p.next == kNoNode) return end[p.prev] + p.offset;
  TimeNs off = p.offset;
  if (moved && p.prev != kNoNode) {
    // The gap before `next` may have shrunk (a change): the point keeps its place in it.
    const TimeNs gap = g.obs_start[p.next] - g.obs_end[p.prev];
    if (gap > 0 && g.lat[p.next] != gap)
      off = std::llround(static_cast<double>(off) * static_cast<double>(std::max<TimeNs>(0, g.lat[p.next])) /
                         static_cast<double>(gap));
  }
  TimeNs t = start[p.next] - off;
  if (p.prev != kNoNode) t = std::max(t, end[p.prev]);
  return t;
}

std::vector<TimeRange> ranges_of_steps(const Graph& g, const Times& start, const Times& end, bool moved) {
  std::vector<TimeRange> out(g.steps.size());
  for (std::size_t i = 0; i < g.steps.size(); ++i) {
    const GraphStep& st = g.steps[i];
    TimeNs s = 0, e = 0;
    if (st.pattern) {
      s = start[st.start_node];
      e = st.end_node != kNoNode ? start[st.end_node] : s;
    } else {
      s = point_time(g, start, end, st.start, moved);
      e = std::max(s, point_time(g, start, end, st.end, moved));
    }
    for (std::uint32_t j = st.ops_begin; j < st.ops_end; ++j) e = std::max(e, end[g.step_ops[j]]);
    if (i > 0 && g.steps[i - 1].device == st.device) {
      s = std::max(s, out[i - 1].end);
      e = std::max(e, s);
    }
    out[i] = {s, e};
  }
  return out;
}

TimeRange span_of(const Times& start, const Times& end) {
  if (start.empty()) return {};
  return {*std::min_element(start.begin(), start.end()), *std::max_element(end.begin(), end.end())};
}

double relative(TimeNs a, TimeNs b) {
  if (b == 0) return a == 0 ? 0.0 : 1.0;
  return std::fabs(static_cast<double>(a - b)) / static_cast<double>(b);
}

}  // namespace

Timeline replay(const Graph& g, ReplayInfo* info, std::vector<std::uint32_t>* order) {
  Timeline tl;
  Scheduler s(g, tl, order);
  const std::uint64_t forced = s.run();
  if (info) info->cycles_broken = forced;
  return tl;
}

Timeline observed(const Graph& g) { return {g.obs_start, g.obs_end}; }

std::vector<TimeRange> step_ranges(const Graph& g, const Timeline& tl) {
  return ranges_of_steps(g, tl.start, tl.end, true);
}
std::vector<TimeRange> measured_steps(const Graph& g) { return ranges_of_steps(g, g.obs_start, g.obs_end, false); }
TimeRange span(const Timeline& tl) { return span_of(tl.start, tl.end); }
TimeRange measured_span(const Graph& g) { return span_of(g.obs_start, g.obs_end); }

StepTime step_time(const std::vector<TimeRange>& steps, TimeRange whole) {
  StepTime out;
  out.span = whole.duration();
  out.steps = steps.size();
  if (steps.empty()) {
    out.median = out.mean = out.total = out.span;
    return out;
  }
  std::vector<TimeNs> d;
  d.reserve(steps.size());
  for (const TimeRange& r : steps) d.push_back(r.duration()), out.total += r.duration();
  out.mean = out.total / static_cast<TimeNs>(steps.size());
  out.median = lower_median(std::move(d));
  return out;
}

StepTime step_time(const Graph& g, const Timeline& tl) { return step_time(step_ranges(g, tl), span(tl)); }

TimelineError compare(const std::vector<TimeRange>& replayed, const std::vector<TimeRange>& measured,
                      TimeRange replayed_span, TimeRange measured_span) {
  TimelineError e;
  std::vector<double> per_step;
  for (std::size_t i = 0; i < std::min(replayed.size(), measured.size()); ++i) {
    per_step.push_back(relative(replayed[i].duration(), measured[i].duration()));
    e.step_worst = std::max(e.step_worst, per_step.back());
  }
  e.step_median = lower_median(std::move(per_step));
  e.span = relative(replayed_span.duration(), measured_span.duration());
  return e;
}

}  // namespace gpuscope::graph
