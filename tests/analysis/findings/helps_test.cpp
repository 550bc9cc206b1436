// "What would help?" as data (Profile::helps), minor findings, and what the
// analysis recognises before it prescribes: each answer is yes only on a
// numbered finding whose fix saves time, no when the replay predicts no
// faster step or the program already does it, unknown where the trace cannot
// tell; findings under 1 % of the run are listed, not numbered.
//
// [SECTION] Answers from a Profile
// [SECTION] Minor findings
// [SECTION] Recognition from traces
// [SECTION] Rules that charge a wait once
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/graph/savings.h"
#include "support/findings.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;
namespace names = testing::names;

constexpr TimeNs us = 1'000;
constexpr TimeNs ms = 1'000'000;

bool has(const std::string& text, const char* words) { return text.find(words) != std::string::npos; }

const HelpAnswer* help(const Profile& p, std::string_view id) {
  for (const HelpAnswer& a : p.helps)
    if (a.id == id) return &a;
  return nullptr;
}

const Finding* minor(const Profile& p, std::string_view id) {
  for (const Finding& f : p.minor_findings)
    if (f.id == id) return &f;
  return nullptr;
}

// [SECTION] Answers from a Profile -----------------------------------------------------------

// A one-GPU profile over 1 s, busy 50 %, with 10 steps.
Profile half_idle_profile() {
  Profile p;
  p.window = {0, 1000 * ms};
  DeviceSummary d;
  d.id = 0;
  d.compute_major = 8;
  d.span_ns = 1000 * ms;
  d.busy_ns = d.kernel_busy_ns = d.kernel_time_ns = 500 * ms;
  d.idle_ns = 500 * ms;
  d.utilization = 0.5;
  d.kernels = 1000;
  p.devices.push_back(d);
  p.kernel_time_ns = 500 * ms;
  p.steps.total_ns = 1000 * ms;
  p.steps.idle_ns = 500 * ms;
  p.launches.launches = 1000;
  p.workload.phase = "training";
  return p;
}

Finding finding(const char* id, TimeNs saving, const char* title = "a title") {
  Finding f;
  f.id = id;
  f.title = title;
  f.saving_ns = saving;
  f.severity = Severity::warning;
  return f;
}

TEST(Helps, InputBoundWithASavingIsYes) {
  Profile p = half_idle_profile();
  p.workload.data_loading_recorded = true;
  p.findings.push_back(finding("input-bound", 300 * ms, "Highly input-bound"));
  settle_findings(&p);
  const HelpAnswer* a = help(p, "input-workers");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::yes);
  EXPECT_EQ(a->findings, std::vector<std::string>{"input-bound"});
  EXPECT_EQ(a->reason, "Highly input-bound");
  EXPECT_EQ(a->predicted_step_ns, 0);  // not simulated: no prediction quoted
}

TEST(Helps, AFixWhoseReplayGivesNoFasterStepIsNeverYes) {
  Profile p = half_idle_profile();
  p.simulation.status = "simulated";
  p.simulation.replayed_step_ns = 100 * ms;
  Finding f = finding("no-tensor-cores", 0, "Tensor cores idle");
  f.share = 0.6;  // 60 % of kernel time in the math: material, though it saves nothing
  f.saving_source = SavingSource::simulated;
  f.fix = "--scale convolution=0.5";
  f.predicted_step_ns = 101 * ms;  // slower
  f.saving_note = "no saving: with the fix the median step is 101 ms, not shorter than 100 ms";
  p.findings.push_back(f);
  settle_findings(&p);
  // Its share is material, but its own replay gives no faster step: a minor
  // observation, not a numbered finding.
  EXPECT_TRUE(p.findings.empty());
  ASSERT_EQ(p.minor_findings.size(), 1u);
  const HelpAnswer* a = help(p, "mixed-precision");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no);
  EXPECT_TRUE(has(a->reason, "no step faster in the replay")) << a->reason;
  EXPECT_EQ(a->predicted_step_ns, 0);
}

// Overlapping the update shortens the step by at most the optimizer
// kernels' time on the replayed critical path; a replay that could not order
// the change (a dependency cycle) leaves what it saves unknown: no saving,
// the finding numbered by its share, and the answer unknown, not yes.
TEST(Helps, AnUpdateSavesAtMostItsTimeOnTheCriticalPathAndUnknownWhereTheReplayCannotOrderIt) {
  Profile p = half_idle_profile();
  p.critical_path.length_ns = 800 * ms;
  p.critical_path.gpu_compute_ns = 600 * ms;
  p.critical_path.categories = {{KernelCategory::gemm, 560 * ms}, {KernelCategory::optimizer, 40 * ms}};
  Finding f = finding("serialized-weight-update", 100 * ms, "The weight update runs alone");
  f.share = 0.2;
  p.findings.push_back(f);
  settle_findings(&p);
  ASSERT_EQ(p.findings.size(), 1u);
  EXPECT_EQ(p.findings.front().saving_ns, 40 * ms);
  EXPECT_TRUE(has(p.findings.front().saving_note,
                  "capped at the optimizer kernels' time on the replayed critical path (40.0 ms)"))
      << p.findings.front().saving_note;
  EXPECT_EQ(help(p, "overlap-weight-update")->verdict, Verdict::yes);

  Profile q = half_idle_profile();
  Finding c = finding("serialized-weight-update", 0, "The weight update runs alone");
  c.share = 0.2;
  c.saving_note =
      "not simulated: --overlap-update makes 1 dependency cycle in the graph (an op would wait for one that waits "
      "for it), which the replay cannot order";
  q.findings.push_back(c);
  settle_findings(&q);
  ASSERT_EQ(q.findings.size(), 1u);  // numbered by its share
  const HelpAnswer* a = help(q, "overlap-weight-update");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_TRUE(has(a->reason, "the program's own dependencies do not allow the change")) << a->reason;
  EXPECT_EQ(a->findings, std::vector<std::string>{"serialized-weight-update"});
}

TEST(Helps, AReplayedGainUnderOnePercentOfTheStepIsNo) {
  Profile p = half_idle_profile();
  p.simulation.status = "simulated";
  p.simulation.replayed_step_ns = 100 * ms;
  Finding f = finding("no-tensor-cores", 600 * us, "Tensor cores idle");
  f.share = 0.6;
  f.saving_source = SavingSource::simulated;
  f.fix = "--scale gemm=0.5";
  f.predicted_step_ns = 100 * ms - 6 * us;  // faster, but by 0.006 %
  p.findings.push_back(f);
  settle_findings(&p);
  const HelpAnswer* a = help(p, "mixed-precision");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_TRUE(has(a->reason, "only 6.0 µs shorter in the replay")) << a->reason;
  EXPECT_TRUE(has(a->reason, "under 1")) << a->reason;
  EXPECT_TRUE(p.findings.empty());  // not numbered either
  // At 2 % of the step and of the run it is a yes, and numbered.
  p.minor_findings.front().predicted_step_ns = 98 * ms;
  p.minor_findings.front().saving_ns = 20 * ms;
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::yes);
  EXPECT_EQ(p.findings.size(), 1u);
}

// Kernels too small for the GPU, on a replayed critical path of host time:
// filling the GPU saves nothing until the host is fixed, so the finding is
// judged by that (no) saving, not by its share of kernel time: a minor
// observation. On a critical path of GPU work it keeps its number.
TEST(Helps, SmallGridsOffAHostBoundCriticalPathAreMinor) {
  for (const bool host_bound : {true, false}) {
    Profile p = half_idle_profile();
    p.critical_path.length_ns = 10 * ms;
    (host_bound ? p.critical_path.cpu_other_ns : p.critical_path.gpu_compute_ns) = 10 * ms;
    Finding f = finding("small-grid", 20 * ms, "3 kernels run on fewer blocks than half the GPU's SMs");
    f.share = 0.087;
    p.findings.push_back(f);
    settle_findings(&p);
    EXPECT_EQ(p.findings.size(), host_bound ? 0u : 1u) << host_bound;
    EXPECT_EQ(p.minor_findings.size(), host_bound ? 1u : 0u) << host_bound;
    if (host_bound) {
      EXPECT_EQ(p.minor_findings.front().saving_ns, 0);
    }
  }
}

// A replay whose median step is 2 % shorter but whose steps together save
// under 1 % of the run (the time moved into another step: an op held to its
// measured start waits the longer) gains nothing material: no, said so.
TEST(Helps, AShorterMedianStepWithoutAShorterRunIsNo) {
  Profile p = half_idle_profile();
  p.simulation.status = "simulated";
  p.simulation.replayed_step_ns = 100 * ms;
  Finding f = finding("no-tensor-cores", 4500 * us, "Tensor cores idle");
  f.share = 0.26;
  f.saving_source = SavingSource::simulated;
  f.fix = "--scale gemm=0.5";
  f.predicted_step_ns = 92 * ms;  // the median step 8 % shorter, the 1 s run 0.45 %
  p.findings.push_back(f);
  settle_findings(&p);
  const HelpAnswer* a = help(p, "mixed-precision");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_TRUE(has(a->reason, "but all the steps together only 4.5 ms")) << a->reason;
  EXPECT_TRUE(has(a->reason, "the time moves into other steps")) << a->reason;
  EXPECT_EQ(a->predicted_step_ns, 0);
}

TEST(Helps, ARuleOfThumbGainUnderOnePercentOfTheRunIsNotAYes) {
  Profile p = half_idle_profile();
  Finding f = finding("no-tensor-cores", 5 * ms, "Tensor cores idle");  // 0.5 % of the 1 s run
  f.share = 0.6;
  p.findings.push_back(f);
  settle_findings(&p);
  ASSERT_EQ(p.findings.size(), 1u);  // numbered by its share
  EXPECT_NE(help(p, "mixed-precision")->verdict, Verdict::yes);
  p.findings.front().saving_ns = 20 * ms;
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::yes);
}

TEST(Helps, AYesQuotesOnlyAFasterPrediction) {
  Profile p = half_idle_profile();
  p.workload.data_loading_recorded = true;
  p.simulation.status = "simulated";
  p.simulation.replayed_step_ns = 100 * ms;
  Finding f = finding("input-bound", 300 * ms);
  f.saving_source = SavingSource::simulated;
  f.fix = "--no-input-wait";
  f.predicted_step_ns = 70 * ms;
  p.findings.push_back(f);
  settle_findings(&p);
  const HelpAnswer* a = help(p, "input-workers");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::yes);
  EXPECT_EQ(a->fix, "--no-input-wait");
  EXPECT_EQ(a->predicted_step_ns, 70 * ms);
  // A saving capped below the replay's (which also removes host time other
  // findings count): yes, but the replay's step is not quoted.
  p.findings.back().replay_saving_ns = 400 * ms;
  settle_findings(&p);
  a = help(p, "input-workers");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::yes);
  EXPECT_EQ(a->predicted_step_ns, 0);
}

TEST(Helps, IdleWithoutDataLoadingRangesIsUnknownForWorkers) {
  Profile p = half_idle_profile();
  p.op_names.push_back(OpRow{.name = "aten::conv2d", .calls = 1000});  // the host side recorded
  settle_findings(&p);
  const HelpAnswer* a = help(p, "input-workers");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::unknown);
  EXPECT_TRUE(has(a->reason, "no data-loading ranges")) << a->reason;
  // With the ranges recorded and little input wait, the answer is a measured no.
  p.workload.data_loading_recorded = true;
  p.steps.input_wait_ns = 10 * ms;
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::no);
}

// Inference whose Python the tracer recorded with no data loader in it: no
// loader to give workers (not unknown). Training, or too little Python
// recorded to say: unknown as before.
TEST(Helps, InferenceWithTracedPythonAndNoLoaderIsNotAskedForWorkers) {
  Profile p = half_idle_profile();
  p.op_names.push_back(OpRow{.name = "aten::conv2d", .calls = 1000});
  p.workload.phase = "inference";
  p.workload.python_ranges = 5000;
  settle_findings(&p);
  const HelpAnswer* a = help(p, "input-workers");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::not_applicable) << a->reason;
  EXPECT_TRUE(has(a->reason, "never enters a data loader")) << a->reason;
  p.workload.python_ranges = 10;
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::unknown);
  p.workload.python_ranges = 5000;
  p.workload.phase = "training";
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::unknown);
}

// A trace of the GPU's ops and the runtime's calls alone cannot show where
// the host waited for input: unknown, saying so; but a GPU idle under 5 % of
// the time has no input wait to remove, whatever the trace records.
TEST(Helps, WithoutTheHostSideInputWaitIsUnknownUnlessTheGpuBarelyIdles) {
  Profile p = half_idle_profile();
  p.steps = {};
  settle_findings(&p);
  const HelpAnswer* a = help(p, "input-workers");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_TRUE(has(a->reason, "records only the GPU's ops and the runtime's calls")) << a->reason;
  p.devices[0].busy_ns = p.devices[0].kernel_busy_ns = 980 * ms;
  p.devices[0].idle_ns = 20 * ms;
  p.devices[0].utilization = 0.98;
  settle_findings(&p);
  a = help(p, "input-workers");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_TRUE(has(a->reason, "idle only 2.0%")) << a->reason;
}

// The host's time before each step's first GPU op, recorded (Python frames,
// ops, runtime calls) and none of it data loading: the loop waits for no
// batch there, so more workers is a "no" that says what the host did. A
// data-loading range there, or too little of that time recorded: unknown.
TEST(Helps, RecordedHostWorkBeforeTheFirstOpIsNoInputWait) {
  Profile p = half_idle_profile();
  p.op_names.push_back(OpRow{.name = "aten::linear", .calls = 1000});
  p.steps.source = StepSource::profiler_step;
  p.steps.lead_idle_ns = 200 * ms;  // 20 %: more than the bound rules out
  p.steps.lead_recorded_ns = 195 * ms;
  p.steps.lead_ranges = {{"torch/cuda/__init__.py(1030): synchronize", 120 * ms, 10},
                         {"torch/profiler/profiler.py(832): step", 60 * ms, 10}};
  settle_findings(&p);
  const HelpAnswer* a = help(p, "input-workers");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_TRUE(has(a->reason, "cover 98% of that time and none of them loads data")) << a->reason;
  EXPECT_TRUE(has(a->reason, "torch/cuda/__init__.py(1030): synchronize 120.0 ms")) << a->reason;
  // A dataset's __getitem__ among them: no longer all of it the host's own
  // work, but the input wait is at most that and the unrecorded rest (1 %).
  p.steps.lead_input_ns = 5 * ms;
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::no) << help(p, "input-workers")->reason;
  EXPECT_TRUE(has(help(p, "input-workers")->reason, "but only 1.0% before each step's first GPU op"))
      << help(p, "input-workers")->reason;
  p.steps.lead_input_ns = 0;
  p.steps.lead_recorded_ns = 100 * ms;  // half of it unrecorded: it may be a fetch
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::unknown) << help(p, "input-workers")->reason;
  p.steps.lead_recorded_ns = 0;
  p.steps.lead_ranges.clear();
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::unknown);
}

// A rule that measures a share of kernel time is numbered only where that
// share of the kernels' time is 1 % of the run or more: a quarter of 4 ms of
// kernels in a 1 s run cannot give back 1 % of it, however large the share.
TEST(Helps, AShareOfLittleKernelTimeIsMinor) {
  for (const TimeNs kernels : {4 * ms, 400 * ms}) {
    Profile p = half_idle_profile();
    p.kernel_time_ns = p.devices[0].kernel_time_ns = kernels;
    Finding f = finding("small-grid", kernels / 4 - kernels / 400, "Kernels on small grids");
    f.share = 0.25;
    p.findings.push_back(f);
    settle_findings(&p);
    const bool numbered = !p.findings.empty() && p.findings[0].id == "small-grid";
    EXPECT_EQ(numbered, kernels == 400 * ms) << kernels;
    EXPECT_EQ(p.minor_findings.size(), kernels == 400 * ms ? 0u : 1u);
  }
}

// A wait for input is time the host ran none of its recorded work: the
// recorded host work that loads no data, before each step's first GPU op
// (lead_recorded_ns less lead_input_ns) and in the long gaps late launches
// ended (IdleCharge::host_recorded_ns), is left out of the bound (a DDP
// run's long gaps in unflatten_dense_tensors: 22.5 % of step time, but the
// host unrecorded in 1.3 %).
TEST(Helps, RecordedHostWorkInTheGapsIsOutOfTheInputBound) {
  Profile p = half_idle_profile();
  p.steps.source = StepSource::profiler_step;
  p.steps.lead_idle_ns = 10 * ms;
  p.idle_charges.push_back({"late-launch-gap", 200 * ms, "gpu-idle-gaps", ""});
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::unknown);
  EXPECT_TRUE(has(help(p, "input-workers")->reason, "at most 21.0% can be a wait for input"))
      << help(p, "input-workers")->reason;
  p.idle_charges.back().host_recorded_ns = 180 * ms;  // in ops and runtime calls
  settle_findings(&p);
  const HelpAnswer* a = help(p, "input-workers");
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_TRUE(has(a->reason,
                  "and 2.0% in long gaps (gpu-idle-gaps' size) that a late launch ended (a batch fetched "
                  "inside a step), with the host in no recorded op or call (in the other 18.0% of step "
                  "time there the host ran recorded ops, ranges and runtime calls, none of them data "
                  "loading)"))
      << a->reason;
  // Before the first op too: 150 of 200 ms recorded (too little for the
  // lead's own no), the other 50 ms and the gaps' 20 ms bound it.
  p.steps.lead_idle_ns = 200 * ms;
  p.steps.lead_recorded_ns = 150 * ms;
  settle_findings(&p);
  a = help(p, "input-workers");
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_TRUE(has(a->reason,
                  "at most 7.0% can be a wait for input (5.0% before each step's first GPU op, 2.0% in "
                  "long gaps a late launch ended, with the host in no recorded op or call; in the other "
                  "33.0% of step time"))
      << a->reason;
  // Without steps the long gaps bound it alone, the same way.
  p.steps = {};
  p.op_names.push_back(OpRow{.name = "aten::linear", .calls = 1000});  // the host side recorded
  p.idle_charges.back().host_recorded_ns = 0;
  p.idle_charges.back().ns = 60 * ms;
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::unknown) << help(p, "input-workers")->reason;
  p.idle_charges.back().host_recorded_ns = 40 * ms;
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::no) << help(p, "input-workers")->reason;
  EXPECT_TRUE(has(help(p, "input-workers")->reason,
                  "only 2.0% lies in long gaps a late launch ended with the host "
                  "in no recorded op or call"))
      << help(p, "input-workers")->reason;
}

// Not now, but next: the host keeps the queue filled, but issues the step's
// launches in nearly the step's time, so the GPU-side findings' savings
// beyond that margin need the launches gone too. A host far ahead of the GPU,
// or savings within the margin: the plain no.
TEST(Helps, AHostThatBarelyKeepsUpMakesGraphsTheNextStep) {
  Profile p = half_idle_profile();
  p.devices[0].busy_ns = p.devices[0].kernel_busy_ns = 950 * ms;
  p.devices[0].idle_ns = 50 * ms;
  p.devices[0].utilization = 0.95;
  p.steps.source = StepSource::profiler_step;
  Step st;
  st.compute_ns = 950 * ms;
  st.range = {0, 1000 * ms};
  p.steps.steps.push_back(st);
  p.steps.host_issue_ns = 960 * ms;
  p.findings.push_back(finding("memory-bound-aux", 300 * ms, "Memory-bound auxiliary work dominates"));
  settle_findings(&p);
  const HelpAnswer* a = help(p, "cuda-graphs");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::later);
  EXPECT_TRUE(has(a->reason, "not now, but next")) << a->reason;
  EXPECT_TRUE(has(a->reason, "issues the step's launches in 960.0 ms for 950.0 ms of GPU work")) << a->reason;
  EXPECT_TRUE(has(a->reason, "a GPU-side saving beyond 40.0 ms needs the launches to go too")) << a->reason;
  EXPECT_EQ(a->findings, std::vector<std::string>{"memory-bound-aux"});
  p.steps.host_issue_ns = 500 * ms;  // the host far ahead: the saving fits in its margin
  settle_findings(&p);
  EXPECT_FALSE(has(help(p, "cuda-graphs")->reason, "not now, but next")) << help(p, "cuda-graphs")->reason;
  p.steps.host_issue_ns = 0;  // not measured
  settle_findings(&p);
  EXPECT_FALSE(has(help(p, "cuda-graphs")->reason, "not now, but next")) << help(p, "cuda-graphs")->reason;
}

// Steps from ranges bound what input can cost without data-loading ranges:
// a loop waits for its batch before the step's first GPU op, or (a batch
// fetched inside a step) in a long gap a late launch ended. Little of both:
// no; much of either, or steps found on the GPU: unknown.
TEST(Helps, StepsFromRangesBoundTheInputWait) {
  Profile p = half_idle_profile();
  p.steps.source = StepSource::profiler_step;
  p.steps.lead_idle_ns = 10 * ms;  // 1 % of step time
  settle_findings(&p);
  const HelpAnswer* a = help(p, "input-workers");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_TRUE(has(a->reason, "before each step's first GPU op")) << a->reason;
  // Launch records lost for most ops (HTA's trace_compare samples): a step's
  // start on the GPU, and what ended each gap, are not known.
  p.devices[0].kernels = 9000;
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::unknown);
  p.devices[0].kernels = 1000;
  p.steps.lead_idle_ns = 200 * ms;  // 20 %: the loop may wait for its batch there
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::unknown);
  EXPECT_TRUE(has(help(p, "input-workers")->reason, "at most 20.0% can be a wait for input"))
      << help(p, "input-workers")->reason;
  p.steps.lead_idle_ns = 10 * ms;
  p.idle_charges.push_back({"late-launch-gap", 100 * ms, "gpu-idle-gaps", ""});  // long host gaps inside steps
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::unknown);
  p.idle_charges.clear();
  p.steps.source = StepSource::bursts;  // a step begins at its first op: nothing to bound
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::unknown);
  // A tenth of the ops without their launch (under half): the long gaps they
  // ended count in the bound, since they may be late launches; gaps ended by
  // held work (launched in time) do not.
  p.steps.source = StepSource::profiler_step;
  p.devices[0].kernels = 1200;
  p.idle_charges.push_back({"queued-gap", 300 * ms, "gpu-idle-gaps", ""});
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::no) << help(p, "input-workers")->reason;
  EXPECT_TRUE(has(help(p, "input-workers")->reason, "a late launch or an op with no launch ended"))
      << help(p, "input-workers")->reason;
  p.idle_charges.push_back({"unlaunched-gap", 80 * ms, "gpu-idle-gaps", ""});
  settle_findings(&p);
  EXPECT_EQ(help(p, "input-workers")->verdict, Verdict::unknown);
  EXPECT_TRUE(has(help(p, "input-workers")->reason, "at most 9.0% can be a wait for input"))
      << help(p, "input-workers")->reason;
}

// Steps that cover under a tenth of the GPUs' span (a kernel pattern that
// repeats twice in a unit test's one pass: 0.7 % of it) are no measure of
// the run: the data-loader answer weighs the span, as without steps, and
// says why. Steps that cover half of it are weighed as steps.
TEST(Helps, StepsThatCoverLittleOfTheSpanAreNotWeighed) {
  Profile p = half_idle_profile();
  p.steps.source = StepSource::pattern;
  p.steps.steps.resize(2);
  p.steps.total_ns = 7 * ms;
  p.steps.idle_ns = 6 * ms;
  OpRow op;  // the host side is recorded
  op.name = "aten::layer_norm";
  p.op_names.push_back(op);
  p.idle_charges.push_back({"warm-up", 450 * ms, "gpu-idle-gaps", ""});
  p.idle_charges.push_back({"late-launch-gap", 2 * ms, "gpu-idle-gaps", ""});
  settle_findings(&p);
  const HelpAnswer* a = help(p, "input-workers");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_TRUE(has(a->reason,
                  "idle 50.0% of their span (the 2 steps found cover 0.7% of it, too little to weigh by "
                  "step time)"))
      << a->reason;
  p.steps.total_ns = 500 * ms;
  p.steps.idle_ns = 250 * ms;
  settle_findings(&p);
  a = help(p, "input-workers");
  EXPECT_TRUE(has(a->reason, "of step time")) << a->reason;
  EXPECT_FALSE(has(a->reason, "too little to weigh")) << a->reason;
}

TEST(Helps, NothingPrescribedThatTheProgramAlreadyDoes) {
  Profile p = half_idle_profile();
  p.devices[0].communication_ns = 200 * ms;
  p.devices[0].exposed_communication_ns = 80 * ms;  // 60 % of it under compute: DDP overlaps
  p.workload.data_parallel = "ddp";
  p.workload.data_parallel_evidence = "1 DDP op (\"DistributedDataParallel.forward\")";
  p.workload.execution = "cuda graphs";
  p.workload.graph_kernels = 5046;
  p.workload.execution_evidence = "5,046 of 5,100 kernels replayed from CUDA graphs";
  p.findings.push_back(finding("exposed-communication", 100 * ms, "Communication exposed"));
  p.findings.push_back(finding("launch-bound", 50 * ms, "Launch-bound"));
  settle_findings(&p);
  const HelpAnswer* comm = help(p, "overlap-communication");
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->verdict, Verdict::no);
  EXPECT_TRUE(has(comm->reason, "already buckets gradients")) << comm->reason;
  EXPECT_TRUE(has(comm->reason, "bucket_cap_mb")) << comm->reason;  // 8 % exposed: what decides it is named
  EXPECT_FALSE(has(comm->reason, "last bucket")) << comm->reason;   // which bucket the trace does not say
  // DDP whose all-reduce runs alone (one bucket after the backward pass, as
  // in a compiled DLRM trace): not told it already overlaps.
  p.devices[0].exposed_communication_ns = 190 * ms;
  settle_findings(&p);
  comm = help(p, "overlap-communication");
  EXPECT_EQ(comm->verdict, Verdict::yes) << comm->reason;
  EXPECT_FALSE(has(comm->reason, "already buckets gradients")) << comm->reason;
  EXPECT_TRUE(has(comm->reason, "only 5.0% of its all-reduce time runs under compute")) << comm->reason;
  // A run that replays graphs, with the GPU still waiting for launches (a
  // numbered launch-bound): yes for what runs eagerly, said as such.
  const HelpAnswer* graphs = help(p, "cuda-graphs");
  ASSERT_NE(graphs, nullptr);
  EXPECT_EQ(graphs->verdict, Verdict::yes);
  EXPECT_TRUE(has(graphs->reason, "already replays CUDA graphs")) << graphs->reason;
  EXPECT_TRUE(has(graphs->reason, "the GPUs still wait for the launches of what runs eagerly between them"))
      << graphs->reason;
  // Without a numbered finding behind it: no, the graphs are there.
  p.findings.erase(
      std::remove_if(p.findings.begin(), p.findings.end(), [](const Finding& f) { return f.id == "launch-bound"; }),
      p.findings.end());
  settle_findings(&p);
  graphs = help(p, "cuda-graphs");
  EXPECT_EQ(graphs->verdict, Verdict::no) << graphs->reason;
  EXPECT_TRUE(has(graphs->reason, "already replays CUDA graphs")) << graphs->reason;
}

// Busy GPUs whose busy time is mostly communication with no compute
// beside it: more streams have nothing to fill, and shorter kernels are not
// the lever either; the answer points at the communication.
TEST(Helps, BusyWithExposedCommunicationPointsAtTheCommunication) {
  Profile p = half_idle_profile();
  p.devices[0].busy_ns = 970 * ms;
  p.devices[0].idle_ns = 30 * ms;
  p.devices[0].utilization = 0.97;
  p.devices[0].communication_ns = 700 * ms;
  p.devices[0].exposed_communication_ns = 640 * ms;
  settle_findings(&p);
  const HelpAnswer* a = help(p, "more-streams");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no);
  EXPECT_TRUE(has(a->reason, "but 64.0% of it is communication with no compute beside it")) << a->reason;
  EXPECT_FALSE(has(a->reason, "make the kernels shorter")) << a->reason;
  p.devices[0].exposed_communication_ns = 50 * ms;
  settle_findings(&p);
  EXPECT_TRUE(has(help(p, "more-streams")->reason, "make the kernels shorter")) << help(p, "more-streams")->reason;
}

// Collectives the framework annotated whose kernels the trace lacks: how
// long they ran, the trace cannot tell; "no communication" would be false.
TEST(Helps, AnnotatedCollectivesWithoutKernelsAreUnknown) {
  Profile p = half_idle_profile();
  OpRow r;
  r.name = "nccl:all_reduce";
  r.calls = 2;
  p.ops.push_back(r);
  settle_findings(&p);
  const HelpAnswer* comm = help(p, "overlap-communication");
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->verdict, Verdict::unknown) << comm->reason;
  EXPECT_TRUE(has(comm->reason, "2 collective ops")) << comm->reason;
  p.ops.clear();
  settle_findings(&p);
  EXPECT_EQ(help(p, "overlap-communication")->verdict, Verdict::not_applicable);
}

// A distributed optimizer's step (Shampoo) launches its exchange: 190 ms of
// send/recv kernels and 10 ms of update math under Optimizer.step. The
// communication is not update work to overlap; the update itself is 2 %.
TEST(Helps, AnOptimizerStepsCommunicationIsNotItsUpdate) {
  Profile p = half_idle_profile();
  OpRow r;
  r.name = "Optimizer.step#Shampoo.step";
  r.calls = 2;
  r.gpu_total_ns = 200 * ms;
  r.top_kernels = {{"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", KernelCategory::communication, 2, 190 * ms, 0},
                   {"cutlass::Kernel", KernelCategory::gemm, 20, 10 * ms, 0}};
  p.op_names.push_back(r);
  settle_findings(&p);
  const HelpAnswer* a = help(p, "overlap-weight-update");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_TRUE(has(a->reason, "are 2.0% of kernel time (besides 38.0% in communication kernels")) << a->reason;
  EXPECT_TRUE(has(a->reason, "too little to matter")) << a->reason;
}

TEST(Helps, AnUnfusedOptimizerIsNotAnOverlapProblem) {
  Profile p = half_idle_profile();
  p.findings.push_back(finding("unfused-optimizer", 100 * ms, "Optimizer.step launches 483 kernels per step"));
  settle_findings(&p);
  const HelpAnswer* a = help(p, "overlap-weight-update");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no);
  EXPECT_TRUE(has(a->reason, "fuse the update first")) << a->reason;
  EXPECT_EQ(a->findings, std::vector<std::string>{"unfused-optimizer"});
}

// A launch-bound run recorded under the Python tracer: graphs is yes, said
// with the tracer's caveat unless most ops are shorter than their launch.
TEST(Helps, ACudaGraphsYesUnderThePythonTracerSaysItMayBeSmaller) {
  for (const double short_share : {0.1, 0.8}) {
    Profile p = half_idle_profile();
    p.workload.python_ranges = 5000;
    p.launches.short_kernel_share = short_share;
    p.findings.push_back(finding("launch-bound", 100 * ms, "Host-bound between launches"));
    settle_findings(&p);
    const HelpAnswer* a = help(p, "cuda-graphs");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->verdict, Verdict::yes) << a->reason;
    EXPECT_EQ(has(a->reason, "Python tracer on (with_stack=True)"), short_share < 0.5) << a->reason;
  }
}

TEST(Helps, HostSyncsAreNotACudaGraphsYes) {
  Profile p = half_idle_profile();
  p.findings.push_back(finding("host-sync", 100 * ms, "host synchronizations leave the GPU idle"));
  settle_findings(&p);
  EXPECT_EQ(help(p, "cuda-graphs")->verdict, Verdict::no);
}

// Long gaps that late launches ended are the host's other work, not launch
// overhead: the "no" to CUDA graphs says so, and does not claim the host
// keeps the queue filled.
TEST(Helps, LongLateLaunchGapsAreNotLaunchOverhead) {
  Profile p = half_idle_profile();
  p.launches.late_launch_idle_ns = 2 * ms;
  p.idle_charges.push_back({"late-launch-gap", 400 * ms, "gpu-idle-gaps", ""});
  p.findings.push_back(finding("gpu-idle-gaps", 400 * ms, "GPU idle gaps, mostly ended by late host launches"));
  settle_findings(&p);
  const HelpAnswer* a = help(p, "cuda-graphs");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no);
  EXPECT_TRUE(has(a->reason, "longer gaps ended by late launches (400.0 ms, 40.0%) are the host's other work"))
      << a->reason;
  EXPECT_FALSE(has(a->reason, "keeps the GPU's queue filled")) << a->reason;
  EXPECT_EQ(a->findings, std::vector<std::string>{"gpu-idle-gaps"});
  // Without them the GPU still idles half its span, for something other
  // than launches: the answer says so, not that the host keeps the queue
  // filled.
  p.idle_charges.clear();
  settle_findings(&p);
  EXPECT_EQ(help(p, "cuda-graphs")->verdict, Verdict::no);
  EXPECT_TRUE(
      has(help(p, "cuda-graphs")->reason, "waits for something other than a launch, and graphs shorten neither"))
      << help(p, "cuda-graphs")->reason;
  EXPECT_FALSE(has(help(p, "cuda-graphs")->reason, "keeps the GPU's queue filled")) << help(p, "cuda-graphs")->reason;
}

// The half-idle profile with 80 % of its kernel time in `math`, and two
// hotspots of that category (their names and times set by the test).
Profile math_profile(KernelCategory math, Hotspot* a, Hotspot* b) {
  Profile p = half_idle_profile();
  CategoryTime c;
  c.category = math;
  c.share = 0.8;
  p.categories.push_back(c);
  a->category = b->category = math;
  return p;
}

// Tensor cores already run part of the math (above no-tensor-cores'
// threshold): no when the rest is too little of the span to shorten the
// step, unknown when it is not (the trace cannot tell whether those layers
// would take them).
TEST(Helps, MathPartlyOnTensorCores) {
  Hotspot on, off;
  Profile p = math_profile(KernelCategory::convolution, &on, &off);  // 1 s span, 500 ms of kernels
  on.tensor_cores = true;
  on.stats.total = 100 * ms;
  off.stats.total = 300 * ms;  // 30 % of the span
  p.hotspots = {on, off};
  settle_findings(&p);
  const HelpAnswer* a = help(p, "mixed-precision");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_TRUE(has(a->reason, "25.0% of the listed convolution, GEMM and attention time already runs on tensor cores"))
      << a->reason;
  p.hotspots[0].stats.total = 1 * ms;
  p.hotspots[1].stats.total = 5 * ms;  // 0.5 % of the span
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::no) << help(p, "mixed-precision")->reason;
  EXPECT_TRUE(has(help(p, "mixed-precision")->reason, "too little to shorten the step"));
}

// Tensor-core kernels on fp32 inputs (the ops' recorded types) run TF32 on
// Ampere and later, at half bf16's rate: not "already mixed precision".
TEST(Helps, TensorCoresOnFp32InputsAreTf32) {
  Hotspot on, off;
  Profile p = math_profile(KernelCategory::gemm, &on, &off);  // compute capability 8
  on.name = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align1>";
  on.tensor_cores = true;
  on.stats.total = 300 * ms;
  off.stats.total = 10 * ms;
  p.hotspots = {on, off};
  settle_findings(&p);
  // Without the ops' types, the kernel's name says TF32 (CUTLASS's s1688:
  // fp32 operands on the tensor cores).
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::unknown) << help(p, "mixed-precision")->reason;
  EXPECT_TRUE(has(help(p, "mixed-precision")->reason,
                  "kernels whose names say TF32 (cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align1)"))
      << help(p, "mixed-precision")->reason;
  // A bf16 kernel's name says nothing of TF32.
  p.hotspots[0].name = "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x4_nn_align8>";
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::no) << help(p, "mixed-precision")->reason;
  OpRow r;
  r.name = "aten::mm";
  r.family = "gemm";
  r.math = "fp32";
  r.gpu_self_ns = 310 * ms;
  p.ops.push_back(r);
  settle_findings(&p);
  const HelpAnswer* a = help(p, "mixed-precision");
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_TRUE(has(a->reason, "so those tensor cores run TF32")) << a->reason;
  p.devices[0].compute_major = 7;  // Volta: no TF32, fp32 runs on CUDA cores
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::no) << help(p, "mixed-precision")->reason;
}

// TF32 is not mixed precision: the answer says which part runs TF32, which
// plain FP32 kernels, and how large that math is; a small share is not a
// priority. A TF32 kernel's name tells an Ampere-or-later GPU where the
// trace does not name it.
TEST(Helps, Tf32AndFp32MathAreSaidWithTheirShare) {
  Hotspot on, off;
  Profile p = math_profile(KernelCategory::gemm, &on, &off);  // 1 s span
  p.devices[0].compute_major = 0;                             // the GPU not named
  on.name = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1>";
  on.tensor_cores = true;
  on.stats.total = 40 * ms;
  off.name = "ampere_sgemm_128x64_nn";
  off.stats.total = 10 * ms;
  p.hotspots = {on, off};
  settle_findings(&p);
  const HelpAnswer* a = help(p, "mixed-precision");
  // Over the 1 % the findings number, under 5 %: unknown, with the bound.
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_FALSE(has(a->reason, "already")) << a->reason;
  EXPECT_TRUE(has(a->reason, "kernels whose names say TF32 (cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1)"))
      << a->reason;
  EXPECT_TRUE(has(a->reason, "20.0% runs in plain FP32 kernels on the CUDA cores (ampere_sgemm_128x64_nn)"))
      << a->reason;
  EXPECT_TRUE(has(a->reason, "saving at most 30.0 ms (3.0% of the span); how much of the step")) << a->reason;
  // The same math at a large share: unknown, without a bound.
  p.hotspots[0].stats.total = 300 * ms;
  p.hotspots[1].stats.total = 100 * ms;
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::unknown) << help(p, "mixed-precision")->reason;
  EXPECT_FALSE(has(help(p, "mixed-precision")->reason, "saving at most")) << help(p, "mixed-precision")->reason;
  // Reduced precision on the tensor cores is what "already" means.
  p.hotspots[0].name = "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x4_nn_align8>";
  settle_findings(&p);
  EXPECT_TRUE(has(help(p, "mixed-precision")->reason, "already runs on tensor cores"))
      << help(p, "mixed-precision")->reason;
}

// TF32 math answered by the replay of it at half its time (the
// no-tensor-cores rule's fix, narrowed to the trace's categories), which the
// simulation plan adds for the answer: yes with the replayed step where it
// is 1 % shorter or more; later where only after the changes that save time
// now (a DDP run whose host decides the step: no faster now, 41.9 -> 35.0 ms
// after --cuda-graphs); no where neither; unknown only without a replay.
TEST(Helps, Tf32MathIsAnsweredByItsReplay) {
  Hotspot on, off;
  Profile p = math_profile(KernelCategory::gemm, &on, &off);  // 1 s span
  p.categories[0].time_ns = 400 * ms;
  on.name = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1>";
  on.tensor_cores = true;
  on.stats.total = 300 * ms;
  off.name = "ampere_sgemm_128x64_nn";
  off.stats.total = 10 * ms;
  p.hotspots = {on, off};
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::unknown) << help(p, "mixed-precision")->reason;
  // The plan replays the change the answer needs, as no finding's fix.
  const graph::SimulationPlan plan = graph::simulation_plan(1, &p, {});
  ASSERT_EQ(plan.questions, 1u);
  ASSERT_FALSE(plan.fixes.empty());
  EXPECT_EQ(plan.fixes.back(), "--scale gemm=0.5");
  EXPECT_EQ(graph::decode_plan(graph::encode_plan(plan)).questions, 1u);
  p.simulation.status = "simulated";
  p.simulation.replayed_step_ns = 100 * ms;
  p.simulation.predictions.push_back({"--scale gemm=0.5", 96 * ms, 100.0 / 96.0, 40 * ms});
  settle_findings(&p);
  const HelpAnswer* a = help(p, "mixed-precision");
  EXPECT_EQ(a->verdict, Verdict::yes) << a->reason;
  EXPECT_TRUE(has(a->reason,
                  "the replay with that math at half its time (--scale gemm=0.5) makes the median step "
                  "4.0% shorter"))
      << a->reason;
  EXPECT_EQ(a->fix, "--scale gemm=0.5");
  EXPECT_EQ(a->predicted_step_ns, 96 * ms);
  p.simulation.predictions[0].step_ns = 100 * ms;  // the host decides the step
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::no) << help(p, "mixed-precision")->reason;
  EXPECT_TRUE(has(help(p, "mixed-precision")->reason,
                  "makes no step faster (100.0 ms -> 100.0 ms): the step's time "
                  "is decided elsewhere"))
      << help(p, "mixed-precision")->reason;
  // Filtered to its launches: the syncs that may have held them are gone.
  p.workload.host_filtered = "every API call launched a GPU op";
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::unknown) << help(p, "mixed-precision")->reason;
  p.workload.host_filtered.clear();
  p.simulation.together = {"--cuda-graphs", 40 * ms, 2.5, 60 * ms};
  p.simulation.predictions[0].after_step_ns = 35 * ms;
  settle_findings(&p);
  a = help(p, "mixed-precision");
  EXPECT_EQ(a->verdict, Verdict::later) << a->reason;
  EXPECT_TRUE(has(a->reason,
                  "After --cuda-graphs (the changes that save time now), it would shorten the median "
                  "step 40.0 ms -> 35.0 ms"))
      << a->reason;
  // Reduced precision already: no replay wanted.
  p.hotspots[0].name = "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x4_nn_align8>";
  p.simulation = {};
  EXPECT_EQ(graph::simulation_plan(1, &p, {}).questions, 0u);
}

// A span mostly warm-up (a layer microbenchmark's first calls: 1.06 s of
// its 1.07 s) hides its steady state from launch-bound, which weighs the
// whole span: past warm-up the GPUs wait for late launches 89 % of the
// time, so graphs are a yes there; without the warm-up, the plain no.
TEST(Helps, PastWarmUpTheLaunchWaitIsWeighedAlone) {
  Profile p = half_idle_profile();
  p.launches.late_launch_idle_ns = 40 * ms;  // 4 % of the span: under launch-bound's 5 %
  settle_findings(&p);
  EXPECT_EQ(help(p, "cuda-graphs")->verdict, Verdict::no) << help(p, "cuda-graphs")->reason;
  p.idle_charges.push_back({"warm-up", 920 * ms, "gpu-idle-gaps", ""});
  settle_findings(&p);
  const HelpAnswer* a = help(p, "cuda-graphs");
  EXPECT_EQ(a->verdict, Verdict::yes) << a->reason;
  EXPECT_TRUE(has(a->reason,
                  "warm-up (first calls and set-up, which graphs do not shorten) is 920.0 ms of their "
                  "1.00 s span, and in the 80.0 ms outside it late launches leave them idle 40.0 ms "
                  "(50.0%"))
      << a->reason;
  EXPECT_TRUE(has(a->reason, "where that is 4.0%")) << a->reason;
  p.launches.late_launch_idle_ns = 2 * ms;  // 2.5 % of the steady state: the plain no
  settle_findings(&p);
  EXPECT_EQ(help(p, "cuda-graphs")->verdict, Verdict::no) << help(p, "cuda-graphs")->reason;
}

// AMD's GPUs: kernels named for the matrix cores (MFMA) tell that the math
// already uses them; kernels without the mark tell nothing, so the answer
// is unknown, never yes.
TEST(Helps, AmdMatrixCoreNamesAnswerOnlyAlreadyUsed) {
  Hotspot mfma, plain;
  Profile p = math_profile(KernelCategory::gemm, &mfma, &plain);
  p.devices[0].name = "AMD Instinct MI300X";
  p.devices[0].compute_major = 9;
  p.devices[0].compute_minor = 4;
  mfma.name = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x16x256_MI16x16x1_SN_LDSB1";  // bf16
  mfma.stats.total = 380 * ms;
  plain.name = "Cijk_Ailk_Bljk_SB_MT64x64x8_SE_K1";
  plain.stats.total = 20 * ms;
  p.hotspots = {mfma, plain};
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::no) << help(p, "mixed-precision")->reason;
  EXPECT_TRUE(has(help(p, "mixed-precision")->reason, "95.0%")) << help(p, "mixed-precision")->reason;
  p.hotspots[1].stats.total = 300 * ms;
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::unknown) << help(p, "mixed-precision")->reason;
  // FP32 on the matrix cores (Tensile's SB): on them, but not in reduced precision.
  p.hotspots[0].name = "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0";
  p.hotspots[1].stats.total = 20 * ms;
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::unknown) << help(p, "mixed-precision")->reason;
  // A type word counts only as a word: "f8" inside "LDSBuf8" is no FP8.
  p.hotspots[0].name = "Cijk_Alik_Bljk_SB_MT64x16x32_MI16x16x1_SN_LDSBuf8_K1";
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::unknown) << help(p, "mixed-precision")->reason;
  p.hotspots[0].name = "mfma_gemm_f8E4M3FN_kernel";
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::no) << help(p, "mixed-precision")->reason;
  // Triton's bf16 × MXFP4 product: FP4 is multiplied only by the matrix cores.
  p.hotspots[0].name = "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1";
  p.hotspots[0].tensor_cores = is_tensor_core_kernel(p.hotspots[0].name, KernelCategory::gemm);
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::no) << help(p, "mixed-precision")->reason;
}

// MIOpen's xdlops convolutions (gtcx) run on the matrix cores and name their
// type as a word; Tensile writes its input type as the code that opens the
// field after the index fields, in every spelling (BBS, B_BS, HHS, SB, S_B).
TEST(Helps, AmdConvolutionsAndTensileSpellingsSayTheirType) {
  Hotspot conv, gemm;
  Profile p = math_profile(KernelCategory::convolution, &conv, &gemm);
  p.devices[0].name = "AMD Instinct MI210";
  p.devices[0].compute_major = 9;
  gemm.category = KernelCategory::gemm;
  conv.name = "igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x256x32_wt16x64x4_ws1x1_wr1x2_ta1x4x1x1_1x8x1x32_gkgs";
  conv.stats.total = 300 * ms;
  gemm.name = "Cijk_Ailk_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT64x64x64_MI16x16x1_SN_LDSB1";
  gemm.stats.total = 100 * ms;
  p.hotspots = {conv, gemm};
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::no) << help(p, "mixed-precision")->reason;
  EXPECT_TRUE(has(help(p, "mixed-precision")->reason, "100.0% with a 16- or 8-bit type"))
      << help(p, "mixed-precision")->reason;
  const auto answer_for = [&](const char* conv_name, const char* gemm_name) {
    p.hotspots[0].name = conv_name;
    p.hotspots[1].name = gemm_name;
    settle_findings(&p);
    return help(p, "mixed-precision")->verdict;
  };
  EXPECT_EQ(answer_for("igemm_fwd_gtcx3_nhwc_fp16_bx0_ex1_bt64x64x32", "Cijk_Alik_Bljk_HHS_BH_MT64x64x64_MI16x16x1"),
            Verdict::no);
  EXPECT_EQ(answer_for("igemm_bwd_gtcx_nchw_bf16_bx0_ex1_bt64x64x32", "Cijk_Ailk_Bljk_HB_MT64x64x8_MI32x32x8"),
            Verdict::no);
  // fp32 in both spellings, and a MIOpen convolution without the matrix
  // cores ("gtc" without "x"): nothing tells reduced precision.
  EXPECT_NE(answer_for("igemm_fwd_gtcx2_nhwc_fp32_bx0_ex1_bt64x64x32", "Cijk_Ailk_Bljk_S_B_Bias_HA_S_SAV_MI16x16x4"),
            Verdict::no);
  EXPECT_NE(answer_for("igemm_fwd_gtc_nhwc_bf16_bx0_ex1_bt64x64x32", "Cijk_Ailk_Bljk_SB_MT64x64x8_MI16x16x4"),
            Verdict::no);
  EXPECT_TRUE(is_amd_matrix_core_kernel("igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8"));
  EXPECT_FALSE(is_amd_matrix_core_kernel("igemm_wrw_gtc_nhwc_bf16_bx0_ex1_bt256x128x16"));
}

// Where the framework's ops record their input types, the math's precision
// is known though the kernels' names do not say it: fp32 GEMMs on AMD's GPUs
// are unknown (what bf16 would gain the trace cannot tell), and no when
// their time is too little of the span to matter.
TEST(Helps, AmdPrecisionFromTheOpsRecordedTypes) {
  Hotspot plain, other;
  Profile p = math_profile(KernelCategory::gemm, &plain, &other);
  p.devices[0].name = "AMD Instinct MI300X";
  p.devices[0].compute_major = 9;
  p.devices[0].compute_minor = 4;
  plain.name = "Cijk_Ailk_Bljk_SB_MT64x64x8_SE_K1";
  plain.stats.total = 300 * ms;
  other.name = "Cijk_Ailk_Bljk_SB_MT32x32x8_SE_K1";
  other.stats.total = 100 * ms;
  p.hotspots = {plain, other};
  settle_findings(&p);
  EXPECT_TRUE(has(help(p, "mixed-precision")->reason, "their names do not tell")) << help(p, "mixed-precision")->reason;
  OpRow r;
  r.name = "aten::addmm";
  r.family = "gemm";
  r.math = "fp32";
  r.gpu_self_ns = 400 * ms;
  p.ops.push_back(r);
  settle_findings(&p);
  const HelpAnswer* a = help(p, "mixed-precision");
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_TRUE(has(a->reason, "record 32- or 64-bit inputs for 100.0%")) << a->reason;
  EXPECT_TRUE(has(a->reason, "aten::addmm fp32")) << a->reason;
  p.hotspots[0].stats.total = 4 * ms;  // 0.5 % of the span
  p.hotspots[1].stats.total = 1 * ms;
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::no) << help(p, "mixed-precision")->reason;
  EXPECT_TRUE(has(help(p, "mixed-precision")->reason, "too little to shorten the step"));
  // Recorded reduced precision for the math the names leave unmarked (a
  // Triton flash attention's attn_fwd with bf16 inputs): no, it already is.
  p.ops[0].math = "bf16";
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::no) << help(p, "mixed-precision")->reason;
  EXPECT_TRUE(has(help(p, "mixed-precision")->reason, "record 16- or 8-bit inputs for 100.0%"))
      << help(p, "mixed-precision")->reason;
  // Types recorded for too little of the math: the names decide again.
  p.ops[0].gpu_self_ns = 1 * ms;
  settle_findings(&p);
  EXPECT_TRUE(has(help(p, "mixed-precision")->reason, "their names do not tell")) << help(p, "mixed-precision")->reason;
  // The typed op launches little itself, but a backend's op inside it (no
  // types of its own: aten::miopen_convolution under aten::conv2d) launches
  // the rest: its time with the ops inside it covers the math.
  p.ops[0].gpu_total_ns = 400 * ms;
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::no) << help(p, "mixed-precision")->reason;
  EXPECT_TRUE(has(help(p, "mixed-precision")->reason, "with the ops inside them (none records 32- or 64-bit"))
      << help(p, "mixed-precision")->reason;
  // One GEMM op elsewhere with fp32 inputs: not said to be reduced.
  OpRow wide;
  wide.name = "aten::mm";
  wide.family = "gemm";
  wide.math = "fp32";
  wide.gpu_self_ns = wide.gpu_total_ns = 1 * ms;
  p.ops.push_back(wide);
  settle_findings(&p);
  EXPECT_FALSE(has(help(p, "mixed-precision")->reason, "already runs in reduced precision"))
      << help(p, "mixed-precision")->reason;
}

// AMD's fused attention (AOTriton's attn_fwd under PyTorch-ROCm's SDPA,
// Composable Kernel's and AITER's fmha) runs on the matrix cores, and its
// name gives no type: the attention, GEMM or convolution ops that launched
// it tell its precision where they all record 16- or 8-bit inputs, though
// they launched only part of its time (the rest queued before the trace).
// One launching op with fp32 inputs leaves it unknown; a trace with no such
// math at all is n/a.
TEST(Helps, AmdAttentionKernelsTakeTheirPrecisionFromTheirLaunchingOps) {
  Hotspot gemm, attn;
  Profile p = math_profile(KernelCategory::gemm, &gemm, &attn);
  p.devices[0].name = "AMD Instinct MI300X";
  p.devices[0].compute_major = 9;
  p.devices[0].compute_minor = 4;
  gemm.name = "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1";  // bf16
  gemm.stats.total = 300 * ms;
  attn.name = "attn_fwd";
  attn.category = KernelCategory::attention;
  attn.stats.total = 100 * ms;
  p.hotspots = {gemm, attn};
  settle_findings(&p);
  const HelpAnswer* a = help(p, "mixed-precision");
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_TRUE(has(a->reason, "100.0% of the listed")) << a->reason;  // attn_fwd is on the matrix cores
  OpRow r;
  r.name = "aten::_flash_attention_forward";
  r.family = "attention";
  r.math = "bf16";
  r.gpu_self_ns = 60 * ms;
  r.top_kernels = {{"attn_fwd", KernelCategory::attention, 24, 60 * ms, 0}};
  p.ops.push_back(r);
  settle_findings(&p);
  a = help(p, "mixed-precision");
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_TRUE(has(a->reason,
                  "25.0% in kernels whose launching GEMM, convolution or attention ops all record 16- or "
                  "8-bit inputs"))
      << a->reason;
  r.name = "aten::_efficient_attention_forward";
  r.math = "fp32";
  p.ops.push_back(r);
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::unknown) << help(p, "mixed-precision")->reason;
  EXPECT_TRUE(is_amd_matrix_core_kernel("bwd_kernel_dk_dv"));
  EXPECT_TRUE(is_amd_matrix_core_kernel("ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVSAsync<>>"));
  EXPECT_TRUE(is_amd_matrix_core_kernel("_ZN5aiter37fmha_fwd_hd128_bf16_causal_a32_rtz_pssk"));
  EXPECT_FALSE(is_amd_matrix_core_kernel("at::native::(anonymous namespace)::vectorized_layer_norm_kernel"));
  // No convolution, GEMM or attention at all (a unit test of norm layers).
  p.categories[0].category = KernelCategory::normalization;
  for (Hotspot& h : p.hotspots) h.category = KernelCategory::normalization;
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::not_applicable) << help(p, "mixed-precision")->reason;
}

// The weight update's share of kernel time says little where the GPU is
// mostly idle: measured against the span, 5 % of 10 ms of kernels in a
// 1 s span is too little to matter.
TEST(Helps, AWeightUpdateOfLittleSpanIsNoWhateverItsKernelShare) {
  Profile p = half_idle_profile();
  p.devices[0].busy_ns = p.devices[0].kernel_busy_ns = p.devices[0].kernel_time_ns = 10 * ms;
  p.kernel_time_ns = 10 * ms;
  OpRow r;
  r.name = "Optimizer.step#SGD.step";
  r.calls = 1;
  r.gpu_total_ns = 2 * ms;  // 20 % of kernel time, 0.2 % of the span
  r.top_kernels = {{"multi_tensor_apply_kernel", KernelCategory::optimizer, 1, 2 * ms, 0}};
  p.op_names.push_back(r);
  settle_findings(&p);
  const HelpAnswer* a = help(p, "overlap-weight-update");
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_TRUE(has(a->reason, "20.0% of kernel time, 0.2% of the GPUs' span: too little to matter")) << a->reason;
}

// An optimizer step that holds the host a third of the step for little GPU
// work: no to overlapping its kernels where the trace shows the host's side;
// unknown where the trace was filtered to the launches (its waits are gone).
TEST(Helps, AWeightUpdateHoldingTheHostIsUnknownInAFilteredTrace) {
  Profile p = half_idle_profile();
  OpRow r;
  r.name = "Optimizer.step#Shampoo.step";
  r.calls = 2;
  r.cpu_total_ns = 400 * ms;  // 40 % of step time
  r.gpu_total_ns = 4 * ms;
  r.top_kernels = {{"multi_tensor_apply_kernel", KernelCategory::optimizer, 2, 4 * ms, 0}};
  p.op_names.push_back(r);
  settle_findings(&p);
  const HelpAnswer* a = help(p, "overlap-weight-update");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_TRUE(has(a->reason, "holds the host 200.0 ms per call (40.0% of step time)")) << a->reason;
  p.workload.host_filtered = "every one of its API calls launched a GPU op";
  settle_findings(&p);
  a = help(p, "overlap-weight-update");
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_TRUE(has(a->reason, "the trace was filtered to the launches")) << a->reason;
  // Its own all-gather's kernels are not the update's GPU work there.
  p.op_names.back().gpu_total_ns = 204 * ms;
  p.op_names.back().top_kernels.push_back({"ncclDevKernel_AllGather", KernelCategory::communication, 2, 200 * ms, 0});
  settle_findings(&p);
  a = help(p, "overlap-weight-update");
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_TRUE(has(a->reason, "for 2.0 ms of GPU work besides communication")) << a->reason;
}

// A larger batch for a launch-bound run: yes, but said with what grows with
// the batch too (input the GPU already waits for: then later, an exposed
// all-to-all), and whether memory allows it where the trace cannot tell.
TEST(Helps, ALargerBatchSaysWhatGrowsWithIt) {
  Profile p = half_idle_profile();
  p.findings.push_back(finding("launch-bound", 100 * ms, "Launch-bound: the GPU waits for launches 10%"));
  settle_findings(&p);
  const HelpAnswer* a = help(p, "larger-batch");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::yes) << a->reason;
  EXPECT_TRUE(has(a->reason, "whether a larger batch fits in memory the trace does not say")) << a->reason;
  EXPECT_TRUE(has(a->reason, "profile_memory=True")) << a->reason;
  EXPECT_FALSE(has(a->reason, "fix it first")) << a->reason;
  // Memory records on a GPU that ran none of the work: the option is on; they
  // are not said to be missing.
  {
    Profile q = p;
    q.trace_stats.emplace_back("import.unattributed.memory_events", 12);
    settle_findings(&q);
    const HelpAnswer* b = help(q, "larger-batch");
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(has(b->reason, "its memory records name a GPU that ran none of its work")) << b->reason;
    EXPECT_FALSE(has(b->reason, "profile_memory=True")) << b->reason;
  }
  p.findings.push_back(finding("input-bound", 200 * ms, "Input-bound: the GPU waits for input 20%"));
  p.collective_summary.kinds.push_back({"all_to_all", 1, 50 * ms, 40 * ms, 0, 0});
  p.findings.push_back(finding("exposed-communication", 40 * ms, "Communication is exposed 4%"));
  settle_findings(&p);
  a = help(p, "larger-batch");
  // Not now: the input the GPU waits for first.
  EXPECT_EQ(a->verdict, Verdict::later) << a->reason;
  EXPECT_TRUE(has(a->reason, "but the input the GPU already waits for grows with the batch: fix it first"))
      << a->reason;
  EXPECT_TRUE(has(a->reason, "the exposed all-to-all's bytes grow with the batch too")) << a->reason;
}

// A launch-bound trace recorded with PyTorch's Python tracer: the tracer
// slows the host by an amount the trace does not show, so a wait measured
// over that host is no ground for a larger batch, however far over its
// threshold; unless most GPU ops run shorter than their launch call, a
// runtime call the tracer does not slow.
TEST(Helps, ALaunchWaitUnderThePythonTracerIsNoGroundForALargerBatch) {
  Profile p = half_idle_profile();
  Finding lb = finding("launch-bound", 60 * ms, "Host-bound between launches: the GPU waits 6.0%");
  lb.metric = 0.06, lb.threshold = 0.05, lb.share = 0.06;
  p.findings.push_back(lb);
  p.launches.short_kernel_share = 0.078;
  p.workload.python_ranges = 201'328;
  settle_findings(&p);
  const HelpAnswer* a = help(p, "larger-batch");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::unknown) << a->reason;
  EXPECT_TRUE(has(a->reason, "6.0% vs a 5.0% threshold")) << a->reason;
  EXPECT_TRUE(has(a->reason, "with_stack=True")) << a->reason;
  EXPECT_TRUE(has(a->reason, "only 7.8% of GPU ops run shorter than their launch call")) << a->reason;
  EXPECT_EQ(a->findings, std::vector<std::string>{"launch-bound"});
  // Most ops shorter than their launch call: launching alone outpaces the GPU.
  {
    Profile q = p;
    q.launches.short_kernel_share = 0.66;
    settle_findings(&q);
    const HelpAnswer* b = help(q, "larger-batch");
    EXPECT_EQ(b->verdict, Verdict::yes) << b->reason;
    EXPECT_TRUE(has(b->reason, "most GPU ops run shorter than their launch call, which it does not slow")) << b->reason;
  }
  // Fewer Python ranges than the tracer records: the host is the program's.
  p.workload.python_ranges = 12;
  settle_findings(&p);
  a = help(p, "larger-batch");
  EXPECT_EQ(a->verdict, Verdict::yes) << a->reason;
  EXPECT_FALSE(has(a->reason, "Python tracer")) << a->reason;
}

TEST(Helps, NoKernelsNoQuestions) {
  Profile p;
  p.window = {0, 10 * ms};
  DeviceSummary d;
  d.span_ns = 10 * ms;
  p.devices.push_back(d);
  settle_findings(&p);
  EXPECT_TRUE(p.helps.empty());
}

TEST(Helps, UnknownGpuAndNoTensorCoreNamesIsUnknown) {
  Profile p = half_idle_profile();
  p.devices[0].compute_major = 0;
  CategoryTime c;
  c.category = KernelCategory::convolution;
  c.share = 0.6;
  c.time_ns = 300 * ms;
  p.categories.push_back(c);
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::unknown);
  p.devices[0].compute_major = 6;  // Pascal: no tensor cores
  settle_findings(&p);
  EXPECT_EQ(help(p, "mixed-precision")->verdict, Verdict::not_applicable);
}

// [SECTION] Minor findings -------------------------------------------------------------------

TEST(MinorFindings, UnderOnePercentOfTheRunAreListedNotNumbered) {
  Profile p = half_idle_profile();
  p.findings.push_back(finding("pageable-memcpy", 5 * ms));      // 0.5 % of the run
  p.findings.push_back(finding("low-memcpy-overlap", 20 * ms));  // 2 %
  Finding shared = finding("padding-hotspot", 0);
  shared.share = 0.2;  // 20 % of kernel time, no saving estimated
  p.findings.push_back(shared);
  settle_findings(&p);
  EXPECT_EQ(testing::finding_ids(p), (std::set<std::string>{"low-memcpy-overlap", "padding-hotspot"}));
  ASSERT_NE(minor(p, "pageable-memcpy"), nullptr);
  // Settling again (after the replay) gives the same lists.
  settle_findings(&p);
  EXPECT_EQ(p.findings.size(), 2u);
  EXPECT_EQ(p.minor_findings.size(), 1u);
  // A simulated saving that makes a minor finding material moves it up.
  p.minor_findings[0].saving_ns = 50 * ms;
  settle_findings(&p);
  EXPECT_EQ(p.findings.front().id, "pageable-memcpy");
  EXPECT_TRUE(p.minor_findings.empty());
}

// A finding below its rule's warning level is numbered by its saving where
// it has one, not by its own time's share: pageable copies taking 1.2 % of
// the run whose staging idled the GPU 0.08 % (the ResNet-50 V100 trace) stay
// minor. With no saving the share stands in; at a warning level the share
// numbers it still (what its saving leaves unestimated matters).
TEST(MinorFindings, AnInfoFindingWithASavingIsNumberedByItNotItsShare) {
  Profile p = half_idle_profile();
  Finding pageable = finding("pageable-memcpy", 800 * us);  // 0.08 % of the 1 s run
  pageable.severity = Severity::info;
  pageable.share = 0.012;
  p.findings.push_back(pageable);
  Finding advisory = finding("low-memcpy-overlap", 0);  // no saving estimated
  advisory.severity = Severity::info;
  advisory.share = 0.02;
  p.findings.push_back(advisory);
  Finding large = finding("sync-memcpy", 800 * us);
  large.share = 0.06;  // a warning: its share numbers it
  p.findings.push_back(large);
  settle_findings(&p);
  EXPECT_EQ(testing::finding_ids(p), (std::set<std::string>{"low-memcpy-overlap", "sync-memcpy"}));
  ASSERT_NE(minor(p, "pageable-memcpy"), nullptr);
  // Its saving at 1 % of the run or more numbers it.
  p.minor_findings.front().saving_ns = 12 * ms;
  settle_findings(&p);
  EXPECT_EQ(p.findings.front().id, "pageable-memcpy");
  EXPECT_TRUE(p.minor_findings.empty());
}

// Without steps, a wait for input ends in a long gap a late launch ended:
// where the idle time is warm-up (late launches after set-up calls) or work
// held by a dependency, what is left under 5 % of the span bounds any input
// wait: no, with the warm-up said. Late launches after plain host work keep
// it unknown (that host work may be loading input), and so does a trace
// of the GPU's ops and the runtime's calls alone (no framework op, Python
// function or step): it cannot show where the host waited.
TEST(Helps, WithoutStepsLongGapsOfOtherCausesRuleOutInput) {
  auto run = [](std::string_view call, bool ops = true) { return analyze(testing::late_launches_after(call, ops)); };
  const Profile gpu_only = run("cudaStreamCreateWithFlags", false);
  const HelpAnswer* u = help(gpu_only, "input-workers");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->verdict, Verdict::unknown) << u->reason;
  EXPECT_TRUE(has(u->reason, "records only the GPU's ops and the runtime's calls")) << u->reason;
  const Profile setup = run("cudaStreamCreateWithFlags");
  const HelpAnswer* a = help(setup, "input-workers");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_TRUE(has(a->reason, "of it is warm-up (first calls, set-up) and only 0.0% lies in long gaps")) << a->reason;
  const Profile host = run("");
  const HelpAnswer* b = help(host, "input-workers");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->verdict, Verdict::unknown) << b->reason;
}

// [SECTION] Recognition from traces ----------------------------------------------------------

TEST(Recognition, KernelsCorrelatedToGraphLaunchesAreReplays) {
  TraceFactory f;
  for (int step = 0; step < 3; ++step) {
    const TimeNs t = (1 + 10 * step) * ms;
    const std::uint32_t c = f.api("cudaGraphLaunch", t, t + 20 * us);
    for (int k = 0; k < 20; ++k) {
      KernelRow row;
      row.start = t + 100 * us + k * 200 * us;
      row.end = row.start + 150 * us;
      row.track = f.builder().gpu_track(0, 7);
      row.name = f.builder().intern(names::kRelu);
      row.correlation = c;
      f.builder().add_kernel(row);
    }
  }
  const Trace t = f.build();
  const Profile p = analyze(t);
  EXPECT_EQ(p.workload.execution, "cuda graphs");
  EXPECT_EQ(p.workload.graph_kernels, 60u);
  EXPECT_EQ(p.workload.graph_launches, 3u);
}

// What the host did before a step's first GPU op: the step thread's ranges
// that begin or end inside the step (not the step's own, nor one around the
// whole loop) and its runtime calls; the outermost named; a data loader's
// frames there counted apart.
Profile lead_profile(const char* fetch) {
  TraceFactory f;
  f.range("run_loop", 0, 100 * ms, 1, RangeKind::annotation, "python_function");  // around every step
  f.range("ProfilerStep#1", 1 * ms, 50 * ms, 1, RangeKind::annotation, "user_annotation");
  f.range(fetch, 1 * ms, 9 * ms, 1, RangeKind::annotation, "python_function");
  f.range("torch/cuda/__init__.py(1030): synchronize", 9 * ms, 10 * ms, 1, RangeKind::annotation, "python_function");
  f.cpu_op("aten::linear", 10 * ms, 11 * ms, "", "");
  f.kernel(0, 7, "gemm_kernel", 11 * ms, 40 * ms, 10500 * us);
  return analyze(f.build());
}

TEST(Recognition, TheHostsWorkBeforeAStepsFirstOpIsRecorded) {
  const Profile p = lead_profile("models/prep.py(10): build_masks");
  EXPECT_EQ(p.steps.lead_idle_ns, 10 * ms);
  EXPECT_GE(p.steps.lead_recorded_ns, 9 * ms);
  EXPECT_EQ(p.steps.lead_input_ns, 0);
  ASSERT_FALSE(p.steps.lead_ranges.empty());
  EXPECT_EQ(p.steps.lead_ranges[0].name, "models/prep.py(10): build_masks");
  for (const HostRange& h : p.steps.lead_ranges) EXPECT_NE(h.name, "run_loop");
  const Profile q = lead_profile("torch/utils/data/dataloader.py(620): __next__");
  EXPECT_EQ(q.steps.lead_input_ns, 8 * ms);
}

// The long gaps late launches ended, the part the launching thread spent in
// recorded host work (ops, ranges, runtime calls) with no data-loading range
// around it: IdleCharge::host_recorded_ns. Inside a DataLoader's range the
// same ops are input loading, and do not count.
Profile unflatten_gaps(bool in_loader) {
  TraceFactory f;
  for (int i = 0; i < 10; ++i) {
    const TimeNs t0 = 10 * ms + i * 5 * ms;
    f.range("aten::conv2d", t0, t0 + 20 * us, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, names::kConvTensorCore, t0 + 30 * us, t0 + 1 * ms, t0 + 5 * us, 5 * us);
    if (in_loader)
      f.range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t0 + 1 * ms, t0 + 4 * ms, 1,
              RangeKind::annotation, "user_annotation");
    f.range("aten::unflatten_dense_tensors", t0 + 1 * ms, t0 + 4 * ms, 1, RangeKind::annotation, "cpu_op");
    f.range("aten::view", t0 + 1500 * us, t0 + 3500 * us, 1, RangeKind::annotation, "cpu_op");
  }
  return analyze(f.build());
}

TEST(Recognition, TheHostsRecordedWorkInLateLaunchGapsIsCounted) {
  const Profile p = unflatten_gaps(false);
  const IdleCharge* c = nullptr;
  for (const IdleCharge& x : p.idle_charges) c = x.cause == "late-launch-gap" ? &x : c;
  ASSERT_NE(c, nullptr);
  // 9 gaps (the first op ends none): 3 ms in the ops each, and the next
  // aten::conv2d's 20 µs before its launch; the rest unrecorded.
  EXPECT_EQ(c->host_recorded_ns, 27 * ms + 9 * 20 * us);
  EXPECT_GT(c->ns, c->host_recorded_ns);
  const Profile q = unflatten_gaps(true);
  for (const IdleCharge& x : q.idle_charges)
    if (x.cause == "late-launch-gap") {
      EXPECT_EQ(x.host_recorded_ns, 9 * 20 * us) << x.ns;  // aten::conv2d alone
    }
}

// A harness's entry point that only wraps the model's forward is not what
// the host runs: the range below the wrapper chain is named, and a range
// whose time is spread over its children stops the descent.
TEST(Recognition, TheHostsWorkBeforeAStepsFirstOpNamesTheRangeBelowItsWrappers) {
  TraceFactory f;
  f.range("ProfilerStep#1", 1 * ms, 50 * ms, 1, RangeKind::annotation, "user_annotation");
  f.range("harness.py(106): run_action", 1 * ms, 40 * ms, 1, RangeKind::annotation, "python_function");
  f.range("nn.Module: Model_0", 1100 * us, 40 * ms, 1, RangeKind::annotation, "python_function");
  f.range("model.py(20): forward", 1200 * us, 40 * ms, 1, RangeKind::annotation, "python_function");
  // Two children of 4 ms each under the forward's 8.8 ms before the launch.
  f.range("model.py(30): embed", 1300 * us, 5300 * us, 1, RangeKind::annotation, "python_function");
  f.range("model.py(40): mask", 5400 * us, 9400 * us, 1, RangeKind::annotation, "python_function");
  f.cpu_op("aten::linear", 10 * ms, 11 * ms, "", "");
  f.kernel(0, 7, "gemm_kernel", 11 * ms, 40 * ms, 10500 * us);
  const Profile p = analyze(f.build());
  ASSERT_EQ(p.steps.lead_ranges.size(), 1u);
  EXPECT_EQ(p.steps.lead_ranges[0].name, "model.py(20): forward");
  EXPECT_EQ(p.steps.lead_ranges[0].ns, 9800 * us);
}

TEST(Recognition, FrameworkAndDdpFromTheirOps) {
  TraceFactory f;
  f.range("ProfilerStep#1", 0, 20 * ms, 1, RangeKind::annotation, "cpu_op");
  f.cpu_op("aten::conv2d", 1 * ms, 2 * ms, "", "");
  f.kernel(0, 7, names::kConvFp32, 1500 * us, 1800 * us, 1100 * us);
  f.range("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 5 * ms, 7 * ms, 2,
          RangeKind::annotation, "cpu_op");
  f.range("nccl:all_reduce", 5500 * us, 6 * ms, 2, RangeKind::annotation, "cpu_op");
  f.kernel(0, 20, names::kAllReduce, 6 * ms, 8 * ms, 5600 * us, 5'000, 1000, 2);
  const Trace t = f.build();
  const Profile p = analyze(t);
  EXPECT_EQ(p.workload.framework, "pytorch");
  EXPECT_EQ(p.workload.data_parallel, "ddp") << p.workload.data_parallel_evidence;

  TraceFactory tf;
  tf.kernel(0, 7, "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<float>, long>(float, long)", 1 * ms,
            2 * ms);
  const Trace t2 = tf.build();
  EXPECT_EQ(analyze(t2).workload.framework, "tensorflow");
  EXPECT_TRUE(analyze(t2).workload.data_parallel.empty());
}

// The fix is worded for the framework that ran (the trace says which).
TEST(Recognition, FixesSpeakTheFrameworksWords) {
  auto fix = [](const char* extra_kernel, const char* op) {
    TraceFactory f;
    for (int s = 0; s < 10; ++s) {
      const TimeNs t = (1 + s) * ms;
      if (*op) f.cpu_op(op, t - 50 * us, t - 20 * us, "", "");
      f.kernel(0, 7, names::kConvFp32, t, t + 600 * us, t - 30 * us);
      f.kernel(0, 7, extra_kernel, t + 600 * us, t + 650 * us);
    }
    const Trace tr = f.build();
    const Profile p = analyze(tr);
    const Finding* nt = testing::find_finding(p, "no-tensor-cores");
    return nt ? nt->recommendation : std::string("(no finding)") + testing::describe_findings(p);
  };
  const std::string tf =
      fix("void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<float>, long>(float, long)", "");
  EXPECT_NE(tf.find("tf.keras.mixed_precision"), std::string::npos) << tf;
  EXPECT_EQ(tf.find("torch.autocast"), std::string::npos) << tf;
  const std::string torch = fix(names::kRelu, "aten::conv2d");
  EXPECT_NE(torch.find("torch.autocast"), std::string::npos) << torch;
  EXPECT_EQ(torch.find("tf.keras"), std::string::npos) << torch;
}

// [SECTION] Rules that charge a wait once ----------------------------------------------------

TEST(Rules, CudnnFusedBatchNormIsNotSlowNormalization) {
  auto profile = [](const char* bn_kernel) {
    TraceFactory f;
    for (int s = 0; s < 20; ++s) {
      const TimeNs t = (1 + s) * ms;
      f.kernel(0, 7, names::kConvFp32, t, t + 500 * us);
      f.kernel(0, 7, bn_kernel, t + 500 * us, t + 900 * us);
    }
    const Trace tr = f.build();
    return analyze(tr);
  };
  const Profile fused = profile("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(float)");
  EXPECT_EQ(testing::find_finding(fused, "slow-normalization"), nullptr) << testing::describe_findings(fused);
  const Profile naive = profile("bn_forward_naive_stats_kernel(float const*, float*, int, int, int)");
  EXPECT_NE(testing::find_finding(naive, "slow-normalization"), nullptr) << testing::describe_findings(naive);
}

TEST(Rules, PageableCopiesAreChargedToOneFinding) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 10; ++s) {
    f.memcpy(0, 7, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, 8 << 20, t, t + 2 * ms, "cudaMemcpy");
    f.kernel(0, 7, names::kConvTensorCore, t + 2 * ms, t + 6 * ms);
    t += 8 * ms;
  }
  const Trace tr = f.build();
  const Profile p = analyze(tr);
  const Finding* pageable = testing::find_finding(p, "pageable-memcpy");
  ASSERT_NE(pageable, nullptr) << testing::describe_findings(p);
  EXPECT_EQ(testing::find_finding(p, "low-memcpy-overlap"), nullptr) << testing::describe_findings(p);
}

// Op ranges around launches: an op whose slow launch calls end idle gaps is
// launch overhead; the same calls while the GPU is busy cost nothing.
Trace launch_trace(bool gpu_waits) {
  TraceFactory f;
  TimeNs t = 1 * ms;
  for (int s = 0; s < 200; ++s) {
    f.cpu_op("aten::add_", t, t + 60 * us, "", "");
    // A 50 µs launch call for a 5 µs kernel; when the GPU waits, the kernel
    // starts right after the call (the gap before it is the launch's).
    const TimeNs k = gpu_waits ? t + 55 * us : t + 55 * us;
    f.kernel(0, 7, names::kRelu, k, k + 5 * us, t + 2 * us, 50 * us);
    if (!gpu_waits) f.kernel(0, 8, names::kConvFp32, t - 10 * us, t + 80 * us, t - 500 * us, 3 * us, 1000, 3);
    t += 70 * us;
  }
  return f.build();
}

TEST(Rules, LaunchOverheadIsChargedOnlyTheIdleItsLaunchesEnded) {
  const Trace waits = launch_trace(true);
  const Profile p = analyze(waits);
  const OpRow* add = nullptr;
  for (const OpRow& r : p.ops)
    if (r.name == "aten::add_") add = &r;
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->starved_ns, 200 * 65 * us - 65 * us);  // every gap but the first (before it, the GPU had not begun)
  // Every op here is launch-bound: the finding that says so names the op.
  const Finding* f = testing::find_finding(p, "launch-bound");
  ASSERT_NE(f, nullptr) << testing::describe_findings(p);
  EXPECT_NE(f->evidence.find("aten::add_"), std::string::npos) << f->evidence;

  const Trace busy = launch_trace(false);
  const Profile q = analyze(busy);
  for (const OpRow& r : q.ops) {
    if (r.name == "aten::add_") {
      EXPECT_EQ(r.starved_ns, 0);
    }
  }
  EXPECT_EQ(testing::find_finding(q, "op-launch-overhead"), nullptr) << testing::describe_findings(q);
  EXPECT_EQ(testing::find_finding(q, "launch-bound"), nullptr) << testing::describe_findings(q);
}

}  // namespace
}  // namespace gpuscope
