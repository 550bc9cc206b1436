// what_if(): measured, replayed and changed timelines of one trace.
#include "analysis/graph/whatif.h"

#include <string>

namespace gpuscope::graph {

namespace {

double speedup_of(const StepTime& replayed, const StepTime& predicted) {
  return predicted.median > 0 ? static_cast<double>(replayed.median) / static_cast<double>(predicted.median) : 1.0;
}

}  // namespace

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
  if (changed_info.cycles_broken > info.cycles_broken) {
    w.predicted_cycles = changed_info.cycles_broken - info.cycles_broken;
    w.simulated = false;
    w.not_simulated = "the changes make " + std::to_string(w.predicted_cycles) +
                      (w.predicted_cycles == 1 ? " dependency cycle" : " dependency cycles") +
                      " in the graph (an op would wait for one that waits for it), which the replay cannot order: "
                      "the changed timeline is not a prediction";
  }
  const std::vector<TimeRange> predicted_steps = step_ranges(changed, predicted);
  w.predicted = step_time(predicted_steps, span(predicted));
  w.prediction_change = compare(predicted_steps, replayed_steps, span(predicted), span(replayed));
  w.predicted_path = summarize_paths(trace, changed, predicted, options.top_ops);
  w.speedup = speedup_of(w.replayed, w.predicted);
  if (changes.size() > 1)
    for (const Change& c : changes) {
      ChangeAlone a;
      a.text = c.text;
      const Graph one = apply_changes(g, trace, std::span<const Change>(&c, 1), nullptr);
      ReplayInfo one_info;
      const Timeline tl = replay(one, &one_info);
      a.predicted = step_time(one, tl);
      a.speedup = speedup_of(w.replayed, a.predicted);
      a.simulated = one_info.cycles_broken <= info.cycles_broken;
      w.each.push_back(std::move(a));
    }
  return w;
}

WhatIf what_if(const Trace& trace, std::span<const Change> changes, const WhatIfOptions& options) {
  const Graph g = build_graph(trace, options.graph);
  return what_if(trace, g, changes, options);
}

}  // namespace gpuscope::graph
