// The changes, each one function over an Editor of the graph.
//
// [SECTION] Parsing
// [SECTION] Editor: edges added, ops moved to a side stream
// [SECTION] Selecting ops: by category or name, by step
// [SECTION] remove, scale
// [SECTION] Input, host syncs, CUDA graphs, balanced ranks
// [SECTION] Overlapped all-reduce and weight update
// [SECTION] Entry point
#include "analysis/graph/changes.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "analysis/analyze.h"
#include "analysis/graph/replay.h"
#include "trace/kernel_category.h"
#include "trace/name_pattern.h"

namespace gpuscope::graph {

namespace {

// [SECTION] Parsing ------------------------------------------------------------------------------

Change by_pattern_or_category(ChangeKind kind, std::string_view what, std::string_view flag, std::string_view arg) {
  Change c;
  c.kind = kind;
  if (what.size() >= 2 && what.front() == '/' && what.back() == '/') {
    c.by_category = false;
    c.pattern = std::string(what.substr(1, what.size() - 2));
    if (c.pattern.empty()) throw ChangeError(std::string(flag) + " " + std::string(arg) + ": empty expression");
    try {
      NamePattern check(c.pattern);
    } catch (const PatternError& e) {
      throw ChangeError(std::string(flag) + " " + std::string(arg) + ": not a regular expression: " + e.what());
    }
  } else if (!parse_category(what, &c.category)) {
    throw ChangeError(std::string(flag) + " " + std::string(arg) + ": unknown category '" + std::string(what) +
                      "' (valid: " + category_names() + ", or /REGEX/ over op names)");
  }
  c.text = std::string(flag) + " " + std::string(arg);
  return c;
}

// [SECTION] Editor: edges added, ops moved to a side stream ------------------------------------------

class Editor {
 public:
  explicit Editor(Graph& g) : g_(g) {}

  void add_edge(NodeId dst, Edge e) { added_.push_back({dst, e}); }
  // Moves the ops (each device's in the order given) onto a new stream of their device.
  void move_to_side_stream(NodeId n) { moved_.push_back(n); }
  void commit();

 private:
  struct Added {
    NodeId dst;
    Edge e;
  };
  Graph& g_;
  std::vector<Added> added_;
  std::vector<NodeId> moved_;
};

// Rebuilds the in-edge lists with the added edges and appends one chain per
// device for the moved ops; the ops' old places stay as transparent
// placeholders (no duration, no latency, no edges), so the rest of each
// stream keeps its order. Edges that named a moved op name its new place.
void Editor::commit() {
  if (added_.empty() && moved_.empty()) return;
  const auto n = static_cast<NodeId>(g_.size());
  std::vector<NodeId> remap;
  if (!moved_.empty()) {
    std::stable_sort(moved_.begin(), moved_.end(), [&](NodeId a, NodeId b) {
      const std::uint32_t da = g_.chains[g_.chain_of(a)].device, db = g_.chains[g_.chain_of(b)].device;
      return da != db ? da < db : g_.obs_start[a] < g_.obs_start[b];
    });
    moved_.erase(std::unique(moved_.begin(), moved_.end()), moved_.end());
    remap.resize(n);
    for (NodeId i = 0; i < n; ++i) remap[i] = i;
    for (std::size_t k = 0; k < moved_.size(); ++k) remap[moved_[k]] = n + static_cast<NodeId>(k);
  }
  auto to_new = [&](NodeId id) { return remap.empty() ? id : remap[id]; };
  for (Added& a : added_) {
    a.dst = to_new(a.dst);
    if (a.e.type != EdgeType::collective) a.e.src = to_new(a.e.src);
  }
  std::stable_sort(added_.begin(), added_.end(), [](const Added& a, const Added& b) { return a.dst < b.dst; });

  // The moved ops' copies, at the end.
  for (NodeId old : moved_) {
    g_.kind.push_back(g_.kind[old]);
    g_.category.push_back(g_.category[old]);
    g_.row.push_back(g_.row[old]);
    g_.obs_start.push_back(g_.obs_start[old]);
    g_.obs_end.push_back(g_.obs_end[old]);
    g_.dur.push_back(g_.dur[old]);
    TimeNs gap = 1'000;
    for (const DeviceLatency& l : g_.latencies)
      if (l.device == g_.chains[g_.chain_of(old)].device) gap = l.stream_gap_ns;
    g_.lat.push_back(gap);
  }
  const std::size_t total = g_.size();
  std::vector<std::uint32_t> begin(total + 1, 0);
  std::vector<Edge> in;
  in.reserve(g_.in.size() + added_.size());
  std::size_t a = 0;
  auto copy_edges = [&](NodeId from) {
    for (std::uint32_t i = g_.in_begin[from]; i < g_.in_begin[from + 1]; ++i) {
      Edge e = g_.in[i];
      if (e.type != EdgeType::collective) e.src = to_new(e.src);
      in.push_back(e);
    }
  };
  for (NodeId i = 0; i < total; ++i) {
    begin[i] = static_cast<std::uint32_t>(in.size());
    const bool copy = i >= n;
    const bool placeholder = !copy && !remap.empty() && remap[i] != i;
    if (copy)
      copy_edges(moved_[i - n]);
    else if (!placeholder)
      copy_edges(i);
    for (; a < added_.size() && added_[a].dst == i; ++a) in.push_back(added_[a].e);
  }
  begin[total] = static_cast<std::uint32_t>(in.size());
  g_.in = std::move(in);
  g_.in_begin = std::move(begin);
  if (!moved_.empty()) {
    for (std::size_t k = 0; k < moved_.size(); ++k) {
      const NodeId old = moved_[k];
      g_.dur[old] = 0;
      g_.lat[old] = 0;
      g_.category[old] = kNoCategory;
    }
    for (std::size_t k = 0; k < moved_.size();) {
      Chain c;
      c.begin = n + static_cast<NodeId>(k);
      c.gpu = true;
      c.track = kNoTrack;
      c.device = g_.chains[g_.chain_of(moved_[k])].device;
      c.pid = g_.chains[g_.chain_of(moved_[k])].pid;
      while (k < moved_.size() && g_.chains[g_.chain_of(moved_[k])].device == c.device) ++k;
      c.end = n + static_cast<NodeId>(k);
      g_.chains.push_back(c);
    }
    for (NodeId& m : g_.group_members) m = remap[m];
    for (NodeId& s : g_.step_ops) s = remap[s];
  }
  added_.clear();
  moved_.clear();
}

// [SECTION] Selecting ops: by category or name, by step ----------------------------------------------

class OpMatcher {
 public:
  OpMatcher(const Graph& g, const Trace& t, const Change& c) : g_(g), t_(t), c_(c) {
    if (!c.by_category) re_.emplace(c.pattern);
  }
  bool operator()(NodeId n) {
    if (!is_gpu(g_.kind[n]) || g_.category[n] == kNoCategory) return false;
    if (c_.by_category) return g_.category[n] == static_cast<std::uint8_t>(c_.category);
    if (g_.kind[n] != NodeKind::kernel) return re_->search(node_name(t_, g_, n));
    const StringId id = t_.kernels().name[g_.row[n]];
    if (id >= cache_.size()) cache_.resize(t_.strings().size(), 2);
    if (cache_[id] == 2) cache_[id] = re_->search(t_.str(id)) ? 1 : 0;
    return cache_[id] == 1;
  }

 private:
  const Graph& g_;
  const Trace& t_;
  const Change& c_;
  std::optional<NamePattern> re_;
  std::vector<std::uint8_t> cache_;  // per kernel-name StringId: 2 not decided
};

// The GPU ops of each step, by observed start: those of the step's device
// that start within the step as measured.
std::vector<std::vector<NodeId>> ops_by_step(const Graph& g) {
  const std::vector<TimeRange> ranges = measured_steps(g);
  std::vector<std::vector<NodeId>> out(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    for_each_gpu_op_within(g, g.steps[i].device, ranges[i], [&](NodeId n) {
      if (g.category[n] != kNoCategory) out[i].push_back(n);
    });
    std::sort(out[i].begin(), out[i].end(), [&](NodeId a, NodeId b) { return g.obs_start[a] < g.obs_start[b]; });
  }
  return out;
}

Edge* launch_edge(Graph& g, NodeId n) {
  for (std::uint32_t i = g.in_begin[n]; i < g.in_begin[n + 1]; ++i)
    if (g.in[i].type == EdgeType::launch) return &g.in[i];
  return nullptr;
}

void disable_waits(Graph& g, NodeId n) {
  for (std::uint32_t i = g.in_begin[n]; i < g.in_begin[n + 1]; ++i)
    if (g.in[i].type == EdgeType::inferred || g.in[i].type == EdgeType::bucket) g.in[i].flags |= kDisabled;
}

TimeNs typical_launch(const Graph& g, std::uint32_t device) {
  const DeviceLatency* l = latency_of(g, device);
  return l ? l->launch_ns : 5'000;
}

bool is_comm(const Graph& g, NodeId n) {
  return g.kind[n] == NodeKind::kernel && g.category[n] == static_cast<std::uint8_t>(KernelCategory::communication);
}

// [SECTION] remove, scale -----------------------------------------------------------------------

void remove_or_scale(Graph& g, const Trace& t, const Change& c, ChangeResult* r) {
  OpMatcher match(g, t, c);
  const bool remove = c.kind == ChangeKind::remove;
  std::vector<std::uint32_t> launched, removed;  // per launch call
  if (remove) launched.assign(g.size(), 0), removed.assign(g.size(), 0);
  for (NodeId n = 0; n < g.size(); ++n) {
    if (!is_gpu(g.kind[n])) continue;
    Edge* launch = launch_edge(g, n);
    if (remove && launch) ++launched[launch->src];
    if (!match(n)) continue;
    ++r->matched;
    r->matched_ns += g.obs_end[n] - g.obs_start[n];
    for (std::uint32_t i = g.in_begin[n]; i < g.in_begin[n + 1]; ++i) {
      Edge& e = g.in[i];
      if (e.type == EdgeType::collective) e.lat = remove ? 0 : std::llround(static_cast<double>(e.lat) * c.factor);
      if (remove && e.type == EdgeType::launch) e.lat = 0;
    }
    if (remove) {
      g.dur[n] = 0;
      g.lat[n] = 0;  // the gap before it was its own
      if (launch) ++removed[launch->src];
    } else {
      g.dur[n] = std::llround(static_cast<double>(g.dur[n]) * c.factor);
    }
  }
  // A call that launched only removed ops is not made any more.
  if (remove)
    for (NodeId n = 0; n < g.size(); ++n)
      if (launched[n] && launched[n] == removed[n]) g.dur[n] = 0;
  r->what = "ops";
}

// [SECTION] Input, host syncs, CUDA graphs, balanced ranks ------------------------------------------

void no_input_wait(Graph& g, const Trace& t, ChangeResult* r) {
  std::uint64_t gaps = 0, calls = 0, copies = 0;
  for (const auto& [n, ns] : g.input) {
    const TimeNs cut = std::min(ns, std::max<TimeNs>(0, g.lat[n]));
    g.lat[n] -= cut;
    r->matched_ns += cut;
    ++gaps;
  }
  for (NodeId n : g.input_calls) {
    r->matched_ns += g.dur[n];
    g.dur[n] = 0;
    ++calls;
  }
  // Compute that waited for a host-to-device copy on another stream gets its
  // input in time: the copy is taken to be prefetched.
  for (NodeId n = 0; n < g.size(); ++n) {
    if (!is_gpu(g.kind[n])) continue;
    for (std::uint32_t i = g.in_begin[n]; i < g.in_begin[n + 1]; ++i) {
      Edge& e = g.in[i];
      if (e.type != EdgeType::inferred || (e.flags & kDisabled) || g.kind[e.src] != NodeKind::memcpy) continue;
      if (t.memcpys().kind_at(g.row[e.src]) != CopyKind::htod) continue;
      e.flags |= kDisabled;
      ++copies;
    }
  }
  r->matched = gaps + calls + copies;
  r->what = "input waits";
  r->note = std::to_string(gaps) + " data-loading gaps on the CPU, " + std::to_string(calls) +
            " calls inside data loading, " + std::to_string(copies) + " ops waiting for an input copy";
}

bool inside_a_step(const std::vector<TimeRange>& steps, TimeNs at) {
  if (steps.empty()) return true;  // no steps: the whole trace is one
  auto it = std::upper_bound(steps.begin(), steps.end(), at, [](TimeNs x, const TimeRange& s) { return x < s.start; });
  for (int back = 0; it != steps.begin() && back < 64; ++back) {
    --it;
    if (at <= it->end) return true;
  }
  return false;
}

std::vector<TimeRange> sorted_steps(const Graph& g) {
  std::vector<TimeRange> v = measured_steps(g);
  std::sort(v.begin(), v.end(), [](const TimeRange& a, const TimeRange& b) { return a.start < b.start; });
  return v;
}

void no_host_sync(Graph& g, ChangeResult* r) {
  const std::vector<TimeRange> steps = sorted_steps(g);
  for (NodeId n = 0; n < g.size(); ++n) {
    if (g.kind[n] != NodeKind::sync || !inside_a_step(steps, g.obs_start[n]) || g.in_setup(g.obs_start[n])) continue;
    bool any = false;
    for (std::uint32_t i = g.in_begin[n]; i < g.in_begin[n + 1]; ++i)
      if (g.in[i].type == EdgeType::sync && !(g.in[i].flags & kDisabled)) g.in[i].flags |= kDisabled, any = true;
    if (!any) continue;
    ++r->matched;
    r->matched_ns += g.obs_end[n] - g.obs_start[n];
    g.dur[n] = std::min(g.dur[n], g.call_cost_ns);
  }
  r->what = "host synchronisations";
}

// The nodes of each CPU chain on a step's launch path: after the chain's
// first launch in the step up to its last (the launches' own calls aside,
// which launch_path_calls marks). Host time before a step's first launch
// (the loop's own code, a harness's synchronisation, profiler.step, Python
// before the first op) and after its last is outside any graph: a replayed
// graph starts at the first launch. Without steps the trace is one step.
std::vector<std::uint8_t> launch_path(const Graph& g, const std::vector<TimeRange>& steps) {
  std::vector<std::uint8_t> on(g.size(), 0);
  const std::vector<TimeRange> whole{{std::numeric_limits<TimeNs>::min(), std::numeric_limits<TimeNs>::max()}};
  const std::vector<TimeRange>& ranges = steps.empty() ? whole : steps;
  for (const Chain& c : g.chains) {
    if (c.gpu) continue;
    for (const TimeRange& s : ranges) {
      // The chain's nodes are in time order: those starting inside the step.
      const auto first = std::lower_bound(g.obs_start.begin() + c.begin, g.obs_start.begin() + c.end, s.start);
      const auto last = std::upper_bound(first, g.obs_start.begin() + c.end, s.end);
      NodeId a = kNoNode, z = kNoNode;
      for (auto it = first; it != last; ++it) {
        const auto n = static_cast<NodeId>(it - g.obs_start.begin());
        if (g.kind[n] != NodeKind::launch) continue;
        if (a == kNoNode) a = n;
        z = n;
      }
      if (a == kNoNode) continue;
      on[a] = 2;  // its own call only
      for (NodeId n = a + 1; n <= z; ++n) on[n] = 1;
    }
  }
  return on;
}

// Under a CUDA graph the step's launches replay from one call: each costs the
// CPU 1 µs, and the CPU time between them (framework code) is gone, except
// data loading and synchronisations, which stay outside the graph, and the
// host time before the step's first launch and after its last (launch_path).
// A launch call of a millisecond or more does one-off setup (loading the
// kernel's module, a first call's autotuning), which a graph does not remove
// from the trace's step: it keeps its time. So does CUDA graphs' own set-up
// (a capture up to the graph's first run), which happens once, graphs or not.
void cuda_graphs(Graph& g, ChangeResult* r) {
  constexpr TimeNs kLaunchNs = 1'000;
  const TimeNs setup = FindingThresholds{}.launch_setup_ns;
  const std::vector<TimeRange> steps = sorted_steps(g);
  const std::vector<std::uint8_t> on = launch_path(g, steps);
  for (const Chain& c : g.chains) {
    if (c.gpu) continue;
    for (NodeId n = c.begin; n < c.end; ++n) {
      if (!on[n] || g.kind[n] == NodeKind::sync || g.in_setup(g.obs_start[n])) continue;
      if (g.kind[n] == NodeKind::launch && g.obs_end[n] - g.obs_start[n] >= setup) continue;
      if (g.kind[n] == NodeKind::launch) {
        ++r->matched;
        r->matched_ns += g.obs_end[n] - g.obs_start[n];
      }
      if (on[n] == 1) {
        const TimeNs keep = g.input_of(n);
        r->matched_ns += std::max<TimeNs>(0, g.lat[n] - keep);
        g.lat[n] = std::min(g.lat[n], keep);
      }
      g.dur[n] = std::min(g.dur[n], kLaunchNs);
    }
  }
  for (const Chain& c : g.chains) {
    if (!c.gpu) continue;
    const TimeNs typ = typical_launch(g, c.device);
    for (NodeId n = c.begin; n < c.end; ++n)
      if (Edge* e = launch_edge(g, n)) e->lat = std::min(e->lat, typ);
  }
  r->what = "launches";
}

void balance_ranks(Graph& g, ChangeResult* r) {
  std::vector<std::pair<std::uint32_t, TimeNs>> compute;  // device, compute time
  for (const Chain& c : g.chains) {
    if (!c.gpu) continue;
    auto it = std::find_if(compute.begin(), compute.end(), [&](const auto& p) { return p.first == c.device; });
    if (it == compute.end()) it = compute.insert(compute.end(), {c.device, 0});
    for (NodeId n = c.begin; n < c.end; ++n)
      if (g.kind[n] == NodeKind::kernel && !is_comm(g, n) && g.category[n] != kNoCategory) it->second += g.dur[n];
  }
  std::erase_if(compute, [](const auto& p) { return p.second == 0; });
  if (compute.size() < 2) return;
  std::vector<TimeNs> values;
  for (const auto& p : compute) values.push_back(p.second);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2), values.end());
  const TimeNs median = values[(values.size() - 1) / 2];
  for (const auto& [device, total] : compute) {
    if (total == median) continue;
    const double f = static_cast<double>(median) / static_cast<double>(total);
    ++r->matched;
    r->matched_ns += std::llabs(total - median);
    for (const Chain& c : g.chains) {
      if (!c.gpu || c.device != device) continue;
      for (NodeId n = c.begin; n < c.end; ++n)
        if (g.kind[n] == NodeKind::kernel && !is_comm(g, n) && g.category[n] != kNoCategory)
          g.dur[n] = std::llround(static_cast<double>(g.dur[n]) * f);
    }
  }
  r->what = "devices";
  r->note = "compute moved to the median device's " + std::to_string(median) + " ns";
}

// [SECTION] Overlapped all-reduce and weight update ----------------------------------------------------

bool is_weight_gradient(std::string_view name) {
  std::string lower;
  for (char ch : name) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  for (std::string_view f : {"wgrad", "weight_grad", "weightgrad", "backward_weight", "grad_weight"})
    if (lower.find(f) != std::string::npos) return true;
  return false;
}

// Each step's all-reduce kernels, bucket b of B starting once the gradients
// it reduces exist: after weight-gradient kernel ceil((b+1) W / B) of the
// step's W (buckets fill from the last layer, as backward computes them);
// launched right after that kernel's launch. Communication that shares a
// stream with compute moves to a stream of its own.
void overlap_allreduce(Graph& g, const Trace& t, Editor& ed, ChangeResult* r) {
  const auto steps = ops_by_step(g);
  std::vector<std::uint8_t> grad(t.strings().size(), 2);
  std::uint64_t fallback = 0, wgrads = 0;
  std::vector<std::uint32_t> shared_devices;
  for (const Chain& c : g.chains) {
    if (!c.gpu) continue;
    bool comm = false, other = false;
    for (NodeId n = c.begin; n < c.end; ++n) (is_comm(g, n) ? comm : other) |= g.category[n] != kNoCategory;
    if (comm && other) shared_devices.push_back(c.device);
  }
  for (const auto& ops : steps) {
    std::vector<NodeId> comms, grads, compute;
    for (NodeId n : ops) {
      if (is_comm(g, n)) {
        comms.push_back(n);
        continue;
      }
      if (g.kind[n] != NodeKind::kernel) continue;
      if (comms.empty()) compute.push_back(n);
      const StringId id = t.kernels().name[g.row[n]];
      if (grad[id] == 2) grad[id] = is_weight_gradient(t.str(id)) ? 1 : 0;
      if (grad[id]) grads.push_back(n);
    }
    if (comms.empty()) continue;
    if (grads.empty()) {  // no names to go by: the last two thirds of the compute before the all-reduce
      grads.assign(compute.begin() + static_cast<std::ptrdiff_t>(compute.size() / 3), compute.end());
      ++fallback;
    }
    if (grads.empty()) continue;
    wgrads += grads.size();
    const std::size_t B = comms.size(), W = grads.size();
    for (std::size_t b = 0; b < B; ++b) {
      const NodeId w = grads[(b + 1) * W / B - ((b + 1) * W % B == 0 ? 1 : 0)];
      const NodeId c = comms[b];
      disable_waits(g, c);
      ed.add_edge(c, {w, EdgeType::gradient, 0, 0});
      Edge* cl = launch_edge(g, c);
      const Edge* wl = launch_edge(g, w);
      if (cl && wl) cl->src = wl->src, cl->lat = std::min(cl->lat, typical_launch(g, g.chains[g.chain_of(c)].device));
      if (std::find(shared_devices.begin(), shared_devices.end(), g.chains[g.chain_of(c)].device) !=
          shared_devices.end())
        ed.move_to_side_stream(c);
      ++r->matched;
      r->matched_ns += g.obs_end[c] - g.obs_start[c];
    }
  }
  r->what = "all-reduce kernels";
  r->note = fallback ? "no weight-gradient kernels by name in " + std::to_string(fallback) +
                           " steps: buckets follow the last two thirds of their compute"
                     : "buckets follow " + std::to_string(wgrads) + " weight-gradient kernels";
}

// Each step's optimizer kernels move to a side stream of their device; the
// j-th of M waits for all-reduce bucket floor(j B / M) of the step's B; the
// stream they left waits for them before its next op.
void overlap_update(Graph& g, Editor& ed, ChangeResult* r) {
  const auto steps = ops_by_step(g);
  std::vector<std::uint8_t> moved(g.size(), 0);
  for (const auto& ops : steps) {
    std::vector<NodeId> comms, opt;
    for (NodeId n : ops) {
      if (is_comm(g, n)) comms.push_back(n);
      if (g.kind[n] == NodeKind::kernel && g.category[n] == static_cast<std::uint8_t>(KernelCategory::optimizer))
        opt.push_back(n);
    }
    if (comms.empty() || opt.empty()) continue;
    for (std::size_t j = 0; j < opt.size(); ++j) {
      const NodeId o = opt[j];
      disable_waits(g, o);
      ed.add_edge(o, {comms[j * comms.size() / opt.size()], EdgeType::bucket, 0, 0});
      ed.move_to_side_stream(o);
      moved[o] = 1;
      ++r->matched;
      r->matched_ns += g.obs_end[o] - g.obs_start[o];
    }
  }
  // The join: the first op after each run of moved ops on a stream.
  for (const Chain& c : g.chains) {
    if (!c.gpu) continue;
    for (NodeId n = c.begin + 1; n < c.end; ++n)
      if (moved[n - 1] && !moved[n]) ed.add_edge(n, {n - 1, EdgeType::join, 0, 0});
  }
  r->what = "optimizer kernels";
}

}  // namespace

// [SECTION] Entry point --------------------------------------------------------------------------

std::string category_names() {
  std::string out;
  for (int i = 0; i < kKernelCategoryCount; ++i) {
    if (!out.empty()) out += ", ";
    out += to_string(static_cast<KernelCategory>(i));
  }
  return out;
}

Change parse_remove(std::string_view arg) { return by_pattern_or_category(ChangeKind::remove, arg, "--remove", arg); }

Change parse_scale(std::string_view arg) {
  const std::size_t eq = arg.rfind('=');
  if (eq == std::string_view::npos)
    throw ChangeError("--scale " + std::string(arg) + ": expected CATEGORY=F or /REGEX/=F");
  const std::string_view number = arg.substr(eq + 1);
  double f = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), f);
  if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(f) || f < 0 || f > 1000)
    throw ChangeError("--scale " + std::string(arg) + ": the factor must be a number in [0, 1000]");
  Change c = by_pattern_or_category(ChangeKind::scale, arg.substr(0, eq), "--scale", arg);
  c.factor = f;
  return c;
}

Change make_change(ChangeKind kind) {
  Change c;
  c.kind = kind;
  switch (kind) {
    case ChangeKind::overlap_allreduce: c.text = "--overlap-allreduce"; break;
    case ChangeKind::overlap_update: c.text = "--overlap-update"; break;
    case ChangeKind::no_input_wait: c.text = "--no-input-wait"; break;
    case ChangeKind::no_host_sync: c.text = "--no-host-sync"; break;
    case ChangeKind::cuda_graphs: c.text = "--cuda-graphs"; break;
    case ChangeKind::balance_ranks: c.text = "--balance-ranks"; break;
    default: break;
  }
  return c;
}

void order_changes(std::vector<Change>& changes) {
  constexpr ChangeKind order[] = {
      ChangeKind::remove,      ChangeKind::scale,         ChangeKind::no_input_wait,     ChangeKind::no_host_sync,
      ChangeKind::cuda_graphs, ChangeKind::balance_ranks, ChangeKind::overlap_allreduce, ChangeKind::overlap_update};
  const auto rank = [&](ChangeKind k) { return std::find(std::begin(order), std::end(order), k) - std::begin(order); };
  std::stable_sort(changes.begin(), changes.end(),
                   [&](const Change& a, const Change& b) { return rank(a.kind) < rank(b.kind); });
}

std::vector<Change> parse_changes(std::string_view spec) {
  std::vector<std::string_view> words;
  for (std::size_t at = 0; at < spec.size();) {
    const std::size_t end = std::min(spec.find(' ', at), spec.size());
    if (end > at) words.push_back(spec.substr(at, end - at));
    at = end + 1;
  }
  std::vector<Change> out;
  const std::pair<std::string_view, ChangeKind> flags[] = {{"--overlap-allreduce", ChangeKind::overlap_allreduce},
                                                           {"--overlap-update", ChangeKind::overlap_update},
                                                           {"--no-input-wait", ChangeKind::no_input_wait},
                                                           {"--no-host-sync", ChangeKind::no_host_sync},
                                                           {"--cuda-graphs", ChangeKind::cuda_graphs},
                                                           {"--balance-ranks", ChangeKind::balance_ranks}};
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view w = words[i];
    if ((w == "--remove" || w == "--scale") && i + 1 < words.size()) {
      out.push_back(w == "--remove" ? parse_remove(words[i + 1]) : parse_scale(words[i + 1]));
      ++i;
      continue;
    }
    bool known = false;
    for (const auto& [flag, kind] : flags)
      if (w == flag) out.push_back(make_change(kind)), known = true;
    if (!known) throw ChangeError(std::string(w) + ": not a change");
  }
  return out;
}

Graph apply_changes(const Graph& base, const Trace& trace, std::span<const Change> changes,
                    std::vector<ChangeResult>* results) {
  Graph g = base;
  for (const Change& c : changes) {
    ChangeResult r;
    r.text = c.text;
    Editor ed(g);
    switch (c.kind) {
      case ChangeKind::remove:
      case ChangeKind::scale: remove_or_scale(g, trace, c, &r); break;
      case ChangeKind::no_input_wait: no_input_wait(g, trace, &r); break;
      case ChangeKind::no_host_sync: no_host_sync(g, &r); break;
      case ChangeKind::cuda_graphs: cuda_graphs(g, &r); break;
      case ChangeKind::balance_ranks: balance_ranks(g, &r); break;
      case ChangeKind::overlap_allreduce: overlap_allreduce(g, trace, ed, &r); break;
      case ChangeKind::overlap_update: overlap_update(g, ed, &r); break;
    }
    ed.commit();
    if (r.matched == 0) {
      std::string why = "matches nothing in this trace";
      switch (c.kind) {
        case ChangeKind::remove:
        case ChangeKind::scale: why = "matches no op"; break;
        case ChangeKind::no_input_wait:
          why = "no input waits (no data-loading ranges on the CPU, no op waiting for a host-to-device copy)";
          break;
        case ChangeKind::no_host_sync: why = "no host synchronisation waits for the GPU inside a step"; break;
        case ChangeKind::cuda_graphs: why = "no launches"; break;
        case ChangeKind::balance_ranks: why = "needs at least two GPUs whose compute differs"; break;
        case ChangeKind::overlap_allreduce: why = "no all-reduce (communication kernels) inside the steps"; break;
        case ChangeKind::overlap_update: why = "needs optimizer kernels and an all-reduce in the same steps"; break;
      }
      throw ChangeError(c.text + ": " + why);
    }
    if (results) results->push_back(std::move(r));
  }
  return g;
}

}  // namespace gpuscope::graph
