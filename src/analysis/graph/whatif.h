// What-if: a trace as measured, as replayed from its dependency graph, and as
// changed (the fix of a finding applied to the graph and replayed), with the
// critical path of the replay and of the prediction. `gpuscope whatif` prints
// it (text, or JSON with schema gpuscope.whatif/1: docs/whatif.md).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/graph/changes.h"
#include "analysis/graph/critical_path.h"
#include "analysis/graph/graph.h"
#include "analysis/graph/replay.h"

namespace gpuscope::graph {

struct WhatIfOptions {
  std::size_t top_ops = 10;  // ops listed on each critical path
  GraphOptions graph;
};

// What the graph holds, for output.
struct GraphSummary {
  std::size_t nodes = 0, gpu_ops = 0, cpu_calls = 0, streams = 0, threads = 0;
  std::array<std::uint64_t, kEdgeTypeCount> edges{};  // by EdgeType
  std::vector<std::pair<std::string, std::uint64_t>> stats;
  bool stream_order_only = false;
  std::uint64_t cycles_broken = 0;
  StepSource step_source = StepSource::none;
};
GraphSummary summarize_graph(const Graph& g);

struct WhatIf {
  GraphSummary graph;
  StepTime measured, replayed, predicted;
  TimelineError replay_error;       // replayed vs measured
  TimelineError prediction_change;  // predicted vs replayed (how much the changes moved each step)
  std::vector<ChangeResult> changes;
  PathSummary replayed_path, predicted_path;
  // replayed / predicted median step time (whole span without steps); 1 without changes.
  double speedup = 1;
};

// Builds the graph, replays it, applies `changes` and replays again. Throws
// ChangeError for a change that matches nothing.
WhatIf what_if(const Trace& trace, std::span<const Change> changes, const WhatIfOptions& options = {});

// The same from a graph built already (several predictions from one graph).
WhatIf what_if(const Trace& trace, const Graph& g, std::span<const Change> changes, const WhatIfOptions& options = {});

}  // namespace gpuscope::graph
