// The text report.
//
// [SECTION] Layout helpers (columns, wrapping)
// [SECTION] Report sections
// [SECTION] Diff
//
// Findings come first because they answer the user's question ("why is it
// slow, what do I change"); the tables after them are the evidence.
#include "export/report_text.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/ops/occupancy.h"
#include "words/damage_text.h"
#include "words/format.h"

namespace gpuscope {

namespace {

// "HIP graph" where a GPU of the profile is plainly not NVIDIA's, else "CUDA graph".
std::string graph_word(const Profile& p) {
  for (const DeviceSummary& d : p.devices)
    if (!nvidia_gpu(d.name, d.compute_major, d.compute_minor)) return "HIP graph";
  return "CUDA graph";
}

using namespace format;

// [SECTION] Layout helpers ----------------------------------------------------------------------

// Display width: UTF-8 continuation bytes (µ, →, …) take no column.
std::size_t columns(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string pad(std::string s, std::size_t w, bool right = false) {
  const std::size_t c = columns(s);
  if (c >= w) return s;
  return right ? std::string(w - c, ' ') + s : s + std::string(w - c, ' ');
}

// A table: the first row is the header; numbers right-aligned.
struct Table {
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right;  // per column
  std::string render(const std::string& indent) const {
    std::vector<std::size_t> w;
    for (const auto& r : rows)
      for (std::size_t i = 0; i < r.size(); ++i) {
        if (w.size() <= i) w.push_back(0);
        w[i] = std::max(w[i], columns(r[i]));
      }
    std::string out;
    for (const auto& r : rows) {
      std::string line = indent;
      for (std::size_t i = 0; i < r.size(); ++i) {
        const bool last = i + 1 == r.size();
        line += last && !(i < right.size() && right[i]) ? r[i] : pad(r[i], w[i], i < right.size() && right[i]);
        if (!last) line += "  ";
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  }
};

std::string wrap(std::string_view text, std::size_t width, const std::string& first, const std::string& rest) {
  std::string out, line = first;
  std::size_t line_cols = columns(first);
  const std::size_t indent = columns(rest);
  std::size_t i = 0;
  bool empty = true;
  while (i < text.size()) {
    const std::size_t j = std::min(text.find(' ', i), text.size());
    const std::string_view word = text.substr(i, j - i);
    if (!empty && line_cols + 1 + columns(word) > width) {
      out += line + "\n";
      line = rest;
      line_cols = indent;
      empty = true;
    }
    if (!empty) line += ' ', ++line_cols;
    line += word;
    line_cols += columns(word);
    empty = false;
    i = j + 1;
  }
  return out + line + "\n";
}

std::string source_words(TraceSource s) {
  switch (s) {
    case TraceSource::cupti: return "captured with gpuscope (CUPTI)";
    case TraceSource::chrome_json: return "imported Chrome/Kineto JSON";
    case TraceSource::synthetic: return "SYNTHETIC trace (generated, not measured)";
    case TraceSource::nsys_sqlite: return "imported Nsight Systems SQLite export";
    case TraceSource::unknown: break;
  }
  return "source unknown or mixed";
}

std::string at_offset(TimeNs t, TimeNs origin) { return "+" + duration(t - origin); }

// [SECTION] Report sections ----------------------------------------------------------------------

// Storage damage comes before anything else: every number after it covers
// only what survived. Recording drops are the dropped-records finding.
constexpr std::size_t kProblemsShown = 5;

void storage_damage(const Profile& p, std::string& out) {
  const bool several = p.trace_quality.files.size() > 1;
  bool any = false, lost = false;
  for (const FileQuality& q : p.trace_quality.files) {
    if (!q.damage.any()) continue;
    any = true;
    lost = lost || q.damage.truncated || q.damage.rows_lost() || q.damage.bytes_lost;
    std::string headline = damage_headline(q.damage, q.devices);
    if (several && !q.file.empty()) headline.insert(headline.find(':'), " " + q.file);
    out += headline + "\n";
    if (!several && !q.file.empty()) out += "  file       " + q.file + "\n";
    out += "  rows lost  " + rows_lost_text(q.damage) + "\n";
    for (std::size_t i = 0; i < q.damage.problems.size() && i < kProblemsShown; ++i)
      out += "  problem    " + q.damage.problems[i] + "\n";
    if (q.damage.problems.size() > kProblemsShown)
      out +=
          "  … and " + count(q.damage.problems.size() - kProblemsShown) + " more problems (gpuscope info lists them)\n";
  }
  if (lost) out += "The numbers below cover only what survived.\n";
  if (any) out += "\n";
}

// "4 GPUs", or "1 GPU with data (4 in the trace)" when a damaged file left some without any.
std::string gpu_count(const Profile& p) {
  if (p.devices.empty() && p.workload.run == "gpu-unrecorded") return "0 GPUs recorded";
  std::string s = std::to_string(p.devices.size()) + (p.devices.size() == 1 ? " GPU" : " GPUs");
  std::size_t declared = 0;
  bool note = false;
  for (const FileQuality& q : p.trace_quality.files) {
    declared += q.devices.declared.size();
    note = note || (q.damage.any() && q.devices.declared.size() > q.devices.with_data.size());
  }
  if (note) s += " with data (" + std::to_string(declared) + " in the trace)";
  return s;
}

}  // namespace

namespace {
// "1 rank", "8 ranks" (a job's files, or a trace's world size without its
// own rank), "rank 3 of 8" (one rank's trace), "rank 0 of an unknown
// number" (a rank without a world size), "1 rank of an MPI job".
std::string rank_words(const WorkloadKind& w) {
  const std::string own = w.rank >= 0 ? "rank " + std::to_string(w.rank) : "1 rank";
  if (w.ranks > 1)
    return w.rank >= 0 && w.world_size > 1 && w.ranks == static_cast<std::uint32_t>(w.world_size)
               ? own + " of " + count(w.ranks)
               : count(w.ranks) + " ranks";
  if (!w.mpi_evidence.empty()) return "1 rank of an MPI job";
  return w.rank_evidence.empty() ? std::string("1 rank") : own + " of an unknown number";
}
}  // namespace

std::string workload_line(const WorkloadKind& w, bool with_evidence) {
  const std::string fw = (w.framework == "unknown" ? std::string() : w.framework + ", ") +
                         (w.engine.empty() ? std::string() : w.engine + ", ");
  const std::string optimizer =
      w.optimizer.empty() || w.optimizer == "unknown" ? std::string() : ", " + w.optimizer + " optimizer";
  std::string line = fw + w.phase + ", " + w.execution + ", " + rank_words(w) +
                     (w.data_parallel == "ddp"          ? ", DDP"
                      : w.data_parallel == "all-reduce" ? ", data parallel (all-reduce in the backward, not DDP's)"
                                                        : "") +
                     optimizer + (w.bundled ? ", gpuscope's bundled workload" : "");
  if (!with_evidence) return line;
  std::string evidence = w.phase_evidence + "; " + w.execution_evidence;
  if (w.compiled_copies)
    evidence += "; " + count(w.compiled_copies, "copy", "copies") + " launched inside compiled regions";
  if (!w.framework_evidence.empty()) evidence += "; " + w.framework_evidence;
  if (!w.mpi_evidence.empty()) evidence += "; " + w.mpi_evidence;
  if (!w.rank_evidence.empty()) evidence += "; " + w.rank_evidence;
  if (!w.engine_evidence.empty()) evidence += "; " + w.engine_evidence;
  if (!w.data_parallel.empty()) evidence += "; " + w.data_parallel_evidence;
  if (!w.optimizer.empty()) evidence += "; optimizer " + w.optimizer + ": " + w.optimizer_evidence;
  return line + " (" + evidence + ")";
}

namespace {

// Idle time before a stream's first recorded op, where it is 1 % of the
// GPUs' span or more: the figures over it may count busy time as idle.
std::string unrecorded_warning(const Profile& p) {
  TimeNs span = 0;
  for (const DeviceSummary& d : p.devices) span += d.span_ns;
  for (const IdleCharge& c : p.idle_charges)
    if (c.cause == "unrecorded-gap" && span > 0 && c.ns * 100 >= span)
      return "WARNING: " + duration(c.ns) + " of the GPUs' idle time (" + percent1(double(c.ns) / double(span)) +
             " of their span) ends with a stream's first op in the trace, queued before that gap: the stream was "
             "probably still running work launched before the recording began (or waited for another process). "
             "Utilization, idle time and step times count it as idle; whether it was, the trace cannot tell. "
             "Start the recording between iterations, after a synchronize.\n";
  return {};
}

void header(const Profile& p, std::string& out) {
  std::string files;
  for (const std::string& f : p.files) files += (files.empty() ? "" : ", ") + f;
  out += "gpuscope report" + (files.empty() ? std::string() : ": " + files) + "\n";
  std::string line = "Source: " + source_words(p.source);
  if (!p.producer.empty()) line += " (" + p.producer + ")";
  line += " · " + gpu_count(p);
  if (!p.steps.steps.empty())
    line += " · " + format::count(p.steps.steps.size(), "step", "steps") + " (" +
            std::string(to_string(p.steps.source)) + ")";
  line += " · " + duration(p.window.duration()) + " recorded";
  out += line + "\n";
  const WorkloadKind& w = p.workload;
  out += "Workload: " + workload_line(w) + "\n";
  // No kernels, a span of microseconds, a one-shot program: what the findings can be about.
  if (!w.run_evidence.empty()) out += "Run: " + w.run_evidence + "\n";
  if (!w.host_filtered.empty()) out += "Recording: " + w.host_filtered + "\n";
  if (!p.clock_alignment.empty()) out += "Clocks: " + p.clock_alignment + "\n";
  for (const LeftOut& l : p.left_out)
    out += "Left out: " + (l.file.empty() ? l.problem : l.file + ": " + l.problem) + "\n";
  for (const std::vector<Finding>* list : {&p.findings, &p.minor_findings})
    for (const Finding& f : *list)
      if (f.id == "dropped-records") out += "WARNING: " + f.title + "\n";
  if (const LaunchStats& l = p.launches; l.first_op_delay_ns > 0)
    out += "WARNING: " +
           (l.first_op_delay_rank >= 0 ? "on rank " + std::to_string(l.first_op_delay_rank) + ", " : std::string()) +
           "the GPU's first op started " + duration(l.first_op_delay_ns) +
           " after its launch call returned, with no GPU work recorded before it" +
           (l.launches ? ", and every launched op waited at least " + duration(l.launch_delay.min) : std::string()) +
           (l.clock_offset_bound_ns > 0
                ? ": the host's and the GPU's clocks can disagree by at most " + duration(l.clock_offset_bound_ns) +
                      " (an op started that long after its launch call began, and none starts before), so at "
                      "least " +
                      duration(l.first_op_delay_ns - l.clock_offset_bound_ns) +
                      " of that wait is the GPU running work the trace does not hold (queued before the recording "
                      "began); how the rest splits between the two the trace cannot tell."
                : ": either the host's and the GPU's clocks disagree by about that much, or the GPU was still "
                  "running work the trace does not hold (queued before the recording began); the trace cannot tell "
                  "which.") +
           " Launch delays, queue depths and the critical path's split between host and GPU are unreliable here.\n";
  out += unrecorded_warning(p);
  out += "\n";
}

// "findings 1, 3": the 1-based positions of the numbered findings with these ids.
std::string finding_refs(const Profile& p, const std::vector<std::string>& ids) {
  std::string refs;
  int n = 0;
  for (std::size_t i = 0; i < p.findings.size(); ++i)
    if (std::find(ids.begin(), ids.end(), p.findings[i].id) != ids.end())
      refs += (n++ ? ", " : "") + std::to_string(i + 1);
  if (n == 0) return {};
  return (n == 1 ? "finding " : "findings ") + refs;
}

std::string_view verdict_word(Verdict v) {
  switch (v) {
    case Verdict::yes: return "YES";
    case Verdict::no: return "no";
    case Verdict::unknown: return "unknown";
    case Verdict::not_applicable: return "n/a";
    case Verdict::later: return "later";
  }
  return "";
}

// Whether the replay's measured step (the predictions' "now") is longer than
// the step table's median by 5% or more: the replay measures a step from its
// host range's start, with the work queued ahead of a first step that the
// step table leaves out (docs/whatif.md, "Limits").
bool replay_holds_backlog(const Profile& p) {
  const TimeNs median = p.steps.step_time.median;
  return median > 0 && p.simulation.status == "simulated" &&
         double(p.simulation.replayed_step_ns) >= 1.05 * double(median);
}

// "now 49.4 ms", and where the replay's step is not the step table's, which it is.
std::string replay_now(const Profile& p) {
  return "now " + duration(p.simulation.replayed_step_ns) + (replay_holds_backlog(p) ? " as replayed: see Steps" : "");
}

// Where a replayed change holds the fix of a finding whose saving is a lower
// bound (no-tensor-cores' "lower-bound" case: its --scale makes only the
// math faster, not the fp32 memory-bound work mixed precision speeds up
// too): saying so, with the finding; empty otherwise.
std::string lower_bound_words(const Profile& p, const std::string& change, bool with_ref) {
  for (const Finding& f : p.findings)
    if (f.variant == "lower-bound" && f.id == "no-tensor-cores" && !f.fix.empty() &&
        change.find(f.fix) != std::string::npos) {
      const std::string ref = finding_refs(p, {f.id});
      return "; a lower bound: it makes only the convolutions and GEMMs 2x faster, not the fp32 normalization and "
             "elementwise work mixed precision also speeds up" +
             (ref.empty() || !with_ref ? std::string() : " (" + ref + ")");
    }
  return {};
}

// The answer's reason, the numbered findings behind it and the replay's prediction.
std::string help_words(const Profile& p, const HelpAnswer& a) {
  std::string s = a.reason;
  if (const std::string refs = finding_refs(p, a.findings); !refs.empty()) s += " (" + refs + ")";
  if (a.predicted_step_ns > 0)
    s += "; " + a.fix + " predicts a median step of " + duration(a.predicted_step_ns) + " (" + replay_now(p) + ")" +
         lower_bound_words(p, a.fix, false);
  return s;
}

// The fixes that shorten the step only once the others are made (a
// finding's "after the others" replay), each with what it then predicts:
// "all of them together" leaves them out, and they add to it.
std::string after_the_others_words(const Profile& p) {
  const Simulation& sim = p.simulation;
  std::string s;
  for (const std::vector<Finding>* list : {&p.findings, &p.minor_findings})
    for (const Finding& f : *list) {
      if (f.after_to_ns <= 0 || f.fix.empty() || sim.together.change.find(f.fix) != std::string::npos ||
          s.find(f.fix) != std::string::npos)
        continue;
      const std::string ref = finding_refs(p, {f.id});
      s += "; adding " + f.fix + (ref.empty() ? std::string() : " (" + ref + ")") +
           ", which shortens the step only after these, predicts " + duration(f.after_to_ns);
    }
  return s;
}

void answers_section(const Profile& p, const ReportTextOptions& o, std::string& out) {
  if (p.devices.empty()) return;
  out += "What would help? The usual changes, answered from this trace\n";
  if (p.helps.empty()) {  // no kernels or a span of microseconds: the Run line says why
    out += p.workload.run == "sampled" ? "  not answered: the trace is a sample of the GPU's work (see Run above)\n\n"
           : p.workload.run == "graph-capture"
               ? "  not answered: the trace records set-up, graph capture, not the work (see Run above)\n\n"
               : "  not answered: the trace has too little GPU work to tell (see Run above)\n\n";
    return;
  }
  std::size_t qw = 0;
  for (const HelpAnswer& a : p.helps) qw = std::max(qw, columns(a.question));
  for (const HelpAnswer& a : p.helps) {
    const std::string first = "  " + pad(a.question, qw) + "  " + pad(std::string(verdict_word(a.verdict)), 7) + "  ";
    out += wrap(help_words(p, a), std::max(o.width, columns(first) + 30), first, std::string(columns(first), ' '));
  }
  const Simulation& sim = p.simulation;
  // Together, only where the replay makes the step kMaterialShare shorter or
  // more (a 1.00x line would read as a prediction worth acting on), and only
  // where a numbered finding prescribes one of its fixes: a fix no finding
  // numbers (a one-time capture's launch waits) is no advice to add up.
  bool prescribed = false;
  for (const Finding& f : p.findings)
    prescribed = prescribed || (!f.fix.empty() && sim.together.change.find(f.fix) != std::string::npos);
  if (sim.status == "simulated" && !sim.together.change.empty() && prescribed &&
      double(sim.together.step_ns) <= (1 - kMaterialShare) * double(sim.replayed_step_ns)) {
    const std::string first = "  " + pad("all of them together?", qw) + "  " + pad("", 7) + "  ";
    char x[32];
    std::snprintf(x, sizeof x, "%.2fx", sim.together.speedup);
    // A fix whose finding credits less than its replay removes: the
    // prediction is an upper bound.
    bool capped = false;
    for (const Finding& f : p.findings)
      capped =
          capped || (f.replay_saving_ns > 0 && !f.fix.empty() && sim.together.change.find(f.fix) != std::string::npos);
    // A step shorter than the GPU's recorded busy time in a step, with no
    // kernel made faster: the replay ran the streams' work more side by side
    // than the run did, each collective keeping its recorded time (its wait
    // for other ranks included) wherever it starts.
    std::vector<TimeNs> busy;
    for (const Step& st : p.steps.steps) busy.push_back(st.compute_ns + st.communication_ns + st.memcpy_ns);
    std::sort(busy.begin(), busy.end());
    const TimeNs busy_median = busy.empty() ? 0 : busy[busy.size() / 2];
    const bool below_busy = busy_median > 0 && sim.together.step_ns < busy_median &&
                            sim.together.change.find("--scale") == std::string::npos;
    // Over all the steps, where every step of one GPU was replayed: a
    // median can move to another step and say more (or less) than the run
    // gains in all.
    std::string all_steps;
    if (p.devices.size() == 1 && sim.steps > 2 && sim.steps == p.steps.steps.size() && p.steps.total_ns > 0 &&
        sim.together.saving_ns > 0 && sim.together.saving_ns < p.steps.total_ns) {
      const double total = double(p.steps.total_ns) / double(p.steps.total_ns - sim.together.saving_ns);
      if (std::abs(total - sim.together.speedup) > 2 * kMaterialShare * sim.together.speedup) {
        char y[32];
        std::snprintf(y, sizeof y, "%.2fx", total);
        all_steps = "; over all " + std::to_string(sim.steps) + " steps it saves " + duration(sim.together.saving_ns) +
                    " of " + duration(p.steps.total_ns) + " (" + y +
                    "), as the steps differ: the median step's gain is not the whole run's";
      }
    }
    out +=
        wrap(sim.together.change + " predicts a median step of " + duration(sim.together.step_ns) + " (" +
                 replay_now(p) + ", " + x + "); the dependency graph's replay of " + sim.scope + ", replay error " +
                 percent1(sim.replay_error) + " (docs/whatif.md)" + all_steps +
                 lower_bound_words(p, sim.together.change, true) +
                 (capped ? "; an upper bound: the replay also removes host time that the findings count as "
                           "warm-up or charge elsewhere, which their savings leave out"
                         : "") +
                 (p.workload.graph_captures
                      ? "; the recording holds " +
                            count(p.workload.graph_captures, graph_word(p) + " capture", graph_word(p) + " captures") +
                            " (" + duration(p.workload.capture_ns) +
                            "), one-time set-up the replay keeps as recorded: a gain over a capture call is not "
                            "the steady state's, so profile steady-state replays to size it"
                      : "") +
                 after_the_others_words(p) +
                 (below_busy ? "; shorter than the GPU's own busy time in the recorded steps (median " +
                                   duration(busy_median) +
                                   "): the replay overlaps the streams' work more than the run did and keeps each "
                                   "collective's recorded time, its wait for other ranks included, wherever it "
                                   "starts, so read it as a bound, not a forecast"
                             : ""),
             std::max(o.width, columns(first) + 30), first, std::string(columns(first), ' '));
  } else if (!sim.together_note.empty()) {
    const std::string first = "  " + pad("all of them together?", qw) + "  " + pad("", 7) + "  ";
    out += wrap(sim.together_note, std::max(o.width, columns(first) + 30), first, std::string(columns(first), ' '));
  } else if (!sim.status.empty() && sim.status != "simulated") {
    out += "  (savings are rules of thumb: " + sim.status + ")\n";
  }
  out += "\n";
}

// Where the host's launches cap the GPU-side savings (the findings that
// shorten kernels claim more than the steps' time beyond the host's time
// issuing them: "fewer launches" says "not now, but next"), that margin;
// -1 otherwise.
TimeNs launch_cap(const Profile& p) {
  // Per GPU, as the savings are: the steps of every GPU are summed.
  const TimeNs summed = launch_margin_ns(p.steps);
  if (summed < 0) return -1;
  const TimeNs margin = summed / static_cast<TimeNs>(std::max<std::size_t>(1, p.devices.size()));
  TimeNs claimed = 0;
  for (const Finding& f : p.findings)
    if (shortens_kernels(f.id)) claimed += f.saving_ns;
  return claimed > margin ? margin : -1;
}

// A rule of thumb's saving on the GPU side, where the host's launches cap it.
std::string capped_words(const Profile& p, const Finding& f) {
  const TimeNs cap = launch_cap(p);
  if (cap < 0 || !shortens_kernels(f.id) || f.saving_ns <= cap) return {};
  return "; the host's launches cap it at " + duration(cap) +
         " unless the fix removes them too (torch.compile does both; see \"fewer launches\")";
}

// "simulated saving 12.3 ms (…)", "estimated saving 12.3 ms (rule of thumb…)", or no saving at all.
// A simulated fix that saves nothing says so instead of a saving.
std::string saving_words(const Profile& p, const Finding& f) {
  const std::string steps = "median step " + duration(p.simulation.replayed_step_ns) + " -> " +
                            duration(f.predicted_step_ns) + ", replay error " + percent1(p.simulation.replay_error);
  if (f.saving_source == SavingSource::simulated && !f.saving_note.empty())
    return (f.saving_ns > 0 ? "simulated saving " + duration(f.saving_ns) + ", " : "simulated, ") + f.saving_note +
           " (" + f.fix + ": " + steps + ")" +
           (f.after_fixes.empty() ? std::string()
                                  : "; after " + f.after_fixes + " (the changes that save time now): median step " +
                                        duration(f.after_from_ns) + " -> " + duration(f.after_to_ns));
  if (f.saving_source == SavingSource::simulated)
    return "simulated saving " + duration(f.saving_ns) + " (" + f.fix + ": " + steps + ")";
  if (!f.saving_note.empty())
    return (f.saving_ns > 0 ? "estimated saving " + duration(f.saving_ns) + " (rule of thumb; "
                            : std::string("no time saving estimated (")) +
           f.saving_note + ")";
  if (f.saving_ns == 0) return "no time saving estimated";  // an advisory rule (docs/findings.md)
  const std::string capped = capped_words(p, f);
  if (p.simulation.status.empty())
    return "estimated saving " + duration(f.saving_ns) + (capped.empty() ? "" : " (" + capped.substr(2) + ")");
  return "estimated saving " + duration(f.saving_ns) +
         (f.fix.empty() ? " (rule of thumb: the dependency graph cannot express this fix" + capped + ")"
                        : " (rule of thumb: " + f.fix + " changed nothing in the steps replayed" + capped + ")");
}

// "; part of what finding 3's fix saves, not in addition to it": where another
// numbered finding's fix removes this one's saving too
// (Finding::saving_within: a CUDA graph of the step removes the per-parameter
// optimizer's host time with every other op's); empty otherwise.
std::string within_words(const Profile& p, const Finding& f) {
  if (f.saving_within.empty()) return {};
  for (std::size_t i = 0; i < p.findings.size(); ++i) {
    const Finding& g = p.findings[i];
    if (g.id != f.saving_within) continue;
    const std::string n = std::to_string(i + 1);
    return "; part of what finding " + n + "'s fix saves" +
           (g.replay_saving_ns > 0 && !g.fix.empty()
                ? " (its replay, " + g.fix + ", saves " + duration(g.replay_saving_ns) + ")"
                : std::string()) +
           ", not in addition to it: a CUDA graph of the step removes the optimizer's host time with every other "
           "op's, and the GPU's wait for the optimizer's launches is part of the late-launch idle finding " +
           n + " counts";
  }
  return {};  // a minor one: no numbered saving to add it to
}

// Rules whose fix removes only GPU idle time, no kernel made shorter: together
// they save at most the GPUs' idle time.
bool removes_only_idle(std::string_view id) {
  return id == "input-bound" || id == "launch-bound" || id == "op-launch-overhead" || id == "unfused-optimizer" ||
         id == "host-sync" || id == "gpu-idle-gaps" || id == "low-utilization" || id == "step-host-time";
}

// The GPUs' idle time, per GPU as the savings are: in their spans, steps
// and the gaps between them alike (gpu-idle-gaps counts the gaps between
// steps too), or in the steps where those begin before the span does.
TimeNs idle_per_gpu(const Profile& p) {
  TimeNs idle = 0, in_steps = 0;
  for (const DeviceSummary& d : p.devices) idle += d.idle_ns;
  // Steps that begin before their GPU's first op hold idle outside its span.
  for (const Step& st : p.steps.steps) in_steps += st.idle_ns;
  return std::max(idle, in_steps) / static_cast<TimeNs>(std::max<std::size_t>(1, p.devices.size()));
}

// After the numbered findings, where their savings added up exceed what the
// fixes together save (the replay of them together, with the findings it
// does not replay) or what is there to save (the GPUs' idle time, for fixes
// that only remove idle): each saving is its fix's alone, and they overlap.
std::string overlap_words(const Profile& p) {
  const Prediction& tg = p.simulation.together;
  const bool replayed = p.simulation.status == "simulated" && !tg.change.empty() && tg.saving_ns > 0;
  auto in_replay = [&](const Finding& f) {
    return replayed && f.saving_source == SavingSource::simulated && !f.fix.empty() &&
           tg.change.find(f.fix) != std::string::npos;
  };
  TimeNs sum = 0, idle_only = 0, not_replayed = 0;
  std::vector<std::string> idle_ids;
  int adding = 0;
  for (const Finding& f : p.findings) {
    if (f.saving_ns <= 0) continue;
    ++adding;
    sum += f.saving_ns;
    if (removes_only_idle(f.id)) {
      idle_only += f.saving_ns;
      idle_ids.push_back(f.id);
    }
    bool covered = in_replay(f);
    for (const Finding& g : p.findings) covered = covered || (g.id == f.saving_within && in_replay(g));
    if (!covered) not_replayed += f.saving_ns;
  }
  if (adding < 2) return {};
  const TimeNs idle = idle_per_gpu(p);
  const bool over_idle = idle > 0 && double(idle_only) > (1 + kMaterialShare) * double(idle);
  const TimeNs together = replayed ? tg.saving_ns + not_replayed : idle + (sum - idle_only);
  const bool over_replay = replayed && double(sum) > (1 + kMaterialShare) * double(together);
  if (!over_idle && !over_replay) return {};
  std::string s = "The savings overlap: added up, the numbered findings' savings make " + duration(sum);
  if (over_idle)
    s += ", more than the " + duration(idle) + " the GPU" + (p.devices.size() > 1 ? "s idle" : " idles") +
         ", all that fixes which only remove idle time (" + finding_refs(p, idle_ids) + ") can save";
  if (over_replay)
    s += std::string(over_idle ? ", and" : ",") + " more than their fixes save together: " + tg.change +
         " replayed together saves " + duration(tg.saving_ns) + " over " + p.simulation.scope + " (median step " +
         duration(p.simulation.replayed_step_ns) + " -> " + duration(tg.step_ns) + ")" +
         (not_replayed > 0 ? ", and the findings it does not replay, " + duration(not_replayed) : std::string());
  s += ". Each saving is its own fix's, made alone; where two remove the same wait they overlap: all of them together "
       "save " +
       std::string(replayed ? "about " : "at most ") + duration(together) + ", not the sum.";
  return s;
}

// "; its time lies inside finding 2's": where most of a minor observation's
// time ranges lie inside a numbered finding's (a copy that blocked the host
// while the GPU idled for another cause), so the same time is not read as
// two costs; empty otherwise.
std::string same_time_as(const Profile& p, const Finding& minor) {
  TimeNs own = 0;
  for (const TimeRange& r : minor.ranges) own += r.duration();
  if (own <= 0) return {};
  for (std::size_t i = 0; i < p.findings.size(); ++i) {
    TimeNs inside = 0;
    for (const TimeRange& m : minor.ranges)
      for (const TimeRange& r : p.findings[i].ranges)
        inside += std::max<TimeNs>(0, std::min(m.end, r.end) - std::max(m.start, r.start));
    if (2 * inside >= own) return "; its time lies inside finding " + std::to_string(i + 1) + "'s";
  }
  return {};
}

// Whether a minor line is a launch wait left unnumbered because the trace
// is a one-time graph capture's (launch_wait_in_capture).
bool any_capture_wait(const Profile& p) {
  return std::any_of(p.minor_findings.begin(), p.minor_findings.end(),
                     [&](const Finding& f) { return launch_wait_in_capture(p, f); });
}

// Findings under 1 % of the run: one line each, after the numbered ones.
void minor_findings(const Profile& p, const ReportTextOptions& o, std::string& out) {
  if (p.minor_findings.empty()) return;
  out +=
      p.workload.run == "tiny-span"
          ? "Minor observations (not numbered: over microseconds of GPU work the trace cannot tell what they cost)\n"
      : p.workload.run == "sampled"
          ? "Minor observations (not numbered: a sample of the GPU's work cannot tell what they cost)\n"
      : p.workload.run == "graph-capture"
          ? "Minor observations (not numbered: about set-up, graph capture and the runs before it)\n"
          : "Minor observations (true, but under 1% of the run, or their fix replayed shortens the step by under "
            "1%, or their kernels are not on the replayed critical path, or what a fix could remove of them is "
            "under 1% of the run, the rest warm-up" +
                std::string(any_capture_wait(p) ? ", or they are waits for launches in a one-time graph capture" : "") +
                "; not numbered)\n";
  for (const Finding& f : p.minor_findings) {
    // One whose share is material but whose replayed fix is not says so.
    const bool by_replay = f.saving_source == SavingSource::simulated && !launch_wait_in_capture(p, f) &&
                           f.share >= kMaterialShare && p.simulation.replayed_step_ns > 0 && f.predicted_step_ns > 0;
    const TimeNs gain = p.simulation.replayed_step_ns - f.predicted_step_ns;
    const std::string what =
        (p.steps.steps.empty() ? "the replayed trace " : "the median step ") + duration(p.simulation.replayed_step_ns);
    // One the critical path left no saving says so.
    const std::string replayed =
        capped_by_critical_path(p, f)
            ? "; the replayed critical path is " + percent(critical_path_host_share(p.critical_path)) +
                  " host time: faster kernels pay once the host is fixed"
        : !by_replay ? std::string()
        : materially_shorter(p.simulation.replayed_step_ns, f.predicted_step_ns)
            ? "; " + f.fix + " shortens " + what + " by " + duration(gain) + " but the run by only " +
                  duration(f.saving_ns) + ": the time moves into other steps"
        : gain > 0 ? "; " + f.fix + " shortens " + what + " by only " + duration(gain)
                   : "; " + f.fix + " does not shorten " + what;
    // A launch wait not numbered because the trace is a one-time capture's.
    const std::string capture =
        launch_wait_in_capture(p, f)
            ? "; in a one-time " + graph_word(p) +
                  " capture and the program's first calls: whether later calls, which replay the graph, wait for "
                  "the host the trace cannot tell"
            : std::string();
    out += wrap(f.title + capture + " (" + f.id + replayed + same_time_as(p, f) + ")", o.width, "  - ", "    ");
  }
  out += "\n";
}

// Bold red for critical, yellow for warning, cyan for the rest.
std::string severity_colour(Severity s) {
  switch (s) {
    case Severity::critical: return "\033[1;31m";
    case Severity::warning: return "\033[33m";
    default: return "\033[36m";
  }
}

// A run with no finding that is GPU-bound in kernels nothing measured:
// what the trace cannot tell, and how to find out ("" when not so).
std::string gpu_bound_words(const Profile& p, const ReportTextOptions& o) {
  const UnmeasuredKernels u = unmeasured_kernels(p);
  if (u.hot.empty()) return {};
  std::vector<std::string_view> names;
  for (const Hotspot* h : u.hot) names.push_back(h->name);
  const std::vector<std::string> shown = short_kernel_names(names, kTableNameWidth);
  std::string list;
  for (std::size_t i = 0; i < u.hot.size(); ++i) list += (i ? "; " : "") + shown[i] + " " + percent1(u.hot[i]->share);
  bool nvidia = true;
  for (const DeviceSummary& d : p.devices) nvidia = nvidia && nvidia_gpu(d.name, d.compute_major, d.compute_minor);
  const std::string text =
      "But the GPUs are busy " + percent1(u.utilization) +
      " of their span or more, so their kernels decide the time, and " + percent1(u.share) +
      " of kernel time is in kernels whose efficiency the trace cannot tell (" + list + "): " +
      (u.shapes ? "no op with recorded shapes and a cost formula launched them" : "no input shapes are recorded") +
      " and no hardware counters, so no roofline says how near the GPU's peak they run. Any gain left is inside "
      "them: measure them (" +
      (nvidia ? "Nsight Compute, ncu --kernel-name regex:NAME; gpuscope capture --metrics"
              : "rocprof-compute, or the vendor's kernel profiler") +
      (u.shapes || p.workload.framework != "pytorch" ? "" : "; torch.profiler's record_shapes=True for the roofline") +
      ").";
  return wrap(text, o.width, "  ", "  ");
}

// A GPU side the trace lacks ("not recorded") or holds in a form gpuscope
// does not read ("not read": events on processes named as devices).
std::string not_recorded(const Profile& p) {
  return p.workload.run_evidence.starts_with("the GPU side was not read") ? "not read" : "not recorded";
}

void findings(const Profile& p, const ReportTextOptions& o, std::string& out) {
  if (p.findings.empty()) {
    const std::string& run = p.workload.run;
    out += run == "no-kernels"       ? "Findings: none: no kernels, nothing on the GPU to diagnose.\n\n"
           : run == "gpu-unrecorded" ? "Findings: none: the GPU side was " + not_recorded(p) +
                                           ", so nothing on the GPU can be diagnosed (see Run above).\n\n"
           : run == "tiny-span"       ? "Findings: none numbered: findings over microseconds of GPU work would be "
                                        "noise (see Run above).\n\n"
           : run == "sampled"         ? "Findings: none numbered: the trace is a sample, most of the GPU's work is not "
                                        "in it (see Run above).\n\n"
           : run == "graph-capture"   ? "Findings: none numbered: the trace records set-up, graph capture, not the "
                                        "work (see Run above).\n\n"
           : p.minor_findings.empty() ? "Findings: none. No rule crossed its threshold (docs/findings.md lists them).\n"
           : any_capture_wait(p)
               ? "Findings: none numbered: none of 1% of the run or more but waits for launches in a one-time graph "
                 "capture, which say nothing of later calls that replay the graph.\n"
               : "Findings: none of 1% of the run or more.\n";
    if (!p.workload.nothing_to_number()) out += gpu_bound_words(p, o) + "\n";
    minor_findings(p, o, out);
    return;
  }
  out += "Findings, the critical first, then by estimated saving\n";
  int n = 0;
  for (const Finding& f : p.findings) {
    const std::string num = std::to_string(++n) + ". ";
    const std::string tag = "[" + std::string(to_string(f.severity)) + "]";
    std::string head = wrap(tag + " " + f.title, o.width, "  " + num, std::string(2 + num.size(), ' '));
    if (o.colour) head.replace(head.find(tag), tag.size(), severity_colour(f.severity) + tag + "\033[0m");
    out += head;
    const std::string ind(5, ' ');
    std::string meta = f.id + " · " + saving_words(p, f) + within_words(p, f);
    if (f.device != kNoDevice && p.devices.size() > 1) meta += " · GPU " + std::to_string(f.device);
    out += wrap(meta, o.width, ind, ind + "  ");
    out += wrap(f.evidence, o.width, ind + "why: ", ind + "     ");
    out += wrap(f.recommendation, o.width, ind + "fix: ", ind + "     ");
    if (!f.ranges.empty()) {
      std::string where = std::to_string(f.ranges.size()) + " time range" + (f.ranges.size() == 1 ? "" : "s") +
                          " to look at, largest " + duration(f.ranges[0].duration()) + " at " +
                          at_offset(f.ranges[0].start, p.window.start);
      out += ind + "where: " + where + " (gpuscope view jumps there)\n";
    }
  }
  if (const std::string overlap = overlap_words(p); !overlap.empty()) out += wrap(overlap, o.width, "  ", "  ");
  out += "\n";
  minor_findings(p, o, out);
}

void devices(const Profile& p, std::string& out) {
  if (p.devices.empty()) {
    out += p.workload.run == "gpu-unrecorded"
               ? "GPUs: none " + std::string(not_recorded(p) == "not read" ? "read" : "recorded") +
                     ", though the program used GPUs (see Run above).\n\n"
               : "GPUs: no GPU activity in this trace.\n\n";
    return;
  }
  out += "GPUs (window = first to last GPU op)\n";
  Table t;
  t.rows.push_back({"GPU", "name", "span", "busy", "util", "concurrency", "in flight", "copy∩kernel", "comm∩compute",
                    "idle: host / kernel / other wait"});
  t.right = {true, false, true, true, true, true, true, true, true, false};
  for (const DeviceSummary& d : p.devices) {
    std::string id = std::to_string(d.id);
    if (p.ranks.size() > 1 && d.rank >= 0) id = "r" + std::to_string(d.rank) + ":" + id;
    const std::string idle = d.idle_ns ? percent(double(d.idle_host_wait_ns) / double(d.idle_ns)) + " / " +
                                             percent(double(d.idle_kernel_wait_ns) / double(d.idle_ns)) + " / " +
                                             percent(double(d.idle_other_ns) / double(d.idle_ns))
                                       : "-";
    t.rows.push_back({id, d.name.empty() ? "?" : d.name, duration(d.span_ns), duration(d.busy_ns),
                      percent1(d.utilization), percent1(d.kernel_concurrency), fixed(d.mean_kernels_in_flight, 2),
                      d.memcpy_ns ? percent(d.memcpy_compute_overlap) : "-",
                      d.communication_ns ? percent(d.communication_compute_overlap) : "-", idle});
  }
  out += t.render("  ") + "\n";
}

// The GPUs' idle time by cause, each part with the finding that charges it.
void idle_charges(const Profile& p, const ReportTextOptions& o, std::string& out) {
  if (p.idle_charges.empty() || p.devices.empty()) return;
  const double gpus = double(p.devices.size());
  TimeNs all = 0;
  for (const IdleCharge& c : p.idle_charges)
    if (c.cause != "input-before-start") all += c.ns;
  out += "Where the idle time went (" + duration(TimeNs(double(all) / gpus)) +
         (p.devices.size() > 1 ? " per GPU" : "") + "; each part charged to one finding)\n";
  Table t;
  t.rows.push_back({"cause", "time", "of idle", "charged to"});
  t.right = {false, true, true, false};
  std::vector<std::vector<std::string>> why;
  for (const IdleCharge& c : p.idle_charges) {
    std::string to = "none";
    for (std::size_t i = 0; i < p.findings.size() && to == "none"; ++i)
      if (p.findings[i].id == c.finding) to = std::to_string(i + 1) + ". " + c.finding;
    for (const Finding& f : p.minor_findings)
      if (to == "none" && f.id == c.finding) to = "minor: " + c.finding;
    if (to == "none" && !c.finding.empty()) to = c.finding;
    why.emplace_back();
    if (!c.note.empty()) why.back().push_back(c.note);
    for (const HostWhere& w : p.host_while_idle)
      if (w.cause == c.cause) why.back().push_back(host_where_line(w));
    t.rows.push_back({std::string(idle_cause_words(c.cause)), duration(TimeNs(double(c.ns) / gpus)),
                      c.cause == "input-before-start" ? "-" : percent1(all ? double(c.ns) / double(all) : 0.0), to});
  }
  const std::string table = t.render("  ");
  // The notes after the rows they explain, wrapped under the table.
  std::size_t row = 0, at = 0;
  for (std::size_t nl; (nl = table.find('\n', at)) != std::string::npos; at = nl + 1, ++row) {
    out += table.substr(at, nl + 1 - at);
    if (row > 0 && row - 1 < why.size())
      for (const std::string& line : why[row - 1])
        out += wrap(line, std::max<std::size_t>(o.width, 60), "      ", "      ");
  }
  out += "\n";
}

// A hardware series' value in its unit: "45.5%", "1.20 GiB/s", "1980 MHz".
std::string hw_value(const std::string& unit, double v) {
  if (unit == "%") return fixed(v, 1) + "%";
  if (unit == "B/s") return bytes(static_cast<std::uint64_t>(std::max(0.0, v))) + "/s";
  return fixed(v, v >= 100 ? 0 : 2) + (unit.empty() ? "" : " " + unit);
}

// What each GPU's hardware measured, where the trace has the series (CUPTI
// PM sampling, NVML): means over the GPU's window, with their sample counts.
void hardware(const Profile& p, std::string& out) {
  bool any = false;
  for (const DeviceSummary& d : p.devices) any = any || !d.hw.metrics.empty();
  if (!any) return;
  out += "Hardware (measured by the GPU's counters, not derived from time; mean over the window)\n";
  for (const DeviceSummary& d : p.devices) {
    if (d.hw.metrics.empty()) continue;
    std::string id = std::to_string(d.id);
    if (p.ranks.size() > 1 && d.rank >= 0) id = "r" + std::to_string(d.rank) + ":" + id;
    std::string line;
    for (const HwMetric& m : d.hw.metrics) {
      if (m.name.ends_with("throttle_reasons")) continue;  // a bit mask: the clocks-throttled finding reads it
      line += (line.empty() ? "" : " · ") + m.name + " " + hw_value(m.unit, m.mean);
    }
    out += "  GPU " + id + ": " + line + " (" + count(d.hw.metrics.front().samples) + " samples of " +
           d.hw.metrics.front().name + ")\n";
    // The categories with the most samples: what their kernels keep busy (the memory-bound-kernels finding's numbers).
    std::string cats;
    for (std::size_t i = 0; i < d.hw.by_category.size() && i < 4; ++i) {
      const HwCategory& c = d.hw.by_category[i];
      std::string v;
      auto add = [&](const char* what, const std::optional<double>& x) {
        if (x) v += (v.empty() ? "" : ", ") + std::string(what) + " " + percent(*x);
      };
      add("SMs", c.sm_active);
      add("issue", c.sm_issue);
      add("tensor", c.tensor_active);
      add("DRAM", c.dram_share);
      if (!c.dram_share && c.dram_bytes_per_s)
        v += (v.empty() ? "" : ", ") + ("DRAM " + hw_value("B/s", *c.dram_bytes_per_s));
      cats += (cats.empty() ? "" : "; ") + std::string(to_string(c.category)) + " " + v + " (" +
              count(std::max({c.samples, c.issue_samples, c.dram_samples})) + ")";
    }
    if (!cats.empty()) out += "    by kernel category (of peak; samples): " + cats + "\n";
  }
  out += "\n";
}

// Each GPU's theoretical occupancy, what limits it, and how much of the GPU
// its kernels fill: one line per GPU.
void occupancy(const Profile& p, std::string& out) {
  bool any = false;
  for (const DeviceSummary& d : p.devices) any = any || d.kernels > 0;
  if (!any) return;
  out += "Occupancy (theoretical, weighted by kernel time)\n";
  for (const DeviceSummary& d : p.devices) {
    if (d.kernels == 0) continue;
    const DeviceOccupancy& o = d.occupancy;
    std::string id = std::to_string(d.id);
    if (p.ranks.size() > 1 && d.rank >= 0) id = "r" + std::to_string(d.rank) + ":" + id;
    std::string line = "  GPU " + id + ": ";
    if (!o.theoretical) {
      line += "unknown (limits: " + o.limits + "; " + count(o.unknown_kernels) +
              " kernels without block size, grid or registers, or without limits)";
    } else {
      const double k = double(o.known_ns);
      line += percent1(*o.theoretical) + " (limits: " + o.limits + "; known for " + percent(o.known_share) +
              " of kernel time";
      if (o.unknown_kernels) line += ", " + count(o.unknown_kernels) + " kernels unknown";
      line += "); limited by block size " + percent(double(o.block_size_ns) / k) + ", blocks per SM " +
              percent(double(o.blocks_per_sm_ns) / k) + ", registers " + percent(double(o.registers_ns) / k) +
              ", shared memory " + percent(double(o.shared_memory_ns) / k) + "; GPU fill " +
              (o.gpu_fill ? percent1(*o.gpu_fill) : std::string("unknown (no SM count)"));
    }
    out += line + "\n";
  }
  out += "\n";
}

// Each GPU's memory peaks against its memory, where the trace says (PyTorch's
// allocator events, CUPTI's memory activity).
void memory(const Profile& p, std::string& out) {
  bool any = false;
  for (const DeviceSummary& d : p.devices) any = any || d.peak_allocated_bytes || d.peak_reserved_bytes;
  if (!any) return;
  out += "Memory (peaks over the trace)\n";
  Table t;
  t.rows.push_back({"GPU", "peak allocated", "peak reserved", "GPU memory", "allocated / memory"});
  t.right = {true, true, true, true, true};
  auto b = [](const std::optional<std::uint64_t>& v) { return v ? bytes(*v) : std::string("-"); };
  for (const DeviceSummary& d : p.devices) {
    std::string id = std::to_string(d.id);
    if (p.ranks.size() > 1 && d.rank >= 0) id = "r" + std::to_string(d.rank) + ":" + id;
    const std::string share = d.peak_allocated_bytes && d.memory_bytes && *d.memory_bytes
                                  ? percent1(double(*d.peak_allocated_bytes) / double(*d.memory_bytes))
                                  : "-";
    t.rows.push_back({id, b(d.peak_allocated_bytes), b(d.peak_reserved_bytes), b(d.memory_bytes), share});
  }
  out += t.render("  ") + "\n";
}

// The steps a fifth slower than their GPU's median step, and what grew.
void slow_steps(const Profile& p, const ReportTextOptions& o, std::string& out) {
  const StepSummary& s = p.steps;
  if (s.slow_steps.empty()) return;
  out += "  Slow steps (a fifth or more over their GPU's median step), against the median of each part:\n";
  for (const SlowStep& x : s.slow_steps) {
    std::string line =
        x.name + (p.ranks.size() > 1 ? " (rank " + std::to_string(x.rank) + ", GPU " : " (GPU ") +
        std::to_string(x.device) + "): " + duration(x.ns) + " against " + duration(x.median_ns) + " (+" +
        duration(x.ns - x.median_ns) + "); " +
        (x.before_gpu_ns > 0 ? std::string()
                             : "GPU idle " + duration(x.idle_ns) + " (" + duration(x.median_idle_ns) + "), ") +
        "compute " + duration(x.compute_ns) + " (" + duration(x.median_compute_ns) + ")" +
        (x.before_gpu_ns > 0 ? "; it began " + duration(x.before_gpu_ns) +
                                   " before the GPU's first recorded op: whether the GPU sat idle then or ran work "
                                   "queued before the recording, the trace does not show"
                             : std::string());
    TimeNs grown = 0, most = 0;
    bool spread = x.ops.size() >= 3;
    std::string ops;
    for (const OpGrowth& g : x.ops) {
      ops += (ops.empty() ? "" : ", ") + g.name + " " + duration(g.ns) + " (" + duration(g.median_ns) + ")";
      grown += g.ns - g.median_ns, most = std::max(most, g.ns - g.median_ns);
      spread = spread && g.median_ns > 0 && 10 * g.ns >= 11 * g.median_ns;
    }
    if (!ops.empty()) line += "; the step's thread spent longest beyond the median in " + ops;
    // The same ops, each a tenth slower or more, none most of it: the host
    // itself ran slower.
    if (spread && 2 * most < grown && 2 * grown >= x.ns - x.median_ns)
      line +=
          ": the same ops each took longer on the host; what slowed it (other processes or the data "
          "loader's workers on its cores, garbage collection) the trace does not record";
    out += wrap(line, o.width, "    ", "      ");
  }
}

// Steps on several GPUs, or that leave much of their GPUs' span outside them
// (the host's work between the loop's step ranges): how many per GPU, and
// how much of the span no step's figures count.
void step_coverage(const Profile& p, const ReportTextOptions& o, std::string& out) {
  const StepSummary& s = p.steps;
  for (const Step& st : s.steps)
    if (st.device == kNoDevice) return;  // steps of the host: no GPU span to compare
  TimeNs span = 0, covered = 0;
  std::set<std::size_t> counts;  // steps per GPU
  std::size_t gpus = 0;
  for (const DeviceSummary& d : p.devices) {
    TimeNs mine = 0;
    std::size_t n = 0;
    for (const Step& st : s.steps)
      if (st.device == d.id && st.rank == d.rank) {
        ++n;
        mine += std::max<TimeNs>(0, std::min(st.range.end, d.window.end) - std::max(st.range.start, d.window.start));
      }
    if (n == 0) continue;
    ++gpus;
    counts.insert(n);
    span += d.window.duration();
    covered += std::min(mine, d.window.duration());
  }
  std::string line;
  if (gpus > 1 && counts.size() == 1)
    line = count(*counts.begin(), "step", "steps") + " on each of " + std::to_string(gpus) + " GPUs";
  else if (gpus > 1)
    line = "on " + std::to_string(gpus) + " GPUs";
  if (span > 0 && double(covered) < 0.9 * double(span))
    line += std::string(line.empty() ? "" : "; ") + (s.steps.size() == 1 ? "the step covers " : "the steps cover ") +
            percent1(double(covered) / double(span)) + " of " +
            (gpus > 1              ? "their GPUs' spans: "
             : s.steps.size() == 1 ? "its GPU's span: "
                                   : "their GPU's span: ") +
            duration((span - covered) / static_cast<TimeNs>(gpus)) + (gpus > 1 ? " per GPU" : "") + " lies " +
            (s.steps.size() == 1 ? "before or after it" : "before, between or after them") + ", in no step's figures";
  if (!line.empty()) out += wrap(line, o.width, "  ", "    ");
}

void steps(const Profile& p, const ReportTextOptions& o, std::string& out) {
  const StepSummary& s = p.steps;
  if (s.steps.empty()) {
    const std::string ranges = s.unused_step_ranges
                                   ? format::count(s.unused_step_ranges, "step range", "step ranges") +
                                         " (ProfilerStep#N or NVTX)" +
                                         (s.unused_step_ranges == 1 ? " around no GPU work" : ", none around GPU work")
                                   : "no ProfilerStep or NVTX step ranges";
    out += s.not_steps.empty() ? "Steps: none found (" + ranges +
                                     ", no repeating kernel pattern, no bursts of GPU work between host gaps).\n\n"
                               : "Steps: none found (" + ranges + "; " + s.not_steps + ").\n\n";
    return;
  }
  const DurationStats& t = s.step_time;
  if (s.steps.size() == 1)
    out += wrap("Steps: 1 from " + std::string(to_string(s.source)) + " · " + duration(t.mean) +
                    " (one step recorded: no step-to-step spread; capture several to tell a one-off stall from the "
                    "steady state)",
                o.width, "", "  ");
  else  // the median of two steps would be one of them
    out += "Steps: " + count(s.steps.size()) + " from " + std::string(to_string(s.source)) + " · mean " +
           duration(t.mean) + (s.steps.size() > 2 ? ", median " + duration(t.median) : std::string()) + ", min " +
           duration(t.min) + ", max " + duration(t.max) + "\n";
  step_coverage(p, o, out);
  // Several data-loader fetches per recorded step: the loop ran several
  // iterations inside one step, so per-step figures cover several batches.
  if (s.input_fetches >= 2 * s.steps.size())
    out += wrap(count(s.input_fetches, "data-loader fetch", "data-loader fetches") + " begin inside " +
                    count(s.steps.size(), "step", "steps") +
                    ": each recorded step holds several iterations of the loop, so per-step figures cover "
                    "several batches",
                o.width, "  ", "    ");
  // Steps the GPU's work marked, without step ranges: how they were found.
  if (!s.source_evidence.empty()) out += wrap("from the GPU's work: " + s.source_evidence, o.width, "  ", "    ");
  if (s.total_ns > 0)
    out += "  Of all step time: compute " + percent1(double(s.compute_ns) / double(s.total_ns)) +
           ", exposed communication " + percent1(double(s.communication_ns) / double(s.total_ns)) + ", copies alone " +
           percent1(double(s.memcpy_ns) / double(s.total_ns)) + ", GPU idle " +
           percent1(double(s.idle_ns) / double(s.total_ns)) + " (waiting for input " +
           percent1(double(s.input_wait_ns) / double(s.total_ns)) + ")\n";
  // The CPU's part of the steps after their GPU work ended, stated apart
  // from the GPU breakdown above.
  if (s.total_ns > 0 && s.host_tail_ns > 0)
    out += "  CPU time after each step's last GPU op: " + duration(s.host_tail_ns) + " in all, " +
           percent1(double(s.host_tail_ns) / double(s.total_ns)) +
           " of step time: the GPU had none of the step's work left then, so that time counts in the steps' "
           "idle unless other work ran; the host work there delays the next step's launches\n";
  if (s.early_ops > 0 || s.backlog_ops > 0) {
    // The backlog's share of all GPU time (Σ devices' busy time).
    TimeNs busy = 0;
    for (const DeviceSummary& d : p.devices) busy += d.busy_ns;
    const std::string backlog =
        s.backlog_ops > 0 ? " (" + count(s.backlog_ops, "GPU op", "GPU ops") + ", " + duration(s.backlog_ns) +
                                (busy > 0 ? ", " + percent1(double(s.backlog_ns) / double(busy)) + " of GPU busy time"
                                          : std::string()) +
                                ", in no step's time)"
                          : "";
    out += wrap(
        "The first step starts on the GPU when the work queued ahead of it (before the trace, or before "
        "the step) was done" +
            backlog +
            (s.early_ops > 0 ? "; " + count(s.early_ops, "op", "ops") + " of its own (" + duration(s.early_ops_ns) +
                                   " of GPU time) started before that, beside the backlog on another "
                                   "stream, and are in no step's time."
                             : "."),
        o.width, "  ", "  ");
  }
  if (replay_holds_backlog(p))
    out += wrap("The what-if replay measures " + std::string(s.steps.size() == 1 ? "the step" : "each step") +
                    " from its host range's start, as the trace ran it: median " +
                    duration(p.simulation.replayed_step_ns) + " against this table's " + duration(t.median) +
                    ", because it keeps the work queued ahead of the first step, which this table leaves out. "
                    "A prediction's saving is the difference it makes to that replayed step (docs/whatif.md, "
                    "\"Limits\").",
                o.width, "  ", "  ");
  Table tb;
  bool memory = false;
  for (const Step& st : s.steps) memory = memory || st.peak_allocated_bytes;
  const bool tail = s.host_tail_ns > 0;
  tb.rows.push_back({"step", "GPU", "time", "compute", "comm", "copy", "idle", "input wait"});
  tb.right = {false, true, true, true, true, true, true, true};
  if (tail) tb.rows.back().push_back("CPU tail"), tb.right.push_back(true);
  if (memory) tb.rows.back().push_back("peak memory"), tb.right.push_back(true);
  for (std::size_t i = 0; i < s.steps.size() && i < o.max_steps; ++i) {
    const Step& st = s.steps[i];
    // A name without a number ("step", every step's NVTX range) takes the
    // step's index on its GPU, so the rows are told apart.
    const bool numbered = std::any_of(st.name.begin(), st.name.end(), [](char c) { return c >= '0' && c <= '9'; });
    tb.rows.push_back({numbered ? st.name : st.name + ' ' + std::to_string(st.index),
                       st.device == kNoDevice ? "-" : std::to_string(st.device), duration(st.range.duration()),
                       duration(st.compute_ns), duration(st.communication_ns), duration(st.memcpy_ns),
                       duration(st.idle_ns), duration(st.input_wait_ns)});
    if (tail) tb.rows.back().push_back(duration(st.host_tail_ns));
    if (memory) tb.rows.back().push_back(st.peak_allocated_bytes ? bytes(*st.peak_allocated_bytes) : "-");
  }
  out += tb.render("  ");
  if (s.steps.size() > o.max_steps) out += "  … " + count(s.steps.size() - o.max_steps) + " more (--json lists all)\n";
  slow_steps(p, o, out);
  out += "\n";
}

// The critical path on the replayed dependency graph.
void critical_path(const Profile& p, const ReportTextOptions& o, std::string& out) {
  const CriticalPath& c = p.critical_path;
  if (c.length_ns <= 0) return;
  out += "Critical path (what decided the step time: " + p.simulation.scope + " replayed, docs/whatif.md)\n";
  // Host and GPU on clocks that disagree: which of them held a point is not
  // known, so the split by kind is not shown (the warning above says why).
  if (p.launches.first_op_delay_ns > 0) {
    out += wrap(
               "not shown: the host's and the GPU's clocks disagree, or unrecorded work held the GPU (see the "
               "WARNING above), so the path's split between host time and GPU waits is unknown",
               o.width, "  ", "  ") +
           "\n";
    return;
  }
  // A sample of the GPU's ops: the path runs through the few the trace kept
  // and the gaps where the rest ran, so no share of it is known.
  if (p.workload.run == "sampled") {
    out += wrap(
               "not shown: the trace is a sample of the GPU's work (see Run above), most of its GPU ops are "
               "missing, so the path's split between GPU work, host time and GPU waits is unknown",
               o.width, "  ", "  ") +
           "\n";
    return;
  }
  const auto share = [&](TimeNs ns) { return percent1(double(ns) / double(c.length_ns)); };
  std::string kinds;
  for (const auto& [ns, label] :
       {std::pair{c.gpu_compute_ns, "GPU compute"}, std::pair{c.communication_ns, "communication"},
        std::pair{c.copy_ns, "copies"}, std::pair{c.gpu_gap_ns, "gaps before GPU ops"},
        std::pair{c.cpu_launch_ns, "CPU launch overhead"}, std::pair{c.cpu_other_ns, "other CPU time"},
        std::pair{c.input_wait_ns, "input wait"}, std::pair{c.sync_wait_ns, "sync wait"},
        std::pair{c.gpu_wait_ns, "GPU waits the trace does not explain"}})
    if (ns > 0) kinds += (kinds.empty() ? "" : ", ") + std::string(label) + " " + share(ns);
  out += wrap(kinds, o.width, "  by kind: ", "           ");
  if (!p.workload.host_filtered.empty())
    out += wrap(
        "the trace keeps only launch calls (see Recording above): the host's waits are missing from it, "
        "so its CPU and GPU-wait shares are unreliable",
        o.width, "  ", "  ");
  std::string cats;
  for (const PathCategory& pc : c.categories)
    cats += (cats.empty() ? "" : ", ") + std::string(to_string(pc.category)) + " " + share(pc.ns);
  if (!cats.empty()) out += wrap(cats, o.width, "  by category: ", "               ");
  if (!c.ops.empty()) {
    Table t;
    t.rows.push_back({"on the path", "share", "ops", "category", "kernel"});
    t.right = {true, true, true, false, false};
    std::vector<std::string_view> names;
    for (const PathOp& op : c.ops) names.push_back(op.name);
    const std::vector<std::string> shown = short_kernel_names(names, 70);
    for (std::size_t i = 0; i < c.ops.size(); ++i)
      t.rows.push_back({duration(c.ops[i].ns), share(c.ops[i].ns), count(c.ops[i].count),
                        std::string(to_string(c.ops[i].category)), shown[i]});
    out += t.render("  ");
    // The replayed step keeps the work queued ahead of the first step: the
    // path's ops count it, the step table does not (see Steps).
    if (p.steps.backlog_ops > 0 && replay_holds_backlog(p))
      out += wrap("The path's ops include the " + count(p.steps.backlog_ops, "GPU op", "GPU ops") + " (" +
                      duration(p.steps.backlog_ns) +
                      ") queued ahead of the first step, which the replayed step keeps (see Steps)",
                  o.width, "  ", "  ");
  }
  out += "\n";
}

void categories(const Profile& p, std::string& out) {
  if (p.categories.empty()) return;
  out += "Kernel time by category (" + duration(p.kernel_time_ns) + " in all" +
         (p.devices.size() > 1 ? ", summed over GPUs" : "") + ")\n";
  Table t;
  t.rows.push_back({"category", "time", "share", "kernels", "mean", "median", "min", "max"});
  t.right = {false, true, true, true, true, true, true, true};
  for (const CategoryTime& c : p.categories)
    t.rows.push_back({std::string(to_string(c.category)), duration(c.time_ns), percent1(c.share), count(c.count),
                      duration(c.stats.mean), duration(c.stats.median), duration(c.stats.min), duration(c.stats.max)});
  out += t.render("  ") + "\n";
}

void hotspots(const Profile& p, const ReportTextOptions& o, std::string& out) {
  if (p.hotspots.empty()) return;
  out += "Top " + std::to_string(std::min(o.top, p.hotspots.size())) + " kernels of " + count(p.hotspots.size()) +
         " (by total time)\n";
  Table t;
  t.rows.push_back({"#", "share", "total", "count", "mean", "median", "max", "category", "kernel"});
  t.right = {true, true, true, true, true, true, true, false, false};
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i < p.hotspots.size() && i < o.top; ++i) names.push_back(p.hotspots[i].name);
  const std::vector<std::string> shown = short_kernel_names(names, kTableNameWidth);
  // AMD's GPUs: the kernels named for their matrix cores are marked too.
  bool amd = false;
  for (const DeviceSummary& d : p.devices) amd = amd || !nvidia_gpu(d.name, d.compute_major, d.compute_minor);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const Hotspot& h = p.hotspots[i];
    const bool marked = h.tensor_cores || (amd && is_amd_matrix_core_kernel(h.name));
    t.rows.push_back({std::to_string(i + 1), percent1(h.share), duration(h.stats.total), count(h.stats.count),
                      duration(h.stats.mean), duration(h.stats.median), duration(h.stats.max),
                      std::string(to_string(h.category)) + (marked ? "*" : ""), shown[i]});
  }
  out += t.render("  ");
  out += amd ? "  (* tensor- or matrix-core kernel, by its name)\n" : "  (* tensor-core kernel)\n";
  // Where a kernel's name did not decide its category, say what did.
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& rule = p.hotspots[i].category_rule;
    if (rule.starts_with("launching op") || rule.starts_with("template arguments"))
      out += "  #" + std::to_string(i + 1) + " " + std::string(to_string(p.hotspots[i].category)) + ", placed by " +
             rule + "\n";
  }
  out += "\n";
}

// Collective call sites: each kind and size at one place in the step,
// compared across steps (fastest = transfer, the rest beyond it = waiting).
void collective_sites(const Profile& p, const ReportTextOptions& o, std::string& out) {
  if (p.collective_sites.empty()) return;
  const bool many_ranks = std::any_of(p.collective_sites.begin(), p.collective_sites.end(),
                                      [&](const CollectiveSite& s) { return s.rank != p.collective_sites[0].rank; });
  out += "Collective sites: " + std::to_string(std::min(o.top, p.collective_sites.size())) + " of " +
         count(p.collective_sites.size()) +
         " (kind and size at one place in the step, # its place there; compared across steps: the time beyond the "
         "fastest instance is waiting, at least: the fastest may have waited too)\n";
  Table t;
  t.rows.push_back(
      {"rank", "GPU", "kind", "size", "#", "steps", "min", "median", "max", "waiting", "exposed", "named by"});
  t.right = {true, true, false, true, true, true, true, true, true, true, true, false};
  for (std::size_t i = 0; i < p.collective_sites.size() && i < o.top; ++i) {
    const CollectiveSite& s = p.collective_sites[i];
    t.rows.push_back({std::to_string(s.rank), std::to_string(s.device), s.kind, s.bytes ? bytes(s.bytes) : "?",
                      s.ordinal < 0 ? "-" : std::to_string(s.ordinal + 1), count(s.durations.count),
                      duration(s.durations.min), duration(s.durations.median), duration(s.durations.max),
                      // Neither a place in a step nor a size: calls of any size, anywhere, not
                      // comparable with each other (no waiting said).
                      s.ordinal < 0 && s.bytes == 0 ? "-" : duration(s.wait_ns), duration(s.exposed_ns), s.named_by});
  }
  if (!many_ranks)
    for (std::vector<std::string>& row : t.rows) row.erase(row.begin());
  if (!many_ranks) t.right.erase(t.right.begin());
  out += t.render("  ") + "\n";
}

std::string optional_fixed(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : "-"; }

// An op's shapes cut to a table column's width.
std::string short_shapes(std::string shapes) {
  if (columns(shapes) > 48) shapes = shapes.substr(0, 47) + "…";
  return shapes;
}

// The "(no op)" row's label: where GPU ops with no launch in the trace ran
// before their stream's first launched op (LaunchStats::backlog_ops), they
// were queued before the recording began (a first step's backlog), and the
// row says so: all of it, or how many of its ops.
std::string op_row_label(const Profile& p, const OpRow& r) {
  const std::uint64_t queued = p.launches.backlog_ops, none = p.op_summary.unattributed;
  if (r.name != "(no op)" || r.calls != 0 || queued == 0 || none == 0) return r.name;
  if (queued >= none) return "(no op: queued before the recording)";
  return "(no op: " + count(queued) + " of " + count(none) + " queued before the recording)";
}

// The heaviest ops by GPU time (with their ops inside), each with the
// kernels under it.
void framework_ops(const Profile& p, const ReportTextOptions& o, std::string& out) {
  const OpSummary& s = p.op_summary;
  out += "Top " + std::to_string(std::min(o.top, p.op_names.size())) + " framework ops of " + count(p.op_names.size()) +
         (s.gpu_ops == 0 ? std::string(" (by CPU time with the ops inside: the trace has no GPU op)\n")
                         : " (by GPU time with the ops inside; " + count(s.attributed) + " of " + count(s.gpu_ops) +
                               " GPU ops have a launching op)\n");
  Table t;
  t.rows.push_back(
      {"#", "GPU total", "GPU self", "CPU total", "CPU self", "calls", "kernels/call", "launch/call", "TFLOP/s", "op"});
  t.right = {true, true, true, true, true, true, true, true, true, false};
  std::vector<std::size_t> rows_of;
  bool some_without_gpu = false;  // a row some of whose calls launched no GPU work
  std::string nested;             // rows with calls inside calls of their own op
  for (std::size_t i = 0; i < p.op_names.size() && i < o.top; ++i) {
    const OpRow& r = p.op_names[i];
    // Per call of those that launched GPU work (a per-name row mixes them
    // with calls that launched none): "200/10,000" calls.
    const bool mixed = r.gpu_calls > 0 && r.gpu_calls < r.calls;
    some_without_gpu = some_without_gpu || mixed;
    if (r.nested_calls && nested.size() < 200)
      nested += (nested.empty() ? "" : ", ") + r.name + " " + count(r.nested_calls);
    const double calls = r.gpu_calls ? double(r.gpu_calls) : r.calls ? double(r.calls) : 1;
    t.rows.push_back({std::to_string(i + 1), duration(r.gpu_total_ns), duration(r.gpu_self_ns),
                      r.calls ? duration(r.cpu_total_ns) : "-", r.calls ? duration(r.cpu_self_ns) : "-",
                      !r.calls ? "-"
                      : mixed  ? count(r.gpu_calls) + "/" + count(r.calls)
                               : count(r.calls),
                      r.calls ? fixed(double(r.kernels_total) / calls, 1) : "-",
                      r.calls ? duration(static_cast<TimeNs>(double(r.launch_ns) / calls)) : "-",
                      optional_fixed(r.achieved_tflops, 1), op_row_label(p, r)});
    rows_of.push_back(i);
    std::vector<std::string_view> names;
    for (const OpKernel& k : r.top_kernels) names.push_back(k.name);
    const std::vector<std::string> shown = short_kernel_names(names, kTableNameWidth);
    for (std::size_t k = 0; k < names.size() && k < 3; ++k)
      t.rows.push_back({"", duration(r.top_kernels[k].time_ns), "", "", "", count(r.top_kernels[k].count), "", "", "",
                        "  └ " + std::string(to_string(r.top_kernels[k].category)) + ": " + shown[k]});
  }
  out += t.render("  ");
  if (some_without_gpu)
    out += wrap(
        "calls N/M: N of the op's M calls launched GPU work (themselves or through the ops inside them); "
        "kernels/call and launch/call are per such call.",
        o.width, "  ", "  ");
  if (!nested.empty())
    out += wrap("Calls inside a call of the same op are part of it, their GPU time counted once (" + nested + ").",
                o.width, "  ", "  ");
  if (!s.shapes_recorded)
    out += "  No input shapes recorded: profile with record_shapes=True for FLOPs and roofline figures.\n";
  if (s.malformed_shapes) out += "  " + count(s.malformed_shapes) + " op calls had shapes that could not be read.\n";
  if (s.above_peak)
    out += "  " + count(s.above_peak) +
           " op calls would exceed the GPU's peak by their shapes' cost (an input broadcast or read twice, which the "
           "shapes do not show): no cost or roofline is given for them.\n";
  out += "\n";
}

// Where the roofline's rows measure under half of the kernel time: how much
// of it ran in kernels no op with figures launched itself (graph replays,
// compiled kernels, ops without a cost formula or shapes), the heaviest of
// them named, and that how near their peak those run the trace cannot tell.
std::string unmeasured_words(const Profile& p, const ReportTextOptions& o) {
  if (p.kernel_time_ns <= 0) return {};
  for (const DeviceSummary& d : p.devices)
    if (d.hw.busy_samples > 0) return {};  // counters measured them
  TimeNs measured = 0;
  for (const OpRow& row : p.ops)
    if (row.roofline_fraction) measured += row.gpu_self_ns;
  const double covered = std::min(1.0, double(measured) / double(p.kernel_time_ns));
  if (covered >= 0.5) return {};
  std::vector<std::string_view> names;
  std::vector<double> shares;
  for (const Hotspot& h : p.hotspots) {
    if (names.size() == 3 || h.share < 0.05) break;
    if (h.category == KernelCategory::communication || roofline_measures(p, h.name)) continue;
    names.push_back(h.name);
    shares.push_back(h.share);
  }
  const std::vector<std::string> shown = short_kernel_names(names, kTableNameWidth);
  std::string list;
  for (std::size_t i = 0; i < shown.size(); ++i) list += (i ? "; " : "") + shown[i] + " " + percent1(shares[i]);
  bool nvidia = true;
  for (const DeviceSummary& d : p.devices) nvidia = nvidia && nvidia_gpu(d.name, d.compute_major, d.compute_minor);
  return wrap("These rows' ops launched " + percent1(covered) + " of kernel time themselves; the other " +
                  percent1(1 - covered) +
                  " ran in kernels whose launching ops have no figures here (no cost formula, shapes without what "
                  "it needs, or no launching op: graph replays" +
                  (list.empty() ? std::string(")") : std::string("; the heaviest: ") + list + ")") +
                  ": how near the GPU's peak they run the trace cannot tell (" +
                  (nvidia ? "Nsight Compute measures them: ncu --kernel-name regex:NAME; gpuscope capture --metrics"
                          : "the vendor's kernel profiler measures them: rocprof-compute") +
                  ").",
              o.width, "  ", "  ");
}

// The heaviest (op, shapes) rows with a cost formula, with their roofline
// figures (once shapes were recorded).
void roofline(const Profile& p, const ReportTextOptions& o, std::string& out) {
  Table r;
  r.rows.push_back({"#", "GPU total", "calls", "TFLOP/s", "TB/s", "FLOP/B", "bound", "roofline", "op", "shapes"});
  r.right = {true, true, true, true, true, true, false, true, false, false};
  std::size_t shown = 0, same = 0;
  std::vector<std::string> blank;   // heavier ops whose formula gave no figure
  std::vector<const OpRow*> works;  // the rows shown
  for (const OpRow& row : p.ops) {
    if (shown == o.top) break;
    if (row.family.empty() || row.gpu_total_ns == 0) continue;
    if (!row.achieved_tflops && !row.achieved_tbps && !row.roofline_fraction) {
      if (std::find(blank.begin(), blank.end(), row.name) == blank.end()) blank.push_back(row.name);
      continue;
    }
    // An op that launches nothing itself and the op inside it that does the
    // work (aten::linear and aten::addmm), with the same calls and GPU time,
    // are one piece of work: shown once.
    // So is an op inside one shown, of its family, with its calls and its
    // FLOPs (aten::bmm inside aten::matmul, which also copies its input to
    // make it contiguous): the outer row's time holds the inner's.
    const bool wrapped = std::any_of(works.begin(), works.end(), [&](const OpRow* w) {
      const bool same_work =
          w->gpu_total_ns == row.gpu_total_ns && w->calls == row.calls && (w->gpu_self_ns == 0 || row.gpu_self_ns == 0);
      const bool inside = w->calls == row.calls && w->family == row.family && w->flops && row.flops &&
                          std::abs(*w->flops - *row.flops) <= 1e-6 * *w->flops &&
                          row.path.find(w->name) != std::string::npos && row.gpu_total_ns <= w->gpu_total_ns;
      return same_work || inside;
    });
    if (wrapped) {
      ++same;
      continue;
    }
    works.push_back(&row);
    ++shown;
    const std::string shapes = short_shapes(row.shapes.empty() ? "?" : row.shapes);
    r.rows.push_back(
        {std::to_string(shown), duration(row.gpu_total_ns), count(row.calls), optional_fixed(row.achieved_tflops, 1),
         optional_fixed(row.achieved_tbps, 2), optional_fixed(row.intensity, 0), row.bound.empty() ? "-" : row.bound,
         row.roofline_fraction ? percent1(*row.roofline_fraction) : "-", row.name + " " + row.math, shapes});
  }
  std::string blank_names;
  for (std::size_t i = 0; i < blank.size() && i < 3; ++i) blank_names += (i ? ", " : "") + blank[i];
  if (blank.size() > 3) blank_names += ", …";
  const std::string no_figures =
      blank.empty() ? std::string()
                    : "Heavier ops with a cost formula but no figures (" + blank_names +
                          "): their recorded inputs lack what it needs (a convolution's stride, padding and "
                          "dilation are not shapes; newer PyTorch records them as concrete inputs).";
  if (shown == 0) {
    if (!blank.empty()) out += "Roofline: no figures.\n" + wrap(no_figures, o.width, "  ", "  ") + "\n";
    return;
  }
  out += "Roofline of the heaviest ops with a cost formula (per shape)\n";
  out += r.render("  ");
  if (same)
    out += wrap(count(same) + (same == 1 ? " row" : " rows") +
                    " left out: an op that launches nothing itself around an op shown, or the reverse, with the "
                    "same calls and GPU time; or an op inside one shown with its calls and FLOPs (aten::bmm in "
                    "aten::matmul, whose time also holds the copies it makes).",
                o.width, "  ", "  ");
  if (!blank.empty()) out += wrap(no_figures, o.width, "  ", "  ");
  out += unmeasured_words(p, o);
  if (!p.devices.empty() && !p.devices[0].peaks_source.empty()) out += "  Peaks: " + p.devices[0].peaks_source + ".\n";
  out += "\n";
}

// The op table: the framework ops; then, where shapes were recorded, the roofline.
void op_table(const Profile& p, const ReportTextOptions& o, std::string& out) {
  if (p.op_names.empty()) return;
  framework_ops(p, o, out);
  if (p.op_summary.shapes_recorded) roofline(p, o, out);
}

// Forward and backward GPU time per nn.Module, backward ops linked to their
// forward ops by PyTorch's sequence numbers; unknown where a training trace
// has none (never guessed from names).
void module_split(const Profile& p, const ReportTextOptions& o, std::string& out) {
  const ModuleSplit& m = p.module_split;
  if (!m.known) {
    if (p.workload.framework == "pytorch" && p.workload.phase == "training" && !p.op_names.empty())
      out +=
          "Forward and backward GPU time per nn.Module: unknown (the trace has no sequence numbers to link a "
          "backward op to its forward op)\n\n";
    return;
  }
  if (m.backward_ops == 0) return;  // inference: no backward pass to split
  // Without module ranges the one row's "forward" is every GPU op outside
  // the backward ops (the optimizer, communication, work of backward ops
  // that carry no sequence number): no forward/backward ratio to read.
  if (m.modules.size() == 1 && m.modules[0].name == "(no module)") {
    out += wrap(
               "Forward and backward GPU time per nn.Module: unknown (the trace has no nn.Module ranges; "
               "torch.profiler with_modules=True, or gpuscope capture's modules, record them)." +
                   (m.linked ? " The " + count(m.linked) + " backward ops the trace links to forward ops launched " +
                                   duration(m.modules[0].backward_gpu_ns) + " of GPU work."
                             : std::string()),
               o.width, "", "  ") +
           "\n";
    return;
  }
  out += "Forward and backward GPU time per nn.Module (" + count(m.linked) + " of " + count(m.backward_ops) +
         " backward ops linked to their forward ops by PyTorch's sequence numbers)\n";
  // Forward ops inside backward ops: activation checkpointing's recompute,
  // in the backward time of the module whose backward op ran it.
  if (m.recomputed_gpu_ns > 0)
    out += wrap("Of the backward time, " + duration(m.recomputed_gpu_ns) + " (" +
                    percent(double(m.recomputed_gpu_ns) / double(std::max<TimeNs>(1, m.backward_gpu_ns))) +
                    ") is forward ops run inside backward ops (" + count(m.recomputed_ops) +
                    "): the forward pass recomputed for the gradients (activation checkpointing), counted in the "
                    "backward time of the module whose backward op ran it.",
                o.width, "  ", "  ");
  Table t;
  t.rows.push_back({"module", "forward", "backward", "bwd/fwd", "backward ops"});
  t.right = {false, true, true, true, true};
  for (std::size_t i = 0; i < m.modules.size() && i < o.top; ++i) {
    const ModuleTime& x = m.modules[i];
    char ratio[32] = "-";
    if (x.forward_gpu_ns > 0) std::snprintf(ratio, sizeof ratio, "%.2f", double(x.backward_gpu_ns) / x.forward_gpu_ns);
    t.rows.push_back({x.name, duration(x.forward_gpu_ns), duration(x.backward_gpu_ns), ratio, count(x.backward_ops)});
  }
  if (m.unlinked > 0)
    t.rows.push_back({"(backward, not linked)", "-", duration(m.unlinked_gpu_ns), "-", count(m.unlinked)});
  out += t.render("  ");
  out += "\n";
}

void host_side(const Profile& p, std::string& out) {
  const LaunchStats& l = p.launches;
  // Ops a graph launch replayed share its one call, and a synchronous copy
  // call waits for its copy: counted apart.
  std::string apart;
  if (l.graph_ops) apart = count(l.graph_ops, "more GPU op", "more GPU ops") + " replayed by graph launches";
  if (l.synchronous_copies)
    apart += (apart.empty() ? "" : ", ") + count(l.synchronous_copies) +
             (l.synchronous_copies == 1 ? " more copy" : " more copies") + " by synchronous copy calls";
  const std::string graph_ops = apart.empty() ? apart : " (" + apart + ", not in these figures)";
  if (l.launches)
    out += "Launches: " + count(l.launches) + graph_ops + " · CPU launch call median " + duration(l.cpu_launch.median) +
           " · GPU op median " + duration(l.gpu_duration.median) + " · launch delay median " +
           duration(l.launch_delay.median) + " (max " + duration(l.launch_delay.max) +
           (l.first_op_delay_ns > 0 ? "; unreliable: see the WARNING above" : "") +
           ") · ops shorter than their launch " + percent(l.short_kernel_share) + " · deepest queue " +
           count(l.max_queue_depth) + (l.first_op_delay_ns > 0 ? " (unreliable)" : "") + "\n";
  else if (l.graph_ops)
    out += "Launches: none but graph launches, which replayed " + count(l.graph_ops, "GPU op", "GPU ops") +
           (l.synchronous_copies
                ? ", and " + count(l.synchronous_copies, "synchronous copy call", "synchronous copy calls")
                : std::string()) +
           " · deepest queue " + count(l.max_queue_depth) + "\n";
  else if (l.synchronous_copies)
    out +=
        "Launches: none but " + count(l.synchronous_copies, "synchronous copy call", "synchronous copy calls") + "\n";
  const MemcpyStats& m = p.memcpys;
  if (m.count)
    out += "Copies: " + count(m.count) + " (" + bytes(m.bytes) + ", " + duration(m.time_ns) + "): " + count(m.htod) +
           " HtoD, " + count(m.dtoh) + " DtoH, " + count(m.dtod) + " DtoD, " + count(m.other) + " other · " +
           count(m.pageable) + " pageable · " + count(m.synchronous) + " blocking\n";
  for (std::size_t i = 0; i < m.groups.size() && i < 4; ++i) {
    const CopyGroup& g = m.groups[i];
    // A memory kind the recorder left out is said as such, not as if a place.
    const std::string memory = g.memory != "unknown" ? g.memory
                                                     : std::string(g.direction == "HtoD"   ? "from"
                                                                   : g.direction == "DtoH" ? "to"
                                                                                           : "with") +
                                                           " memory of unknown kind (pinned or pageable not recorded)";
    out += "  " + g.direction + " " + memory + (g.own_stream ? " on a copy stream" : " on a compute stream") + ": " +
           count(g.count) + " (" + bytes(g.bytes) + ", " + duration(g.time_ns) + ")" +
           (g.blocking ? ", " + count(g.blocking) + " blocking" : std::string()) + "\n";
  }
  const SyncStats& y = p.syncs;
  // A trace filtered to its launch calls holds no sync calls to count: the
  // syncs are unknown, the blocking copies (launches themselves) are not.
  if (!p.workload.host_filtered.empty())
    out += "Host syncs: unknown: the trace keeps only launch calls (see Recording above)" +
           (y.copies ? "; " + count(y.copies, "blocking copy", "blocking copies") + " held the host " +
                           duration(y.copy_ns) + ", GPU idle after them " + duration(y.gpu_idle_after_copies_ns)
                     : std::string()) +
           "\n";
  else if (y.count || y.copies || y.setup_syncs)
    out +=
        "Host syncs: " + count(y.count) + " (" + count(y.device_syncs) + " device, " + count(y.stream_syncs) +
        " stream, " + count(y.event_syncs) + " event), host blocked " + duration(y.total_ns) +
        (y.copies ? " in them and " + duration(y.copy_ns) + " in " + count(y.copies, "blocking copy", "blocking copies")
                  : std::string()) +
        // Without GPU ops in the trace, whether the GPU idled after them is unknown.
        (p.devices.empty() ? std::string(", GPU idle after them: unknown (the trace has no GPU ops)")
                           : ", GPU idle after them " + duration(y.gpu_idle_after_ns) +
                                 (y.copies ? " (" + duration(y.gpu_idle_after_copies_ns) + " after " + count(y.copies) +
                                                 " blocking copies)"
                                           : std::string())) +
        (y.setup_syncs ? "; not in these figures, " + count(y.setup_syncs) + " more of " + graph_word(p) +
                             "s' one-time set-up (recording a graph up to its first run) held "
                             "the host " +
                             duration(y.setup_ns) + ", GPU idle after them " + duration(y.setup_idle_ns) + " (warm-up)"
                       : std::string()) +
        "\n";
  if (l.launches || l.graph_ops || l.synchronous_copies || m.count || y.count || y.setup_syncs ||
      !p.workload.host_filtered.empty())
    out += "\n";
}

void hta(const Profile& p, const ReportTextOptions& o, std::string& out) {
  if (p.temporal_breakdown.empty()) return;
  out += "HTA temporal breakdown (Holistic Trace Analysis' definitions: idle / compute / non-compute of the span)\n";
  for (const TemporalBreakdown& t : p.temporal_breakdown) {
    std::string who = "rank " + std::to_string(t.rank);
    if (t.device != kNoDevice) who += " GPU " + std::to_string(t.device);
    // A negative HTA share is shown as 0, with what it was (TemporalBreakdown::non_compute_note).
    out += "  " + who + ": idle " + fixed(t.idle_share * 100, 2) + "% · compute " + fixed(t.compute_share * 100, 2) +
           "% · non-compute " + fixed(std::max(0.0, t.non_compute_share) * 100, 2) + "% (span " + duration(t.span_ns) +
           ")\n";
    if (!t.non_compute_note.empty()) out += "    (" + t.non_compute_note + ")\n";
    // Where HTA's idle share and this report's differ by a point or more,
    // say both and why they can (HTA's own rounding and span).
    for (const DeviceSummary& d : p.devices) {
      if (d.id != t.device || d.rank != t.rank || d.span_ns <= 0) continue;
      const double ours = 1.0 - d.utilization;
      if (std::abs(t.idle_share - ours) < 0.01) continue;
      out += wrap("(this report's idle for the GPU is " + fixed(ours * 100, 2) + "% of its " + duration(d.span_ns) +
                      " span; HTA's differs by its definitions: it takes its own span, counts the stream "
                      "synchronizations Kineto draws on the GPU's streams as busy, and where the trace has "
                      "times finer than a µs it rounds each op inward to whole µs, its start up and its end down, "
                      "which moves the busy time of many short ops to idle; docs/metrics.md, \"HTA's temporal "
                      "breakdown\")",
                  o.width, "    ", "     ");
    }
  }
  out += "\n";
}

void ranks(const Profile& p, std::string& out) {
  if (p.ranks.size() < 2) return;
  out += "Ranks and GPUs (skew: compute spread " + percent(p.skew.compute_spread) + ", busy spread " +
         percent(p.skew.busy_spread) + ")\n";
  Table t;
  t.rows.push_back(
      {"rank", "GPU", "util", "compute", "compute/step", "comm", "exposed comm", "step", "clock shift", "file"});
  t.right = {true, true, true, true, true, true, true, true, true, false};
  for (const RankSummary& r : p.ranks)
    t.rows.push_back({std::to_string(r.rank), r.device == kNoDevice ? "-" : std::to_string(r.device),
                      percent1(r.utilization), duration(r.compute_ns), duration(r.compute_per_step_ns),
                      duration(r.communication_ns), duration(r.exposed_communication_ns), duration(r.step_time_mean),
                      duration(r.clock_offset_ns), r.source_file});
  out += t.render("  ") + "\n";
}

// The ranks by the wait they caused at the matched collectives.
constexpr std::size_t kStragglersShown = 8;

void stragglers(const Profile& p, std::string& out) {
  if (p.stragglers.empty()) return;
  TimeNs wait = 0;
  for (const CollectiveInstance& c : p.collectives) wait += c.wait_ns;
  out += "Stragglers (" + count(p.collectives.size()) + " collectives matched across " +
         std::to_string(p.stragglers.size()) + " ranks; the others waited " + duration(wait) + " in all)\n";
  Table t;
  t.rows.push_back({"rank", "wait caused", "last at", "critical steps", "waited", "clock residual", "file"});
  t.right = {true, true, true, true, true, true, false};
  for (std::size_t i = 0; i < p.stragglers.size() && i < kStragglersShown; ++i) {
    const Straggler& s = p.stragglers[i];
    TimeNs residual = 0;
    for (const RankSummary& r : p.ranks)
      if (r.rank == s.rank) residual = r.clock_residual_ns;
    t.rows.push_back({std::to_string(s.rank), duration(s.wait_caused_ns), count(s.last_arrivals),
                      count(s.critical_steps), duration(s.waited_ns), duration(residual), s.source_file});
  }
  out += t.render("  ");
  if (p.stragglers.size() > kStragglersShown)
    out += "  … and " + count(p.stragglers.size() - kStragglersShown) + " more ranks (--json lists them all)\n";
  out += "\n";
}

void trace_stats(const Profile& p, std::string& out) {
  bool any = false;
  for (const auto& [key, value] : p.trace_stats) {
    if (!value) continue;
    if (!any) out += "Trace statistics (events the source could not keep are counted here)\n";
    any = true;
    out += "  " + key + " = " + count(value) + "\n";
  }
  if (any) out += "\n";
}

// The text report's sections, in order (those that take no options as
// without_options<section>).
using TextSection = void (*)(const Profile&, const ReportTextOptions&, std::string&);
template <void (*Section)(const Profile&, std::string&)>
void without_options(const Profile& p, const ReportTextOptions&, std::string& out) {
  Section(p, out);
}
constexpr TextSection kTextSections[] = {without_options<storage_damage>,
                                         without_options<header>,
                                         answers_section,
                                         findings,
                                         without_options<devices>,
                                         idle_charges,
                                         without_options<hardware>,
                                         without_options<occupancy>,
                                         without_options<memory>,
                                         steps,
                                         critical_path,
                                         without_options<categories>,
                                         hotspots,
                                         collective_sites,
                                         op_table,
                                         module_split,
                                         without_options<host_side>,
                                         hta,
                                         without_options<ranks>,
                                         without_options<stragglers>,
                                         without_options<trace_stats>};

}  // namespace

std::string_view idle_cause_words(std::string_view cause) {
  if (cause == "input-wait") return "input loading";
  if (cause == "host-sync") return "after host synchronizations";
  if (cause == "blocking-copy") return "after blocking copies";
  if (cause == "pageable-staging") return "pageable copies' staging";
  if (cause == "late-launch") return "late launches, short gaps";
  if (cause == "late-launch-gap") return "late launches, long gaps";
  if (cause == "queued-gap") return "queued work, long gaps";
  if (cause == "comm-gap") return "unrecorded comm, long gaps";
  if (cause == "unlaunched-gap") return "no launch recorded, long gaps";
  if (cause == "unrecorded-gap") return "before a stream's first op";
  if (cause == "warm-up") return "warm-up (first calls)";
  if (cause == "input-before-start") return "input loading, before start";
  return "other";
}

// Where the host was in one cause's idle time, from its samples: "host:
// `train.py(40): step` → `loader.py(88): next` 71% of 420 samples (python,
// tid 4505)", or what the samples cannot tell.
std::string host_where_line(const HostWhere& w) {
  if (w.samples == 0 || (w.path.empty() && w.leaves.empty()) || w.samples < kHostWhereMinSamples)
    return "host: " + w.note;
  auto share = [&](std::uint64_t n) { return percent(static_cast<double>(n) / static_cast<double>(w.samples)); };
  std::string s = "host (" + count(w.samples) + " samples, " +
                  (w.threads > 1 ? count(w.threads) + " threads, most on " : std::string()) + w.thread + "): ";
  if (!w.path.empty()) {
    if (w.path_depth > w.path.size()) s += "… → ";
    for (std::size_t i = 0; i < w.path.size(); ++i) s += (i ? " → " : "") + w.path[i];
    s += " " + share(w.path_samples);
  } else {
    for (std::size_t i = 0; i < w.leaves.size(); ++i)
      s += (i ? ", " : "innermost ") + w.leaves[i].frame + " " + share(w.leaves[i].samples);
  }
  return w.note.empty() ? s : s + "; " + w.note;
}

std::string report_text(const Profile& p, const ReportTextOptions& o) {
  std::string out;
  for (TextSection section : kTextSections) section(p, o, out);
  while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();
  return out;
}

// [SECTION] Diff ----------------------------------------------------------------------------------------

namespace {

// A table of the diff under its title, when it has rows besides its header.
void titled(std::string_view title, const Table& t, std::string& out) {
  if (t.rows.size() > 1) out += std::string(title) + "\n" + t.render("  ") + "\n";
}

std::string change_percent(double a, double b) {
  return a == 0 ? std::string("-") : (b >= a ? "+" : "") + percent1((b - a) / a);
}

// The two runs, what the times are, the summary lines and the headline figures.
void diff_headline(const ProfileDiff& d, const ReportTextOptions& o, std::string& out) {
  out += "gpuscope diff: " + (d.before_label.empty() ? std::string("before") : d.before_label) + " -> " +
         (d.after_label.empty() ? std::string("after") : d.after_label) + "\n";
  out += d.per_step ? "Times per step (" + count(d.before_steps) + " and " + count(d.after_steps) + " steps per GPU)\n"
                    : "Times are totals over each trace (no steps on both sides)\n";
  out += "\n";
  for (const std::string& s : d.summary) out += wrap(s, o.width, "  * ", "    ");
  out += "\n";
  Table t;
  t.rows.push_back({"", "before", "after", "change"});
  t.right = {false, true, true, true};
  if (d.before_step_ns || d.after_step_ns)
    t.rows.push_back({"step time", duration(d.before_step_ns), duration(d.after_step_ns),
                      change_percent(double(d.before_step_ns), double(d.after_step_ns))});
  t.rows.push_back({"kernel time", duration(d.before_kernel_ns), duration(d.after_kernel_ns),
                    change_percent(double(d.before_kernel_ns), double(d.after_kernel_ns))});
  t.rows.push_back({"GPU utilization", percent1(d.before_utilization), percent1(d.after_utilization), ""});
  t.rows.push_back({"kernel concurrency", percent1(d.before_concurrency), percent1(d.after_concurrency), ""});
  t.rows.push_back({"HTA idle share", percent1(d.before_idle_share), percent1(d.after_idle_share), ""});
  auto memory_row = [&](const char* what, const std::optional<std::uint64_t>& a,
                        const std::optional<std::uint64_t>& b) {
    if (!a && !b) return;
    t.rows.push_back(
        {what, a ? bytes(*a) : "-", b ? bytes(*b) : "-", a && b ? change_percent(double(*a), double(*b)) : "-"});
  };
  memory_row("peak memory allocated", d.before_peak_allocated, d.after_peak_allocated);
  memory_row("peak memory reserved", d.before_peak_reserved, d.after_peak_reserved);
  out += t.render("  ") + "\n";
}

// Where the time went on both sides: kernel time by category, idle time by cause.
void diff_breakdowns(const ProfileDiff& d, std::string& out) {
  Table c;
  c.rows.push_back({"category", "before", "after", "change", "share before", "share after"});
  c.right = {false, true, true, true, true, true};
  for (const CategoryDelta& x : d.categories)
    c.rows.push_back({std::string(to_string(x.category)), duration(x.before_ns), duration(x.after_ns),
                      duration(x.after_ns - x.before_ns), percent1(x.before_share), percent1(x.after_share)});
  titled("Kernel time by category", c, out);

  Table idle;
  idle.rows.push_back({"cause", "before", "after", "change", "charged to before", "charged to after"});
  idle.right = {false, true, true, true, false, false};
  for (const IdleDelta& x : d.idle)
    idle.rows.push_back({std::string(idle_cause_words(x.cause)), duration(x.before_ns), duration(x.after_ns),
                         duration(x.after_ns - x.before_ns), x.before_finding.empty() ? "-" : x.before_finding,
                         x.after_finding.empty() ? "-" : x.after_finding});
  titled(std::string("Idle time by cause (per GPU") + (d.per_step ? ", per step" : "") + ")", idle, out);
}

// The kernels and framework ops whose time changed most, and the hardware counters.
void diff_changes(const ProfileDiff& d, const ReportTextOptions& o, std::string& out) {
  Table k;
  k.rows.push_back({"before", "after", "change", "count before", "count after", "kernel"});
  k.right = {true, true, true, true, true, false};
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i < d.kernels.size() && i < o.top; ++i) names.push_back(d.kernels[i].name);
  const std::vector<std::string> shown = short_kernel_names(names, kTableNameWidth);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const KernelDelta& x = d.kernels[i];
    k.rows.push_back({duration(x.before_ns), duration(x.after_ns), duration(x.after_ns - x.before_ns),
                      count(x.before_count), count(x.after_count), shown[i]});
  }
  titled("Kernels that changed most", k, out);

  Table ops;
  ops.rows.push_back({"before", "after", "change", "calls before", "calls after", "op"});
  ops.right = {true, true, true, true, true, false};
  for (std::size_t i = 0; i < d.ops.size() && i < o.top; ++i) {
    const OpDelta& x = d.ops[i];
    if (x.after_ns == x.before_ns) continue;
    const std::string shapes = short_shapes(x.shapes);
    ops.rows.push_back({duration(x.before_ns), duration(x.after_ns), duration(x.after_ns - x.before_ns),
                        count(x.before_calls), count(x.after_calls), x.name + (shapes.empty() ? "" : " " + shapes)});
  }
  titled("Framework ops that changed most (GPU time with the ops inside)", ops, out);

  Table hw;
  hw.rows.push_back({"before", "after", "samples before", "samples after", "series (mean over the GPUs)"});
  hw.right = {true, true, true, true, false};
  for (const HwDelta& x : d.hardware)
    hw.rows.push_back({x.before ? hw_value(x.unit, *x.before) : "-", x.after ? hw_value(x.unit, *x.after) : "-",
                       count(x.before_samples), count(x.after_samples), x.name});
  titled("Hardware (measured by the GPUs' counters)", hw, out);
}

// The findings resolved, new, worse, better or unchanged.
void diff_findings(const ProfileDiff& d, const ReportTextOptions& o, std::string& out) {
  if (d.findings.empty()) return;
  out += "Findings\n";
  for (const FindingDelta& f : d.findings) {
    std::string line = pad(std::string(to_string(f.change)), 9) + " " + f.id;
    if (f.in_before && f.in_after)
      line += ": " + percent1(f.before_metric) + " -> " + percent1(f.after_metric) + " (saving " +
              duration(f.before_saving_ns) + " -> " + duration(f.after_saving_ns) + ")";
    else if (f.in_before)
      line += ": was " + f.before_title;
    else
      line += ": " + f.after_title;
    out += wrap(line, o.width, "  ", "            ");
  }
}

}  // namespace

std::string diff_text(const ProfileDiff& d, const ReportTextOptions& o) {
  std::string out;
  diff_headline(d, o, out);
  diff_breakdowns(d, out);
  diff_changes(d, o, out);
  diff_findings(d, o, out);
  return out;
}

}  // namespace gpuscope
