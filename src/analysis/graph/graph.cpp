// Graph's small helpers: stats, chain lookup, what a node's time is, names.
#include <algorithm>

#include "analysis/graph/graph.h"

#include "analysis/analyze.h"

namespace gpuscope::graph {

const DeviceLatency* latency_of(const Graph& g, std::uint32_t device) {
  for (const DeviceLatency& l : g.latencies)
    if (l.device == device) return &l;
  return nullptr;
}

std::string_view to_string(PathKind k) {
  switch (k) {
    case PathKind::gpu_compute: return "gpu_compute";
    case PathKind::communication: return "communication";
    case PathKind::copy: return "copy";
    case PathKind::cpu_launch: return "cpu_launch";
    case PathKind::cpu_other: return "cpu_other";
    case PathKind::input_wait: return "input_wait";
    case PathKind::sync_wait: return "sync_wait";
    case PathKind::gpu_wait: return "gpu_wait";
    case PathKind::gpu_gap: return "gpu_gap";
    case PathKind::count_: break;
  }
  return "cpu_other";
}

std::string_view to_string(EdgeType t) {
  switch (t) {
    case EdgeType::launch: return "launch";
    case EdgeType::sync: return "sync";
    case EdgeType::blocking_copy: return "blocking_copy";
    case EdgeType::inferred: return "inferred";
    case EdgeType::collective: return "collective";
    case EdgeType::join: return "join";
    case EdgeType::gradient: return "gradient";
    case EdgeType::bucket: return "bucket";
    case EdgeType::count_: break;
  }
  return "launch";
}

std::uint32_t Graph::chain_of(NodeId n) const {
  auto it = std::upper_bound(chains.begin(), chains.end(), n, [](NodeId x, const Chain& c) { return x < c.begin; });
  return static_cast<std::uint32_t>(it - chains.begin()) - 1;
}

PathKind Graph::path_kind(NodeId n) const {
  switch (kind[n]) {
    case NodeKind::kernel:
      return category[n] == static_cast<std::uint8_t>(KernelCategory::communication) ? PathKind::communication
                                                                                     : PathKind::gpu_compute;
    case NodeKind::memcpy:
    case NodeKind::memset: return PathKind::copy;
    // A launch call of a millisecond or more did setup work (loading the
    // kernel's module, autotuning), not launching: other CPU time.
    case NodeKind::launch:
      return obs_end[n] - obs_start[n] >= kLaunchSetupNs ? PathKind::cpu_other : PathKind::cpu_launch;
    case NodeKind::sync: return PathKind::sync_wait;
    case NodeKind::call:
      return std::binary_search(input_calls.begin(), input_calls.end(), n) ? PathKind::input_wait : PathKind::cpu_other;
  }
  return PathKind::cpu_other;
}

TimeNs Graph::input_of(NodeId n) const {
  auto it = std::lower_bound(input.begin(), input.end(), std::pair<NodeId, TimeNs>{n, INT64_MIN});
  return it != input.end() && it->first == n ? it->second : 0;
}

std::size_t Graph::memory_bytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  return bytes(kind) + bytes(category) + bytes(row) + bytes(obs_start) + bytes(obs_end) + bytes(dur) + bytes(lat) +
         bytes(in_begin) + bytes(in) + bytes(chains) + bytes(groups) + bytes(group_members) + bytes(input) +
         bytes(input_calls) + bytes(steps) + bytes(step_ops) + bytes(setup);
}

bool Graph::in_setup(TimeNs at) const {
  auto after =
      std::upper_bound(setup.begin(), setup.end(), at, [](TimeNs x, const TimeRange& r) { return x < r.start; });
  return after != setup.begin() && at < std::prev(after)->end;
}

std::string node_name(const Trace& trace, const Graph& g, NodeId n) {
  const RowIndex r = g.row[n];
  switch (g.kind[n]) {
    case NodeKind::kernel:
      return r < trace.kernels().size() ? std::string(trace.str(trace.kernels().name[r])) : "kernel";
    case NodeKind::memcpy:
      return r < trace.memcpys().size() ? "Memcpy " + std::string(to_string(trace.memcpys().kind_at(r))) : "Memcpy";
    case NodeKind::memset: return "Memset";
    default: return r < trace.api_calls().size() ? std::string(trace.str(trace.api_calls().name[r])) : "call";
  }
}

}  // namespace gpuscope::graph
