#include "viewer/critical_path.h"

#include <algorithm>

#include "analysis/graph/critical_path.h"
#include "analysis/graph/graph.h"
#include "analysis/graph/replay.h"
#include "words/format.h"

namespace gpuscope::viewer {

namespace {

int table_slot(TableId t) {
  for (std::size_t i = 0; i < PathOverlay::kTables.size(); ++i)
    if (PathOverlay::kTables[i] == t) return static_cast<int>(i);
  return -1;
}

TableId table_of(graph::NodeKind k) {
  switch (k) {
    case graph::NodeKind::kernel: return TableId::kernels;
    case graph::NodeKind::memcpy: return TableId::memcpys;
    case graph::NodeKind::memset: return TableId::memsets;
    default: return TableId::api_calls;
  }
}

}  // namespace

TimeNs PathOverlay::slack_of(TableId table, RowIndex row) const {
  const int s = table_slot(table);
  return s >= 0 && row < slack[s].size() ? slack[s][row] : -1;
}

std::int32_t PathOverlay::path_of(TableId table, RowIndex row) const {
  const int s = table_slot(table);
  return s >= 0 && row < on_path[s].size() ? on_path[s][row] : kOffPath;
}

std::pair<std::size_t, std::size_t> PathOverlay::visible(TimeNs start, TimeNs end) const {
  // Segments are in start order; one that overlaps starts after start - longest.
  const auto by_start = [](const Segment& s, TimeNs t) { return s.start < t; };
  const auto a = std::lower_bound(segments.begin(), segments.end(), start - longest, by_start);
  const auto b = std::lower_bound(a, segments.end(), end, by_start);
  return {static_cast<std::size_t>(a - segments.begin()), static_cast<std::size_t>(b - segments.begin())};
}

PathOverlay compute_path_overlay(const Trace& trace, std::size_t max_ops) {
  PathOverlay out;
  const std::size_t ops = trace.kernels().size() + trace.memcpys().size() + trace.memsets().size();
  if (ops == 0) {
    out.status = "no GPU ops";
    return out;
  }
  if (ops > max_ops) {
    out.status = format::count(ops) + " GPU ops: more than the " + format::count(max_ops) +
                 " the viewer builds the dependency graph of (gpuscope report and whatif do)";
    return out;
  }
  const graph::Graph g = graph::build_graph(trace);
  std::vector<std::uint32_t> order;
  const graph::Timeline tl = graph::replay(g, nullptr, &order);
  const std::vector<TimeNs> node_slack = graph::slack(g, tl, order);
  const std::array<std::size_t, 4> rows = {trace.kernels().size(), trace.memcpys().size(), trace.memsets().size(),
                                           trace.api_calls().size()};
  for (std::size_t s = 0; s < rows.size(); ++s) {
    out.slack[s].assign(rows[s], -1);
    out.on_path[s].assign(rows[s], PathOverlay::kOffPath);
  }
  for (graph::NodeId n = 0; n < g.size(); ++n) {
    const int s = table_slot(table_of(g.kind[n]));
    if (g.row[n] < out.slack[s].size()) out.slack[s][g.row[n]] = node_slack[n];
  }
  // Each node on a path once per path, at its measured time.
  auto add_path = [&](const std::vector<graph::PathSegment>& path, std::int32_t step) {
    graph::NodeId last = graph::kNoNode;
    for (const graph::PathSegment& seg : path) {
      const graph::NodeId n = seg.node;
      if (n == graph::kNoNode || n == last) continue;
      last = n;
      const TableId table = table_of(g.kind[n]);
      const int s = table_slot(table);
      if (g.row[n] >= out.on_path[s].size() || out.on_path[s][g.row[n]] != PathOverlay::kOffPath) continue;
      out.on_path[s][g.row[n]] = step;
      out.segments.push_back(
          {g.obs_start[n], g.obs_end[n], table, g.row[n], static_cast<std::uint8_t>(seg.kind), step});
    }
  };
  const std::vector<TimeRange> measured = graph::measured_steps(g);
  if (g.steps.empty()) {
    add_path(graph::trace_path(g, tl), -1);
    out.scope = "the whole trace (no steps)";
    out.replay_error = graph::compare({}, {}, graph::span(tl), graph::measured_span(g)).span;
  } else {
    const std::vector<TimeRange> replayed = graph::step_ranges(g, tl);
    for (const graph::GraphStep& st : g.steps) out.step_index.push_back(st.index);
    std::vector<std::size_t> all(g.steps.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    const std::vector<std::vector<graph::PathSegment>> paths = graph::steps_paths(g, tl, replayed, all);
    for (std::size_t i = 0; i < paths.size(); ++i) add_path(paths[i], static_cast<std::int32_t>(i));
    out.scope = "each of " + format::count(g.steps.size()) + " steps";
    out.replay_error = graph::compare(replayed, measured, graph::span(tl), graph::measured_span(g)).step_median;
  }
  std::sort(out.segments.begin(), out.segments.end(),
            [](const PathOverlay::Segment& a, const PathOverlay::Segment& b) { return a.start < b.start; });
  for (const PathOverlay::Segment& seg : out.segments) out.longest = std::max(out.longest, seg.end - seg.start);
  return out;
}

}  // namespace gpuscope::viewer
