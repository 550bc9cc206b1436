// Replay: a discrete-event simulation of a dependency graph.
//
// Each chain (GPU stream, CPU thread) runs its nodes in order; a node starts
// when the previous node of its chain has ended plus its chain latency and
// every in-edge's source has reached its point plus the edge's latency, and
// ends no earlier than its start plus its modelled duration (and its to-end
// in-edges; a collective member when the last member has started plus its
// transfer time). A node with nothing before it starts at its observed time.
// With the observed durations this gives back the trace (docs/whatif.md
// says how close, and why not exactly where it is not).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "analysis/graph/graph.h"

namespace gpuscope::graph {

// The start and end of every node, by NodeId.
struct Timeline {
  std::vector<TimeNs> start, end;
};

struct ReplayInfo {
  // Times a node had to go ahead without a source that could not finish
  // first (a cycle, which a trace with consistent clocks never makes).
  std::uint64_t cycles_broken = 0;
};

// Runs the simulation. Linear in nodes and edges. With `order`, also the
// order it settled events in: node * 2 for a start, node * 2 + 1 for an end
// (a topological order of the graph's points, for backward passes).
Timeline replay(const Graph& g, ReplayInfo* info = nullptr, std::vector<std::uint32_t>* order = nullptr);

// The observed times of the graph's nodes, as a timeline.
Timeline observed(const Graph& g);

// The graph's steps on a timeline (Graph::steps order), by the rule analysis
// uses (docs/metrics.md): on the observed timeline, the analysis's steps.
std::vector<TimeRange> step_ranges(const Graph& g, const Timeline& tl);
// … on the observed times (without copying them into a timeline).
std::vector<TimeRange> measured_steps(const Graph& g);
// Calls f(node) for each GPU op of `device` that starts within `range` (a
// step as measured): chain by chain, each chain's ops by start.
template <class F>
void for_each_gpu_op_within(const Graph& g, std::uint32_t device, TimeRange range, F&& f) {
  const TimeNs* s = g.obs_start.data();
  for (const Chain& c : g.chains) {
    if (!c.gpu || c.device != device) continue;
    for (const TimeNs* it = std::lower_bound(s + c.begin, s + c.end, range.start); it != s + c.end && *it < range.end;
         ++it)
      f(static_cast<NodeId>(it - s));
  }
}

// First start and last end over every node (0, 0 for an empty graph).
TimeRange span(const Timeline& tl);
TimeRange measured_span(const Graph& g);

// Step time of a timeline: the median and mean step, or the span without steps.
struct StepTime {
  std::size_t steps = 0;  // 0: no steps, `median` and `mean` are the whole span
  TimeNs median = 0, mean = 0, total = 0;
  TimeNs span = 0;
};
StepTime step_time(const Graph& g, const Timeline& tl);
StepTime step_time(const std::vector<TimeRange>& steps, TimeRange span);

// How far one timeline's steps (and span) are from another's: relative
// errors |a - b| / b per step (median and worst) and of the span.
struct TimelineError {
  double step_median = 0, step_worst = 0, span = 0;
};
TimelineError compare(const std::vector<TimeRange>& replayed, const std::vector<TimeRange>& measured,
                      TimeRange replayed_span, TimeRange measured_span);

}  // namespace gpuscope::graph
