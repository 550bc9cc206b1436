// Compares a captured trace of tests/capture/capture_workload.cu with what
// that program did: counts, two streams overlapping, correlation complete,
// names (demangled, mangled kept), NVTX nesting, graph node ids, syncs
// resolved to threads, no dropped records. Used by capture_verify on the GPU
// machine and, on CPU, by a test that feeds it synthetic CUPTI records.
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "capture/capture_workload.h"
#include "trace/trace.h"

namespace gpuscope::capture::workload {

struct Check {
  std::string name;
  bool ok = false;
  std::string detail;
};

enum class Expect {
  full,          // the whole program captured
  range_graph,   // --capture-range nvtx:graph: only the graph phase
  range_copies,  // --capture-range cuda-profiler-api: only the copies phase
};

inline bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

inline std::vector<Check> check_workload(const Trace& t, Expect expect, bool with_nccl) {
  std::vector<Check> out;
  auto check = [&](std::string name, bool ok, std::string detail) {
    out.push_back(Check{std::move(name), ok, std::move(detail)});
  };
  const KernelTable& k = t.kernels();
  const MemcpyTable& m = t.memcpys();

  // ---- counts by kind
  std::vector<RowIndex> spin, graph_nodes, nccl_like;
  for (RowIndex i = 0; i < k.size(); ++i) {
    const std::string_view name = t.str(k.name[i]);
    if (contains(name, "spin_kernel"))
      spin.push_back(i);
    else if (contains(name, "graph_node_kernel"))
      graph_nodes.push_back(i);
    else if (contains(name, "nccl") || contains(name, "Nccl") || contains(name, "oneRank"))
      nccl_like.push_back(i);
  }
  int pageable = 0, pinned_h2d = 0, pinned_d2h = 0;
  for (RowIndex i = 0; i < m.size(); ++i) {
    if (m.bytes[i] != kCopyBytes) continue;
    if (m.kind_at(i) == CopyKind::htod && m.src_kind_at(i) == MemoryKind::pageable) ++pageable;
    if (m.kind_at(i) == CopyKind::htod && m.src_kind_at(i) == MemoryKind::pinned) ++pinned_h2d;
    if (m.kind_at(i) == CopyKind::dtoh && m.dst_kind_at(i) == MemoryKind::pinned) ++pinned_d2h;
  }
  int big_memsets = 0;
  for (RowIndex i = 0; i < t.memsets().size(); ++i) big_memsets += t.memsets().bytes[i] == kCopyBytes;

  const bool full = expect == Expect::full;
  const bool copies_on = full || expect == Expect::range_copies;
  const bool graph_on = full || expect == Expect::range_graph;
  const std::size_t want_spin = full ? 2 * kSpinKernelsPerStream : 0;
  const std::size_t want_graph = graph_on ? std::size_t{kGraphNodes} * kGraphLaunches : 0;
  check("spin kernels", spin.size() == want_spin,
        std::to_string(spin.size()) + " seen, " + std::to_string(want_spin) + " launched");
  check("graph kernels", graph_nodes.size() == want_graph,
        std::to_string(graph_nodes.size()) + " seen, " + std::to_string(want_graph) + " launched");
  const int want_pageable = copies_on ? kPageableCopies : 0, want_pinned = copies_on ? kPinnedCopiesEachWay : 0;
  check("pageable copies", pageable == want_pageable,
        std::to_string(pageable) + " H2D from pageable memory, " + std::to_string(want_pageable) + " made");
  check("pinned copies", pinned_h2d == want_pinned && pinned_d2h == want_pinned,
        std::to_string(pinned_h2d) + " H2D + " + std::to_string(pinned_d2h) + " D2H through pinned memory, " +
            std::to_string(want_pinned) + " each made");
  check("memsets", big_memsets == (copies_on ? kMemsets : 0), std::to_string(big_memsets) + " seen");
  if (expect == Expect::range_copies)
    check("no kernels outside the range", k.size() == 0, std::to_string(k.size()) + " kernels");

  // ---- two streams running at once
  if (full) {
    TimeNs best = 0;
    for (RowIndex a : spin)
      for (RowIndex b : spin)
        if (k.track_at(a) != k.track_at(b))
          best = std::max(best, std::min(k.end[a], k.end[b]) - std::max(k.start[a], k.start[b]));
    std::set<TrackId> tracks;
    for (RowIndex a : spin) tracks.insert(k.track_at(a));
    check("two streams overlap", tracks.size() == 2 && best >= kSpinNs / 2,
          std::to_string(tracks.size()) + " streams, longest overlap " + std::to_string(best / 1000) + " us of " +
              std::to_string(kSpinNs / 1000) + " us kernels");
  }

  // ---- every GPU operation is linked to the call that launched it
  std::size_t unlinked = 0, ops = 0;
  auto count_unlinked = [&](OpTable table, std::size_t n) {
    for (RowIndex i = 0; i < n; ++i, ++ops) unlinked += t.launching_api(OpRef{table, i}) == kNoRow;
  };
  count_unlinked(OpTable::kernel, k.size());
  count_unlinked(OpTable::memcpy, m.size());
  count_unlinked(OpTable::memset, t.memsets().size());
  check("correlation complete", ops > 0 && unlinked == 0,
        std::to_string(unlinked) + " of " + std::to_string(ops) + " GPU operations without a launching API call");
  if (!graph_nodes.empty()) {
    const RowIndex api = t.launching_api(OpRef{OpTable::kernel, graph_nodes[0]});
    check("graph kernels come from cudaGraphLaunch",
          api != kNoRow && contains(t.str(t.api_calls().name[api]), "GraphLaunch"),
          api == kNoRow ? "no launching call" : std::string(t.str(t.api_calls().name[api])));
  }

  // ---- names: demangled for display, mangled kept
  if (!spin.empty()) {
    const RowIndex i = spin[0];
    const std::string_view shown = t.str(k.name[i]), mangled = t.str(k.mangled_at(i));
    check("kernel names", contains(shown, "spin_kernel(long long)") && mangled.substr(0, 2) == "_Z",
          "shown '" + std::string(shown) + "', mangled '" + std::string(mangled) + "'");
  }

  // ---- CUDA graph ids
  if (!graph_nodes.empty()) {
    std::set<std::uint64_t> nodes;
    std::set<std::uint32_t> graphs;
    for (RowIndex i : graph_nodes) {
      nodes.insert(k.graph_node_id_at(i));
      graphs.insert(k.graph_id_at(i));
    }
    check("graph node ids", !graphs.count(0) && !nodes.count(0) && nodes.size() == std::size_t{kGraphNodes},
          std::to_string(graphs.size()) + " graph id(s), " + std::to_string(nodes.size()) + " distinct node ids");
  }

  // ---- NVTX: the phases nest inside "workload"
  auto find_range = [&](std::string_view name) -> RowIndex {
    for (RowIndex i = 0; i < t.ranges().size(); ++i)
      if (t.str(t.ranges().name[i]) == name) return i;
    return kNoRow;
  };
  if (full) {
    const RowIndex outer = find_range(kOuterRange);
    std::string missing;
    bool nested = outer != kNoRow && t.ranges().depth[outer] == 0;
    for (const char* phase : kPhaseRanges) {
      if (!with_nccl && std::string_view(phase) == "nccl") continue;
      const RowIndex r = find_range(phase);
      if (r == kNoRow) {
        missing += std::string(missing.empty() ? "" : ", ") + phase;
        continue;
      }
      nested = nested && t.ranges().depth[r] == 1 && t.ranges().start[r] >= t.ranges().start[outer] &&
               t.ranges().end[r] <= t.ranges().end[outer];
    }
    check("NVTX ranges nest", missing.empty() && nested,
          missing.empty() ? (nested ? "workload > overlap, copies, graph, nccl" : "depths or bounds wrong")
                          : "missing: " + missing);
  }

  // ---- NCCL: GPU work inside the "nccl" range
  if (full && with_nccl) {
    const RowIndex r = find_range("nccl");
    std::size_t inside = 0;
    std::set<std::string> names;
    if (r != kNoRow) {
      const TimeNs a = t.ranges().start[r], b = t.ranges().end[r];
      for (RowIndex i = 0; i < k.size(); ++i)
        if (k.start[i] >= a && k.end[i] <= b) {
          ++inside;
          names.insert(std::string(t.str(k.name[i])).substr(0, 60));
        }
      for (RowIndex i = 0; i < m.size(); ++i) inside += m.start[i] >= a && m.end[i] <= b;
    }
    std::string seen;
    for (const auto& n : names) seen += (seen.empty() ? "" : "; ") + n;
    check("NCCL all-reduce work", inside >= std::size_t{kAllReduces},
          std::to_string(inside) + " GPU ops inside the nccl range (kernels: " + (seen.empty() ? "none" : seen) + ")");
  }

  // ---- syncs know their thread
  if (full) {
    std::size_t stream_syncs = 0, unresolved = 0;
    for (RowIndex i = 0; i < t.syncs().size(); ++i) {
      stream_syncs += t.syncs().type_at(i) == SyncType::stream;
      const Track& tr = t.tracks()[t.syncs().track_at(i)];
      unresolved += tr.kind != TrackKind::cpu || tr.tid == 0;
    }
    // overlap waits on both streams, copies and graph on one each.
    check("synchronization", stream_syncs >= 4 && unresolved == 0,
          std::to_string(t.syncs().size()) + " syncs (" + std::to_string(stream_syncs) + " stream syncs), " +
              std::to_string(unresolved) + " without a thread");
  }

  // ---- devices and losses
  bool device_ok = !t.devices().empty();
  for (const Device& d : t.devices()) device_ok = device_ok && !d.name.empty() && d.sm_count > 0;
  check("device described", device_ok,
        t.devices().empty() ? "no device record"
                            : t.devices()[0].name + ", " + std::to_string(t.devices()[0].sm_count) + " SMs");
  check("no dropped records", t.meta().stat(stat_key::kDroppedRecords) == 0,
        std::to_string(t.meta().stat(stat_key::kDroppedRecords)) + " dropped");
  check("no invalid timestamps", t.meta().stat(stat_key::kInvalidTimestamps) == 0,
        std::to_string(t.meta().stat(stat_key::kInvalidTimestamps)) + " invalid");
  return out;
}

}  // namespace gpuscope::capture::workload
