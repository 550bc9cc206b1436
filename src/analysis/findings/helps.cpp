// "What would help?": the changes users ask about, each answered from the
// trace — yes (with the numbered findings that show it and the replay's
// prediction where it made one), no (with what in the trace says so),
// unknown (the trace cannot tell, and why), or not applicable. The answers
// read the Profile only, so they are the same for one trace, a job and a
// report read back; they are computed again once the replay has simulated
// the fixes (settle_findings).
//
// Principles (docs/findings.md, "What would help?"):
//  * a yes needs a numbered finding whose fix saves time; a finding whose own
//    replay predicts no faster step gives a no that says so, never a yes;
//  * nothing is prescribed that the program already does (CUDA graphs, DDP's
//    overlapped all-reduce, a fused or foreach optimizer);
//  * where the trace lacks what the answer needs (no data-loading ranges, no
//    launch configuration, an unknown GPU), the answer is unknown.
//
// [SECTION] What the answers read
// [SECTION] One function per question
// [SECTION] Entry points
#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings/rules.h"
#include "analysis/graph/savings.h"
#include "analysis/ops/occupancy.h"

namespace gpuscope::detail {

namespace {

using rules::dur;
using rules::pct;
using rules::pct1;

// [SECTION] What the answers read -------------------------------------------------------------

const Finding* numbered(const Profile& p, std::string_view id) {
  for (const Finding& f : p.findings)
    if (f.id == id) return &f;
  return nullptr;
}
const Finding* minor(const Profile& p, std::string_view id) {
  for (const Finding& f : p.minor_findings)
    if (f.id == id) return &f;
  return nullptr;
}

// A fix whose replay the trace's own dependencies made impossible (a cycle:
// an op would wait for one that waits for it): the program's order is not
// what the fix assumes, so what it saves is unknown.
bool replay_cycle(const Finding& f) {
  return f.saving_note.starts_with("not simulated: ") && f.saving_note.find("cycle") != std::string::npos;
}

// A finding whose fix saves time that matters: a yes may rest on it
// (saves_materially, findings/registry.cpp); or a numbered one whose fix
// the replay could not order, on which a yes rests as unknown (yes()).
bool gains(const Profile& p, const Finding* f) { return f && (saves_materially(p, *f) || replay_cycle(*f)); }

using rules::one_time_capture;
std::string one_time_words(const Profile& p) {
  const WorkloadKind& w = p.workload;
  const std::string graph = rules::graph_words(p);
  return "the trace records a one-time " + graph + " capture (" +
         rules::count(w.graph_captures, "capture", "captures") + ", " +
         rules::count(w.graph_launches, "graph launch", "graph launches") +
         ", each graph run at most once) and the program's first calls: whether later calls, which replay the " +
         graph + ", wait for the host the trace cannot tell; profile such a call";
}

// What the answers read of the devices, summed over all of them.
struct JobTotals {
  TimeNs span = 0, busy = 0, comm = 0, exposed = 0;
  std::uint64_t kernels = 0;
  double concurrency = 0;  // the highest of any device
  double utilization = 0;

  explicit JobTotals(const Profile& p) {
    for (const DeviceSummary& d : p.devices) {
      span += d.span_ns, busy += d.busy_ns, comm += d.communication_ns, exposed += d.exposed_communication_ns;
      kernels += d.kernels;
      concurrency = std::max(concurrency, d.kernel_concurrency);
    }
    utilization = span ? double(busy) / double(span) : 0.0;
  }
};

// The GPUs' idle time charged to one cause (IdleCharge::cause), Σ GPUs.
TimeNs idle_of(const Profile& p, std::string_view cause) {
  TimeNs ns = 0;
  for (const IdleCharge& c : p.idle_charges)
    if (c.cause == cause) ns += c.ns;
  return ns;
}

double category_share(const Profile& p, std::initializer_list<KernelCategory> cats) {
  double s = 0;
  for (const CategoryTime& c : p.categories)
    for (KernelCategory k : cats)
      if (c.category == k) s += c.share;
  return s;
}

// The categories' share of the steps' own kernel time: without the work
// queued ahead of the first step, as the category rules weigh it
// (rules::Totals::own_share).
double own_category_share(const Profile& p, std::initializer_list<KernelCategory> cats) {
  const rules::Totals t(p);
  TimeNs time = 0;
  for (KernelCategory k : cats) time += t.own(k);
  return ratio(time, t.own_gpu_time);
}

// "of kernel time", or "of the steps' kernel time" where a backlog is left out.
std::string kernel_time_words(const Profile& p) {
  return p.steps.backlog_categories.empty() ? "of kernel time" : "of the steps' kernel time";
}

HelpAnswer answer(std::string_view id, std::string_view question, Verdict v, std::string reason) {
  HelpAnswer a;
  a.id = std::string(id);
  a.question = std::string(question);
  a.verdict = v;
  a.reason = std::move(reason);
  return a;
}

// Yes, on the numbered findings of `fs` whose fixes save time (the first one
// states it); the prediction of the first of them the replay simulated.
HelpAnswer yes(const Profile& p, std::string_view id, std::string_view question,
               std::initializer_list<const Finding*> fs, std::string reason = {}) {
  // Every finding behind the yes has a fix the replay could not order: unknown.
  bool any = false, ordered = false;
  for (const Finding* f : fs)
    if (gains(p, f)) any = true, ordered = ordered || !replay_cycle(*f);
  if (any && !ordered) {
    HelpAnswer a = answer(id, question, Verdict::unknown, {});
    for (const Finding* f : fs) {
      if (!gains(p, f)) continue;
      if (a.reason.empty())
        a.reason = f->title + "; but in the replay " +
                   f->saving_note.substr(std::string_view("not simulated: ").size()) +
                   ": the program's own dependencies do not allow the change as the fix makes it, so what it saves "
                   "the trace cannot tell";
      a.findings.push_back(f->id);
    }
    return a;
  }
  HelpAnswer a = answer(id, question, Verdict::yes, std::move(reason));
  for (const Finding* f : fs) {
    if (!gains(p, f)) continue;
    if (a.reason.empty()) a.reason = f->title;
    if (std::find(a.findings.begin(), a.findings.end(), f->id) == a.findings.end()) a.findings.push_back(f->id);
    // A capped saving's prediction is not quoted: the replay's step also
    // loses host time other findings count (warm-up, syncs).
    if (a.fix.empty() && f->saving_source == SavingSource::simulated && f->predicted_step_ns > 0 &&
        f->predicted_step_ns < p.simulation.replayed_step_ns && f->replay_saving_ns == 0) {
      a.fix = f->fix;
      a.predicted_step_ns = f->predicted_step_ns;
    }
  }
  return a;
}

// No, because the replay of the finding's own fix predicts no faster step,
// or one faster by less than 1 %.
HelpAnswer no_gain(const Profile& p, std::string_view id, std::string_view question, const Finding& f) {
  const std::string fix = f.fix.empty() ? std::string("its fix") : f.fix;
  const TimeNs step = p.simulation.replayed_step_ns;
  // In a job each rank is replayed alone: a fix that shortens some ranks'
  // steps (a saving that matters) but hardly the pooled median step may
  // still shorten the job's, by what the others wait for those ranks at
  // their collectives; the replay cannot tell.
  const TimeNs run = p.window.duration();
  if (p.trace_quality.files.size() > 1 && run > 0 && double(f.saving_ns) >= kMaterialShare * double(run)) {
    HelpAnswer a =
        answer(id, question, Verdict::unknown,
               f.title + ", and " + fix + " saves " + dur(f.saving_ns) + " per trace in the replay (" +
                   pct1(double(f.saving_ns) / double(run)) + " of the run), but shortens the job's median step (" +
                   dur(step) + ") by only " + dur(std::max<TimeNs>(0, step - f.predicted_step_ns)) +
                   ": each rank is replayed alone, so how much the job gains depends on how long the "
                   "other ranks wait for the ones it shortens, which the replay does not model");
    a.findings.push_back(f.id);
    return a;
  }
  // The median step materially shorter, but not the run: the time moved into other steps.
  const bool moved = f.saving_ns > 0 && materially_shorter(step, f.predicted_step_ns);
  const std::string replay =
      moved ? " makes the median step " + dur(step - f.predicted_step_ns) + " shorter in the replay (" + dur(step) +
                  " -> " + dur(f.predicted_step_ns) + ") but all the steps together only " + dur(f.saving_ns) +
                  " (under " + pct(kMaterialShare) + " of the run): the time moves into other steps"
      : f.saving_ns > 0 && f.predicted_step_ns > 0
          ? " makes the median step only " + dur(step - f.predicted_step_ns) + " shorter in the replay (" + dur(step) +
                " -> " + dur(f.predicted_step_ns) + ", under " + pct(kMaterialShare) + ")"
          : " makes no step faster in the replay (" + f.saving_note + ")";
  std::string reason = f.title + ", but " + fix + replay + (moved ? "" : ": the step's time is decided elsewhere");
  if (!f.after_fixes.empty())
    reason += " now. After " + f.after_fixes + " (the changes that save time now), it would shorten the median step " +
              dur(f.after_from_ns) + " -> " + dur(f.after_to_ns) + ": worth making after them";
  HelpAnswer a = answer(id, question, f.after_fixes.empty() ? Verdict::no : Verdict::later, reason);
  a.findings.push_back(f.id);
  return a;
}

// The finding of `id`, numbered or minor, whose simulated fix gains nothing
// that matters.
const Finding* without_gain(const Profile& p, std::string_view id) {
  const Finding* f = numbered(p, id);
  if (!f) f = minor(p, id);
  return f && f->saving_source == SavingSource::simulated && !gains(p, f) ? f : nullptr;
}

// [SECTION] One function per question -----------------------------------------------------------

constexpr std::string_view kInput = "more data-loader workers?";

// Without data-loading ranges, Python host samples can still tell: the
// share of the samples taken in the GPUs' idle time (input loading and
// warm-up aside) that were inside a data loader. Over half: yes; under a
// tenth: no; between, or too few or no Python samples: nothing said here.
std::optional<HelpAnswer> input_from_samples(const Profile& p, double idle, const std::string& where) {
  const std::string_view id = "input-workers";
  std::uint64_t samples = 0, input = 0, python = 0;
  for (const HostWhere& w : p.host_while_idle) {
    if (w.cause == "input-wait" || w.cause == "input-before-start" || w.cause == "warm-up") continue;
    samples += w.samples, input += w.input_samples, python += w.python_samples;
  }
  if (python < kHostWhereMinSamples || python * 2 < samples) return std::nullopt;
  const double share = ratio(input, python);
  const std::string seen = pct(share) + " of the " + format::count(python) +
                           " Python host samples taken while the GPUs were idle were inside a data loader "
                           "(torch/utils/data, tf.data)";
  const std::string lead =
      "the GPUs are idle " + pct1(idle) + where + " and the trace records no data-loading ranges, but ";
  if (share > 0.5)
    return answer(id, kInput, Verdict::yes,
                  lead + seen +
                      ": the host is loading the next batch while the GPU waits (the ranges would measure how "
                      "long: torch.profiler, or gpuscope capture's PyTorch ops)");
  if (share < 0.1) return answer(id, kInput, Verdict::no, lead + "only " + seen + ": the idle time has other causes");
  return std::nullopt;
}

// Without data-loading ranges, steps from ranges bound what input can cost:
// a loop fetches its batch before it launches the step's work, so a wait for
// it is GPU idle before the step's first op; fetched inside a step (micro-
// batches), a wait long enough to matter is a gap of gpu-idle-gaps' size
// that a late launch ended. Both together under 5 % of step time: no; where
// under 90 % of the GPU ops have a launch in the trace, nothing is said.
// Whether at least 90 % of the GPU ops have their launch in the trace: what
// ended a gap, and so the host's part of the idle time, comes from the
// launches.
std::uint64_t gpu_ops(const Profile& p) {
  std::uint64_t ops = 0;
  for (const DeviceSummary& d : p.devices) ops += d.kernels + d.memcpys + d.memsets;
  return ops;
}

// Ops queued before the recording began (LaunchStats::backlog_ops) count as
// launched: their launch is known to precede every gap they end.
std::uint64_t launched_ops(const Profile& p) {
  const LaunchStats& l = p.launches;
  return l.launches + l.graph_ops + l.synchronous_copies + l.backlog_ops;
}

bool launches_cover(const Profile& p) {
  const std::uint64_t ops = gpu_ops(p);
  return ops > 0 && launched_ops(p) * 10 >= ops * 9;
}

// The share of GPU ops no launch in the trace accounts for.
double unlaunched_share(const Profile& p) {
  const std::uint64_t ops = gpu_ops(p), launched = launched_ops(p);
  return ops > launched ? double(ops - launched) / double(ops) : 0.0;
}

// Steps that cover under a tenth of the GPUs' span are a small part of the
// recording (a kernel pattern that repeats twice in one pass of a unit
// test): what they spent is no measure of the run, so the answers that
// weigh step time weigh the span instead, and say why.
constexpr double kStepsCoverShare = 0.1;
bool steps_cover_little(const Profile& p, const JobTotals& j) {
  return p.steps.total_ns > 0 && j.span > 0 && double(p.steps.total_ns) < kStepsCoverShare * double(j.span);
}
std::string steps_cover_words(const Profile& p, const JobTotals& j) {
  return " (the " + format::count(p.steps.steps.size(), "step", "steps") + " found cover " +
         pct1(ratio(p.steps.total_ns, j.span)) + " of it, too little to weigh by step time)";
}

// Where the host ranges and runtime calls recorded on the steps' thread
// cover at least 90 % of the GPU idle before each step's first op and no
// range there is named as data loading (StepSummary::lead_recorded_ns,
// lead_input_ns), that time is no wait for input: "no", with what the host
// did instead. Without such ranges (no Python frames, no ops) it stays
// unknown.
constexpr double kLeadRecordedShare = 0.9;
std::optional<HelpAnswer> lead_not_input(const Profile& p, double idle, double lead, double gaps,
                                         const std::string& in_gaps) {
  const StepSummary& st = p.steps;
  if (st.lead_idle_ns <= 0 || st.lead_input_ns > 0 || st.lead_ranges.empty() ||
      double(st.lead_recorded_ns) < kLeadRecordedShare * double(st.lead_idle_ns))
    return std::nullopt;
  std::string did;
  for (std::size_t i = 0; i < st.lead_ranges.size() && i < 3; ++i)
    did += (did.empty() ? "" : "; ") + st.lead_ranges[i].name + " " + dur(st.lead_ranges[i].ns);
  return answer("input-workers", kInput, Verdict::no,
                "the GPUs are idle " + pct1(idle) + " of step time, " + pct1(lead) +
                    " of it before each step's first GPU op, where a loop waits for its next batch, but the "
                    "trace's host ranges cover " +
                    pct(ratio(st.lead_recorded_ns, st.lead_idle_ns)) +
                    " of that time and none of them loads data (no DataLoader, dataset, collate or file read): "
                    "the host runs " +
                    did + ". Only " + pct1(gaps) + " of step time lies" + in_gaps +
                    ": more workers do not shorten the wait, which is the host's own work before the first "
                    "launch");
}

// Of the long gaps late launches ended, the time the launching thread ran
// recorded host work with no data-loading range around it
// (IdleCharge::host_recorded_ns): the host's own work, no wait for input.
TimeNs late_gaps_recorded(const Profile& p) {
  TimeNs ns = 0;
  for (const IdleCharge& c : p.idle_charges)
    if (c.cause == "late-launch-gap") ns += c.host_recorded_ns;
  return ns;
}

// Of the GPU idle before each step's first op, the time the step's thread
// ran recorded host work that is no data loading (StepSummary::
// lead_recorded_ns less lead_input_ns): the loop's own work, no wait for input.
TimeNs lead_recorded_own(const StepSummary& st) {
  return std::clamp<TimeNs>(st.lead_recorded_ns - st.lead_input_ns, 0, st.lead_idle_ns);
}

// What the bound left out: "in the other 19.9% of step time there the host
// ran recorded ops, ranges and runtime calls, none of them data loading".
std::string recorded_words(double share, std::string_view of) {
  return "in the other " + pct1(share) + " of " + std::string(of) +
         " there the host ran recorded ops, ranges and runtime calls, none of them data loading";
}

std::optional<HelpAnswer> input_from_step_leads(const Profile& p, const JobTotals& j, double idle) {
  const StepSummary& st = p.steps;
  if ((st.source != StepSource::profiler_step && st.source != StepSource::nvtx) || st.total_ns <= 0 ||
      steps_cover_little(p, j))
    return std::nullopt;
  // A step's GPU extent and a gap's cause come from the launches linked to
  // their ops: a trace that links under half its ops (launch records
  // stripped or sampled) bounds nothing; where it lacks the launches of
  // more than a tenth, the long gaps those ops ended may be late launches
  // too, and count in the bound (work held by a dependency was launched in
  // time: no input wait).
  if (unlaunched_share(p) > 0.5) return std::nullopt;
  const bool covered = launches_cover(p);
  const TimeNs late_gaps = idle_of(p, "late-launch-gap") + (covered ? 0 : idle_of(p, "unlaunched-gap"));
  const double lead = ratio(st.lead_idle_ns, st.total_ns), gaps = ratio(late_gaps, st.total_ns);
  const std::string in_gaps =
      covered ? " in long gaps a late launch ended" : " in long gaps a late launch or an op with no launch ended";
  // The host's time before each step's first GPU op recorded (Python
  // frames, ops, runtime calls) and none of it data loading: the loop does
  // not wait for a batch there, whatever the idle is.
  if (lead + gaps >= 0.05 && gaps < 0.05) {
    if (std::optional<HelpAnswer> a = lead_not_input(p, idle, lead, gaps, in_gaps)) return a;
  }
  // A wait for input is time the host ran none of its recorded work: the
  // recorded ops, ranges and runtime calls that load no data, before the
  // first GPU op and in the long gaps, are the host's own work, and out of
  // the bound.
  const double lead_own = ratio(lead_recorded_own(st), st.total_ns);
  const double gaps_own = ratio(std::min(late_gaps_recorded(p), late_gaps), st.total_ns);
  const double bound = lead - lead_own + gaps - gaps_own;
  const bool own = lead_own + gaps_own >= 0.0005;  // said where it shows at 0.1 %
  const std::string unrecorded = own ? ", with the host in no recorded op or call" : "";
  const std::string rest = own ? recorded_words(lead_own + gaps_own, "step time") : std::string();
  // Too much to rule out: unknown, with the bound the steps give.
  if (bound >= 0.05)
    return answer("input-workers", kInput, Verdict::unknown,
                  "the GPUs are idle " + pct1(idle) + " of step time; at most " + pct1(bound) +
                      " can be a wait for input (" + pct1(lead - lead_own) + " before each step's first GPU op, " +
                      pct1(gaps - gaps_own) + in_gaps + unrecorded + (own ? "; " + rest : std::string()) +
                      "), but the trace records no data-loading ranges "
                      "(DataLoader.__next__, tf.data, NVTX around the input pipeline) to tell how much is");
  return answer("input-workers", kInput, Verdict::no,
                "the GPUs are idle " + pct1(idle) + " of step time, but only " + pct1(lead - lead_own) +
                    " before each step's first GPU op, where a loop waits for its next batch, and " +
                    pct1(gaps - gaps_own) +
                    (covered ? " in long gaps (gpu-idle-gaps' size) that a late launch ended"
                             : " in long gaps (gpu-idle-gaps' size) that a late launch or an op with no launch ended") +
                    " (a batch fetched inside a step)" + unrecorded + (own ? " (" + rest + ")" : std::string()) +
                    ": the rest is inside the steps, between their own launches or waiting on dependencies and "
                    "syncs, which more workers do not shorten");
}

// Without steps: a wait for input ends in a long gap a late launch ended
// (the host fetched, then launched), so the long gaps' other causes bound it
// (warm-up, syncs, work held by a dependency, launched in time). Under 5 %
// of the GPUs' span: no. Nothing said where under half the ops have a
// launch in the trace, or where the rest exceeds that bound.
std::optional<HelpAnswer> input_from_gaps(const Profile& p, const JobTotals& j, double idle) {
  if ((p.steps.total_ns > 0 && !steps_cover_little(p, j)) || j.span <= 0 || unlaunched_share(p) > 0.5)
    return std::nullopt;
  const bool covered = launches_cover(p);
  const TimeNs late_gaps = idle_of(p, "late-launch-gap") + (covered ? 0 : idle_of(p, "unlaunched-gap"));
  // The host's recorded work that loads no data in them is no wait for input.
  const TimeNs own = std::min(late_gaps_recorded(p), late_gaps);
  const double bound = ratio(late_gaps - own, j.span);
  if (bound >= 0.05) return std::nullopt;
  const TimeNs warm = idle_of(p, "warm-up");
  return answer(
      "input-workers", kInput, Verdict::no,
      "the GPUs are idle " + pct1(idle) + " of their span" +
          (p.steps.total_ns > 0 ? steps_cover_words(p, j) : std::string()) + ", but " +
          (warm > 0 ? dur(warm) + " of it is warm-up (first calls, set-up) and " : std::string()) + "only " +
          pct1(bound) +
          (covered ? " lies in long gaps a late launch ended"
                   : " lies in long gaps a late launch or an op with no launch ended") +
          (ratio(own, j.span) >= 0.0005 ? " with the host in no recorded op or call" : "") +
          ", where a wait for input would be" +
          (ratio(own, j.span) >= 0.0005 ? " (" + recorded_words(ratio(own, j.span), "the span") + ")" : std::string()) +
          ": the rest waits for other things, which more workers do not "
          "shorten");
}

// Whether PyTorch's Python tracer (with_stack=True) recorded the host, which
// it slows by an amount the trace does not show; not a serving engine's
// trace, whose host time is said for its own reasons.
bool python_traced(const Profile& p) {
  return p.workload.engine.empty() && p.workload.python_ranges >= detail::kTracedPythonRanges;
}

// Whether launching alone outpaces the GPU: most GPU ops run shorter than
// their launch call (HTA's short-kernel rule), a runtime call the tracer
// does not slow.
bool launches_outpace_gpu(const Profile& p) {
  return p.launches.short_kernel_share >= FindingThresholds{}.launch_short_kernel_share;
}

std::optional<HelpAnswer> answer_input(const Profile& p, const JobTotals& j) {
  const std::string_view id = "input-workers";
  if (j.kernels == 0) return std::nullopt;
  // A serving engine is fed by requests, not by a data loader.
  if (!p.workload.engine.empty() && !numbered(p, "input-bound"))
    return answer(id, kInput, Verdict::not_applicable,
                  "an LLM serving engine (" + p.workload.engine + "): requests feed it, not a data loader");
  if (const Finding* f = numbered(p, "input-bound"); gains(p, f)) return yes(p, id, kInput, {f});
  // Host preprocessing before the GPU's first op: workers that prepare the
  // next input are the answer, though no data-loading range was recorded.
  // Only the time before the GPU's first op is the next input's: the host's
  // tail after the GPU's last op is no loader's.
  if (const Finding* f = numbered(p, "step-host-time");
      gains(p, f) && f->variant == "preprocessing" && p.steps.before_gpu_ns > 0 && p.steps.total_ns > 0) {
    // One step: its preprocessing made the only input the GPU ran, and no
    // next input is there to prepare meanwhile.
    if (p.steps.steps.size() < 2) {
      HelpAnswer a =
          answer(id, kInput, Verdict::unknown,
                 pct1(ratio(p.steps.before_gpu_ns, p.steps.total_ns)) + " of the step (" + dur(p.steps.before_gpu_ns) +
                     ") passes before the GPU's first op while the host preprocesses its input, but the trace holds "
                     "one step: that input is the only one the GPU ran, so nothing could be prepared beside it. "
                     "Over many inputs, workers preparing the next one while the GPU runs would hide it; faster "
                     "preprocessing shortens even one");
      a.findings.push_back(f->id);
      return a;
    }
    return yes(p, id, kInput, {f},
               pct1(ratio(p.steps.before_gpu_ns, p.steps.total_ns)) + " of step time (" + dur(p.steps.before_gpu_ns) +
                   ") passes before the GPU's first op while the host preprocesses the input: workers that prepare "
                   "the next input while the GPU runs hide it");
  }
  if (const Finding* f = without_gain(p, "input-bound")) return no_gain(p, id, kInput, *f);
  const StepSummary& st = p.steps;
  const bool stepped = st.total_ns > 0 && !steps_cover_little(p, j);
  const double idle = stepped ? double(st.idle_ns) / double(st.total_ns) : 1.0 - j.utilization;
  const std::string where =
      stepped ? " of step time" : " of their span" + (st.total_ns > 0 ? steps_cover_words(p, j) : std::string());
  if (idle < 0.05)
    return answer(id, kInput, Verdict::no,
                  "the GPUs are idle only " + pct1(idle) + where + ": there is no waiting for input to remove");
  if (!p.workload.data_loading_recorded) {
    if (std::optional<HelpAnswer> a = input_from_samples(p, idle, where)) return a;
    if (!rules::host_side_recorded(p))
      return answer(id, kInput, Verdict::unknown,
                    "the GPUs are idle " + pct1(idle) + where +
                        ", but the trace records only the GPU's ops and the runtime's calls (no framework ops, "
                        "Python functions or steps), so it cannot show where the host waited for input: record the "
                        "host side too (torch.profiler with ProfilerActivity.CPU)");
    std::optional<HelpAnswer> a = input_from_step_leads(p, j, idle);
    if (!a) a = input_from_gaps(p, j, idle);
    if (a && a->verdict != Verdict::unknown) return a;
    // Inference whose Python the tracer recorded, frame by frame, with no
    // data loader in it: where the idle time cannot rule a loader out, no
    // loader is there to give workers.
    if (p.workload.phase == "inference" && p.workload.python_ranges >= detail::kTracedPythonRanges)
      return answer(id, kInput, Verdict::not_applicable,
                    "an inference run whose recorded Python (" + format::count(p.workload.python_ranges) +
                        " function ranges: with_stack=True) never enters a data loader or another data-loading "
                        "range: no loader feeds it");
    if (a) return a;
    return answer(id, kInput, Verdict::unknown,
                  "the GPUs are idle " + pct1(idle) + where +
                      ", but the trace records no data-loading ranges (DataLoader.__next__, tf.data, NVTX around the "
                      "input pipeline), so it cannot tell how much of that idle time waits for input");
  }
  return answer(id, kInput, Verdict::no,
                "the GPU waits for input " +
                    pct1(stepped ? ratio(st.input_wait_ns, st.total_ns) : ratio(idle_of(p, "input-wait"), j.span)) +
                    where + " (idle " + pct1(idle) + " in all): the rest of the idle time has other causes");
}

// The all-reduce's own exposed time decides (its call sites: the kind the
// framework's annotation gives, so DDP's all-reduce counts even as SendRecv
// kernels, and an all-to-all does not): no when the run already buckets
// gradients (DDP), when the replay of the fix predicts no faster step, when
// it is under 1 % of the run, or when its sites mostly wait for another rank
// (overlap does not shorten that); yes on the exposed-communication finding.
// No communication kernels: collectives the framework annotated whose
// kernels the trace lacks (how long they ran, and whether they overlapped,
// it cannot tell), or none at all.
HelpAnswer without_communication(const Profile& p, std::string_view id, std::string_view q) {
  // One collective is often annotated twice (c10d::allreduce_ around
  // nccl:all_reduce): counted by the prefix with the most calls.
  std::uint64_t nccl = 0, gloo = 0, c10d = 0;
  for (const OpRow& r : p.ops) {
    if (r.name.starts_with("nccl:")) nccl += r.calls;
    if (r.name.starts_with("gloo:")) gloo += r.calls;
    if (r.name.starts_with("c10d::")) c10d += r.calls;
  }
  const std::uint64_t annotated = std::max({nccl, gloo, c10d});
  // A process group of one (world size 1): its collectives move nothing.
  if (annotated && p.workload.world_size == 1)
    return answer(id, q, Verdict::not_applicable,
                  "a single-process run (world size 1 in the trace's distributed info): its " +
                      format::count(annotated, "collective op", "collective ops") +
                      " (nccl:…, c10d::…) have no other rank to exchange data with");
  if (annotated)
    return answer(id, q, Verdict::unknown,
                  "the framework recorded " + format::count(annotated, "collective op", "collective ops") +
                      " (nccl:…, c10d::…) but the trace holds none of their kernels: how long they ran and what "
                      "they overlapped it cannot tell");
  return answer(id, q, Verdict::not_applicable, "no communication kernels in this trace");
}

// Inference has no gradients: overlap each layer's collective with compute.
std::optional<HelpAnswer> answer_inference_communication(const Profile& p, const JobTotals& j, const Finding* f,
                                                         std::string_view id, std::string_view q) {
  if (gains(p, f)) return yes(p, id, q, {f});
  if (const Finding* g = without_gain(p, "exposed-communication")) return no_gain(p, id, q, *g);
  return answer(id, q, Verdict::no,
                "communication with no compute alongside is " +
                    pct1(j.span ? double(j.exposed) / double(j.span) : 0.0) + " of the GPUs' time (" +
                    pct1(1.0 - double(j.exposed) / double(j.comm)) + " of communication already runs under compute)");
}

// DDP's one bucket that holds most bytes, ready at the end of the backward
// pass: launching buckets when ready is done already, and what splitting it
// would save the trace cannot tell (ddp_one_bucket).
std::optional<HelpAnswer> one_bucket_answer(const Profile& p, std::string_view id, std::string_view q,
                                            const std::string& exposed) {
  const std::optional<DdpOneBucket> one = ddp_one_bucket(p);
  if (!one) return std::nullopt;
  return answer(id, q, Verdict::unknown,
                exposed + ", but DDP (" + p.workload.data_parallel_evidence +
                    ") already launches each bucket's all-reduce when its gradients are ready: " + one->words() +
                    "; what splitting it would save (a smaller bucket_cap_mb, if it holds many parameters) the "
                    "trace cannot tell, as it does not show when each gradient is ready; a replay would have to "
                    "assume it");
}

// An all-reduce slow for its size, or mostly a cost each call pays whatever
// its size (exposed-communication's `slow` and `fixed-cost`): overlapping
// hides at most the compute beside it, and what it needs comes first.
HelpAnswer not_the_overlap(const Profile& p, const Finding& f, std::string_view id, std::string_view q,
                           const std::string& exposed) {
  if (f.variant == "slow")
    return answer(id, q, Verdict::no,
                  exposed + ", but it is slow for its size (" + rules::slow_all_reduce(p) +
                      "): overlapping hides at most the compute beside it; find why the transfer is this slow first");
  return answer(id, q, Verdict::no,
                exposed + ", but most of it is a cost each call pays whatever its size (" +
                    rules::all_reduce_fixed_cost(p) +
                    "): overlapping hides at most the compute beside it; find what each call waits for first");
}

std::optional<HelpAnswer> answer_communication(const Profile& p, const JobTotals& j) {
  const std::string_view id = "overlap-communication";
  const bool inference = p.workload.phase == "inference";
  const std::string_view q = inference ? "overlap communication with compute?" : "overlap all-reduce with backward?";
  if (j.kernels == 0) return std::nullopt;
  if (j.comm == 0) return without_communication(p, id, q);
  const Finding* f = numbered(p, "exposed-communication");
  const double run = double(j.span);
  if (inference) return answer_inference_communication(p, j, f, id, q);
  // The call sites say which collective the exposed time is; a profile
  // without them (none matched) speaks of its communication as a whole.
  const CollectiveSummary& c = p.collective_summary;
  const CollectiveKind* ar = nullptr;
  if (!c.kinds.empty()) {
    const auto it =
        std::find_if(c.kinds.begin(), c.kinds.end(), [](const CollectiveKind& k) { return k.kind == "all_reduce"; });
    if (it == c.kinds.end()) {
      std::string kinds;
      for (const CollectiveKind& k : c.kinds)
        kinds += (kinds.empty() ? "" : ", ") + pct(ratio(k.time_ns, c.time_ns)) + " " + k.kind;
      HelpAnswer a = answer(id, q, Verdict::not_applicable,
                            "no all-reduce in this trace: its communication is " + kinds +
                                " (by the framework's annotations, else the kernels' names)");
      if (f) a.findings.push_back(f->id);
      return a;
    }
    ar = &*it;
  }
  const TimeNs exposed_ns = ar ? ar->exposed_ns : TimeNs(j.exposed);
  const double share = run > 0 ? double(exposed_ns) / run : 0.0;
  const std::string exposed = (ar ? "the all-reduce is exposed " : "communication with no compute alongside is ") +
                              dur(exposed_ns) + " (" + pct1(share) + " of the GPUs' time)";
  auto with_finding = [&](HelpAnswer a) {
    if (f) a.findings.push_back(f->id);
    return a;
  };
  // DDP overlaps by design: not a change to make, where the trace shows it
  // overlapping (a tenth of the all-reduce's time or more under compute: its
  // buckets' all-reduces start during the backward pass; or too little
  // exposed to matter). What stays exposed is said with its time,
  // and what decides it (the trace does not show which bucket, or whether a
  // peer was late). A DDP run whose all-reduce runs alone (one bucket after
  // the backward pass) is not told it already overlaps.
  const TimeNs comm_ns = ar ? ar->time_ns : TimeNs(j.comm);
  const double under_compute = comm_ns > 0 ? 1.0 - ratio(std::min(exposed_ns, comm_ns), comm_ns) : 0.0;
  const bool ddp = p.workload.data_parallel == "ddp";
  const std::string deciders = p.workload.execution == "compiled"
                                   ? "the bucket size (bucket_cap_mb) and, compiled, DDPOptimizer's split of the "
                                     "backward graph decide"
                                   : "the bucket size (bucket_cap_mb) decides";
  const std::string ddp_alone = ddp ? "; the run uses DDP (" + p.workload.data_parallel_evidence + "), but only " +
                                          pct1(under_compute) +
                                          " of its all-reduce time runs under compute: " + deciders +
                                          " whether the all-reduce starts during the backward pass"
                                    : std::string();
  if (f && (f->variant == "slow" || f->variant == "fixed-cost"))
    return with_finding(not_the_overlap(p, *f, id, q, exposed));
  if (ddp && (under_compute >= 0.1 || share < 0.05))
    return with_finding(answer(
        id, q, Verdict::no,
        "the run already buckets gradients and overlaps their all-reduce with the backward pass (DDP: " +
            p.workload.data_parallel_evidence + "; " + pct1(under_compute) + " of its all-reduce time runs under " +
            "compute); still, " + exposed +
            (share >= 0.05 ? ": " + deciders + " how much of it can run under the backward pass" : std::string())));
  if (ddp && share >= 0.01)
    if (std::optional<HelpAnswer> a = one_bucket_answer(p, id, q, exposed)) return with_finding(std::move(*a));
  if (const Finding* g = without_gain(p, "exposed-communication")) return no_gain(p, id, q, *g);
  if (share < 0.01)
    return with_finding(answer(id, q, Verdict::no,
                               exposed + ": too little to gain from overlapping it" +
                                   (ar && c.kinds.front().kind != "all_reduce"
                                        ? "; the exposed communication is mostly " + c.kinds.front().kind
                                        : std::string())));
  if (ar && ar->repeated_ns > 0 && ratio(ar->wait_ns, ar->repeated_ns) >= 0.5)
    return with_finding(answer(id, q, Verdict::no,
                               exposed + ", but " + pct(ratio(ar->wait_ns, ar->repeated_ns)) +
                                   " of the time of its call sites seen more than once is beyond their fastest "
                                   "instance: it waits for another rank, which overlapping does not shorten; find "
                                   "the rank that arrives last first"));
  if (gains(p, f))
    return yes(p, id, q, {f},
               exposed +
                   ": bucket the gradients and launch each bucket's all-reduce as soon as its gradients are "
                   "ready, under the rest of the backward pass" +
                   ddp_alone);
  if (ddp)
    return with_finding(answer(id, q, Verdict::unknown,
                               exposed + ddp_alone +
                                   "; what overlapping it would save the "
                                   "trace cannot tell"));
  return answer(id, q, Verdict::no,
                exposed + ", and communication with no compute alongside is " +
                    pct1(j.span ? double(j.exposed) / run : 0.0) + " of the GPUs' time (" +
                    pct1(1.0 - double(j.exposed) / double(j.comm)) + " of communication already runs under compute)");
}

std::optional<HelpAnswer> answer_weight_update(const Profile& p, const JobTotals& j) {
  const std::string_view id = "overlap-weight-update";
  const std::string_view q = "overlap the weight update?";
  if (j.kernels == 0) return std::nullopt;
  if (p.workload.phase == "inference")
    return answer(id, q, Verdict::not_applicable, "an inference run: no weight update");
  if (const Finding* f = numbered(p, "serialized-weight-update"); gains(p, f)) return yes(p, id, q, {f});
  if (const Finding* f = numbered(p, "unfused-optimizer"); gains(p, f)) {
    HelpAnswer a = answer(id, q, Verdict::no,
                          "not first: the weight update costs launches, not GPU time (" + f->title +
                              "); overlapping GPU work does not hide the host's launches — fuse the update first");
    a.findings.push_back(f->id);
    return a;
  }
  if (const Finding* f = without_gain(p, "serialized-weight-update")) return no_gain(p, id, q, *f);
  // Optimizer kernels by name, or (when more) the GPU time of the optimizer's ops (Optimizer.step#…).
  double opt = category_share(p, {KernelCategory::optimizer});
  // Communication the step launches (a distributed optimizer's exchange)
  // is not update work to overlap: as the finding, it is left out.
  TimeNs comm = 0;
  // The optimizer's step on the host: a per-parameter optimizer holds the
  // host far longer than its GPU work takes, and that host time, not its
  // kernels, is what the update costs a step (nothing to overlap on the GPU).
  const OpRow* step_op = nullptr;
  TimeNs step_comm = 0;  // step_op's communication kernels' time
  for (const OpRow& r : p.op_names) {
    if (!is_optimizer_step(r.name)) continue;
    TimeNs c = 0;
    for (const OpKernel& k : r.top_kernels) c += k.category == KernelCategory::communication ? k.time_ns : 0;
    if (!step_op || r.cpu_total_ns > step_op->cpu_total_ns) step_op = &r, step_comm = c;
    if (p.kernel_time_ns <= 0) continue;
    comm = std::max(comm, c);
    opt = std::max(opt, double(std::max<TimeNs>(0, r.gpu_total_ns - c)) / double(p.kernel_time_ns));
  }
  if (opt == 0)
    return answer(id, q, Verdict::unknown,
                  p.workload.phase == "training"
                      ? "the trace names no optimizer op or kernel, so the weight update's time cannot be measured"
                      : "the trace does not show a training step (no backward or optimizer op or kernel)");
  std::string update =
      "the weight update's kernels (named as optimizer kernels, or launched by the "
      "optimizer's step) are " +
      pct1(opt) + " of kernel time";
  if (comm > 0 && p.kernel_time_ns > 0)
    update += " (besides " + pct1(double(comm) / double(p.kernel_time_ns)) +
              " in communication kernels the optimizer's step launches: see the findings on communication)";
  // A trace filtered to the launches: the step's host time is recorded,
  // what it waited for in it (a sync, its own communication) is not, so its
  // GPU work is weighed without the communication.
  const bool filtered = !p.workload.host_filtered.empty();
  const TimeNs step_gpu = step_op ? step_op->gpu_total_ns - (filtered ? step_comm : 0) : 0;
  if (step_op && p.steps.total_ns > 0 && double(step_op->cpu_total_ns) >= 0.05 * double(p.steps.total_ns) &&
      step_op->cpu_total_ns >= 4 * std::max<TimeNs>(1, step_gpu)) {
    const TimeNs calls = static_cast<TimeNs>(std::max<std::uint64_t>(1, step_op->calls));
    if (filtered)
      return answer(id, q, Verdict::unknown,
                    update + "; but " + step_op->name + " holds the host " + dur(step_op->cpu_total_ns / calls) +
                        " per call (" + pct1(double(step_op->cpu_total_ns) / double(p.steps.total_ns)) +
                        " of step time) for " + dur(step_gpu / calls) +
                        " of GPU work besides communication, and the trace was filtered to the launches: whether "
                        "that time is the optimizer's own work or a wait inside it (a sync, its communication), "
                        "and so what overlapping or shortening it would save, the trace cannot tell");
    // What shortens it, from what the optimizer already is.
    const std::string& kind = p.workload.optimizer;
    const std::string shorter =
        kind == "per-parameter" ? "a multi-tensor (foreach) or fused optimizer shortens the step"
        : kind == "foreach"     ? "the optimizer is multi-tensor already: a fused one (fused=True) or a compiled "
                                  "optimizer step (torch.compile) shortens the step"
        : kind == "fused"       ? "the optimizer is fused already: what is left is the host's own work around it"
                                : "a multi-tensor or fused optimizer, where it is not one already, shortens the step";
    HelpAnswer a = answer(id, q, Verdict::no,
                          update + "; but " + step_op->name + " holds the host " + dur(step_op->cpu_total_ns / calls) +
                              " per call (" + pct1(double(step_op->cpu_total_ns) / double(p.steps.total_ns)) +
                              " of step time) for " + dur(step_op->gpu_total_ns / calls) +
                              " of GPU work: the update costs host time, which overlapping its GPU work does not "
                              "remove; where the GPU waits on the host (the critical path's CPU time), " +
                              shorter);
    if (numbered(p, "unfused-optimizer") || minor(p, "unfused-optimizer")) a.findings.push_back("unfused-optimizer");
    return a;
  }
  if (opt < 0.05) return answer(id, q, Verdict::no, update + ": too little to matter");
  // A share of little kernel time: measured against the GPUs' span.
  const double of_span = j.span ? opt * double(p.kernel_time_ns) / double(j.span) : 0.0;
  if (of_span < kMaterialShare)
    return answer(id, q, Verdict::no, update + ", " + pct1(of_span) + " of the GPUs' span: too little to matter");
  return answer(id, q, Verdict::no,
                update + ", and too little of it runs with nothing else on the GPU to gain from overlap");
}

// The GPUs' long gaps whose wait the trace cannot name, by kind; empty if none.
std::string held_words(const Profile& p) {
  const TimeNs queued = idle_of(p, "queued-gap"), unlaunched = idle_of(p, "unlaunched-gap");
  std::string s;
  if (queued) s = dur(queued) + " of gaps ended by held work whose cause the trace does not show";
  if (const TimeNs comm = idle_of(p, "comm-gap"))
    s += (s.empty() ? "" : ", ") + dur(comm) + " held at communication the trace likely did not record";
  if (unlaunched)
    s += (s.empty() ? "" : ", ") + dur(unlaunched) + " by ops with no launch in the trace, late launches or held work";
  if (const TimeNs unrecorded = idle_of(p, "unrecorded-gap"))
    s += (s.empty() ? "" : ", ") + dur(unrecorded) +
         " before a stream's first recorded op, perhaps work queued before the recording";
  return s.empty() ? s : " (on all GPUs: " + s + ")";
}

std::optional<HelpAnswer> answer_streams(const Profile& p, const JobTotals& j) {
  const std::string_view id = "more-streams";
  const std::string_view q = "more streams?";
  if (j.kernels == 0) return std::nullopt;
  if (const Finding* f = numbered(p, "low-concurrency"); gains(p, f)) return yes(p, id, q, {f});
  // Busy over its span, but the steps wait outside it: no stream fills that.
  if (j.utilization >= 0.9 && numbered(p, "step-host-time") && p.steps.total_ns > 0) {
    HelpAnswer a = answer(id, q, Verdict::no,
                          "the GPUs are busy " + pct1(j.utilization) + " of their span, and " +
                              pct1(double(p.steps.outside_gpu_ns) / double(p.steps.total_ns)) +
                              " of step time lies outside it with nothing launched: more streams cannot fill time "
                              "in which nothing is ready");
    a.findings.push_back("step-host-time");
    return a;
  }
  // Busy, but much of it communication with no compute beside it: the
  // overlap answer's matter, not shorter kernels.
  TimeNs exposed = 0, span = 0;
  for (const DeviceSummary& d : p.devices) exposed += d.exposed_communication_ns, span += d.span_ns;
  if (j.utilization >= 0.9 && span > 0 && 5 * exposed >= span) {
    HelpAnswer a = answer(id, q, Verdict::no,
                          "the GPUs are busy " + pct1(j.utilization) + " of their span (kernel concurrency " +
                              pct1(j.concurrency) + "), but " + pct1(ratio(exposed, span)) +
                              " of it is communication with no compute beside it: there is no idle time for "
                              "another stream to fill, and shorter kernels would not shorten that time; the "
                              "communication is what to look at (the overlap answer above)");
    if (numbered(p, "exposed-communication")) a.findings.push_back("exposed-communication");
    return a;
  }
  if (j.utilization >= 0.9)
    return answer(id, q, Verdict::no,
                  "the GPUs are busy " + pct1(j.utilization) + " of their span (kernel concurrency " +
                      pct1(j.concurrency) +
                      "): there is no idle time for another stream to fill; make the kernels shorter instead");
  // Why not, by the rule's gate on the GPU with the most kernel time.
  const DeviceSummary* main = nullptr;
  for (const DeviceSummary& d : p.devices)
    if (d.kernels && (!main || d.kernel_time_ns > main->kernel_time_ns)) main = &d;
  if (main && j.concurrency < 0.05) {
    const ConcurrencyRoom room = concurrency_room(*main);
    const std::string gpu = "GPU " + std::to_string(main->id);
    // Idle longer than busy: another stream would have nothing to run in that
    // time, whether or not kernels would fit beside the ones that run.
    if (room.idle_bound) {
      const TimeNs waits = main->idle_host_wait_ns + main->idle_kernel_wait_ns + main->idle_other_ns;
      if (one_time_capture(p))
        return answer(id, q, Verdict::unknown,
                      gpu + " waits " + dur(waits) + ", longer than its " + dur(main->kernel_busy_ns) +
                          " of kernels, but " + one_time_words(p));
      // The host's part only where the launches say it.
      const bool known = launches_cover(p);
      const double host_share = waits ? double(main->idle_host_wait_ns) / double(waits) : 0.0;
      // Waiting mostly for work held by a dependency the trace does not
      // show (or for ops whose launch it lacks): what that work waits for
      // decides whether anything independent could run meanwhile.
      if (!known || host_share < 0.5)
        return answer(id, q, Verdict::unknown,
                      gpu + " waits " + dur(waits) + ", longer than its " + dur(main->kernel_busy_ns) +
                          " of kernels, " +
                          (known ? pct1(1.0 - host_share) + " of it for work queued but held by a dependency"
                           : main->idle_host_wait_ns
                               ? "only " + dur(main->idle_host_wait_ns) + " of it for launches the trace shows"
                               : "none of it for a launch the trace shows") +
                          held_words(p) +
                          ": whether independent work could run on another stream meanwhile depends on what it "
                          "waited for, which the trace cannot tell (see the findings on idle time)");
      const std::string host = " (for the host " + pct(host_share) + ")";
      std::string why = gpu + " waits for the host or for dependencies " + dur(waits) + host + ", longer than its " +
                        dur(main->kernel_busy_ns) +
                        " of kernels: nothing is ready to run beside them (see the findings on idle time)";
      if (!room.room && room.used > 0) why += "; while they run, " + rules::room_words(room, *main);
      // Streams the program already has: the verdict is not for want of them.
      if (main->streams > 1) why += "; it already runs its GPU work on " + std::to_string(main->streams) + " streams";
      return answer(id, q, Verdict::no, why);
    }
    if (room.room && room.host_bound)
      return answer(
          id, q, Verdict::no,
          gpu + " waits for the host's late launches " + dur(main->idle_host_wait_ns) + ", " +
              pct(ratio(main->idle_host_wait_ns, main->kernel_busy_ns)) + " of its " + dur(main->kernel_busy_ns) +
              " of kernels: the host does not keep even one stream fed, so work for another would be "
              "launched as late (see the findings on launches)" +
              (main->streams > 1 ? "; it already runs its GPU work on " + std::to_string(main->streams) + " streams"
                                 : std::string()));
    if (room.room && room.side_work_apart)
      return answer(id, q, Verdict::no, "copies and communication already run on streams of their own on " + gpu);
    if (!room.room && main->kernels >= 2 && room.used > 0)
      return answer(id, q, Verdict::no, rules::room_words(room, *main) + ": another kernel would not fit beside them");
    if (!room.room && room.used <= 0)
      return answer(id, q, Verdict::unknown,
                    "kernel concurrency is " + pct1(j.concurrency) +
                        ", but the trace lacks the kernels' launch "
                        "configuration (grid, block, registers) to tell whether another kernel would fit beside them");
  }
  return answer(id, q, Verdict::no,
                "kernel concurrency is " + pct1(j.concurrency) + " and the idle time (" + pct1(1.0 - j.utilization) +
                    " of the span) has other causes: see the findings on idle time");
}

std::optional<HelpAnswer> answer_layout(const Profile& p, const JobTotals& j) {
  const std::string_view id = "data-layout";
  const std::string_view q = "a different data layout?";
  if (j.kernels == 0) return std::nullopt;
  const Finding* pad = numbered(p, "padding-hotspot");
  const Finding* bc = numbered(p, "broadcast-hotspot");
  const Finding* tr = numbered(p, "layout-transpose");
  if (gains(p, pad) || gains(p, bc) || gains(p, tr)) {
    // Layout copies of permuted views are removed by keeping the consumer's
    // layout, not by a symmetric pad or a fused bias.
    const bool copies = tr && tr->variant == "copies";
    std::string parts;
    double all = 0;
    for (const auto& [cat, word] :
         {std::pair{KernelCategory::padding, "padding"}, std::pair{KernelCategory::broadcast, "broadcast"},
          std::pair{KernelCategory::transpose, copies ? "layout copies" : "transposes"}}) {
      const double s = own_category_share(p, {cat});
      if (s >= 0.005) parts += (parts.empty() ? "" : ", ") + std::string(word) + " " + pct1(s), all += s;
    }
    return yes(p, id, q, {pad, bc, tr},
               pct1(all) + " " + kernel_time_words(p) + " is layout overhead (" + parts + ") that " +
                   (copies && !gains(p, pad) && !gains(p, bc) ? "keeping tensors in the layout their consumer reads"
                                                              : "a fused or symmetric layout") +
                   " removes");
  }
  for (std::string_view rule : {"padding-hotspot", "broadcast-hotspot", "layout-transpose"})
    if (const Finding* f = without_gain(p, rule)) return no_gain(p, id, q, *f);
  return answer(
      id, q, Verdict::no,
      "padding, broadcast and transpose kernels take " +
          pct1(own_category_share(p, {KernelCategory::padding, KernelCategory::broadcast, KernelCategory::transpose})) +
          " " + kernel_time_words(p));
}

// The input type of a Tensile GEMM (rocBLAS, hipBLASLt), from the field
// that follows its index fields: Cijk_Ailk_Bljk_<types>_…. The field opens
// with a type code, the inputs' (or, where A and B differ from the math's
// type, A's then B's), and may go on with the output's and the compute's:
// "BBS" (bf16 in and out, fp32 compute), "B" (then "_BS_BH" in hipBLASLt's
// newer spelling), "HHS", "SB" (fp32, then "B" for beta), "I8II", "F8B8…".
// True when that first code is a 16-, 8- or 4-bit type; false when it is a
// wider one or the name is not Tensile's.
bool tensile_reduced_input(std::string_view n) {
  // The C, A and B index fields: "Cijk_", "Ailk_", "Bljk_" (a letter, then
  // the indices in lower case; Tensile writes a mirrored index in upper case).
  std::size_t at = 0;
  for (char field : {'C', 'A', 'B'}) {
    if (at >= n.size() || n[at] != field) return false;
    const std::size_t end = n.find('_', at);
    if (end == std::string_view::npos || end == at + 1) return false;
    at = end + 1;
  }
  const std::string_view types = n.substr(at);
  for (std::string_view narrow : {"4xi8", "F8", "B8", "I8", "H", "B"})
    if (types.starts_with(narrow)) return true;
  return false;
}

// A 16-, 8- or 4-bit element type in an AMD kernel's name: bf16/fp16/fp8 words,
// or Tensile's type code (tensile_reduced_input). A word counts only as a
// word: not after a letter ("buf8"), nor before one ("halfway"), except the
// FP8 formats' e4m3/e5m2 ("f8E4M3FN").
bool amd_reduced_precision_name(std::string_view n) {
  if (tensile_reduced_input(n)) return true;
  auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  std::string lower(n);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view w : {"bf16", "bfloat16", "half", "fp16", "f16", "fp8", "f8", "mxfp8", "mxfp4", "fp4"})
    for (std::size_t i = lower.find(w); i != std::string::npos; i = lower.find(w, i + 1)) {
      const std::string_view after = std::string_view(lower).substr(i + w.size());
      const bool fp8_format = w.back() == '8' && (after.starts_with("e4m3") || after.starts_with("e5m2"));
      // "x" between sizes and types is a separator: 16x128, bf16xmxfp4.
      const bool starts = i == 0 || !letter(lower[i - 1]) || (lower[i - 1] == 'x' && i >= 2 && digit(lower[i - 2]));
      const bool ends =
          after.empty() || !letter(after.front()) || fp8_format || (after.front() == 'x' && digit(w.back()));
      if (starts && ends) return true;
    }
  return false;
}

// The framework's ops say their math's precision where the trace records
// their input types: the GPU time they launched themselves, in GEMMs,
// convolutions and attention with a recorded type, and of it the part with
// 32- or 64-bit inputs (an example op).
// `narrow`: the part with 16- or 8-bit inputs.
struct OpPrecision {
  TimeNs typed = 0, wide = 0, narrow = 0;
  // The same over the outermost typed ops (no GEMM, convolution or
  // attention op around them), with the ops inside them: a convolution
  // whose kernels a backend's op launches (aten::conv2d around
  // aten::miopen_convolution) covers them with its recorded types.
  TimeNs covered = 0, covered_narrow = 0;
  std::string example;
};
bool math_family(const OpRow& r) { return r.family == "gemm" || r.family == "convolution" || r.family == "attention"; }
OpPrecision op_precision(const Profile& p) {
  OpPrecision o;
  std::set<std::string_view> math;
  for (const OpRow& r : p.ops)
    if (math_family(r)) math.insert(r.name);
  for (const OpRow& r : p.ops) {
    if (!math_family(r) || r.math.empty() || r.math == "unknown" || r.gpu_total_ns <= 0) continue;
    if (path_has(r.path, [&](std::string_view n) { return math.count(n) > 0; })) continue;
    o.covered += r.gpu_total_ns;
    if (r.math == "bf16" || r.math == "fp16" || r.math == "fp8") o.covered_narrow += r.gpu_total_ns;
  }
  for (const OpRow& r : p.ops) {
    if ((r.family != "gemm" && r.family != "convolution" && r.family != "attention") || r.math.empty() ||
        r.math == "unknown" || r.gpu_self_ns <= 0)
      continue;
    o.typed += r.gpu_self_ns;
    if (r.math == "bf16" || r.math == "fp16" || r.math == "fp8") o.narrow += r.gpu_self_ns;
    if (r.math != "fp32" && r.math != "fp64") continue;
    o.wide += r.gpu_self_ns;
    if (o.example.empty()) o.example = r.name + " " + r.math;
  }
  return o;
}

// Another vendor's GPUs: AMD's matrix-core kernels say so in their names
// (is_amd_matrix_core_kernel), and some say their element type; a kernel
// without such a name may still use them, so the names can tell "already
// reduced precision on the matrix cores", never the opposite.
// Whether the framework ops that launched `kernel` (those of the op table
// that list it among their kernels) are GEMMs, convolutions or attention
// that all record 16- or 8-bit inputs: the precision a kernel's name does
// not say (AOTriton's attn_fwd), from what its launching ops were given.
bool launched_with_narrow_inputs(const Profile& p, std::string_view kernel) {
  bool any = false;
  for (const OpRow& r : p.ops) {
    if (r.family != "gemm" && r.family != "convolution" && r.family != "attention") continue;
    if (std::none_of(r.top_kernels.begin(), r.top_kernels.end(), [&](const OpKernel& k) { return k.name == kernel; }))
      continue;
    if (r.math != "bf16" && r.math != "fp16" && r.math != "fp8") return false;
    any = true;
  }
  return any;
}

HelpAnswer precision_off_nvidia(const Profile& p, const JobTotals& j) {
  const std::string_view id = "mixed-precision";
  const std::string_view q = "mixed precision (tensor cores)?";
  TimeNs matrix = 0, reduced = 0, by_ops = 0, all = 0;
  for (const Hotspot& h : p.hotspots)
    if (h.category == KernelCategory::convolution || h.category == KernelCategory::gemm ||
        h.category == KernelCategory::attention) {
      all += h.stats.total;
      // AMD's marks, or the vendor-neutral ones (FP8/FP4 products, fused
      // flash attention) that set Hotspot::tensor_cores.
      if (!is_amd_matrix_core_kernel(h.name) && !h.tensor_cores) continue;
      matrix += h.stats.total;
      if (amd_reduced_precision_name(h.name))
        reduced += h.stats.total;
      else if (launched_with_narrow_inputs(p, h.name))
        by_ops += h.stats.total;
    }
  if (category_share(p, {KernelCategory::convolution, KernelCategory::gemm, KernelCategory::attention}) == 0)
    return answer(id, q, Verdict::not_applicable, "no convolution, GEMM or attention kernels in this trace");
  const std::string share =
      pct1(ratio(matrix, all)) +
      " of the listed convolution, GEMM and attention time runs in kernels named for AMD's "
      "matrix cores (mfma, Tensile's MI tiles, Composable Kernel's xdl and fmha, wmma, FP8/FP4 products, flash "
      "attention, AOTriton's attn_fwd), " +
      pct1(ratio(reduced, all)) + " with a 16- or 8-bit type in the name" +
      (by_ops > 0 ? " and " + pct1(ratio(by_ops, all)) +
                        " in kernels whose launching GEMM, convolution or attention ops all record 16- or 8-bit "
                        "inputs"
                  : std::string());
  if (all > 0 && (reduced + by_ops) * 10 >= all * 9)
    return answer(id, q, Verdict::no, share + ": the math already runs in reduced precision on the matrix cores");
  const OpPrecision op = op_precision(p);
  const TimeNs span = j.span;
  // The ops' recorded input types cover the math and say 16 or 8 bits: the
  // kernels whose names do not say (a Triton flash attention's attn_fwd)
  // multiply in reduced precision too, which AMD's matrix cores take.
  if (all > 0 && op.typed * 10 >= all * 9 && op.narrow * 10 >= op.typed * 9)
    return answer(id, q, Verdict::no,
                  "the framework's ops record 16- or 8-bit inputs for " + pct1(ratio(op.narrow, op.typed)) +
                      " of the GPU time of the GEMMs, convolutions and attention whose types it records, and " + share +
                      ": the math already runs in reduced precision, which AMD's matrix cores take");
  // The same from the outermost typed ops with the ops inside them (the
  // backend's convolution op records no types of its own).
  if (all > 0 && op.covered * 10 >= all * 9 && op.covered_narrow * 10 >= op.covered * 9 && op.wide == 0)
    return answer(id, q, Verdict::no,
                  "the framework's GEMM, convolution and attention ops record 16- or 8-bit inputs for " +
                      pct1(ratio(op.covered_narrow, op.covered)) +
                      " of their GPU time with the ops inside them (none records 32- or 64-bit inputs), and " + share +
                      ": the math already runs in reduced precision, which AMD's matrix cores take");
  if (op.typed > 0 && op.wide * 2 >= op.typed) {
    const std::string said = "the framework's ops record 32- or 64-bit inputs for " + pct1(ratio(op.wide, op.typed)) +
                             " of the GPU time of the GEMMs, convolutions and attention whose types it records (" +
                             op.example + ")";
    if (span > 0 && ratio(all, span) < kMaterialShare)
      return answer(id, q, Verdict::no,
                    said + ", but that math takes " + pct1(ratio(all, span)) +
                        " of the GPUs' span: too little to shorten the step");
    return answer(id, q, Verdict::unknown,
                  said +
                      ": reduced precision (autocast to bf16) would move it to the matrix cores' faster rates, "
                      "but by how much that shortens the step the trace cannot tell on these GPUs");
  }
  return answer(id, q, Verdict::unknown,
                "the GPUs are not NVIDIA's: " + share +
                    "; in which precision the other kernels multiply, and whether the unmarked ones use the matrix "
                    "cores, their names do not tell");
}

// A tensor-core kernel whose name says TF32 (fp32 data on the tensor
// cores): cuDNN's and cuBLAS's "tf32" kernels, CUTLASS's "s1688" ones
// (fp32 operands, the m16n8k8 TF32 shape); not one that names a 16- or
// 8-bit type too.
bool tf32_kernel(std::string_view n) {
  for (std::string_view narrow : {"bf16", "f16", "fp16", "h1688", "h16816", "i8", "e4m3", "e5m2", "fp8"})
    if (n.find(narrow) != std::string_view::npos) return false;
  return n.find("tf32") != std::string_view::npos || n.find("s1688") != std::string_view::npos;
}
// The identifier of a TF32 kernel's name that says so (a CUTLASS
// template's "cutlass_80_tensorop_s1688gemm_…" inside "cutlass::Kernel<…>").
std::string tf32_identifier(std::string_view n) {
  std::size_t at = n.find("tf32");
  if (at == std::string_view::npos) at = n.find("s1688");
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::size_t b = at, e = at;
  while (b > 0 && ident(n[b - 1])) --b;
  while (e < n.size() && ident(n[e])) ++e;
  return format::short_kernel_name(n.substr(b, e - b));
}

// A kernel whose name says plain FP32 math on the CUDA cores: cuBLAS's and
// CUTLASS's SIMT sgemm kernels (ampere_sgemm_128x64_nn, cutlass_80_simt_sgemm_…).
bool fp32_simt_kernel(std::string_view n) { return n.find("sgemm") != std::string_view::npos; }

// The matrix math of the precision answer: convolution, GEMM and attention
// kernel time, the tensor cores' share of it, and their TF32-named part.
struct MatrixMath {
  TimeNs all = 0, tc = 0, tf32 = 0;
  const Hotspot* tf32_top = nullptr;
};

// Tensor cores on fp32 data (TF32: the ops record fp32 inputs, or the
// kernels' names say TF32): not reduced precision. Which part runs TF32,
// which plain FP32 kernels, and how large that matrix math is: bf16 or fp16
// would halve its bytes and double the TF32 part's rate (more for the FP32
// kernels', at most all of their time), so the most it saves is half the
// TF32 time and all the rest, said as a bound under kPriorityShare of the
// span.
// The no-tensor-cores rule's fix, narrowed to the trace's categories: the
// convolution and GEMM time halved, as bf16 or fp16 at twice TF32's rate
// would at most on the tensor cores.
std::string precision_change(const Profile& p) {
  for (const FindingRule& r : finding_rules())
    if (r.id == "no-tensor-cores") return graph::present_fix(p, r.fix);
  return {};
}

// The replay's prediction of precision_change(), where it made one.
const Prediction* precision_prediction(const Profile& p) {
  const std::string change = precision_change(p);
  if (change.empty() || p.simulation.replayed_step_ns <= 0) return nullptr;
  for (const Prediction& x : p.simulation.predictions)
    if (x.change == change && x.step_ns > 0) return &x;
  return nullptr;
}

// The TF32 answer from the replay of the math at half its time: yes where
// the median step is 1 % shorter or more; later where it is only after the
// changes that save time now (as a finding's fix that saves nothing alone,
// no_gain()); else no, with the replay's step.
HelpAnswer precision_replayed(const Profile& p, std::string said, const Prediction& r) {
  const std::string_view id = "mixed-precision";
  const std::string_view q = "mixed precision (tensor cores)?";
  const Simulation& s = p.simulation;
  const TimeNs now = s.replayed_step_ns;
  said +=
      ": bf16 or fp16 (autocast) would halve its bytes and double the tensor cores' rate; the replay with that "
      "math at half its time (" +
      r.change + ")";
  if (materially_shorter(now, r.step_ns)) {
    // The report adds the change and its step (HelpAnswer::fix).
    HelpAnswer a =
        answer(id, q, Verdict::yes, said + " makes the median step " + pct1(ratio(now - r.step_ns, now)) + " shorter");
    a.fix = r.change;
    a.predicted_step_ns = r.step_ns;
    return a;
  }
  said += r.step_ns < now ? " makes the median step only " + dur(now - r.step_ns) + " shorter (" + dur(now) + " -> " +
                                dur(r.step_ns) + ", under " + pct(kMaterialShare) + ")"
                          : " makes no step faster (" + dur(now) + " -> " + dur(r.step_ns) + ")";
  // A trace filtered to its launches keeps none of the host's syncs: the
  // replay holds each launch where it was, though a sync on this math may
  // have held it.
  if (!p.workload.host_filtered.empty())
    return answer(id, q, Verdict::unknown,
                  said +
                      ", but the trace was filtered to its launches: whether the host waited on the GPU's "
                      "math before them (a synchronization it does not keep), which the replay cannot see, the "
                      "trace cannot tell");
  if (!s.together.change.empty() && r.after_step_ns > 0 && materially_shorter(s.together.step_ns, r.after_step_ns))
    return answer(id, q, Verdict::later,
                  said + ": the step's time is decided elsewhere now. After " + s.together.change +
                      " (the changes that save time now), it would shorten the median step " + dur(s.together.step_ns) +
                      " -> " + dur(r.after_step_ns) + ": worth making after them");
  return answer(id, q, Verdict::no, said + ": the step's time is decided elsewhere");
}

HelpAnswer precision_tf32(const Profile& p, const JobTotals& j, const MatrixMath& m, const OpPrecision& op, bool by_ops,
                          bool* wants_replay) {
  constexpr double kPriorityShare = 0.05;
  const std::string_view id = "mixed-precision";
  const std::string_view q = "mixed precision (tensor cores)?";
  const std::string on =
      pct1(double(m.tc) / double(m.all)) + " of the listed convolution, GEMM and attention time runs on tensor cores";
  std::string said = by_ops ? on + ", but the framework's ops record fp32 inputs for " +
                                  pct1(ratio(op.wide, op.typed)) + " of the GEMM, convolution and attention time (" +
                                  op.example + "), so those tensor cores run TF32, at half the rate of bf16 or fp16"
                            : on + ", but " + pct1(ratio(m.tf32, m.tc)) +
                                  " of that time is in kernels whose names say TF32 (" +
                                  tf32_identifier(m.tf32_top->name) +
                                  "): fp32 data on the tensor cores, at half the rate of bf16 or fp16";
  TimeNs simt = 0;
  const Hotspot* simt_top = nullptr;
  for (const Hotspot& h : p.hotspots)
    if ((h.category == KernelCategory::convolution || h.category == KernelCategory::gemm ||
         h.category == KernelCategory::attention) &&
        !h.tensor_cores && fp32_simt_kernel(h.name)) {
      simt += h.stats.total;
      if (!simt_top || h.stats.total > simt_top->stats.total) simt_top = &h;
    }
  if (simt_top)
    said += "; " + pct1(ratio(simt, m.all)) + " runs in plain FP32 kernels on the CUDA cores (" +
            format::short_kernel_name(simt_top->name) + ")";
  if (m.all - m.tc - simt > 0)
    said += "; " + pct1(ratio(m.all - m.tc - simt, m.all)) + " in kernels whose names show neither";
  const double of_span = j.span ? double(m.all) / double(j.span) : 0.0;
  const double kernel_share =
      category_share(p, {KernelCategory::convolution, KernelCategory::gemm, KernelCategory::attention});
  said += ". That matrix math is " + pct1(kernel_share) + " of kernel time, " + pct1(of_span) + " of the GPUs' span";
  if (of_span < kMaterialShare) return answer(id, q, Verdict::no, said + ": too little to shorten the step");
  // What that saves the replay tells, where it ran (simulation_plan adds it).
  if (wants_replay) *wants_replay = true;
  if (const Prediction* r = precision_prediction(p)) return precision_replayed(p, said, *r);
  // bf16 or fp16 would halve its bytes and double the TF32 part's rate.
  const TimeNs most = m.all - m.tc / 2;
  const double most_share = j.span ? double(most) / double(j.span) : 0.0;
  // Small but over the 1 % the findings number: the bound, said as such.
  if (most_share < kPriorityShare)
    return answer(id, q, Verdict::unknown,
                  said +
                      ": bf16 or fp16 (autocast) would halve its bytes and double the tensor cores' rate, saving "
                      "at most " +
                      dur(most) + " (" + pct1(most_share) +
                      " of the span); how much of the step that would save the trace cannot tell without replaying "
                      "it");
  return answer(id, q, Verdict::unknown,
                said +
                    ": bf16 or fp16 (autocast) would halve its bytes and double the tensor cores' rate; how much "
                    "of the step that would save the trace cannot tell without replaying it");
}

std::optional<HelpAnswer> answer_precision_of(const Profile& p, const JobTotals& j, bool* wants_replay) {
  const std::string_view id = "mixed-precision";
  const std::string_view q = "mixed precision (tensor cores)?";
  if (j.kernels == 0) return std::nullopt;
  if (!rules::nvidia_gpus(p)) return precision_off_nvidia(p, j);
  if (const Finding* f = numbered(p, "no-tensor-cores"); gains(p, f)) return yes(p, id, q, {f});
  if (const Finding* f = without_gain(p, "no-tensor-cores")) return no_gain(p, id, q, *f);
  const double mm = category_share(p, {KernelCategory::convolution, KernelCategory::gemm, KernelCategory::attention});
  if (mm == 0) return answer(id, q, Verdict::not_applicable, "no convolution, GEMM or attention kernels in this trace");
  bool capable = false, known = false;
  for (const DeviceSummary& d : p.devices) {
    if (d.compute_major == 0) continue;
    known = true;
    capable = capable || d.compute_major >= 7;
  }
  if (known && !capable)
    return answer(id, q, Verdict::not_applicable, "the GPUs have no tensor cores (compute capability below 7.0)");
  TimeNs tc = 0, all = 0, tf32 = 0;
  const Hotspot* tf32_top = nullptr;
  for (const Hotspot& h : p.hotspots)
    if (h.category == KernelCategory::convolution || h.category == KernelCategory::gemm ||
        h.category == KernelCategory::attention) {
      all += h.stats.total, tc += h.tensor_cores ? h.stats.total : 0;
      if (h.tensor_cores && tf32_kernel(h.name)) {
        tf32 += h.stats.total;
        if (!tf32_top || h.stats.total > tf32_top->stats.total) tf32_top = &h;
      }
    }
  if (!known && tc == 0)
    return answer(id, q, Verdict::unknown,
                  "no kernel's name shows tensor-core math and the trace does not say which GPU ran it");
  if (all && double(tc) / double(all) >= 0.5) {
    const std::string on = pct1(double(tc) / double(all)) +
                           " of the listed convolution, GEMM and attention time already runs on tensor cores";
    // On fp32 inputs (the ops' recorded types) Ampere's and later tensor
    // cores run TF32: half the rate of bf16/fp16 on the same cores. A
    // kernel named TF32 is itself an Ampere-or-later one (TF32 came with
    // compute capability 8.0), where the trace does not say the GPU.
    const OpPrecision op = op_precision(p);
    bool ampere = !known && tf32_top;
    for (const DeviceSummary& d : p.devices) ampere = ampere || d.compute_major >= 8;
    // Without the ops' types, the kernels' names: TF32 kernels on half the
    // tensor-core time or more.
    const bool by_ops = ampere && op.typed > 0 && op.wide * 2 >= op.typed;
    const bool by_names = ampere && !by_ops && op.typed == 0 && tf32_top && 2 * tf32 >= tc;
    if (by_ops || by_names) return precision_tf32(p, j, {all, tc, tf32, tf32_top}, op, by_ops, wants_replay);
    return answer(id, q, Verdict::no, on);
  }
  // Tensor cores already run some of the math (the no-tensor-cores finding
  // stays silent from its threshold up): they are in use, and the rest runs
  // in kernels that do not take them.
  if (all && tc > 0 && mm >= FindingThresholds{}.tensor_core_eligible_share) {
    const std::string said = pct1(double(tc) / double(all)) +
                             " of the listed convolution, GEMM and attention time already runs on tensor cores (TF32 "
                             "or reduced precision is in use); the rest, " +
                             dur(all - tc) + ", runs in kernels whose names show no tensor-core math";
    const double rest = j.span ? double(all - tc) / double(j.span) : 0.0;
    if (rest < kMaterialShare)
      return answer(id, q, Verdict::no,
                    said + ", " + pct1(rest) + " of the GPUs' span: too little to shorten the step");
    return answer(id, q, Verdict::unknown,
                  said + " (" + pct1(rest) +
                      " of the GPUs' span): whether those layers would take tensor cores (their dtypes and "
                      "shapes) the trace does not tell");
  }
  return answer(id, q, Verdict::no,
                "convolution, GEMM and attention take " + pct1(mm) +
                    " of kernel time, too little for tensor cores to shorten the step");
}

std::optional<HelpAnswer> answer_precision(const Profile& p, const JobTotals& j) {
  return answer_precision_of(p, j, nullptr);
}

// Not now, but next: the host keeps the queue filled, but it takes nearly
// the steps' time to issue their launches (StepSummary::host_issue_ns), so
// the GPU-side findings' savings beyond that margin would make the steps
// wait for launches: fixes that remove the launches as well (torch.compile,
// CUDA graphs) are what gains them. Said where those savings exceed the
// margin.
std::optional<HelpAnswer> launches_next(const Profile& p, const std::string& short_gaps) {
  const StepSummary& st = p.steps;
  // Per GPU, as the savings are: the steps of every GPU are summed.
  const TimeNs summed = launch_margin_ns(st);
  if (summed < 0) return std::nullopt;
  const std::size_t gpus = std::max<std::size_t>(1, p.devices.size());
  const TimeNs margin = summed / static_cast<TimeNs>(gpus);
  TimeNs claimed = 0;
  std::vector<std::string> ids;
  for (const Finding& f : p.findings)
    if (shortens_kernels(f.id) && f.saving_ns > 0) claimed += f.saving_ns, ids.push_back(f.id);
  if (claimed <= margin) return std::nullopt;
  TimeNs busy = 0;
  for (const Step& s : st.steps) busy += s.compute_ns + s.communication_ns + s.memcpy_ns;
  const bool one = st.steps.size() == 1;
  const std::string each = one ? "the step" : "the steps", whose = one ? "the step's" : "the steps'";
  std::string inflated;
  if (p.workload.python_ranges >= detail::kTracedPythonRanges) inflated = "with_stack=True (Python function ranges)";
  if (p.op_summary.with_shapes > 0)
    inflated += (inflated.empty() ? "" : " and ") + std::string("record_shapes=True (op input shapes)");
  HelpAnswer a =
      answer("cuda-graphs", "fewer launches (CUDA graphs)?", Verdict::later,
             "not now, but next: " + short_gaps + ", so the host keeps the GPU's queue filled; but it issues " + whose +
                 " launches in " + dur(st.host_issue_ns) + (one ? "" : " in all") + " for " + dur(busy) +
                 " of GPU work (" + each + " " + dur(st.total_ns) + "), so a GPU-side saving beyond " + dur(margin) +
                 (gpus > 1 ? " per GPU" : "") +
                 " needs the launches to go too (torch.compile, which also fuses the kernels, or CUDA graphs): the "
                 "findings that shorten kernels claim " +
                 dur(claimed) +
                 (inflated.empty() ? std::string()
                                   : ". The trace was recorded with " + inflated +
                                         ", which slow the host: its issue time may be shorter, and this margin "
                                         "larger, in a run without them"));
  for (const std::string& f : ids) a.findings.push_back(f);
  return a;
}

// An answer that says to capture the step, with the synchronizations
// between its launches that no capture holds (rules::capture_plan).
HelpAnswer with_capture_plan(const Profile& p, HelpAnswer a) {
  const rules::CapturePlan plan = rules::capture_plan(p);
  if (!plan.empty()) a.reason += "; but " + plan.blocked + ": " + plan.then;
  return a;
}

// A span mostly warm-up (first calls and set-up: the "warm-up" idle
// charge, half the span or more) hides the steady state from launch-bound,
// which weighs the whole span: the short gaps late launches ended are
// weighed against the span less warm-up instead. Where they hold
// launch-bound's threshold of it or more, the GPUs wait for the host's
// launches whenever they are past warm-up: yes, said as the steady state's,
// with how little of it the trace holds.
std::optional<HelpAnswer> launches_after_warm_up(const Profile& p, const JobTotals& j) {
  const TimeNs warm = idle_of(p, "warm-up"), late = p.launches.late_launch_idle_ns;
  if (j.span <= 0 || 2 * warm < j.span || late <= 0) return std::nullopt;
  const TimeNs steady = j.span - warm;
  const double share = ratio(late, steady), threshold = FindingThresholds{}.launch_host_wait_share;
  if (share < threshold) return std::nullopt;
  const std::string steps = p.steps.steps.empty() ? std::string()
                                                  : " (" + format::count(p.steps.steps.size(), "step", "steps") +
                                                        " found, " + dur(p.steps.total_ns) + ")";
  return answer("cuda-graphs", "fewer launches (CUDA graphs)?", Verdict::yes,
                "past warm-up, the GPUs wait for the host's launches: warm-up (first calls and set-up, which graphs "
                "do not shorten) is " +
                    dur(warm) + " of their " + dur(j.span) + " span, and in the " + dur(steady) +
                    " outside it late launches leave them idle " + dur(late) + " (" + pct1(share) + ", in gaps " +
                    "shorter than 1 ms; launch-bound's threshold is " + pct1(threshold) +
                    "). The launch-bound finding weighs the whole span, where that is " + pct1(ratio(late, j.span)) +
                    ", and the trace holds little past warm-up" + steps +
                    ": capture the steady state's launches in a CUDA graph, and profile more of it to size the gain");
}

std::optional<HelpAnswer> answer_launches(const Profile& p, const JobTotals& j) {
  const std::string_view id = "cuda-graphs";
  const std::string_view q = "fewer launches (CUDA graphs)?";
  if (j.kernels == 0 || (!p.launches.launches && !p.launches.graph_ops)) return std::nullopt;
  const Finding* lb = numbered(p, "launch-bound");
  const Finding* lo = numbered(p, "op-launch-overhead");
  if (lo && lo->variant != "launch") lo = nullptr;
  if (p.workload.execution == "cuda graphs") {
    const std::string already =
        std::string(p.workload.graph_kernels ? "the run already replays " : "the run already captures ") +
        rules::graph_words(p) + "s (" + p.workload.execution_evidence + ")";
    // What still runs eagerly between the graph launches, where a numbered
    // finding shows the GPU waiting for its launches: yes, for that part.
    if (!one_time_capture(p) && (gains(p, lb) || gains(p, lo))) {
      HelpAnswer a = yes(p, id, q, {lb, lo});
      if (a.verdict == Verdict::yes)
        a.reason = already +
                   ", but the GPUs still wait for the launches of what runs eagerly between them: " + a.reason +
                   "; capture that part too";
      return a;
    }
    return answer(id, q, Verdict::no,
                  already + (one_time_capture(p) ? "; the recording is its one-time capture and first calls: what "
                                                   "still runs eagerly in later calls, and whether they wait for "
                                                   "it, the trace cannot tell"
                                                 : ": see the findings for what still runs eagerly"));
  }
  if (gains(p, lb) || gains(p, lo)) {
    HelpAnswer a = with_capture_plan(p, yes(p, id, q, {lb, lo}));
    // Under PyTorch's Python tracer the host's time between launches is
    // inflated by an amount the trace does not show, unless launching alone
    // outpaces the GPU (most ops shorter than their launch call).
    if (python_traced(p) && !launches_outpace_gpu(p))
      a.reason +=
          "; the trace was recorded with PyTorch's Python tracer on (with_stack=True), which slows the host "
          "between launches by an amount it does not show, and only " +
          pct(p.launches.short_kernel_share) +
          " of GPU ops run shorter than their launch call: without the tracer the wait, and what graphs "
          "save, may be smaller (profile with with_stack=False to size it)";
    return a;
  }
  if (const Finding* f = without_gain(p, "launch-bound")) return no_gain(p, id, q, *f);
  if (std::optional<HelpAnswer> a = launches_after_warm_up(p, j)) return a;
  const TimeNs late = p.launches.late_launch_idle_ns;
  auto of_span = [&](TimeNs ns) { return pct1(j.span ? double(ns) / double(j.span) : 0.0); };
  const std::string short_gaps = "late launches left the GPUs idle " + dur(late) + " (" + of_span(late) +
                                 " of their span, in gaps shorter than 1 ms), below the launch-bound finding's "
                                 "threshold";
  // Long gaps a late launch ended are the host's other work between
  // launches: graphs do not shorten that, and the host does not keep the
  // queue filled then.
  const TimeNs long_late = idle_of(p, "late-launch-gap"), short_other = idle_of(p, "other");
  // Ops with no launch in the trace: the short gaps they (or held work)
  // ended may be late launches too, so the launch wait is a range.
  if (!launches_cover(p) && j.span > 0 && double(short_other) >= kMaterialShare * double(j.span))
    return answer(
        id, q, Verdict::unknown,
        short_gaps + "; but " + pct(unlaunched_share(p)) +
            " of the GPU ops have no launch in the trace, and the short gaps ended by them or by held work (" +
            dur(short_other) + ", " + of_span(short_other) + ") may be late launches too: the launch wait is between " +
            of_span(late) + " and " + of_span(late + short_other) + " of the span, the trace cannot tell where");
  if (j.span > 0 && double(long_late) >= kMaterialShare * double(j.span) && !p.workload.host_filtered.empty()) {
    // A trace filtered to its launches keeps nothing of what the host did
    // between them: that time's cause is unknown.
    HelpAnswer a = answer(id, q, Verdict::unknown,
                          short_gaps +
                              ": launch overhead is not what the GPUs wait for in short gaps. Their longer "
                              "gaps ended by late launches (" +
                              dur(long_late) + ", " + of_span(long_late) +
                              ") are host time this trace cannot explain: it was filtered to its launches, so whether "
                              "the host computed (which graphs do not remove), waited on a synchronization (which a "
                              "capture cannot hold) or ran framework code a graph would replay, it does not show");
    if (numbered(p, "gpu-idle-gaps")) a.findings.push_back("gpu-idle-gaps");
    return a;
  }
  if (j.span > 0 && double(long_late) >= kMaterialShare * double(j.span)) {
    HelpAnswer a = answer(id, q, Verdict::no,
                          short_gaps +
                              ": launch overhead is not what the GPUs wait for. Their longer gaps ended by "
                              "late launches (" +
                              dur(long_late) + ", " + of_span(long_late) +
                              ") are the host's other work between launches, which graphs do not remove");
    if (numbered(p, "gpu-idle-gaps")) a.findings.push_back("gpu-idle-gaps");
    return a;
  }
  if (std::optional<HelpAnswer> a = launches_next(p, short_gaps)) return with_capture_plan(p, std::move(*a));
  if (j.utilization < 0.9)
    return answer(id, q, Verdict::no,
                  short_gaps + ": the rest of the GPUs' idle time (" + pct1(1.0 - j.utilization) +
                      " of their span in all) lies in gaps of 1 ms or more, or waits for something other than a "
                      "launch, and graphs shorten neither (see the findings on idle time)");
  return answer(id, q, Verdict::no, short_gaps + ": the host keeps the GPU's queue filled nearly all the time");
}

// Whether a larger batch fits in memory: larger-batch-fits (numbered or
// minor), memory-pressure, or what the trace cannot say, added to `a`.
void add_batch_memory(const Profile& p, HelpAnswer* a) {
  const Finding* fits = numbered(p, "larger-batch-fits");
  if (!fits) fits = minor(p, "larger-batch-fits");
  if (fits) {
    a->reason += "; and memory allows it: " + fits->title;
  } else if (const Finding* full = numbered(p, "memory-pressure")) {
    a->reason += "; but memory is near capacity: " + full->title;
    a->findings.push_back(full->id);
  } else {
    bool recorded = false;
    for (const DeviceSummary& d : p.devices) recorded = recorded || (d.memory_bytes && d.peak_allocated_bytes);
    // Memory records the importer could not tie to these GPUs are records
    // all the same: the option that makes them is on.
    bool elsewhere = false;
    for (const auto& [key, n] : p.trace_stats)
      elsewhere = elsewhere || (key == "import.unattributed.memory_events" && n);
    a->reason += recorded ? "; whether a batch large enough to matter fits, the memory peak does not show (it is over "
                            "half the GPU's memory, or leaves no room for one 1.5x larger)"
                 : elsewhere ? "; whether a larger batch fits in memory the trace does not say (its memory records "
                               "name a GPU that ran none of its work: import.unattributed.memory_events)"
                             : "; whether a larger batch fits in memory the trace does not say (no memory records: "
                               "torch.profiler's profile_memory=True)";
  }
}

// Asked only when the trace shows work too small for the GPU: measured
// (busy-not-working), or a product whose main kernel launches fewer blocks
// than the GPU has SMs (op-below-roofline's "too-small-grid"). Without either,
// a batch size is not something the trace can judge, and no answer is given.
std::optional<HelpAnswer> answer_batch(const Profile& p, const JobTotals&) {
  const std::string_view id = "larger-batch";
  const std::string_view q = "a larger batch per GPU?";
  HelpAnswer a = answer(id, q, Verdict::yes, {});
  bool small = false;
  // A launch-bound run (the GPU waits for the host's next launch): a larger
  // batch puts more work behind each launch, at the same host cost.
  const Finding* lb = numbered(p, "launch-bound");
  // The launch gaps of a one-time capture trace are not the steady state's
  // (its launch-bound finding is a minor line for that reason).
  if (!lb && one_time_capture(p)) lb = minor(p, "launch-bound");
  const bool capture_only = gains(p, lb) && one_time_capture(p);
  // Nor are they the program's alone where the recording itself slowed the
  // host, by an amount the trace does not show (PyTorch's Python tracer,
  // with_stack=True), and no trace records the tracer's own cost to take it
  // out: the wait stands only where most GPU ops run shorter than their
  // launch call (HTA's short-kernel rule), a runtime call the tracer does not
  // slow, so that launching alone outpaces the GPU. A serving engine's batch
  // is unknown for its own reason (below).
  const bool traced_host = python_traced(p);
  const bool outpaced = launches_outpace_gpu(p);
  const bool traced = gains(p, lb) && !capture_only && traced_host && !outpaced;
  const bool per_launch = gains(p, lb) && !capture_only && !traced;
  if (per_launch) {
    small = true;
    a.reason =
        "the GPU waits for the host's launches, and a larger batch puts more work behind each one at the "
        "same host cost: " +
        lb->title +
        (traced_host ? std::string("; the trace was recorded with PyTorch's Python tracer on, which slows the "
                                   "host, but most GPU ops run shorter than their launch call, which it does not "
                                   "slow")
                     : std::string());
    a.findings.push_back(lb->id);
  }
  // Numbered; or minor (its op too little of the run, or the critical path
  // leaving it no saving now) only beside that launch-bound reason, never
  // the answer's only ground.
  for (const std::vector<Finding>* list : {&p.findings, &p.minor_findings})
    for (const Finding& f : *list) {
      if (f.id != "busy-not-working" && !(f.id == "op-below-roofline" && f.variant == "too-small-grid")) continue;
      const bool numbered_here = list == &p.findings;
      if (!numbered_here && !per_launch) continue;
      if (!small || (per_launch && a.reason.find("; and ") == std::string::npos))
        a.reason += small ? "; and " + std::string(numbered_here ? "" : "a minor finding: ") + f.title
                          : "the work is too small for the GPU: " + f.title;
      small = true;
      if (numbered_here && std::find(a.findings.begin(), a.findings.end(), f.id) == a.findings.end())
        a.findings.push_back(f.id);
    }
  if (!small && capture_only)
    return answer(id, q, Verdict::unknown,
                  "the GPU waits for the host's launches here (" + lb->title + "), but " + one_time_words(p));
  if (!small && traced) {
    HelpAnswer u =
        answer(id, q, Verdict::unknown,
               "the GPU waits for the host's launches here (" + lb->title + ": " + pct1(lb->metric) + " vs a " +
                   pct1(lb->threshold) +
                   " threshold), but the trace was recorded with PyTorch's Python tracer on (with_stack=True), "
                   "which slows the host by an amount the trace does not show, and only " +
                   pct(p.launches.short_kernel_share) +
                   " of GPU ops run shorter than their launch call (a runtime call it does not slow): whether "
                   "the GPU would still wait for its launches without the tracer, and a larger batch help, the "
                   "trace cannot tell; profile with with_stack=False to measure it");
    u.findings.push_back(lb->id);
    return u;
  }
  if (!small) return std::nullopt;
  add_batch_memory(p, &a);
  // What grows with the batch besides the work behind each launch: input
  // loading the GPU waits for, and the all-to-all's bytes.
  // Input the GPU already waits for: a larger batch waits longer for it, so
  // the answer is "later", after the input.
  if (const Finding* in = numbered(p, "input-bound"); gains(p, in)) {
    a.reason += "; but the input the GPU already waits for grows with the batch: fix it first (" + in->title + ")";
    a.findings.push_back(in->id);
    a.verdict = Verdict::later;
  }
  if (const Finding* ex = numbered(p, "exposed-communication");
      ex && !p.collective_summary.kinds.empty() && p.collective_summary.kinds.front().kind == "all_to_all") {
    a.reason += "; and the exposed all-to-all's bytes grow with the batch too";
    a.findings.push_back(ex->id);
  }
  // A serving engine's batch is the requests it holds at once: its caps
  // raise it only while requests wait in its queue, which a GPU trace does
  // not show.
  if (!p.workload.engine.empty() && a.verdict == Verdict::yes) {
    a.verdict = Verdict::unknown;
    a.reason = "a serving engine (" + p.workload.engine +
               ") batches the requests it holds at once: raising its caps (vLLM's max_num_seqs and "
               "max_num_batched_tokens, SGLang's max_running_requests) makes the batch larger only while requests "
               "wait in its queue, which the trace does not show; " +
               a.reason;
  }
  return a;
}

std::optional<HelpAnswer> answer_ranks(const Profile& p, const JobTotals&) {
  if (p.ranks.size() <= 1) return std::nullopt;
  const std::string_view id = "rebalance-ranks";
  const std::string_view q = "rebalance the GPUs?";
  if (const Finding* f = numbered(p, "straggler"); gains(p, f)) return yes(p, id, q, {f});
  return answer(id, q, Verdict::no, "compute spread across GPUs is " + pct1(p.skew.compute_spread));
}

// The questions, in the order the report asks them.
constexpr std::optional<HelpAnswer> (*kQuestions[])(const Profile&, const JobTotals&) = {
    answer_input,     answer_communication, answer_weight_update, answer_streams, answer_layout,
    answer_precision, answer_launches,      answer_batch,         answer_ranks,
};

}  // namespace

// [SECTION] Entry points ---------------------------------------------------------------------

std::string precision_replay_change(const Profile& p) {
  if (p.workload.nothing_to_number()) return {};
  bool wants = false;
  answer_precision_of(p, JobTotals(p), &wants);
  return wants ? precision_change(p) : std::string();
}

std::vector<HelpAnswer> answer_questions(const Profile& p) {
  std::vector<HelpAnswer> out;
  // Nothing on the GPU, or a span of microseconds: the trace cannot answer
  // any of them (the report's Run line says why).
  if (p.workload.nothing_to_number()) return out;
  const JobTotals totals(p);
  for (auto* question : kQuestions)
    if (std::optional<HelpAnswer> a = question(p, totals)) out.push_back(std::move(*a));
  return out;
}

}  // namespace gpuscope::detail
