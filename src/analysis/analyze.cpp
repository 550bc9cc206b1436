// analyze() and analyze_trace(): run the passes over a trace, then state the
// findings. A job of several traces is analysed one trace at a time
// (job/job.cpp), from the same per-trace function.
//
// [SECTION] Per-rank rows and skew
// [SECTION] Entry points
#include "analysis/analyze.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>

#include "analysis/detail/context.h"
#include "analysis/job/job.h"
#include "analysis/passes/collectives.h"
#include "analysis/passes/hta.h"
#include "analysis/util/stats.h"
#include "trace/error.h"

namespace gpuscope {

namespace {

using detail::RankedTrace;

// [SECTION] Per-rank rows and skew --------------------------------------------------------------

void rank_rows(const RankedTrace& rt, const std::vector<DeviceSummary>& devices, const std::vector<Step>& steps,
               Profile* p) {
  for (const DeviceSummary& d : devices) {
    RankSummary r;
    r.rank = rt.rank;
    r.source_file = rt.file;
    r.clock_offset_ns = rt.offset;
    r.device = d.id;
    r.communication_ns = d.communication_ns;
    r.utilization = d.utilization;
    r.compute_ns = d.compute_ns;
    r.exposed_communication_ns = d.exposed_communication_ns;
    TimeNs total = 0, compute = 0;
    std::uint64_t n = 0;
    for (const Step& s : steps)
      if (s.device == d.id) total += s.range.duration(), compute += s.compute_ns, ++n;
    if (n) {
      r.step_time_mean = total / static_cast<TimeNs>(n);
      r.compute_per_step_ns = compute / static_cast<TimeNs>(n);
    }
    p->ranks.push_back(std::move(r));
  }
}

double spread(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double lo = v[0], hi = v[0], sum = 0;
  for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x), sum += x;
  const double mean = sum / static_cast<double>(v.size());
  return mean > 0 ? (hi - lo) / mean : 0;
}

}  // namespace

namespace detail {

void compute_skew(Profile* p) {
  Skew& s = p->skew;
  std::vector<double> busy, compute, step;
  bool all_steps = true;
  for (const RankSummary& r : p->ranks) {
    compute.push_back(static_cast<double>(r.compute_ns));
    step.push_back(static_cast<double>(r.step_time_mean));
    all_steps = all_steps && r.step_time_mean > 0;
  }
  for (const DeviceSummary& d : p->devices) busy.push_back(static_cast<double>(d.busy_ns));
  s.participants = static_cast<std::uint32_t>(p->ranks.size());
  if (s.participants < 2) return;
  s.busy_spread = spread(busy);
  s.compute_spread = spread(compute);
  s.step_time_spread = all_steps ? spread(step) : 0;
  // The one everybody waits for does the most work per step.
  const RankSummary* slowest = nullptr;
  for (const RankSummary& r : p->ranks) {
    const TimeNs work = all_steps ? r.compute_per_step_ns : r.compute_ns;
    if (!slowest || work > (all_steps ? slowest->compute_per_step_ns : slowest->compute_ns)) slowest = &r;
  }
  s.slowest_rank = slowest->rank;
  s.slowest_device = slowest->device;
}

void summarize_steps(Profile* p) {
  StepSummary& s = p->steps;
  std::vector<TimeNs> durations;
  for (const Step& st : s.steps) {
    durations.push_back(st.range.duration());
    s.total_ns += st.range.duration();
    s.compute_ns += st.compute_ns;
    s.communication_ns += st.communication_ns;
    s.memcpy_ns += st.memcpy_ns;
    s.idle_ns += st.idle_ns;
    s.input_wait_ns += st.input_wait_ns;
    s.host_tail_ns += st.host_tail_ns;
    s.lead_idle_ns += st.lead_idle_ns;
  }
  s.step_time = summarize(durations);
}

void add_stats(const NamedCounts& stats, Profile* p) {
  for (const auto& [key, n] : stats) add_count(p->trace_stats, key, n);
}

}  // namespace detail

OpSummary op_summary(const Trace& t) { return detail::trace_op_summary(t); }

FileQuality file_quality(const Trace& t, const std::string& file) {
  FileQuality q;
  q.file = file;
  q.damage = t.meta().damage;
  q.devices = device_coverage(t);
  q.dropped_records = t.meta().stat(stat_key::kDroppedRecords);
  return q;
}

bool TraceQuality::complete() const {
  return std::none_of(files.begin(), files.end(), [](const FileQuality& f) { return f.damage.any(); });
}

// [SECTION] Entry points ----------------------------------------------------------------------------

namespace detail {

Profile analyze_trace(const RankedTrace& rt, const AnalysisOptions& opt, Evidence* evidence,
                      const OpKernelLimits& op_kernels) {
  Profile p;
  const std::vector<RankedTrace> traces{rt};
  p.source = rt.trace->meta().source;
  p.producer = rt.trace->meta().producer;
  if (!rt.file.empty()) p.files.push_back(rt.file);

  Evidence& ev = *evidence;
  OpTotals totals;
  totals.by_name.resize(1);
  const Trace& t = *rt.trace;
  std::vector<Step> steps;
  EarlyOps early;
  p.steps.source = find_steps(rt, opt, &steps, nullptr, &p.steps.not_steps, &p.steps.source_evidence, &early);
  if (steps.empty()) p.steps.unused_step_ranges = step_ranges_on_host(t);
  p.steps.early_ops = early.ops;
  p.steps.early_ops_ns = early.ns;
  p.steps.backlog_ops = early.backlog_ops;
  p.steps.backlog_ns = early.backlog_ns;
  for (int c = 0; c < kKernelCategoryCount; ++c)
    if (early.category_count[c] > 0)
      p.steps.backlog_categories.push_back(
          {static_cast<KernelCategory>(c), early.category_ns[c], 0, early.category_count[c], {}});
  std::vector<DeviceSummary> devices;
  std::vector<TemporalBreakdown> hta;
  ExposedCommunication exposed_comm, copies_alone;
  device_pass(rt, opt, steps, &p, &devices, &hta, &ev, &totals, &totals.by_name[0], &exposed_comm, &copies_alone);
  memory_pass(rt, opt, devices, steps, &ev);
  attention_pass(rt, opt, &ev);
  hardware_pass(rt, opt, devices, steps);
  collective_pass(rt, opt, steps, exposed_comm, &p);
  for (Step& s : steps) s.range = rt.shift(s.range);
  steps_outside_gpu(rt, devices, steps, &p.steps);
  steps_lead_host(rt, steps, &p.steps);
  if (p.steps.source == StepSource::profiler_step || p.steps.source == StepSource::nvtx) {
    steps_host_issue(rt, steps, &p.steps);
    steps_slow(rt, devices, steps, &p.steps);
  }
  // HTA reads one GPU per rank: the rank's row is that GPU's. A trace with
  // several GPUs gets one row per GPU (HTA would merge them; see metrics.md).
  for (TemporalBreakdown& tb : hta) p.temporal_breakdown.push_back(tb);
  rank_rows(rt, devices, steps, &p);
  for (DeviceSummary& d : devices) p.devices.push_back(std::move(d));
  p.steps.steps = std::move(steps);
  add_stats(t.meta().stats, &p);
  p.trace_quality.files.push_back(file_quality(t, rt.file));
  if (t.end_time() > t.begin_time() || t.kernels().size()) p.window = rt.shift({t.begin_time(), t.end_time()});
  // The stream pass comes after the device pass: its scan of the launch
  // statistics needs the range the device pass's sample brackets.
  for (auto& m : totals.launch) m.bracket();
  stream_pass(rt, opt, totals, &p, &ev, copies_alone);
  hotspot_pass(traces, opt, totals, &p);
  launch_pass(traces, opt, totals, &p);
  p.launches.late_launch_idle_ns = ev.launch_gaps.total();
  op_pass(*rt.trace, &p, op_kernels, std::move(totals.late_launches), &totals.by_name[0]);
  module_pass(*rt.trace, &p);
  host_where_pass(rt, std::move(totals.idle_pieces), &p);
  summarize_steps(&p);
  compute_skew(&p);
  p.workload = recognise_workload(*rt.trace);
  p.workload.data_loading_recorded = ev.has_input_ranges;
  recognise_optimizer(p, ev, opt.thresholds, &p.workload);
  note_compiled_copies(p.memcpys, &p.workload);
  p.findings = find_problems(p, ev, opt);
  p.idle_charges = charge_idle(p, ev, opt);
  quote_host_where(&p);
  fit_to_workload(p.workload, p.findings, graph_word_of(p.devices));
  settle_findings(&p);
  return p;
}

}  // namespace detail

Profile analyze(const Trace& trace, const AnalysisOptions& options) {
  const JobInput input{&trace, {}};
  return analyze_job(std::span<const JobInput>(&input, 1), options);
}

Profile analyze_job(std::span<const JobInput> inputs, const AnalysisOptions& opt) {
  std::vector<const JobInput*> given;
  for (const JobInput& in : inputs)
    if (in.trace) given.push_back(&in);
  if (given.empty()) return {};
  if (given.size() == 1) {
    const RankedTrace rt{given[0]->trace, given[0]->file, std::max(0, given[0]->trace->meta().rank), 0};
    detail::Evidence ev(opt.max_ranges_per_finding);
    return detail::analyze_trace(rt, opt, &ev);
  }
  std::vector<RankDigest> digests;
  for (const JobInput* in : given) digests.push_back(digest_rank(*in->trace, in->file, opt));
  JobCheck check = check_job(digests);
  if (!check.refused.empty()) throw InputError(given[0]->file + " …", check.refused);
  Profile p = analyze_digests(std::move(digests), opt);
  p.left_out = std::move(check.left_out);
  return p;
}

}  // namespace gpuscope
