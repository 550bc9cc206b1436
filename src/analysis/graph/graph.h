// The dependency graph of a trace: what each operation waited for.
//
// [SECTION] Nodes, chains and edges
// [SECTION] Steps on the graph
// [SECTION] The graph
// [SECTION] Building it
//
// Every GPU op (kernel, memcpy, memset) and every outermost CPU API call is a
// node. Nodes that run one after the other on one processor — a GPU stream,
// a CPU thread — form a chain, in the order the trace shows; the time between
// a node and the previous one on its chain is the node's chain latency (on a
// CPU thread: the CPU time between calls, itself a piece of the model; on a
// GPU stream: the gap no dependency explains, which belongs to the op that
// follows it). Edges between chains say what else a node waited for: its
// launch, a host synchronisation, a blocking copy, another stream (an event,
// or inferred from the timing), a collective's other participants.
//
// Each edge and chain latency is set from the trace so that a replay with the
// observed durations reproduces the observed times; docs/whatif.md states
// every modelling choice. The graph never refers to a Trace after it is
// built (rows are kept only to name things), so it can outlive it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/profile.h"
#include "trace/trace.h"

namespace gpuscope::graph {

// [SECTION] Nodes, chains and edges -----------------------------------------------------------

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = 0xffffffffu;

enum class NodeKind : std::uint8_t {
  kernel = 0,
  memcpy,
  memset,
  call,    // a CPU API call that launched nothing and waits for nothing
  launch,  // a CPU API call that launched GPU ops
  sync,    // a CPU API call that waits for GPU work (host synchronisation, blocking copy)
};
inline bool is_gpu(NodeKind k) { return k <= NodeKind::memset; }

// What a piece of time on the critical path is.
enum class PathKind : std::uint8_t {
  gpu_compute = 0,  // kernels other than communication: their own run, never the gap before one
  communication,    // collective kernels
  copy,             // memcpys and memsets
  cpu_launch,       // launch calls and the latency from a launch to its op's start
  cpu_other,        // CPU time between calls and in other API calls
  input_wait,       // CPU time loading data (data-loader ranges)
  sync_wait,        // host synchronisations: the return after the GPU work they waited for
  gpu_wait,         // a stream idle before an op, beyond its typical gap, that no recorded dependency explains
  gpu_gap,          // a stream idle before an op for what held it: the device's typical gap after the previous
                    // op of the stream, or the latency after the op on another stream it waited for
  count_
};
inline constexpr int kPathKindCount = static_cast<int>(PathKind::count_);
std::string_view to_string(PathKind k);

enum class EdgeType : std::uint8_t {
  launch = 0,     // launch call's start -> the op's start
  sync,           // a waited-for op's end -> the synchronising call's end
  blocking_copy,  // a copy's end -> the end of the blocking call that issued it
  inferred,    // an op on another stream of the device (a call on another thread) ended right before this one started
  collective,  // this op ends with the other participants of its collective (src = group)
  join,        // added by a change: a side stream joins back
  gradient,    // added by a change: an all-reduce bucket waits for its gradients
  bucket,      // an optimizer op waits for its bucket's all-reduce (from the step's structure, or a change)
  count_
};
inline constexpr int kEdgeTypeCount = static_cast<int>(EdgeType::count_);
std::string_view to_string(EdgeType t);

// Edge flags: which point of the source it leaves from and of the target it
// arrives at (source end -> target start unless flagged).
enum EdgeFlags : std::uint8_t {
  kFromStart = 1,  // the source's start (a launch call's start)
  kToEnd = 2,      // the target's end (a sync call's end; a collective's end)
  kDisabled = 4,   // ignored by replay (a change removed it)
};

// An in-edge of a node: the node's point (start or end) is no earlier than
// the source's point plus `lat` (which may be slightly negative where the
// trace's clocks disagree by less than GraphOptions::tolerance_ns).
struct Edge {
  NodeId src = kNoNode;  // a node, or for EdgeType::collective a group index
  EdgeType type = EdgeType::launch;
  std::uint8_t flags = 0;
  TimeNs lat = 0;
};

// A processor: a GPU stream or a CPU thread; its nodes are [begin, end).
struct Chain {
  NodeId begin = 0, end = 0;
  TrackId track = 0;  // the trace's track (kNoTrack for chains added by a change)
  bool gpu = false;
  std::uint32_t device = kNoDevice;  // GPU chains
  std::uint32_t pid = 0;
};
inline constexpr TrackId kNoTrack = 0xffffffffu;

// One collective instance: the k-th communication kernel of every device.
// Each member ends when the last member has started plus its own transfer
// time (the member's duration in the graph).
struct Group {
  std::uint32_t first = 0, count = 0;  // members: Graph::group_members[first, first + count)
};

// [SECTION] Steps on the graph ----------------------------------------------------------------

// A point in a CPU thread's time, placed between two of its calls so that it
// moves with them in a replay: `offset` ns before the start of `next`, or
// (no next) `offset` ns after the end of `prev`, or (inside) `offset` ns after
// the start of call `prev`; with neither, `offset` is the time itself (a
// thread that made no calls).
struct CpuPoint {
  NodeId prev = kNoNode, next = kNoNode;
  TimeNs offset = 0;
  bool inside = false;
};

// A step as analysis defines it (docs/metrics.md), as anchors on the graph:
// from its CPU range's start to the later of the range's end and the end of
// the GPU ops the range's calls launched to the device — or, from the kernel
// pattern, from one anchor kernel's start to the next one's. Consecutive
// steps of a device never overlap (a step starts no earlier than the
// previous one ended).
struct GraphStep {
  std::int32_t index = 0;
  std::string name;
  std::uint32_t device = kNoDevice;
  bool pattern = false;
  CpuPoint start, end;                       // CPU steps
  NodeId start_node = kNoNode;               // pattern: the anchor kernel
  NodeId end_node = kNoNode;                 // pattern: the next anchor (kNoNode: the last step, ended by its ops)
  std::uint32_t ops_begin = 0, ops_end = 0;  // the step's ops: Graph::step_ops[ops_begin, ops_end)
};

// [SECTION] The graph --------------------------------------------------------------------------

// Per device: the latencies an op shows when nothing but that edge held it.
struct DeviceLatency {
  std::uint32_t device = kNoDevice;
  TimeNs stream_gap_ns = 0;  // previous op's end on the stream -> the op's start (GPU-bound ops)
  TimeNs launch_ns = 0;      // launch call's start -> the op's start (launch-bound ops)
};
struct Graph;
// The device's latencies in the graph; nullptr: none measured.
const DeviceLatency* latency_of(const Graph& g, std::uint32_t device);

struct Graph {
  // Nodes (one array per field; index = NodeId).
  std::vector<NodeKind> kind;
  std::vector<std::uint8_t> category;  // KernelCategory of kernels; memory for copies; kNoCategory for CPU calls
  std::vector<RowIndex> row;           // the node's row in its table (kernels, memcpys, memsets, api_calls)
  std::vector<TimeNs> obs_start, obs_end;
  std::vector<TimeNs> dur;              // modelled duration: end >= start + dur
  std::vector<TimeNs> lat;              // chain latency: start >= end of the chain's previous node + lat
  std::vector<std::uint32_t> in_begin;  // in-edges of node n: in[in_begin[n], in_begin[n + 1])
  std::vector<Edge> in;

  std::vector<Chain> chains;  // GPU chains first, then CPU chains, in track order
  std::vector<Group> groups;
  std::vector<NodeId> group_members;
  // CPU time spent loading input, as (node, ns): that much of the node's chain
  // latency lies inside data-loading ranges. Sorted by node.
  std::vector<std::pair<NodeId, TimeNs>> input;
  // Calls that lie inside data-loading ranges and launch nothing (sorted).
  std::vector<NodeId> input_calls;

  StepSource step_source = StepSource::none;
  std::vector<GraphStep> steps;  // per device in time order, devices in order
  std::vector<NodeId> step_ops;

  std::vector<DeviceLatency> latencies;
  TimeNs call_cost_ns = 0;  // median launch-call duration: what a sync costs when it does not wait
  // CUDA graphs' one-time set-up, in time order (each capture up to the
  // graph's first run, torch's cudagraph trees recording one: analysis'
  // GraphSetup): no change of the program removes it, so the changes that
  // take host time away (--cuda-graphs, --no-host-sync) leave it as recorded.
  std::vector<TimeRange> setup;
  bool in_setup(TimeNs at) const;

  // What the trace lacked, and what was inferred or adjusted instead, keyed
  // by a dotted name ("graph.ops_without_launch", …), like TraceMeta::stats.
  NamedCounts stats;
  // True when no op could be linked to its launch: the graph holds only
  // stream order (each stream replays from its first op's observed start).
  bool stream_order_only = false;

  std::size_t size() const { return kind.size(); }
  std::uint64_t stat(std::string_view key) const { return count_of(stats, key); }
  void add_stat(std::string_view key, std::uint64_t n) { add_count(stats, key, n); }
  // The chain holding node n (binary search over the chains).
  std::uint32_t chain_of(NodeId n) const;
  // What the node's own time is on the critical path.
  PathKind path_kind(NodeId n) const;
  // CPU time of node n's chain latency that was spent loading input.
  TimeNs input_of(NodeId n) const;
  std::size_t memory_bytes() const;
};

// A node's name, from the trace the graph was built from: the kernel's name,
// "Memcpy HtoD", "Memset", or the API call's name.
std::string node_name(const Trace& trace, const Graph& g, NodeId n);

inline constexpr std::uint8_t kNoCategory = 0xff;

// [SECTION] Building it --------------------------------------------------------------------------

struct GraphOptions {
  // An op that starts at most this long after an op on another stream of its
  // device ended, with nothing else explaining its start, is taken to have
  // waited for it (an event the trace does not show).
  TimeNs infer_window_ns = 10'000;
  // ... when its start is at least this much later than its known
  // dependencies explain.
  TimeNs unexplained_min_ns = 2'000;
  // A CPU thread idle for at least this long while another thread of its
  // process made calls, resuming at most `handover_window_ns` after that
  // thread's latest call ended, is taken to have waited for it (one thread
  // handing work to another, as PyTorch's main thread and autograd thread do).
  TimeNs handover_min_ns = 1'000'000;
  TimeNs handover_window_ns = 2'000'000;
  // Only what overlaps this time range (empty: the whole trace): ops, calls
  // and ranges that overlap it, steps that lie inside it.
  TimeRange window;
  // Dependencies the trace's timestamps violate by at most this much are kept
  // (with a negative latency); beyond it they are dropped and counted.
  TimeNs tolerance_ns = 5'000;
};

// Builds the graph of one trace. Never fails on a trace that froze; what it
// cannot build is counted in Graph::stats.
Graph build_graph(const Trace& trace, const GraphOptions& options = {});

}  // namespace gpuscope::graph
