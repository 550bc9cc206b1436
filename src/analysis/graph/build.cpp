// build_graph(): from a Trace to its dependency graph, in phases.
//
// [SECTION] Chains: GPU streams and CPU threads
// [SECTION] Launches and typical latencies
// [SECTION] Host synchronisations and blocking copies
// [SECTION] Collectives across devices
// [SECTION] In-edges and latencies, node by node
// [SECTION] Data loading on the CPU
// [SECTION] Steps
// [SECTION] Entry point
//
// Each phase reads the trace's frozen tables once; temporaries live in the
// Builder and go when it does. Latencies are set so that replaying the graph
// with the observed durations gives back the observed start of every node
// whose dependencies the trace's timestamps respect (see docs/whatif.md).
#include <algorithm>
#include <cstring>

#include "analysis/detail/context.h"
#include "analysis/graph/graph.h"
#include "analysis/graph/replay.h"
#include "analysis/util/search.h"
#include "trace/fresh_memory.h"

namespace gpuscope::graph {

namespace {

// Quantile q of a sample (reordered), `fallback` when it is empty.
TimeNs quantile(std::vector<TimeNs>& v, double q, TimeNs fallback) {
  if (v.empty()) return fallback;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// Room for n values on huge pages, filled by push_back (a 10M-kernel trace's
// graph is ~1 GB: faulted 4 KiB at a time, that alone would take seconds).
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  detail::advise_huge_pages(v.data(), n * sizeof(T));
}

// n values, each `value`, in fresh memory mapped at once.
template <class T>
void fill_huge(std::vector<T>& v, std::size_t n, T value) {
  detail::prepare_column(v, n);
  v.assign(n, value);
}

// The last index m in [begin, end) with v[m] <= x, searching from `*hint`
// (kept for the next query; queries whose x grows cost O(1) each), kNoNode if none.
NodeId last_at_or_before(const TimeNs* v, NodeId begin, NodeId end, NodeId* hint, TimeNs x) {
  const RowIndex i = detail::first_at_or_after(v, begin, end, *hint, x == INT64_MAX ? x : x + 1);
  *hint = i;
  return i == begin ? kNoNode : i - 1;
}

struct Builder {
  const Trace& t;
  const GraphOptions& o;
  Graph& g;

  std::vector<NodeId> api_node;            // API row -> the outermost call node containing it
  NodeId gpu_nodes = 0;                    // GPU ops are nodes [0, gpu_nodes) (their chains come first)
  std::vector<NodeId> launch_of;           // GPU node -> its launch call node (GPU nodes only)
  std::vector<NodeId> first_launched;      // chain -> its first op whose launch the trace has (GPU chains)
  std::vector<std::uint32_t> track_chain;  // track -> chain index (kNoTrack: none)
  // Search positions in other chains, for queries in time order along one chain.
  std::vector<NodeId> hint;
  std::vector<std::pair<NodeId, std::uint32_t>> group_of;  // comm node -> group, sorted by node
  // CPU node -> the GPU ops it waits for (syncs, blocking copies), sorted by node.
  struct Wait {
    NodeId call, op;
    EdgeType type;
  };
  std::vector<Wait> waits;
  // Optimizer op -> the all-reduce of its bucket in its step, sorted by op.
  std::vector<std::pair<NodeId, NodeId>> bucket_of;
  // Counted node by node, into Graph::stats at the end.
  struct Counts {
    std::uint64_t launches_after_op = 0, unexplained = 0, unexplained_ns = 0, overlaps = 0, inferred = 0,
                  syncs_after_end = 0, handovers = 0, buckets = 0;
  } counts;

  Builder(const Trace& trace, const GraphOptions& options, Graph& graph) : t(trace), o(options), g(graph) {}

  // A table's rows on a track: all of them, or those overlapping the window.
  bool windowed() const { return o.window.end > o.window.start; }
  bool in_window(TimeNs at) const { return !windowed() || (at >= o.window.start && at <= o.window.end); }
  RowRange rows(TableId table, TrackId track) const {
    return windowed() ? t.rows_overlapping(table, track, o.window.start, o.window.end) : t.rows_of(table, track);
  }

  void chains();
  void launches();
  void latencies();
  void syncs();
  void full_queue_waits();
  void blocking_copies();
  void collectives();
  void edges();
  void input();
  void steps();
  void optimizer_buckets();

  // Helpers.
  void gpu_chain(TrackId track);
  void cpu_chain(TrackId track);
  NodeId push_node(NodeKind kind, std::uint8_t category, RowIndex row, TimeNs start, TimeNs end);
  const DeviceLatency& latency_of(std::uint32_t device) const;
  NodeId last_launched_before(const Chain& c, TimeNs t) const;
  NodeId latest_before(NodeId call, std::uint32_t device) const;
  std::vector<NodeId> waits_on(NodeId call, SyncType type, std::uint32_t device, std::uint32_t stream) const;
  NodeId node_starting_at(const Chain& c, TimeNs at) const;
  CpuPoint cpu_point(const Chain& c, TimeNs at) const;
  NodeId inferred_source(NodeId n, const Chain& c, TimeNs explained);
  NodeId handover_source(const Chain& own, TimeNs after, TimeNs at);
  TimeNs input_before(NodeId n) const { return g.input_of(n); }
  void gpu_edges(NodeId n, const Chain& c, const DeviceLatency& typ, std::size_t* group_cursor,
                 std::size_t* bucket_cursor);
  void cpu_edges(NodeId n, const Chain& c, std::size_t* wait_cursor);
  void flush_counts();
};

// [SECTION] Chains: GPU streams and CPU threads ------------------------------------------------

NodeId Builder::push_node(NodeKind kind, std::uint8_t category, RowIndex row, TimeNs start, TimeNs end) {
  const auto n = static_cast<NodeId>(g.kind.size());
  g.kind.push_back(kind);
  g.category.push_back(category);
  g.row.push_back(row);
  g.obs_start.push_back(start);
  g.obs_end.push_back(end);
  return n;
}

// A stream's kernels, copies and fills, merged by start (ties: the longer first, as the tables sort).
void Builder::gpu_chain(TrackId track) {
  const KernelTable& k = t.kernels();
  const MemcpyTable& m = t.memcpys();
  const MemsetTable& z = t.memsets();
  RowRange rk = rows(TableId::kernels, track), rm = rows(TableId::memcpys, track), rz = rows(TableId::memsets, track);
  if (rk.empty() && rm.empty() && rz.empty()) return;
  Chain c;
  c.begin = static_cast<NodeId>(g.size());
  c.track = track;
  c.gpu = true;
  c.device = t.tracks()[track].device;
  c.pid = t.tracks()[track].pid;
  constexpr TimeNs kNone = INT64_MAX;
  auto at = [](const std::vector<TimeNs>& v, RowRange r) { return r.empty() ? kNone : v[r.begin]; };
  while (!rk.empty() || !rm.empty() || !rz.empty()) {
    const TimeNs sk = at(k.start, rk), sm = at(m.start, rm), sz = at(z.start, rz);
    if (sk <= sm && sk <= sz) {
      push_node(NodeKind::kernel, k.category[rk.begin], rk.begin, sk, k.end[rk.begin]);
      ++rk.begin;
    } else if (sm <= sz) {
      push_node(NodeKind::memcpy, static_cast<std::uint8_t>(KernelCategory::memory), rm.begin, sm, m.end[rm.begin]);
      ++rm.begin;
    } else {
      push_node(NodeKind::memset, static_cast<std::uint8_t>(KernelCategory::memory), rz.begin, sz, z.end[rz.begin]);
      ++rz.begin;
    }
  }
  c.end = static_cast<NodeId>(g.size());
  track_chain[track] = static_cast<std::uint32_t>(g.chains.size());
  g.chains.push_back(c);
}

// A thread's outermost API calls; calls inside another (driver calls inside
// a runtime call) are part of it, and so are the ops they launch.
void Builder::cpu_chain(TrackId track) {
  const ApiCallTable& a = t.api_calls();
  const RowRange r = rows(TableId::api_calls, track);
  if (r.empty()) return;
  Chain c;
  c.begin = static_cast<NodeId>(g.size());
  c.track = track;
  c.pid = t.tracks()[track].pid;
  NodeId outer = kNoNode;
  std::uint64_t nested = 0;
  for (RowIndex i = r.begin; i < r.end; ++i) {
    if (outer != kNoNode && a.start[i] < g.obs_end[outer]) {
      api_node[i] = outer;
      g.obs_end[outer] = std::max(g.obs_end[outer], a.end[i]);
      ++nested;
      continue;
    }
    outer = push_node(NodeKind::call, kNoCategory, i, a.start[i], a.end[i]);
    api_node[i] = outer;
  }
  c.end = static_cast<NodeId>(g.size());
  if (nested) g.add_stat("graph.nested_calls", nested);
  track_chain[track] = static_cast<std::uint32_t>(g.chains.size());
  g.chains.push_back(c);
}

void Builder::chains() {
  track_chain.assign(t.tracks().size(), kNoTrack);
  fill_huge(api_node, t.api_calls().size(), kNoNode);
  const std::size_t n = t.kernels().size() + t.memcpys().size() + t.memsets().size() + t.api_calls().size();
  reserve_huge(g.obs_start, n);
  reserve_huge(g.obs_end, n);
  reserve_huge(g.kind, n);
  reserve_huge(g.category, n);
  reserve_huge(g.row, n);
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr)
    if (t.tracks()[tr].kind == TrackKind::gpu) gpu_chain(tr);
  gpu_nodes = static_cast<NodeId>(g.size());
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr)
    if (t.tracks()[tr].kind == TrackKind::cpu) cpu_chain(tr);
  hint.assign(g.chains.size(), 0);
}

// [SECTION] Launches and typical latencies -------------------------------------------------------

void Builder::launches() {
  fill_huge(launch_of, gpu_nodes, kNoNode);
  first_launched.assign(g.chains.size(), kNoNode);
  std::uint64_t without = 0, linked = 0;
  for (const Chain& c : g.chains) {
    if (!c.gpu) continue;
    NodeId& first = first_launched[&c - g.chains.data()];
    first = c.end;
    for (NodeId n = c.begin; n < c.end; ++n) {
      RowIndex api = kNoRow;
      switch (g.kind[n]) {
        case NodeKind::kernel: api = t.kernels().api[g.row[n]]; break;
        case NodeKind::memcpy: api = t.memcpys().api[g.row[n]]; break;
        default: api = t.memsets().api[g.row[n]]; break;
      }
      const NodeId call = api == kNoRow ? kNoNode : api_node[api];
      launch_of[n] = call;
      if (call == kNoNode) {
        ++without;
      } else {
        ++linked;
        first = std::min(first, n);
        if (g.kind[call] == NodeKind::call) g.kind[call] = NodeKind::launch;
      }
    }
  }
  if (without) g.add_stat("graph.ops_without_launch", without);
  g.stream_order_only = linked == 0 && without > 0;
}

// Per device: the gap between back-to-back ops of a stream when the GPU was
// the bottleneck (the launch had returned before the previous op ended), and
// the time from a launch call's start to its op's start when the stream was
// idle waiting for it. Lower quartile and median of up to 2^16 samples each.
void Builder::latencies() {
  std::vector<std::uint32_t> devices;
  for (const Chain& c : g.chains)
    if (c.gpu && std::find(devices.begin(), devices.end(), c.device) == devices.end()) devices.push_back(c.device);
  std::sort(devices.begin(), devices.end());
  std::vector<TimeNs> durations;
  for (std::uint32_t d : devices) {
    std::vector<TimeNs> stream, launch;
    std::size_t ops = 0;
    for (const Chain& c : g.chains)
      if (c.gpu && c.device == d) ops += c.end - c.begin;
    const std::size_t stride = std::max<std::size_t>(1, ops >> 16);
    std::size_t seen = 0;
    for (const Chain& c : g.chains) {
      if (!c.gpu || c.device != d) continue;
      for (NodeId n = c.begin + 1; n < c.end; ++n) {
        const NodeId call = launch_of[n];
        if (call == kNoNode || ++seen % stride) continue;
        const TimeNs s = g.obs_start[n], prev_end = g.obs_end[n - 1];
        if (g.obs_end[call] <= prev_end && s >= prev_end && s - prev_end < 1'000'000) stream.push_back(s - prev_end);
        if (g.obs_start[call] >= prev_end && s >= g.obs_start[call] && s - g.obs_start[call] < 1'000'000)
          launch.push_back(s - g.obs_start[call]);
        if (durations.size() < (1u << 16)) durations.push_back(g.obs_end[call] - g.obs_start[call]);
      }
    }
    g.latencies.push_back({d, quantile(stream, 0.25, 1'000), quantile(launch, 0.5, 5'000)});
  }
  g.call_cost_ns = quantile(durations, 0.5, 5'000);
}

const DeviceLatency& Builder::latency_of(std::uint32_t device) const {
  static const DeviceLatency none{kNoDevice, 1'000, 5'000};
  const DeviceLatency* l = graph::latency_of(g, device);
  return l ? *l : none;
}

// [SECTION] Host synchronisations and blocking copies ----------------------------------------------

// The last op of the chain launched before `at` (kNoNode if none).
// Ops of a stream run in the order they were launched, so their launch times
// do not decrease along the chain. An op without a launch counts at its start,
// except the ops before the chain's first launch the trace has: the trace
// began (or its window opened) with them already queued, so they were
// launched before any call it holds.
NodeId Builder::last_launched_before(const Chain& c, TimeNs at) const {
  const NodeId first = first_launched[&c - g.chains.data()];
  NodeId lo = first < c.end ? first : c.begin, hi = c.end;  // the first op launched at or after `at` is in [lo, hi]
  while (lo < hi) {
    const NodeId mid = lo + (hi - lo) / 2;
    const NodeId call = launch_of[mid];
    if ((call == kNoNode ? g.obs_start[mid] : g.obs_start[call]) < at)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo == c.begin ? kNoNode : lo - 1;
}

// The op a sync on `device` (kNoDevice: any) waited for when the trace does
// not say: the last one to end, no later than the call, among the ops
// launched before the call started; none if the GPU was idle by then.
NodeId Builder::latest_before(NodeId call, std::uint32_t device) const {
  NodeId best = kNoNode;
  for (const Chain& c : g.chains) {
    if (!c.gpu || (device != kNoDevice && c.device != device)) continue;
    NodeId n = last_launched_before(c, g.obs_start[call]);
    for (int back = 0; n != kNoNode && n >= c.begin && back < 64; ++back, --n) {
      if (g.obs_end[n] <= g.obs_end[call] + o.tolerance_ns) break;
      if (n == c.begin) {
        n = kNoNode;
        break;
      }
    }
    if (n == kNoNode || g.obs_end[n] > g.obs_end[call] + o.tolerance_ns) continue;
    if (best == kNoNode || g.obs_end[n] > g.obs_end[best]) best = n;
  }
  if (best != kNoNode && g.obs_end[best] <= g.obs_start[call]) best = kNoNode;  // nothing to wait for
  return best;
}

// The ops a stream or device sync waited for: on each stream it covers, the
// last op launched before the call started.
std::vector<NodeId> Builder::waits_on(NodeId call, SyncType type, std::uint32_t device, std::uint32_t stream) const {
  std::vector<NodeId> ops;
  for (const Chain& c : g.chains) {
    if (!c.gpu || (device != kNoDevice && c.device != device)) continue;
    if (type == SyncType::stream && t.tracks()[c.track].stream != stream) continue;
    NodeId n = last_launched_before(c, g.obs_start[call]);
    if (n != kNoNode && n < first_launched[&c - g.chains.data()]) {
      // Queued before the trace began: those still running after the call
      // returned were launched after it, by a thread the trace does not hold.
      const TimeNs* e = g.obs_end.data();
      const TimeNs* it = std::upper_bound(e + c.begin, e + n + 1, g.obs_end[call] + o.tolerance_ns);
      n = it == e + c.begin ? kNoNode : static_cast<NodeId>(it - e - 1);
    }
    if (n != kNoNode) ops.push_back(n);
  }
  return ops;
}

void Builder::syncs() {
  const SyncTable& s = t.syncs();
  const ApiCallTable& a = t.api_calls();
  std::uint64_t unmatched = 0, no_target = 0, inferred = 0;
  std::vector<NodeId> covered;  // calls a sync row describes
  auto add_waits = [&](NodeId call, const std::vector<NodeId>& ops) {
    for (NodeId op : ops) waits.push_back({call, op, EdgeType::sync});
    if (g.kind[call] != NodeKind::launch || !ops.empty()) g.kind[call] = NodeKind::sync;
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!in_window(s.start[i])) continue;
    const SyncType type = s.type_at(i);
    if (type == SyncType::stream_wait_event) continue;  // GPU-side: seen as the waiting stream's inferred edge
    const std::uint32_t ci = s.track_at(i) < track_chain.size() ? track_chain[s.track_at(i)] : kNoTrack;
    if (ci == kNoTrack) {
      ++unmatched;
      continue;
    }
    // The call that synchronised: the outermost call containing the sync's start.
    const Chain& c = g.chains[ci];
    const TimeNs* st = g.obs_start.data();
    const TimeNs* it = std::upper_bound(st + c.begin, st + c.end, s.start[i]);
    if (it == st + c.begin) {
      ++unmatched;
      continue;
    }
    const auto call = static_cast<NodeId>(it - st - 1);
    if (g.obs_end[call] < s.start[i] || contains(t.str(a.name[g.row[call]]), "Query")) {
      ++unmatched;  // no call holds it, or a query that never blocks
      continue;
    }
    covered.push_back(call);
    std::vector<NodeId> ops;
    if (type == SyncType::stream && s.stream[i] != kNoId) {
      ops = waits_on(call, type, s.device[i], s.stream[i]);
    } else if (type == SyncType::context) {
      ops = waits_on(call, type, s.device[i], kNoId);
    } else {
      const NodeId n = latest_before(call, s.device[i]);
      if (n != kNoNode) ops.push_back(n), ++inferred;
    }
    if (ops.empty()) ++no_target;
    add_waits(call, ops);
  }
  // Synchronising calls the syncs table does not describe, known by name.
  std::sort(covered.begin(), covered.end());
  for (const Chain& c : g.chains) {
    if (c.gpu) continue;
    for (NodeId n = c.begin; n < c.end; ++n) {
      const std::string_view name = t.str(a.name[g.row[n]]);
      if (!contains(name, "ynchronize") || std::binary_search(covered.begin(), covered.end(), n)) continue;
      std::vector<NodeId> ops;
      if (contains(name, "Device") || contains(name, "Ctx")) {
        ops = waits_on(n, SyncType::context, kNoDevice, kNoId);
      } else {
        const NodeId op = latest_before(n, kNoDevice);
        if (op != kNoNode) ops.push_back(op), ++inferred;
      }
      add_waits(n, ops);
    }
  }
  if (unmatched) g.add_stat("graph.syncs_without_call", unmatched);
  if (no_target) g.add_stat("graph.syncs_without_target", no_target);
  if (inferred) g.add_stat("graph.sync_targets_inferred", inferred);
}

// A launch into a full queue: with kFullQueue ops or more of its stream
// launched and not yet ended as the call began, a call of kMinWait or more
// that returned within kReturn of an op of its stream ending (the op ended
// while the call ran) waited for that op to free a slot (the runtime's queue
// holds about a thousand). A faster GPU frees the slot sooner, so the replay
// must not keep that time as the host's. It stays a launch (no host sync
// removes it); the wait is a blocking call's.
void Builder::full_queue_waits() {
  constexpr NodeId kFullQueue = 512;
  constexpr TimeNs kMinWait = 20'000, kReturn = 30'000;
  const TimeNs* e = g.obs_end.data();
  std::uint64_t found = 0;
  std::vector<TimeNs> free;  // the launch calls that did not wait: what a call costs
  for (const Chain& c : g.chains) {
    if (!c.gpu) continue;
    for (NodeId m = c.begin; m < std::min<NodeId>(c.end, c.begin + kFullQueue) && free.size() < (1u << 16); ++m)
      if (launch_of[m] != kNoNode) free.push_back(g.obs_end[launch_of[m]] - g.obs_start[launch_of[m]]);
    if (c.end - c.begin <= kFullQueue) continue;
    NodeId ended = c.begin;  // the first op of the stream not ended when the call began
    for (NodeId m = c.begin + kFullQueue; m < c.end; ++m) {
      const NodeId call = launch_of[m];
      if (call == kNoNode || g.kind[call] != NodeKind::launch) continue;
      const TimeNs s = g.obs_start[call], f = g.obs_end[call];
      const bool sampled = free.size() < (1u << 16);
      if (f - s < kMinWait) {
        if (sampled) free.push_back(f - s);
        continue;
      }
      while (ended < m && e[ended] <= s) ++ended;
      if (m - ended < kFullQueue) {
        if (sampled) free.push_back(f - s);
        continue;
      }
      // The last op of the stream ended by the call's return (ends rise along a stream).
      const NodeId freed = static_cast<NodeId>(std::upper_bound(e + ended, e + m, f + o.tolerance_ns) - e);
      if (freed == ended || e[freed - 1] <= s || f - e[freed - 1] > kReturn) continue;
      waits.push_back({call, freed - 1, EdgeType::blocking_copy});
      ++found;
    }
  }
  if (!found) return;
  g.add_stat("graph.full_queue_waits", found);
  // A run whose launches mostly waited: their median is no call's own cost.
  g.call_cost_ns = quantile(free, 0.5, 5'000);
}

// A copy whose call returns only when it is done: cudaMemcpy (no Async), and
// device-to-pageable copies, which the driver stages synchronously.
void Builder::blocking_copies() {
  const MemcpyTable& m = t.memcpys();
  const ApiCallTable& a = t.api_calls();
  std::uint64_t blocking = 0;
  for (const Chain& c : g.chains) {
    if (!c.gpu) continue;
    for (NodeId n = c.begin; n < c.end; ++n) {
      if (g.kind[n] != NodeKind::memcpy || launch_of[n] == kNoNode) continue;
      const RowIndex r = g.row[n];
      const RowIndex api = m.api[r];
      const std::string_view name = t.str(a.name[api]);
      const bool sync_call = contains(name, "emcpy") && !contains(name, "Async");
      const bool to_pageable = m.kind_at(r) == CopyKind::dtoh && m.dst_kind_at(r) == MemoryKind::pageable;
      if (!sync_call && !to_pageable) continue;
      waits.push_back({launch_of[n], n, EdgeType::blocking_copy});
      g.kind[launch_of[n]] = NodeKind::sync;
      ++blocking;
    }
  }
  if (blocking) g.add_stat("graph.blocking_copies", blocking);
  std::sort(waits.begin(), waits.end(), [](const Wait& x, const Wait& y) { return x.call < y.call; });
}

// [SECTION] Collectives across devices ---------------------------------------------------------------

// The k-th communication kernel of every device that has some is one
// collective instance when their names agree. Each member's modelled
// duration becomes its transfer time: its end minus the last member's start.
void Builder::collectives() {
  std::vector<std::uint32_t> devices;
  std::vector<std::vector<NodeId>> comm;
  for (const Chain& c : g.chains) {
    if (!c.gpu) continue;
    std::size_t d = std::find(devices.begin(), devices.end(), c.device) - devices.begin();
    if (d == devices.size()) devices.push_back(c.device), comm.emplace_back();
    for (NodeId n = c.begin; n < c.end; ++n)
      if (g.category[n] == static_cast<std::uint8_t>(KernelCategory::communication)) comm[d].push_back(n);
  }
  std::size_t with = 0, instances = ~std::size_t{0}, total = 0;
  for (auto& v : comm) {
    std::sort(v.begin(), v.end(), [&](NodeId x, NodeId y) { return g.obs_start[x] < g.obs_start[y]; });
    total += v.size();
    if (!v.empty()) ++with, instances = std::min(instances, v.size());
  }
  if (total == 0) return;
  if (with < 2) {
    g.add_stat("graph.collectives_without_peers", total);
    return;
  }
  const KernelTable& k = t.kernels();
  std::uint64_t grouped = 0, mismatched = 0;
  for (std::size_t i = 0; i < instances; ++i) {
    TimeNs last = INT64_MIN;
    StringId name = 0;
    bool same = true;
    for (const auto& v : comm) {
      if (v.empty()) continue;
      last = std::max(last, g.obs_start[v[i]]);
      if (name == 0) name = k.name[g.row[v[i]]];
      same = same && k.name[g.row[v[i]]] == name;
    }
    for (const auto& v : comm)
      if (!v.empty() && g.obs_end[v[i]] < last - o.tolerance_ns) same = false;  // ended before the last one came
    if (!same) {
      ++mismatched;
      continue;
    }
    Group grp;
    grp.first = static_cast<std::uint32_t>(g.group_members.size());
    for (const auto& v : comm) {
      if (v.empty()) continue;
      g.group_members.push_back(v[i]);
      group_of.push_back({v[i], static_cast<std::uint32_t>(g.groups.size())});
      ++grp.count;
    }
    g.groups.push_back(grp);
    grouped += grp.count;
  }
  std::sort(group_of.begin(), group_of.end());
  g.add_stat("graph.collective_instances", g.groups.size());
  const std::uint64_t alone = total - grouped;
  if (alone) g.add_stat("graph.collectives_without_peers", alone);
  if (mismatched) g.add_stat("graph.collectives_unmatched", mismatched);
}

// [SECTION] In-edges and latencies, node by node ------------------------------------------------

// The op on another stream of n's device that ended last no later than n
// started, if it ended within the window and after `explained`, and was
// launched before n (kNoNode if none).
NodeId Builder::inferred_source(NodeId n, const Chain& own, TimeNs explained) {
  const TimeNs s = g.obs_start[n];
  NodeId best = kNoNode;
  const TimeNs* e = g.obs_end.data();
  for (std::size_t ci = 0; ci < g.chains.size(); ++ci) {
    const Chain& c = g.chains[ci];
    if (!c.gpu || c.device != own.device || &c == &own) continue;
    const NodeId m = last_at_or_before(e, c.begin, c.end, &hint[ci], s);
    if (m == kNoNode) continue;
    if (e[m] <= explained || s - e[m] > o.infer_window_ns) continue;
    if (launch_of[n] != kNoNode && launch_of[m] != kNoNode && g.obs_start[launch_of[m]] > g.obs_start[launch_of[n]])
      continue;  // launched after n: n cannot have waited for it
    if (best == kNoNode || e[m] > e[best]) best = m;
  }
  return best;
}

void Builder::gpu_edges(NodeId n, const Chain& c, const DeviceLatency& typ, std::size_t* group_cursor,
                        std::size_t* bucket_cursor) {
  const TimeNs s = g.obs_start[n];
  const NodeId call = launch_of[n];
  // Candidate constraints on the start: (source time, typical latency).
  const bool chained = n > c.begin;
  const TimeNs chain_src = chained ? g.obs_end[n - 1] : 0;
  bool launched = call != kNoNode;
  if (launched && g.obs_start[call] > s + o.tolerance_ns) {
    launched = false;  // the op started before its launch began: the clocks disagree
    ++counts.launches_after_op;
  }
  TimeNs explained = INT64_MIN;
  if (chained) explained = chain_src + typ.stream_gap_ns;
  if (launched) explained = std::max({explained, g.obs_start[call] + typ.launch_ns, g.obs_end[call]});
  NodeId from = kNoNode;
  if (s - explained > o.unexplained_min_ns || explained == INT64_MIN) from = inferred_source(n, c, explained);
  // An optimizer op also waits for its bucket's all-reduce, seen or not.
  NodeId bucket = kNoNode;
  std::size_t& bc = *bucket_cursor;
  while (bc < bucket_of.size() && bucket_of[bc].first < n) ++bc;
  if (bc < bucket_of.size() && bucket_of[bc].first == n && g.obs_end[bucket_of[bc].second] <= s + o.tolerance_ns)
    bucket = bucket_of[bc].second;
  if (from != kNoNode && bucket != kNoNode && g.category[from] == g.category[bucket]) bucket = kNoNode;
  if (bucket != kNoNode && from == kNoNode && s - explained > o.unexplained_min_ns && g.obs_end[bucket] > explained)
    from = bucket, bucket = kNoNode;  // it is what held the op
  // Which one held the op: the latest source (with its typical latency).
  enum { kChain, kLaunch, kInferred, kNone } binding = kNone;
  TimeNs best = INT64_MIN;
  if (chained) best = chain_src + typ.stream_gap_ns, binding = kChain;
  if (launched && g.obs_start[call] + typ.launch_ns > best) best = g.obs_start[call] + typ.launch_ns, binding = kLaunch;
  if (from != kNoNode && g.obs_end[from] >= best) best = g.obs_end[from], binding = kInferred;
  if (binding != kInferred && binding != kNone && s - best > o.unexplained_min_ns) {
    ++counts.unexplained;
    counts.unexplained_ns += static_cast<std::uint64_t>(s - best);
  }
  // The binding source gets what is left of the gap; the others their typical latency.
  auto latency = [&](bool binds, TimeNs src, TimeNs typical) { return binds ? s - src : std::min(typical, s - src); };
  if (chained) {
    g.lat.push_back(latency(binding == kChain, chain_src, typ.stream_gap_ns));
    if (s < chain_src) ++counts.overlaps;
  } else {
    g.lat.push_back(0);
  }
  if (launched)
    g.in.push_back({call, EdgeType::launch, kFromStart, latency(binding == kLaunch, g.obs_start[call], typ.launch_ns)});
  if (from != kNoNode) {
    g.in.push_back({from, EdgeType::inferred, 0, s - g.obs_end[from]});
    ++counts.inferred;
  }
  if (bucket != kNoNode) {
    g.in.push_back({bucket, EdgeType::bucket, 0, std::min<TimeNs>(0, s - g.obs_end[bucket])});
    ++counts.buckets;
  }
  TimeNs dur = g.obs_end[n] - s;
  std::size_t& gc = *group_cursor;
  while (gc < group_of.size() && group_of[gc].first < n) ++gc;
  const auto grp = group_of.begin() + static_cast<std::ptrdiff_t>(gc);
  if (grp != group_of.end() && grp->first == n) {
    const Group& gr = g.groups[grp->second];
    TimeNs last = INT64_MIN;
    for (std::uint32_t i = 0; i < gr.count; ++i) last = std::max(last, g.obs_start[g.group_members[gr.first + i]]);
    dur = std::max<TimeNs>(0, g.obs_end[n] - last);
    g.in.push_back({grp->second, EdgeType::collective, kToEnd, dur});
  }
  g.dur.push_back(dur);
}

// A CPU call: after the previous call on its thread; a sync or blocking call
// also ends no earlier than what it waited for (plus its return latency).
// The call on another thread of c's process that ended last within (after, at], if at most the window before `at`.
NodeId Builder::handover_source(const Chain& own, TimeNs after, TimeNs at) {
  NodeId best = kNoNode;
  const TimeNs* e = g.obs_end.data();
  for (std::size_t ci = 0; ci < g.chains.size(); ++ci) {
    const Chain& c = g.chains[ci];
    if (c.gpu || &c == &own || c.pid != own.pid) continue;
    const NodeId m = last_at_or_before(e, c.begin, c.end, &hint[ci], at);
    if (m == kNoNode) continue;
    if (e[m] <= after || at - e[m] > o.handover_window_ns) continue;
    if (best == kNoNode || e[m] > e[best]) best = m;
  }
  return best;
}

void Builder::cpu_edges(NodeId n, const Chain& c, std::size_t* wait_cursor) {
  // A thread's first call may have been started by another thread, too.
  const TimeNs gap = n == c.begin ? 0 : g.obs_start[n] - g.obs_end[n - 1];
  NodeId woken = kNoNode;
  if (n == c.begin)
    woken = handover_source(c, INT64_MIN, g.obs_start[n]);
  else if (gap >= o.handover_min_ns)
    woken = handover_source(c, g.obs_end[n - 1], g.obs_start[n]);
  if (woken != kNoNode) {
    // Woken by the other thread: what is left of the gap is its own data loading, if any.
    g.lat.push_back(std::min(gap, input_before(n)));
    g.in.push_back({woken, EdgeType::inferred, 0, g.obs_start[n] - g.obs_end[woken]});
    ++counts.handovers;
  } else {
    g.lat.push_back(gap);
  }
  const TimeNs obs_dur = g.obs_end[n] - g.obs_start[n];
  std::size_t& w = *wait_cursor;
  while (w < waits.size() && waits[w].call < n) ++w;
  const std::size_t from = w;
  TimeNs latest = INT64_MIN;
  for (; w < waits.size() && waits[w].call == n; ++w) latest = std::max(latest, g.obs_end[waits[w].op]);
  if (from == w) {
    g.dur.push_back(obs_dur);
    return;
  }
  // It waited when the GPU was still busy as it began: then its own cost is
  // that of a call, and the latest op's end plus the return latency held it.
  const bool waited = latest > g.obs_start[n];
  const TimeNs ret = waited ? std::max<TimeNs>(0, g.obs_end[n] - latest) : 0;
  g.dur.push_back(waited ? std::min(obs_dur, g.call_cost_ns) : obs_dur);
  for (std::size_t i = from; i < w; ++i) {
    const TimeNs src = g.obs_end[waits[i].op];
    if (src > g.obs_end[n] + o.tolerance_ns) {
      ++counts.syncs_after_end;
      continue;
    }
    const bool binds = waited && src == latest;
    g.in.push_back(
        {waits[i].op, waits[i].type, kToEnd, binds ? g.obs_end[n] - src : std::min(ret, g.obs_end[n] - src)});
  }
}

void Builder::edges() {
  const std::size_t n = g.size();
  reserve_huge(g.dur, n);
  reserve_huge(g.lat, n);
  reserve_huge(g.in_begin, n + 1);
  reserve_huge(g.in, gpu_nodes + gpu_nodes / 4 + waits.size() + (n - gpu_nodes) / 16 + 1024);
  std::size_t wait_cursor = 0, group_cursor = 0, bucket_cursor = 0;
  for (const Chain& c : g.chains) {
    const DeviceLatency& typ = latency_of(c.device);
    for (std::size_t k = 0; k < hint.size(); ++k) hint[k] = g.chains[k].begin;
    for (NodeId i = c.begin; i < c.end; ++i) {
      g.in_begin.push_back(static_cast<std::uint32_t>(g.in.size()));
      if (c.gpu)
        gpu_edges(i, c, typ, &group_cursor, &bucket_cursor);
      else
        cpu_edges(i, c, &wait_cursor);
    }
  }
  g.in_begin.push_back(static_cast<std::uint32_t>(g.in.size()));
  flush_counts();
}

void Builder::flush_counts() {
  const std::pair<const char*, std::uint64_t> all[] = {
      {"graph.launches_after_op", counts.launches_after_op},
      {"graph.unexplained_gaps", counts.unexplained},
      {"graph.unexplained_gap_ns", counts.unexplained_ns},
      {"graph.stream_overlaps", counts.overlaps},
      {"graph.inferred_waits", counts.inferred},
      {"graph.syncs_ending_before_op", counts.syncs_after_end},
      {"graph.thread_handovers", counts.handovers},
      {"graph.optimizer_bucket_waits", counts.buckets},
  };
  for (const auto& [key, n] : all)
    if (n) g.add_stat(key, n);
}

// [SECTION] Data loading on the CPU ------------------------------------------------------------------

// The part of each call's chain latency (the CPU time before it) spent in
// data-loading ranges of its thread, and the calls wholly inside them.
void Builder::input() {
  const RangeTable& r = t.ranges();
  std::vector<std::uint8_t> is_input(t.strings().size(), 2);  // 2: not decided
  for (const Chain& c : g.chains) {
    if (c.gpu) continue;
    std::vector<TimeRange> spans;  // merged input ranges of the thread
    const RowRange on_thread = rows(TableId::ranges, c.track);
    for (RowIndex i = on_thread.begin; i < on_thread.end; ++i) {
      if (r.kind_at(i) == RangeKind::mark) continue;
      std::uint8_t& k = is_input[r.name[i]];
      if (k == 2) k = detail::is_input_range_name(t.str(r.name[i])) ? 1 : 0;
      if (!k) continue;
      if (!spans.empty() && r.start[i] <= spans.back().end)
        spans.back().end = std::max(spans.back().end, r.end[i]);
      else
        spans.push_back({r.start[i], r.end[i]});
    }
    if (spans.empty()) continue;
    std::size_t j = 0;
    for (NodeId n = c.begin; n < c.end; ++n) {
      const TimeNs gap_start = n == c.begin ? g.obs_start[n] : g.obs_end[n - 1], gap_end = g.obs_start[n];
      while (j < spans.size() && spans[j].end <= gap_start) ++j;
      TimeNs in = 0;
      for (std::size_t k = j; k < spans.size() && spans[k].start < gap_end; ++k)
        in += std::min(gap_end, spans[k].end) - std::max(gap_start, spans[k].start);
      if (in > 0) g.input.push_back({n, in});
      // The call itself, when it lies inside one and launches nothing.
      for (std::size_t k = j; k < spans.size() && spans[k].start <= g.obs_start[n]; ++k)
        if (spans[k].end >= g.obs_end[n] && g.kind[n] == NodeKind::call) {
          g.input_calls.push_back(n);
          break;
        }
    }
  }
}

// [SECTION] Steps ------------------------------------------------------------------------------------------

// The GPU op of chain `c` that starts at `at`: the op that begins a step
// found on the GPU (a pattern's kernel, a burst's first op, which may be a copy).
NodeId Builder::node_starting_at(const Chain& c, TimeNs at) const {
  const TimeNs* st = g.obs_start.data();
  const TimeNs* it = std::lower_bound(st + c.begin, st + c.end, at);
  for (; it != st + c.end && *it == at; ++it)
    if (is_gpu(g.kind[static_cast<NodeId>(it - st)])) return static_cast<NodeId>(it - st);
  return kNoNode;
}

CpuPoint Builder::cpu_point(const Chain& c, TimeNs at) const {
  CpuPoint p;
  const TimeNs* st = g.obs_start.data();
  const auto next = static_cast<NodeId>(std::lower_bound(st + c.begin, st + c.end, at) - st);
  if (next > c.begin && g.obs_end[next - 1] > at) {
    p.prev = next - 1;
    p.inside = true;
    p.offset = at - g.obs_start[next - 1];
    return p;
  }
  if (next > c.begin) p.prev = next - 1;
  if (next < c.end) {
    p.next = next;
    p.offset = g.obs_start[next] - at;
  } else {
    p.offset = at - g.obs_end[p.prev];
  }
  return p;
}

void Builder::steps() {
  detail::RankedTrace rt{&t, {}, 0, 0};
  std::vector<Step> found;
  std::vector<detail::StepOrigin> origins;
  g.step_source = detail::find_steps(rt, AnalysisOptions{}, &found, &origins);
  // CPU steps that end with their launches, per (thread chain, device), in time order.
  std::vector<std::vector<std::uint32_t>> by_thread(g.chains.size() * std::max<std::size_t>(1, g.latencies.size()));
  auto device_index = [&](std::uint32_t device) {
    for (std::size_t i = 0; i < g.latencies.size(); ++i)
      if (g.latencies[i].device == device) return i;
    return std::size_t{0};
  };
  std::vector<TimeRange> cpu_range;  // per graph step: its CPU range
  std::size_t outside = 0;
  for (std::size_t i = 0; i < found.size(); ++i) {
    const Step& st = found[i];
    const detail::StepOrigin& from = origins[i];
    if (windowed() && (st.range.start < o.window.start || st.range.end > o.window.end)) {
      ++outside;  // not all of it in the window
      continue;
    }
    GraphStep gs;
    gs.index = st.index;
    gs.name = st.name;
    gs.device = st.device;
    gs.pattern = from.pattern;
    const std::uint32_t ci = from.track < track_chain.size() ? track_chain[from.track] : kNoTrack;
    if (ci == kNoTrack) {
      if (from.pattern) continue;
      // A range on a thread that made no calls: nothing moves it.
      gs.start.offset = from.range.start;
      gs.end.offset = from.range.end;
    } else if (from.pattern) {
      const Chain& c = g.chains[ci];
      gs.start_node = node_starting_at(c, from.range.start);
      if (gs.start_node == kNoNode) continue;
      if (!from.last) {
        gs.end_node = node_starting_at(c, from.range.end);
        if (gs.end_node == kNoNode) continue;
      }
    } else {
      gs.start = cpu_point(g.chains[ci], from.range.start);
      gs.end = cpu_point(g.chains[ci], from.range.end);
      if (from.own_launches)
        by_thread[ci * std::max<std::size_t>(1, g.latencies.size()) + device_index(st.device)].push_back(
            static_cast<std::uint32_t>(g.steps.size()));
    }
    cpu_range.push_back(from.range);
    g.steps.push_back(std::move(gs));
  }
  if (g.steps.size() + outside < found.size())
    g.add_stat("graph.steps_without_anchor", found.size() - outside - g.steps.size());
  // Each op belongs to the step whose range holds its launch call's start, on
  // that call's thread and for the op's device. Ops of a stream come in launch
  // order, so one cursor per thread finds them in one pass (counted, then placed).
  std::vector<std::uint32_t> count(g.steps.size() + 1, 0);
  auto place = [&](auto&& emit) {
    std::vector<std::size_t> cursor(g.chains.size());
    for (const Chain& c : g.chains) {
      if (!c.gpu) continue;
      std::fill(cursor.begin(), cursor.end(), 0);
      const std::size_t dev = device_index(c.device) + 0;
      for (NodeId n = c.begin; n < c.end; ++n) {
        const NodeId call = launch_of[n];
        if (call == kNoNode) continue;
        const std::uint32_t thread = g.chain_of(call);
        const auto& list = by_thread[thread * std::max<std::size_t>(1, g.latencies.size()) + dev];
        std::size_t& k = cursor[thread];
        const TimeNs at = g.obs_start[call];
        while (k < list.size() && cpu_range[list[k]].end <= at) ++k;
        if (k < list.size() && cpu_range[list[k]].start <= at) emit(list[k], n);
      }
    }
  };
  place([&](std::uint32_t step, NodeId) { ++count[step + 1]; });
  // The last pattern step ends with its kernels.
  for (std::size_t i = 0; i < g.steps.size(); ++i)
    if (g.steps[i].pattern && g.steps[i].end_node == kNoNode) {
      const Chain& c = g.chains[g.chain_of(g.steps[i].start_node)];
      for (NodeId n = g.steps[i].start_node; n < c.end && g.obs_start[n] < cpu_range[i].end; ++n)
        if (g.kind[n] == NodeKind::kernel && g.obs_end[n] <= cpu_range[i].end) ++count[i + 1];
    }
  for (std::size_t i = 1; i < count.size(); ++i) count[i] += count[i - 1];
  for (std::size_t i = 0; i < g.steps.size(); ++i) g.steps[i].ops_begin = g.steps[i].ops_end = count[i];
  fill_huge(g.step_ops, count.back(), kNoNode);
  place([&](std::uint32_t step, NodeId n) { g.step_ops[g.steps[step].ops_end++] = n; });
  for (std::size_t i = 0; i < g.steps.size(); ++i)
    if (g.steps[i].pattern && g.steps[i].end_node == kNoNode) {
      const Chain& c = g.chains[g.chain_of(g.steps[i].start_node)];
      for (NodeId n = g.steps[i].start_node; n < c.end && g.obs_start[n] < cpu_range[i].end; ++n)
        if (g.kind[n] == NodeKind::kernel && g.obs_end[n] <= cpu_range[i].end) g.step_ops[g.steps[i].ops_end++] = n;
    }
}

// Data-parallel training updates a weight only once its gradient is reduced:
// optimizer op j of a step's M waits for all-reduce bucket floor(j B / M) of
// the step's B (DDP's buckets, in order). The measured run shows this wait
// only where it held the op; where it did not, a change that makes it hold
// would go unseen without this edge.
void Builder::optimizer_buckets() {
  const std::vector<TimeRange> ranges = measured_steps(g);
  const auto comm = static_cast<std::uint8_t>(KernelCategory::communication);
  const auto opt = static_cast<std::uint8_t>(KernelCategory::optimizer);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    std::vector<NodeId> comms, opts;
    for_each_gpu_op_within(g, g.steps[i].device, ranges[i], [&](NodeId n) {
      if (g.kind[n] != NodeKind::kernel) return;
      if (g.category[n] == comm) comms.push_back(n);
      if (g.category[n] == opt) opts.push_back(n);
    });
    if (comms.empty() || opts.empty()) continue;
    auto by_start = [&](NodeId a, NodeId b) { return g.obs_start[a] < g.obs_start[b]; };
    std::sort(comms.begin(), comms.end(), by_start);
    std::sort(opts.begin(), opts.end(), by_start);
    for (std::size_t j = 0; j < opts.size(); ++j) bucket_of.push_back({opts[j], comms[j * comms.size() / opts.size()]});
  }
  std::sort(bucket_of.begin(), bucket_of.end());
}

}  // namespace

// [SECTION] Entry point -----------------------------------------------------------------------------

Graph build_graph(const Trace& trace, const GraphOptions& options) {
  Graph g;
  Builder b(trace, options, g);
  b.chains();
  b.launches();
  b.latencies();
  b.syncs();
  b.full_queue_waits();
  b.blocking_copies();
  b.collectives();
  b.input();
  b.steps();
  b.optimizer_buckets();
  b.edges();
  g.setup = detail::GraphSetup(trace).windows();
  return g;
}

}  // namespace gpuscope::graph
