// The report's simulated savings (analysis/graph/savings.h): each finding
// whose rule names a fix gets the replayed saving of that fix and its
// predicted step; the others keep their rule of thumb; the critical path
// adds up; long traces are simulated on a window of steps in the middle, and
// a trace without steps as a whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/graph/savings.h"
#include "analysis/graph/tiny_trace.h"
#include "import/open_trace.h"
#include "import/synthetic.h"
#include "support/findings.h"
#include "support/real_traces.h"
#include "support/test_traces.h"

namespace gpuscope::graph {
namespace {

Profile simulated(const Trace& t, const SimulationOptions& o = {}) {
  const JobInput in{&t, "trace"};
  Profile p = analyze_job(std::span<const JobInput>(&in, 1));
  simulate_findings(std::span<const JobInput>(&in, 1), &p, o);
  return p;
}

const Finding* find(const Profile& p, std::string_view id) {
  for (const Finding& f : p.findings)
    if (f.id == id) return &f;
  return nullptr;
}

double relative(TimeNs a, TimeNs b) { return std::fabs(static_cast<double>(a - b)) / static_cast<double>(b); }

TEST(SimulatedSavings, PaddingFixPredictsTheRunWithoutPadding) {
  SyntheticOptions before;
  before.kernels = 20000;
  before.padding_share = 0.2;
  SyntheticOptions after;
  after.kernels = 20000;
  const Trace tb = make_synthetic_trace(before), ta = make_synthetic_trace(after);
  const Profile p = simulated(tb);
  ASSERT_EQ(p.simulation.status, "simulated");
  EXPECT_LE(p.simulation.replay_error, 0.02);
  const Finding* f = find(p, "padding-hotspot");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->saving_source, SavingSource::simulated);
  EXPECT_EQ(f->fix, "--remove padding");
  EXPECT_LT(f->predicted_step_ns, p.simulation.replayed_step_ns);
  EXPECT_GT(f->saving_ns, 0);
  EXPECT_LE(relative(f->predicted_step_ns, analyze(ta).steps.step_time.median), 0.03);
  // The prediction is listed under "what would help", alone and together.
  bool listed = false;
  for (const Prediction& pr : p.simulation.predictions)
    if (pr.change == "--remove padding") listed = pr.step_ns == f->predicted_step_ns && pr.speedup > 1.0;
  EXPECT_TRUE(listed);
  EXPECT_NE(p.simulation.together.change.find("--remove padding"), std::string::npos);
  EXPECT_LE(p.simulation.together.step_ns, f->predicted_step_ns);
  // Findings stay ordered by saving.
  for (std::size_t i = 1; i < p.findings.size(); ++i) EXPECT_GE(p.findings[i - 1].saving_ns, p.findings[i].saving_ns);
}

// Rank `rank` of a two-rank job: padding (20 %) on rank 0 only, broadcasts
// on both at `broadcast`.
SyntheticOptions two_rank_job(int rank, double broadcast) {
  SyntheticOptions o;
  o.kernels = 6000;
  o.seed = static_cast<std::uint64_t>(rank + 1);
  o.broadcast_share = broadcast;
  o.padding_share = rank == 0 ? 0.2 : 0;
  return o;
}

// That job, its traces in memory, analysed and simulated as one.
struct TwoRankJob {
  Trace t0, t1;
  explicit TwoRankJob(double broadcast)
      : t0(make_synthetic_trace(two_rank_job(0, broadcast))), t1(make_synthetic_trace(two_rank_job(1, broadcast))) {}
  std::array<JobInput, 2> inputs() const { return {JobInput{&t0, "rank0"}, JobInput{&t1, "rank1"}}; }
  Profile simulated() const {
    const std::array<JobInput, 2> in = inputs();
    Profile p = analyze_job(in);
    simulate_findings(in, &p, {});
    return p;
  }
};

// A job read one trace at a time (each trace made, handed over and freed, as
// `gpuscope report DIR` does) predicts exactly what the same traces held in
// memory predict. The ranks differ (padding on one only), so the fixes that
// count for the job are not one rank's own: removing rank 0's padding
// shortens its steps, but the median step of the job's pooled steps by
// under 1 %, so it is not among the job's fixes together, and rank 0's
// trace, whose own set had it, is read again for the job's set.
TEST(SimulatedSavings, AJobReadOneTraceAtATimePredictsAsTheTracesInMemory) {
  auto options = [](int rank) { return two_rank_job(rank, 0.15); };
  const Trace t0 = make_synthetic_trace(options(0)), t1 = make_synthetic_trace(options(1));
  const JobInput in[] = {{&t0, "rank0"}, {&t1, "rank1"}};
  Profile held = analyze_job(in);
  simulate_findings(in, &held, {});
  Profile streamed = analyze_job(in);
  std::vector<int> visits(2, 0);
  simulate_findings_each(
      2,
      [&](std::size_t i, const std::function<void(const Trace&)>& f) {
        ++visits[i];
        const Trace t = make_synthetic_trace(options(static_cast<int>(i)));
        f(t);
      },
      &streamed, {}, 1);
  ASSERT_EQ(held.simulation.status, "simulated");
  EXPECT_EQ(streamed.simulation.status, held.simulation.status);
  EXPECT_EQ(held.simulation.together.change, "--remove broadcast");
  // Still a numbered finding of the job: each rank is replayed alone, so
  // the pooled median does not judge it (the other rank's waits for rank 0
  // stay as recorded).
  const Finding* padding = find(held, "padding-hotspot");
  ASSERT_NE(padding, nullptr);
  EXPECT_EQ(padding->saving_source, SavingSource::simulated);

  EXPECT_EQ(streamed.simulation.together.change, held.simulation.together.change);
  EXPECT_EQ(streamed.simulation.together.step_ns, held.simulation.together.step_ns);
  EXPECT_LT(held.simulation.together.step_ns, held.simulation.replayed_step_ns);
  // One rank's own fixes are not the job's: that trace alone is read again.
  EXPECT_EQ(std::min(visits[0], visits[1]), 1);
  EXPECT_EQ(std::max(visits[0], visits[1]), 2);
}

// Padding on one rank of two and nothing else to fix: "a different data
// layout?" is unknown, not no. Rank 0's steps get shorter in its replay, the
// pooled median step hardly, and the replay cannot say what the other rank's
// waits for rank 0 at the all-reduce would give back.
TEST(SimulatedSavings, AFixOnOneRankOfAJobIsUnknownForTheJob) {
  const Profile p = TwoRankJob(0).simulated();
  ASSERT_EQ(p.simulation.status, "simulated");
  ASSERT_NE(find(p, "padding-hotspot"), nullptr);
  bool answered = false;
  for (const HelpAnswer& a : p.helps)
    if (a.id == "data-layout") {
      answered = true;
      EXPECT_EQ(a.verdict, Verdict::unknown) << a.reason;
      EXPECT_NE(a.reason.find("each rank is replayed alone"), std::string::npos) << a.reason;
    }
  EXPECT_TRUE(answered);
}

// The job of AJobReadOneTraceAtATimePredictsAsTheTracesInMemory, split as two processes split it (job/job_files.cpp
// under MPI): each simulates its trace, the bytes go to "process 0", which
// combines them; the profile is the one process's.
TEST(SimulationShare, TwoSharesCombinedGiveTheOneProcessProfile) {
  const TwoRankJob job(0.15);
  const std::array<JobInput, 2> in = job.inputs();
  const Profile one = job.simulated();
  ASSERT_EQ(one.simulation.status, "simulated");
  ASSERT_FALSE(one.simulation.together.change.empty());

  Profile p = analyze_job(in);
  const TraceVisitor visit = [&](std::size_t i, const std::function<void(const Trace&)>& f) {
    f(i == 0 ? job.t0 : job.t1);
  };
  const SimulationPlan plan = simulation_plan(2, &p, {});
  ASSERT_TRUE(plan.run);
  ASSERT_FALSE(plan.fixes.empty());
  const std::string plan_bytes = encode_plan(plan);
  const SimulationPlan told = decode_plan(plan_bytes);
  EXPECT_EQ(told.fixes, plan.fixes);
  EXPECT_EQ(encode_plan(told), plan_bytes);

  SimulationShare zero(plan, 2), other(told, 2);
  const std::size_t mine0[] = {0}, mine1[] = {1};
  zero.simulate(mine0, visit, 1);
  other.simulate(mine1, visit, 1);
  const std::string bytes = other.encode(1);
  zero.decode(1, bytes);
  // Decoded and encoded again: the same bytes.
  SimulationShare again(told, 2);
  again.decode(1, bytes);
  EXPECT_EQ(again.encode(1), bytes);

  ASSERT_TRUE(zero.combine(&p));
  const std::string helps = zero.helps_bytes();
  ASSERT_FALSE(helps.empty());  // one trace's own fixes are not the job's
  other.set_helps(helps);
  EXPECT_TRUE(other.stale(1) || zero.stale(0));
  zero.retogether(mine0, visit, 1);
  const bool resend = zero.stale(1);
  other.retogether(mine1, visit, 1);
  EXPECT_FALSE(other.stale(1));
  if (resend) zero.decode_together(1, other.encode_together(1));
  EXPECT_FALSE(zero.stale(1));
  zero.finish(&p);

  EXPECT_EQ(p.simulation.status, one.simulation.status);
  EXPECT_EQ(p.simulation.scope, one.simulation.scope);
  EXPECT_EQ(p.simulation.steps, one.simulation.steps);
  EXPECT_EQ(p.simulation.replayed_step_ns, one.simulation.replayed_step_ns);
  EXPECT_EQ(p.simulation.replay_error, one.simulation.replay_error);
  EXPECT_EQ(p.simulation.together.change, one.simulation.together.change);
  EXPECT_EQ(p.simulation.together.step_ns, one.simulation.together.step_ns);
  ASSERT_EQ(p.simulation.predictions.size(), one.simulation.predictions.size());
  for (std::size_t k = 0; k < p.simulation.predictions.size(); ++k) {
    EXPECT_EQ(p.simulation.predictions[k].change, one.simulation.predictions[k].change);
    EXPECT_EQ(p.simulation.predictions[k].step_ns, one.simulation.predictions[k].step_ns);
  }
  EXPECT_EQ(p.critical_path.length_ns, one.critical_path.length_ns);
  EXPECT_EQ(p.critical_path.gpu_compute_ns, one.critical_path.gpu_compute_ns);
  ASSERT_EQ(p.critical_path.ops.size(), one.critical_path.ops.size());
  for (std::size_t k = 0; k < p.critical_path.ops.size(); ++k) {
    EXPECT_EQ(p.critical_path.ops[k].name, one.critical_path.ops[k].name);
    EXPECT_EQ(p.critical_path.ops[k].ns, one.critical_path.ops[k].ns);
    EXPECT_EQ(p.critical_path.ops[k].count, one.critical_path.ops[k].count);
  }
  ASSERT_EQ(p.findings.size(), one.findings.size());
  for (std::size_t k = 0; k < p.findings.size(); ++k) {
    EXPECT_EQ(p.findings[k].id, one.findings[k].id);
    EXPECT_EQ(p.findings[k].saving_ns, one.findings[k].saving_ns);
    EXPECT_EQ(p.findings[k].saving_source, one.findings[k].saving_source);
    EXPECT_EQ(p.findings[k].predicted_step_ns, one.findings[k].predicted_step_ns);
    EXPECT_EQ(p.findings[k].saving_note, one.findings[k].saving_note);
    EXPECT_EQ(p.findings[k].after_fixes, one.findings[k].after_fixes);
    EXPECT_EQ(p.findings[k].after_to_ns, one.findings[k].after_to_ns);
  }
}

TEST(SimulationShare, BadBytesAreRefusedWithWhatIsWrong) {
  SyntheticOptions o;
  o.kernels = 3000;
  o.padding_share = 0.2;
  const Trace t = make_synthetic_trace(o);
  const JobInput in{&t, "trace"};
  Profile p = analyze_job(std::span<const JobInput>(&in, 1));
  const SimulationPlan plan = simulation_plan(1, &p, {});
  ASSERT_FALSE(plan.fixes.empty());
  SimulationShare share(plan, 1);
  const std::size_t mine[] = {0};
  share.simulate(
      mine, [&](std::size_t, const std::function<void(const Trace&)>& f) { f(t); }, 1);
  const std::string bytes = share.encode(0);
  SimulationShare target(plan, 1);
  auto refused = [&](std::string_view b, std::string_view says) {
    try {
      target.decode(0, b);
      ADD_FAILURE() << "accepted " << b.size() << " bytes";
    } catch (const SimulationCodecError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused(std::string_view(bytes).substr(0, bytes.size() - 3), "cut short");
  refused(bytes + "x", "left over");
  refused("Q" + bytes.substr(1), "no outcome mark");
  refused("", "no outcome mark");
  // A share planned with fewer fixes refuses the outcomes of more.
  SimulationPlan fewer = plan;
  fewer.fixes.pop_back();
  SimulationShare wrong(fewer, 1);
  EXPECT_THROW(wrong.decode(0, bytes), SimulationCodecError);
  EXPECT_THROW(decode_plan(encode_plan(plan).substr(1)), SimulationCodecError);
  EXPECT_THROW(target.set_helps(std::string(plan.fixes.size() + 1, '1')), SimulationCodecError);
  EXPECT_THROW(target.set_helps(std::string(plan.fixes.size(), '2')), SimulationCodecError);
  // A trace that failed elsewhere: combining says why.
  target.decode(0, "Erank 3: cannot be read");
  try {
    target.combine(&p);
    ADD_FAILURE() << "combined a failed trace";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "rank 3: cannot be read");
  }
  // The good bytes still decode.
  SimulationShare fine(plan, 1);
  fine.decode(0, bytes);
  EXPECT_TRUE(fine.combine(&p));
}

// A launch call of a millisecond or more does setup work (loading the
// kernel's module, autotuning), not launching: on the critical path it is
// other CPU time, and a launch call of microseconds launch overhead.
TEST(SimulatedSavings, ALongLaunchCallOnThePathIsSetupNotLaunchOverhead) {
  auto path = [](TimeNs call) {
    testing::TraceFactory f;
    f.device(0);
    TimeNs t = 5'000'000;
    for (int i = 0; i < 6; ++i) {
      f.kernel(0, 7, "k", t, t + 20'000, t - call - 10'000, call);
      t += 20'000 + call + 30'000;
    }
    return simulated(f.build()).critical_path;
  };
  const CriticalPath setup = path(2'000'000);
  ASSERT_GT(setup.length_ns, 0);
  EXPECT_GT(setup.cpu_other_ns, 5 * 2'000'000);
  EXPECT_LT(setup.cpu_launch_ns, 2'000'000);
  const CriticalPath launches = path(40'000);
  EXPECT_GT(launches.cpu_launch_ns, 5 * 30'000);
}

TEST(SimulatedSavings, CriticalPathAddsUpToTheStepsReplayed) {
  SyntheticOptions o;
  o.kernels = 20000;
  o.overlap_communication = false;
  const Profile p = simulated(make_synthetic_trace(o));
  const CriticalPath& c = p.critical_path;
  ASSERT_GT(c.steps, 0u);
  EXPECT_EQ(c.steps, p.simulation.steps);
  const TimeNs kinds = c.gpu_compute_ns + c.communication_ns + c.copy_ns + c.cpu_launch_ns + c.cpu_other_ns +
                       c.input_wait_ns + c.sync_wait_ns + c.gpu_wait_ns + c.gpu_gap_ns;
  EXPECT_EQ(kinds, c.length_ns);
  EXPECT_GT(c.communication_ns, 0);  // the all-reduce after backward is on the path
  TimeNs gpu = 0;
  for (const PathCategory& pc : c.categories) gpu += pc.ns;
  EXPECT_EQ(gpu, c.gpu_compute_ns + c.communication_ns + c.copy_ns);
  ASSERT_FALSE(c.ops.empty());
  for (std::size_t i = 1; i < c.ops.size(); ++i) EXPECT_GE(c.ops[i - 1].ns, c.ops[i].ns);
  const Finding* f = find(p, "exposed-communication");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->saving_source, SavingSource::simulated);
}

// An op's row on the critical path is its own run, never the gap before it:
// memsets and kernels queued far ahead, 150 µs apart on their stream (the
// device's typical gap), and a last kernel on another stream 8 µs after the
// first stream's last op (a wait inferred from timing). The gaps are the
// path's gaps before GPU ops; each op row is at most its ops' summed run.
TEST(SimulatedSavings, AnOpsTimeOnTheCriticalPathIsAtMostItsOwnRun) {
  testing::TraceFactory f;
  f.device(0);
  constexpr TimeNs kGap = 150'000, kMemset = 5'000, kKernel = 4'000, kTail = 50'000;
  TimeNs t = 2'000'000, launch = 1'000'000;
  for (int i = 0; i < 10; ++i) {
    f.memset(0, 7, t, t + kMemset, launch);
    t += kMemset + kGap, launch += 6'000;
    f.kernel(0, 7, "k", t, t + kKernel, launch);
    t += kKernel + kGap, launch += 6'000;
  }
  const TimeNs last_end = t - kGap;
  f.kernel(0, 8, "tail", last_end + 8'000, last_end + 8'000 + kTail, launch);
  const CriticalPath c = simulated(f.build()).critical_path;
  ASSERT_GT(c.length_ns, 0);
  const std::map<std::string, TimeNs> run{{"Memset", 10 * kMemset}, {"k", 10 * kKernel}, {"tail", kTail}};
  ASSERT_EQ(c.ops.size(), 3u);
  for (const PathOp& op : c.ops) {
    ASSERT_TRUE(run.count(op.name)) << op.name;
    EXPECT_LE(op.ns, run.at(op.name)) << op.name;
  }
  // The 19 gaps between the first stream's ops and the 8 µs before the tail.
  EXPECT_EQ(c.gpu_gap_ns, 19 * kGap + 8'000);
  EXPECT_EQ(c.gpu_compute_ns, 10 * kKernel + kTail);
  EXPECT_EQ(c.copy_ns, 10 * kMemset);
  TimeNs categories = 0, ops = 0;
  for (const PathCategory& pc : c.categories) categories += pc.ns;
  for (const PathOp& op : c.ops) ops += op.ns;
  EXPECT_EQ(categories, c.gpu_compute_ns + c.communication_ns + c.copy_ns);
  EXPECT_EQ(ops, categories);
}

// On real traces too: each row of the critical path, one per kernel name and
// category as the kernel table splits them, is at most that row's kernel
// time (Qwen on an H100: the same copy kernel is a transpose inside a layout
// copy and memory elsewhere; the path's rows once merged the two under one
// category, and counted the gaps before each op as its time).
TEST(SimulatedSavings, EachRowOfTheCriticalPathIsAtMostItsKernelTablesTime) {
  for (const char* name : {"review/tracelens-qwen-h100.json.gz", "hta-ns-resolution-v100.json.gz"}) {
    const Trace t = open_trace(testing::real_trace(name));
    const Profile p = simulated(t);
    ASSERT_GT(p.critical_path.length_ns, 0) << name;
    std::map<std::pair<std::string, KernelCategory>, TimeNs> table;
    for (const Hotspot& h : p.hotspots) table[{h.name, h.category}] += h.stats.total;
    std::size_t checked = 0;
    for (const PathOp& op : p.critical_path.ops) {
      const auto it = table.find({op.name, op.category});
      if (it == table.end()) continue;  // a copy (no kernel row), or a kernel past the hotspots kept
      ++checked;
      EXPECT_LE(op.ns, it->second) << name << ": " << op.name << " (" << to_string(op.category) << ")";
    }
    EXPECT_GE(checked, 5u) << name;
  }
}

// A rule whose fix the graph cannot express keeps its rule of thumb.
// ResNet-50 with 0 workers: idle gaps and copy findings beside input-bound.
TEST(SimulatedSavings, FindingsWithoutAFixKeepTheirRuleOfThumb) {
  const Trace t = open_trace(testing::real_trace("kineto-resnet50-v100-workers0.json.gz"));
  const JobInput in{&t, "trace"};
  const Profile plain = analyze_job(std::span<const JobInput>(&in, 1));
  const Profile p = simulated(t);
  ASSERT_EQ(p.simulation.status, "simulated");
  std::size_t without_fix = 0;
  for (const Finding& f : p.findings) {
    bool has_fix = false;
    for (const FindingRule& r : finding_rules())
      if (r.id == f.id) has_fix = !r.fix.empty();
    if (has_fix) continue;
    ++without_fix;
    EXPECT_EQ(f.saving_source, SavingSource::rule_of_thumb) << f.id;
    EXPECT_TRUE(f.fix.empty()) << f.id;
    for (const Finding& g : plain.findings) {
      if (g.id != f.id) continue;
      EXPECT_EQ(g.saving_ns, f.saving_ns) << f.id;
    }
  }
  EXPECT_GT(without_fix, 0u);
  const Finding* input = find(p, "input-bound");
  ASSERT_NE(input, nullptr);
  EXPECT_EQ(input->saving_source, SavingSource::simulated);
}

// A fix whose changed graph has a dependency cycle is not simulated: the
// program's own dependencies do not allow the change as the fix makes it, so
// what it saves is unknown (no saving, not the rule of thumb's); the finding,
// numbered by its share, says why, and it is in no prediction.
void expect_not_simulated_for_a_cycle(const Profile& p, const std::string& what) {
  ASSERT_EQ(p.simulation.status, "simulated") << what;
  const Finding* f = find(p, "exposed-communication");
  ASSERT_NE(f, nullptr) << what;
  EXPECT_EQ(f->saving_source, SavingSource::rule_of_thumb) << what;
  EXPECT_EQ(f->saving_ns, 0) << what;
  EXPECT_EQ(f->predicted_step_ns, 0) << what;
  EXPECT_EQ(f->saving_note.rfind("not simulated: --overlap-allreduce makes ", 0), 0u) << f->saving_note;
  EXPECT_NE(f->saving_note.find("dependency cycle"), std::string::npos) << f->saving_note;
  for (const Prediction& pr : p.simulation.predictions) EXPECT_NE(pr.change, "--overlap-allreduce") << what;
  EXPECT_EQ(p.simulation.together.change.find("--overlap-allreduce"), std::string::npos) << what;
}

TEST(SimulatedSavings, AFixWhoseGraphHasACycleSavesAnUnknownTime) {
  expect_not_simulated_for_a_cycle(simulated(testing::cyclic_allreduce_trace()), "synthetic");
}

// The compiled DLRM rank: DDP puts 99.9% of its all-reduced bytes in one
// 1.67 GiB bucket, ready at the end of the backward pass. --overlap-allreduce
// would have to assume when its gradients are ready, so it is not replayed:
// the finding's saving leaves that bucket out (the rest of the exposed
// communication, 62.3 ms, as a rule of thumb), and "overlap all-reduce?" is
// unknown. The update's overlap, whose replay the trace's dependencies made a
// cycle, saves an unknown time, and its answer is unknown, not yes.
TEST(SimulatedSavings, DlrmSavingsStayWithinWhatTheirFixesMove) {
  const Profile p = simulated(open_trace(testing::real_trace("review/hta-dlrm-compiled-a100.json.gz")));
  const Finding* comm = find(p, "exposed-communication");
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->saving_source, SavingSource::rule_of_thumb);
  EXPECT_TRUE(comm->fix.empty());
  EXPECT_EQ(comm->saving_note.rfind("not simulated: --overlap-allreduce would have to assume when each bucket's "
                                    "gradients are ready",
                                    0),
            0u)
      << comm->saving_note;
  EXPECT_NE(comm->saving_note.find("what hiding that bucket's 123.1 ms would save is unknown"), std::string::npos)
      << comm->saving_note;
  EXPECT_LT(comm->saving_ns, 63 * 1'000'000);
  EXPECT_GT(comm->saving_ns, 62 * 1'000'000);
  for (const Prediction& pr : p.simulation.predictions) EXPECT_NE(pr.change, "--overlap-allreduce");
  const HelpAnswer* all_reduce = nullptr;
  for (const HelpAnswer& h : p.helps) all_reduce = h.id == "overlap-communication" ? &h : all_reduce;
  ASSERT_NE(all_reduce, nullptr);
  EXPECT_EQ(all_reduce->verdict, Verdict::unknown) << all_reduce->reason;
  EXPECT_NE(all_reduce->reason.find("99.9% of the bytes all-reduced per step are in one 1.67 GiB bucket"),
            std::string::npos)
      << all_reduce->reason;
  const Finding* update = find(p, "serialized-weight-update");
  ASSERT_NE(update, nullptr);
  EXPECT_NE(update->saving_note.find("dependency cycle"), std::string::npos) << update->saving_note;
  EXPECT_EQ(update->saving_ns, 0);
  const HelpAnswer* a = nullptr;
  for (const HelpAnswer& h : p.helps) a = h.id == "overlap-weight-update" ? &h : a;
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_NE(a->reason.find("the program's own dependencies do not allow the change"), std::string::npos) << a->reason;
  // The finding the answer names is numbered, by its share of kernel time.
  ASSERT_EQ(a->findings.size(), 1u);
  EXPECT_EQ(a->findings.front(), "serialized-weight-update");
}

// --overlap-allreduce replays gradient all-reduce buckets: HTA's ranks, whose
// exposed communication is mostly all-to-all (all-reduce 20 % and 2.2 %),
// are not simulated with it, and keep the rule of thumb with the reason.
TEST(SimulatedSavings, OverlappingTheAllReduceIsNotReplayedForOtherCollectives) {
  for (const char* name : {"hta-sampled-rank0.json.gz", "hta-sampled-rank1.json.gz"}) {
    const Profile p = simulated(open_trace(testing::real_trace(name)));
    const Finding* f = find(p, "exposed-communication");
    ASSERT_NE(f, nullptr) << name;
    EXPECT_NE(f->saving_source, SavingSource::simulated) << name;
    EXPECT_TRUE(f->fix.empty()) << name;
    EXPECT_GT(f->saving_ns, 0) << name;
    EXPECT_EQ(f->saving_note.rfind("not simulated: --overlap-allreduce replays gradient all-reduce buckets", 0), 0u)
        << f->saving_note;
    EXPECT_NE(f->saving_note.find("mostly all_to_all"), std::string::npos) << f->saving_note;
    EXPECT_EQ(p.simulation.together.change.find("--overlap-allreduce"), std::string::npos) << name;
  }
}

// A simulated fix that saves nothing (ResNet-50 on a V100 with 4 workers:
// halving the convolutions' and GEMMs' time changes no median step) is shown
// as no saving, never as a negative one.
// A product far below its roofline in a run whose replayed critical path is
// the host's: its kernels are not what decides the step, so its rule-of-thumb
// saving is capped at the GPU compute on the path and it is not numbered; the
// larger batch it calls for is still asked about.
TEST(SimulatedSavings, AKernelFindingOffTheCriticalPathSavesNothingNow) {
  testing::TraceFactory f;
  f.device(0, 132, 9, "NVIDIA H100 80GB HBM3");
  TimeNs t = 1'000'000;
  for (int i = 0; i < 200; ++i) {
    f.cpu_op("aten::mm", t, t + 20'000, "[[128,512],[512,512]]", R"(["c10::BFloat16","c10::BFloat16"])");
    f.kernel(0, 7, "sm90_xmma_gemm_bf16bf16_bf16f32", t + 20'000, t + 30'000, t + 5'000, 10'000, 16);
    t += 250'000;  // the host's own work between launches
  }
  const Trace tr = f.build();
  const Profile p = simulated(tr);
  ASSERT_EQ(p.simulation.status, "simulated");
  EXPECT_EQ(find(p, "op-below-roofline"), nullptr);
  const auto minor = std::find_if(p.minor_findings.begin(), p.minor_findings.end(),
                                  [](const Finding& m) { return m.id == "op-below-roofline"; });
  ASSERT_NE(minor, p.minor_findings.end());
  EXPECT_TRUE(minor->saving_note.starts_with("capped at the GPU compute on the replayed critical path"))
      << minor->saving_note;
  EXPECT_LE(minor->saving_ns, p.critical_path.gpu_compute_ns);
  EXPECT_TRUE(std::any_of(p.helps.begin(), p.helps.end(),
                          [](const HelpAnswer& a) { return a.id == "larger-batch" && a.verdict == Verdict::yes; }));
}

TEST(SimulatedSavings, AFixThatSavesNothingSaysSo) {
  const Trace t = open_trace(testing::real_trace("kineto-resnet50-v100-workers4.json.gz"));
  const Profile p = simulated(t);
  const Finding* f = find(p, "no-tensor-cores");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->saving_source, SavingSource::simulated);
  EXPECT_EQ(f->saving_ns, 0);
  EXPECT_EQ(f->saving_note.rfind("no saving: ", 0), 0u) << f->saving_note;
  EXPECT_GT(f->predicted_step_ns, 0);
  // It is not part of "together": only fixes that save time are.
  EXPECT_EQ(p.simulation.together.change.find("--scale convolution"), std::string::npos);
  // But after the fix that does save time (--cuda-graphs: the host decides
  // the step now), halving the math shortens the step: the finding says so.
  EXPECT_EQ(f->after_fixes, "--cuda-graphs");
  EXPECT_EQ(f->after_from_ns, p.simulation.together.step_ns);
  EXPECT_LT(static_cast<double>(f->after_to_ns), 0.8 * static_cast<double>(f->after_from_ns));
  for (const HelpAnswer& a : p.helps)
    if (a.id == "mixed-precision") {
      // Not a no: the change worth making next.
      EXPECT_EQ(a.verdict, Verdict::later);
      EXPECT_NE(a.reason.find("After --cuda-graphs"), std::string::npos) << a.reason;
    }
  for (std::size_t i = 1; i < p.findings.size(); ++i) EXPECT_GE(p.findings[i - 1].saving_ns, p.findings[i].saving_ns);
}

// A rule's fix is narrowed to what the trace has: HTA's multi-stream sync
// trace runs three fp32 GEMMs and no convolution, so the tensor-core fix is
// replayed as --scale gemm=0.5 alone (with the convolution clause the whole
// change matched no op and went unreplayed, leaving a rule of thumb and a yes).
TEST(SimulatedSavings, AFixIsNarrowedToTheCategoriesTheTraceHas) {
  const Profile p = simulated(open_trace(testing::real_trace("hta-event-sync-multistream.json.gz")));
  // Not numbered: its share of kernel time is all of it, but its replayed
  // fix leaves the step as long (a minor observation).
  EXPECT_EQ(find(p, "no-tensor-cores"), nullptr);
  const Finding* f = nullptr;
  for (const Finding& m : p.minor_findings)
    if (m.id == "no-tensor-cores") f = &m;
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->fix, "--scale gemm=0.5");
  EXPECT_EQ(f->saving_source, SavingSource::simulated);
  // The replay says what the rule of thumb did not: the host decides the
  // span, so halving the GEMMs saves microseconds, and the answer is no.
  EXPECT_LT(f->saving_ns, p.simulation.replayed_step_ns / 100);
  bool answered = false;
  for (const HelpAnswer& a : p.helps) {
    if (a.id != "mixed-precision") continue;
    answered = true;
    EXPECT_EQ(a.verdict, Verdict::no) << a.reason;
  }
  EXPECT_TRUE(answered);
}

// More steps than the window: the steps in the middle are replayed, and the
// saving is scaled to all of them.
TEST(SimulatedSavings, LongTracesAreSimulatedOnAWindowOfSteps) {
  SyntheticOptions o;
  o.kernels = 20000;
  o.padding_share = 0.2;
  const Trace t = make_synthetic_trace(o);
  SimulationOptions so;
  so.window_steps = 4;
  const Profile whole = simulated(t), window = simulated(t, so);
  ASSERT_EQ(window.simulation.status, "simulated");
  EXPECT_NE(window.simulation.scope.find("in the middle"), std::string::npos) << window.simulation.scope;
  EXPECT_LT(window.simulation.steps, whole.simulation.steps);
  const Finding *a = find(whole, "padding-hotspot"), *b = find(window, "padding-hotspot");
  ASSERT_TRUE(a && b);
  EXPECT_LE(relative(b->saving_ns, a->saving_ns), 0.05);
  EXPECT_LE(relative(b->predicted_step_ns, a->predicted_step_ns), 0.02);
}

// A trace without steps is simulated whole, and says so.
TEST(SimulatedSavings, ATraceWithoutStepsIsSimulatedWhole) {
  const Trace t = open_trace(testing::real_trace("hta-alexnet.json.gz"));
  const Profile p = simulated(t);
  ASSERT_EQ(p.simulation.status, "simulated");
  EXPECT_EQ(p.simulation.scope, "the whole trace (no steps)");
  EXPECT_EQ(p.simulation.steps, 0u);
  EXPECT_EQ(p.critical_path.steps, 0u);
  EXPECT_GT(p.critical_path.length_ns, 0);
  EXPECT_LE(p.simulation.replay_error, 0.02);
}

// Too many ops to replay: not simulated, every saving a rule of thumb.
TEST(SimulatedSavings, TooBigToReplayKeepsRulesOfThumbAndSaysWhy) {
  SyntheticOptions o;
  o.kernels = 20000;
  o.padding_share = 0.2;
  SimulationOptions so;
  so.max_ops = 100;
  const Profile p = simulated(make_synthetic_trace(o), so);
  EXPECT_EQ(p.simulation.status.rfind("not simulated: ", 0), 0u) << p.simulation.status;
  for (const Finding& f : p.findings) EXPECT_EQ(f.saving_source, SavingSource::rule_of_thumb) << f.id;
  EXPECT_EQ(p.critical_path.length_ns, 0);
}

// A host-paced loop with a per-parameter optimizer (`opt_host`: its step's
// host time, µs): each step loads a batch (600 µs), launches a long kernel,
// then the update's 130 tiny kernels, which queue behind it; the GPU is
// done long before the next batch is loaded, so it seldom waits for the
// update's launches, but the next step's loading waits for the update on the
// host: that time is on the critical path and is the finding's saving.
Trace host_paced_per_parameter_update(TimeNs opt_host, TimeNs conv = 295'000) {
  testing::TraceFactory f;
  constexpr TimeNs us = 1'000;
  const TimeNs step = (700 + 100) * us + opt_host;
  for (int i = 0; i < 8; ++i) {
    const TimeNs t0 = 1'000 * us + i * step;
    f.range("ProfilerStep#" + std::to_string(i), t0, t0 + step, 1, RangeKind::annotation, "user_annotation");
    f.range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t0, t0 + 600 * us, 1, RangeKind::annotation,
            "cpu_op");
    // GPU-bound (conv longer than a step): each step's kernels start when the last ones are done.
    const TimeNs busy = std::max<TimeNs>(0, i * (conv + 300 * us - step));
    f.kernel(0, 7, testing::names::kConvTensorCore, t0 + 605 * us + busy, t0 + 605 * us + busy + conv, t0 + 600 * us,
             3 * us);
    const TimeNs u0 = t0 + 700 * us;
    f.range("Optimizer.step#SGD.step", u0, u0 + opt_host, 1, RangeKind::annotation, "user_annotation");
    for (int k = 0; k < 130; ++k) {
      const TimeNs call = u0 + k * (opt_host / 131);
      const TimeNs at = std::max(call + 5 * us, t0 + 606 * us + busy + conv + k * 1 * us);
      f.kernel(0, 7, "void at::native::vectorized_elementwise_kernel<4, sgd>", at, at + 1 * us, call, 2 * us);
    }
  }
  return f.build();
}

TEST(SimulatedSavings, AnUpdateWhoseHostTimeTheNextStepWaitsForSavesThatTime) {
  const Profile p = simulated(host_paced_per_parameter_update(1'300'000));
  ASSERT_EQ(p.simulation.status, "simulated");
  EXPECT_GT(p.critical_path.optimizer_host_ns, 0);
  const Finding* f = find(p, "unfused-optimizer");
  ASSERT_NE(f, nullptr) << testing::describe_findings(p);
  EXPECT_NE(f->saving_note.find("on the replayed critical path"), std::string::npos) << f->saving_note;
  // About the update's host time in every step, not the GPU's few waits.
  EXPECT_GE(f->saving_ns, 8 * 1'000'000) << f->saving_note;
  EXPECT_LE(f->saving_ns, 8 * 1'300'000) << f->saving_note;
  // GPU-bound (the step's kernels take longer than its host time): the host
  // runs ahead, the update's host time is off the path, nothing is credited.
  const Profile q = simulated(host_paced_per_parameter_update(1'300'000, 3'000'000));
  const Finding* g = find(q, "unfused-optimizer");
  for (const Finding& m : q.minor_findings) g = g ? g : (m.id == "unfused-optimizer" ? &m : nullptr);
  ASSERT_NE(g, nullptr) << testing::describe_findings(q);
  EXPECT_EQ(g->saving_note.find("on the replayed critical path"), std::string::npos) << g->saving_note;
  EXPECT_LT(g->saving_ns * 4, f->saving_ns) << g->saving_note;
}

// A host-paced loop on one GPU whose all-to-all runs with no compute beside
// it: exposed, but the next step waits for the host, not for it. Hiding it
// saves at most its time on the critical path.
TEST(SimulatedSavings, HidingCommunicationSavesAtMostItsTimeOnTheCriticalPath) {
  testing::TraceFactory f;
  constexpr TimeNs us = 1'000;
  for (int i = 0; i < 8; ++i) {
    const TimeNs t0 = 1'000 * us + i * 2'000 * us;
    f.range("ProfilerStep#" + std::to_string(i), t0, t0 + 2'000 * us, 1, RangeKind::annotation, "user_annotation");
    f.range("nccl:all_to_all", t0 + 100 * us, t0 + 110 * us, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 9, "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", t0 + 110 * us, t0 + 700 * us,
             t0 + 105 * us, 3 * us);
    f.kernel(0, 7, testing::names::kConvTensorCore, t0 + 705 * us, t0 + 900 * us, t0 + 120 * us, 3 * us);
    f.range("host work", t0 + 130 * us, t0 + 2'000 * us, 1, RangeKind::annotation, "user_annotation");
  }
  const Profile p = simulated(f.build());
  ASSERT_EQ(p.simulation.status, "simulated");
  const Finding* e = find(p, "exposed-communication");
  ASSERT_NE(e, nullptr) << testing::describe_findings(p);
  EXPECT_NE(e->saving_note.find("capped at the communication on the replayed critical path"), std::string::npos)
      << e->saving_note;
  // The exposed time is 590 µs a step; only the last step's is on the path.
  EXPECT_LT(e->saving_ns, 2 * 590 * us) << e->saving_note;
}

}  // namespace
}  // namespace gpuscope::graph
