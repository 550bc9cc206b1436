// what_if(): measured, replayed and changed timelines of one trace.
#include "analysis/graph/whatif.h"

namespace gpuscope::graph {

GraphSummary summarize_graph(const Graph& g) {
  GraphSummary s;
  s.nodes = g.size();
  for (const Chain& c : g.chains) {
    (c.gpu ? s.streams : s.threads) += c.track != kNoTrack ? 1 : 0;
    (c.gpu ? s.gpu_ops : s.cpu_calls) += c.end - c.begin;
  }
  for (const Edge& e : g.in)
    if (!(e.flags & kDisabled)) ++s.edges[static_cast<int>(e.type)];
  s.stats = g.stats;
  s.stream_order_only = g.stream_order_only;
  s.step_source = g.steps.empty() ? StepSource::none : g.step_source;
  return s;
}

WhatIf what_if(const Trace& trace, const Graph& g, std::span<const Change> changes, const WhatIfOptions& options) {
  WhatIf w;
  w.graph = summarize_graph(g);
  const std::vector<TimeRange> measured = measured_steps(g);
  const TimeRange measured_span_range = measured_span(g);
  w.measured = step_time(measured, measured_span_range);

  ReplayInfo info;
  const Timeline replayed = replay(g, &info);
  const std::vector<TimeRange> replayed_steps = step_ranges(g, replayed);
  w.replayed = step_time(replayed_steps, span(replayed));
  w.replay_error = compare(replayed_steps, measured, span(replayed), measured_span_range);
  w.graph.cycles_broken = info.cycles_broken;
  w.replayed_path = summarize_paths(trace, g, replayed, options.top_ops);

  if (changes.empty()) {
    w.predicted = w.replayed;
    w.predicted_path = w.replayed_path;
    return w;
  }
  const Graph changed = apply_changes(g, trace, changes, &w.changes);
  ReplayInfo changed_info;
  const Timeline predicted = replay(changed, &changed_info);
  w.graph.cycles_broken += changed_info.cycles_broken;
  const std::vector<TimeRange> predicted_steps = step_ranges(changed, predicted);
  w.predicted = step_time(predicted_steps, span(predicted));
  w.prediction_change = compare(predicted_steps, replayed_steps, span(predicted), span(replayed));
  w.predicted_path = summarize_paths(trace, changed, predicted, options.top_ops);
  w.speedup =
      w.predicted.median > 0 ? static_cast<double>(w.replayed.median) / static_cast<double>(w.predicted.median) : 1.0;
  return w;
}

WhatIf what_if(const Trace& trace, std::span<const Change> changes, const WhatIfOptions& options) {
  const Graph g = build_graph(trace, options.graph);
  return what_if(trace, g, changes, options);
}

}  // namespace gpuscope::graph
