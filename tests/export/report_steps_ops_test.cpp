// How the report says where steps found on the GPU came from (bursts of GPU
// work, the kernel pattern), and the op table's calls: those that launched
// GPU work, and calls inside calls of their own op; in text and through JSON.
#include <gtest/gtest.h>

#include <string>

#include "analysis/analyze.h"
#include "export/report_json.h"
#include "export/report_text.h"
#include "support/test_traces.h"
#include "words/format.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;

// Five bursts of six kernels (no kernel name repeats), the GPU waiting 2 ms
// for the host between them.
Profile bursts_profile() {
  TraceFactory f;
  TimeNs t = 1'000'000;
  for (int s = 0; s < 5; ++s) {
    for (int k = 0; k < 6; ++k) {
      std::string name = "kernel_";
      name += std::to_string(s * 6 + k);
      f.kernel(0, 7, name, t, t + 40'000, t - 5'000, 2'000);
      t += 40'000;
    }
    t += 2'000'000;
  }
  return analyze(f.build());
}

TEST(ReportSteps, StepRangesAroundNoGpuWorkAreNotCalledAbsent) {
  // ProfilerStep ranges on the host, no kernel (another device's trace, or
  // the host's only): no step, and the text does not say "no ProfilerStep".
  TraceFactory f;
  for (TimeNs i = 0; i < 3; ++i)
    f.range("ProfilerStep#" + std::to_string(i), i * 10'000'000, i * 10'000'000 + 9'000'000, 1, RangeKind::annotation,
            "user_annotation");
  const Profile p = analyze(f.build());
  EXPECT_TRUE(p.steps.steps.empty());
  EXPECT_EQ(p.steps.unused_step_ranges, 3u);
  const std::string text = report_text(p);
  EXPECT_NE(text.find("Steps: none found (3 step ranges (ProfilerStep#N or NVTX), none around GPU work"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("no ProfilerStep"), std::string::npos) << text;
  EXPECT_NE(report_json(p).find("\"unused_step_ranges\": 3"), std::string::npos);
  // Steps found: the count stays 0.
  EXPECT_EQ(bursts_profile().steps.unused_step_ranges, 0u);
}

// One process's trace that sends to and receives from others over MPI:
// one rank of a job, said in the Workload line; a job's ranks are not.
TEST(ReportWorkload, OneRankOfAnMpiJobIsSaidToBeOne) {
  TraceFactory f;
  f.kernel(0, 7, "saxpy", 1'000'000, 2'000'000, 900'000, 5'000);
  f.range("MPI_Init", 0, 500'000, 1, RangeKind::annotation, "MPI");
  f.range("MPI_Send", 2'100'000, 2'200'000, 1, RangeKind::annotation, "MPI");
  f.range("MPI_Recv", 2'300'000, 2'400'000, 1, RangeKind::annotation, "MPI");
  const Profile p = analyze(f.build());
  EXPECT_NE(p.workload.mpi_evidence.find("2 MPI calls to other ranks (\"MPI_Send\", \"MPI_Recv\")"), std::string::npos)
      << p.workload.mpi_evidence;
  EXPECT_NE(report_text(p).find(", 1 rank of an MPI job"), std::string::npos);
  EXPECT_TRUE(analyze(TraceFactory().build()).workload.mpi_evidence.empty());
}

TEST(ReportSteps, StepsFromBurstsSayHowTheyWereFound) {
  const Profile p = bursts_profile();
  ASSERT_EQ(p.steps.source, StepSource::bursts);
  const std::string text = report_text(p);
  EXPECT_NE(text.find("4 steps (bursts)"), std::string::npos) << text;
  EXPECT_NE(text.find("Steps: 4 from bursts"), std::string::npos) << text;
  EXPECT_NE(text.find("from the GPU's work: 4 steps on GPU 0, each a burst of GPU work (6 GPU ops"), std::string::npos)
      << text;
  const Profile back = parse_report_json(report_json(p), "saved.json");
  EXPECT_EQ(back.steps.source, StepSource::bursts);
  EXPECT_EQ(back.steps.source_evidence, p.steps.source_evidence);
}

TEST(ReportSteps, NoStepsSaysWhatWasLookedFor) {
  TraceFactory f;
  f.kernel(0, 7, "only_kernel", 1'000'000, 1'100'000);
  const std::string text = report_text(analyze(f.build()));
  EXPECT_NE(text.find("no repeating kernel pattern, no bursts of GPU work between host gaps"), std::string::npos)
      << text;
}

// aten::to ten times, two of them copying; aten::div calling itself once.
Profile ops_profile() {
  TraceFactory f;
  for (int i = 0; i < 10; ++i) {
    const TimeNs at = 1'000'000 + i * 100'000;
    f.range("aten::to", at, at + 50'000, 1, RangeKind::annotation, "cpu_op");
    if (i % 5 == 0)
      f.memcpy(0, 7, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 4096, at + 30'000, at + 40'000,
               "cudaMemcpyAsync", at + 10'000, 5'000);
  }
  f.range("aten::div", 3'000'000, 3'400'000, 1, RangeKind::annotation, "cpu_op");
  f.range("aten::div", 3'100'000, 3'300'000, 1, RangeKind::annotation, "cpu_op");
  f.kernel(0, 7, "div_kernel", 3'250'000, 3'290'000, 3'200'000);
  return analyze(f.build());
}

TEST(ReportOps, CallsWithGpuWorkAndCallsInsideTheirOwnOpAreSaid) {
  const Profile p = ops_profile();
  const std::string text = report_text(p);
  EXPECT_NE(text.find("2/10"), std::string::npos) << text;
  EXPECT_NE(text.find("calls N/M: N of the op's M calls launched GPU work"), std::string::npos) << text;
  EXPECT_NE(text.find("Calls inside a call of the same op are part of it, their GPU time counted once (aten::div 1)"),
            std::string::npos)
      << text;
  const Profile back = parse_report_json(report_json(p), "saved.json");
  ASSERT_EQ(back.op_names.size(), p.op_names.size());
  for (std::size_t i = 0; i < p.op_names.size(); ++i) {
    EXPECT_EQ(back.op_names[i].gpu_calls, p.op_names[i].gpu_calls) << p.op_names[i].name;
    EXPECT_EQ(back.op_names[i].nested_calls, p.op_names[i].nested_calls) << p.op_names[i].name;
  }
}

// GPU ops with no launch that ran before their stream's first launched op
// were queued before the recording: the "(no op)" row says so. Ops with no
// launch later in the stream are launched outside the recording's ops, as
// far as the trace tells: the row keeps its name, or counts the queued ones.
Profile queued_profile(bool queued_first, bool late_too) {
  TraceFactory f;
  if (queued_first)
    for (int i = 0; i < 5; ++i)
      f.kernel(0, 7, "tail_kernel", 1'000'000 + i * 100'000, 1'090'000 + i * 100'000, TraceFactory::kNoLaunch);
  f.range("aten::mul", 1'200'000, 1'300'000, 1, RangeKind::annotation, "cpu_op");
  f.kernel(0, 7, "mul_kernel", 1'600'000, 1'700'000, 1'250'000);
  if (late_too) f.kernel(0, 7, "late_kernel", 2'000'000, 2'050'000, TraceFactory::kNoLaunch);
  return analyze(f.build());
}

TEST(ReportOps, TheNoOpRowSaysWhenItsOpsWereQueuedBeforeTheRecording) {
  const std::string queued = report_text(queued_profile(true, false));
  EXPECT_NE(queued.find("(no op: queued before the recording)"), std::string::npos) << queued;
  const std::string some = report_text(queued_profile(true, true));
  EXPECT_NE(some.find("(no op: 5 of 6 queued before the recording)"), std::string::npos) << some;
  const std::string late = report_text(queued_profile(false, true));
  EXPECT_EQ(late.find("queued before the recording"), std::string::npos) << late;
  EXPECT_NE(late.find("(no op)"), std::string::npos) << late;
}

// No finding, but the GPU is busy and its kernels have no roofline: the
// report says that what they could gain is unknown, and how to measure them.
TEST(ReportRun, NoFindingOnABusyGpuSaysItsKernelsAreUnmeasured) {
  TraceFactory f;
  TimeNs t = 1'000'000;
  for (int i = 0; i < 50; ++i, t += 1'001'000)
    f.kernel(0, 7, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_kernel", t,
             t + 1'000'000, t - 100'000);
  const Profile p = analyze(f.build());
  ASSERT_TRUE(p.findings.empty());
  const std::string text = report_text(p);
  EXPECT_NE(text.find("Findings: none. No rule crossed its threshold"), std::string::npos) << text;
  EXPECT_NE(text.find("But the GPUs are busy 99.9% of their span or more"), std::string::npos) << text;
  EXPECT_NE(text.find("Nsight Compute"), std::string::npos) << text;
}

// A replayed step shorter than the GPU's own busy time in the recorded
// steps, with no kernel made faster: the together line says to read it as a
// bound; a prediction above that busy time, or one that scales kernels, not.
TEST(ReportRun, ATogetherStepBelowTheGpusBusyTimeIsABound) {
  Profile p = bursts_profile();
  ASSERT_FALSE(p.steps.steps.empty());
  for (Step& s : p.steps.steps) s.compute_ns = 60'000'000, s.communication_ns = 6'000'000, s.idle_ns = 10'000'000;
  p.simulation.status = "simulated";
  p.simulation.scope = "all 4 steps";
  p.simulation.replayed_step_ns = 76'000'000;
  p.steps.step_time.median = 76'000'000;  // the replay's step is the step table's
  p.findings[0].fix = "--cuda-graphs";    // a numbered finding prescribes it
  p.simulation.together = {"--cuda-graphs", 55'000'000, 76.0 / 55};
  const char* said = "(median 66.0 ms): the replay overlaps";
  EXPECT_NE(report_text(p).find(said), std::string::npos) << report_text(p);
  p.simulation.together = {"--cuda-graphs", 70'000'000, 76.0 / 70};
  EXPECT_EQ(report_text(p).find("the replay overlaps"), std::string::npos) << report_text(p);
  p.simulation.together = {"--scale gemm=0.5", 55'000'000, 76.0 / 55};
  EXPECT_EQ(report_text(p).find("the replay overlaps"), std::string::npos) << report_text(p);
}

// Numbered savings that remove the same waits: each is its fix's alone, so
// where they add up to more than the fixes replayed together save, or than
// the GPU's idle time (all that fixes removing only idle can save), a line
// says they overlap and gives the combined figure; and a
// saving another finding's fix removes too says it is part of that one's.
Profile overlapping_savings() {
  Profile p = bursts_profile();
  for (Step& s : p.steps.steps) s.idle_ns = 10'000'000;
  const TimeNs idle = 10'000'000 * static_cast<TimeNs>(p.steps.steps.size());
  p.simulation.status = "simulated";
  p.simulation.scope = "all 4 steps";
  p.simulation.replayed_step_ns = 20'000'000;
  p.steps.step_time.median = 20'000'000;
  p.simulation.together = {"--no-input-wait --cuda-graphs", 13'000'000, 20.0 / 13, idle * 7 / 10};
  auto add = [&](const char* id, const char* fix, TimeNs saving) {
    Finding& f = p.findings.emplace_back();
    f.id = id;
    f.title = id;
    f.fix = fix;
    f.saving_ns = saving;
    f.saving_source = *fix ? SavingSource::simulated : SavingSource::rule_of_thumb;
    f.predicted_step_ns = 15'000'000;
    return &f;
  };
  p.findings.clear();
  add("input-bound", "--no-input-wait", idle / 2);
  add("unfused-optimizer", "", idle * 3 / 10)->saving_within = "launch-bound";
  add("launch-bound", "--cuda-graphs", idle / 4)->replay_saving_ns = idle / 2;
  return p;
}

// The report's text with its wrapped lines joined.
std::string unwrapped(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      out += text[i];
      continue;
    }
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    out += ' ';
  }
  return out;
}

TEST(ReportRun, OverlappingSavingsSayTheyOverlapWithTheCombinedFigure) {
  Profile p = overlapping_savings();
  const std::string text = unwrapped(report_text(p));
  // 20 + 12 + 10 ms added up, against 40 ms idle in 4 steps and 28 ms replayed together.
  ASSERT_EQ(p.steps.steps.size(), 4U);
  EXPECT_NE(text.find("The savings overlap: added up, the numbered findings' savings make 42.0 ms, more than the "
                      "40.0 ms the GPU idles, all that fixes"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("replayed together saves 28.0 ms over all 4 steps"), std::string::npos) << text;
  EXPECT_NE(text.find("save about 28.0 ms, not the sum"), std::string::npos) << text;
  // The optimizer's saving inside launch-bound's (finding 3), not beside it.
  const std::size_t opt = text.find("unfused-optimizer · ");
  ASSERT_NE(opt, std::string::npos) << text;
  EXPECT_NE(text.find("part of what finding 3's fix saves (its replay, --cuda-graphs, saves 20.0 ms), not in "
                      "addition to it",
                      opt),
            std::string::npos)
      << text;
  // Savings that fit both bounds: no such line.
  p.findings.resize(1);
  p.findings.push_back(overlapping_savings().findings[2]);
  p.findings[1].replay_saving_ns = 0;
  p.findings[1].saving_ns = 8'000'000;
  EXPECT_EQ(report_text(p).find("The savings overlap"), std::string::npos) << report_text(p);
}

// The bound for fixes that only remove idle time is the GPU's idle in its
// span, gaps between the steps included (gpu-idle-gaps counts them), where
// that is more than the steps' own idle.
TEST(ReportRun, TheIdleBoundCountsTheGapsBetweenSteps) {
  Profile p = overlapping_savings();
  p.devices.at(0).idle_ns = 80'000'000;  // 40 ms in the steps, 40 ms between them
  const std::string text = unwrapped(report_text(p));
  EXPECT_EQ(text.find("the GPU idles, all that fixes"), std::string::npos) << text;
  // Still more than the replay of the fixes together saves.
  EXPECT_NE(text.find("The savings overlap: added up, the numbered findings' savings make 42.0 ms, more than their "
                      "fixes save together"),
            std::string::npos)
      << text;
}

// Steps whose ranges share one name are told apart by their index, and the
// time of their GPUs' spans outside every step is said.
TEST(ReportSteps, StepsOfOneNameAreNumberedAndTheirCoverageSaid) {
  Profile p = bursts_profile();
  ASSERT_EQ(p.steps.steps.size(), 4U);
  const DeviceSummary& d = p.devices.at(0);
  TimeNs in_steps = 0;
  for (Step& s : p.steps.steps) {  // each step its burst and a quarter of the gap after it
    s.name = "step";
    s.range.end = s.range.start + 740'000;
    in_steps += s.range.duration();
  }
  const std::string text = unwrapped(report_text(p));
  EXPECT_NE(text.find("step 0 "), std::string::npos) << text;
  EXPECT_NE(text.find("step 3 "), std::string::npos) << text;
  // The steps leave more than a tenth of the span outside them.
  ASSERT_LT(double(in_steps), 0.9 * double(d.window.duration()));
  EXPECT_NE(text.find("the steps cover " + format::percent1(double(in_steps) / double(d.window.duration())) +
                      " of their GPU's span: " + format::duration(d.window.duration() - in_steps) +
                      " lies before, between or after them, in no step's figures"),
            std::string::npos)
      << text;
  // Steps that cover the span: no such line.
  p.steps.steps.back().range.end = d.window.end;
  p.steps.steps.front().range.start = d.window.start;
  for (std::size_t i = 1; i < p.steps.steps.size(); ++i) p.steps.steps[i].range.start = p.steps.steps[i - 1].range.end;
  EXPECT_EQ(report_text(p).find("the steps cover"), std::string::npos) << report_text(p);
}

// The together line adds up advice: where no numbered finding prescribes
// any of its fixes (a one-time capture's launch waits, minor), it is not
// printed; a fix that shortens the step only after the others is added to
// it, with what it then predicts.
TEST(ReportRun, TheTogetherLineAddsOnlyPrescribedFixesAndNamesTheOnesForLater) {
  Profile p = bursts_profile();
  ASSERT_FALSE(p.findings.empty());
  p.simulation.status = "simulated";
  p.simulation.scope = "all 4 steps";
  p.simulation.replayed_step_ns = 76'000'000;
  p.steps.step_time.median = 76'000'000;
  p.simulation.together = {"--cuda-graphs", 60'000'000, 76.0 / 60};
  EXPECT_EQ(report_text(p).find("all of them together?"), std::string::npos) << report_text(p);
  p.findings[0].fix = "--cuda-graphs";
  Finding later;
  later.id = "no-tensor-cores";
  later.fix = "--scale gemm=0.5";
  later.after_fixes = "--cuda-graphs";
  later.after_from_ns = 60'000'000;
  later.after_to_ns = 41'000'000;
  p.findings.push_back(later);
  const std::string text = unwrapped(report_text(p));
  EXPECT_NE(text.find("all of them together?"), std::string::npos) << text;
  EXPECT_NE(text.find("adding --scale gemm=0.5 (finding 2), which shortens the step only after these, predicts "
                      "41.0 ms"),
            std::string::npos)
      << text;
}

// Steps that differ: the median step of the replay with all the fixes can
// be another step, whose gain is not the run's; where every step was
// replayed, the saving over all of them is said beside it.
TEST(ReportRun, TheTogetherLineSaysTheGainOverAllStepsWhereTheMedianMisleads) {
  Profile p = bursts_profile();
  ASSERT_EQ(p.steps.steps.size(), 4U);
  p.simulation.status = "simulated";
  p.simulation.scope = "all 4 steps";
  p.simulation.steps = 4;
  p.simulation.replayed_step_ns = 76'000'000;
  p.steps.step_time.median = 76'000'000;
  p.steps.total_ns = 400'000'000;
  // The median step 76 -> 70 ms (1.09x), but 12 ms saved of 400 ms (1.03x).
  p.findings[0].fix = "--scale gemm=0.5";  // a numbered finding prescribes it
  p.simulation.together = {"--scale gemm=0.5", 70'000'000, 76.0 / 70, 12'000'000};
  const std::string text = unwrapped(report_text(p));
  EXPECT_NE(text.find("over all 4 steps it saves 12.0 ms of 400.0 ms (1.03x), as the steps differ"), std::string::npos)
      << text;
  // A saving over the steps that gives the median's speed-up: not said.
  p.simulation.together.saving_ns = 400'000'000 - static_cast<TimeNs>(400'000'000 * 70.0 / 76);
  EXPECT_EQ(unwrapped(report_text(p)).find("over all 4 steps"), std::string::npos) << unwrapped(report_text(p));
}

TEST(ReportRun, ATraceWithoutKernelsSaysThereIsNothingToDiagnose) {
  TraceFactory f;
  for (TimeNs i = 0; i < 4; ++i)
    f.memcpy(0, 7, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, 1 << 20, 1'000'000 + i * 1'000'000,
             1'200'000 + i * 1'000'000, "cudaMemcpy");
  const Profile p = analyze(f.build());
  const std::string text = report_text(p);
  EXPECT_NE(text.find("Run: no kernels: nothing on the GPU to diagnose (4 copies"), std::string::npos) << text;
  EXPECT_NE(text.find("Findings: none: no kernels, nothing on the GPU to diagnose."), std::string::npos) << text;
  EXPECT_EQ(text.find("No rule crossed its threshold"), std::string::npos) << text;
  const Profile back = parse_report_json(report_json(p), "saved.json");
  EXPECT_EQ(back.workload.run, "no-kernels");
  EXPECT_EQ(back.workload.run_evidence, p.workload.run_evidence);
}

TEST(ReportRun, ATraceWhoseGpuSideWasNotRecordedSaysSo) {
  // Host ops that launch GPU work, and no GPU op: not "nothing on the GPU".
  TraceFactory f;
  f.range("nccl:all_reduce", 1'000'000, 2'000'000, 1, RangeKind::annotation, "user_annotation");
  f.range("aten::record_stream", 3'000'000, 3'010'000, 1, RangeKind::annotation, "cpu_op");
  const Profile p = analyze(f.build());
  const std::string text = report_text(p);
  for (const char* line : {" · 0 GPUs recorded · ", "Run: the GPU side was not recorded",
                           "Findings: none: the GPU side was not recorded, so nothing on the GPU can be diagnosed",
                           "GPUs: none recorded, though the program used GPUs",
                           "framework ops of 2 (by CPU time with the ops inside: the trace has no GPU op)"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  EXPECT_EQ(text.find("nothing on the GPU to diagnose"), std::string::npos) << text;
  const Profile back = parse_report_json(report_json(p), "saved.json");
  EXPECT_EQ(back.workload.run, "gpu-unrecorded");
  EXPECT_EQ(back.workload.run_evidence, p.workload.run_evidence);
}

TEST(ReportRun, TheRankLineSaysWhichRankOfHowMany) {
  auto line = [](std::int32_t rank, std::int32_t world, std::string_view backend) {
    TraceFactory f;
    f.kernel(0, 7, "k", 0, 1'000'000);
    f.meta().rank = rank, f.meta().world_size = world;
    if (!backend.empty()) f.meta().set_property("chrome.distributed.backend", backend);
    const Profile p = analyze(f.build());
    const Profile back = parse_report_json(report_json(p), "saved.json");
    EXPECT_EQ(back.workload.rank, p.workload.rank);
    EXPECT_EQ(back.workload.rank_evidence, p.workload.rank_evidence);
    return workload_line(p.workload, false);
  };
  EXPECT_EQ(line(-1, 0, ""), "unknown, eager, 1 rank");
  EXPECT_EQ(line(0, 1, "nccl"), "unknown, eager, 1 rank");
  EXPECT_EQ(line(0, 0, ""), "unknown, eager, rank 0 of an unknown number");
  EXPECT_EQ(line(-1, 0, "nccl"), "unknown, eager, 1 rank of an unknown number");
  EXPECT_EQ(line(34, 300, "gloo"), "unknown, eager, rank 34 of 300");
  EXPECT_EQ(line(-1, 8, "nccl"), "unknown, eager, 8 ranks");
}

TEST(ReportRun, AOneShotRunKeepsItsWindowThroughJson) {
  TraceFactory f;
  f.api("cuInit", 0, 80'000'000);
  f.kernel(0, 7, "k", 100'000'000, 100'500'000);
  f.kernel(0, 7, "k", 101'000'000, 101'500'000);
  f.api("cuModuleUnload", 102'000'000, 103'000'000);
  const Profile p = analyze(f.build());
  ASSERT_EQ(p.workload.run, "one-shot") << p.workload.run_evidence;
  EXPECT_NE(report_text(p).find("Run: one-shot run: "), std::string::npos);
  const Profile back = parse_report_json(report_json(p), "saved.json");
  EXPECT_EQ(back.workload.kernel_window, p.workload.kernel_window);
  EXPECT_EQ(back.workload.setup_ns, p.workload.setup_ns);
  EXPECT_EQ(back.workload.teardown_ns, p.workload.teardown_ns);
}

}  // namespace
}  // namespace gpuscope
