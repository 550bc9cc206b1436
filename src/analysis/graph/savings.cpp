// simulate_findings(): the report's simulated savings, critical path and
// predicted step times.
//
// [SECTION] Bytes (a process's traces' outcomes, sent to process 0)
// [SECTION] Which steps to replay
// [SECTION] One trace: replay, path, each fix
// [SECTION] The parts: plan, share, combine
// [SECTION] Entry point
//
// Per trace of the job: the steps to replay (all, or a window of them in the
// middle with one step of margin each side, which warms the replay up), the
// graph of that window, its replay, and one replay per fix. A fix's saving
// over the trace is its saving over the replayed steps, scaled to all the
// trace's steps, as wall-clock time (summed over GPUs, divided by them:
// GPUs run in parallel); over a job, the mean of its traces'.
#include "analysis/graph/savings.h"

#include <algorithm>
#include <bit>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "analysis/detail/context.h"
#include "analysis/graph/changes.h"
#include "analysis/graph/critical_path.h"
#include "analysis/graph/graph.h"
#include "analysis/graph/replay.h"
#include "analysis/util/parallel.h"
#include "analysis/util/stats.h"
#include "trace/kernel_category.h"
#include "words/format.h"

namespace gpuscope::graph {

namespace {

// [SECTION] Bytes -----------------------------------------------------------------------------

// Little-endian fixed-width numbers and length-prefixed strings and lists;
// both ends are the same build (the processes of one job), so no version.
struct Out {
  std::string b;
  void u(std::uint64_t v) {
    for (int k = 0; k < 8; ++k) b.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
  }
  void i(std::int64_t v) { u(static_cast<std::uint64_t>(v)); }
  void d(double v) { u(std::bit_cast<std::uint64_t>(v)); }
  void s(std::string_view v) {
    u(v.size());
    b.append(v);
  }
};

struct In {
  std::string_view b;
  std::size_t at = 0;
  const char* what;
  In(std::string_view bytes, const char* what_) : b(bytes), what(what_) {}
  [[noreturn]] void fail(const std::string& why) const {
    throw SimulationCodecError(std::string(what) + ": " + why + " at byte " + std::to_string(at));
  }
  std::uint64_t u() {
    if (b.size() - at < 8) fail("cut short");
    std::uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(b[at + k])) << (8 * k);
    at += 8;
    return v;
  }
  std::int64_t i() { return static_cast<std::int64_t>(u()); }
  double d() { return std::bit_cast<double>(u()); }
  bool flag() {
    const std::uint64_t v = u();
    if (v > 1) fail("a flag of " + std::to_string(v));
    return v == 1;
  }
  // A count of items of at least `each` bytes that the rest of the bytes can hold.
  std::size_t count(std::size_t each) {
    const std::uint64_t n = u();
    if (n > (b.size() - at) / std::max<std::size_t>(each, 1)) fail("a count of " + std::to_string(n) + " too large");
    return static_cast<std::size_t>(n);
  }
  std::string s() {
    const std::size_t n = count(1);
    std::string v(b.substr(at, n));
    at += n;
    return v;
  }
  void end() const {
    if (at != b.size()) fail(std::to_string(b.size() - at) + " bytes left over");
  }
};

// [SECTION] Which steps to replay ------------------------------------------------------------

struct Plan {
  bool run = false;
  std::string why_not;
  TimeRange window;             // what to build the graph of (empty: the whole trace)
  TimeRange replayed;           // the steps that count lie inside (empty: all)
  std::size_t trace_steps = 0;  // steps of the whole trace, all GPUs
  std::size_t per_device = 0;   // steps of its first GPU
};

void write(Out& o, const Plan& p) {
  o.u(p.run);
  o.s(p.why_not);
  o.i(p.window.start), o.i(p.window.end), o.i(p.replayed.start), o.i(p.replayed.end);
  o.u(p.trace_steps), o.u(p.per_device);
}
void read(In& in, Plan& p) {
  p.run = in.flag();
  p.why_not = in.s();
  p.window.start = in.i(), p.window.end = in.i(), p.replayed.start = in.i(), p.replayed.end = in.i();
  p.trace_steps = in.u(), p.per_device = in.u();
}

std::size_t gpu_ops(const Trace& t) { return t.kernels().size() + t.memcpys().size() + t.memsets().size(); }

Plan plan_for(const Trace& t, const SimulationOptions& o) {
  Plan plan;
  detail::RankedTrace rt{&t, {}, 0, 0};
  std::vector<Step> steps;
  AnalysisOptions ao;
  ao.device = o.device;
  detail::find_steps(rt, ao, &steps);
  plan.trace_steps = steps.size();
  const std::size_t ops = gpu_ops(t);
  if (steps.empty()) {
    plan.run = ops <= o.max_ops;
    if (!plan.run) plan.why_not = "no steps, and too many GPU ops to replay the whole trace";
    return plan;
  }
  std::vector<TimeRange> first;  // the first GPU's steps, in time order
  for (const Step& s : steps)
    if (s.device == steps.front().device) first.push_back(s.range);
  plan.per_device = first.size();
  const std::size_t n = first.size();
  if (n > o.window_steps) {
    const std::size_t a = (n - o.window_steps) / 2, b = a + o.window_steps - 1;
    plan.window = {first[a > 0 ? a - 1 : 0].start, first[std::min(b + 1, n - 1)].end};
    plan.replayed = {first[a].start, first[b].end};
  }
  const double share = n > o.window_steps ? static_cast<double>(o.window_steps + 2) / static_cast<double>(n) : 1.0;
  plan.run = static_cast<double>(ops) * share <= static_cast<double>(o.max_ops);
  if (!plan.run) plan.why_not = "too many GPU ops per step to replay";
  return plan;
}

// [SECTION] One trace: replay, path, each fix ------------------------------------------------------

struct Fix {
  std::string spec;  // "--remove padding"
  std::vector<Change> changes;
  bool question = false;  // a "What would help?" answer's, no finding's: never in "together"
};

// A replay of a changed graph that had to break dependency cycles the base
// replay did not (an op waiting for one that waits for it): its timeline is
// not a prediction.
struct Predicted {
  bool applied = false;       // the changes matched something here
  std::uint64_t cycles = 0;   // cycles the change made
  double saving = 0;          // wall-clock saving over the trace
  std::vector<TimeNs> steps;  // the counted steps' predicted durations (or the span)
};

// What one trace contributes, and what predicting more of it needs.
struct TraceResult {
  bool ran = false;
  std::size_t steps = 0;         // replayed steps that count
  std::vector<TimeNs> replayed;  // their durations (or the span)
  TimelineError error;
  std::vector<Predicted> fixes;  // per fix
  // Every fix that saves time here, together (together_set[k]: fix k is in),
  // predicted while the trace is at hand: a job's traces are read one at a
  // time and freed, and the fixes that count for the job are known only once
  // all are done. When they are other ones, the trace is read again.
  std::vector<bool> together_set;
  Predicted together;
  // Per fix not in together_set: with together_set, so a fix that saves
  // nothing alone can be told to save once the others are made (empty
  // entries where together_set is empty or the fix is in it).
  std::vector<Predicted> after;
  Graph g;
  std::vector<std::size_t> counted;
  bool whole = false;
  double scale = 1;
  std::uint64_t base_cycles = 0;
};

void write(Out& o, const std::vector<TimeNs>& v) {
  o.u(v.size());
  for (TimeNs x : v) o.i(x);
}
void read(In& in, std::vector<TimeNs>& v) {
  v.resize(in.count(8));
  for (TimeNs& x : v) x = in.i();
}
void write(Out& o, const Predicted& p) {
  o.u(p.applied), o.u(p.cycles), o.d(p.saving);
  write(o, p.steps);
}
void read(In& in, Predicted& p) {
  p.applied = in.flag(), p.cycles = in.u(), p.saving = in.d();
  read(in, p.steps);
}
void write_after(Out& o, const std::vector<Predicted>& after) {
  o.u(after.size());
  for (const Predicted& p : after) write(o, p);
}
void read_after(In& in, std::vector<Predicted>& after) {
  after.resize(in.count(32));
  for (Predicted& p : after) read(in, p);
}
// What combining needs of a trace's result (not its graph, which stays with the process that built it).
void write(Out& o, const TraceResult& r) {
  o.u(r.ran), o.u(r.steps);
  write(o, r.replayed);
  o.d(r.error.step_median), o.d(r.error.step_worst), o.d(r.error.span);
  o.u(r.fixes.size());
  for (const Predicted& f : r.fixes) write(o, f);
  o.u(r.together_set.size());
  for (bool k : r.together_set) o.u(k);
  write(o, r.together);
  write_after(o, r.after);
}
void read(In& in, TraceResult& r) {
  r.ran = in.flag(), r.steps = in.u();
  read(in, r.replayed);
  r.error.step_median = in.d(), r.error.step_worst = in.d(), r.error.span = in.d();
  r.fixes.resize(in.count(32));
  for (Predicted& f : r.fixes) read(in, f);
  r.together_set.resize(in.count(8));
  for (std::size_t k = 0; k < r.together_set.size(); ++k) r.together_set[k] = in.flag();
  read(in, r.together);
  read_after(in, r.after);
}

// The critical path's totals of one trace (or, merged, of a job).
class PathTally {
 public:
  // `optimizer`: the trace's optimizer steps (measured times, in order, not
  // overlapping), where a host piece's node started.
  void add(const Trace& t, const Graph& g, const std::vector<PathSegment>& path,
           const std::vector<TimeRange>& optimizer = {}) {
    std::vector<NodeId> seen;
    for (const PathSegment& s : path) {
      const TimeNs d = s.end - s.start;
      acc_.length_ns += d;
      kind(acc_, s.kind) += d;
      if (!optimizer.empty() && s.node != kNoNode && !is_gpu(g.kind[s.node]) &&
          (s.kind == PathKind::cpu_launch || s.kind == PathKind::cpu_other) && inside(optimizer, g.obs_start[s.node]))
        acc_.optimizer_host_ns += d;
      if (s.node == kNoNode || !is_gpu(g.kind[s.node])) continue;
      if (s.kind != PathKind::gpu_compute && s.kind != PathKind::communication && s.kind != PathKind::copy) continue;
      const std::uint8_t cat = g.category[s.node] < kKernelCategoryCount
                                   ? g.category[s.node]
                                   : static_cast<std::uint8_t>(KernelCategory::other);
      by_category_[cat] += d;
      // One row per kernel name and category, as the kernel table splits them.
      const std::string name = node_name(t, g, s.node);
      auto [it, added] = ops_.try_emplace(key(name, cat));
      if (added) order_.push_back(it->first);
      PathOp& op = it->second;
      op.name = name;
      op.category = static_cast<KernelCategory>(cat);
      op.ns += d;
      if (std::find(seen.begin(), seen.end(), s.node) == seen.end()) ++op.count, seen.push_back(s.node);
    }
  }
  // Adds the totals of the path kinds only (what a job that stops early has summed).
  void add_kinds_to(CriticalPath* out) const {
    out->length_ns += acc_.length_ns;
    out->gpu_compute_ns += acc_.gpu_compute_ns;
    out->communication_ns += acc_.communication_ns;
    out->copy_ns += acc_.copy_ns;
    out->cpu_launch_ns += acc_.cpu_launch_ns;
    out->cpu_other_ns += acc_.cpu_other_ns;
    out->input_wait_ns += acc_.input_wait_ns;
    out->sync_wait_ns += acc_.sync_wait_ns;
    out->gpu_wait_ns += acc_.gpu_wait_ns;
    out->gpu_gap_ns += acc_.gpu_gap_ns;
    out->optimizer_host_ns += acc_.optimizer_host_ns;
  }
  // Another trace's tally after this one's.
  void merge(const PathTally& o) {
    CriticalPath sum = acc_;
    o.add_kinds_to(&sum);
    acc_ = sum;
    for (const auto& [cat, ns] : o.by_category_) by_category_[cat] += ns;
    for (const std::string& k : o.order_) {
      const PathOp& theirs = o.ops_.at(k);
      auto [it, added] = ops_.try_emplace(k);
      if (added) order_.push_back(k);
      it->second.name = theirs.name;
      it->second.category = theirs.category;
      it->second.ns += theirs.ns;
      it->second.count += theirs.count;
    }
  }
  void write(Out& o) const {
    for (TimeNs x : {acc_.length_ns, acc_.gpu_compute_ns, acc_.communication_ns, acc_.copy_ns, acc_.cpu_launch_ns,
                     acc_.cpu_other_ns, acc_.input_wait_ns, acc_.sync_wait_ns, acc_.gpu_wait_ns, acc_.gpu_gap_ns,
                     acc_.optimizer_host_ns})
      o.i(x);
    o.u(by_category_.size());
    for (const auto& [cat, ns] : by_category_) o.u(cat), o.i(ns);
    o.u(order_.size());
    for (const std::string& k : order_) {
      const PathOp& op = ops_.at(k);
      o.s(op.name), o.u(static_cast<std::uint8_t>(op.category)), o.i(op.ns), o.u(op.count);
    }
  }
  void read(In& in) {
    for (TimeNs* x : {&acc_.length_ns, &acc_.gpu_compute_ns, &acc_.communication_ns, &acc_.copy_ns, &acc_.cpu_launch_ns,
                      &acc_.cpu_other_ns, &acc_.input_wait_ns, &acc_.sync_wait_ns, &acc_.gpu_wait_ns, &acc_.gpu_gap_ns,
                      &acc_.optimizer_host_ns})
      *x = in.i();
    for (std::size_t k = in.count(16); k > 0; --k) {
      const std::uint64_t cat = in.u();
      if (cat >= static_cast<std::uint64_t>(kKernelCategoryCount))
        in.fail("a kernel category of " + std::to_string(cat));
      by_category_[static_cast<std::uint8_t>(cat)] = in.i();
    }
    for (std::size_t k = in.count(32); k > 0; --k) {
      std::string name = in.s();
      const std::uint64_t cat = in.u();
      if (cat >= static_cast<std::uint64_t>(kKernelCategoryCount))
        in.fail("a kernel category of " + std::to_string(cat));
      auto [it, added] = ops_.try_emplace(key(name, static_cast<std::uint8_t>(cat)));
      if (!added) in.fail("the op " + name + " twice");
      order_.push_back(it->first);
      it->second.name = std::move(name);
      it->second.category = static_cast<KernelCategory>(cat);
      it->second.ns = in.i();
      it->second.count = in.u();
    }
  }
  void finish(std::size_t top, CriticalPath* out) const {
    add_kinds_to(out);
    for (const auto& [cat, ns] : by_category_) out->categories.push_back({static_cast<KernelCategory>(cat), ns});
    std::sort(out->categories.begin(), out->categories.end(),
              [](const PathCategory& a, const PathCategory& b) { return a.ns > b.ns; });
    for (const auto& entry : ops_) out->ops.push_back(entry.second);
    std::sort(out->ops.begin(), out->ops.end(), [](const PathOp& a, const PathOp& b) {
      return a.ns != b.ns ? a.ns > b.ns : a.name != b.name ? a.name < b.name : a.category < b.category;
    });
    if (out->ops.size() > top) out->ops.resize(top);
  }

 private:
  static TimeNs& kind(CriticalPath& c, PathKind k) {
    switch (k) {
      case PathKind::gpu_compute: return c.gpu_compute_ns;
      case PathKind::communication: return c.communication_ns;
      case PathKind::copy: return c.copy_ns;
      case PathKind::cpu_launch: return c.cpu_launch_ns;
      case PathKind::input_wait: return c.input_wait_ns;
      case PathKind::sync_wait: return c.sync_wait_ns;
      case PathKind::gpu_wait: return c.gpu_wait_ns;
      case PathKind::gpu_gap: return c.gpu_gap_ns;
      default: return c.cpu_other_ns;
    }
  }
  static bool inside(const std::vector<TimeRange>& ranges, TimeNs at) {
    const auto it =
        std::upper_bound(ranges.begin(), ranges.end(), at, [](TimeNs x, const TimeRange& r) { return x < r.start; });
    return it != ranges.begin() && at < std::prev(it)->end;
  }
  CriticalPath acc_;
  std::map<std::uint8_t, TimeNs> by_category_;
  // An op row's key: its kernel name and category.
  static std::string key(const std::string& name, std::uint8_t category) {
    return name + '\0' + static_cast<char>(category);
  }
  std::unordered_map<std::string, PathOp> ops_;  // by key()
  std::vector<std::string> order_;               // keys in the order first seen
};

// The trace's optimizer steps (Optimizer.step#… ranges), merged, in time order.
std::vector<TimeRange> optimizer_steps(const Trace& t) {
  std::vector<TimeRange> out;
  const RangeTable& rg = t.ranges();
  std::vector<bool> optimizer(t.strings().size(), false);
  bool any = false;
  for (StringId id = 0; id < t.strings().size(); ++id)
    if (detail::is_optimizer_step(t.str(id))) optimizer[id] = any = true;
  if (!any) return out;
  for (RowIndex r = 0; r < rg.size(); ++r)
    if (rg.name[r] < optimizer.size() && optimizer[rg.name[r]]) out.push_back({rg.start[r], rg.end[r]});
  std::sort(out.begin(), out.end(), [](const TimeRange& a, const TimeRange& b) { return a.start < b.start; });
  std::size_t n = 0;
  for (const TimeRange& r : out) {
    if (n > 0 && r.start <= out[n - 1].end)
      out[n - 1].end = std::max(out[n - 1].end, r.end);
    else
      out[n++] = r;
  }
  out.resize(n);
  return out;
}

// The counted steps' durations on a timeline, and their sum.
std::vector<TimeNs> durations(const std::vector<TimeRange>& steps, const std::vector<std::size_t>& counted) {
  std::vector<TimeNs> out;
  for (std::size_t i : counted) out.push_back(steps[i].duration());
  return out;
}

TimeNs sum(const std::vector<TimeNs>& v) {
  TimeNs s = 0;
  for (TimeNs x : v) s += x;
  return s;
}

// Applies `changes` to the trace's graph and replays it.
Predicted predict(const Trace& t, const TraceResult& r, std::span<const Change> changes) {
  Predicted out;
  try {
    const Graph changed = apply_changes(r.g, t, changes, nullptr);
    ReplayInfo info;
    const Timeline p = replay(changed, &info);
    out.cycles = info.cycles_broken > r.base_cycles ? info.cycles_broken - r.base_cycles : 0;
    out.steps = r.whole ? std::vector<TimeNs>{span(p).duration()} : durations(step_ranges(changed, p), r.counted);
    out.saving = static_cast<double>(sum(r.replayed) - sum(out.steps)) * r.scale;
    out.applied = true;
  } catch (const ChangeError&) {
    out.applied = false;  // nothing to fix in the steps replayed here
  }
  return out;
}

// Whether a saving over the steps is at least kMaterialShare of their
// replayed time (both summed and scaled alike).
bool material_saving(double saving, double replayed) { return replayed > 0 && saving >= kMaterialShare * replayed; }

// The fixes of `set` applied together (none: nothing predicted).
Predicted predict_together(const Trace& t, const TraceResult& r, const std::vector<Fix>& fixes,
                           const std::vector<bool>& set) {
  std::vector<Change> all;
  for (std::size_t k = 0; k < fixes.size(); ++k)
    if (set[k]) all.insert(all.end(), fixes[k].changes.begin(), fixes[k].changes.end());
  if (all.empty()) return {};
  order_changes(all);
  return predict(t, r, all);
}

// Each fix outside r.together_set that applies here, with that set.
std::vector<Predicted> predict_after(const Trace& t, const TraceResult& r, const std::vector<Fix>& fixes) {
  std::vector<Predicted> out(fixes.size());
  if (std::none_of(r.together_set.begin(), r.together_set.end(), [](bool k) { return k; })) return out;
  for (std::size_t k = 0; k < fixes.size(); ++k) {
    if (r.together_set[k] || !r.fixes[k].applied) continue;
    std::vector<bool> set = r.together_set;
    set[k] = true;
    out[k] = predict_together(t, r, fixes, set);
  }
  return out;
}

TraceResult run_trace(const Trace& t, const Plan& plan, const std::vector<Fix>& fixes, std::uint32_t device,
                      PathTally& tally) {
  TraceResult r;
  GraphOptions go;
  go.window = plan.window;
  r.g = build_graph(t, go);
  const Graph& g = r.g;
  ReplayInfo info;
  const Timeline tl = replay(g, &info);
  r.base_cycles = info.cycles_broken;
  const std::vector<TimeRange> measured = measured_steps(g), replayed = step_ranges(g, tl);
  // The steps that count: inside the replayed range, so every one had a warm-up step before it.
  std::vector<std::uint32_t> devices;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const bool inside = plan.replayed.end <= plan.replayed.start ||
                        (measured[i].start >= plan.replayed.start && measured[i].end <= plan.replayed.end);
    if (!inside || (device != kNoDevice && g.steps[i].device != device)) continue;
    r.counted.push_back(i);
    if (std::find(devices.begin(), devices.end(), g.steps[i].device) == devices.end())
      devices.push_back(g.steps[i].device);
  }
  r.whole = plan.trace_steps == 0;
  if (!r.whole && r.counted.empty()) return r;
  r.ran = true;
  r.steps = r.counted.size();
  // Per-step savings become wall-clock time over the whole trace.
  r.scale = r.whole ? 1.0
                    : static_cast<double>(plan.trace_steps) / static_cast<double>(r.counted.size()) /
                          static_cast<double>(std::max<std::size_t>(1, devices.size()));
  std::vector<TimeRange> m, rp;
  for (std::size_t i : r.counted) m.push_back(measured[i]), rp.push_back(replayed[i]);
  r.error = compare(rp, m, span(tl), measured_span(g));
  if (r.whole) {
    r.error.step_median = r.error.step_worst = r.error.span;
    r.replayed = {span(tl).duration()};
    tally.add(t, g, trace_path(g, tl), optimizer_steps(t));
  } else {
    r.replayed = durations(replayed, r.counted);
    const std::vector<TimeRange> optimizer = optimizer_steps(t);
    for (const std::vector<PathSegment>& path : steps_paths(g, tl, replayed, r.counted))
      tally.add(t, g, path, optimizer);
  }
  for (const Fix& f : fixes) r.fixes.push_back(predict(t, r, f.changes));
  // Together: the fixes that make this trace's median step materially
  // shorter (the job's set is settled later; a trace whose set differs is
  // predicted again).
  r.together_set.assign(fixes.size(), false);
  const TimeNs step = lower_median(r.replayed);
  for (std::size_t k = 0; k < fixes.size(); ++k) {
    const Predicted& f = r.fixes[k];
    r.together_set[k] = !fixes[k].question && f.applied &&
                        material_saving(f.saving, static_cast<double>(sum(r.replayed)) * r.scale) && f.saving >= 1 &&
                        materially_shorter(step, lower_median(f.steps));
  }
  r.together = predict_together(t, r, fixes, r.together_set);
  r.after = predict_after(t, r, fixes);
  return r;
}

double speedup(TimeNs replayed, TimeNs predicted) {
  return predicted > 0 ? static_cast<double>(replayed) / static_cast<double>(predicted) : 0.0;
}

std::string scope_words(const std::vector<Plan>& plans, std::size_t replayed_steps) {
  if (plans.size() == 1) {
    const Plan& p = plans.front();
    if (p.trace_steps == 0) return "the whole trace (no steps)";
    if (p.window.end > p.window.start)
      return "the " + std::to_string(replayed_steps) + " steps in the middle of the trace (of " +
             format::count(p.trace_steps) + ")";
    return replayed_steps == 1 ? std::string("its one step") : "all " + std::to_string(replayed_steps) + " steps";
  }
  return std::to_string(replayed_steps) + " steps of " + std::to_string(plans.size()) + " traces";
}

// One fix over the job's traces.
struct FixOutcome {
  bool applied = false;  // in some trace
  std::uint64_t cycles = 0;
  double saving = 0;    // summed over the traces
  double replayed = 0;  // the replayed steps' time, summed and scaled as `saving` is
  TimeNs step = 0;      // median predicted step (a trace it changes nothing in keeps its steps)
  // Whether the saving over all the steps is material too, not only the
  // median step's: a replay can shorten most steps while the time moves into
  // one (an op held to its measured start waits the longer), and a median
  // then claims a gain the run does not get.
  bool material_overall() const { return material_saving(saving, replayed); }
};

// One prediction per trace (`pick`) over the job's traces: the steps of the
// traces it applies to, the replayed ones of the others.
template <class Pick>
FixOutcome gather(const std::vector<TraceResult>& results, Pick pick) {
  FixOutcome x;
  std::vector<TimeNs> predicted;
  for (const TraceResult& r : results) {
    if (!r.ran) continue;
    const Predicted& f = pick(r);
    const std::vector<TimeNs>& steps = f.applied ? f.steps : r.replayed;
    predicted.insert(predicted.end(), steps.begin(), steps.end());
    x.saving += f.applied ? f.saving : 0;
    x.replayed += static_cast<double>(sum(r.replayed)) * r.scale;
    x.cycles += f.applied ? f.cycles : 0;
    x.applied = x.applied || f.applied;
  }
  x.step = lower_median(std::move(predicted));
  return x;
}

// A saving summed over `traces` traces, per trace, in whole ns (0: none).
TimeNs per_trace_ns(double saving, double traces) {
  return traces > 0 && saving / traces >= 1 ? static_cast<TimeNs>(saving / traces) : 0;
}

FixOutcome outcome(const std::vector<TraceResult>& results, std::size_t k) {
  return gather(results, [k](const TraceResult& r) -> const Predicted& { return r.fixes[k]; });
}

// Rules whose time is host time the GPU waited for (launches, per-op
// overhead, an unfused weight update): their saving is that wait at most.
bool host_side_rule(std::string_view id) {
  return id == "launch-bound" || id == "op-launch-overhead" || id == "unfused-optimizer";
}

std::string cycle_words(const std::string& changes, std::uint64_t cycles) {
  return changes + " makes " + format::count(cycles) + (cycles == 1 ? " dependency cycle" : " dependency cycles") +
         " in the graph (an op would wait for one that waits for it), which the replay cannot order";
}

template <class Fn>
void set_findings(Profile* p, const std::string& fix, Fn&& fn) {
  for (std::vector<Finding>* list : {&p->findings, &p->minor_findings})
    for (Finding& f : *list)
      if (f.fix == fix) fn(f);
}

// The fixes of the job's `helps` that apply in trace r; false when r's own "together" was another set.
bool stale_set(const TraceResult& r, const std::vector<bool>& helps, std::vector<bool>* set) {
  if (!r.ran || std::none_of(helps.begin(), helps.end(), [](bool h) { return h; })) return false;
  set->assign(helps.size(), false);
  for (std::size_t k = 0; k < helps.size(); ++k) (*set)[k] = helps[k] && r.fixes[k].applied;
  return *set != r.together_set;
}

// Every fix that was simulated with a saving, together, in every trace it
// applies to (each trace's "together" predicted for that set already).
void together(const std::vector<TraceResult>& results, const std::vector<Fix>& fixes, const std::vector<bool>& helps,
              Simulation* s) {
  std::string text;
  for (std::size_t k = 0; k < fixes.size(); ++k)
    if (helps[k]) text += (text.empty() ? "" : " ") + fixes[k].spec;
  if (text.empty()) return;
  std::vector<bool> set;
  for (const TraceResult& r : results)
    if (stale_set(r, helps, &set)) throw std::logic_error("simulation: a trace's fixes together not predicted again");
  const FixOutcome x = gather(results, [](const TraceResult& r) -> const Predicted& { return r.together; });
  if (x.cycles > 0) {
    s->together_note = "not simulated: " + cycle_words(text, x.cycles);
    return;
  }
  const auto ran =
      static_cast<double>(std::count_if(results.begin(), results.end(), [](const TraceResult& r) { return r.ran; }));
  s->together = {text, x.step, speedup(s->replayed_step_ns, x.step), per_trace_ns(x.saving, ran)};
}

// A fix that saves nothing alone, replayed after the fixes that do: its
// prediction keeps the median step (Prediction::after_step_ns); where it
// then makes the median step at least 1 % shorter, its findings say so
// (the host stops deciding the step once the others are made).
void after_the_others(const std::vector<TraceResult>& results, const std::vector<Fix>& fixes,
                      const std::vector<bool>& helps, Profile* p) {
  Simulation& s = p->simulation;
  if (s.together.change.empty() || s.together.step_ns <= 0) return;
  for (std::size_t k = 0; k < fixes.size(); ++k) {
    if (helps[k]) continue;
    // Each trace with its fixes together, and this one where it applies there.
    const FixOutcome x = gather(results, [k](const TraceResult& r) -> const Predicted& {
      return k < r.after.size() && r.after[k].applied ? r.after[k] : r.together;
    });
    const bool applied = std::any_of(results.begin(), results.end(), [k](const TraceResult& r) {
      return r.ran && k < r.after.size() && r.after[k].applied;
    });
    if (!applied || x.cycles > 0) continue;
    for (Prediction& pr : s.predictions)
      if (pr.change == fixes[k].spec) pr.after_step_ns = x.step;
    if (static_cast<double>(x.step) > (1 - kMaterialShare) * static_cast<double>(s.together.step_ns)) continue;
    set_findings(p, fixes[k].spec, [&](Finding& f) {
      f.after_fixes = s.together.change;
      f.after_from_ns = s.together.step_ns;
      f.after_to_ns = x.step;
    });
  }
}

// Why a change would not replay the finding's fix in this profile; empty
// when it does. --overlap-allreduce moves gradient all-reduce buckets under
// the backward pass: communication that is mostly another collective (an
// all-to-all of the input, an all-gather of parameters) has other fixes, and
// a replay that moved it as gradient buckets would answer a different question.
std::string fix_misses(const Profile& p, std::string_view fix) {
  if (fix != "--overlap-allreduce") return {};
  // DDP's buckets already start when ready; the replay would have to assume
  // when the gradients of the one that holds most bytes are ready (earlier
  // than the trace shows): a figure the trace does not back.
  if (const std::optional<detail::DdpOneBucket> one = detail::ddp_one_bucket(p))
    return "--overlap-allreduce would have to assume when each bucket's gradients are ready, which the trace does "
           "not show (DDP already launches each bucket when it is ready, and its largest, " +
           format::percent1(one->share) + " of the bytes, ran with nothing computed beside it)";
  const CollectiveSummary& c = p.collective_summary;
  if (c.kinds.empty() || c.exposed_ns <= 0) return {};
  TimeNs all_reduce = 0;
  for (const CollectiveKind& k : c.kinds)
    if (k.kind == "all_reduce") all_reduce = k.exposed_ns;
  if (2 * all_reduce >= c.exposed_ns) return {};
  return "--overlap-allreduce replays gradient all-reduce buckets; all-reduce is " +
         format::percent(static_cast<double>(all_reduce) / static_cast<double>(c.exposed_ns)) +
         " of the exposed communication here, which is mostly " + c.kinds.front().kind;
}

}  // namespace

// A rule's fix narrowed to what the trace has: a `--scale CATEGORY=F` of a
// category with no kernel time would make the whole change fail ("matches no
// op"), and the clauses that do match would go unreplayed with it.
std::string present_fix(const Profile& p, std::string_view fix) {
  std::string out;
  std::size_t at = 0;
  while (at < fix.size()) {
    const std::size_t next = fix.find(" --", at + 1);
    const std::string_view clause = fix.substr(at, next == std::string_view::npos ? fix.npos : next - at);
    at = next == std::string_view::npos ? fix.size() : next + 1;
    static constexpr std::string_view kScale = "--scale ";
    if (clause.starts_with(kScale)) {
      const std::string_view what = clause.substr(kScale.size(), clause.find('=') - kScale.size());
      const bool has = std::any_of(p.categories.begin(), p.categories.end(), [&](const CategoryTime& c) {
        return c.time_ns > 0 && to_string(c.category) == what;
      });
      if (!has) continue;
    }
    out += (out.empty() ? "" : " ") + std::string(clause);
  }
  return out;
}

// [SECTION] The parts: plan, share, combine -------------------------------------------------------

SimulationPlan simulation_plan(std::size_t n, Profile* p, const SimulationOptions& o) {
  SimulationPlan plan;
  plan.options = o;
  if (p->devices.empty() || n == 0) return plan;
  plan.run = true;
  // Too little GPU work to diagnose (the Run line says why): its findings
  // stay without a saving, so none is simulated into one.
  if (p->workload.nothing_to_number()) return plan;
  // The distinct fixes of the findings, in the findings' order (the minor
  // ones too: a simulated saving may make one material).
  for (std::vector<Finding>* list : {&p->findings, &p->minor_findings})
    for (Finding& f : *list) {
      for (const FindingRule& rule : finding_rules())
        if (rule.id == f.id) f.fix = present_fix(*p, rule.fix);
      // An all-reduce too slow for its size: what it needs is a faster
      // transfer, which no replayed change makes (its saving note says so).
      if (f.id == "exposed-communication" && f.variant == "slow") f.fix.clear();
      if (f.fix.empty()) continue;
      if (std::string why = fix_misses(*p, f.fix); !why.empty()) {
        f.saving_note = "not simulated: " + why + (f.saving_note.empty() ? "" : "; " + f.saving_note);
        f.fix.clear();
        continue;
      }
      if (std::find(plan.fixes.begin(), plan.fixes.end(), f.fix) == plan.fixes.end()) plan.fixes.push_back(f.fix);
    }
  // The answers' own changes, where no finding's fix replays them.
  if (const std::string q = detail::precision_replay_change(*p);
      !q.empty() && std::find(plan.fixes.begin(), plan.fixes.end(), q) == plan.fixes.end())
    plan.fixes.push_back(q), ++plan.questions;
  return plan;
}

std::string encode_plan(const SimulationPlan& plan) {
  Out o;
  o.u(plan.run);
  o.u(plan.fixes.size());
  for (const std::string& f : plan.fixes) o.s(f);
  o.u(plan.questions);
  const SimulationOptions& x = plan.options;
  o.u(x.window_steps), o.u(x.max_ops), o.u(x.top_ops), o.u(x.device);
  return std::move(o.b);
}

SimulationPlan decode_plan(std::string_view bytes) {
  In in(bytes, "simulation plan");
  SimulationPlan plan;
  plan.run = in.flag();
  plan.fixes.resize(in.count(8));
  for (std::string& f : plan.fixes) f = in.s();
  plan.questions = in.u();
  if (plan.questions > plan.fixes.size()) in.fail(std::to_string(plan.questions) + " questions of fewer fixes");
  SimulationOptions& x = plan.options;
  x.window_steps = in.u(), x.max_ops = in.u(), x.top_ops = in.u();
  const std::uint64_t device = in.u();
  if (device > 0xffffffffu) in.fail("a device of " + std::to_string(device));
  x.device = static_cast<std::uint32_t>(device);
  in.end();
  return plan;
}

struct SimulationShare::Impl {
  SimulationOptions o;
  std::vector<Fix> fixes;
  std::vector<Plan> plans;
  std::vector<TraceResult> results;
  std::vector<PathTally> tallies;
  std::vector<std::exception_ptr> errors;  // per trace: why it could not be simulated
  // Per fix: simulated, and its median step at least kMaterialShare
  // shorter: part of "together" (a fix saving less is replayed after them).
  std::vector<bool> helps;
  std::size_t ran = 0;

  void rethrow_first() const {
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }
  std::string error_bytes(std::size_t i) const {
    try {
      std::rethrow_exception(errors[i]);
    } catch (const std::exception& e) {
      return std::string("E") + e.what();
    } catch (...) {
      return "Esimulation: an unknown error";
    }
  }
  // visit(i, on_trace), keeping what it throws as trace i's error.
  template <class OnTrace>
  void visit_keeping_error(std::size_t i, const TraceVisitor& visit, OnTrace&& on_trace) {
    try {
      visit(i, on_trace);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  }
  // 'R' and what `body` writes, or 'E' and trace i's error.
  template <class Body>
  std::string encoded(std::size_t i, Body&& body) const {
    if (errors[i]) return error_bytes(i);
    Out o;
    o.b = "R";
    body(o);
    return std::move(o.b);
  }
  // 'E' and why, or false and the rest to read.
  bool read_error(std::size_t i, std::string_view bytes) {
    if (bytes.starts_with("E")) {
      errors[i] = std::make_exception_ptr(std::runtime_error(std::string(bytes.substr(1))));
      return true;
    }
    if (!bytes.starts_with("R")) throw SimulationCodecError("simulation outcome: no outcome mark");
    return false;
  }
};

SimulationShare::SimulationShare(SimulationPlan plan, std::size_t n) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.o = plan.options;
  for (std::size_t k = 0; k < plan.fixes.size(); ++k)
    m.fixes.push_back({plan.fixes[k], parse_changes(plan.fixes[k]), k + plan.questions >= plan.fixes.size()});
  m.plans.resize(n);
  m.results.resize(n);
  m.tallies.resize(n);
  m.errors.resize(n);
}

SimulationShare::~SimulationShare() = default;

void SimulationShare::simulate(std::span<const std::size_t> mine, const TraceVisitor& visit, unsigned jobs) {
  Impl& m = *impl_;
  parallel_for(mine.size(), jobs, [&](std::size_t k) {
    const std::size_t i = mine[k];
    m.visit_keeping_error(i, visit, [&](const Trace& t) {
      m.plans[i] = plan_for(t, m.o);
      if (m.plans[i].run) m.results[i] = run_trace(t, m.plans[i], m.fixes, m.o.device, m.tallies[i]);
    });
  });
}

std::string SimulationShare::encode(std::size_t i) const {
  const Impl& m = *impl_;
  return m.encoded(i, [&](Out& o) {
    write(o, m.plans[i]);
    write(o, m.results[i]);
    m.tallies[i].write(o);
  });
}

void SimulationShare::decode(std::size_t i, std::string_view bytes) {
  Impl& m = *impl_;
  if (m.read_error(i, bytes)) return;
  In in(bytes.substr(1), "simulation outcome");
  Plan plan;
  TraceResult r;
  PathTally tally;
  read(in, plan);
  read(in, r);
  if (r.ran &&
      (r.fixes.size() != m.fixes.size() || r.together_set.size() != m.fixes.size() || r.after.size() != m.fixes.size()))
    in.fail("outcomes of " + std::to_string(r.fixes.size()) + " fixes, not " + std::to_string(m.fixes.size()));
  tally.read(in);
  in.end();
  m.plans[i] = std::move(plan), m.results[i] = std::move(r), m.tallies[i] = std::move(tally);
  m.errors[i] = nullptr;
}

namespace {

// What --overlap-allreduce moves is the all-reduce: its exposed time (per
// GPU) bounds what it can hide, not all communication's; -1 for another fix
// or a trace with no all-reduce site.
TimeNs moved_allreduce_exposed(const Profile& p, std::string_view spec) {
  if (spec != "--overlap-allreduce" || p.devices.empty()) return -1;
  for (const CollectiveKind& c : p.collective_summary.kinds)
    if (c.kind == "all_reduce") return c.exposed_ns / static_cast<TimeNs>(p.devices.size());
  return -1;
}

// A fix whose changed graph has dependency cycles: the program's own
// dependencies do not allow the change as the fix makes it, so what it saves
// is unknown, not its rule's estimate. The finding keeps the weight that
// estimate gave it (its share of the run), so it stays numbered where it was.
void unordered_fix(Profile* p, const std::string& spec, std::uint64_t cycles) {
  const TimeNs run = p->window.duration();
  set_findings(p, spec, [&](Finding& f) {
    if (run > 0) f.share = std::max(f.share, static_cast<double>(f.saving_ns) / static_cast<double>(run));
    f.saving_note = "not simulated: " + cycle_words(spec, cycles);
    f.saving_ns = 0;
  });
}

}  // namespace

namespace {
// A fix is credited at most with the time its rule charged: a host-side fix
// with the GPU idle its launches ended (the replay's step also gains where
// the freed host then hides input loading or syncs, which their own findings
// charge); hiding communication with its exposed time (a replay that gains
// more also moved work that waited on it). Within 1 % of it, the two figures
// read the same: the cap, unsaid.
void cap_at_charged(Finding& f, TimeNs charged, bool only_allreduce) {
  const bool host = host_side_rule(f.id), comm = f.id == "exposed-communication";
  if (!(host || comm) || charged <= 0 || f.saving_ns <= charged) return;
  if (double(f.saving_ns) <= (1 + kMaterialShare) * double(charged)) {
    f.saving_ns = charged;
    return;
  }
  f.saving_note = std::string("capped at ") +
                  (host             ? "the GPU idle its late launches ended ("
                   : only_allreduce ? "the all-reduce's exposed time ("
                                    : "the exposed communication time (") +
                  format::duration(charged) + "); the replay's " + format::duration(f.saving_ns) +
                  (host ? " also counts waits the host then hides, which other findings charge"
                        : " also counts work that waited on it, which overlapping does not remove by itself");
  f.replay_saving_ns = f.saving_ns;
  f.saving_ns = charged;
}
}  // namespace

bool SimulationShare::combine(Profile* p) {
  Impl& m = *impl_;
  m.rethrow_first();
  const std::vector<Plan>& plans = m.plans;
  const std::vector<TraceResult>& results = m.results;
  const std::vector<Fix>& fixes = m.fixes;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].run) continue;
    p->simulation.status = "not simulated: " + plans[i].why_not;
    for (std::size_t j = 0; j < i; ++j) m.tallies[j].add_kinds_to(&p->critical_path);
    return false;
  }
  PathTally tally;
  for (const PathTally& t : m.tallies) tally.merge(t);
  tally.finish(m.o.top_ops, &p->critical_path);
  Simulation& s = p->simulation;
  std::vector<TimeNs> replayed;
  std::size_t& ran = m.ran;
  for (const TraceResult& r : results) {
    if (!r.ran) continue;
    ++ran;
    replayed.insert(replayed.end(), r.replayed.begin(), r.replayed.end());
    s.steps += plans.front().trace_steps ? r.steps : 0;
    s.replay_error = std::max(s.replay_error, r.error.step_median);
    s.replay_error_worst = std::max(s.replay_error_worst, r.error.step_worst);
  }
  if (ran == 0) {
    s.status = "not simulated: no step lay wholly inside the replayed window";
    return false;
  }
  s.status = "simulated";
  s.scope = scope_words(plans, s.steps);
  p->critical_path.steps = s.steps;
  s.replayed_step_ns = lower_median(replayed);
  // Each fix alone, then the findings it belongs to.
  std::vector<bool>& helps = m.helps;
  helps.assign(fixes.size(), false);
  for (std::size_t k = 0; k < fixes.size(); ++k) {
    const FixOutcome x = outcome(results, k);
    if (!x.applied) continue;
    if (x.cycles > 0) {
      unordered_fix(p, fixes[k].spec, x.cycles);
      continue;
    }
    const double per_trace = x.saving / static_cast<double>(ran);
    s.predictions.push_back(
        {fixes[k].spec, x.step, speedup(s.replayed_step_ns, x.step), per_trace_ns(x.saving, static_cast<double>(ran))});
    // A fix saves time when the replay with it is shorter over the steps and
    // its median step is shorter too: a saving summed over the steps while
    // the typical step gets no faster is the replay's noise, not a gain.
    const bool median_faster = x.step < s.replayed_step_ns;
    const bool saves = per_trace >= 1 && median_faster;
    helps[k] = !fixes[k].question && saves && materially_shorter(s.replayed_step_ns, x.step) && x.material_overall();
    const TimeNs allreduce_exposed = moved_allreduce_exposed(*p, fixes[k].spec);
    set_findings(p, fixes[k].spec, [&](Finding& f) {
      TimeNs charged = f.saving_ns;  // the rule's own time, before the replay
      const bool only_allreduce =
          f.id == "exposed-communication" && allreduce_exposed >= 0 && allreduce_exposed < charged;
      if (only_allreduce) charged = allreduce_exposed;
      f.saving_source = SavingSource::simulated;
      f.predicted_step_ns = x.step;
      f.saving_ns = saves ? static_cast<TimeNs>(per_trace) : 0;
      if (saves) cap_at_charged(f, charged, only_allreduce);
      if (helps[k]) return;
      if (saves && materially_shorter(s.replayed_step_ns, x.step))
        f.saving_note = "the replay makes the median step " + format::duration(s.replayed_step_ns - x.step) +
                        " shorter, but all the steps together only " + format::duration(f.saving_ns) + ", under " +
                        format::percent(kMaterialShare) + " of their time: the rest moves into other steps";
      else if (saves)
        f.saving_note = "the replay makes the median step only " + format::duration(s.replayed_step_ns - x.step) +
                        " shorter, under " + format::percent(kMaterialShare);
      else if (per_trace <= -1)
        f.saving_note =
            "no saving: with the fix the replay takes " + format::duration(static_cast<TimeNs>(-per_trace)) + " longer";
      else if (per_trace >= 1)
        f.saving_note = "no saving: the replayed median step is " + format::duration(s.replayed_step_ns) + ", and " +
                        format::duration(x.step) + " with the fix: no shorter";
      else
        f.saving_note = "no saving: with the fix the replay takes as long";
    });
  }
  return true;
}

std::string SimulationShare::helps_bytes() const {
  const Impl& m = *impl_;
  bool any = false;
  for (std::size_t i = 0; i < m.results.size() && !any; ++i) any = stale(i);
  if (!any) return {};
  std::string b;
  for (bool h : m.helps) b.push_back(h ? '1' : '0');
  return b;
}

void SimulationShare::set_helps(std::string_view bytes) {
  Impl& m = *impl_;
  if (bytes.size() != m.fixes.size() || bytes.find_first_not_of("01") != std::string_view::npos)
    throw SimulationCodecError("simulation: the fixes that save time: " + std::to_string(bytes.size()) + " marks for " +
                               std::to_string(m.fixes.size()) + " fixes");
  m.helps.assign(m.fixes.size(), false);
  for (std::size_t k = 0; k < bytes.size(); ++k) m.helps[k] = bytes[k] == '1';
}

bool SimulationShare::stale(std::size_t i) const {
  std::vector<bool> set;
  return stale_set(impl_->results[i], impl_->helps, &set);
}

void SimulationShare::retogether(std::span<const std::size_t> mine, const TraceVisitor& visit, unsigned jobs) {
  Impl& m = *impl_;
  std::vector<std::size_t> todo;
  for (std::size_t i : mine)
    if (stale(i)) todo.push_back(i);
  parallel_for(todo.size(), jobs, [&](std::size_t k) {
    const std::size_t i = todo[k];
    TraceResult& r = m.results[i];
    std::vector<bool> set;
    stale_set(r, m.helps, &set);
    m.visit_keeping_error(i, visit, [&](const Trace& t) {
      r.together = predict_together(t, r, m.fixes, set);
      r.together_set = std::move(set);
      r.after = predict_after(t, r, m.fixes);
    });
  });
}

std::string SimulationShare::encode_together(std::size_t i) const {
  const Impl& m = *impl_;
  return m.encoded(i, [&](Out& o) {
    write(o, m.results[i].together);
    write_after(o, m.results[i].after);
  });
}

void SimulationShare::decode_together(std::size_t i, std::string_view bytes) {
  Impl& m = *impl_;
  if (m.read_error(i, bytes)) return;
  In in(bytes.substr(1), "simulation outcome, all fixes together");
  TraceResult& r = m.results[i];
  std::vector<bool> set;
  stale_set(r, m.helps, &set);
  Predicted x;
  std::vector<Predicted> after;
  read(in, x);
  read_after(in, after);
  in.end();
  if (after.size() != m.fixes.size())
    in.fail("outcomes after the others of " + std::to_string(after.size()) + " fixes, not " +
            std::to_string(m.fixes.size()));
  r.together = std::move(x);
  r.together_set = std::move(set);
  r.after = std::move(after);
}

void SimulationShare::finish(Profile* p) {
  Impl& m = *impl_;
  m.rethrow_first();
  together(m.results, m.fixes, m.helps, &p->simulation);
  after_the_others(m.results, m.fixes, m.helps, p);
  // Largest saving first, a simulated one first at equal savings; the
  // material ones numbered, and "What would help?" answered again.
  settle_findings(p);
}

// [SECTION] Entry point ------------------------------------------------------------------------

void simulate_findings(std::span<const JobInput> inputs, Profile* p, const SimulationOptions& o) {
  std::vector<const Trace*> traces;
  for (const JobInput& in : inputs)
    if (in.trace) traces.push_back(in.trace);
  simulate_findings_each(
      traces.size(), [&](std::size_t i, const std::function<void(const Trace&)>& f) { f(*traces[i]); }, p, o, 1);
}

void simulate_findings_each(std::size_t n, const TraceVisitor& visit, Profile* p, const SimulationOptions& o,
                            unsigned jobs) {
  SimulationPlan plan = simulation_plan(n, p, o);
  if (!plan.run) return;
  SimulationShare share(std::move(plan), n);
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  share.simulate(all, visit, jobs);
  if (!share.combine(p)) return;
  share.retogether(all, visit, jobs);
  share.finish(p);
}

Profile analyze_and_simulate(std::span<const JobInput> inputs, const AnalysisOptions& options, bool simulate) {
  Profile p = analyze_job(inputs, options);
  if (simulate) {
    SimulationOptions so;
    so.device = options.device;
    simulate_findings(inputs, &p, so);
  }
  return p;
}

}  // namespace gpuscope::graph
