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

// The framework, by the names only it gives ops and kernels: PyTorch's aten
// ops, autograd nodes and ATen kernels; TensorFlow's ops and Eigen/TF kernels;
// XLA's (JAX's) computations and fusions.
bool pytorch_name(std::string_view n) {
  return n.starts_with("aten::") || n.starts_with("at::native::") || n.starts_with("autograd::") ||
         n.starts_with("ProfilerStep#") || n.starts_with("Optimizer.step#") || n.starts_with("c10d::") ||
         n.find("at::native::") != std::string_view::npos;
}
bool tensorflow_name(std::string_view n) {
  return n.starts_with("tensorflow::") || n.find("tensorflow::functor") != std::string_view::npos ||
         n.starts_with("Eigen::") || n.find("Eigen::internal::EigenMetaKernel") != std::string_view::npos ||
         n.starts_with("_FusedConv2D") || n.starts_with("Conv2DBackprop") || n.starts_with("FusedBatchNorm");
}
bool jax_name(std::string_view n) {
  return n.starts_with("jit_") || n.starts_with("pjit_") || n.starts_with("xla::") || n.starts_with("loop_fusion") ||
         n.starts_with("input_fusion") || n.starts_with("wrapped_") || n.starts_with("XlaModule");
}
// Gradient all-reduce issued by DDP's reducer: its forward annotation, or a
// collective op launched from inside the backward pass (autograd's hooks).
bool ddp_name(std::string_view n) { return n.find("DistributedDataParallel") != std::string_view::npos; }
bool allreduce_op(std::string_view n) {
  return n == "nccl:all_reduce" || n.starts_with("c10d::allreduce") || n.starts_with("record_param_comms") ||
         n.starts_with("nccl:all_reduce") || n.starts_with("NcclAllReduce") || n == "all_reduce";
}

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
  if (any_string(t, [](std::string_view n) {
        return backward_kernel(n) || optimizer_kernel(n) || triton_kernel(n) || pytorch_name(n) || tensorflow_name(n) ||
               jax_name(n);
      }))
    for (std::size_t i = 0; i < k.size(); ++i) ++kernel_rows[k.name[i]];
  if (!k.graph_id.empty())
    for (std::size_t i = 0; i < k.size(); ++i) w.graph_kernels += k.graph_id[i] != 0;
  Examples backward_ops, optimizer_ops, inference_ops, compiled_ops, backward_kernels, optimizer_kernels, triton;
  Examples torch, tf, jax, ddp;
  for (StringId id = 0; id < op_rows.size(); ++id) {
    if (op_rows[id]) {
      const std::string_view n = t.str(id);
      if (backward_op(n)) backward_ops.add(n, op_rows[id]);
      if (optimizer_op(n)) optimizer_ops.add(n, op_rows[id]);
      if (inference_op(n)) inference_ops.add(n, op_rows[id]);
      if (compiled_op(n)) compiled_ops.add(n, op_rows[id]);
      if (pytorch_name(n)) torch.add(n, op_rows[id]);
      if (tensorflow_name(n)) tf.add(n, op_rows[id]);
      if (jax_name(n)) jax.add(n, op_rows[id]);
      if (ddp_name(n)) ddp.add(n, op_rows[id]);
    }
    if (kernel_rows[id]) {
      const std::string_view n = t.str(id);
      if (backward_kernel(n)) backward_kernels.add(n, kernel_rows[id], true);
      if (optimizer_kernel(n)) optimizer_kernels.add(n, kernel_rows[id], true);
      if (triton_kernel(n)) triton.add(n, kernel_rows[id], true);
      if (pytorch_name(n)) torch.add(n, kernel_rows[id], true);
      if (tensorflow_name(n)) tf.add(n, kernel_rows[id], true);
      if (jax_name(n)) jax.add(n, kernel_rows[id], true);
    }
  }
  // DDP without its annotation: an all-reduce op that runs inside the
  // backward pass (DDP's reducer launches each bucket from autograd's hooks).
  if (!ddp.count && any_string(t, allreduce_op))
    for (RowIndex r = 0; r < rg.size() && ddp.count == 0; ++r) {
      if (!t.is_op_range(r) || !allreduce_op(t.str(rg.name[r]))) continue;
      for (RowIndex q = t.parent_op(r); q != kNoRow; q = t.parent_op(q))
        if (backward_op(t.str(rg.name[q])) || t.str(rg.name[q]).starts_with("autograd::engine::evaluate_function")) {
          ddp.add(std::string(t.str(rg.name[r])) + " inside " + std::string(t.str(rg.name[q])), 1);
          break;
        }
    }
  // Graph launches: API calls counted per name, each name tested once.
  auto graph_launch = [](std::string_view n) {
    return n.starts_with("cudaGraphLaunch") || n.starts_with("cuGraphLaunch");
  };
  std::uint64_t graph_launches = 0, replayed = 0;  // … and the GPU ops correlated to them
  if (any_string(t, graph_launch)) {
    std::vector<std::uint8_t> is_launch(t.strings().size(), 2);  // 2: not tested yet
    const ApiCallTable& api = t.api_calls();
    for (RowIndex a = 0; a < api.size(); ++a) {
      std::uint8_t& l = is_launch[api.name[a]];
      if (l == 2) l = graph_launch(t.str(api.name[a]));
      if (!l) continue;
      ++graph_launches;
      t.for_each_op_of(a, [&](OpRef op) { replayed += op.table == OpTable::kernel; });
    }
  }
  // Graph ids where the recorder kept them, else the kernels correlated to
  // graph launches (a Kineto trace keeps the launch's correlation id on each
  // kernel the graph replayed).
  w.graph_kernels = std::max(w.graph_kernels, replayed);
  w.graph_launches = graph_launches;

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

  // The framework: the one with the most ops and kernels of its own names.
  const std::pair<const Examples*, std::pair<const char*, const char*>> fws[] = {
      {&torch, {"pytorch", "PyTorch ops and kernels"}},
      {&tf, {"tensorflow", "TensorFlow ops and kernels"}},
      {&jax, {"jax", "XLA computations and fusions"}}};
  const Examples* best = nullptr;
  for (const auto& [e, words] : fws)
    if (e->count && (!best || e->count > best->count)) {
      best = e;
      w.framework = words.first;
      w.framework_evidence = part(*e, words.second);
    }
  if (ddp.count) {
    w.data_parallel = "ddp";
    w.data_parallel_evidence = part(ddp, "DDP ops");
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
  w.graph_launches = 0;
  for (const WorkloadKind* r : ranks) {
    w.graph_kernels += r->graph_kernels;
    w.bundled = w.bundled && r->bundled;
    if (r->phase == "training" && w.phase != "training") {  // one rank's backward makes the job a training job
      w.phase = r->phase;
      w.phase_evidence = r->phase_evidence;
    }
    w.graph_launches += r->graph_launches;
    w.data_loading_recorded = w.data_loading_recorded || r->data_loading_recorded;
    if (w.framework == "unknown" && r->framework != "unknown")
      w.framework = r->framework, w.framework_evidence = r->framework_evidence;
    if (w.data_parallel.empty() && !r->data_parallel.empty())
      w.data_parallel = r->data_parallel, w.data_parallel_evidence = r->data_parallel_evidence;
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
