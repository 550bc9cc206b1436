// What the analysis recognises a trace to be (Profile::workload), and the
// findings' advice fitted to it: planted traces for each kind, and the real
// traces with what each one is, written down.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analysis/analyze.h"
#include "analysis/detail/context.h"
#include "analysis/graph/savings.h"
#include "import/open_trace.h"
#include "support/findings.h"
#include "support/real_traces.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;

// `n` PyTorch ops, each launching one kernel named `kernel`.
void eager_ops(TraceFactory& f, int n, std::string_view op, std::string_view kernel, TimeNs from = 0) {
  for (int i = 0; i < n; ++i) {
    const TimeNs at = from + i * 100'000;
    f.range(op, at, at + 50'000, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, kernel, at + 60'000, at + 90'000, at + 10'000);
  }
}

TEST(Workload, BackwardOpsMakeItTraining) {
  TraceFactory f;
  f.device(0);
  eager_ops(f, 120, "aten::addmm", "ampere_sgemm_128x64_nn");
  eager_ops(f, 3, "autograd::engine::evaluate_function: AddmmBackward0", "ampere_sgemm_128x64_nt", 20'000'000);
  const WorkloadKind w = analyze(f.build()).workload;
  EXPECT_EQ(w.phase, "training");
  EXPECT_NE(w.phase_evidence.find("3 backward ops"), std::string::npos) << w.phase_evidence;
  EXPECT_EQ(w.execution, "eager");
  EXPECT_EQ(w.ranks, 1u);
  EXPECT_FALSE(w.bundled);
}

TEST(Workload, KernelEvidenceIsQuotedByShortName) {
  TraceFactory f;
  f.device(0);
  eager_ops(f, 120, "aten::addmm", "ampere_sgemm_128x64_nn");
  eager_ops(f, 3, "aten::mul",
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
            "namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::FusedSgdMathFunctor<float, 3>, "
            "double, float*>(at::native::(anonymous namespace)::TensorListMetadata<3>, double, float*)",
            20'000'000);
  const WorkloadKind w = analyze(f.build()).workload;
  EXPECT_EQ(w.phase, "training");
  EXPECT_NE(w.phase_evidence.find(
                "3 kernels named as an optimizer's (\"at::native::(anonymous namespace)::multi_tensor_apply_kernel\")"),
            std::string::npos)
      << w.phase_evidence;
  EXPECT_EQ(w.phase_evidence.find("TensorListMetadata"), std::string::npos) << w.phase_evidence;
}

TEST(Workload, ManyFrameworkOpsWithoutABackwardAreInference) {
  TraceFactory f;
  f.device(0);
  eager_ops(f, 120, "aten::addmm", "ampere_sgemm_128x64_nn");
  EXPECT_EQ(analyze(f.build()).workload.phase, "inference");
  // Kernels and NVTX ranges alone do not tell: unknown, not inference.
  TraceFactory g;
  g.device(0);
  for (int i = 0; i < 200; ++i) {
    g.range("step", i * 100'000, i * 100'000 + 90'000);
    g.kernel(0, 7, "conv_kernel", i * 100'000 + 20'000, i * 100'000 + 80'000, i * 100'000 + 5'000);
  }
  EXPECT_EQ(analyze(g.build()).workload.phase, "unknown");
}

TEST(Workload, GraphReplaysAndTritonKernels) {
  TraceFactory f;
  f.device(0);
  const TrackId track = f.builder().gpu_track(0, 7);
  for (int i = 0; i < 20; ++i) {
    KernelRow k;
    k.start = 1'000'000 + i * 10'000;
    k.end = k.start + 5'000;
    k.track = track;
    k.name = f.builder().intern("triton_poi_fused_add_0");
    k.graph_id = 3;
    k.graph_node_id = static_cast<std::uint64_t>(i + 1);
    f.builder().add_kernel(k);
  }
  const WorkloadKind w = analyze(f.build()).workload;
  EXPECT_EQ(w.execution, "cuda graphs");
  EXPECT_EQ(w.graph_kernels, 20u);
  EXPECT_NE(w.execution_evidence.find("Triton"), std::string::npos) << w.execution_evidence;
  TraceFactory g;
  g.device(0);
  eager_ops(g, 5, "aten::add", "triton_poi_fused_add_0");
  EXPECT_EQ(analyze(g.build()).workload.execution, "compiled");
  // One small compiled helper beside a model run op by op: eager, said so
  // with the compiled share of kernel time.
  TraceFactory h;
  h.device(0);
  eager_ops(h, 1, "aten::add", "triton_poi_fused_add_0");
  eager_ops(h, 40, "aten::mm", "ampere_sgemm_128x64_nn", 1'000'000);
  const WorkloadKind e = analyze(h.build()).workload;
  EXPECT_EQ(e.execution, "eager") << e.execution_evidence;
  EXPECT_NE(e.execution_evidence.find("of kernel time: a small part compiled, the rest eager"), std::string::npos)
      << e.execution_evidence;
}

// Pinning the program does counts; cuDNN's own pinned buffer, allocated
// inside its first convolution, does not, nor a CUDA-aware MPI registering
// its buffers inside MPI_Init.
TEST(Workload, PinningInsideALibraryOpIsTheLibrarys) {
  TraceFactory f;
  f.device(0);
  f.range("MPI_Init", 100'000, 900'000, 1);
  f.api("cudaHostRegister", 200'000, 700'000, 1);
  f.range("aten::cudnn_convolution", 1'000'000, 2'000'000, 1, RangeKind::annotation, "cpu_op");
  f.api("cudaHostAlloc", 1'100'000, 1'200'000, 1);
  f.range("aten::pin_memory", 3'000'000, 4'000'000, 1, RangeKind::annotation, "cpu_op");
  f.api("cudaHostAlloc", 3'100'000, 3'300'000, 1);
  f.kernel(0, 7, testing::names::kConvTensorCore, 5'000'000, 6'000'000);
  const WorkloadKind w = analyze(f.build()).workload;
  EXPECT_EQ(w.pinning_calls, 1u);
  EXPECT_EQ(w.pinning_ns, 200'000);
}

// An LLM serving engine is recognised by its own ops, and a launch-bound run
// of it is told the engine's switches for CUDA graphs, not torch.compile's.
TEST(Workload, AServingEngineIsToldItsOwnSwitches) {
  TraceFactory f;
  f.device(0);
  // Short kernels, each launched 30 µs after the last one ended: launch-bound.
  for (int i = 0; i < 400; ++i) {
    const TimeNs at = 1'000'000 + i * 40'000;
    f.range(i % 2 ? "vllm::unified_attention_with_output" : "aten::addmm", at, at + 36'000, 1, RangeKind::annotation,
            "cpu_op");
    f.kernel(0, 7, i % 2 ? "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16>" : "nvjet_tst_64x64_TNT",
             at + 34'000, at + 38'000, at + 30'000, 3'000);
  }
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.workload.engine, "vllm") << p.workload.engine_evidence;
  EXPECT_NE(p.workload.engine_evidence.find("vllm::unified_attention_with_output"), std::string::npos)
      << p.workload.engine_evidence;
  // The engine's ops make the run inference as the engine's, not as
  // inference annotations: an engine's attention op marks no phase.
  EXPECT_EQ(p.workload.phase, "inference") << p.workload.phase_evidence;
  EXPECT_EQ(p.workload.phase_evidence.find("inference op"), std::string::npos) << p.workload.phase_evidence;
  EXPECT_NE(p.workload.phase_evidence.find("of the serving engine"), std::string::npos) << p.workload.phase_evidence;
  const Finding* lb = testing::find_finding(p, "launch-bound");
  ASSERT_TRUE(lb);
  EXPECT_NE(lb->recommendation.find("--enforce-eager"), std::string::npos) << lb->recommendation;
  EXPECT_EQ(lb->recommendation.find("reduce-overhead"), std::string::npos) << lb->recommendation;
  EXPECT_EQ(lb->recommendation.find("fuse"), std::string::npos) << lb->recommendation;
  // Requests feed it, not a data loader.
  const auto input =
      std::find_if(p.helps.begin(), p.helps.end(), [](const HelpAnswer& a) { return a.id == "input-workers"; });
  ASSERT_NE(input, p.helps.end());
  EXPECT_EQ(input->verdict, Verdict::not_applicable) << input->reason;
  // Without the engine's ops: PyTorch's own words.
  TraceFactory g;
  g.device(0);
  for (int i = 0; i < 400; ++i) {
    const TimeNs at = 1'000'000 + i * 40'000;
    g.range("aten::addmm", at, at + 36'000, 1, RangeKind::annotation, "cpu_op");
    g.kernel(0, 7, "nvjet_tst_64x64_TNT", at + 34'000, at + 38'000, at + 30'000, 3'000);
  }
  const Profile q = analyze(g.build());
  EXPECT_TRUE(q.workload.engine.empty()) << q.workload.engine;
  const Finding* plain = testing::find_finding(q, "launch-bound");
  ASSERT_TRUE(plain);
  EXPECT_NE(plain->recommendation.find("reduce-overhead"), std::string::npos) << plain->recommendation;
}

// The engine whose own code runs on the host (its Python frames, its ops) is
// the engine, though it runs another engine's kernels (SGLang on ROCm runs
// vLLM's paged attention); a multi-tensor kernel that copies
// (torch._foreach_copy_, CUDA-graph inputs) is memory work, not an optimizer,
// so the run is inference, not training with a foreach optimizer.
TEST(Workload, TheEngineIsTheOneWhoseCodeRunsOnTheHost) {
  TraceFactory f;
  f.device(0);
  constexpr const char* kMultiTensor =
      "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
      "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::CopyFunctor<float, float, float, 2, 1, "
      "1>>(at::native::(anonymous namespace)::TensorListMetadata<2>, ...)";
  for (int i = 0; i < 8; ++i) {
    const TimeNs at = 1'000'000 + i * 1'000'000;
    f.range("/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py(1496): replay", at,
            at + 900'000, 1, RangeKind::annotation, "python_function");
    f.range("aten::_foreach_copy_", at + 10'000, at + 60'000, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, kMultiTensor, at + 70'000, at + 80'000, at + 20'000);
    f.kernel(0, 7,
             "void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, "
             "(vllm::Fp8KVCacheDataType)0, 1, 128, 256, false, 4, 1>",
             at + 100'000, at + 700'000, at + 90'000);
  }
  const Trace t = f.build();
  const Profile p = analyze(t);
  EXPECT_EQ(p.workload.engine, "sglang") << p.workload.engine_evidence;
  EXPECT_NE(p.workload.engine_evidence.find("SGLang Python frames"), std::string::npos) << p.workload.engine_evidence;
  EXPECT_EQ(p.workload.phase, "inference") << p.workload.phase_evidence;
  EXPECT_TRUE(p.workload.optimizer.empty()) << p.workload.optimizer_evidence;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    if (t.str(t.kernels().name[i]) == kMultiTensor) {
      EXPECT_EQ(t.kernels().category_at(i), KernelCategory::memory);
    }
  }
}

TEST(Workload, BundledOnlyFromItsCommandLine) {
  TraceFactory f;
  f.device(0);
  f.meta().command_line = "build/bin/resnet-train --preset seed";
  eager_ops(f, 3, "forward", "k");
  EXPECT_TRUE(analyze(f.build()).workload.bundled);
}

Finding finding(std::string id, std::string recommendation) {
  Finding f;
  f.id = std::move(id);
  f.recommendation = std::move(recommendation);
  return f;
}

TEST(Workload, AdviceFitsTheWorkload) {
  std::vector<Finding> fs{
      finding("padding-hotspot", "Pad once. Bundled workload: --padding fused. The saving is an upper bound."),
      finding("launch-bound", "Capture the step in a CUDA graph."),
      finding("serialized-weight-update", "Overlap the update."),
      finding("exposed-communication", "Overlap the collectives.")};
  WorkloadKind other;
  other.phase = "inference";
  other.execution = "cuda graphs";
  other.graph_kernels = 42;
  std::vector<Finding> a = fs;
  detail::fit_to_workload(other, a);
  ASSERT_EQ(a.size(), 3u);                                                    // inference: no weight update
  EXPECT_EQ(a[0].recommendation, "Pad once. The saving is an upper bound.");  // only the bundled workload's sentence
  EXPECT_NE(a[1].recommendation.find("already replays CUDA graphs (42 kernels"), std::string::npos);
  EXPECT_EQ(a[2].id, "exposed-communication");  // its words are the rule's (Collectives.InferenceIs…)
  // An inference run has no optimizer step to capture; a training run does.
  EXPECT_EQ(a[1].recommendation.find("optimizer"), std::string::npos) << a[1].recommendation;
  EXPECT_NE(a[1].recommendation.find("text encoders or pre/post-processing"), std::string::npos) << a[1].recommendation;
  WorkloadKind training = other;
  training.phase = "training";
  training.graph_kernels = 1;
  std::vector<Finding> t = fs;
  detail::fit_to_workload(training, t);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_NE(t[1].recommendation.find("(1 kernel from graphs)"), std::string::npos) << t[1].recommendation;
  EXPECT_NE(t[1].recommendation.find("the optimizer step, data-dependent parts"), std::string::npos)
      << t[1].recommendation;
  // On AMD the graphs are HIP graphs; a serving engine's launch advice (its
  // capture sizes) is its own and stays.
  std::vector<Finding> h = fs;
  detail::fit_to_workload(other, h, "HIP graph");
  EXPECT_NE(h[1].recommendation.find("already replays HIP graphs (42 kernels"), std::string::npos)
      << h[1].recommendation;
  WorkloadKind engine = other;
  engine.engine = "vllm";
  std::vector<Finding> e = fs;
  detail::fit_to_workload(engine, e);
  EXPECT_EQ(e[1].recommendation, "Capture the step in a CUDA graph.");
  WorkloadKind bundled;
  bundled.phase = "training";
  bundled.bundled = true;
  std::vector<Finding> b = fs;
  detail::fit_to_workload(bundled, b);
  ASSERT_EQ(b.size(), 4u);
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_EQ(b[i].recommendation, fs[i].recommendation);
}

// [A one-shot program] A short inference program recorded whole (as
// Nsight Systems records one): CUDA's initialisation, 2,000 modules loaded,
// the weights copied from pageable memory with blocking copies, 150 kernels
// (2.5 ms), then the modules unloaded and the context released. With
// `whole` false, the same GPU work without the program's start and exit
// calls (a profiler's window that began early).
Trace one_shot_program(bool whole = true) {
  TraceFactory f;
  TimeNs t = 1'000'000;
  if (whole) f.api("cuInit", t, t + 80'000'000), f.api("cuDevicePrimaryCtxRetain", t + 80'000'000, t + 200'000'000);
  t += 200'000'000;
  for (int i = 0; i < 2000; ++i, t += 45'000)
    if (whole) f.api("cuModuleLoadData", t, t + 40'000);
  for (int i = 0; i < 20; ++i, t += 720'000)
    f.memcpy(0, 7, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, 8 << 20, t + 20'000, t + 700'000,
             "cudaMemcpy", t, 700'000);
  t += 100'000'000;  // the engine is deserialised on the host
  for (int i = 0; i < 150; ++i, t += 17'000)
    f.kernel(0, 7, i % 2 ? "trt_volta_h884cudnn_256x64_ldg8_relu_exp_small_nhwc_tn_v1" : "generatedNativePointwise", t,
             t + 15'000, t - 25'000, 4'000);
  f.sync(SyncType::stream, 0, 7, t, t + 10'000);
  t += 20'000;
  for (int i = 0; i < 3000; ++i, t += 33'000)
    if (whole) f.api("cuModuleUnload", t, t + 30'000);
  if (whole) f.api("cuDevicePrimaryCtxRelease", t, t + 30'000'000);
  return f.build();
}

bool has_finding(const Profile& p, std::string_view id) {
  return std::any_of(p.findings.begin(), p.findings.end(), [&](const Finding& f) { return f.id == id; });
}

TEST(WorkloadRun, AOneShotProgramIsSaidToBeOne) {
  const Profile p = analyze(one_shot_program());
  const WorkloadKind& w = p.workload;
  EXPECT_EQ(w.run, "one-shot");
  EXPECT_EQ(w.kernel_window.duration(), 150 * 17'000 - 2'000);
  EXPECT_GT(w.setup_ns, 300'000'000);
  EXPECT_GT(w.teardown_ns, 100'000'000);
  for (const char* said : {"one-shot run: 99.5% of the 536.0 ms recorded", "setup before the first kernel",
                           "teardown after the last", "3,000 cuModuleUnload", "cuModuleLoadData", "steady state"})
    EXPECT_NE(w.run_evidence.find(said), std::string::npos) << said << ": " << w.run_evidence;
  // Its findings are not about the setup: the weights' blocking pageable
  // copies before the first kernel, and the GPU idle after them.
  for (const char* setup : {"sync-memcpy", "pageable-memcpy", "low-memcpy-overlap", "gpu-idle-gaps", "host-sync"})
    EXPECT_FALSE(has_finding(p, setup)) << setup << testing::describe_findings(p);
  // They are not dropped without a word: they stay as minor observations, saying why.
  const auto minor = std::find_if(p.minor_findings.begin(), p.minor_findings.end(),
                                  [](const Finding& f) { return f.id == "sync-memcpy"; });
  ASSERT_NE(minor, p.minor_findings.end());
  EXPECT_EQ(minor->saving_note, "about the program's setup or teardown, not its work");
}

TEST(WorkloadRun, WithoutTheProgramsStartOrExitItIsAWindowNotOneShot) {
  // The same GPU work with its idle before it, but no initialisation,
  // module or context call: a profiler's window, judged as it is.
  const Profile p = analyze(one_shot_program(false));
  EXPECT_EQ(p.workload.run, "");
  EXPECT_TRUE(p.workload.run_evidence.empty());
  // What the one-shot run leaves unnumbered: the weights' blocking pageable
  // copies and the GPU idle after them (100 ms of engine deserialisation);
  // the copies are pageable-memcpy's, not low-memcpy-overlap's as well.
  for (const char* setup : {"sync-memcpy", "pageable-memcpy"})
    EXPECT_TRUE(has_finding(p, setup)) << setup << testing::describe_findings(p);
  EXPECT_FALSE(has_finding(p, "low-memcpy-overlap")) << testing::describe_findings(p);
}

TEST(WorkloadRun, AWholeProgramWhoseWorkDominatesIsNotOneShot) {
  // cuInit and a module load before 2 s of kernels: setup is 5% of the run.
  TraceFactory f;
  f.api("cuInit", 0, 50'000'000);
  f.api("cuModuleLoadData", 50'000'000, 100'000'000);
  for (TimeNs t = 100'000'000; t < 2'100'000'000; t += 1'000'000) f.kernel(0, 7, "work_kernel", t, t + 900'000);
  const WorkloadKind w = analyze(f.build()).workload;
  EXPECT_EQ(w.run, "");
  EXPECT_EQ(w.setup_ns, 100'000'000);
}

TEST(WorkloadRun, NoKernelsIsNothingToDiagnose) {
  TraceFactory calls, copies;
  for (TimeNs i = 0; i < 100; ++i) calls.api("cuModuleLoadData", i * 100'000, i * 100'000 + 50'000);
  for (TimeNs i = 0; i < 10; ++i)
    copies.memcpy(0, 7, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, 1 << 20, i * 1'000'000,
                  i * 1'000'000 + 200'000, "cudaMemcpy");
  for (TraceFactory* f : {&calls, &copies}) {
    const Profile p = analyze(f->build());
    EXPECT_EQ(p.workload.run, "no-kernels");
    EXPECT_EQ(p.workload.run_evidence.rfind("no kernels: nothing on the GPU to diagnose", 0), 0u)
        << p.workload.run_evidence;
    EXPECT_TRUE(p.findings.empty()) << testing::describe_findings(p);  // not "utilization 22%" over copies
  }
  // Kernels measured by the CUPTI range profiler, each replayed alone: said
  // to be no timeline, and how to record one.
  TraceFactory profiled;
  for (TimeNs i = 0; i < 5; ++i)
    profiled.range("void at::native::vectorized_elementwise_kernel<4>", i * 1'000'000, i * 1'000'000 + 900'000, 1,
                   RangeKind::annotation, "cuda_profiler_range");
  const Profile q = analyze(profiled.build());
  EXPECT_EQ(q.workload.run, "no-kernels");
  EXPECT_NE(q.workload.run_evidence.find("5 cuda_profiler_range events are kernels measured one at a time"),
            std::string::npos)
      << q.workload.run_evidence;
  // Another accelerator's events (Kineto's MTIA activity types) are named,
  // not left as "no kernels" alone; a trace without them says nothing of it.
  TraceFactory mtia;
  for (TimeNs i = 0; i < 4; ++i)
    mtia.range("pe_exe", i * 1'000'000, i * 1'000'000 + 500'000, 1, RangeKind::annotation, "mtia_ccp_events");
  mtia.range("mtiaLaunchKernel", 0, 10'000, 1, RangeKind::annotation, "mtia_runtime");
  const Profile m = analyze(mtia.build());
  EXPECT_EQ(m.workload.run, "no-kernels");
  EXPECT_NE(m.workload.run_evidence.find("another accelerator's work (4 mtia_ccp_events, 1 mtia_runtime events"),
            std::string::npos)
      << m.workload.run_evidence;
  EXPECT_EQ(q.workload.run_evidence.find("another accelerator"), std::string::npos) << q.workload.run_evidence;
}

// TensorFlow's and JAX's profilers name each device's process
// "/device:GPU:N" and do not mark its events as kernels: they are kept as
// host ranges, and the run says the device time is unknown rather than
// calling a kernel the host's time.
TEST(WorkloadRun, EventsOnAProcessNamedAsADeviceAreNotTheHostsTime) {
  TraceFactory f;
  f.builder().add_process({TraceFactory::kPid, "/device:GPU:0"});
  for (TimeNs i = 0; i < 4; ++i)
    f.range("volta_sgemm_128x64_nn", i * 1'000'000, i * 1'000'000 + 800'000, 7, RangeKind::annotation, "");
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.workload.run, "gpu-unrecorded");
  EXPECT_NE(p.workload.run_evidence.find("4 events lie on 1 process named as a device (\"/device:GPU:0\""),
            std::string::npos)
      << p.workload.run_evidence;
  EXPECT_NE(p.workload.run_evidence.find("the device time is unknown here"), std::string::npos);
  EXPECT_EQ(p.workload.run_evidence.find("the host's time"), std::string::npos) << p.workload.run_evidence;
  EXPECT_TRUE(p.findings.empty()) << testing::describe_findings(p);
  // The same ranges on a process named as a program are the host's.
  TraceFactory host;
  host.builder().add_process({TraceFactory::kPid, "python3"});
  for (TimeNs i = 0; i < 4; ++i)
    host.range("load_images", i * 1'000'000, i * 1'000'000 + 800'000, 7, RangeKind::annotation, "");
  const Profile q = analyze(host.build());
  EXPECT_EQ(q.workload.run, "no-kernels");
  EXPECT_NE(q.workload.run_evidence.find("the host's time, by its outermost ranges: load_images"), std::string::npos)
      << q.workload.run_evidence;
}

TEST(WorkloadRun, NoGpuOpFromAProgramThatUsedGpusIsUnrecorded) {
  // A DDP step whose host ran an NCCL collective and a fused optimizer, its
  // device list naming 8 GPUs, and no GPU op: the GPU side was not
  // recorded (torch.profiler without ProfilerActivity.CUDA), not idle.
  TraceFactory f;
  f.meta().set_property("chrome.devices_listed", "8");
  f.range("ProfilerStep#1", 0, 10'000'000, 1, RangeKind::annotation, "user_annotation");
  f.range("## backward ##", 1'000'000, 6'000'000, 1, RangeKind::annotation, "user_annotation");
  f.range("nccl:all_reduce", 2'000'000, 2'500'000, 1, RangeKind::annotation, "user_annotation");
  f.range("Optimizer.step#FusedAdam.step", 7'000'000, 8'000'000, 1, RangeKind::annotation, "user_annotation");
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.workload.run, "gpu-unrecorded");
  EXPECT_TRUE(p.workload.nothing_to_number());
  for (const char* part :
       {"the GPU side was not recorded: no kernel, copy or fill in the 10.0 ms recorded", "names 8 GPUs",
        "host ops that launch GPU work (1 nccl:all_reduce, 1 Optimizer.step#FusedAdam.step)",
        "every GPU figure is unknown", "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]",
        "the host's time, by its outermost ranges: ## backward ## 5.0 ms (50%; 1 range), "
        "Optimizer.step#FusedAdam.step 1.0 ms (10%; 1 range)"})
    EXPECT_NE(p.workload.run_evidence.find(part), std::string::npos) << part << "\n" << p.workload.run_evidence;
  EXPECT_TRUE(p.findings.empty()) << testing::describe_findings(p);
  // Launch calls without a GPU op (CUPTI's activity records lost), or an
  // NCCL process group alone, say the same.
  TraceFactory calls, nccl;
  for (TimeNs i = 0; i < 5; ++i) calls.api("cudaLaunchKernel", i * 100'000, i * 100'000 + 5'000);
  nccl.meta().set_property("chrome.distributed.backend", "nccl");
  nccl.range("aten::add", 0, 1'000'000, 1, RangeKind::annotation, "cpu_op");
  const Profile c = analyze(calls.build()), n = analyze(nccl.build());
  EXPECT_EQ(c.workload.run, "gpu-unrecorded");
  EXPECT_NE(c.workload.run_evidence.find("GPU runtime calls that launch or copy (5 cudaLaunchKernel)"),
            std::string::npos)
      << c.workload.run_evidence;
  EXPECT_EQ(n.workload.run, "gpu-unrecorded");
  EXPECT_NE(n.workload.run_evidence.find("its process group's backend, nccl, runs collectives on GPUs"),
            std::string::npos)
      << n.workload.run_evidence;
  // A host-only run (gloo's all-reduces on two threads, no GPU listed):
  // nothing on the GPU, and where the host's time went (the union of the
  // ranges over both threads, the step range not counted).
  TraceFactory host;
  host.meta().set_property("chrome.distributed.backend", "gloo");
  host.range("ProfilerStep#1", 0, 1'000'000, 1, RangeKind::annotation, "user_annotation");
  for (std::uint32_t tid : {2u, 3u})
    for (TimeNs i = 0; i < 5; ++i)
      host.range("gloo:all_reduce", i * 2'000'000, i * 2'000'000 + 1'500'000, tid, RangeKind::annotation,
                 "user_annotation");
  const Profile h = analyze(host.build());
  EXPECT_EQ(h.workload.run, "no-kernels");
  EXPECT_EQ(h.workload.run_evidence.rfind("no kernels: nothing on the GPU to diagnose", 0), 0u)
      << h.workload.run_evidence;
  EXPECT_NE(h.workload.run_evidence.find(
                "the host's time, by its outermost ranges: gloo:all_reduce 7.5 ms (79%; 10 ranges on 2 threads)"),
            std::string::npos)
      << h.workload.run_evidence;
}

TEST(Workload, ARankWithoutAWorldSizeIsOneOfAnUnknownNumber) {
  auto workload = [](std::int32_t rank, std::int32_t world, std::string_view backend) {
    TraceFactory f;
    f.kernel(0, 7, "k", 0, 1'000'000);
    f.meta().rank = rank, f.meta().world_size = world;
    if (!backend.empty()) f.meta().set_property("chrome.distributed.backend", backend);
    return analyze(f.build()).workload;
  };
  const WorkloadKind ranked = workload(0, 0, ""), backend = workload(-1, 0, "nccl");
  EXPECT_EQ(ranked.rank, 0);
  EXPECT_EQ(ranked.ranks, 1u);
  EXPECT_EQ(ranked.rank_evidence, "the job's size unknown: its distributed info gives rank 0, but no world size");
  EXPECT_EQ(backend.rank, -1);
  EXPECT_EQ(backend.rank_evidence, "the job's size unknown: a nccl process-group backend, but no world size");
  // A world size given (even 1), or nothing distributed at all: no doubt.
  for (const WorkloadKind& w : {workload(34, 300, "gloo"), workload(0, 1, "nccl"), workload(-1, 0, "")})
    EXPECT_TRUE(w.rank_evidence.empty()) << w.rank_evidence;
  EXPECT_EQ(workload(34, 300, "gloo").rank, 34);
  // A job's files hold its ranks: no one rank's number stands for it.
  const WorkloadKind job = detail::pool_workloads({&ranked, &ranked});
  EXPECT_EQ(job.rank, -1);
  EXPECT_TRUE(job.rank_evidence.empty());
}

TEST(WorkloadRun, AGpuSpanOfMicrosecondsNumbersNoFinding) {
  // One 2 µs kernel in a 13 s step (a first call that compiles).
  TraceFactory f;
  f.range("ProfilerStep#1", 0, 13'000'000'000, 1, RangeKind::annotation, "user_annotation");
  f.kernel(0, 7, "triton_poi_fused_add_0", 12'000'000'000, 12'000'002'000);
  f.sync(SyncType::context, 0, 7, 12'000'010'000, 12'000'020'000);
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.workload.run, "tiny-span");
  EXPECT_NE(p.workload.run_evidence.find("the GPU's work spans 2.0 µs (1 kernel) of the 13.00 s recorded"),
            std::string::npos)
      << p.workload.run_evidence;
  EXPECT_TRUE(p.findings.empty()) << testing::describe_findings(p);
  // Four kernels of 7.5 µs over 1.6 ms of a 2 s recording (a first launch
  // that loads its module): as little to judge, and nothing is simulated
  // into a saving.
  TraceFactory w;
  w.range("main", 0, 2'000'000'000, 1);
  for (TimeNs t : {100'000'000, 100'500'000, 101'000'000, 101'600'000})
    w.kernel(0, 7, "vectorized_elementwise_kernel", t, t + 7'500, t - 1'000, 20'000);
  const Trace tw = w.build();
  const JobInput inputs[] = {{&tw, {}}};
  const Profile q = graph::analyze_and_simulate(inputs, {});
  EXPECT_EQ(q.workload.run, "tiny-span");
  EXPECT_NE(q.workload.run_evidence.find("the GPU works 30.0 µs in all, over a span of 1.6 ms (4 kernels)"),
            std::string::npos)
      << q.workload.run_evidence;
  EXPECT_TRUE(q.findings.empty()) << testing::describe_findings(q);
  for (const Finding& m : q.minor_findings) EXPECT_EQ(m.saving_ns, 0) << m.id;
  // 109 µs of kernels is a span to judge.
  TraceFactory g;
  for (TimeNs t = 0; t <= 100'000; t += 10'000) g.kernel(0, 7, "k", t, t + 9'000);
  EXPECT_EQ(analyze(g.build()).workload.run, "");
}

TEST(WorkloadRun, AJobIsOneShotOnlyWhereEveryRankIs) {
  WorkloadKind a, b;
  a.run = b.run = "one-shot";
  a.run_evidence = "one-shot run: 60% …";
  a.kernel_window = {10, 20};
  EXPECT_EQ(detail::pool_workloads({&a, &b}).run, "one-shot");
  EXPECT_EQ(detail::pool_workloads({&a, &b}).kernel_window.duration(), 0);  // the ranks' clocks differ
  b.run.clear();
  EXPECT_EQ(detail::pool_workloads({&a, &b}).run, "");
  EXPECT_TRUE(detail::pool_workloads({&a, &b}).run_evidence.empty());
}

// What each real trace is, read once by hand from its provenance (the
// tests' data README) and its ops.
TEST(Workload, RealTraces) {
  struct Expected {
    const char* file;
    const char* phase;
    const char* execution;
    std::uint32_t ranks;
    const char* run = "";
  };
  for (const Expected& e : {
           // A forward-only benchmark, 79 kernels, recorded from the process's
           // first CUDA call (29.9 s creating the context) on: one-shot.
           Expected{"hta-alexnet.json.gz", "inference", "eager", 1, "one-shot"},
           Expected{"hta-event-sync.json.gz", "unknown", "eager", 1},  // 4 kernels, no framework ops to tell
           Expected{"hta-event-sync-multistream.json.gz", "unknown", "eager", 1},
           Expected{"hta-ns-resolution-v100.json.gz", "training", "eager", 1},
           Expected{"hta-sampled-rank0.json.gz", "training", "eager", 128},
           Expected{"hta-sampled-rank1.json.gz", "training", "eager", 128},
           Expected{"hta-triton.json.gz", "unknown", "compiled", 1, "tiny-span"},  // one Triton kernel of 1.8 µs
           Expected{"kineto-resnet50-v100-workers0.json.gz", "training", "eager", 1},
           Expected{"kineto-resnet50-v100-workers4.json.gz", "training", "eager", 1},
           Expected{"tracelens-bert-small-h100.json.gz", "inference", "eager", 1},
           Expected{"tracelens-timesformer-h100.json.gz", "inference", "eager", 1},
           // Whole programs (Nsight Systems records from the start): MPI and CUDA
           // initialisation before the first kernel take 49% and 59% of them.
           Expected{"nsys/nsys2022-saxpy-mpi-openacc.sqlite", "unknown", "eager", 1, "one-shot"},    // not a framework
           Expected{"nsys/nsys2024-cloverleaf-a100-mpi.sqlite", "unknown", "eager", 1, "one-shot"},  // an HPC mini-app
       }) {
    SCOPED_TRACE(e.file);
    AnalysisOptions o;
    const WorkloadKind w = analyze(open_trace(testing::real_trace(e.file)), o).workload;
    EXPECT_EQ(w.phase, e.phase) << w.phase_evidence;
    EXPECT_EQ(w.execution, e.execution) << w.execution_evidence;
    EXPECT_EQ(w.ranks, e.ranks);
    EXPECT_EQ(w.run, e.run) << w.run_evidence;
    if (w.run == "one-shot" && std::string_view(e.file).starts_with("hta-alexnet")) {
      EXPECT_NE(w.run_evidence.find("the first runtime call, cudaDeviceGetStreamPriorityRange, held the host 29.93 s"),
                std::string::npos)
          << w.run_evidence;
    }
    EXPECT_FALSE(w.bundled);
    // HTA's sampled traces keep only the API calls that launched GPU work;
    // every other real trace has calls besides (syncs, event records, …).
    EXPECT_EQ(w.host_filtered.empty(), !std::string_view(e.file).starts_with("hta-sampled")) << w.host_filtered;
  }
}

// A serving engine's start-up: before each of 5 captures, an eager run of 20
// short kernels, launched late one by one; then cudaStreamBeginCapture, 20
// launches recorded into the graph (no GPU op), cudaStreamEndCapture. With
// `replays`, the graphs are then launched, `launches_each` times each, each
// launch replaying 20 kernels.
Profile capture_trace(bool replays, int graphs = 5, int launches_each = 1) {
  TraceFactory f;
  f.device(0);
  TimeNs t = 1'000'000;
  for (int c = 0; c < graphs; ++c) {
    for (int i = 0; i < 20; ++i, t += 30'000) f.kernel(0, 7, "rms_norm_kernel", t + 20'000, t + 25'000, t + 5'000);
    f.api("cudaStreamBeginCapture", t, t + 2'000);
    for (int i = 0; i < 20; ++i) f.api("cudaLaunchKernel", t + 3'000 + i * 100'000, t + 8'000 + i * 100'000);
    t += 2'000'000;
    f.api("cudaStreamEndCapture", t, t + 5'000);
    f.api("cudaGraphInstantiateWithFlags", t + 6'000, t + 200'000);
    t += 300'000;
  }
  if (replays)
    for (int c = 0; c < graphs * launches_each; ++c, t += 1'000'000) {
      const std::uint32_t id = f.api("cudaGraphLaunch", t, t + 10'000);
      for (int i = 0; i < 20; ++i) {
        KernelRow k;
        k.start = t + 20'000 + i * 6'000;
        k.end = k.start + 5'000;
        k.track = f.builder().gpu_track(0, 7);
        k.name = f.builder().intern("rms_norm_kernel");
        k.grid_x = k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
        k.correlation = id;
        f.builder().add_kernel(k);
      }
    }
  return analyze(f.build());
}

// Launches between a stream's BeginCapture and EndCapture record into a
// graph and run nothing: a trace of captures and the runs before them, with
// no replay, is a program's start-up. Nothing is numbered, nothing answered,
// and the program is said to use CUDA graphs, not told to.
TEST(WorkloadRun, GraphCaptureWithoutReplaysIsSetUp) {
  const Profile p = capture_trace(false);
  const WorkloadKind& w = p.workload;
  EXPECT_EQ(w.graph_captures, 5u);
  EXPECT_EQ(w.captured_launches, 100u);
  EXPECT_EQ(w.capture_ns, 5 * 2'005'000);
  EXPECT_EQ(w.execution, "cuda graphs") << w.execution_evidence;
  EXPECT_NE(w.execution_evidence.find("5 CUDA graph captures recording 100 launches"), std::string::npos)
      << w.execution_evidence;
  EXPECT_EQ(w.run, "graph-capture") << w.run_evidence;
  EXPECT_NE(w.run_evidence.find("cudaStreamBeginCapture to cudaStreamEndCapture"), std::string::npos) << w.run_evidence;
  EXPECT_TRUE(p.findings.empty()) << testing::describe_findings(p);
  EXPECT_TRUE(p.helps.empty());
  // The GPU's idle time during each capture is set-up, like a module load.
  TimeNs warm_up = 0;
  for (const IdleCharge& c : p.idle_charges)
    if (c.cause == "warm-up") warm_up += c.ns;
  EXPECT_GE(warm_up, 4 * 2'000'000) << testing::describe_findings(p);
}

// The same captures, then replayed: the trace holds the work, so it is
// diagnosed, and the program is said to replay graphs.
TEST(WorkloadRun, GraphCaptureThenReplaysIsDiagnosed) {
  const Profile p = capture_trace(true);
  const WorkloadKind& w = p.workload;
  EXPECT_EQ(w.run, "") << w.run_evidence;
  EXPECT_EQ(w.execution, "cuda graphs");
  EXPECT_EQ(w.graph_kernels, 100u);
  EXPECT_EQ(w.graph_captures, 5u);
  const HelpAnswer* a = testing::find_help(p, "cuda-graphs");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_NE(a->reason.find("already replays CUDA graphs"), std::string::npos) << a->reason;
  EXPECT_NE(w.execution_evidence.find("5 CUDA graph captures recording 100 launches"), std::string::npos)
      << w.execution_evidence;
  EXPECT_NE(w.execution_evidence.find("100 of 200 kernels replayed from CUDA graphs (correlated with their graph "
                                      "launch), 5 graph launches"),
            std::string::npos)
      << w.execution_evidence;
  // One graph, captured once and launched once: each count in the singular.
  const Profile one = capture_trace(true, 1);
  EXPECT_NE(one.workload.execution_evidence.find("1 CUDA graph capture recording 20 launches"), std::string::npos)
      << one.workload.execution_evidence;
  EXPECT_NE(one.workload.execution_evidence.find(", 1 graph launch"), std::string::npos)
      << one.workload.execution_evidence;
  EXPECT_EQ(one.workload.execution_evidence.find("1 graph launches"), std::string::npos)
      << one.workload.execution_evidence;
}

// An engine's start-up that captures one graph on an AMD GPU: 2 fill
// kernels, then (with `capture`) hipStreamBeginCapture, 200 launches recorded
// into the graph, hipStreamEndCapture and the graph's instantiation; without
// it the same 200 launch calls launch nothing the trace kept. `frames`: the
// program's Python frames and range around the capture, under an
// interpreter's frame; `engine`: their path names SGLang's or vLLM's code
// ("" a program of its own).
Profile tiny_capture(bool capture, bool frames, std::string_view engine) {
  TraceFactory f;
  f.device(0, 304, 9, "AMD Instinct MI300X");
  f.kernel(0, 7, "fill_kernel", 1'000'000, 1'005'000);
  f.kernel(0, 7, "fill_kernel", 1'100'000, 1'106'000);
  const std::string root = engine == "sglang" ? "/sgl-workspace/sglang/python/sglang/srt/model_executor/"
                           : engine == "vllm" ? "/usr/lib/python3/vllm/worker/"
                                              : "/app/";
  if (frames) {
    const RangeKind a = RangeKind::annotation;
    f.range("threading.py(1016): _bootstrap_inner", 0, 40'000'000, 1, a, "python_function");
    f.range(root + "cuda_graph_runner.py(1201): capture_one_batch_size", 500'000, 35'000'000, 1, a, "python_function");
    f.range(root + "cuda_graph_runner.py(941): _capture_graph", 1'500'000, 34'000'000, 1, a, "python_function");
    f.range("torch/cuda/graphs.py(98): capture_begin", 1'900'000, 2'100'000, 1, a, "python_function");
    f.range("capture_32_DECODE", 1'400'000, 34'500'000, 1, a, "user_annotation");
  }
  if (capture) f.api("hipStreamBeginCapture", 2'000'000, 2'003'000);
  for (int i = 0; i < 200; ++i) f.api("hipModuleLaunchKernel", 2'100'000 + i * 140'000, 2'105'000 + i * 140'000);
  if (capture) {
    f.api("hipStreamEndCapture", 32'000'000, 32'005'000);
    f.api("hipGraphInstantiateWithFlags", 32'010'000, 33'570'000);
  }
  return analyze(f.build());
}

// A capture leaves the GPU microseconds of work: the trace is the capture,
// said as one (what ran it, its host time, the graph's instantiation, that
// its kernels run at replay) with the engine's own way to profile replays;
// the host's recording and the lone kernels are not findings even unnumbered.
TEST(WorkloadRun, ACaptureWithLittleGpuWorkIsTheCapture) {
  const Profile p = tiny_capture(true, true, "sglang");
  const WorkloadKind& w = p.workload;
  EXPECT_EQ(w.engine, "sglang");
  EXPECT_EQ(w.run, "graph-capture") << w.run_evidence;
  for (const char* said :
       {"1 HIP graph capture (hipStreamBeginCapture to hipStreamEndCapture: 30.0 ms of host time, 75% of",
        "recording 200 launches whose kernels run only when the graph is replayed; hipGraphInstantiateWithFlags 1.6 "
        "ms), in cuda_graph_runner.capture_one_batch_size → _capture_graph, and",
        "the runs before it (2 kernels, 100% of their time ending before the last capture does)",
        "SGLANG_TORCH_PROFILER_DIR", "/start_profile and /stop_profile", "sglang.bench_serving"})
    EXPECT_NE(w.run_evidence.find(said), std::string::npos) << said << "\n" << w.run_evidence;
  EXPECT_TRUE(p.findings.empty()) << testing::describe_findings(p);
  EXPECT_TRUE(p.helps.empty());
  for (const Finding& f : p.minor_findings) {
    EXPECT_NE(f.id, "step-host-time");
    EXPECT_NE(f.id, "low-concurrency");
  }
  // vLLM's entry points for vLLM; a program of its own gets torch.profiler's
  // schedule, and without Python frames the range the program named.
  const Profile vllm = tiny_capture(true, true, "vllm");
  EXPECT_NE(vllm.workload.run_evidence.find("VLLM_TORCH_PROFILER_DIR"), std::string::npos)
      << vllm.workload.run_evidence;
  EXPECT_NE(vllm.workload.run_evidence.find("start_profile()"), std::string::npos) << vllm.workload.run_evidence;
  const Profile own = tiny_capture(true, false, "");
  EXPECT_EQ(own.workload.run, "graph-capture") << own.workload.run_evidence;
  EXPECT_EQ(own.workload.run_evidence.find(", in "), std::string::npos) << own.workload.run_evidence;
  EXPECT_EQ(own.workload.run_evidence.find("SGLANG"), std::string::npos) << own.workload.run_evidence;
  // The same microseconds of work with no capture stay too little to diagnose.
  const Profile plain = tiny_capture(false, true, "sglang");
  EXPECT_EQ(plain.workload.run, "tiny-span") << plain.workload.run_evidence;
}

// A graph captured and launched once: the replay's kernels are the one
// steady-state figure such a trace gives, said with the capture; the waits
// of the eager runs before it say nothing of a steady state that replays the
// graph. Launched more often than captured, the trace is a steady state.
TEST(WorkloadRun, AOneTimeCaptureSaysItsReplayAndNotItsWaits) {
  const Profile one = capture_trace(true, 1);
  const WorkloadKind& w = one.workload;
  EXPECT_EQ(w.replay_launches, 1u);
  EXPECT_EQ(w.replay_kernels, 20u);
  EXPECT_EQ(w.replay_kernel_ns, 100'000);
  EXPECT_NE(w.execution_evidence.find("the graph launched after the capture (1 graph launch) ran 20 kernels, 100.0 µs "
                                      "of kernel time ("),
            std::string::npos)
      << w.execution_evidence;
  // The eager runs before the capture wait for their launches, yet whether
  // later calls do the trace cannot tell: launch-bound is a minor line.
  EXPECT_FALSE(testing::find_finding(one, "launch-bound")) << testing::describe_findings(one);
  ASSERT_TRUE(testing::find_any_finding(one, "launch-bound")) << testing::describe_findings(one);
  for (const char* id : {"larger-batch", "more-streams"}) {
    const HelpAnswer* a = testing::find_help(one, id);
    ASSERT_TRUE(a) << id;
    EXPECT_EQ(a->verdict, Verdict::unknown) << id << ": " << a->reason;
    EXPECT_NE(a->reason.find("one-time CUDA graph capture (1 capture, 1 graph launch"), std::string::npos) << a->reason;
  }
  // The graph replayed three times: a steady state, whose launch waits answer.
  const Profile steady = capture_trace(true, 1, 3);
  EXPECT_EQ(steady.workload.replay_launches, 3u);
  for (const HelpAnswer& a : steady.helps) EXPECT_EQ(a.reason.find("one-time"), std::string::npos) << a.reason;
  EXPECT_TRUE(testing::find_finding(steady, "launch-bound")) << testing::describe_findings(steady);
  const HelpAnswer* batch = testing::find_help(steady, "larger-batch");
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->verdict, Verdict::yes) << batch->reason;
  // No capture in the trace: nothing said of a replay.
  EXPECT_EQ(tiny_capture(false, false, "").workload.replay_launches, 0u);
}

// GPU ops whose correlation ids span a thousand times as many API calls are
// a sample: nothing numbered, no answers. Ids as dense as a complete
// trace's (one op in 60) are not.
TEST(WorkloadRun, GpuOpsSpreadOverManyMoreCallsAreASample) {
  auto trace = [](std::uint32_t id_step, int polls = 0) {
    TraceFactory f;
    f.device(0);
    // A program that polls between kernels records its polls: ids used, not dropped.
    for (int i = 0; i < polls; ++i) f.api("cudaEventQuery", 100 + i, 101 + i);
    for (std::uint32_t i = 0; i < 20; ++i) {
      KernelRow k;
      k.start = 1'000'000 + TimeNs(i) * 2'000'000;
      k.end = k.start + 100'000;
      k.track = f.builder().gpu_track(0, 7);
      k.name = f.builder().intern("gemm_kernel");
      k.grid_x = k.grid_y = k.grid_z = 1;
      k.block_x = k.block_y = k.block_z = 1;
      k.correlation = 1 + i * id_step;
      f.builder().add_kernel(k);
    }
    return analyze(f.build());
  };
  const Profile sampled = trace(2'500);
  EXPECT_EQ(sampled.workload.run, "sampled");
  EXPECT_NE(sampled.workload.run_evidence.find("its 20 GPU ops carry correlation ids spanning 47,501 API calls"),
            std::string::npos)
      << sampled.workload.run_evidence;
  EXPECT_TRUE(sampled.findings.empty()) << testing::describe_findings(sampled);
  EXPECT_TRUE(sampled.helps.empty());
  EXPECT_EQ(trace(60).workload.run, "");
  EXPECT_EQ(trace(2'500, 2'000).workload.run, "");
  // (HTA's trace_compare fragments hold 17 ops over 42,087 ids.)
  const Profile real = analyze(open_trace(testing::real_trace("hta-sampled-rank0.json.gz")), {});
  EXPECT_EQ(real.workload.run, "");  // its ops are one in 216 ids: all its launches are kept
}

// A trace whose 100 or more API calls all launched GPU work was filtered:
// its syncs are unknown, not none.
TEST(WorkloadRun, ATraceOfLaunchCallsAloneWasFiltered) {
  auto trace = [](bool sync) {
    TraceFactory f;
    f.device(0);
    for (int i = 0; i < 120; ++i) f.kernel(0, 7, "gemm_kernel", 1'000'000 + i * 50'000, 1'040'000 + i * 50'000);
    if (sync) f.sync(SyncType::context, 0, kNoId, 8'000'000, 8'100'000);
    return analyze(f.build());
  };
  const Profile filtered = trace(false);
  EXPECT_NE(filtered.workload.host_filtered.find("every one of its 120 API calls launched a GPU op"), std::string::npos)
      << filtered.workload.host_filtered;
  EXPECT_EQ(trace(true).workload.host_filtered, "");
}

}  // namespace
}  // namespace gpuscope
