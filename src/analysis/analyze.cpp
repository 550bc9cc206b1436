// analyze() and analyze_job(): run the passes over each trace of a job, pool
// what must be pooled, then state the findings.
//
// [SECTION] Ranks and clocks
// [SECTION] Per-rank rows and skew
// [SECTION] Entry points
#include "analysis/analyze.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>

#include "analysis/detail/context.h"
#include "analysis/hta.h"
#include "analysis/stats.h"

namespace gpuscope {

namespace {

using detail::RankedTrace;

// [SECTION] Ranks and clocks ----------------------------------------------------------------

// The traces' own ranks when every one has a distinct one, else their order.
void assign_ranks(std::vector<RankedTrace>& traces) {
  std::set<std::int32_t> seen;
  bool usable = true;
  for (const RankedTrace& rt : traces) {
    const std::int32_t r = rt.trace->meta().rank;
    if (r < 0 || !seen.insert(r).second) usable = false;
  }
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const std::int32_t own = traces[i].trace->meta().rank;
    traces[i].rank = usable ? own : (traces.size() == 1 ? std::max(0, own) : static_cast<std::int32_t>(i));
  }
}

std::vector<TimeNs> communication_ends(const Trace& t) {
  std::vector<TimeNs> ends;
  const KernelTable& k = t.kernels();
  for (std::size_t i = 0; i < k.size(); ++i)
    if (k.category_at(i) == KernelCategory::communication) ends.push_back(k.end[i]);
  std::sort(ends.begin(), ends.end());
  return ends;
}

std::string format_ms(TimeNs ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

// Puts every rank on the clock of the first one and says how.
//  * One host: one clock (CUPTI and Kineto both use the host's real-time clock).
//  * Otherwise, collectives end together on every rank: the k-th communication
//    kernel of each rank is matched with rank 0's, and the median difference
//    of their ends is the rank's shift.
//  * Otherwise the clocks are taken as they are, and the report says so.
std::string align_clocks(std::vector<RankedTrace>& traces) {
  if (traces.size() < 2) return {};
  const std::string& host = traces[0].trace->meta().host;
  bool one_host = !host.empty();
  for (const RankedTrace& rt : traces) one_host = one_host && rt.trace->meta().host == host;
  if (one_host) return "all ranks ran on host " + host + ": one clock, no shift";

  std::vector<std::vector<TimeNs>> ends;
  for (const RankedTrace& rt : traces) ends.push_back(communication_ends(*rt.trace));
  std::size_t matched = ends[0].size();
  for (const auto& e : ends) matched = std::min(matched, e.size());
  if (matched == 0) return "different or unknown hosts and no collectives to align on: clocks taken as recorded";
  TimeNs largest = 0;
  for (std::size_t r = 1; r < traces.size(); ++r) {
    std::vector<TimeNs> diffs(matched);
    for (std::size_t k = 0; k < matched; ++k) diffs[k] = ends[0][k] - ends[r][k];
    traces[r].offset = select_kth(diffs, (matched - 1) / 2);
    largest = std::max(largest, traces[r].offset < 0 ? -traces[r].offset : traces[r].offset);
  }
  return "aligned on the ends of " + std::to_string(matched) +
         " collectives matched in order (median shift per rank; largest shift " + format_ms(largest) + ")";
}

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
  }
  s.step_time = summarize(durations);
}

void add_stats(const TraceMeta& meta, Profile* p) {
  for (const auto& stat : meta.stats) {
    auto it = std::find_if(p->trace_stats.begin(), p->trace_stats.end(),
                           [&](const auto& kv) { return kv.first == stat.first; });
    if (it == p->trace_stats.end())
      p->trace_stats.push_back(stat);
    else
      it->second += stat.second;
  }
}

}  // namespace

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

Profile analyze(const Trace& trace, const AnalysisOptions& options) {
  const JobInput input{&trace, {}};
  return analyze_job(std::span<const JobInput>(&input, 1), options);
}

Profile analyze_job(std::span<const JobInput> inputs, const AnalysisOptions& opt) {
  Profile p;
  std::vector<RankedTrace> traces;
  for (const JobInput& in : inputs)
    if (in.trace) traces.push_back({in.trace, in.file, 0, 0});
  if (traces.empty()) return p;
  assign_ranks(traces);
  p.clock_alignment = align_clocks(traces);

  p.source = traces[0].trace->meta().source;
  p.producer = traces[0].trace->meta().producer;
  for (const RankedTrace& rt : traces) {
    if (rt.trace->meta().source != p.source) p.source = TraceSource::unknown;
    if (!rt.file.empty()) p.files.push_back(rt.file);
  }

  detail::Evidence ev(opt.max_ranges_per_finding);
  detail::OpTotals totals;
  totals.by_name.resize(traces.size());
  bool any_window = false;
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    const RankedTrace& rt = traces[ti];
    const Trace& t = *rt.trace;
    std::vector<Step> steps;
    const StepSource source = detail::find_steps(rt, opt, &steps);
    if (p.steps.source == StepSource::none) p.steps.source = source;
    std::vector<DeviceSummary> devices;
    std::vector<TemporalBreakdown> hta;
    detail::device_pass(rt, opt, steps, &p, &devices, &hta, &ev, &totals, &totals.by_name[ti]);
    detail::memory_pass(rt, opt, devices, steps, &ev);
    for (Step& s : steps) s.range = rt.shift(s.range);
    // HTA reads one GPU per rank: the rank's row is that GPU's. A trace with
    // several GPUs gets one row per GPU (HTA would merge them; see metrics.md).
    for (TemporalBreakdown& tb : hta) p.temporal_breakdown.push_back(tb);
    rank_rows(rt, devices, steps, &p);
    for (DeviceSummary& d : devices) p.devices.push_back(std::move(d));
    if (p.steps.steps.empty())
      p.steps.steps = std::move(steps);
    else
      std::move(steps.begin(), steps.end(), std::back_inserter(p.steps.steps));
    add_stats(t.meta(), &p);
    p.trace_quality.files.push_back(file_quality(t, rt.file));
    if (t.end_time() > t.begin_time() || t.kernels().size()) {
      const TimeRange w = rt.shift({t.begin_time(), t.end_time()});
      if (!any_window) p.window = w, any_window = true;
      p.window.start = std::min(p.window.start, w.start);
      p.window.end = std::max(p.window.end, w.end);
    }
  }
  // The stream passes come after every device pass: their scan of the launch
  // statistics needs the range the whole job's sample brackets.
  for (auto& m : totals.launch) m.bracket();
  for (const RankedTrace& rt : traces) detail::stream_pass(rt, opt, totals, &p, &ev);
  detail::hotspot_pass(traces, opt, totals, &p);
  detail::launch_pass(traces, opt, totals, &p);
  detail::op_pass(traces, &p);
  summarize_steps(&p);
  compute_skew(&p);
  p.findings = detail::find_problems(p, ev, opt);
  std::stable_sort(p.findings.begin(), p.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.saving_ns > b.saving_ns; });
  return p;
}

}  // namespace gpuscope
