// The registry: every rule in the order it runs (kRules: id, what it tests,
// severity policy, the what-if change that replays its fix, the function),
// and the entry point that runs them. docs/findings.md lists the same rules in
// the same order (tested).
#include <array>
#include <span>

#include "analysis/findings/rules.h"

namespace gpuscope::detail {

namespace {

using namespace rules;

struct RuleEntry {
  FindingRule rule;
  void (*run)(Builder& b);
};

// Every rule, in the order it runs: findings of one rule stay together in this
// order until analyze() sorts them by saving. `severity` is the policy as
// docs/findings.md states it, for the defaults of FindingThresholds.
constexpr RuleEntry kRules[] = {
    {{"padding-hotspot", "share of kernel time in padding kernels", "critical at ≥ 15 %", "--remove padding"},
     padding_hotspot},
    {{"broadcast-hotspot", "share of kernel time in broadcast kernels", "critical at ≥ 15 %", "--remove broadcast"},
     broadcast_hotspot},
    {{"layout-transpose", "share of kernel time in layout transposes", "critical at ≥ 15 %", "--remove transpose"},
     layout_transpose},
    {{"slow-normalization", "share of kernel time in normalization kernels, also against the convolutions",
      "critical at ≥ 30 %", "--scale normalization=0.5"},
     slow_normalization},
    {{"no-tensor-cores", "share of convolution and GEMM time on tensor cores, on GPUs that have them", "warning",
      "--scale convolution=0.5 --scale gemm=0.5"},
     no_tensor_cores},
    {{"memory-bound-aux",
      "elementwise, copy, reduction and layout kernel time against the math (convolution + GEMM + attention), and "
      "the largest such category's share",
      "critical at ≥ 40 % and above the math", ""},
     memory_bound_aux},
    {{"eager-attention", "GEMM → softmax → GEMM chains on a stream, with no fused attention kernel",
      "critical at ≥ 15 %", ""},
     eager_attention},
    {{"low-utilization", "busy / span over all GPUs, with idle time that no other finding counts",
      "critical below 30 %"},
     low_utilization},
    {{"busy-not-working",
      "share of the samples taken while kernels ran with few SMs active (hw.sm_active), on a GPU busy most of the time",
      "critical at ≥ 80 % of the samples"},
     busy_not_working},
    {{"gpu-idle-gaps", "idle gaps of at least 1 ms, their share of the run, by what ended them",
      "critical at ≥ 25 % ended by late launches, queued work or unlaunched ops"},
     gpu_idle_gaps},
    {{"input-bound", "GPU idle while the host loads data, share of step time", "critical when highly",
      "--no-input-wait"},
     input_bound},
    {{"step-host-time", "step time before the GPU's first op or after its last, share of step time",
      "critical at ≥ 50 %"},
     step_host_time},
    {{"launch-bound", "short idle gaps waiting for launches, and ops shorter than their launch call",
      "critical at ≥ 25 %", "--cuda-graphs"},
     launch_bound},
    {{"host-sync", "GPU idle after host synchronizations drained its queue", "critical at ≥ 10 %", "--no-host-sync"},
     host_sync},
    {{"low-concurrency", "kernels never side by side on a GPU they leave room on", "warning"}, low_concurrency},
    {{"small-grid", "kernels on fewer blocks than half the SMs with nothing beside them, share of kernel time",
      "critical at ≥ 25 %"},
     small_grid},
    {{"low-memcpy-overlap", "copy time overlapped by kernels, pinned host-to-device copies on a copy stream aside",
      "warning"},
     low_memcpy_overlap},
    {{"exposed-communication", "communication with no compute alongside, share of the run", "critical when high",
      "--overlap-allreduce"},
     exposed_communication},
    {{"serialized-weight-update", "optimizer kernels running alone", "critical at ≥ 10 % of kernel time",
      "--overlap-update"},
     serialized_weight_update},
    {{"unfused-optimizer",
      "kernels launched per step by the optimizer's ops (Optimizer.step#…), few of them multi-tensor",
      "critical at ≥ 1000 per step", ""},
     unfused_optimizer},
    {{"straggler",
      "the rank whose late arrivals at the matched collectives made the others wait longest (else the GPU or rank "
      "with the most compute), against the median",
      "critical at ≥ 25 % more compute or ≥ 10 % of the others' time", "--balance-ranks"},
     straggler},
    {{"larger-batch-fits", "peak allocated memory per step against the GPU's memory", "info", ""}, larger_batch_fits},
    {{"memory-pressure", "peak reserved memory near the GPU's memory, with fragmentation or direct cudaMalloc/cudaFree",
      "critical at ≥ 97 %", ""},
     memory_pressure},
    {{"pageable-memcpy", "copies with a pageable host side", "warning at ≥ 5 %, else info"}, pageable_memcpy},
    {{"sync-memcpy", "copies that block the host: host time blocked plus the GPU idle after them",
      "warning at ≥ 5 %, else info"},
     sync_memcpy},
    {{"clocks-throttled", "steps with a thermal or power throttle reason (NVML), slower than the others", "warning"},
     clocks_throttled},
    {{"memory-bound-kernels",
      "kernel categories whose samples show high DRAM throughput and low instruction issue (hw.dram_*, hw.sm_issue), "
      "share of kernel time",
      "warning at ≥ 25 %, else info"},
     memory_bound_kernels},
    {{"dropped-records", "records the recorder lost", "critical if ≥ 1 % of the GPU ops"}, dropped_records},
    {{"op-below-roofline", "matrix, convolution and attention ops far below their roofline",
      "critical where reaching 30 % of the roofline saves ≥ 10 % of kernel time"},
     op_below_roofline},
    {{"op-launch-overhead", "ops whose launch calls take longer than their GPU work", "warning"}, op_launch_overhead},
};

constexpr auto kRuleList = [] {
  std::array<FindingRule, std::size(kRules)> rules{};
  for (std::size_t i = 0; i < rules.size(); ++i) rules[i] = kRules[i].rule;
  return rules;
}();

}  // namespace

std::vector<HelpAnswer> answer_questions(const Profile& p);  // helps.cpp

namespace {

// Ops that only make a view of a tensor take about a microsecond of host
// time each, the profiler's own cost included (0.3-1.6 µs on the real traces
// at hand); where they take 10 µs or more on average over 100 calls, the
// host itself was slowed (a contended CPU, or an older profiler's cost on
// it), and what a host-side rule charges is an upper bound. Empty otherwise.
std::string slow_host(const Profile& p) {
  constexpr std::uint64_t kCalls = 100;
  constexpr TimeNs kSlow = 10'000;
  std::uint64_t calls = 0;
  TimeNs self = 0;
  for (const OpRow& r : p.op_names)
    if (r.name == "aten::view" || r.name == "aten::as_strided" || r.name == "aten::alias" ||
        r.name == "aten::_reshape_alias" || r.name == "aten::detach")
      calls += r.calls, self += r.cpu_self_ns;
  if (calls < kCalls || self < kSlow * static_cast<TimeNs>(calls)) return {};
  return " Ops that only make a view (aten::view, aten::as_strided, aten::detach) took " +
         format::duration(self / static_cast<TimeNs>(calls)) + " of host time each over " + format::count(calls) +
         " calls, where about a microsecond is usual even under the profiler: the host was slowed (a contended "
         "CPU, or the profiler's own cost on it), so the host time here, and the saving, are upper bounds.";
}

}  // namespace

std::vector<Finding> find_problems(const Profile& p, const Evidence& ev, const AnalysisOptions& opt) {
  std::vector<Finding> out;
  const Totals totals(p);
  Builder b{p, ev, opt, totals, &out, {}};
  for (const RuleEntry& r : kRules) {
    b.rule = r.rule.id;
    r.run(b);
  }
  if (p.devices.size() == 1)
    for (Finding& f : out)
      if (f.device == kNoDevice) f.device = p.devices.front().id;
  // The host's time under PyTorch's Python tracer is the traced program's
  // plus the tracer's, by an amount the trace does not show; a slowed host's
  // is more than the program's own too: what a host-side rule charges is
  // then an upper bound.
  std::string caveats;
  if (p.workload.python_ranges >= kTracedPythonRanges)
    caveats = " The trace was recorded with PyTorch's Python tracer on (" + format::count(p.workload.python_ranges) +
              " Python function ranges: with_stack=True), which slows the host's Python by an amount the trace does "
              "not show: the host time here, and the saving, are upper bounds; profile with with_stack=False to "
              "size them.";
  caveats += slow_host(p);
  if (!caveats.empty())
    for (Finding& f : out)
      // gpu-idle-gaps: where its saving is the gaps late launches ended.
      if (f.id == "launch-bound" || f.id == "op-launch-overhead" || f.id == "unfused-optimizer" ||
          f.id == "step-host-time" || (f.id == "gpu-idle-gaps" && f.saving_ns > 0))
        f.evidence += caveats;
  return out;
}

// A simulated fix makes the median step at least kMaterialShare shorter; any
// fix saves at least kMaterialShare of the run.
bool saves_materially(const Profile& p, const Finding& f) {
  if (f.saving_ns <= 0) return false;
  const TimeNs step = p.simulation.replayed_step_ns, run = p.window.duration();
  const bool overall = run <= 0 || double(f.saving_ns) >= kMaterialShare * double(run);
  // A simulated fix: its median step materially shorter, and the run too
  // (a replay can shorten most steps while the time moves into one).
  if (f.saving_source == SavingSource::simulated && step > 0)
    return materially_shorter(step, f.predicted_step_ns) && overall;
  return overall;
}

}  // namespace gpuscope::detail

namespace gpuscope {

std::span<const FindingRule> finding_rules() { return detail::kRuleList; }

// A finding is material at kMaterialShare of the run: its saving, or its own
// time's share (of the run, or of kernel time for the rules that measure
// kernel time); one below its rule's warning level that has a saving, by
// that saving alone. Below that it is true but does not change what to do
// first. A finding whose fix was replayed is judged by the replay: its saving, or
// what it saves once the other fixes are made; its share alone does not
// make it material when removing that time leaves the step as long. Not in
// a job: each rank is replayed alone, so a fix that shortens one rank's
// steps leaves the others' waits for it at their collectives as recorded,
// and the pooled median step cannot say what the job would gain.

namespace {

// Rules whose fix makes kernels faster and whose saving is a rule of thumb
// over the kernels' own time: the replay cannot apply their fix.
// The rules whose share is of kernel time, or of a part of it (the
// convolution and GEMM time without tensor cores).
bool kernel_share_rule(std::string_view id) {
  return id == "padding-hotspot" || id == "broadcast-hotspot" || id == "layout-transpose" ||
         id == "slow-normalization" || id == "no-tensor-cores" || id == "memory-bound-aux" || id == "eager-attention" ||
         id == "small-grid";
}

bool kernel_speed_rule(std::string_view id) {
  return id == "op-below-roofline" || id == "memory-bound-aux" || id == "eager-attention" ||
         id == "memory-bound-kernels" || id == "small-grid";
}

// A faster kernel shortens a step only by its time on the step's critical
// path: where the replayed path is mostly host time (launches, Python,
// syncs), the kernels' own time overstates what making them faster saves.
// Such a saving is capped at the GPU compute on the paths (scaled to the
// trace's steps); the note says why (empty: no cap applies).
struct PathCap {
  TimeNs cap = 0;
  std::string note;
};
// The replayed paths' totals scaled to the trace's steps (the replay may
// cover some of them only).
double path_scale(const Profile& p) {
  const CriticalPath& c = p.critical_path;
  return c.steps > 0 && !p.steps.steps.empty() ? double(p.steps.steps.size()) / double(c.steps) : 1.0;
}
PathCap critical_path_cap(const Profile& p) {
  const CriticalPath& c = p.critical_path;
  const double host_share = critical_path_host_share(c);
  if (host_share < 0.5 || p.trace_quality.files.size() > 1) return {};
  const double scale = path_scale(p);
  const auto cap = static_cast<TimeNs>(double(c.gpu_compute_ns) * scale);
  return {cap, "capped at the GPU compute on the replayed critical path (" + format::duration(cap) + "): the path is " +
                   format::percent(host_share) +
                   " host time (launches, Python, synchronizations), so faster kernels shorten the step only once "
                   "that is fixed"};
}

// Hiding communication under compute shortens a step only by the
// communication on its critical path: where the host decides the step, the
// exposed time is mostly time the host would have taken anyway. One GPU's
// trace only (the paths of several are summed; the exposed time is per GPU).
void cap_communication_by_critical_path(const Profile& p, std::vector<Finding>& all) {
  const CriticalPath& c = p.critical_path;
  if (c.length_ns <= 0 || p.devices.size() != 1 || p.trace_quality.files.size() > 1 ||
      !p.workload.host_filtered.empty() || critical_path_host_share(c) < 0.5)
    return;
  const double scale = path_scale(p);
  const auto cap = static_cast<TimeNs>(double(c.communication_ns) * scale);
  for (Finding& f : all) {
    if (f.id != "exposed-communication" || f.saving_source != SavingSource::rule_of_thumb || f.saving_ns <= cap)
      continue;
    f.saving_note = (f.saving_note.empty() ? "" : f.saving_note + "; ") +
                    "capped at the communication on the replayed critical path (" + format::duration(cap) +
                    "): the path is " + format::percent(critical_path_host_share(c)) +
                    " host time, which the step takes whether or not the communication is hidden";
    f.saving_ns = cap;
  }
}

// Overlapping the weight update shortens a step by at most the optimizer
// kernels' time on its critical path: the update's time off the path is
// hidden already. One GPU's trace only, as the communication's cap.
void cap_update_by_critical_path(const Profile& p, std::vector<Finding>& all) {
  const CriticalPath& c = p.critical_path;
  if (c.length_ns <= 0 || c.categories.empty() || p.devices.size() != 1 || p.trace_quality.files.size() > 1) return;
  TimeNs on_path = 0;
  for (const PathCategory& k : c.categories)
    if (k.category == KernelCategory::optimizer) on_path += k.ns;
  const auto cap = static_cast<TimeNs>(double(on_path) * path_scale(p));
  for (Finding& f : all) {
    if (f.id != "serialized-weight-update" || f.saving_source != SavingSource::rule_of_thumb || f.saving_ns <= cap)
      continue;
    f.saving_note = (f.saving_note.empty() ? "" : f.saving_note + "; ") +
                    (cap > 0 ? "capped at the optimizer kernels' time on the replayed critical path (" +
                                   format::duration(cap) + "): the rest of the update is off the path already"
                             : std::string("none of the optimizer kernels' time is on the replayed critical path: "
                                           "the update is off the path already"));
    f.saving_ns = cap;
  }
}

void cap_by_critical_path(Profile* p, std::vector<Finding>& all) {
  cap_communication_by_critical_path(*p, all);
  cap_update_by_critical_path(*p, all);
  const PathCap c = critical_path_cap(*p);
  if (c.note.empty()) return;
  for (Finding& f : all) {
    if (!kernel_speed_rule(f.id) || f.saving_source != SavingSource::rule_of_thumb || f.saving_ns <= c.cap ||
        f.saving_note == c.note)
      continue;
    f.saving_ns = c.cap;
    f.saving_note = c.note;
    if (f.severity == Severity::critical) f.severity = Severity::warning;
  }
}

// A per-parameter optimizer's host time costs the run where the next work
// waited for it: on the replayed critical path (a loop whose host sets the
// pace, the GPU done with the step's work meanwhile), not only in the GPU
// idle its own launches ended, which is all the rule could see before the
// replay. Its saving is then its host time on the paths, at most the step's
// host time beyond its GPU work (what a multi-tensor update removes).
void credit_optimizer_on_path(Profile* p, std::vector<Finding>& all) {
  const CriticalPath& c = p->critical_path;
  if (c.optimizer_host_ns <= 0 || p->trace_quality.files.size() > 1) return;
  const OpRow* r = nullptr;
  for (const OpRow& row : p->op_names)
    if (detail::is_optimizer_step(row.name) && row.calls > 0 && (!r || row.kernels_total > r->kernels_total)) r = &row;
  if (!r) return;
  const double scale = path_scale(*p);
  const auto on_path = static_cast<TimeNs>(double(c.optimizer_host_ns) * scale);
  const TimeNs excess = std::max<TimeNs>(0, r->cpu_total_ns - r->gpu_total_ns);
  const TimeNs credit = std::min(on_path, excess);
  const TimeNs run = p->window.duration();
  for (Finding& f : all) {
    if (f.id != "unfused-optimizer" || f.saving_source != SavingSource::rule_of_thumb || credit <= f.saving_ns)
      continue;
    f.saving_ns = credit;
    if (run > 0) f.share = std::max(f.share, double(credit) / double(run));
    f.saving_note = "its host time on the replayed critical path (" + format::duration(on_path) +
                    ": the next work waited for the optimizer step longer than the GPU waited for its launches), "
                    "at most its host time beyond its GPU work (" +
                    format::duration(excess) + ")";
  }
}

// A CUDA graph capture of the step (launch-bound's fix; op-launch-overhead's
// where it is launch overhead, not set-up) replays every op's kernels from
// one call: the host no longer runs the per-parameter optimizer's ops
// either, and the GPU's wait for their launches is part of the late-launch
// idle those findings count. So the optimizer's saving is part of what that
// fix saves, not in addition to it: the same wait is not charged twice.
void optimizer_within_graphs(std::vector<Finding>& all) {
  const Finding* graphs = nullptr;
  for (const Finding& f : all)
    if (f.id == "launch-bound" || (!graphs && f.id == "op-launch-overhead" && f.variant != "setup")) graphs = &f;
  if (!graphs) return;
  const std::string id = graphs->id;
  for (Finding& f : all)
    if (f.id == "unfused-optimizer" && f.saving_ns > 0) f.saving_within = id;
}

// The rules whose time is the GPU waiting for the host's launches, which a
// graph replay removes.
bool launch_wait_rule(const Finding& f) {
  return f.id == "launch-bound" || (f.id == "op-launch-overhead" && f.variant != "setup");
}

}  // namespace

double critical_path_host_share(const CriticalPath& c) {
  if (c.length_ns <= 0) return 0;
  return double(c.cpu_launch_ns + c.cpu_other_ns + c.input_wait_ns + c.sync_wait_ns) / double(c.length_ns);
}

bool launch_wait_in_capture(const Profile& p, const Finding& f) {
  return launch_wait_rule(f) && detail::rules::one_time_capture(p);
}

bool capped_by_critical_path(const Profile& p, const Finding& f) {
  return !f.saving_note.empty() && kernel_speed_rule(f.id) && f.saving_note == critical_path_cap(p).note;
}

void settle_findings(Profile* p) {
  std::vector<Finding>& all = p->findings;
  for (Finding& f : p->minor_findings) all.push_back(std::move(f));
  p->minor_findings.clear();
  credit_optimizer_on_path(p, all);
  cap_by_critical_path(p, all);
  optimizer_within_graphs(all);
  // The critical ones first: a problem that holds a large share of the run
  // leads even where what fixing it saves is unknown (work held by a
  // dependency the trace does not show); then the largest saving.
  std::stable_sort(all.begin(), all.end(), [](const Finding& a, const Finding& b) {
    if ((a.severity == Severity::critical) != (b.severity == Severity::critical))
      return a.severity == Severity::critical;
    if (a.saving_ns != b.saving_ns) return a.saving_ns > b.saving_ns;
    return a.saving_source == SavingSource::simulated && b.saving_source != SavingSource::simulated;
  });
  const TimeNs run = p->window.duration();
  // Each GPU's span, on average (a finding's saving is per GPU).
  TimeNs span = 0;
  for (const DeviceSummary& d : p->devices) span += d.span_ns;
  if (!p->devices.empty()) span /= static_cast<TimeNs>(p->devices.size());
  // Steps longer than the GPUs' span (host work before each step's first
  // GPU op) are the run a saving is judged against.
  if (!p->devices.empty()) span = std::max(span, p->steps.total_ns / static_cast<TimeNs>(p->devices.size()));
  // A one-time graph capture's waits for the host's launches are the
  // capture's and the program's first calls': later calls replay the graph,
  // and whether they wait the trace cannot tell (the answers say so). Not
  // numbered, their line says why.
  // Kernel time per GPU: a rule that measures a share of kernel time (or of
  // a part of it) holds at most that share of it, whatever its share says.
  const TimeNs kernels_per_gpu =
      p->devices.empty() ? p->kernel_time_ns : p->kernel_time_ns / static_cast<TimeNs>(p->devices.size());
  auto material = [&](const Finding& f) {
    if (launch_wait_in_capture(*p, f)) return false;
    // Its kernels' own time under 1 % of the run: no fix of them can save
    // more (the GPU idle most of a step: 25 % of 49 µs of kernels in a
    // 3.2 ms step is 0.4 % of it).
    if (kernel_share_rule(f.id) && f.share > 0 && span > 0 && kernels_per_gpu > 0 &&
        f.share * double(kernels_per_gpu) < kMaterialShare * double(span))
      return false;
    if (f.saving_source == SavingSource::simulated && p->simulation.replayed_step_ns > 0 &&
        p->trace_quality.files.size() <= 1)
      return detail::saves_materially(*p, f) || f.after_to_ns > 0;
    const bool saves = run > 0 && double(f.saving_ns) >= kMaterialShare * double(run);
    // Faster kernels off a critical path of host time: judged by what they
    // save now, not by their share.
    if (capped_by_critical_path(*p, f)) return saves;
    // A finding below its rule's warning level with a saving is judged by
    // that saving, against the GPUs' span its share is measured on (a
    // one-shot run's set-up aside): its own time is not what its fix gives
    // back (pageable copies taking 1.2 % of the run whose staging idled the
    // GPU 0.08 %). Its share stands in where the saving is unknown, and at a
    // warning level, where the rule holds the time itself large enough that
    // what the saving leaves unestimated matters.
    if (f.severity == Severity::info && f.saving_ns > 0)
      return double(f.saving_ns) >= kMaterialShare * double(span > 0 ? span : run);
    return f.share >= kMaterialShare || saves;
  };
  const auto minor = std::stable_partition(all.begin(), all.end(), material);
  p->minor_findings.assign(std::make_move_iterator(minor), std::make_move_iterator(all.end()));
  all.erase(minor, all.end());
  p->helps = detail::answer_questions(*p);
}

bool roofline_measures(const Profile& p, std::string_view kernel) {
  for (const OpRow& r : p.ops)
    if (r.roofline_fraction)
      for (const OpKernel& x : r.top_kernels)
        if (x.name == kernel) return true;
  return false;
}

UnmeasuredKernels unmeasured_kernels(const Profile& p) {
  UnmeasuredKernels u;
  if (p.devices.empty() || p.kernel_time_ns <= 0) return u;
  u.utilization = 1;
  for (const DeviceSummary& d : p.devices) {
    u.utilization = std::min(u.utilization, d.utilization);
    if (d.hw.busy_samples > 0) return {};  // counters measured them
  }
  if (u.utilization < 0.9 || critical_path_host_share(p.critical_path) >= 0.5) return {};
  // Steps that wait outside the GPU's span, or idle inside it: not GPU-bound.
  const StepSummary& st = p.steps;
  if (st.total_ns > 0 && double(std::max(st.idle_ns, st.outside_gpu_ns)) > 0.1 * double(st.total_ns)) return {};
  for (const Hotspot& h : p.hotspots) {
    if (u.hot.size() == 3 || h.share < 0.1) break;
    if (h.category == KernelCategory::communication || roofline_measures(p, h.name)) continue;
    u.hot.push_back(&h);
    u.share += h.share;
  }
  if (u.share < 0.5) return {};
  for (const OpRow& r : p.ops) u.shapes = u.shapes || !r.shapes.empty();
  return u;
}

}  // namespace gpuscope
