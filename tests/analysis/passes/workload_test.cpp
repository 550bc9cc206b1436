// What the analysis recognises a trace to be (Profile::workload), and the
// findings' advice fitted to it: planted traces for each kind, and the real
// traces with what each one is, written down.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analysis/analyze.h"
#include "analysis/detail/context.h"
#include "import/open_trace.h"
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
  EXPECT_NE(
      w.phase_evidence.find("3 optimizer kernels (\"at::native::(anonymous namespace)::multi_tensor_apply_kernel\")"),
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
      finding("padding-hotspot", "Pad once. Bundled workload: --padding fused."),
      finding("launch-bound", "Capture the step in a CUDA graph."),
      finding("serialized-weight-update", "Overlap the update."),
      finding("exposed-communication", "Overlap the gradient all-reduce with the backward pass: bucket gradients.")};
  WorkloadKind other;
  other.phase = "inference";
  other.execution = "cuda graphs";
  other.graph_kernels = 42;
  std::vector<Finding> a = fs;
  detail::fit_to_workload(other, a);
  ASSERT_EQ(a.size(), 3u);  // inference: no weight update
  EXPECT_EQ(a[0].recommendation, "Pad once.");
  EXPECT_NE(a[1].recommendation.find("already replays CUDA graphs (42 kernels"), std::string::npos);
  EXPECT_EQ(a[2].id, "exposed-communication");
  EXPECT_EQ(a[2].recommendation.find("backward"), std::string::npos) << a[2].recommendation;
  WorkloadKind bundled;
  bundled.phase = "training";
  bundled.bundled = true;
  std::vector<Finding> b = fs;
  detail::fit_to_workload(bundled, b);
  ASSERT_EQ(b.size(), 4u);
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_EQ(b[i].recommendation, fs[i].recommendation);
}

// What each real trace is, read once by hand from its provenance (the
// tests' data README) and its ops.
TEST(Workload, RealTraces) {
  struct Expected {
    const char* file;
    const char* phase;
    const char* execution;
    std::uint32_t ranks;
  };
  for (const Expected& e : {
           Expected{"hta-alexnet.json.gz", "inference", "eager", 1},   // a forward-only benchmark, 79 kernels
           Expected{"hta-event-sync.json.gz", "unknown", "eager", 1},  // 4 kernels, no framework ops to tell
           Expected{"hta-event-sync-multistream.json.gz", "unknown", "eager", 1},
           Expected{"hta-ns-resolution-v100.json.gz", "training", "eager", 1},
           Expected{"hta-sampled-rank0.json.gz", "training", "eager", 128},
           Expected{"hta-sampled-rank1.json.gz", "training", "eager", 128},
           Expected{"hta-triton.json.gz", "unknown", "compiled", 1},  // one Triton kernel
           Expected{"kineto-resnet50-v100-workers0.json.gz", "training", "eager", 1},
           Expected{"kineto-resnet50-v100-workers4.json.gz", "training", "eager", 1},
           Expected{"tracelens-bert-small-h100.json.gz", "inference", "eager", 1},
           Expected{"tracelens-timesformer-h100.json.gz", "inference", "eager", 1},
           Expected{"nsys/nsys2022-saxpy-mpi-openacc.sqlite", "unknown", "eager", 1},    // not a framework
           Expected{"nsys/nsys2024-cloverleaf-a100-mpi.sqlite", "unknown", "eager", 1},  // an HPC mini-app
       }) {
    SCOPED_TRACE(e.file);
    AnalysisOptions o;
    const WorkloadKind w = analyze(open_trace(testing::real_trace(e.file)), o).workload;
    EXPECT_EQ(w.phase, e.phase) << w.phase_evidence;
    EXPECT_EQ(w.execution, e.execution) << w.execution_evidence;
    EXPECT_EQ(w.ranks, e.ranks);
    EXPECT_FALSE(w.bundled);
  }
}

}  // namespace
}  // namespace gpuscope
