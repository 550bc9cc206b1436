// The critical path: the chain of nodes and waits that decides how long a
// step (or the whole trace) takes on a timeline, found by walking back from
// its end along whatever held each point (its own work, the previous node of
// its chain and the gap before it, a launch, a sync, another stream, a
// collective's last arrival), and its time split by kind and category.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/graph/graph.h"
#include "analysis/graph/replay.h"

namespace gpuscope::graph {

// One piece of a critical path: [start, end) spent at `node` (its work, or
// the wait or gap just before it), of kind `kind`.
struct PathSegment {
  NodeId node = kNoNode;
  TimeNs start = 0, end = 0;
  PathKind kind = PathKind::cpu_other;
};

// The critical path of step i (Graph::steps order) on the timeline, whose
// step ranges are `steps` (step_ranges(g, tl)); segments in time order.
std::vector<PathSegment> step_path(const Graph& g, const Timeline& tl, const std::vector<TimeRange>& steps,
                                   std::size_t i);
// The critical paths of the steps `which` (indices into `steps`, in time
// order on each device): one walk per device back from the last end of
// their ops to the first one's start, cut at the steps' bounds; result i is
// step which[i]'s. Not each step's own walk: consecutive steps tile the run,
// so a step's GPU work that ends it early lengthens the next one wherever
// that one's start waits for the host; only the run's one path tells which
// work set the pace.
std::vector<std::vector<PathSegment>> steps_paths(const Graph& g, const Timeline& tl,
                                                  const std::vector<TimeRange>& steps,
                                                  const std::vector<std::size_t>& which);
// The critical path of the whole timeline (from the last end back to the first start).
std::vector<PathSegment> trace_path(const Graph& g, const Timeline& tl);

// Paths summed over every step (or the whole trace without steps).
struct PathSummary {
  std::size_t steps = 0;  // paths summed; 0: one path over the whole trace
  TimeNs length = 0;      // their total length
  std::array<TimeNs, kPathKindCount> by_kind{};
  std::array<TimeNs, kKernelCategoryCount> by_category{};  // the GPU part, by kernel category (copies: memory)
  struct Op {
    std::string name;
    std::uint8_t category = kNoCategory;
    TimeNs ns = 0;
    std::uint64_t count = 0;  // ops of that name on the paths
  };
  std::vector<Op> top;  // GPU ops with the most time on the paths, by name, most first
};
PathSummary summarize_paths(const Trace& trace, const Graph& g, const Timeline& tl, std::size_t top = 10);

// Slack of every node: how much later its start could come without the end of
// the timeline moving (0 on the trace's critical path), from a backward pass
// over `order`, the replay's events (replay()'s `order` output).
std::vector<TimeNs> slack(const Graph& g, const Timeline& tl, const std::vector<std::uint32_t>& order);

}  // namespace gpuscope::graph
