// The findings on every real trace of tests/data/traces, reviewed by hand and
// kept: each trace's list of finding ids (with repeats) is written down here,
// and docs/findings.md ("On the real traces") says for each trace what the
// report concludes and why that is right. A rule change that adds, drops or
// duplicates a finding on a real trace fails here, naming the trace and the
// findings; the list is then reviewed again, not copied.
//
// Also, on every real trace, what no report may say: a saving larger than the
// run, a negative share, an empty "Top:" list, an empty title or fix.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "import/open_trace.h"
#include "support/findings.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

// Finding ids per trace, sorted (a rule may fire more than once): the
// numbered ones (material: ≥ 1 % of the run) and the minor observations.
struct Reviewed {
  std::vector<std::string> numbered, minor;
};

const std::map<std::string, Reviewed>& reviewed() {
  static const std::map<std::string, Reviewed> m = {
      // gpu-idle-gaps minor: 99.7 % of its gaps' time is warm-up, and what is left (the late launches
      // of 38.6 ms, the harness's re-allocation after its own cache flush aside) is 0.3 % of the run.
      {"hta-alexnet.json.gz", {{}, {"gpu-idle-gaps", "pageable-memcpy", "sync-memcpy"}}},
      {"hta-event-sync-multistream.json.gz", {{"gpu-idle-gaps", "no-tensor-cores"}, {}}},
      // small-grid minor: its reduce kernel runs on 1 block of the 108 SMs, but the small grids' 12 µs
      // are 0.4 % of the 3.2 ms step, which the host holds: no fix of them can save 1 % of it.
      {"hta-event-sync.json.gz",
       {{"launch-bound", "step-host-time"}, {"pageable-memcpy", "small-grid", "sync-memcpy"}}},
      {"hta-ns-resolution-v100.json.gz", {{"no-tensor-cores"}, {}}},
      {"hta-sampled-rank0.json.gz", {{"exposed-communication", "gpu-idle-gaps", "low-utilization"}, {"sync-memcpy"}}},
      {"hta-sampled-rank1.json.gz", {{"exposed-communication", "gpu-idle-gaps", "low-utilization"}, {}}},
      {"hta-triton.json.gz",
       {{}, {"small-grid", "step-host-time"}}},  // its GPU work spans 1.8 µs: no finding is numbered
      // unfused-optimizer: minor before the replay (the GPU seldom waits for its launches); the report,
      // which replays the steps, numbers it: its host time lies on the critical path (tests/cli).
      // pageable-memcpy: minor, its saving (the staging's GPU idle) 0.1 % of the GPU's span, though the
      // copies take 1.2 % (2.4 % with 4 workers): an info finding is numbered by its saving where it has one.
      {"kineto-resnet50-v100-workers0.json.gz",
       {{"input-bound", "launch-bound", "no-tensor-cores"}, {"pageable-memcpy", "sync-memcpy", "unfused-optimizer"}}},
      {"kineto-resnet50-v100-workers4.json.gz",
       {{"launch-bound", "no-tensor-cores"}, {"pageable-memcpy", "sync-memcpy", "unfused-optimizer"}}},
      {"tracelens-bert-small-h100.json.gz",
       // small-grid: flash attention on 16 blocks of the 132 SMs (an inference batch that small).
       {{"launch-bound", "op-below-roofline", "small-grid"},
        {"larger-batch-fits", "op-below-roofline", "op-below-roofline", "op-below-roofline", "op-below-roofline",
         "sync-memcpy"}}},
      // pageable-memcpy: numbered, its saving (the staging's GPU idle, 1.7 ms) 1.1 % of the GPU's span.
      // pageable-memcpy minor: its 1.7 ms saving is 0.4 % of the 382.5 ms step, most of which the host
      // spends before the GPU's first op (1 % of the 160 ms GPU span, the step's part on the GPU).
      {"tracelens-timesformer-h100.json.gz",
       {{"eager-attention", "step-host-time"}, {"larger-batch-fits", "pageable-memcpy", "sync-memcpy"}}},
      // small-grid: saxpy runs on 2 blocks of the 108 SMs. sync-memcpy minor: its read-backs of
      // 250 MB are followed by ~196 ms of host work on them, charged to that work, not the copies.
      {"nsys/nsys2022-saxpy-mpi-openacc.sqlite", {{"gpu-idle-gaps", "pageable-memcpy", "small-grid"}, {"sync-memcpy"}}},
      {"nsys/nsys2024-cloverleaf-a100-mpi.sqlite", {{"host-sync", "pageable-memcpy"}, {"sync-memcpy"}}},
      {"review/hta-cupti-range-profiler.json.gz", {{}, {}}},  // no kernel timeline: nothing to diagnose
      {"review/hta-dlrm-compiled-a100.json.gz",
       // small-grid: elementwise kernels on 8 blocks of the 108 SMs, 5.4 % of kernel time, 68 % of it
       // launched by ops on scalars and tiny tensors (tiny-tensors: per-step bookkeeping).
       {{"exposed-communication", "gpu-idle-gaps", "low-memcpy-overlap", "low-utilization", "serialized-weight-update",
         "small-grid"},
        {"sync-memcpy"}}},
      {"review/tracelens-qwen-h100.json.gz",
       {{"layout-transpose", "memory-bound-aux", "op-below-roofline"}, {"larger-batch-fits"}}},
      // gpu-idle-gaps minor: its 9.1 ms of gaps lie in each GEMM shape's first aten::addmm (1.5-2.5 ms,
      // every later call of the shape under 0.1 ms): warm-up, which no fix of the program saves.
      {"review/tracelens-vllm-gptoss-b200.json.gz",
       {{"launch-bound"}, {"gpu-idle-gaps", "op-below-roofline", "op-below-roofline", "op-below-roofline"}}},
      {"review/tracelens-mi210-gpu-only.json.gz", {{"launch-bound", "layout-transpose", "slow-normalization"}, {}}},
  };
  return m;
}

std::vector<std::string> all_traces() {
  std::vector<std::string> v = testing::real_trace_files();
  for (const std::string& f : testing::real_nsys_files()) v.push_back(f);
  for (const std::string& f : testing::real_review_files()) v.push_back(f);
  return v;
}

const Profile& profile_of(const std::string& file) {
  static std::map<std::string, Profile> cache;
  auto it = cache.find(file);
  if (it == cache.end()) it = cache.emplace(file, analyze(open_trace(testing::real_trace(file)))).first;
  return it->second;
}

class ReviewedFindings : public ::testing::TestWithParam<std::string> {};

TEST_P(ReviewedFindings, AreTheOnesWrittenDown) {
  const auto it = reviewed().find(GetParam());
  ASSERT_NE(it, reviewed().end()) << GetParam() << " has no reviewed list of findings";
  const Profile& p = profile_of(GetParam());
  auto ids = [](const std::vector<Finding>& list) {
    std::vector<std::string> v;
    for (const Finding& f : list) v.push_back(f.id);
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(ids(p.findings), it->second.numbered) << GetParam() << ":" << testing::describe_findings(p);
  EXPECT_EQ(ids(p.minor_findings), it->second.minor) << GetParam() << " (minor)";
}

TEST_P(ReviewedFindings, SayNothingImplausible) {
  const Profile& p = profile_of(GetParam());
  const TimeNs run = p.window.duration();
  for (const Finding& f : p.findings) {
    SCOPED_TRACE(f.id + ": " + f.title);
    EXPECT_FALSE(f.title.empty());
    EXPECT_FALSE(f.recommendation.empty());
    EXPECT_GE(f.saving_ns, 0);
    EXPECT_LE(f.saving_ns, run) << "a saving longer than the run";
    for (const std::string* text : {&f.title, &f.evidence, &f.recommendation}) {
      EXPECT_EQ(text->find("Top: ."), std::string::npos) << *text;
      EXPECT_EQ(text->find("Top kernels: ."), std::string::npos) << *text;
      EXPECT_EQ(text->find("-0."), std::string::npos) << *text;
      EXPECT_EQ(text->find("\xe2\x88\x92"), std::string::npos) << *text;  // U+2212 minus sign
      EXPECT_EQ(text->find(" nan"), std::string::npos) << *text;
      EXPECT_EQ(text->find("nan%"), std::string::npos) << *text;
    }
  }
}

// Each wait charged once (docs/findings.md, "Where the idle time went"): the
// parts in the GPUs' spans add up to their idle time, each names a finding
// the report has (numbered or minor) or none, and each idle finding that
// fired charges some part.
TEST_P(ReviewedFindings, ChargeEachPartOfTheIdleTimeOnce) {
  const Profile& p = profile_of(GetParam());
  TimeNs idle = 0, parts = 0;
  for (const DeviceSummary& d : p.devices) idle += d.idle_ns;
  std::set<std::string> present, charging;
  for (const std::vector<Finding>* list : {&p.findings, &p.minor_findings})
    for (const Finding& f : *list) present.insert(f.id);
  for (const IdleCharge& c : p.idle_charges) {
    SCOPED_TRACE(c.cause);
    EXPECT_GT(c.ns, 0);
    if (c.cause != "input-before-start") parts += c.ns;
    if (!c.finding.empty()) {
      EXPECT_TRUE(present.count(c.finding)) << c.finding << " charges idle time it does not report";
    } else {
      EXPECT_FALSE(c.note.empty()) << "a part no finding charges says why";
    }
    charging.insert(c.finding);
  }
  if (idle > 0) {
    EXPECT_EQ(parts, idle);
  }
  for (const char* id : {"input-bound", "host-sync", "launch-bound", "gpu-idle-gaps", "low-utilization"}) {
    if (present.count(id)) {
      EXPECT_TRUE(charging.count(id)) << id << " fired but charges no idle time";
    }
  }
}

// The bert trace's small products: their launches show why they are far
// below the roofline (docs/findings.md, "On the real traces").
TEST(ReviewedFindingsBert, SmallProductsAreSaidToLeaveSmsIdle) {
  const Profile& p = profile_of("tracelens-bert-small-h100.json.gz");
  bool attention = false, gemm = false;
  for (const std::vector<Finding>* list : {&p.findings, &p.minor_findings})
    for (const Finding& f : *list) {
      if (f.id != "op-below-roofline") continue;
      if (f.title.find("flash_attention") != std::string::npos) {
        attention = true;
        EXPECT_NE(f.evidence.find("launches 16 blocks on a GPU of 132 SMs"), std::string::npos) << f.evidence;
        EXPECT_EQ(f.recommendation.rfind("Give each launch more work", 0), 0u) << f.recommendation;
      }
      if (f.evidence.find("launches 80 blocks on a GPU of 132 SMs") != std::string::npos) gemm = true;
    }
  EXPECT_TRUE(attention);
  EXPECT_TRUE(gemm);
}

// BERT recorded with PyTorch's Python tracer (with_stack=True: 1,385 Python
// function ranges in a 4.4 ms step): the host time launch-bound charges is
// the program's plus the tracer's, so it is said to be an upper bound. The
// ResNet-50 traces, recorded without it, are not told so.
TEST(ReviewedFindingsBert, HostTimeUnderThePythonTracerIsAnUpperBound) {
  const Profile& p = profile_of("tracelens-bert-small-h100.json.gz");
  EXPECT_EQ(p.workload.python_ranges, 1385u);
  const auto launch =
      std::find_if(p.findings.begin(), p.findings.end(), [](const Finding& f) { return f.id == "launch-bound"; });
  ASSERT_NE(launch, p.findings.end());
  EXPECT_NE(launch->evidence.find("recorded with PyTorch's Python tracer on (1,385 Python function ranges"),
            std::string::npos)
      << launch->evidence;
  const Profile& q = profile_of("kineto-resnet50-v100-workers4.json.gz");
  EXPECT_EQ(q.workload.python_ranges, 0u);
  for (const Finding& f : q.findings) EXPECT_EQ(f.evidence.find("Python tracer"), std::string::npos) << f.id;
}

// A larger batch under the Python tracer: the tracer slows the host by an
// amount the trace does not show, so the launch wait alone is no ground for
// it; BERT's stands because 66 % of its GPU ops run shorter than their launch
// call, a runtime call the tracer does not slow (the xDiT Flux trace, 6.0 %
// of its time waiting over 5 % and 7.8 % of ops that short, is unknown).
TEST(ReviewedFindingsBert, ALargerBatchUnderThePythonTracerRestsOnLaunchesOutpacingTheGpu) {
  const Profile& p = profile_of("tracelens-bert-small-h100.json.gz");
  EXPECT_NEAR(p.launches.short_kernel_share, 0.66, 0.005);
  const HelpAnswer* a = testing::find_help(p, "larger-batch");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::yes) << a->reason;
  EXPECT_NE(a->reason.find("most GPU ops run shorter than their launch call, which it does not slow"),
            std::string::npos)
      << a->reason;
}

// The ops the GPU waited for, counted by their calls that launched GPU work:
// of the vLLM trace's 236 aten::copy_ calls, 234 did.
TEST(ReviewedFindingsVllm, TheOpsWaitedForCountTheirCallsThatLaunched) {
  const Finding* lb = testing::find_finding(profile_of("review/tracelens-vllm-gptoss-b200.json.gz"), "launch-bound");
  ASSERT_NE(lb, nullptr);
  EXPECT_NE(lb->evidence.find("aten::copy_ 9.6 ms (234 of its 236 calls launched GPU work)"), std::string::npos)
      << lb->evidence;
  EXPECT_NE(lb->evidence.find("vllm::moe_forward 16.3 ms (36 calls)"), std::string::npos) << lb->evidence;
}

// ResNet-50's pageable input copies take 1.2 % of the run (2.4 % with 4
// workers), but what pinning is measured to save, the GPU's idle while the
// driver staged them, is 0.1 %: an info finding with a saving is numbered by
// that saving, not by its own time, and stays a minor observation, as
// sync-memcpy's blocking copies do.
TEST(ReviewedFindingsResNet, PageableCopiesAreNumberedByTheirSavingNotTheirTime) {
  for (const char* file : {"kineto-resnet50-v100-workers0.json.gz", "kineto-resnet50-v100-workers4.json.gz"}) {
    SCOPED_TRACE(file);
    const Profile& p = profile_of(file);
    EXPECT_EQ(testing::find_finding(p, "pageable-memcpy"), nullptr);
    const auto f = std::find_if(p.minor_findings.begin(), p.minor_findings.end(),
                                [](const Finding& m) { return m.id == "pageable-memcpy"; });
    ASSERT_NE(f, p.minor_findings.end());
    EXPECT_EQ(f->severity, Severity::info);
    EXPECT_GE(f->share, kMaterialShare);
    EXPECT_GT(f->saving_ns, 0);
    EXPECT_LT(double(f->saving_ns), kMaterialShare * double(p.devices.front().span_ns));
  }
}

// A host slowed by something the trace does not name: the 2021 ResNet-50
// trace's ops that only make a view take 16.9 µs each (about 1 µs on every
// other real trace at hand, 0.4 µs on BERT's H100 host), so launch-bound's
// host time is said to be an upper bound there, and not on BERT for that.
TEST(ReviewedFindingsResNet, ViewsThatTakeTenMicrosecondsMeanASlowedHost) {
  const Profile& p = profile_of("kineto-resnet50-v100-workers0.json.gz");
  const Finding* launch = testing::find_finding(p, "launch-bound");
  ASSERT_NE(launch, nullptr);
  EXPECT_NE(launch->evidence.find("took 16.9 µs of host time each over 1,278 calls"), std::string::npos)
      << launch->evidence;
  const Profile& q = profile_of("tracelens-bert-small-h100.json.gz");
  for (const Finding& f : q.findings) EXPECT_EQ(f.evidence.find("only make a view"), std::string::npos) << f.id;
}

// ResNet-50's channel counts are multiples of 8 already (its recorded
// convolution shapes say so), but for its stem's 3 image channels: the
// tensor-core fix asks for channels_last only, not for what the model has.
TEST(ReviewedFindingsResNet, TheTensorCoreFixDoesNotAskForChannelsTheModelHas) {
  for (const char* file : {"kineto-resnet50-v100-workers0.json.gz", "kineto-resnet50-v100-workers4.json.gz"}) {
    const Finding* f = testing::find_finding(profile_of(file), "no-tensor-cores");
    ASSERT_NE(f, nullptr) << file;
    EXPECT_NE(f->recommendation.find("channel counts, as recorded, are multiples of 8 already"), std::string::npos)
        << f->recommendation;
    // But for the stem's image channels, recorded as [32,3,224,224] x [64,3,7,7].
    EXPECT_NE(
        f->recommendation.find("already, but for the stem's 3 input channels (an image's), which cuDNN pads itself)"),
        std::string::npos)
        << f->recommendation;
    EXPECT_EQ(f->recommendation.find("and channel counts that are multiples of 8"), std::string::npos)
        << f->recommendation;
  }
}

// The two sampled ranks of a 128-rank DDP job: every communication kernel is
// a SendRecv, but the framework's annotations say all-to-all, all-gather and
// all-reduce; the sites that recur vary little (docs/findings.md, "On the
// real traces").
TEST(ReviewedFindingsSampled, CollectivesAreNamedByTheirAnnotations) {
  for (const char* file : {"hta-sampled-rank0.json.gz", "hta-sampled-rank1.json.gz"}) {
    SCOPED_TRACE(file);
    const Profile& p = profile_of(file);
    const Finding* f = testing::find_finding(p, "exposed-communication");
    ASSERT_TRUE(f) << testing::describe_findings(p);
    EXPECT_NE(f->evidence.find("By collective (of the exposed time): "), std::string::npos) << f->evidence;
    EXPECT_NE(f->evidence.find("% all_to_all, "), std::string::npos) << f->evidence;
    EXPECT_NE(f->evidence.find("not as the kernels' names say (send_recv)"), std::string::npos) << f->evidence;
    EXPECT_EQ(f->variant, "transfer");
    // More is exposed than compute could cover: the saving is the compute
    // not yet beside communication (rank 0: 151.1 of 337.0 ms exposed).
    EXPECT_LT(f->saving_ns, p.devices[0].exposed_communication_ns) << f->recommendation;
    EXPECT_NE(f->recommendation.find("has no compute to hide under"), std::string::npos) << f->recommendation;
    // Filtered to its launches: what the host did in the long gaps late
    // launches ended is unknown, so whether graphs help is too.
    const HelpAnswer* graphs = testing::find_help(p, "cuda-graphs");
    ASSERT_NE(graphs, nullptr);
    EXPECT_EQ(graphs->verdict, Verdict::unknown) << graphs->reason;
    EXPECT_NE(graphs->reason.find("it was filtered to its launches"), std::string::npos) << graphs->reason;
    // The backward all-to-all the filtered trace dropped: the gaps held at
    // All2All_Pooled_ReqBackward's ops are said as unrecorded communication.
    EXPECT_NE(f->title.find("more the trace likely did not record"), std::string::npos) << f->title;
    const Finding* g = testing::find_finding(p, "gpu-idle-gaps");
    ASSERT_TRUE(g) << testing::describe_findings(p);
    EXPECT_NE(g->recommendation.find("All2All_Pooled_ReqBackward held the largest"), std::string::npos)
        << g->recommendation;
    EXPECT_EQ(f->recommendation.rfind("Hide the all-to-all", 0), 0u) << f->recommendation;
    // SendRecv kernels of annotated all-to-alls are no pipeline stages' sends.
    EXPECT_EQ(f->recommendation.find("pipeline parallelism"), std::string::npos) << f->recommendation;
    ASSERT_FALSE(p.collective_summary.kinds.empty());
    EXPECT_EQ(p.collective_summary.kinds.front().kind, "all_to_all");
    EXPECT_EQ(p.collective_summary.renamed_sites, p.collective_sites.size());
    const HelpAnswer* a = testing::find_help(p, "overlap-communication");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
    EXPECT_NE(a->reason.find("already buckets gradients"), std::string::npos) << a->reason;
  }
}

// The saxpy's setup is MPI_Init, with the cudaHostRegister calls inside it
// counted once (its time, not more of it); and its trace is one rank of an
// MPI job (it sends to and receives from another), said so.
TEST(ReviewedFindingsNsys, SetupCountsNestedCallsOnceAndOneRankOfAnMpiJobIsSaidToBe) {
  const Profile& saxpy = profile_of("nsys/nsys2022-saxpy-mpi-openacc.sqlite");
  EXPECT_EQ(saxpy.workload.run, "one-shot");
  EXPECT_NE(saxpy.workload.run_evidence.find("(MPI_Init 645.7 ms, "), std::string::npos) << saxpy.workload.run_evidence;
  EXPECT_EQ(saxpy.workload.run_evidence.find("cudaHostRegister"), std::string::npos) << saxpy.workload.run_evidence;
  EXPECT_NE(saxpy.workload.mpi_evidence.find("15 MPI calls to other ranks (\"MPI_Send\", \"MPI_Recv\")"),
            std::string::npos)
      << saxpy.workload.mpi_evidence;
  EXPECT_TRUE(profile_of("nsys/nsys2024-cloverleaf-a100-mpi.sqlite").workload.mpi_evidence.empty());
}

// Nothing prescribed that the program already does, and nothing said of the
// program that a library did: the OpenACC/MPI saxpy's 9 cudaHostRegister
// calls (316 ms) all lie inside MPI_Init, a CUDA-aware MPI registering its
// own buffers, so the program is told to pin, not that it already pins.
// CloverLeaf pins nothing: the plain advice.
TEST(ReviewedFindingsNsys, PinningAdviceKnowsTheProgramAlreadyPins) {
  const Profile& saxpy = profile_of("nsys/nsys2022-saxpy-mpi-openacc.sqlite");
  EXPECT_EQ(saxpy.workload.pinning_calls, 0u);
  for (const char* id : {"pageable-memcpy", "sync-memcpy"}) {
    const Finding* f = testing::find_any_finding(saxpy, id);
    ASSERT_NE(f, nullptr) << id;
    EXPECT_EQ(f->recommendation.find("already pins"), std::string::npos) << f->recommendation;
    EXPECT_NE(f->recommendation.find("cudaMallocHost"), std::string::npos) << f->recommendation;
  }
  const Profile& clover = profile_of("nsys/nsys2024-cloverleaf-a100-mpi.sqlite");
  EXPECT_EQ(clover.workload.pinning_calls, 0u);
  const Finding* f = testing::find_any_finding(clover, "pageable-memcpy");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->recommendation.find("already pins"), std::string::npos) << f->recommendation;
  // CloverLeaf synchronizes after every kernel: the GPU idle from each
  // kernel's end, while the host was still blocked in the sync, is the
  // sync's (18.9 ms, not the 16.6 ms after the syncs returned), and the fix
  // names the per-kernel sync.
  const Finding* sync = testing::find_finding(clover, "host-sync");
  ASSERT_NE(sync, nullptr);
  EXPECT_NE(sync->title.find("leave the GPU idle 18.9 ms"), std::string::npos) << sync->title;
  EXPECT_NE(sync->evidence.find("a sync for nearly every kernel (1,312 device and stream syncs for 1,312 kernels)"),
            std::string::npos)
      << sync->evidence;
  EXPECT_EQ(sync->recommendation.rfind("Synchronize once where the host reads results, not after every kernel", 0), 0u)
      << sync->recommendation;
}

INSTANTIATE_TEST_SUITE_P(RealTraces, ReviewedFindings, ::testing::ValuesIn(all_traces()), testing::TraceFileName());

// The optimizer's kind, on every real trace: the ResNet-50 runs' SGD step
// launches 483 plain kernels per step (per-parameter), the DDP sample's 9
// multi_tensor_apply kernels (foreach); Shampoo's steps mix multi-tensor and
// plain kernels (unknown, said as a mix); inference and programs without an
// optimizer get nothing.
TEST(ReviewedFindingsAll, OptimizerKindIsToldOrUnknown) {
  const std::map<std::string, std::string> kind = {
      {"kineto-resnet50-v100-workers0.json.gz", "per-parameter"},
      {"kineto-resnet50-v100-workers4.json.gz", "per-parameter"},
      {"hta-ns-resolution-v100.json.gz", "foreach"},
      {"hta-sampled-rank0.json.gz", "unknown"},
      {"hta-sampled-rank1.json.gz", "unknown"},
      {"review/hta-dlrm-compiled-a100.json.gz", "fused"},
  };
  for (const std::string& file : all_traces()) {
    const WorkloadKind& w = profile_of(file).workload;
    const auto it = kind.find(file);
    EXPECT_EQ(w.optimizer, it == kind.end() ? "" : it->second) << file << ": " << w.optimizer_evidence;
    EXPECT_EQ(w.optimizer.empty(), w.optimizer_evidence.empty()) << file;
    // A per-parameter optimizer is a (minor here) finding; nothing else is.
    EXPECT_EQ(testing::find_any_finding(profile_of(file), "unfused-optimizer") != nullptr,
              w.optimizer == "per-parameter")
        << file;
  }
}

// What the review traces' reports must say, sentence by sentence: what the
// program already does is recognised and no fix prescribes it, and where the
// trace cannot tell, the report says so.
TEST(ReviewedFindingsAll, TheReviewTracesAreToldWhatFitsThem) {
  const auto fix = [](const Profile& p, std::string_view id) {
    const Finding* f = testing::find_finding(p, id);
    return f ? f->recommendation : std::string("(no ") + std::string(id) + ")";
  };
  const auto verdict = [](const Profile& p, std::string_view id) {
    for (const HelpAnswer& a : p.helps)
      if (a.id == id) return a.verdict;
    return Verdict::not_applicable;
  };
  // vLLM on a B200: the engine's CUDA-graph switches, its FP8/FP4 products on tensor cores.
  const Profile& vllm = profile_of("review/tracelens-vllm-gptoss-b200.json.gz");
  EXPECT_EQ(vllm.workload.engine, "vllm") << vllm.workload.engine_evidence;
  EXPECT_NE(fix(vllm, "launch-bound").find("--enforce-eager"), std::string::npos) << fix(vllm, "launch-bound");
  EXPECT_EQ(fix(vllm, "launch-bound").find("reduce-overhead"), std::string::npos) << fix(vllm, "launch-bound");
  // Its default graphs are piecewise: attention's own launch wait stays.
  EXPECT_NE(fix(vllm, "launch-bound").find("attention runs eagerly between them, and its launches held the GPU 5.4 ms"),
            std::string::npos)
      << fix(vllm, "launch-bound");
  EXPECT_EQ(verdict(vllm, "mixed-precision"), Verdict::no);
  EXPECT_EQ(verdict(vllm, "input-workers"), Verdict::not_applicable);
  // Its batch is the requests it holds: whether more wait, the trace cannot tell.
  EXPECT_EQ(verdict(vllm, "larger-batch"), Verdict::unknown);
  // An eager LLM on an H100: FlashAttention-2 is told of Hopper's attention kernels, not to pad or autocast.
  const Profile& qwen = profile_of("review/tracelens-qwen-h100.json.gz");
  EXPECT_NE(fix(qwen, "op-below-roofline").find("CUDNN_ATTENTION"), std::string::npos)
      << fix(qwen, "op-below-roofline");
  EXPECT_EQ(fix(qwen, "op-below-roofline").find("autocast"), std::string::npos) << fix(qwen, "op-below-roofline");
  // Recorded with GPU activities only: the host's time per launch is measured,
  // what the host did in it is not recorded, and the report does not guess.
  {
    const Profile& gpu_only = profile_of("review/tracelens-mi210-gpu-only.json.gz");
    const Finding* l = testing::find_finding(gpu_only, "launch-bound");
    ASSERT_TRUE(l);
    EXPECT_NE(l->evidence.find("what it did between launches the trace does not record"), std::string::npos)
        << l->evidence;
    EXPECT_EQ(l->evidence.find("Python"), std::string::npos) << l->evidence;
    EXPECT_EQ(l->recommendation.rfind("Record the host side first", 0), 0u) << l->recommendation;
  }
  // The event-sync sample's read-back holds the host 29 µs, 20 µs of them
  // while the GPU still ran the copy: the title says what is charged to it,
  // not that the GPU idled that long after it (the gap after it is 100 µs).
  {
    const Finding* c = testing::find_any_finding(profile_of("hta-event-sync.json.gz"), "sync-memcpy");
    ASSERT_TRUE(c);
    EXPECT_NE(c->title.find("blocks the host 29.0 µs and is charged 29.0 µs of the GPU's idle after it"),
              std::string::npos)
        << c->title;
    EXPECT_NE(c->evidence.find("at most how long it held the host"), std::string::npos) << c->evidence;
  }
  // The V100 trace records no convolution shapes: whether the channel counts
  // are multiples of 8 is said as unknown, not prescribed.
  {
    const Finding* t = testing::find_finding(profile_of("hta-ns-resolution-v100.json.gz"), "no-tensor-cores");
    ASSERT_TRUE(t);
    EXPECT_NE(t->recommendation.find("they need channel counts that are multiples of 8, which the trace cannot "
                                     "confirm (the convolution ops' shapes are recorded for 0% of their GPU time"),
              std::string::npos)
        << t->recommendation;
  }
  // AlexNet's benchmark empties the caches itself ([param|clear_cache]) before
  // the iteration it measures: the flush's host time is the harness's, and
  // the measured iteration's re-allocation (cudaMalloc) is by design.
  {
    const Profile& alexnet = profile_of("hta-alexnet.json.gz");
    const Finding* g = testing::find_any_finding(alexnet, "gpu-idle-gaps");
    ASSERT_TRUE(g);
    EXPECT_NE(g->recommendation.find("the program empties the caches itself ([param|clear_cache])"), std::string::npos)
        << g->recommendation;
    EXPECT_LT(g->saving_ns, 1'000'000) << g->recommendation;
    EXPECT_EQ(g->evidence.find("[param|clear_cache]"), std::string::npos) << g->evidence;
  }
  // 139.8 FLOP/B is under an H100's ridge point, but at 19.3 % of the memory
  // roof bandwidth does not limit the kernel: the evidence says so, not "memory-bound".
  {
    const Finding* f = testing::find_finding(qwen, "op-below-roofline");
    ASSERT_TRUE(f);
    EXPECT_NE(f->evidence.find("under the memory roof at 139.8 FLOP/B: it moves its inputs and outputs at 19.3%"),
              std::string::npos)
        << f->evidence;
    EXPECT_EQ(f->evidence.find("-bound"), std::string::npos) << f->evidence;
  }
  EXPECT_NE(fix(qwen, "memory-bound-aux").find("RMS norm"), std::string::npos) << fix(qwen, "memory-bound-aux");
  // Its transposes are the attention wrapper's .contiguous() copies of
  // permuted heads: told to keep the consumer's layout, not channels_last.
  EXPECT_NE(fix(qwen, "layout-transpose").find("scaled_dot_product_attention"), std::string::npos)
      << fix(qwen, "layout-transpose");
  EXPECT_EQ(fix(qwen, "layout-transpose").find("channels_last"), std::string::npos) << fix(qwen, "layout-transpose");
  // Its 509 ops with no launch are the previous forward's tail, queued
  // before the recording and drained by the harness's sync: not launches
  // the trace lacks, so whether launches held the GPU is known (no).
  EXPECT_EQ(qwen.launches.backlog_ops, 509u);
  // ResNet-50's per-parameter SGD: 1.3 ms of GPU work per step, 18.8 ms of
  // the host's. Overlapping the update is still no, and the answer says
  // where its cost is; ns-resolution's optimizer step is not so.
  const HelpAnswer* sgd =
      testing::find_help(profile_of("kineto-resnet50-v100-workers0.json.gz"), "overlap-weight-update");
  ASSERT_NE(sgd, nullptr);
  EXPECT_EQ(sgd->verdict, Verdict::no);
  EXPECT_NE(sgd->reason.find("holds the host 18.8 ms per call (10.6% of step time) for 1.3 ms of GPU work"),
            std::string::npos)
      << sgd->reason;
  // Its host time per launch leaves out the 415.8 ms the loop spent loading
  // data and the 28.7 ms it spent blocked in synchronizations (16.7 ms) and
  // blocking copies (12.0 ms).
  const Finding* lb = testing::find_finding(profile_of("kineto-resnet50-v100-workers0.json.gz"), "launch-bound");
  ASSERT_NE(lb, nullptr);
  EXPECT_NE(lb->evidence.find("68.3 µs per launch over the steps (step time less the 28.7 ms it spent blocked in "
                              "synchronizations and blocking copies, and its data loading, 415.8 ms"),
            std::string::npos)
      << lb->evidence;
  // workers4's first batch's pageable copy held the host 40 ms: not time per launch either.
  const Finding* lb4 = testing::find_finding(profile_of("kineto-resnet50-v100-workers4.json.gz"), "launch-bound");
  ASSERT_NE(lb4, nullptr);
  EXPECT_NE(lb4->evidence.find("83.5 µs per launch over the steps (step time less the 64.5 ms it spent blocked in "
                               "synchronizations and blocking copies, and its data loading, 8.5 ms"),
            std::string::npos)
      << lb4->evidence;
  const HelpAnswer* plain = testing::find_help(profile_of("hta-ns-resolution-v100.json.gz"), "overlap-weight-update");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->reason.find("holds the host"), std::string::npos) << plain->reason;
  // HTA's sampled recommender rank quantizes its embeddings' exchange to
  // FP8 already (fbgemm's quantize ops): no lower precision is prescribed.
  const Profile& sampled = profile_of("hta-sampled-rank0.json.gz");
  EXPECT_NE(fix(sampled, "exposed-communication").find("quantized already (fbgemm::FloatToFP8RowwiseQuantized)"),
            std::string::npos)
      << fix(sampled, "exposed-communication");
  // Its trace keeps only launch calls: the late launches' cause is unknown,
  // not the usual suspects.
  EXPECT_NE(fix(sampled, "gpu-idle-gaps").find("the trace keeps only the launch calls"), std::string::npos)
      << fix(sampled, "gpu-idle-gaps");
  EXPECT_EQ(fix(sampled, "gpu-idle-gaps").find("checkpointing"), std::string::npos) << fix(sampled, "gpu-idle-gaps");
  const HelpAnswer* graphs = testing::find_help(qwen, "cuda-graphs");
  ASSERT_NE(graphs, nullptr);
  EXPECT_EQ(graphs->verdict, Verdict::later) << graphs->reason;  // not now, but next
  EXPECT_NE(graphs->reason.find("not now, but next"), std::string::npos) << graphs->reason;
  // The range profiler's kernels: no timeline, said so.
  const Profile& ranged = profile_of("review/hta-cupti-range-profiler.json.gz");
  EXPECT_EQ(ranged.workload.run, "no-kernels");
  EXPECT_NE(ranged.workload.run_evidence.find("77 cuda_profiler_range events"), std::string::npos)
      << ranged.workload.run_evidence;
  // A compiled DLRM rank: gaps ended by queued work are no claimed saving;
  // its copies are not told to use torch.compile, which it does.
  const Profile& dlrm = profile_of("review/hta-dlrm-compiled-a100.json.gz");
  const Finding* gaps = testing::find_finding(dlrm, "gpu-idle-gaps");
  ASSERT_NE(gaps, nullptr);
  EXPECT_NE(gaps->saving_note.find("unknown"), std::string::npos) << gaps->saving_note;
  EXPECT_LT(gaps->saving_ns, 10'000'000);
  EXPECT_EQ(fix(dlrm, "low-memcpy-overlap").find("torch.compile fuses"), std::string::npos)
      << fix(dlrm, "low-memcpy-overlap");
  EXPECT_EQ(dlrm.workload.execution, "compiled");
  // Its eager DtoD copies are autograd's AccumulateGrad's (DDP's gradient
  // copies, most likely): said so, not "compile them away".
  EXPECT_NE(fix(dlrm, "low-memcpy-overlap").find("705 copies of these 1,280 were launched inside autograd's"),
            std::string::npos)
      << fix(dlrm, "low-memcpy-overlap");
  // Optimizer kernels per step by what the optimizer's steps launched (18),
  // not all of them over the steps (108 / 5: a backlog step's among them).
  const Finding* update = testing::find_finding(dlrm, "serialized-weight-update");
  ASSERT_NE(update, nullptr);
  EXPECT_NE(update->title.find("(18 per step launched by the optimizer's step)"), std::string::npos) << update->title;
  // DDP puts 99.9% of its gradient bytes in one 1.67 GiB bucket (of 2 per
  // step) with no compute beside it: launching each bucket when ready is done
  // already; what splitting it saves is unknown, and neither the all-reduce's
  // fix nor the update's tells it to start buckets sooner.
  const std::string bucket =
      "99.9% of the bytes all-reduced per step are in one 1.67 GiB bucket (2 buckets per step, by the all-reduce "
      "calls seen at the same place in each step: 1.67 GiB, 1.4 MiB), with no compute kernel beside it";
  EXPECT_EQ(verdict(dlrm, "overlap-communication"), Verdict::unknown);
  const Finding* comm = testing::find_finding(dlrm, "exposed-communication");
  ASSERT_NE(comm, nullptr);
  EXPECT_NE(comm->recommendation.find("which launches each gradient bucket's all-reduce as soon as its gradients are "
                                      "ready: here " +
                                      bucket),
            std::string::npos)
      << comm->recommendation;
  EXPECT_NE(comm->saving_note.find("what hiding that bucket's 123.1 ms would save is unknown"), std::string::npos)
      << comm->saving_note;
  EXPECT_NE(update->recommendation.find("gains little here: " + bucket), std::string::npos) << update->recommendation;
  EXPECT_EQ(update->recommendation.find("update each gradient bucket as soon as"), std::string::npos)
      << update->recommendation;
  // gradient_as_bucket_view removes AccumulateGrad's 705 copies: their
  // 11.08 ms with no kernel beside them is the saving. 5 copies launched by
  // aten::cat directly under DistributedDataParallel.forward are not DDP's
  // buffer broadcast: no broadcast runs in the trace, so no
  // broadcast_buffers advice. Of the other 570 copies, 140 were queued
  // before the recording and 430 launched elsewhere: origin unknown.
  const Finding* copies = testing::find_finding(dlrm, "low-memcpy-overlap");
  ASSERT_NE(copies, nullptr);
  EXPECT_EQ(copies->saving_ns, 11'080'000);
  EXPECT_NE(copies->recommendation.find("5 copies (5.0 MiB) were launched by aten::cat directly under "
                                        "DistributedDataParallel.forward, which broadcasts nothing here"),
            std::string::npos)
      << copies->recommendation;
  EXPECT_EQ(copies->recommendation.find("broadcast_buffers"), std::string::npos) << copies->recommendation;
  EXPECT_NE(copies->recommendation.find("140 copies were queued before the recording began"), std::string::npos)
      << copies->recommendation;
  EXPECT_NE(copies->recommendation.find("The other 430 copies of this kind were launched elsewhere"), std::string::npos)
      << copies->recommendation;
  // TimeSformer's two blocking copies: the 800-byte read-back of the output
  // held the host 126 ms (it waited for the forward), the input copy 3.6 ms:
  // the kind named is the one that held the host longest, not the most.
  const Profile& tsf = profile_of("tracelens-timesformer-h100.json.gz");
  const Finding* blocked = nullptr;
  for (const Finding& f : tsf.minor_findings) blocked = f.id == "sync-memcpy" ? &f : blocked;
  ASSERT_NE(blocked, nullptr);
  EXPECT_NE(blocked->title.find("mostly DtoH"), std::string::npos) << blocked->title;
  // Held work was launched in time: only the long gaps that late launches
  // ended bound the input wait. The 872 ops with no launch all ran before
  // their stream's first launched op (867 of them on the compute stream,
  // until +163 ms): queued before the recording began, not launched late.
  EXPECT_EQ(dlrm.launches.backlog_ops, 872u);
  const HelpAnswer* input = testing::find_help(dlrm, "input-workers");
  ASSERT_NE(input, nullptr);
  EXPECT_EQ(input->verdict, Verdict::no) << input->reason;
  EXPECT_NE(input->reason.find("and 0.2% in long gaps"), std::string::npos) << input->reason;
}

}  // namespace
}  // namespace gpuscope
