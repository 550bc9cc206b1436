// What the traced program is (Profile::workload): training or inference,
// eager, compiled or replaying CUDA graphs, how many ranks, and whether it is
// gpuscope's bundled workload. Then the findings' advice fitted to it: no
// "use CUDA graphs" for a run that already replays them, no weight-update
// advice for inference, no bundled-workload switch for other programs.
//
// [SECTION] Recognition, from the names of the trace's ops and kernels
// [SECTION] Jobs: the ranks' kinds together
// [SECTION] Advice that fits
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/detail/context.h"
#include "analysis/format.h"

namespace gpuscope::detail {

namespace {

// An op of the backward pass: PyTorch's autograd nodes (ConvolutionBackward0,
// "autograd::engine::evaluate_function: AddmmBackward0"), aten's *_backward
// ops, NVTX ranges named backward (the bundled workload's `backward`,
// `<layer>.backward`).
bool backward_op(std::string_view name) {
  return name.find("Backward") != std::string_view::npos || name.find("_backward") != std::string_view::npos ||
         name.ends_with("backward") || contains_nocase(name, "backprop");  // TensorFlow: Conv2DBackpropFilter
}
// The weight update: PyTorch's Optimizer.step#SGD.step and zero_grad ranges,
// NVTX ranges named optimizer.
bool optimizer_op(std::string_view name) {
  return name.starts_with("Optimizer.") || contains_nocase(name, "optimizer") ||
         name.find("ApplyGradientDescent") != std::string_view::npos ||  // TensorFlow's training ops
         name.find("ApplyAdam") != std::string_view::npos || name.find("ApplyMomentum") != std::string_view::npos;
}
// Kernels only a backward pass or an optimizer runs: cuDNN's and CUTLASS's
// wgrad/dgrad, flash attention's bwd, *_backward_* kernels, the fused and
// foreach optimizers.
bool backward_kernel(std::string_view name) {
  return contains_nocase(name, "backward") || contains_nocase(name, "wgrad") || contains_nocase(name, "dgrad") ||
         contains_nocase(name, "_bwd") || contains_nocase(name, "bprop") || contains_nocase(name, "backprop");
}
bool optimizer_kernel(std::string_view name) {
  // ("lamb" is not one: every lambda in a template argument would match)
  return contains_nocase(name, "adam") || contains_nocase(name, "sgd_") ||
         name.find("multi_tensor_apply") != std::string_view::npos;
}
// Serving engines and inference annotations.
bool inference_op(std::string_view name) {
  return contains_nocase(name, "inference_mode") || contains_nocase(name, "execute_model") ||
         contains_nocase(name, "vllm") || contains_nocase(name, "sglang") || contains_nocase(name, "prefill") ||
         contains_nocase(name, "decode_step");
}
bool compiled_op(std::string_view name) {
  return name.find("Torch-Compiled Region") != std::string_view::npos ||
         name.find("CompiledFunction") != std::string_view::npos ||
         name.find("CompiledFxGraph") != std::string_view::npos || name.find("torch_compile") != std::string_view::npos;
}
bool triton_kernel(std::string_view name) { return name.starts_with("triton_") || name.starts_with("triton::"); }

// The first few distinct names a test matched, quoted, for the evidence;
// kernels by their short names (a demangled template name runs to hundreds
// of characters).
struct Examples {
  std::uint64_t count = 0;  // rows matched
  std::vector<std::string> names;
  void add(std::string_view name, std::uint64_t rows, bool kernel = false) {
    count += rows;
    if (names.size() < 2) names.push_back(kernel ? format::short_kernel_name(name, 60) : std::string(name));
  }
  std::string said() const {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ", ") + ("\"" + n + "\"");
    return s;
  }
};

}  // namespace

// [SECTION] Recognition ------------------------------------------------------------------------

WorkloadKind recognise_workload(const Trace& t) {
  WorkloadKind w;
  const TraceMeta& m = t.meta();
  w.bundled = m.command_line.find("resnet-train") != std::string::npos;
  w.ranks = m.world_size > 1 ? static_cast<std::uint32_t>(m.world_size) : 1;

  // Rows per distinct name, ops and kernels (each name tested once).
  std::vector<std::uint64_t> op_rows(t.strings().size(), 0), kernel_rows(t.strings().size(), 0);
  const RangeTable& rg = t.ranges();
  std::uint64_t ops = 0, framework_ops = 0;  // op ranges; … of them PyTorch's cpu_op events
  const StringId cpu_op = t.strings().find("cpu_op");
  for (RowIndex r = 0; r < rg.size(); ++r)
    if (t.is_op_range(r)) {
      ++op_rows[rg.name[r]], ++ops;
      if (rg.kind_at(r) == RangeKind::annotation && rg.domain[r] == cpu_op) ++framework_ops;
    }
  const KernelTable& k = t.kernels();
  // Kernel rows per name only when some name is one the tests below look for.
  if (any_string(t, [](std::string_view n) { return backward_kernel(n) || optimizer_kernel(n) || triton_kernel(n); }))
    for (std::size_t i = 0; i < k.size(); ++i) ++kernel_rows[k.name[i]];
  if (!k.graph_id.empty())
    for (std::size_t i = 0; i < k.size(); ++i) w.graph_kernels += k.graph_id[i] != 0;
  Examples backward_ops, optimizer_ops, inference_ops, compiled_ops, backward_kernels, optimizer_kernels, triton;
  for (StringId id = 0; id < op_rows.size(); ++id) {
    if (op_rows[id]) {
      const std::string_view n = t.str(id);
      if (backward_op(n)) backward_ops.add(n, op_rows[id]);
      if (optimizer_op(n)) optimizer_ops.add(n, op_rows[id]);
      if (inference_op(n)) inference_ops.add(n, op_rows[id]);
      if (compiled_op(n)) compiled_ops.add(n, op_rows[id]);
    }
    if (kernel_rows[id]) {
      const std::string_view n = t.str(id);
      if (backward_kernel(n)) backward_kernels.add(n, kernel_rows[id], true);
      if (optimizer_kernel(n)) optimizer_kernels.add(n, kernel_rows[id], true);
      if (triton_kernel(n)) triton.add(n, kernel_rows[id], true);
    }
  }
  // Graph launches: API calls counted per name, each name tested once.
  auto graph_launch = [](std::string_view n) {
    return n.starts_with("cudaGraphLaunch") || n.starts_with("cuGraphLaunch");
  };
  std::uint64_t graph_launches = 0;
  if (any_string(t, graph_launch)) {
    std::vector<std::uint64_t> call_rows(t.strings().size(), 0);
    for (StringId name : t.api_calls().name) ++call_rows[name];
    for (StringId id = 0; id < call_rows.size(); ++id)
      if (call_rows[id] && graph_launch(t.str(id))) graph_launches += call_rows[id];
  }

  auto part = [](const Examples& e, const char* what) {
    return e.count ? format::count(e.count) + " " + what + " (" + e.said() + ")" : std::string();
  };
  auto join = [](std::initializer_list<std::string> parts) {
    std::string s;
    for (const std::string& p : parts)
      if (!p.empty()) s += (s.empty() ? "" : "; ") + p;
    return s;
  };
  if (backward_ops.count || optimizer_ops.count || backward_kernels.count || optimizer_kernels.count) {
    w.phase = "training";
    w.phase_evidence = join({part(backward_ops, "backward ops"), part(optimizer_ops, "optimizer ops"),
                             part(backward_kernels, "backward kernels"), part(optimizer_kernels, "optimizer kernels")});
  } else if (inference_ops.count || framework_ops >= 100) {
    // Only a framework's own op events tell inference from a trace that
    // just does not name its backward pass (kernel names alone do not).
    w.phase = "inference";
    w.phase_evidence = join({part(inference_ops, "inference ops"),
                             "no backward or optimizer op or kernel among " + format::count(framework_ops) +
                                 " framework ops and " + format::count(k.size()) + " kernels"});
  } else {
    w.phase_evidence = "no backward or optimizer op or kernel, and too few framework ops (" +
                       format::count(framework_ops) + ") to call it inference";
  }

  const std::string graphs = w.graph_kernels
                                 ? format::count(w.graph_kernels) + " of " + format::count(k.size()) +
                                       " kernels replayed from CUDA graphs (graph ids)" +
                                       (graph_launches ? ", " + format::count(graph_launches) + " graph launches" : "")
                                 : std::string();
  const std::string compiled = join({part(triton, "Triton kernels"), part(compiled_ops, "compiled regions")});
  if (w.graph_kernels * 10 >= k.size() && w.graph_kernels > 0) {
    w.execution = "cuda graphs";
    w.execution_evidence = join({graphs, compiled});
  } else if (triton.count || compiled_ops.count) {
    w.execution = "compiled";
    w.execution_evidence = join({compiled, graphs});
  } else {
    w.execution_evidence =
        join({graphs.empty() ? "no kernel replayed from a CUDA graph" : graphs, "no Triton kernel or compiled region"});
  }
  return w;
}

// [SECTION] Jobs -------------------------------------------------------------------------------

WorkloadKind pool_workloads(const std::vector<const WorkloadKind*>& ranks) {
  WorkloadKind w;
  if (ranks.empty()) return w;
  w = *ranks.front();
  w.ranks = static_cast<std::uint32_t>(ranks.size());
  w.graph_kernels = 0;
  for (const WorkloadKind* r : ranks) {
    w.graph_kernels += r->graph_kernels;
    w.bundled = w.bundled && r->bundled;
    if (r->phase == "training" && w.phase != "training") {  // one rank's backward makes the job a training job
      w.phase = r->phase;
      w.phase_evidence = r->phase_evidence;
    }
    if (r->execution != w.execution && r->execution != "eager" && w.execution == "eager") {
      w.execution = r->execution;
      w.execution_evidence = r->execution_evidence;
    }
  }
  if (w.ranks > 1) {
    w.phase_evidence += " (first rank that shows it)";
    w.execution_evidence += " (first rank that shows it)";
  }
  return w;
}

// [SECTION] Advice that fits ---------------------------------------------------------------------

void fit_to_workload(const WorkloadKind& w, std::vector<Finding>& findings) {
  // Inference has no weight update: a rule that took its kernels for one was wrong.
  if (w.phase == "inference")
    findings.erase(std::remove_if(findings.begin(), findings.end(),
                                  [](const Finding& f) {
                                    return f.id == "serialized-weight-update" || f.id == "unfused-optimizer";
                                  }),
                   findings.end());
  for (Finding& f : findings) {
    std::string& r = f.recommendation;
    if (!w.bundled)
      if (const std::size_t at = r.find(" Bundled workload:"); at != std::string::npos) r.erase(at);
    if (w.execution == "cuda graphs" && (f.id == "launch-bound" || f.id == "op-launch-overhead"))
      r = "This run already replays CUDA graphs (" + format::count(w.graph_kernels) +
          " kernels from graphs): the launch gaps left are outside them. Capture what still runs eagerly between "
          "graph launches (the optimizer step, data-dependent parts: torch.compile(mode='reduce-overhead') "
          "captures what it can), fuse the small kernels that stay eager, and give each kernel more work with a "
          "larger batch.";
    if (w.phase == "inference" && f.id == "exposed-communication" &&
        r.find("Overlap the gradient all-reduce with the backward pass") != std::string::npos)
      r = "Overlap the collectives with compute: in tensor-parallel inference, overlap each layer's all-reduce or "
          "all-gather with the next GEMMs (asynchronous tensor parallelism, fused GEMM + collective kernels, NCCL "
          "user buffers), or use fewer GPUs per model replica when communication outweighs the compute it spreads.";
  }
}

}  // namespace gpuscope::detail
