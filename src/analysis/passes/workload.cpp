// What the traced program is (Profile::workload): training or inference,
// eager, compiled or replaying CUDA graphs, how many ranks, and whether it is
// gpuscope's bundled workload. Then the findings' advice fitted to it: no
// "use CUDA graphs" for a run that already replays them, no weight-update
// advice for inference, no bundled-workload switch for other programs.
//
// [SECTION] The run (no kernels, a span of microseconds, a one-shot program)
// [SECTION] Recognition (from the names of the trace's ops and kernels)
// [SECTION] The optimizer (per-parameter, foreach or fused, from the kernels inside its steps)
// [SECTION] Jobs (the ranks' kinds together)
// [SECTION] Advice that fits
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/detail/context.h"
#include "analysis/ops/occupancy.h"
#include "analysis/util/intervals.h"
#include "words/format.h"

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
  return is_optimizer_phase(name) || contains_nocase(name, "optimizer") ||
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
// Inference annotations. A serving engine's own ops (vllm::…, sglang::…)
// are counted as the engine's, not as inference markers: an engine's GEMM op
// says which library ran, not that the run was inference.
bool inference_op(std::string_view name) {
  return contains_nocase(name, "inference_mode") || contains_nocase(name, "execute_model") ||
         contains_nocase(name, "prefill") || contains_nocase(name, "decode_step");
}
bool compiled_op(std::string_view name) { return is_compiled_region(name); }
bool triton_kernel(std::string_view name) { return name.starts_with("triton_") || name.starts_with("triton::"); }

// The framework, by the names only it gives ops and kernels: PyTorch's aten
// ops, autograd nodes and ATen kernels; TensorFlow's ops and Eigen/TF kernels;
// XLA's (JAX's) computations and fusions.
bool pytorch_name(std::string_view n) {
  return n.starts_with("aten::") || n.starts_with("at::native::") || n.starts_with("autograd::") ||
         is_profiler_step(n) || is_optimizer_step(n) || n.starts_with("c10d::") ||
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
// LLM serving engines, by their own op namespaces (torch custom ops
// registered by the engine), kernels and Python sources.
bool vllm_name(std::string_view n) {
  return n.find("vllm::") != std::string_view::npos || n.find("vllm/") != std::string_view::npos;
}
bool sglang_name(std::string_view n) {
  return n.starts_with("sglang::") || n.starts_with("sglang_profiler::") || n.starts_with("sgl_kernel::") ||
         n.find("sglang/") != std::string_view::npos || n.find("sgl_kernel") != std::string_view::npos ||
         n.find("sgl_hip") != std::string_view::npos;  // ROCm
}
// Gradient all-reduce issued by DDP's reducer: its forward annotation, or a
// collective op launched from inside the backward pass (autograd's hooks).
bool ddp_name(std::string_view n) { return n.find("DistributedDataParallel") != std::string_view::npos; }
// DDP's reducer's own ops (torch::distributed::reducer::mul_out,
// torch.distributed.ddp.reducer::copy_bucket_to_grad): DDP where its forward
// range is not in the trace.
bool ddp_reducer_name(std::string_view n) {
  return n.find("distributed::reducer::") != std::string_view::npos ||
         n.find("distributed.ddp.reducer::") != std::string_view::npos;
}
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

// [SECTION] The run ----------------------------------------------------------------------------

// GPU work spanning less than this, and less than kTinyShare of the
// recording, is too little to say anything about (a few launches' worth in
// a recording of the host's work): the figures over it are noise.
constexpr TimeNs kTinySpan = 100'000;
constexpr double kTinyShare = 0.01;
// A whole-program recording whose setup and teardown take at least this
// share of it is a one-shot run.
constexpr double kOneShotShare = 1.0 / 3;
// A process's first CUDA call that lasts this long initialised CUDA (a
// context's creation takes 0.1 s to tens of seconds; a call on a running
// context, microseconds).
constexpr TimeNs kInitCallNs = 100'000'000;

// Calls only a program's start or exit makes: CUDA's initialisation and
// contexts, module loading (is_start_api) and unloading, a device reset
// (the runtime's names may carry a version suffix: cudaDeviceReset_v3020).
bool lifetime_call(std::string_view n) {
  if (is_start_api(n)) return true;
  for (std::string_view p : {"cuCtxDestroy", "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxReset", "cuModuleUnload",
                             "cuModuleGetLoadingMode", "cuLibraryUnload", "cudaDeviceReset"})
    if (n.starts_with(p)) return true;
  return false;
}

// The host's time before the first kernel and after the last, by name (API
// calls other than kernel launches, and outermost CPU ranges): "MPI_Init
// 645.7 ms, cudaHostRegister 316.4 ms".
struct Outside {
  std::map<StringId, TimeNs> setup, teardown;
  std::uint64_t lifetime_calls = 0;
  std::map<StringId, std::uint64_t> lifetime;  // those calls by name
};

Outside outside_the_kernels(const Trace& t, TimeRange kernels) {
  Outside o;
  auto add = [&](StringId name, TimeNs start, TimeNs end) {
    if (end <= kernels.start)
      o.setup[name] += end - start;
    else if (start >= kernels.end)
      o.teardown[name] += end - start;
    else
      return false;
    return true;
  };
  // The outermost ranges outside the kernels, per thread: a call inside one
  // (cudaHostRegister inside MPI_Init) is part of its time, not more of it.
  std::map<TrackId, std::vector<TimeRange>> outer;
  const RangeTable& r = t.ranges();
  for (RowIndex i = 0; i < r.size(); ++i)
    if (t.tracks()[r.track_at(i)].kind == TrackKind::cpu && r.kind_at(i) != RangeKind::mark && r.depth[i] == 0 &&
        add(r.name[i], r.start[i], r.end[i]))
      outer[r.track_at(i)].push_back({r.start[i], r.end[i]});
  for (auto& [track, v] : outer)
    std::sort(v.begin(), v.end(), [](TimeRange x, TimeRange y) { return x.start < y.start; });
  auto inside_range = [&](TrackId track, TimeNs start, TimeNs end) {
    const auto it = outer.find(track);
    if (it == outer.end()) return false;
    const std::vector<TimeRange>& v = it->second;
    auto after = std::upper_bound(v.begin(), v.end(), start, [](TimeNs s, TimeRange x) { return s < x.start; });
    return after != v.begin() && std::prev(after)->end >= end;
  };
  const ApiCallTable& a = t.api_calls();
  NameMemo lifetime(t, lifetime_call);
  for (RowIndex i = 0; i < a.size(); ++i) {
    // A kernel's launch is the work's, not setup (the first kernel's comes just before it).
    if (a.op_table[i] == static_cast<std::uint8_t>(OpTable::kernel)) continue;
    if (a.end[i] > kernels.start && a.start[i] < kernels.end) continue;
    if (lifetime(a.name[i])) ++o.lifetime_calls, ++o.lifetime[a.name[i]];
    if (!inside_range(a.track_at(i), a.start[i], a.end[i])) add(a.name[i], a.start[i], a.end[i]);
  }
  return o;
}

// "cudaMalloc 240.5 ms, MPI_Init 645.7 ms": the longest three.
std::string longest(const Trace& t, const std::map<StringId, TimeNs>& by_name) {
  std::vector<std::pair<TimeNs, StringId>> v;
  for (const auto& [name, ns] : by_name) v.push_back({ns, name});
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < 3; ++i)
    s += (s.empty() ? "" : ", ") + std::string(t.str(v[i].second)) + " " + format::duration(v[i].first);
  return s;
}

// A sample of the GPU's ops: CUPTI numbers every API call it records
// (correlation ids), and a complete trace holds a GPU op for one call in
// 60 or fewer (launches among event queries, attribute reads and syncs).
// GPU ops whose ids span a thousand times as many calls or more, over
// 10,000 ids at least, with the trace's API calls as sparse (under one in
// a hundred ids: a program that polls a thousand times a kernel records
// its polls), are what a sampler or filter kept: most of the GPU's work
// between them is missing.
constexpr std::uint64_t kSampledIds = 10'000, kSampledRatio = 1'000;

// A stream's ops run in launch order, so its first and last ops carry about
// its lowest and highest ids: the span is read from them, not every row.
bool sampled_ops(const Trace& t, std::string* evidence) {
  const std::uint64_t n = t.kernels().size() + t.memcpys().size() + t.memsets().size();
  std::uint32_t lo = std::numeric_limits<std::uint32_t>::max(), hi = 0;
  auto ends = [&](TableId table, const std::vector<std::uint32_t>& correlation) {
    for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
      const RowRange r = t.rows_of(table, tr);
      if (r.empty() || correlation[r.begin] == 0 || correlation[r.end - 1] == 0) continue;
      lo = std::min({lo, correlation[r.begin], correlation[r.end - 1]});
      hi = std::max({hi, correlation[r.begin], correlation[r.end - 1]});
    }
  };
  ends(TableId::kernels, t.kernels().correlation);
  ends(TableId::memcpys, t.memcpys().correlation);
  ends(TableId::memsets, t.memsets().correlation);
  if (n == 0 || hi < lo) return false;
  const std::uint64_t ids = std::uint64_t(hi) - lo + 1;
  if (ids < kSampledIds || ids < kSampledRatio * n || 100 * std::uint64_t(t.api_calls().size()) >= ids) return false;
  *evidence = "a sample: its " + format::count(n, "GPU op", "GPU ops") + " carry correlation ids spanning " +
              format::count(ids, "API call", "API calls") + " (one op in " + format::count(ids / n) +
              "; a complete trace has one in 60 or fewer), so most of the GPU's work between them is not in the "
              "trace: utilization, idle time, steps and the critical path cannot be measured from it; profile "
              "without sampling or filtering";
  return true;
}

// A trace filtered down to the launches: 100 or more API calls and every one
// of them launched a GPU op. A program's unfiltered calls always include
// others (event records and queries, syncs, allocations, attribute reads).
void filtered_host(const Trace& t, WorkloadKind* w) {
  const ApiCallTable& a = t.api_calls();
  if (a.size() < 100) return;
  for (RowIndex i = 0; i < a.size(); ++i)
    if (a.op_table[i] == static_cast<std::uint8_t>(OpTable::none)) return;
  w->host_filtered = "every one of its " + format::count(a.size()) +
                     " API calls launched a GPU op, where a program's calls always include others (event records, "
                     "syncs, allocations): the trace was filtered to the launches, so host syncs, event waits and "
                     "what the host did between launches are not in it, and the host's side of the critical path "
                     "is unknown";
}

// A recording of graph captures and the runs before them, no graph replayed:
// at least 90 % of the kernel time ends before the last capture does. That
// is a program's start-up (a serving engine capturing its batch sizes), not
// its steady state, which replays the graphs.
// A captured launch sequence in the vendor's words: a HIP graph where a GPU
// of the trace is plainly not NVIDIA's (PyTorch's CUDA graph API captures
// one on ROCm), a CUDA graph otherwise.
std::string graph_word(const Trace& t) {
  for (const Device& d : t.devices())
    if (!nvidia_gpu(d.name, d.compute_major, d.compute_minor)) return "HIP graph";
  return "CUDA graph";
}

// A Python frame of the program's own ("…/cuda_graph_runner.py(1201):
// capture_one_batch_size" -> "cuda_graph_runner.capture_one_batch_size"),
// empty for the interpreter's and torch's own (threading, multiprocessing,
// torch/cuda/graphs.py, torch/_inductor/…), which name no place to look.
std::string own_frame(std::string_view n) {
  const std::size_t py = n.find(".py("), colon = n.find("): ");
  if (py == std::string_view::npos || colon == std::string_view::npos || colon < py) return {};
  const std::string_view path = n.substr(0, py);
  for (std::string_view lib : {"torch/", "threading", "multiprocessing/", "contextlib", "runpy", "concurrent/"})
    if (path.find(lib) != std::string_view::npos) return {};
  const std::size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1)) + "." +
         std::string(n.substr(colon + 3));
}

// What ran a capture, where the trace says: the two innermost of the
// program's own Python frames around it, outer first ("cuda_graph_runner.
// capture_one_batch_size → _capture_graph"), else the innermost range the
// program named around it (a user annotation, not a profiler step).
std::string capturing_code(const Trace& t, TrackId thread, TimeRange w) {
  const RangeTable& rg = t.ranges();
  const StringId python = t.strings().find("python_function"), user = t.strings().find("user_annotation");
  if (python == StringTable::kNoString && user == StringTable::kNoString) return {};
  std::vector<std::pair<TimeNs, std::string>> frames;  // (length, name): innermost is shortest
  std::pair<TimeNs, std::string> named{-1, {}};
  for (RowIndex r = 0; r < rg.size(); ++r) {
    if (rg.start[r] > w.start || rg.end[r] < w.end || rg.track_at(r) != thread) continue;
    const TimeNs len = rg.end[r] - rg.start[r];
    if (python != StringTable::kNoString && rg.domain[r] == python) {
      if (std::string f = own_frame(t.str(rg.name[r])); !f.empty()) frames.push_back({len, std::move(f)});
    } else if (user != StringTable::kNoString && rg.domain[r] == user &&
               !t.str(rg.name[r]).starts_with("ProfilerStep") && (named.first < 0 || len < named.first)) {
      named = {len, std::string(t.str(rg.name[r]))};
    }
  }
  if (frames.empty()) return named.second.empty() ? std::string() : "the range \"" + named.second + "\"";
  std::sort(frames.begin(), frames.end());
  if (frames.size() == 1) return frames[0].second;
  const std::string& inner = frames[0].second;
  const std::string& outer = frames[1].second;
  const std::size_t dot = outer.find('.');
  const bool same_module = inner.compare(0, dot + 1, outer, 0, dot + 1) == 0;
  return outer + " → " + (same_module ? inner.substr(dot + 1) : inner);
}

// Where to profile the replays instead, for the engine or framework that ran
// the trace (their documented profiler entry points).
std::string replay_profiling(const WorkloadKind& w) {
  if (w.engine == "sglang")
    return "SGLang's server with SGLANG_TORCH_PROFILER_DIR set, over requests sent after start-up between its "
           "/start_profile and /stop_profile endpoints (or python -m sglang.bench_serving ... --profile)";
  if (w.engine == "vllm")
    return "vLLM with VLLM_TORCH_PROFILER_DIR set, over requests sent after start-up between the server's "
           "/start_profile and /stop_profile endpoints, or the LLM class's start_profile() and stop_profile() around "
           "a generate() call";
  if (w.framework == "pytorch")
    return "a training loop's steps or a service's requests after the capture, the first ones skipped "
           "(torch.profiler.schedule(wait=1, warmup=1, active=3))";
  return "a training loop's steps or a service's requests after the capture";
}

// `tiny`: the GPU works microseconds, so where its few kernels fall decides nothing.
bool graph_capture_run(const Trace& t, const GraphCaptures& c, TimeRange recorded, WorkloadKind* w, bool tiny) {
  if (c.captures == 0 || c.launches == 0 || w->graph_kernels > 0 || w->graph_launches > 0) return false;
  const KernelTable& k = t.kernels();
  TimeNs all = 0, before = 0;
  for (RowIndex i = 0; i < k.size(); ++i) {
    all += k.end[i] - k.start[i];
    if (k.end[i] <= c.last_end) before += k.end[i] - k.start[i];
  }
  if (!tiny && 10 * before < 9 * all) return false;
  w->run = "graph-capture";
  const TimeNs covered = intervals::length(c.windows);
  const std::string code = c.each.empty() ? std::string() : capturing_code(t, c.each[0].first, c.each[0].second);
  const bool one = c.captures == 1;
  w->run_evidence =
      "the trace records set-up, not a steady state: " + format::count(c.captures) + " " + graph_word(t) +
      (one ? " capture" : " captures") + " (" + std::string(t.str(c.begin)) + " to " + std::string(t.str(c.end)) +
      ": " + format::duration(covered) + (one ? " of host time, " : " of host time in all, ") +
      format::percent(static_cast<double>(covered) / static_cast<double>(std::max<TimeNs>(1, recorded.duration()))) +
      " of the " + format::duration(recorded.duration()) + " recorded, recording " + format::count(c.launches) +
      " launches whose kernels run only when the graph is replayed" +
      (c.instantiates ? "; " + std::string(t.str(c.instantiate)) + " " + format::duration(c.instantiate_ns) +
                            (c.instantiates > 1 ? " over " + format::count(c.instantiates) + " calls" : "")
                      : "") +
      ")" + (code.empty() ? "" : (one ? ", in " : ", the first in ") + code) + ", and the runs before " +
      (one ? "it (" : "them (") + format::count(k.size(), "kernel", "kernels") + ", " +
      format::percent(all > 0 ? static_cast<double>(before) / static_cast<double>(all) : 1.0) +
      " of their time ending before the last capture does); no graph is replayed in the trace: a program's "
      "start-up. Profile where the graphs replay: " +
      replay_profiling(*w);
  return true;
}

// Processes named as TensorFlow's and JAX's profilers name a device
// ("/device:GPU:0", "/job:localhost/replica:0/task:0/device:GPU:0 Compute",
// "/device:GPU:0/stream:7 Compute"): their events are that device's work,
// which a Chrome trace of those profilers does not mark as kernels, so
// they were kept as host ranges. Said, with their count, rather than
// passed off as the host's time.
std::string device_named_processes(const Trace& t) {
  std::vector<std::uint32_t> pids;
  std::string first;
  for (const Process& p : t.processes())
    if (p.name.find("/device:") != std::string::npos) {
      pids.push_back(p.pid);
      if (first.empty()) first = p.name;
    }
  if (pids.empty()) return {};
  std::uint64_t n = 0;
  const RangeTable& r = t.ranges();
  for (RowIndex i = 0; i < r.size(); ++i) {
    const Track& tr = t.tracks()[r.track_at(i)];
    n += tr.kind == TrackKind::cpu && std::find(pids.begin(), pids.end(), tr.pid) != pids.end();
  }
  if (n == 0) return {};
  return "; " + format::count(n, "event lies", "events lie") + " on " +
         format::count(pids.size(), "process", "processes") + " named as a device (\"" +
         (first.size() > 80 ? first.substr(0, 77) + "..." : first) +
         "\": TensorFlow's and JAX's profilers name devices so), kept as host ranges: gpuscope reads GPU activity "
         "from PyTorch's profiler (Kineto), Nsight Systems' SQLite export and its own captures, not from these "
         "profilers' traces, so the device time is unknown here. Record the program with `gpuscope capture -- "
         "CMD` for its GPU activity";
}

// Kineto's activity types of accelerators other than CUDA and ROCm GPUs
// (libkineto's ActivityType names): their events are kept as host ranges
// under these categories, and gpuscope diagnoses none of them. A trace with
// no kernels but such events says so, rather than only "no kernels".
std::string other_accelerators(const Trace& t) {
  static constexpr std::string_view kKinds[] = {"mtia_ccp_events", "mtia_runtime",        "mtia_insight",      "hpu_op",
                                                "xpu_runtime",     "privateuse1_runtime", "privateuse1_driver"};
  std::vector<std::pair<StringId, std::uint64_t>> counts;
  for (std::string_view kind : kKinds)
    if (const StringId id = t.strings().find(kind); id != StringTable::kNoString) counts.emplace_back(id, 0);
  if (counts.empty()) return {};
  for (RowIndex r = 0; r < t.ranges().size(); ++r)
    for (auto& [id, n] : counts) n += t.ranges().domain[r] == id;
  std::string listed;
  for (const auto& [id, n] : counts)
    if (n) listed += (listed.empty() ? "" : ", ") + format::count(n) + " " + std::string(t.str(id));
  if (listed.empty()) return {};
  return "; the trace records another accelerator's work (" + listed +
         " events, kept as host ranges), which gpuscope does not model: its device time is not analysed";
}

// GPU runtime calls that launch GPU work or copy or fill memory (CUDA's and
// HIP's runtime and driver calls, graph launches).
bool gpu_work_call(std::string_view n) {
  for (std::string_view part : {"LaunchKernel", "cuLaunch", "GraphLaunch", "Memcpy", "Memset"})
    if (n.find(part) != std::string_view::npos) return true;
  return false;
}
// Host ops that launch GPU work wherever the trace records it: PyTorch's
// NCCL collectives (nccl:all_reduce, …), aten::record_stream (a CUDA
// stream's use of a tensor), cuDNN's and MIOpen's ops, and the fused
// optimizer classes of apex and DeepSpeed (Optimizer.step#FusedAdam.step).
bool gpu_work_op(std::string_view n) {
  return n.starts_with("nccl:") || n == "aten::record_stream" || contains_nocase(n, "cudnn") ||
         contains_nocase(n, "miopen") || (is_optimizer_step(n) && n.find("#Fused") != std::string_view::npos);
}

// "6 nccl:all_to_all, 48 aten::record_stream": the names counted, most
// first, up to three.
std::string most_named(const Trace& t, const std::map<StringId, std::uint64_t>& counts) {
  std::vector<std::pair<std::uint64_t, StringId>> by_count;
  for (const auto& [name, n] : counts) by_count.push_back({n, name});
  std::sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string s;
  for (std::size_t i = 0; i < by_count.size() && i < 3; ++i)
    s += (s.empty() ? "" : ", ") + format::count(by_count[i].first) + " " + std::string(t.str(by_count[i].second));
  return s;
}

// What shows that a trace without GPU ops comes from a program that used
// GPUs: the GPUs its device list names (Kineto's deviceProperties), GPU
// runtime calls that launch or copy (not where the trace captures CUDA
// graphs: launches into a graph run nothing then), host ops that launch GPU
// work, a GPU process-group backend (NCCL, RCCL). Empty where nothing does.
std::string gpu_use(const Trace& t, bool capturing) {
  std::vector<std::string> said;
  if (const std::string_view listed = t.meta().property("chrome.devices_listed"); !listed.empty() && listed != "0")
    said.push_back("its device list (deviceProperties) names " + std::string(listed) +
                   (listed == "1" ? " GPU" : " GPUs"));
  std::map<StringId, std::uint64_t> calls, ops;
  NameMemo<bool (*)(std::string_view)> call_named(t, &gpu_work_call), op_named(t, &gpu_work_op);
  const ApiCallTable& a = t.api_calls();
  for (RowIndex i = 0; i < a.size() && !capturing; ++i)
    if (call_named(a.name[i])) ++calls[a.name[i]];
  const RangeTable& r = t.ranges();
  for (RowIndex i = 0; i < r.size(); ++i)
    if (r.kind_at(i) != RangeKind::mark && op_named(r.name[i])) ++ops[r.name[i]];
  if (!calls.empty()) said.push_back("GPU runtime calls that launch or copy (" + most_named(t, calls) + ")");
  if (!ops.empty()) said.push_back("host ops that launch GPU work (" + most_named(t, ops) + ")");
  const std::string_view backend = t.meta().property("chrome.distributed.backend");
  if (contains_nocase(backend, "nccl"))
    said.push_back("its process group's backend, " + std::string(backend) + ", runs collectives on GPUs");
  std::string s;
  for (const std::string& part : said) s += (s.empty() ? "" : "; ") + part;
  return s;
}

// Where the host's time went, by its outermost ranges (those below the
// profiler's step ranges where there are some, the steps themselves and
// Kineto's span of the whole recording, category "Trace", not
// counted): up to three names holding 5 % of the recording or more, each
// with the union of its ranges over every thread. For a trace with no GPU
// work: what the host did.
std::string host_time(const Trace& t, TimeNs recorded) {
  std::map<StringId, std::vector<TimeRange>> by_name;
  std::map<StringId, std::vector<TrackId>> threads;
  const RangeTable& r = t.ranges();
  NameMemo<bool (*)(std::string_view)> step_named(t, &is_step_range_name);
  const StringId span = t.strings().find("Trace");
  for (RowIndex i = 0; i < r.size(); ++i) {
    if (t.tracks()[r.track_at(i)].kind != TrackKind::cpu || r.kind_at(i) == RangeKind::mark) continue;
    if (step_named(r.name[i]) || (span != StringTable::kNoString && r.domain[i] == span)) continue;
    const RowIndex up = r.parent[i];
    if (up != kNoRow && !step_named(r.name[up])) continue;
    by_name[r.name[i]].push_back({r.start[i], r.end[i]});
    std::vector<TrackId>& on = threads[r.name[i]];
    if (std::find(on.begin(), on.end(), r.track_at(i)) == on.end()) on.push_back(r.track_at(i));
  }
  std::vector<std::pair<TimeNs, StringId>> longest_first;
  for (auto& [name, ranges] : by_name) longest_first.push_back({intervals::length(intervals::union_of(ranges)), name});
  std::sort(longest_first.begin(), longest_first.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string s;
  for (std::size_t i = 0; i < longest_first.size() && i < 3; ++i) {
    const auto& [ns, name] = longest_first[i];
    if (recorded <= 0 || ns * 20 < recorded) break;
    const std::size_t n = by_name[name].size(), on = threads[name].size();
    const std::string_view named = t.str(name);
    s += (s.empty() ? "" : ", ") + (named.size() > 60 ? format::short_kernel_name(named, 60) : std::string(named)) +
         " " + format::duration(ns) + " (" + format::percent(static_cast<double>(ns) / static_cast<double>(recorded)) +
         "; " + format::count(n, "range", "ranges") + (on > 1 ? " on " + format::count(on) + " threads" : "") + ")";
  }
  return s.empty() ? s : "; the host's time, by its outermost ranges: " + s;
}

// A trace with no GPU op from a program that used GPUs (gpu_use()): its GPU
// side was not recorded, and every GPU figure is unknown, not zero.
void gpu_unrecorded(const Trace& t, const GraphCaptures& captures, WorkloadKind* w) {
  const std::string used = gpu_use(t, captures.captures > 0);
  if (used.empty()) return;
  const TimeNs recorded = t.end_time() - t.begin_time();
  w->run = "gpu-unrecorded";
  w->run_evidence =
      "the GPU side was not recorded: no kernel, copy or fill in the " + format::duration(recorded) +
      " recorded, though the program used GPUs (" + used +
      "), so every GPU figure is unknown. Record the GPU's activity: " +
      (w->framework == "pytorch" || w->framework == "unknown"
           ? "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]); where CUDA was "
             "asked for, CUPTI failed to record it, and the profiler's log (the trace's WARNING and ERROR lists) "
             "says why"
           : "a profiler with the GPU's activity on (CUPTI)");
}

// A trace without kernels: nothing on the GPU to diagnose, kernels the
// CUPTI range profiler replayed, another accelerator's work, or a GPU side
// not recorded (gpu_unrecorded()); and where the host's time went.
void no_kernels_run(const Trace& t, const GraphCaptures& captures, WorkloadKind* w) {
  const TimeRange recorded{t.begin_time(), t.end_time()};
  const std::string of_recorded = " of the " + format::duration(recorded.duration()) + " recorded";
  const std::uint64_t copies = t.memcpys().size(), fills = t.memsets().size();
  w->run = "no-kernels";
  w->run_evidence = "no kernels: nothing on the GPU to diagnose (" + format::count(copies, "copy", "copies") + ", " +
                    format::count(fills, "fill", "fills") + " and " +
                    format::count(t.api_calls().size(), "API call", "API calls") + of_recorded + ")";
  // Kineto's CUPTI range profiler (profiler_metrics) records each kernel as
  // a "cuda_profiler_range" with its counters, measured by replaying it
  // alone: the kernels ran, but the trace holds no timeline of them.
  const StringId profiled = t.strings().find("cuda_profiler_range");
  std::uint64_t ranges = 0;
  if (profiled != StringTable::kNoString)
    for (RowIndex r = 0; r < t.ranges().size(); ++r) ranges += t.ranges().domain[r] == profiled;
  if (ranges)
    w->run_evidence += "; its " + format::count(ranges) +
                       " cuda_profiler_range events are kernels measured one at a time by the CUPTI range "
                       "profiler (Kineto's profiler_metrics), each replayed for its hardware counters, so their "
                       "times are not run times: record without profiler_metrics for a timeline to diagnose";
  if (std::string devices = device_named_processes(t); !devices.empty()) {
    w->run = "gpu-unrecorded";
    w->run_evidence = "the GPU side was not read: no kernel, copy or fill recognised in the " +
                      format::duration(recorded.duration()) + " recorded" + devices;
    return;
  }
  const std::string others = other_accelerators(t);
  w->run_evidence += others;
  if (ranges || !others.empty()) return;  // their events are kept as host ranges: not the host's time
  if (copies == 0 && fills == 0) gpu_unrecorded(t, captures, w);
  w->run_evidence += host_time(t, recorded.duration());
}

// What the trace's GPU work amounts to against its recording.
void recognise_run(const Trace& t, const GraphCaptures& captures, WorkloadKind* w) {
  filtered_host(t, w);
  const KernelTable& k = t.kernels();
  const TimeRange recorded{t.begin_time(), t.end_time()};
  const std::string of_recorded = " of the " + format::duration(recorded.duration()) + " recorded";
  if (k.size() == 0) {
    no_kernels_run(t, captures, w);
    return;
  }
  TimeRange window{k.start[0], k.end[0]};
  for (RowIndex i = 0; i < k.size(); ++i)
    window.start = std::min(window.start, k.start[i]), window.end = std::max(window.end, k.end[i]);
  w->kernel_window = window;
  w->setup_ns = std::max<TimeNs>(0, window.start - recorded.start);
  w->teardown_ns = std::max<TimeNs>(0, recorded.end - window.end);
  const TimeRange gpu{t.gpu_begin_time(), t.gpu_end_time()};
  // The GPU's own time (kernels, copies, fills; overlaps counted twice, so
  // never less than its busy time): a few tiny kernels spread over a longer
  // span are as little to diagnose as a short span.
  // Summed only until it reaches kTinySpan: past that it decides nothing
  // (a 10M-kernel trace stops within its first kernels).
  TimeNs work = 0;
  for (RowIndex i = 0; i < k.size() && work < kTinySpan; ++i) work += k.end[i] - k.start[i];
  for (RowIndex i = 0; i < t.memcpys().size() && work < kTinySpan; ++i)
    work += t.memcpys().end[i] - t.memcpys().start[i];
  for (RowIndex i = 0; i < t.memsets().size() && work < kTinySpan; ++i)
    work += t.memsets().end[i] - t.memsets().start[i];
  const double tiny_share = kTinyShare * static_cast<double>(recorded.duration());
  const bool short_span = gpu.duration() < kTinySpan && gpu.duration() < tiny_share;
  if (short_span || (work < kTinySpan && work < tiny_share)) {
    // A capture whose kernels all run at replay leaves the GPU little to do: the trace is the capture's.
    if (graph_capture_run(t, captures, recorded, w, true)) return;
    w->run = "tiny-span";
    w->run_evidence = (short_span ? "the GPU's work spans " + format::duration(gpu.duration())
                                  : "the GPU works " + format::duration(work) + " in all, over a span of " +
                                        format::duration(gpu.duration())) +
                      " (" + format::count(k.size()) + (k.size() == 1 ? " kernel" : " kernels") + ")" + of_recorded +
                      ": too little to diagnose, and any figure over it would be noise; profile a steady state, "
                      "several iterations after a few untimed ones (torch.profiler.schedule(wait=1, warmup=1, "
                      "active=3))";
    return;
  }
  if (sampled_ops(t, &w->run_evidence)) {
    w->run = "sampled";
    return;
  }
  if (graph_capture_run(t, captures, recorded, w, false)) return;
  const double outside =
      recorded.duration() > 0 ? static_cast<double>(w->setup_ns + w->teardown_ns) / recorded.duration() : 0.0;
  if (outside < kOneShotShare) return;
  const Outside o = outside_the_kernels(t, window);
  // The runtime initialises CUDA on a process's first call (creating its
  // context): a first call that held the host kInitCallNs or more is that.
  const ApiCallTable& a = t.api_calls();
  RowIndex first = kNoRow;
  for (RowIndex i = 0; i < a.size(); ++i)
    if (first == kNoRow || a.start[i] < a.start[first]) first = i;
  const bool init = first != kNoRow && a.end[first] <= window.start && a.end[first] - a.start[first] >= kInitCallNs;
  if (o.lifetime_calls == 0 && !init) return;  // not the program's start or exit: a profiler's window
  std::vector<std::pair<std::uint64_t, StringId>> calls;
  for (const auto& [name, n] : o.lifetime) calls.push_back({n, name});
  std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string shown;
  for (std::size_t i = 0; i < calls.size() && i < 3; ++i)
    shown += (shown.empty() ? "" : ", ") + format::count(calls[i].first) + " " + std::string(t.str(calls[i].second));
  if (init)
    shown += (shown.empty() ? "" : "; ") + std::string("the first runtime call, ") + std::string(t.str(a.name[first])) +
             ", held the host " + format::duration(a.end[first] - a.start[first]) +
             ": the runtime's initialisation, creating the context";
  auto part = [&](const char* what, TimeNs ns, const std::map<StringId, TimeNs>& names) {
    const std::string top = longest(t, names);
    return std::string(what) + " " + format::duration(ns) + (top.empty() ? "" : " (" + top + ")");
  };
  w->run = "one-shot";
  w->run_evidence = "one-shot run: " + format::percent1(outside) + of_recorded + " is " +
                    part("setup before the first kernel,", w->setup_ns, o.setup) + ", and " +
                    part("teardown after the last,", w->teardown_ns, o.teardown) +
                    "; the program's start or exit is in the recording (" + shown + "). The findings are about the " +
                    format::duration(window.duration()) +
                    " from the first kernel to the last, none about setup or teardown; to measure a steady state, "
                    "profile more iterations, "
                    "or only them (nsys --capture-range=cudaProfilerApi around the loop)";
}

}  // namespace

// [SECTION] Recognition ------------------------------------------------------------------------

namespace {

// The names that tell what the program is, with their rows: ops (each op
// name tested once) and kernels (only when some name is one looked for).
struct NameCounts {
  Examples backward_ops, optimizer_ops, inference_ops, compiled_ops, backward_kernels, optimizer_kernels, triton;
  Examples torch, tf, jax, ddp, vllm, sglang;
  // DDP's reducer's ops, and an all-reduce op inside the backward pass
  // (ddp_by_nesting), for a trace without DistributedDataParallel.forward.
  Examples ddp_reducer, backward_allreduce;
  // The engines' names on the host (ops, annotations, Python frames): an
  // engine's own code. Kernels cross engines (SGLang runs vLLM's paged
  // attention kernels), so they decide only where the host says nothing.
  std::uint64_t vllm_host = 0, sglang_host = 0;
  Examples vllm_py, sglang_py;      // their Python frames
  std::uint64_t framework_ops = 0;  // PyTorch's cpu_op events
  std::uint64_t python_ranges = 0;  // PyTorch's python_function events
  double compiled_time_share = 0;   // of kernel time: Triton kernels and kernels launched in compiled regions
};

// The share of kernel time in generated (Triton) kernels or in kernels whose
// launching call ran inside a compiled region.
double compiled_time_share(const Trace& t, bool regions) {
  InsideOpNamed inside(t, is_compiled_region);
  const KernelTable& k = t.kernels();
  std::vector<std::int8_t> triton(t.strings().size(), -1);
  TimeNs compiled = 0, all = 0;
  for (std::size_t i = 0; i < k.size(); ++i) {
    const TimeNs d = k.end[i] - k.start[i];
    all += d;
    std::int8_t& tr = triton[k.name[i]];
    if (tr < 0) tr = triton_kernel(t.str(k.name[i])) ? 1 : 0;
    if (tr || (regions && k.api[i] != kNoRow && inside(k.api[i]))) compiled += d;
  }
  return all > 0 ? static_cast<double>(compiled) / static_cast<double>(all) : 0.0;
}

NameCounts count_names(const Trace& t) {
  NameCounts c;
  std::vector<std::uint64_t> op_rows(t.strings().size(), 0), kernel_rows(t.strings().size(), 0);
  std::vector<std::uint64_t> optimizer_rows(t.strings().size(), 0);
  const RangeTable& rg = t.ranges();
  const StringId cpu_op = t.strings().find("cpu_op"), python = t.strings().find("python_function");
  for (RowIndex r = 0; r < rg.size(); ++r)
    if (t.is_op_range(r)) {
      ++op_rows[rg.name[r]];
      if (rg.kind_at(r) == RangeKind::annotation && rg.domain[r] == cpu_op) ++c.framework_ops;
    } else if (python != StringTable::kNoString && rg.domain[r] == python) {
      ++c.python_ranges;
      const std::string_view n = t.str(rg.name[r]);
      if (vllm_name(n)) c.vllm_py.add(n, 1), ++c.vllm_host;
      if (sglang_name(n)) c.sglang_py.add(n, 1), ++c.sglang_host;
    }
  const KernelTable& k = t.kernels();
  if (any_string(t, [](std::string_view n) {
        return backward_kernel(n) || optimizer_kernel(n) || triton_kernel(n) || pytorch_name(n) || tensorflow_name(n) ||
               jax_name(n) || vllm_name(n) || sglang_name(n);
      }))
    for (std::size_t i = 0; i < k.size(); ++i) {
      ++kernel_rows[k.name[i]];
      // An optimizer's kernel by name that its launching op says is not one
      // (a multi-tensor copy: aten::_foreach_copy_) is no optimizer.
      optimizer_rows[k.name[i]] += k.category_at(i) == KernelCategory::optimizer;
    }
  for (StringId id = 0; id < op_rows.size(); ++id) {
    if (op_rows[id]) {
      const std::string_view n = t.str(id);
      if (backward_op(n)) c.backward_ops.add(n, op_rows[id]);
      if (optimizer_op(n)) c.optimizer_ops.add(n, op_rows[id]);
      if (inference_op(n)) c.inference_ops.add(n, op_rows[id]);
      if (compiled_op(n)) c.compiled_ops.add(n, op_rows[id]);
      if (pytorch_name(n)) c.torch.add(n, op_rows[id]);
      if (tensorflow_name(n)) c.tf.add(n, op_rows[id]);
      if (jax_name(n)) c.jax.add(n, op_rows[id]);
      if (ddp_name(n)) c.ddp.add(n, op_rows[id]);
      if (ddp_reducer_name(n)) c.ddp_reducer.add(n, op_rows[id]);
      if (vllm_name(n)) c.vllm.add(n, op_rows[id]), c.vllm_host += op_rows[id];
      if (sglang_name(n)) c.sglang.add(n, op_rows[id]), c.sglang_host += op_rows[id];
    }
    if (kernel_rows[id]) {
      const std::string_view n = t.str(id);
      if (backward_kernel(n)) c.backward_kernels.add(n, kernel_rows[id], true);
      if (optimizer_kernel(n) && optimizer_rows[id]) c.optimizer_kernels.add(n, optimizer_rows[id], true);
      if (triton_kernel(n)) c.triton.add(n, kernel_rows[id], true);
      if (pytorch_name(n)) c.torch.add(n, kernel_rows[id], true);
      if (tensorflow_name(n)) c.tf.add(n, kernel_rows[id], true);
      if (jax_name(n)) c.jax.add(n, kernel_rows[id], true);
      if (vllm_name(n)) c.vllm.add(n, kernel_rows[id], true);
      if (sglang_name(n)) c.sglang.add(n, kernel_rows[id], true);
    }
  }
  return c;
}

// Without DDP's annotation or its reducer's ops: an all-reduce op that runs
// inside the backward pass. Inside autograd's AccumulateGrad it is DDP's
// reducer, which launches each bucket from the hooks it hangs there (in
// c->ddp); elsewhere in the backward (a compiled backward, a layer's
// backward op) it is data parallel, but not DDP's reducer (in
// c->backward_allreduce): DDP records DistributedDataParallel.forward at
// every forward.
void ddp_by_nesting(const Trace& t, NameCounts* c) {
  if (c->ddp.count || c->ddp_reducer.count || !any_string(t, allreduce_op)) return;
  const RangeTable& rg = t.ranges();
  NameMemo all_reduce(t, allreduce_op);  // each name tested once: every range is read
  for (RowIndex r = 0; r < rg.size() && c->ddp.count == 0; ++r) {
    if (!all_reduce(rg.name[r]) || !t.is_op_range(r)) continue;
    for (RowIndex q = t.parent_op(r); q != kNoRow; q = t.parent_op(q)) {
      const std::string_view n = t.str(rg.name[q]);
      if (!backward_op(n) && !n.starts_with("autograd::engine::evaluate_function")) continue;
      Examples* const e = n.ends_with("torch::autograd::AccumulateGrad") ? &c->ddp : &c->backward_allreduce;
      if (e->count == 0) e->add(std::string(t.str(rg.name[r])) + " inside " + std::string(n), 1);
      break;
    }
  }
}

// Calls `fn(row)` for each API call whose name passes `named` (each name
// tested once; nothing read when no string of the trace passes).
template <class Named, class Fn>
void for_each_call_named(const Trace& t, Named named, Fn fn) {
  if (!any_string(t, named)) return;
  std::vector<std::uint8_t> is(t.strings().size(), 2);  // 2: not tested yet
  const ApiCallTable& api = t.api_calls();
  for (RowIndex a = 0; a < api.size(); ++a) {
    std::uint8_t& l = is[api.name[a]];
    if (l == 2) l = named(t.str(api.name[a]));
    if (l) fn(a);
  }
}

// Graph launches and the GPU ops correlated to them: a Kineto trace keeps
// the launch's correlation id on each kernel the graph replayed (ROCm's
// Kineto traces name the same call hipGraphLaunch).
void count_graph_launches(const Trace& t, std::uint64_t* launches, std::uint64_t* replayed) {
  for_each_call_named(t, is_graph_launch_name, [&](RowIndex a) {
    ++*launches;
    t.for_each_op_of(a, [&](OpRef op) { *replayed += op.table == OpTable::kernel; });
  });
}

bool capture_begin_name(std::string_view n) { return n.find("StreamBeginCapture") != std::string_view::npos; }

// What a capture records: kernel launches (cudaLaunchKernel, cuLaunchKernel,
// hipModuleLaunchKernel, …), host functions and asynchronous copies and
// fills; a graph launch inside a capture is a child graph, recorded too.
bool captured_call_name(std::string_view n) {
  return n.find("Launch") != std::string_view::npos ||
         ((n.find("Memcpy") != std::string_view::npos || n.find("Memset") != std::string_view::npos) &&
          n.find("Async") != std::string_view::npos);
}

// The replays of the graphs the trace captured: each capturing thread's
// graph launches after its first capture ends, with the kernels they ran.
void count_replays(const Trace& t, const GraphCaptures& c, WorkloadKind* w) {
  if (c.each.empty()) return;
  std::map<TrackId, TimeNs> first_end;
  for (const auto& [thread, window] : c.each)
    if (auto [it, added] = first_end.try_emplace(thread, window.end); !added)
      it->second = std::min(it->second, window.end);
  const ApiCallTable& a = t.api_calls();
  const KernelTable& k = t.kernels();
  std::map<KernelCategory, TimeNs> by_category;
  for_each_call_named(t, is_graph_launch_name, [&](RowIndex l) {
    const auto it = first_end.find(a.track_at(l));
    if (it == first_end.end() || a.start[l] < it->second) return;
    ++w->replay_launches;
    t.for_each_op_of(l, [&](OpRef op) {
      if (op.table != OpTable::kernel) return;
      ++w->replay_kernels;
      w->replay_kernel_ns += k.end[op.row] - k.start[op.row];
      by_category[k.category_at(op.row)] += k.end[op.row] - k.start[op.row];
    });
  });
  if (by_category.empty() || w->replay_kernel_ns <= 0) return;
  const auto top = std::max_element(by_category.begin(), by_category.end(),
                                    [](const auto& x, const auto& y) { return x.second < y.second; });
  w->replay_top = std::string(to_string(top->first)) + " " +
                  format::percent(static_cast<double>(top->second) / static_cast<double>(w->replay_kernel_ns));
}

}  // namespace

GraphCaptures graph_captures(const Trace& t) {
  GraphCaptures c;
  if (!any_string(t, capture_begin_name)) return c;
  // Per name: 1 begins a capture, 2 ends one, 3 is recorded into one, 0 none.
  std::vector<std::uint8_t> kind(t.strings().size(), 0);
  for (StringId id = 0; id < t.strings().size(); ++id) {
    const std::string_view n = t.str(id);
    kind[id] = capture_begin_name(n)                                  ? 1
               : n.find("StreamEndCapture") != std::string_view::npos ? 2
               : captured_call_name(n)                                ? 3
               : n.find("GraphInstantiate") != std::string_view::npos ? 4
                                                                      : 0;
  }
  // The rows are in time order per thread, the threads one after another.
  const ApiCallTable& a = t.api_calls();
  std::vector<TimeRange> windows;
  TrackId track = 0;
  bool first = true;
  TimeNs open = -1;
  std::uint64_t inside = 0;
  for (RowIndex i = 0; i < a.size(); ++i) {
    const std::uint8_t k = kind[a.name[i]];
    if (k == 0) continue;
    if (k == 4) {
      ++c.instantiates, c.instantiate_ns += a.end[i] - a.start[i], c.instantiate = a.name[i];
      continue;
    }
    if (const TrackId tr = a.track_at(i); tr != track || first) track = tr, open = -1, first = false;
    if (k == 1) {
      open = a.start[i], inside = 0, c.begin = a.name[i];
    } else if (k == 3) {
      inside += open >= 0;
    } else if (open >= 0) {
      windows.push_back({open, a.end[i]});
      c.each.push_back({track, {open, a.end[i]}});
      ++c.captures, c.launches += inside, open = -1, c.end = a.name[i];
      c.last_end = std::max(c.last_end, a.end[i]);
    }
  }
  c.windows = intervals::union_of(std::move(windows));
  return c;
}

bool cudagraph_recording_name(std::string_view n) {
  if (n.starts_with("CUDAGraphNode.record")) return true;
  if (n.find("cudagraph_trees.py(") == std::string_view::npos) return false;
  return n.ends_with(": record_function") || n.ends_with(": _record");
}

GraphSetup::GraphSetup(const Trace& t) {
  // torch's cudagraph trees recording a graph, where the trace has its ranges.
  if (any_string(t, cudagraph_recording_name)) {
    NameMemo recording(t, cudagraph_recording_name);
    const RangeTable& rg = t.ranges();
    for (RowIndex r = 0; r < rg.size(); ++r)
      if (recording(rg.name[r])) phases_.push_back({rg.track_at(r), {rg.start[r], rg.end[r]}, false});
  }
  GraphCaptures c = graph_captures(t);
  if (c.each.empty()) return;
  // Each thread's graph launches, in time order (rows are per thread, in time order).
  std::vector<std::pair<TrackId, RowIndex>> launches;
  for_each_call_named(t, is_graph_launch_name, [&](RowIndex a) { launches.push_back({t.api_calls().track_at(a), a}); });
  const ApiCallTable& api = t.api_calls();
  for (auto& [thread, w] : c.each) {
    auto next = std::find_if(launches.begin(), launches.end(), [&, th = thread, end = w.end](const auto& l) {
      return l.first == th && api.start[l.second] >= end;
    });
    TimeNs until = w.end;
    if (next != launches.end()) {
      until = std::max(until, api.end[next->second]);
      t.for_each_op_of(next->second, [&](OpRef op) {
        const TimeNs e = op.table == OpTable::kernel   ? t.kernels().end[op.row]
                         : op.table == OpTable::memcpy ? t.memcpys().end[op.row]
                                                       : t.memsets().end[op.row];
        until = std::max(until, e);
      });
    }
    phases_.push_back({thread, {w.start, until}, true});
  }
}

bool GraphSetup::holds(TrackId thread, TimeNs a) const {
  for (const Phase& p : phases_)
    if (p.thread == thread && a >= p.range.start && a < p.range.end) return true;
  return false;
}

std::vector<TimeRange> GraphSetup::windows(bool captures_only) const {
  std::vector<TimeRange> w;
  for (const Phase& p : phases_)
    if (p.capture || !captures_only) w.push_back(p.range);
  return intervals::union_of(std::move(w));
}

namespace {

// Calls that pin host memory: a program that makes them already knows
// pinned memory, and advice to pin says so.
void count_pinning(const Trace& t, std::uint64_t* calls, TimeNs* ns) {
  auto pins = [](std::string_view n) {
    for (std::string_view p : {"cudaHostAlloc", "cudaMallocHost", "cudaHostRegister", "cuMemHostAlloc",
                               "cuMemAllocHost", "cuMemHostRegister"})
      if (n.starts_with(p)) return true;
    return false;
  };
  // A library's own pinned buffer (cuDNN's inside the first convolution) is
  // not the program pinning its inputs.
  InsideOpNamed in_library(t, [](std::string_view op) {
    for (std::string_view lib : {"conv", "cudnn", "matmul", "linear", "attention", "aten::mm", "aten::bmm", "addmm"})
      if (op.find(lib) != std::string_view::npos) return true;
    return false;
  });
  const ApiCallTable& api = t.api_calls();
  // Nor is a communication library registering its own buffers while it
  // initialises (a CUDA-aware MPI's cudaHostRegister inside MPI_Init).
  NameMemo library_init(t, [](std::string_view n) {
    return n.starts_with("MPI_Init") || n.starts_with("ncclCommInit") || n.starts_with("nvshmem_init") ||
           n.starts_with("shmem_init") || n.starts_with("ucp_init");
  });
  auto in_init = [&](RowIndex a) {
    const RangeTable& rg = t.ranges();
    const RowRange r = t.rows_overlapping(TableId::ranges, api.track_at(a), api.start[a], api.end[a]);
    for (RowIndex q = r.begin; q < r.end; ++q)
      if (rg.start[q] <= api.start[a] && rg.end[q] >= api.end[a] && library_init(rg.name[q])) return true;
    return false;
  };
  for_each_call_named(t, pins, [&](RowIndex a) {
    if (!in_library(a) && !in_init(a)) ++*calls, *ns += api.end[a] - api.start[a];
  });
}

// Where the data loading's host time goes: the data-loading ranges' time
// (their union on each thread) and the path down the host ranges nested in
// them (an image processor's preprocess, its resize, the library call doing
// it), each step the heaviest of the ranges inside the one before, while it
// holds more than half of the data-loading time. The ranges of each thread
// merge into one tree by name, as a flame graph does: the same function
// called from two lines of its caller stays apart.
// A Python frame's name without its line ("file.py(164): f" → "file.py: f");
// any other name as it is.
std::string function_of(std::string_view name) {
  const std::size_t open = name.find(".py(");
  if (open == std::string_view::npos) return std::string(name);
  const std::size_t close = name.find("): ", open);
  if (close == std::string_view::npos) return std::string(name);
  return std::string(name.substr(0, open + 3)) + std::string(name.substr(close + 1));
}

void input_work(const Trace& t, WorkloadKind* w) {
  if (!any_string(t, is_input_range_name)) return;
  const RangeTable& r = t.ranges();
  std::vector<std::uint8_t> is_input(t.strings().size(), 2);  // 2 = not decided yet
  std::map<TrackId, std::vector<TimeRange>> loading;
  for (RowIndex i = 0; i < r.size(); ++i) {
    if (r.kind_at(i) == RangeKind::mark || t.tracks()[r.track_at(i)].kind != TrackKind::cpu) continue;
    std::uint8_t& decided = is_input[r.name[i]];
    if (decided == 2) decided = is_input_range_name(t.str(r.name[i])) ? 1 : 0;
    if (decided) loading[r.track_at(i)].push_back({r.start[i], r.end[i]});
  }
  struct Node {
    std::int64_t parent;
    StringId name;
    TimeNs ns = 0;
    std::uint64_t count = 0;
  };
  std::vector<Node> nodes;
  std::map<std::pair<std::int64_t, StringId>, std::int64_t> child;
  std::vector<RowIndex> rows;
  std::vector<std::pair<TimeNs, std::int64_t>> open;  // enclosing ranges: end, node
  for (auto& [track, spans] : loading)
    for (const TimeRange& s : intervals::union_of(std::move(spans))) {
      w->data_loading_ns += s.duration();
      const RowRange in = t.rows_overlapping(TableId::ranges, track, s.start, s.end);
      rows.clear();
      for (RowIndex i = in.begin; i < in.end; ++i)
        if (r.kind_at(i) != RangeKind::mark && is_input[r.name[i]] != 1 && r.start[i] >= s.start && r.end[i] <= s.end)
          rows.push_back(i);
      // Outer before inner where two start together.
      std::sort(rows.begin(), rows.end(), [&](RowIndex x, RowIndex y) {
        return r.start[x] != r.start[y] ? r.start[x] < r.start[y] : r.end[x] > r.end[y];
      });
      open.clear();
      for (RowIndex i : rows) {
        while (!open.empty() && open.back().first < r.end[i]) open.pop_back();
        const std::int64_t parent = open.empty() ? -1 : open.back().second;
        auto [it, fresh] = child.try_emplace({parent, r.name[i]}, static_cast<std::int64_t>(nodes.size()));
        if (fresh) nodes.push_back({parent, r.name[i]});
        nodes[it->second].ns += r.end[i] - r.start[i];
        ++nodes[it->second].count;
        open.emplace_back(r.end[i], it->second);
      }
    }
  // Down the call tree by function: at each level the function with the
  // most time under the level above, its calls summed over every path and
  // line it was recorded at (a generator's frames name the line it resumed
  // at: "detection.py(164): preprocess" and "(176)" are one function).
  // Each node's function, and whether its parent is on the level above
  // (indexed by parent + 1: the root is -1).
  std::vector<std::string> function(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) function[n] = function_of(t.str(nodes[n].name));
  std::vector<std::uint8_t> above(nodes.size() + 1, 0);
  above[0] = 1;
  std::vector<std::int64_t> next;
  struct Function {
    TimeNs ns = 0;
    std::uint64_t count = 0;
    StringId shown = 0;  // the name of its heaviest node
    TimeNs shown_ns = -1;
  };
  std::map<std::string, Function> by_function;
  while (w->input_work.size() < kInputWorkNames) {
    by_function.clear();
    for (std::size_t n = 0; n < nodes.size(); ++n)
      if (above[nodes[n].parent + 1]) {
        Function& f = by_function[function[n]];
        f.ns += nodes[n].ns, f.count += nodes[n].count;
        if (nodes[n].ns > f.shown_ns) f.shown = nodes[n].name, f.shown_ns = nodes[n].ns;
      }
    auto best = by_function.end();
    for (auto it = by_function.begin(); it != by_function.end(); ++it)
      if (best == by_function.end() || it->second.ns > best->second.ns) best = it;
    if (best == by_function.end() || 2 * best->second.ns <= w->data_loading_ns) break;
    w->input_work.push_back({std::string(t.str(best->second.shown)), best->second.ns, best->second.count});
    next.clear();
    for (std::size_t n = 0; n < nodes.size(); ++n)
      if (above[nodes[n].parent + 1] && function[n] == best->first) next.push_back(static_cast<std::int64_t>(n));
    std::fill(above.begin(), above.end(), 0);
    for (std::int64_t n : next) above[n + 1] = 1;
  }
}

// "2 backward ops (…)", "1 Triton kernel (…)"; nothing when none matched.
std::string part(const Examples& e, std::string_view one, std::string_view many) {
  return e.count ? format::count(e.count, one, many) + " (" + e.said() + ")" : std::string();
}
std::string join(std::initializer_list<std::string> parts) {
  std::string s;
  for (const std::string& p : parts)
    if (!p.empty()) s += (s.empty() ? "" : "; ") + p;
  return s;
}

void say_phase(const NameCounts& c, std::size_t kernels, WorkloadKind* w) {
  if (c.backward_ops.count || c.optimizer_ops.count || c.backward_kernels.count || c.optimizer_kernels.count) {
    w->phase = "training";
    w->phase_evidence = join(
        {part(c.backward_ops, "backward op", "backward ops"), part(c.optimizer_ops, "optimizer op", "optimizer ops"),
         part(c.backward_kernels, "kernel named as backward", "kernels named as backward"),
         part(c.optimizer_kernels, "kernel named as an optimizer's", "kernels named as an optimizer's")});
  } else if (c.inference_ops.count || c.framework_ops >= 100 || c.vllm_host || c.sglang_host) {
    // Only a framework's own op events, or a serving engine's own code on
    // the host, tell inference from a trace that just does not name its
    // backward pass (kernel names alone do not).
    w->phase = "inference";
    const std::uint64_t engine = c.vllm_host + c.sglang_host;
    w->phase_evidence =
        join({part(c.inference_ops, "inference op", "inference ops"),
              engine && !c.inference_ops.count ? format::count(engine, "op or Python frame of the serving engine",
                                                               "ops and Python frames of the serving engine")
                                               : std::string(),
              "no backward or optimizer op or kernel among " +
                  format::count(c.framework_ops, "framework op", "framework ops") + " and " +
                  format::count(kernels, "kernel", "kernels")});
  } else {
    w->phase_evidence = "no backward or optimizer op or kernel, and too few framework ops (" +
                        format::count(c.framework_ops) + ") to call it inference";
  }
}

// The framework: the one with the most ops and kernels of its own names.
void say_framework(const NameCounts& c, WorkloadKind* w) {
  struct Named {
    const Examples* e;
    const char *id, *one, *many;
  };
  const Named fws[] = {{&c.torch, "pytorch", "PyTorch op or kernel", "PyTorch ops and kernels"},
                       {&c.tf, "tensorflow", "TensorFlow op or kernel", "TensorFlow ops and kernels"},
                       {&c.jax, "jax", "XLA computation or fusion", "XLA computations and fusions"}};
  const Examples* best = nullptr;
  for (const Named& f : fws)
    if (f.e->count && (!best || f.e->count > best->count)) {
      best = f.e;
      w->framework = f.id;
      w->framework_evidence = part(*f.e, f.one, f.many);
    }
  // The serving engine: the one with more names of its own on the host, else
  // in its kernels.
  if (c.vllm.count || c.sglang.count || c.vllm_py.count || c.sglang_py.count) {
    const bool vllm = c.vllm_host || c.sglang_host ? c.vllm_host >= c.sglang_host : c.vllm.count >= c.sglang.count;
    w->engine = vllm ? "vllm" : "sglang";
    w->engine_evidence = vllm ? join({part(c.vllm, "vLLM op or kernel", "vLLM ops and kernels"),
                                      part(c.vllm_py, "vLLM Python frame", "vLLM Python frames")})
                              : join({part(c.sglang, "SGLang op or kernel", "SGLang ops and kernels"),
                                      part(c.sglang_py, "SGLang Python frame", "SGLang Python frames")});
  }
  if (c.ddp.count) {
    w->data_parallel = "ddp";
    w->data_parallel_evidence = part(c.ddp, "DDP op", "DDP ops");
  } else if (c.ddp_reducer.count) {
    w->data_parallel = "ddp";
    w->data_parallel_evidence = part(c.ddp_reducer, "DDP reducer op", "DDP reducer ops");
  } else if (c.backward_allreduce.count) {
    w->data_parallel = "all-reduce";
    w->data_parallel_evidence = "an all-reduce inside the backward pass (" + c.backward_allreduce.said() +
                                "), but no DistributedDataParallel.forward or DDP reducer op: not DDP's reducer";
  }
}

// `by_ids`: the graph kernels were counted by the graph ids the recorder
// kept, else by the graph launch each kernel's correlation names.
// `graph`: "CUDA graph" or "HIP graph" (graph_word()).
void say_execution(const NameCounts& c, std::size_t kernels, bool by_ids, const std::string& graph, WorkloadKind* w) {
  const std::string graphs =
      w->graph_kernels
          ? format::count(w->graph_kernels) + " of " + format::count(kernels, "kernel", "kernels") + " replayed from " +
                graph + "s (" + (by_ids ? "graph ids" : "correlated with their graph launch") + ")" +
                (w->graph_launches ? ", " + format::count(w->graph_launches, "graph launch", "graph launches") : "")
          : std::string();
  // A program that captures graphs uses them, replayed in the trace or not.
  const std::string captured =
      w->graph_captures
          ? format::count(w->graph_captures) + " " + graph + (w->graph_captures == 1 ? " capture" : " captures") +
                " recording " + format::count(w->captured_launches, "launch", "launches") +
                ", which run where a graph is launched" + (w->graph_kernels ? "" : "; no graph replayed in the trace") +
                (w->replay_kernels
                     ? std::string(w->graph_captures == 1 ? "; the graph" : "; the graphs") +
                           " launched after the capture (" +
                           format::count(w->replay_launches, "graph launch", "graph launches") + ") ran " +
                           format::count(w->replay_kernels) + " kernels, " + format::duration(w->replay_kernel_ns) +
                           " of kernel time (" + w->replay_top + "): what a later call that replays " +
                           (w->graph_captures == 1 ? "it" : "them") + " costs the GPU"
                     : "")
          : std::string();
  const std::string compiled =
      join({part(c.triton, "inductor Triton kernel (triton_…)", "inductor Triton kernels (triton_…)"),
            part(c.compiled_ops, "compiled region", "compiled regions")});
  if ((w->graph_kernels * 10 >= kernels && w->graph_kernels > 0) || w->graph_captures > 0) {
    w->execution = "cuda graphs";
    w->execution_evidence = join({captured, graphs, compiled});
  } else if (c.compiled_time_share >= 0.1 || (c.compiled_ops.count && !c.triton.count)) {
    // Compiled: a tenth of the kernel time generated or launched from
    // compiled regions, or compiled regions whose backend generates no Triton.
    w->execution = "compiled";
    w->execution_evidence = join({compiled, graphs});
  } else if (c.triton.count) {
    // A helper compiled, the model run op by op (a serving engine's
    // embedding masking, a compiled loss): eager, said with what was compiled.
    w->execution_evidence = join({compiled + " (" + format::percent(c.compiled_time_share) +
                                      " of kernel time: a small part compiled, the rest eager)",
                                  graphs.empty() ? "no kernel replayed from a " + graph : graphs});
  } else {
    w->execution_evidence = join({graphs.empty() ? "no kernel replayed from a " + graph : graphs,
                                  "no kernel named as inductor's Triton kernels (triton_…) and no compiled region"});
  }
}

}  // namespace

namespace {
// MPI calls that talk to other ranks (not MPI_Init, MPI_Finalize, the
// communicator's size and rank queries or the clock).
bool mpi_peer_call(std::string_view n) {
  if (!n.starts_with("MPI_")) return false;
  for (std::string_view own : {"MPI_Init", "MPI_Finalize", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Wtime",
                               "MPI_Initialized", "MPI_Finalized", "MPI_Query_thread", "MPI_Get_"})
    if (n.starts_with(own)) return false;
  return true;
}

// A trace of one process that talks to others over MPI (its ranges or
// calls): one rank of a job, whose other ranks this file does not hold.
std::string mpi_job_evidence(const Trace& t) {
  if (!any_string(t, mpi_peer_call)) return {};
  std::uint64_t n = 0;
  std::vector<StringId> named;  // the first two names, each once
  NameMemo<bool (*)(std::string_view)> peer(t, &mpi_peer_call);
  auto add = [&](StringId name) {
    ++n;
    if (named.size() < 2 && std::find(named.begin(), named.end(), name) == named.end()) named.push_back(name);
  };
  const RangeTable& r = t.ranges();
  for (RowIndex i = 0; i < r.size(); ++i)
    if (peer(r.name[i])) add(r.name[i]);
  const ApiCallTable& a = t.api_calls();
  for (RowIndex i = 0; i < a.size(); ++i)
    if (peer(a.name[i])) add(a.name[i]);
  Examples calls;
  for (StringId id : named) calls.add(t.str(id), 0);
  calls.count = n;
  if (!calls.count) return {};
  return "one rank of an MPI job: " + format::count(calls.count, "MPI call", "MPI calls") + " to other ranks (" +
         calls.said() + "); the other ranks' traces are not in this file (gpuscope report DIR reads a job's)";
}
}  // namespace

namespace {
// One rank's trace of a distributed job whose size it does not give: no
// world size, but a rank, a process-group backend or DDP's ops (an MPI
// job's rank is said by mpi_job_evidence()).
std::string unsized_job(const Trace& t, const WorkloadKind& w) {
  const TraceMeta& m = t.meta();
  if (m.world_size > 0 || !w.mpi_evidence.empty()) return {};
  std::string said;
  auto add = [&](const std::string& part) { said += (said.empty() ? "" : ", ") + part; };
  if (m.rank >= 0) add("its distributed info gives rank " + std::to_string(m.rank));
  if (const std::string_view backend = m.property("chrome.distributed.backend"); !backend.empty())
    add("a " + std::string(backend) + " process-group backend");
  if (w.data_parallel == "ddp") add("DDP's ops");
  if (w.data_parallel == "all-reduce") add("an all-reduce in the backward pass");
  if (said.empty()) return {};
  return "the job's size unknown: " + said + ", but no world size";
}
}  // namespace

WorkloadKind recognise_workload(const Trace& t) {
  WorkloadKind w;
  const TraceMeta& m = t.meta();
  w.bundled = m.command_line.find("resnet-train") != std::string::npos;
  w.ranks = m.world_size > 1 ? static_cast<std::uint32_t>(m.world_size) : 1;
  w.world_size = m.world_size;
  w.rank = m.rank;
  if (w.ranks == 1) w.mpi_evidence = mpi_job_evidence(t);
  NameCounts names = count_names(t);
  if (names.triton.count || names.compiled_ops.count)
    names.compiled_time_share = compiled_time_share(t, names.compiled_ops.count > 0);
  ddp_by_nesting(t, &names);
  const KernelTable& k = t.kernels();
  if (!k.graph_id.empty())
    for (std::size_t i = 0; i < k.size(); ++i) w.graph_kernels += k.graph_id[i] != 0;
  // Graph ids where the recorder kept them, else the kernels correlated to
  // graph launches.
  std::uint64_t replayed = 0;
  count_graph_launches(t, &w.graph_launches, &replayed);
  const bool by_ids = w.graph_kernels >= replayed;
  w.graph_kernels = std::max(w.graph_kernels, replayed);
  const GraphCaptures captures = graph_captures(t);
  w.graph_captures = captures.captures, w.captured_launches = captures.launches;
  w.capture_ns = intervals::length(captures.windows);
  count_replays(t, captures, &w);
  count_pinning(t, &w.pinning_calls, &w.pinning_ns);
  input_work(t, &w);
  w.python_ranges = names.python_ranges;
  say_phase(names, k.size(), &w);
  say_framework(names, &w);
  say_execution(names, k.size(), by_ids, graph_word(t), &w);
  w.rank_evidence = unsized_job(t, w);
  recognise_run(t, captures, &w);
  return w;
}

// [SECTION] The optimizer --------------------------------------------------------------------

namespace {

// PyTorch's fused optimizers: aten::_fused_adam_/_fused_adamw_/_fused_sgd_/
// _fused_adagrad_ ops, and their kernels (multi_tensor_apply_kernel over a
// Fused*MathFunctor; apex's FusedAdam/FusedSGD).
bool fused_optimizer_name(std::string_view n) {
  if (n.starts_with("aten::_fused_"))
    return contains_nocase(n, "adam") || contains_nocase(n, "sgd") || contains_nocase(n, "adagrad");
  return n.find("FusedAdam") != std::string_view::npos || n.find("FusedSgd") != std::string_view::npos ||
         n.find("FusedSGD") != std::string_view::npos || n.find("FusedAdagrad") != std::string_view::npos;
}
bool multi_tensor_name(std::string_view n) { return n.find("multi_tensor_apply") != std::string_view::npos; }

std::string too_few(const FindingThresholds& th) {
  return "too few per step to tell a per-parameter update of a small model from one over a few flattened "
         "buffers (per-parameter from " +
         format::fixed(th.optimizer_kernels_per_step, 0) + " per step)";
}

// The optimizer classes PyTorch's step ranges name ("Optimizer.step#Adam.step"
// → Adam), most launching first, each once: "Shampoo and EMAOptimizer".
std::string optimizer_classes(const Profile& p) {
  std::vector<std::pair<std::uint64_t, std::string>> found;
  for (const OpRow& r : p.op_names) {
    if (!is_optimizer_step(r.name) || r.calls == 0) continue;
    std::string_view cls = std::string_view(r.name).substr(std::string_view("Optimizer.step#").size());
    if (cls.ends_with(".step")) cls.remove_suffix(5);
    if (cls.empty()) continue;
    auto same = [&](const auto& f) { return f.second == cls; };
    if (std::find_if(found.begin(), found.end(), same) == found.end()) found.emplace_back(r.kernels_total, cls);
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string said;
  for (std::size_t i = 0; i < found.size(); ++i)
    said += (i == 0 ? "" : i + 1 == found.size() ? " and " : ", ") + found[i].second;
  return said;
}

// The optimizer fbgemm fuses into its table-batched embeddings' backward
// kernels (split_embedding_backward_codegen_<optimizer>_{weighted,unweighted}_…,
// "none": no update in them): "rowwise_adagrad", or empty.
std::string fused_embedding_optimizer(const Profile& p) {
  constexpr std::string_view kPrefix = "split_embedding_backward_codegen_";
  for (const Hotspot& h : p.hotspots) {
    const std::size_t at = h.name.find(kPrefix);
    if (at == std::string::npos) continue;
    std::string_view rest = std::string_view(h.name).substr(at + kPrefix.size());
    std::size_t end = std::min(rest.find("_unweighted"), rest.find("_weighted"));
    if (end == std::string_view::npos) end = rest.find("_kernel");
    if (end == std::string_view::npos || end == 0) continue;
    const std::string_view opt = rest.substr(0, end);
    if (opt != "none" && opt != "dense") return std::string(opt);
  }
  return {};
}

// The optimizers the trace names, before the evidence of their kind: the
// classes of the step ranges, and fbgemm's fused embedding optimizer.
std::string named_optimizers(const Profile& p) {
  const std::string classes = optimizer_classes(p), tbe = fused_embedding_optimizer(p);
  std::string said = classes.empty() ? std::string() : classes + " (their Optimizer.step ranges)";
  if (!tbe.empty())
    said += (said.empty() ? "" : ", and ") + tbe +
            " fused into fbgemm's embedding backward kernels (split_embedding_backward_codegen_" + tbe + "_…)";
  return said.empty() ? said : said + "; ";
}

}  // namespace

// The kind of weight update, from what ran inside the optimizer's steps
// (PyTorch's Optimizer.step# ranges): multi-tensor (foreach, or fused when
// the kernels or ops are the fused ones) when at least
// `optimizer_fused_share` of their kernels are; per-parameter when none is
// and they launch at least `optimizer_kernels_per_step` per step; unknown
// when both kinds mix, when too few kernels to tell, or when none is
// recorded inside the steps. Without step ranges, the optimizer kernels by name: multi-tensor
// or fused names tell; per-parameter ones, per step of the trace, with the
// same threshold. Nothing is said of a run with no optimizer at all.
void recognise_optimizer(const Profile& p, const Evidence& ev, const FindingThresholds& th, WorkloadKind* w) {
  w->optimizer.clear(), w->optimizer_evidence.clear();
  const OpRow* step = nullptr;
  std::uint64_t step_calls = 0, fused_ops = 0;
  for (const OpRow& r : p.op_names) {
    if (is_optimizer_step(r.name) && r.calls > 0) {
      step_calls += r.calls;
      if (!step || r.kernels_total > step->kernels_total) step = &r;
    }
    if (fused_optimizer_name(r.name)) fused_ops += r.calls;
  }
  std::uint64_t named = 0, fused_kernels = 0, multi = 0;
  for (const Hotspot& h : p.hotspots) {
    if (h.category != KernelCategory::optimizer) continue;
    named += h.stats.count;
    if (fused_optimizer_name(h.name)) fused_kernels += h.stats.count;
    if (multi_tensor_name(h.name) || fused_optimizer_name(h.name)) multi += h.stats.count;
  }
  const bool fused = fused_ops > 0 || fused_kernels > 0;
  const std::string fused_said =
      fused_ops ? format::count(fused_ops, "fused optimizer op", "fused optimizer ops")
                : format::count(fused_kernels, "fused optimizer kernel", "fused optimizer kernels");
  const std::string named_as = named_optimizers(p);
  auto say = [&](const char* kind, std::string why) { w->optimizer = kind, w->optimizer_evidence = named_as + why; };
  if (step) {
    const std::string inside =
        " inside " + format::count(step_calls, "optimizer step", "optimizer steps") + " (\"" + step->name + "\")";
    if (ev.optimizer_op_kernels == 0)
      return say("unknown", "no kernel recorded as launched" + inside + ": the trace does not tell its kind");
    const double per_step = static_cast<double>(ev.optimizer_op_kernels) / static_cast<double>(step_calls);
    // Multi-tensor kernels inside the steps: those named optimizer kernels
    // there, at most as many as the trace has multi-tensor kernels at all
    // (a per-parameter kernel named "adam" is not one).
    const std::uint64_t inside_multi = std::min<std::uint64_t>(ev.optimizer_op_named_kernels, multi);
    const double share = static_cast<double>(inside_multi) / static_cast<double>(ev.optimizer_op_kernels);
    const std::string counts = format::count(ev.optimizer_op_kernels, "kernel", "kernels") + inside + ", " +
                               format::fixed(per_step, 0) + " per step, " + format::percent(share) +
                               " of them multi-tensor or fused (multi_tensor_apply, fused Adam/SGD)";
    if (share >= th.optimizer_fused_share)
      return say(fused ? "fused" : "foreach", counts + (fused ? "; " + fused_said : std::string()));
    if (inside_multi > 0) return say("unknown", counts + ": a mix, neither per-parameter nor multi-tensor throughout");
    if (per_step >= th.optimizer_kernels_per_step) return say("per-parameter", counts);
    return say("unknown", counts + ": " + too_few(th));
  }
  if (named == 0) {
    // Only the update fused into the embeddings' backward: fused; else no optimizer seen, nothing to say.
    if (!fused_embedding_optimizer(p).empty()) say("fused", "no optimizer step range or kernel besides");
    return;
  }
  const std::string kernels = format::count(named, "optimizer kernel", "optimizer kernels");
  if (multi * 2 > named)
    return say(fused ? "fused" : "foreach",
               format::count(multi, "multi-tensor or fused kernel", "multi-tensor or fused kernels") + " of " +
                   kernels + " by name (no optimizer step range to count them in)");
  const std::size_t steps = p.steps.steps.size();
  if (steps > 0 && static_cast<double>(named - multi) / static_cast<double>(steps) >= th.optimizer_kernels_per_step)
    return say("per-parameter", kernels + " by name over " + format::count(steps, "step", "steps") + ", " +
                                    format::fixed(static_cast<double>(named - multi) / static_cast<double>(steps), 0) +
                                    " per step, not multi-tensor");
  say("unknown", kernels + " by name, " + format::count(multi, "multi-tensor", "multi-tensor") +
                     (steps ? ", " + format::fixed(static_cast<double>(named - multi) / static_cast<double>(steps), 0) +
                                  " per step: " + too_few(th)
                            : ", and no steps to count them per step"));
}

// Copies made by the compiler: the copy advice speaks of them as such, and
// the Workload line says how many.
void note_compiled_copies(const MemcpyStats& m, WorkloadKind* w) {
  w->compiled_copies = 0;
  for (const CopyGroup& g : m.groups) w->compiled_copies += g.compiled;
}

// [SECTION] Jobs -------------------------------------------------------------------------------

WorkloadKind pool_workloads(const std::vector<const WorkloadKind*>& ranks) {
  WorkloadKind w;
  if (ranks.empty()) return w;
  w = *ranks.front();
  w.ranks = static_cast<std::uint32_t>(ranks.size());
  if (w.ranks > 1) w.mpi_evidence.clear(), w.rank_evidence.clear(), w.rank = -1;  // the job's files hold its ranks
  w.graph_kernels = 0;
  w.graph_launches = 0;
  w.replay_launches = 0, w.replay_kernels = 0, w.replay_kernel_ns = 0;
  w.pinning_calls = 0, w.pinning_ns = 0;
  w.data_loading_ns = 0, w.input_work.clear(), w.python_ranges = 0;
  for (const WorkloadKind* r : ranks) {
    w.graph_kernels += r->graph_kernels;
    w.bundled = w.bundled && r->bundled;
    if (r->phase == "training" && w.phase != "training") {  // one rank's backward makes the job a training job
      w.phase = r->phase;
      w.phase_evidence = r->phase_evidence;
    }
    w.graph_launches += r->graph_launches;
    w.replay_launches += r->replay_launches, w.replay_kernels += r->replay_kernels;
    w.replay_kernel_ns += r->replay_kernel_ns;
    w.pinning_calls += r->pinning_calls, w.pinning_ns += r->pinning_ns;
    w.python_ranges += r->python_ranges;
    if (w.host_filtered.empty() && !r->host_filtered.empty())
      w.host_filtered = r->host_filtered + " (one rank's trace)";
    // The rank that loads longest speaks for the job.
    if (r->data_loading_ns > w.data_loading_ns) w.data_loading_ns = r->data_loading_ns, w.input_work = r->input_work;
    w.data_loading_recorded = w.data_loading_recorded || r->data_loading_recorded;
    if (w.framework == "unknown" && r->framework != "unknown")
      w.framework = r->framework, w.framework_evidence = r->framework_evidence;
    if (w.engine.empty() && !r->engine.empty()) w.engine = r->engine, w.engine_evidence = r->engine_evidence;
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
  // The run's kind only where every rank has it; the ranks' clocks differ,
  // so no window is kept (nothing is held against one).
  w.kernel_window = {};
  const bool agree = std::all_of(ranks.begin(), ranks.end(), [&](const WorkloadKind* r) { return r->run == w.run; });
  if (!agree) w.run.clear(), w.run_evidence.clear(), w.setup_ns = w.teardown_ns = 0;
  if (agree && !w.run.empty() && w.ranks > 1) w.run_evidence += " (the first rank; every rank is so)";
  return w;
}

// [SECTION] Advice that fits ---------------------------------------------------------------------

// Whether most of a finding's time ranges lie outside `window` (a one-shot
// run's setup and teardown). A finding without ranges is not placed.
bool mostly_outside(const Finding& f, TimeRange window) {
  TimeNs all = 0, inside = 0;
  for (const TimeRange& r : f.ranges) {
    all += r.duration();
    inside += std::max<TimeNs>(0, std::min(r.end, window.end) - std::max(r.start, window.start));
  }
  return all > 0 && 2 * inside < all;
}

namespace {
// What a run that replays CUDA graphs still runs eagerly, by its phase: an
// inference run has no optimizer step.
std::string eager_parts(const WorkloadKind& w) {
  if (w.phase == "training") return "the optimizer step, data-dependent parts";
  if (w.phase == "inference")
    return "the parts outside the captured graphs, such as text encoders or pre/post-processing";
  return "data-dependent parts, and the optimizer step if it trains";
}
}  // namespace

std::string_view graph_word_of(const std::vector<DeviceSummary>& devices) {
  for (const DeviceSummary& d : devices)
    if (!nvidia_gpu(d.name, d.compute_major, d.compute_minor)) return "HIP graph";
  return "CUDA graph";
}

void fit_to_workload(const WorkloadKind& w, std::vector<Finding>& findings, std::string_view graph) {
  // Nothing on the GPU, or a span of microseconds: no finding is numbered
  // (the workload line says why); the recording's own damage still is.
  // They stay as minor observations (no saving, no share: settle_findings()
  // lists them unnumbered), so nothing is dropped without a word.
  auto demote = [](Finding& f, const char* why) {
    f.saving_ns = 0;
    f.share = 0;
    f.saving_note = why;
  };
  if (w.run == "no-kernels" || w.run == "gpu-unrecorded" || w.run == "tiny-span")
    for (Finding& f : findings)
      if (f.id != "dropped-records") demote(f, "the GPU works microseconds: any figure over it is noise");
  if (w.run == "sampled")
    for (Finding& f : findings)
      if (f.id != "dropped-records") demote(f, "a sampled trace: most of the GPU's work is not in it");
  if (w.run == "graph-capture") {
    // The host recording launches while the GPU has nothing to run is what a
    // capture is: a step's host time around the GPU's work, and kernels never
    // side by side (a capture runs almost none), say nothing of the program.
    findings.erase(
        std::remove_if(findings.begin(), findings.end(),
                       [](const Finding& f) { return f.id == "step-host-time" || f.id == "low-concurrency"; }),
        findings.end());
    for (Finding& f : findings)
      if (f.id != "dropped-records") demote(f, "about set-up: graph capture and the runs before it");
  }
  // A one-shot run: nothing numbered about its setup or teardown (copies of
  // the weights before the first kernel, module unloading after the last,
  // the idle time around them).
  if (w.run == "one-shot" && w.kernel_window.duration() > 0)
    for (Finding& f : findings)
      if (mostly_outside(f, w.kernel_window)) demote(f, "about the program's setup or teardown, not its work");
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
      if (const std::size_t at = r.find(" Bundled workload:"); at != std::string::npos)
        r.erase(at, r.find('.', at) == std::string::npos ? std::string::npos : r.find('.', at) + 1 - at);
    // A serving engine's launch advice is its own (its capture sizes), kept.
    if (w.execution == "cuda graphs" && (f.id == "launch-bound" || f.id == "op-launch-overhead") &&
        (w.engine.empty() || f.id != "launch-bound"))
      r = (w.graph_kernels
               ? "This run already replays " + std::string(graph) + "s (" +
                     format::count(w.graph_kernels, "kernel", "kernels") + " from graphs)"
               : "This run already captures " + std::string(graph) + "s (" + format::count(w.graph_captures) +
                     (w.graph_captures == 1 ? " capture" : " captures") + ", none replayed in the trace)") +
          ": the launch gaps left are outside them. Capture what still runs eagerly between graph launches (" +
          eager_parts(w) +
          ": torch.compile(mode='reduce-overhead') captures what it can), fuse the small kernels that stay eager, "
          "and give each kernel more work with a larger batch.";
  }
}

}  // namespace gpuscope::detail
