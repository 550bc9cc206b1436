// The replay on every real trace of the tests' data and on synthetic jobs
// (per-step error within 2% median and 5% worst, span within 2%), the steps
// it measures against analysis's, and the predictions the validation table
// of docs/whatif.md quotes: ResNet-50 with 0 DataLoader workers predicting 4
// workers, and synthetic jobs with one switch flipped.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/graph/whatif.h"
#include "import/open_trace.h"
#include "import/synthetic.h"
#include "support/real_traces.h"

namespace gpuscope::graph {
namespace {

using testing::real_trace;

// Every real trace: the Chrome/Kineto JSON ones and the Nsight Systems exports.
std::vector<std::string> trace_files() {
  std::vector<std::string> out = testing::real_trace_files();
  for (const std::string& f : testing::real_nsys_files()) out.push_back(f);
  return out;
}

double relative(TimeNs a, TimeNs b) {
  return b ? std::fabs(static_cast<double>(a - b)) / static_cast<double>(b) : (a == 0 ? 0.0 : 1.0);
}

// Replays the trace and checks the targets; returns the graph for more checks.
void check_replay(const Trace& t, const std::string& what) {
  const Graph g = build_graph(t);
  ReplayInfo info;
  const Timeline tl = replay(g, &info);
  const std::vector<TimeRange> measured = measured_steps(g), replayed = step_ranges(g, tl);
  const TimelineError e = compare(replayed, measured, span(tl), measured_span(g));
  EXPECT_LE(e.step_median, 0.02) << what;
  EXPECT_LE(e.step_worst, 0.05) << what;
  EXPECT_LE(e.span, 0.02) << what;
  EXPECT_EQ(info.cycles_broken, 0u) << what;
  // The steps are analysis's steps.
  const Profile p = analyze(t);
  ASSERT_EQ(measured.size(), p.steps.steps.size()) << what;
  for (std::size_t i = 0; i < measured.size(); ++i)
    EXPECT_EQ(measured[i].duration(), p.steps.steps[i].range.duration()) << what << " step " << i;
  // Each step's critical path covers the step.
  for (std::size_t i = 0; i < replayed.size(); ++i) {
    TimeNs sum = 0;
    for (const PathSegment& s : step_path(g, tl, replayed, i)) sum += s.end - s.start;
    EXPECT_LE(sum, replayed[i].duration()) << what << " step " << i;
    EXPECT_GE(sum, replayed[i].duration() * 99 / 100) << what << " step " << i;
  }
}

class EveryRealTrace : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryRealTrace, ReplayReproducesIt) {
  const Trace t = open_trace(real_trace(GetParam()));
  check_replay(t, GetParam());
}

INSTANTIATE_TEST_SUITE_P(TestData, EveryRealTrace, ::testing::ValuesIn(trace_files()), testing::TraceFileName());

// Only the DataLoader's workers changed between these two runs: no input wait
// in the first must predict the second's median step within 10%.
TEST(RealPair, NoInputWaitOnZeroWorkersPredictsFourWorkers) {
  const Trace before = open_trace(real_trace("kineto-resnet50-v100-workers0.json.gz"));
  const Trace after = open_trace(real_trace("kineto-resnet50-v100-workers4.json.gz"));
  const std::vector<Change> changes{make_change(ChangeKind::no_input_wait)};
  const WhatIf w = what_if(before, changes);
  const TimeNs measured_after = analyze(after).steps.step_time.median;
  EXPECT_LE(relative(w.predicted.median, measured_after), 0.10)
      << "predicted " << w.predicted.median << " ns, measured " << measured_after << " ns";
  EXPECT_GT(w.speedup, 1.3);
}

// Overlapping the all-reduce of an HTA rank makes chains that wait for each
// other: the replay breaks those cycles (and counts them) instead of
// spinning, and says the changed timeline (607 -> 635 ms, slower) is no
// prediction. The other rank's changed graph has no cycle.
TEST(RealTrace, ReplayOfAChangeWithCyclesEndsAndIsNoPrediction) {
  const std::vector<Change> changes{make_change(ChangeKind::overlap_allreduce)};
  const Trace t = open_trace(real_trace("hta-sampled-rank0.json.gz"));
  const WhatIf w = what_if(t, changes);
  EXPECT_GT(w.predicted.median, 0);
  EXPECT_EQ(w.predicted.steps, w.replayed.steps);
  EXPECT_LE(w.replay_error.step_median, 0.02);
  EXPECT_EQ(w.graph.cycles_broken, 0u);
  EXPECT_GT(w.predicted_cycles, 0u);
  EXPECT_FALSE(w.simulated);
  EXPECT_NE(w.not_simulated.find("dependency cycle"), std::string::npos) << w.not_simulated;
  const Trace t1 = open_trace(real_trace("hta-sampled-rank1.json.gz"));
  const WhatIf w1 = what_if(t1, changes);
  EXPECT_TRUE(w1.simulated) << w1.not_simulated;
  EXPECT_EQ(w1.predicted_cycles, 0u);
}

// Synthetic jobs: the replay reproduces each.
struct Job {
  const char* name;
  SyntheticOptions options;
};

SyntheticOptions with(std::uint64_t kernels, void (*edit)(SyntheticOptions&)) {
  SyntheticOptions o;
  o.kernels = kernels;
  edit(o);
  return o;
}

std::vector<Job> jobs() {
  SyntheticOptions report = SyntheticOptions::report_pathologies();
  report.kernels = 20000;
  return {
      {"clean", with(20000, [](SyntheticOptions&) {})},
      {"report", report},
      {"one_gpu", with(5000, [](SyntheticOptions& o) { o.gpus = 1; })},
      {"straggler8",
       with(40000, [](SyntheticOptions& o) { o.gpus = 8, o.straggler_gpu = 3, o.straggler_slowdown = 1.3; })},
      {"no_sync", with(20000, [](SyntheticOptions& o) { o.sync_every_step = false; })},
      {"one_stream", with(20000, [](SyntheticOptions& o) { o.compute_streams = 1; })},
      {"no_jitter", with(20000, [](SyntheticOptions& o) { o.jitter = 0; })},
      {"input_wait", with(20000, [](SyntheticOptions& o) { o.input_wait_ns = 300'000, o.prefetch_input = false; })},
      // One host thread per GPU, all back from Python at about the same time.
      {"report_job", with(45840, [](SyntheticOptions& o) { o = SyntheticOptions::report_job(), o.kernels = 45840; })},
      {"tuned_job", with(7800, [](SyntheticOptions& o) { o = SyntheticOptions::tuned_job(), o.kernels = 7800; })},
  };
}

class SyntheticJob : public ::testing::TestWithParam<Job> {};

TEST_P(SyntheticJob, ReplayReproducesIt) {
  const Trace t = make_synthetic_trace(GetParam().options);
  check_replay(t, GetParam().name);
}

INSTANTIATE_TEST_SUITE_P(Synth, SyntheticJob, ::testing::ValuesIn(jobs()),
                         [](const ::testing::TestParamInfo<Job>& i) { return std::string(i.param.name); });

// One switch flipped: the prediction from "before" lands within 3% of "after".
struct Pair {
  const char* name;
  void (*before)(SyntheticOptions&);
  std::vector<Change> (*changes)();
};

std::vector<Pair> pairs() {
  return {
      {"padding_off", [](SyntheticOptions& o) { o.padding_share = 0.2; },
       [] { return std::vector<Change>{parse_remove("padding")}; }},
      {"broadcast_off", [](SyntheticOptions& o) { o.broadcast_share = 0.2; },
       [] { return std::vector<Change>{parse_remove("broadcast")}; }},
      {"overlapped_communication", [](SyntheticOptions& o) { o.overlap_communication = false; },
       [] { return std::vector<Change>{make_change(ChangeKind::overlap_allreduce)}; }},
      {"overlapped_weight_update", [](SyntheticOptions& o) { o.overlap_weight_update = false; },
       [] { return std::vector<Change>{make_change(ChangeKind::overlap_update)}; }},
      {"prefetched_input", [](SyntheticOptions& o) { o.prefetch_input = false; },
       [] { return std::vector<Change>{make_change(ChangeKind::no_input_wait)}; }},
      {"no_straggler", [](SyntheticOptions& o) { o.straggler_gpu = 1, o.straggler_slowdown = 1.3; },
       [] { return std::vector<Change>{make_change(ChangeKind::balance_ranks)}; }},
      {"fused_batch_norm", [](SyntheticOptions& o) { o.normalization_slowdown = 2; },
       [] { return std::vector<Change>{parse_scale("normalization=0.5")}; }},
  };
}

class SyntheticPair : public ::testing::TestWithParam<Pair> {};

TEST_P(SyntheticPair, PredictionLandsOnTheFlippedRun) {
  SyntheticOptions before_options;
  before_options.kernels = 20000;
  GetParam().before(before_options);
  SyntheticOptions after_options;
  after_options.kernels = 20000;
  const Trace before = make_synthetic_trace(before_options), after = make_synthetic_trace(after_options);
  const std::vector<Change> changes = GetParam().changes();
  const WhatIf w = what_if(before, changes);
  const TimeNs measured_after = analyze(after).steps.step_time.median;
  EXPECT_LE(relative(w.predicted.median, measured_after), 0.03)
      << "predicted " << w.predicted.median << " ns, measured after " << measured_after << " ns, before "
      << w.measured.median << " ns";
  EXPECT_LT(w.predicted.median, w.measured.median);  // the flipped switch is a fix
  EXPECT_LE(w.replay_error.step_median, 0.02);
}

INSTANTIATE_TEST_SUITE_P(Synth, SyntheticPair, ::testing::ValuesIn(pairs()),
                         [](const ::testing::TestParamInfo<Pair>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace gpuscope::graph
