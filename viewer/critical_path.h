// The critical path drawn on the timeline: the dependency graph of the open
// trace (analysis/graph), replayed, with each step's critical path (the whole
// trace's without steps) mapped back to the trace's rows, and every op's and
// call's slack. Computed once per trace, off the UI thread, after the Profile.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace.h"

namespace gpuscope::viewer {

struct PathOverlay {
  // Empty when computed; otherwise why there is no path ("too many GPU ops …").
  std::string status;
  std::string scope;        // "each of 12 steps", "the whole trace (no steps)"
  double replay_error = 0;  // median per-step relative error of the replay (span error without steps)
  // An event on a path, at its measured time, in start order.
  struct Segment {
    TimeNs start = 0, end = 0;
    TableId table = TableId::kernels;
    RowIndex row = kNoRow;
    std::uint8_t kind = 0;   // graph::PathKind
    std::int32_t step = -1;  // Graph::steps index; -1: the whole trace's path
  };
  std::vector<Segment> segments;
  // Per row of kernels, memcpys, memsets and api_calls (kTables order): its
  // slack in ns (-1: not a node of the graph), and the step on whose path it
  // lies (kOffPath: none; -1: the whole trace's path).
  static constexpr std::int32_t kOffPath = -2;
  static constexpr std::array<TableId, 4> kTables = {TableId::kernels, TableId::memcpys, TableId::memsets,
                                                     TableId::api_calls};
  std::array<std::vector<TimeNs>, 4> slack;
  std::array<std::vector<std::int32_t>, 4> on_path;
  std::vector<std::int32_t> step_index;  // per Graph::steps entry: the step's index (as the report numbers it)

  bool ready() const { return status.empty(); }
  // Slack of a row (-1: none), and the step on whose path it is (kOffPath: none).
  TimeNs slack_of(TableId table, RowIndex row) const;
  std::int32_t path_of(TableId table, RowIndex row) const;
  // Segments overlapping [start, end).
  std::pair<std::size_t, std::size_t> visible(TimeNs start, TimeNs end) const;
  TimeNs longest = 0;  // the longest segment (for visible()'s search)
};

// Builds, replays and walks the graph. A trace with more GPU ops than
// `max_ops` gets no path (status says so): the graph of a 10M-op trace costs
// gigabytes the viewer does not spend unasked.
PathOverlay compute_path_overlay(const Trace& trace, std::size_t max_ops = 4'000'000);

}  // namespace gpuscope::viewer
