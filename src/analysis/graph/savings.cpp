// simulate_findings(): the report's simulated savings, critical path and
// predicted step times.
//
// [SECTION] Which steps to replay
// [SECTION] One trace: replay, path, each fix
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
#include <map>
#include <string>
#include <unordered_map>

#include "analysis/detail/context.h"
#include "analysis/format.h"
#include "analysis/graph/changes.h"
#include "analysis/graph/critical_path.h"
#include "analysis/graph/graph.h"
#include "analysis/graph/replay.h"
#include "trace/kernel_category.h"

namespace gpuscope::graph {

namespace {

// [SECTION] Which steps to replay ------------------------------------------------------------

struct Plan {
  bool run = false;
  std::string why_not;
  TimeRange window;             // what to build the graph of (empty: the whole trace)
  TimeRange replayed;           // the steps that count lie inside (empty: all)
  std::size_t trace_steps = 0;  // steps of the whole trace, all GPUs
  std::size_t per_device = 0;   // steps of its first GPU
};

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
};

// What one trace contributes.
struct TraceResult {
  bool ran = false;
  std::size_t steps = 0;         // replayed steps that count
  std::vector<TimeNs> replayed;  // their durations (or the span)
  TimelineError error;
  std::vector<bool> applied;                   // per fix: it matched something here
  std::vector<double> saving;                  // per fix: wall-clock saving over the trace
  std::vector<std::vector<TimeNs>> predicted;  // per fix: the counted steps' predicted durations
  bool together_applied = false;
  double together_saving = 0;
  std::vector<TimeNs> together;
};

class PathTally {
 public:
  explicit PathTally(CriticalPath* out) : out_(out) {}
  void add(const Trace& t, const Graph& g, const std::vector<PathSegment>& path) {
    std::vector<NodeId> seen;
    for (const PathSegment& s : path) {
      const TimeNs d = s.end - s.start;
      out_->length_ns += d;
      kind(s.kind) += d;
      if (s.node == kNoNode || !is_gpu(g.kind[s.node])) continue;
      if (s.kind != PathKind::gpu_compute && s.kind != PathKind::communication && s.kind != PathKind::copy) continue;
      const std::uint8_t cat = g.category[s.node] < kKernelCategoryCount
                                   ? g.category[s.node]
                                   : static_cast<std::uint8_t>(KernelCategory::other);
      by_category_[cat] += d;
      PathOp& op = ops_[node_name(t, g, s.node)];
      op.category = static_cast<KernelCategory>(cat);
      op.ns += d;
      if (std::find(seen.begin(), seen.end(), s.node) == seen.end()) ++op.count, seen.push_back(s.node);
    }
  }
  void finish(std::size_t top) {
    for (const auto& [cat, ns] : by_category_) out_->categories.push_back({static_cast<KernelCategory>(cat), ns});
    std::sort(out_->categories.begin(), out_->categories.end(),
              [](const PathCategory& a, const PathCategory& b) { return a.ns > b.ns; });
    for (auto& [name, op] : ops_) {
      op.name = name;
      out_->ops.push_back(op);
    }
    std::sort(out_->ops.begin(), out_->ops.end(),
              [](const PathOp& a, const PathOp& b) { return a.ns != b.ns ? a.ns > b.ns : a.name < b.name; });
    if (out_->ops.size() > top) out_->ops.resize(top);
  }

 private:
  TimeNs& kind(PathKind k) {
    switch (k) {
      case PathKind::gpu_compute:
        return out_->gpu_compute_ns;
      case PathKind::communication:
        return out_->communication_ns;
      case PathKind::copy:
        return out_->copy_ns;
      case PathKind::cpu_launch:
        return out_->cpu_launch_ns;
      case PathKind::input_wait:
        return out_->input_wait_ns;
      case PathKind::sync_wait:
        return out_->sync_wait_ns;
      default:
        return out_->cpu_other_ns;
    }
  }
  CriticalPath* out_;
  std::map<std::uint8_t, TimeNs> by_category_;
  std::unordered_map<std::string, PathOp> ops_;
};

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

TraceResult run_trace(const Trace& t, const Plan& plan, const std::vector<Fix>& fixes, std::uint32_t device,
                      PathTally& tally) {
  TraceResult r;
  GraphOptions go;
  go.window = plan.window;
  const Graph g = build_graph(t, go);
  const Timeline tl = replay(g);
  const std::vector<TimeRange> measured = measured_steps(g), replayed = step_ranges(g, tl);
  // The steps that count: inside the replayed range, so every one had a warm-up step before it.
  std::vector<std::size_t> counted;
  std::vector<std::uint32_t> devices;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const bool inside = plan.replayed.end <= plan.replayed.start ||
                        (measured[i].start >= plan.replayed.start && measured[i].end <= plan.replayed.end);
    if (!inside || (device != kNoDevice && g.steps[i].device != device)) continue;
    counted.push_back(i);
    if (std::find(devices.begin(), devices.end(), g.steps[i].device) == devices.end())
      devices.push_back(g.steps[i].device);
  }
  const bool whole = plan.trace_steps == 0;
  if (!whole && counted.empty()) return r;
  r.ran = true;
  r.steps = counted.size();
  // Per-step savings become wall-clock time over the whole trace.
  const double scale = whole ? 1.0
                             : static_cast<double>(plan.trace_steps) / static_cast<double>(counted.size()) /
                                   static_cast<double>(std::max<std::size_t>(1, devices.size()));
  std::vector<TimeRange> m, rp;
  for (std::size_t i : counted) m.push_back(measured[i]), rp.push_back(replayed[i]);
  r.error = compare(rp, m, span(tl), measured_span(g));
  if (whole) {
    r.error.step_median = r.error.step_worst = r.error.span;
    r.replayed = {span(tl).duration()};
    tally.add(t, g, trace_path(g, tl));
  } else {
    r.replayed = durations(replayed, counted);
    for (std::size_t i : counted) tally.add(t, g, step_path(g, tl, replayed, i));
  }
  const TimeNs base = sum(r.replayed);
  auto predict = [&](std::span<const Change> changes, bool* applied, double* saving, std::vector<TimeNs>* out) {
    try {
      const Graph changed = apply_changes(g, t, changes, nullptr);
      const Timeline p = replay(changed);
      *out = whole ? std::vector<TimeNs>{span(p).duration()} : durations(step_ranges(changed, p), counted);
      *saving = static_cast<double>(base - sum(*out)) * scale;
      *applied = true;
    } catch (const ChangeError&) {
      *applied = false;  // nothing to fix in the steps replayed here
    }
  };
  r.applied.assign(fixes.size(), false);
  r.saving.assign(fixes.size(), 0);
  r.predicted.resize(fixes.size());
  std::vector<Change> all;
  for (std::size_t k = 0; k < fixes.size(); ++k) {
    bool applied = false;
    predict(fixes[k].changes, &applied, &r.saving[k], &r.predicted[k]);
    r.applied[k] = applied;
    if (applied) all.insert(all.end(), fixes[k].changes.begin(), fixes[k].changes.end());
  }
  if (!all.empty()) {
    // The changes in their fixed order (as gpuscope whatif applies them).
    std::stable_sort(all.begin(), all.end(), [](const Change& a, const Change& b) {
      auto rank = [](ChangeKind k) {
        constexpr ChangeKind order[] = {ChangeKind::remove,
                                        ChangeKind::scale,
                                        ChangeKind::no_input_wait,
                                        ChangeKind::no_host_sync,
                                        ChangeKind::cuda_graphs,
                                        ChangeKind::balance_ranks,
                                        ChangeKind::overlap_allreduce,
                                        ChangeKind::overlap_update};
        return std::find(std::begin(order), std::end(order), k) - std::begin(order);
      };
      return rank(a.kind) < rank(b.kind);
    });
    predict(all, &r.together_applied, &r.together_saving, &r.together);
  }
  return r;
}

TimeNs median(std::vector<TimeNs> v) {
  if (v.empty()) return 0;
  const std::size_t k = (v.size() - 1) / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
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
    return "all " + std::to_string(replayed_steps) + " steps";
  }
  return std::to_string(replayed_steps) + " steps of " + std::to_string(plans.size()) + " traces";
}

}  // namespace

// [SECTION] Entry point ------------------------------------------------------------------------

void simulate_findings(std::span<const JobInput> inputs, Profile* p, const SimulationOptions& o) {
  if (p->devices.empty() || inputs.empty()) return;
  // The distinct fixes of the findings, in the findings' order.
  std::vector<Fix> fixes;
  for (Finding& f : p->findings) {
    for (const FindingRule& rule : finding_rules())
      if (rule.id == f.id) f.fix = std::string(rule.fix);
    if (f.fix.empty()) continue;
    if (std::none_of(fixes.begin(), fixes.end(), [&](const Fix& x) { return x.spec == f.fix; }))
      fixes.push_back({f.fix, parse_changes(f.fix)});
  }
  std::vector<Plan> plans;
  std::vector<TraceResult> results;
  PathTally tally(&p->critical_path);
  for (const JobInput& in : inputs) {
    if (!in.trace) continue;
    Plan plan = plan_for(*in.trace, o);
    if (!plan.run) {
      p->simulation.status = "not simulated: " + plan.why_not;
      return;
    }
    results.push_back(run_trace(*in.trace, plan, fixes, o.device, tally));
    plans.push_back(plan);
  }
  tally.finish(o.top_ops);
  Simulation& s = p->simulation;
  std::vector<TimeNs> replayed;
  std::size_t ran = 0;
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
    return;
  }
  s.status = "simulated";
  s.scope = scope_words(plans, s.steps);
  p->critical_path.steps = s.steps;
  s.replayed_step_ns = median(replayed);
  // Each fix alone, then the findings it belongs to.
  for (std::size_t k = 0; k < fixes.size(); ++k) {
    std::vector<TimeNs> predicted;
    double saving = 0;
    bool any = false;
    for (const TraceResult& r : results) {
      if (!r.ran) continue;
      // A trace the fix finds nothing to change in keeps its steps.
      const std::vector<TimeNs>& steps = r.applied[k] ? r.predicted[k] : r.replayed;
      predicted.insert(predicted.end(), steps.begin(), steps.end());
      saving += r.applied[k] ? r.saving[k] : 0;
      any = any || r.applied[k];
    }
    if (!any) continue;
    const TimeNs step = median(predicted);
    s.predictions.push_back({fixes[k].spec, step, speedup(s.replayed_step_ns, step)});
    for (Finding& f : p->findings) {
      if (f.fix != fixes[k].spec) continue;
      f.saving_ns = std::max<TimeNs>(0, static_cast<TimeNs>(saving / static_cast<double>(ran)));
      f.saving_source = SavingSource::simulated;
      f.predicted_step_ns = step;
    }
  }
  std::vector<TimeNs> together;
  std::string changes;
  for (const TraceResult& r : results) {
    if (!r.ran) continue;
    const std::vector<TimeNs>& steps = r.together_applied ? r.together : r.replayed;
    together.insert(together.end(), steps.begin(), steps.end());
  }
  for (const Prediction& pr : s.predictions) changes += (changes.empty() ? "" : " ") + pr.change;
  if (!changes.empty()) s.together = {changes, median(together), speedup(s.replayed_step_ns, median(together))};
  std::stable_sort(p->findings.begin(), p->findings.end(),
                   [](const Finding& a, const Finding& b) { return a.saving_ns > b.saving_ns; });
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
