// Internal to analysis/findings/: what every rule uses — the run's totals, the
// Builder a rule adds its findings through, the number words and the
// heaviest-kernel lists — and every rule's function, by family (one file
// each). A new rule: its function in its family's file, its declaration
// here, its row in registry.cpp's kRules and in docs/findings.md, its
// threshold in FindingThresholds (analyze.h).
//
// saving_ns estimates the wall-clock time a fix would save over the traced
// window. Devices run in parallel, so a saving measured as time summed over
// devices is divided by the number of devices. Savings of different findings
// overlap (an idle gap can be both "input-bound" and "low utilization"): they
// order findings, they do not add up.
//
// [SECTION] Number words and shared quantities
// [SECTION] The rules, by family
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/detail/context.h"
#include "analysis/ops/occupancy.h"
#include "words/format.h"

namespace gpuscope::detail::rules {

// [SECTION] Number words and shared quantities ---------------------------------------------

inline std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

inline std::string pct(double share) { return format::percent(share); }
inline std::string pct1(double share) { return format::percent1(share); }
inline std::string dur(TimeNs ns) { return format::duration(ns); }
inline std::string count(std::uint64_t n) { return format::count(n); }
inline std::string count(std::uint64_t n, std::string_view one, std::string_view many) {
  return format::count(n, one, many);
}
inline std::string bytes(std::uint64_t b) { return format::bytes(b); }

struct Totals {
  std::size_t devices = 0;
  TimeNs span = 0, busy = 0, idle = 0, kernel_busy = 0, kernel_time = 0;
  TimeNs comm = 0, exposed_comm = 0, memcpy = 0, memcpy_exposed = 0;
  TimeNs host_wait = 0, kernel_wait = 0, other_idle = 0;
  double min_util = 1, max_util = 0;
  TimeNs category[kKernelCategoryCount] = {};
  std::uint64_t category_count[kKernelCategoryCount] = {};
  TimeNs gpu_time = 0;
  std::uint64_t kernels = 0;

  explicit Totals(const Profile& p) {
    for (const DeviceSummary& d : p.devices) {
      ++devices;
      kernels += d.kernels;
      span += d.span_ns;
      busy += d.busy_ns;
      idle += d.idle_ns;
      kernel_busy += d.kernel_busy_ns;
      kernel_time += d.kernel_time_ns;
      comm += d.communication_ns;
      exposed_comm += d.exposed_communication_ns;
      memcpy += d.memcpy_ns;
      memcpy_exposed += d.memcpy_exposed_ns;
      host_wait += d.idle_host_wait_ns;
      kernel_wait += d.idle_kernel_wait_ns;
      other_idle += d.idle_other_ns;
      min_util = std::min(min_util, d.utilization);
      max_util = std::max(max_util, d.utilization);
    }
    for (const CategoryTime& c : p.categories) {
      category[static_cast<int>(c.category)] = c.time_ns;
      category_count[static_cast<int>(c.category)] = c.count;
    }
    gpu_time = p.kernel_time_ns;
    // Work queued ahead of the first step ran in no step's time (the
    // previous iteration's tail): the category rules weigh the steps' own
    // work, without it (own_…).
    std::copy(std::begin(category), std::end(category), std::begin(own_category));
    std::copy(std::begin(category_count), std::end(category_count), std::begin(own_count));
    own_gpu_time = gpu_time;
    for (const CategoryTime& c : p.steps.backlog_categories) {
      const int i = static_cast<int>(c.category);
      const TimeNs ns = std::min(c.time_ns, own_category[i]);
      own_category[i] -= ns, own_gpu_time -= ns, backlog_kernel_ns += ns;
      own_count[i] -= std::min(c.count, own_count[i]);
    }
  }
  // The categories without the backlog's kernels, and their total; the
  // backlog's kernel time left out (0: none).
  TimeNs own_category[kKernelCategoryCount] = {};
  std::uint64_t own_count[kKernelCategoryCount] = {};
  TimeNs own_gpu_time = 0, backlog_kernel_ns = 0;
  TimeNs own(KernelCategory c) const { return own_category[static_cast<int>(c)]; }
  double own_share(KernelCategory c) const { return ratio(own(c), own_gpu_time); }
  TimeNs own_math_ns() const {
    return own(KernelCategory::convolution) + own(KernelCategory::gemm) + own(KernelCategory::attention);
  }
  // "of kernel time", or where a backlog is left out, "of the steps' kernel
  // time".
  std::string kernel_time_words() const {
    return backlog_kernel_ns > 0 ? "of the steps' kernel time" : "of kernel time";
  }
  // A time summed over devices, as wall-clock time (devices run in parallel).
  TimeNs per_device(TimeNs summed) const { return devices ? summed / static_cast<TimeNs>(devices) : summed; }
  double share_of_gpu(KernelCategory c) const { return ratio(category[static_cast<int>(c)], gpu_time); }
  TimeNs of(KernelCategory c) const { return category[static_cast<int>(c)]; }
  // The math: convolution + GEMM + attention kernel time.
  TimeNs math_ns() const {
    return of(KernelCategory::convolution) + of(KernelCategory::gemm) + of(KernelCategory::attention);
  }
};

inline std::vector<std::string> kernels_of(const Profile& p, KernelCategory c, std::size_t n = 5) {
  std::vector<std::string> out;
  for (const Hotspot& h : p.hotspots)
    if (h.category == c && out.size() < n) out.push_back(h.name);
  return out;
}

// "name 12% of kernel time, 40x, mean 1.2 ms; …" for the heaviest `n`
// hotspots that `keep` accepts; "none recorded" when there are none (a "Top:"
// list is never empty).
template <class Keep>
inline std::string top_kernels_where(const Profile& p, Keep keep, std::size_t n) {
  std::vector<const Hotspot*> top;
  std::vector<std::string_view> names;
  for (const Hotspot& h : p.hotspots) {
    if (top.size() == n) break;
    if (!keep(h)) continue;
    top.push_back(&h);
    names.push_back(h.name);
  }
  const std::vector<std::string> shown = format::short_kernel_names(names);
  std::string s;
  for (std::size_t i = 0; i < top.size(); ++i) {
    const Hotspot& h = *top[i];
    if (!s.empty()) s += "; ";
    s += shown[i] + " " + pct(h.share) + " of kernel time, " + count(h.stats.count) + "x, mean " + dur(h.stats.mean);
  }
  return s.empty() ? std::string("none recorded") : s;
}

inline std::string top_kernels_text(const Profile& p, KernelCategory c, std::size_t n = 3) {
  return top_kernels_where(
      p, [c](const Hotspot& h) { return h.category == c; }, n);
}

// "The math": convolutions, GEMMs and fused attention (two GEMMs per kernel).
inline bool is_math(KernelCategory c) {
  return c == KernelCategory::convolution || c == KernelCategory::gemm || c == KernelCategory::attention;
}

// The heaviest math kernels.
inline std::string top_math_kernels_text(const Profile& p, std::size_t n) {
  return top_kernels_where(
      p, [](const Hotspot& h) { return is_math(h.category); }, n);
}

// Whether PyTorch's DataLoader loads in worker processes, from the
// iterator its ranges name ("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"):
// none (num_workers=0), some, or unknown (no such range).
enum class LoaderWorkers { unknown, none, some };
inline LoaderWorkers loader_workers(const Profile& p) {
  bool single = false, multi = false;
  for (const OpRow& r : p.op_names) {
    if (r.calls == 0 || !r.name.starts_with("enumerate(DataLoader)#")) continue;
    single |= r.name.find("_SingleProcessDataLoaderIter") != std::string::npos;
    multi |= r.name.find("_MultiProcessingDataLoaderIter") != std::string::npos;
  }
  return multi ? LoaderWorkers::some : single ? LoaderWorkers::none : LoaderWorkers::unknown;
}

// True unless a GPU of the profile is plainly not NVIDIA's (nvidia_gpu()).
inline bool nvidia_gpus(const Profile& p) {
  for (const DeviceSummary& d : p.devices)
    if (!nvidia_gpu(d.name, d.compute_major, d.compute_minor)) return false;
  return true;
}

// Whose GPUs ran the trace, for fixes that name a vendor's library (cuDNN,
// NVDEC and DALI are NVIDIA's; MIOpen, rocDecode and rocJPEG are ROCm's):
// amd where a GPU is plainly not NVIDIA's (nvidia_gpu()), nvidia where
// every GPU has a name or a compute capability and none is AMD's, unknown
// where no GPU says what it is (a fix then names both or neither).
enum class GpuVendor { unknown, nvidia, amd };
inline GpuVendor gpu_vendor(const Profile& p) {
  bool known = !p.devices.empty();
  for (const DeviceSummary& d : p.devices) {
    if (!nvidia_gpu(d.name, d.compute_major, d.compute_minor)) return GpuVendor::amd;
    known = known && (!d.name.empty() || d.compute_major > 0);
  }
  return known ? GpuVendor::nvidia : GpuVendor::unknown;
}

// The GPU's multiprocessors and its kernels' thread groups in the vendor's
// words: SMs and blocks on NVIDIA (and where the vendor is unknown), compute
// units (CUs) and workgroups on AMD.
inline std::string_view sm_words(const Profile& p) { return gpu_vendor(p) == GpuVendor::amd ? "CUs" : "SMs"; }
inline std::string blocks_words(const Profile& p, std::uint64_t n) {
  const bool amd = gpu_vendor(p) == GpuVendor::amd;
  return format::count(n) + (amd ? (n == 1 ? " workgroup" : " workgroups") : (n == 1 ? " block" : " blocks"));
}

// Where in Python the heaviest kernel of a kind was launched from
// (Hotspot::python_frame): the frame, its share of that kernel's time, and
// whether the frame is a library's (Hugging Face's, diffusers', vLLM's, an
// installed package's) rather than the program's own code. Empty frame:
// the trace has no Python frames for it.
struct LaunchedFrom {
  std::string frame;
  double share = 0;
  bool library = false;
};
template <class Pred>
LaunchedFrom launched_from(const Profile& p, Pred&& of_kind) {
  for (const Hotspot& h : p.hotspots) {
    if (!of_kind(h)) continue;
    if (h.python_frame.empty()) return {};
    LaunchedFrom l{h.python_frame, h.python_frame_share, false};
    for (std::string_view lib : {"site-packages/", "dist-packages/", "transformers/", "diffusers/", "vllm/", "sglang/",
                                 "timm/", "torchvision/", "accelerate/", "peft/", "xformers/", "megatron/",
                                 "deepspeed/", "torchrec/", "fbgemm_gpu/", "apex/"})
      l.library = l.library || l.frame.starts_with(lib) || l.frame.find("/" + std::string(lib)) != std::string::npos;
    return l;
  }
  return {};
}

// A captured launch sequence in the vendor's words: a CUDA graph, a HIP
// graph on AMD (PyTorch's torch.cuda.CUDAGraph captures one there).
inline std::string graph_words(const Profile& p) { return std::string(graph_word_of(p.devices)); }

// A trace of a one-time graph capture: it captures graphs and launches each
// at most once, its first run. Its waits for the host are the capture's and
// the program's first calls'; later calls replay the graph, whose kernels
// have no host launches between them, so how they wait the trace cannot say.
inline bool one_time_capture(const Profile& p) {
  return p.workload.graph_captures > 0 && p.workload.graph_launches <= p.workload.graph_captures;
}

// The words of a fix by vendor: NVIDIA's, AMD's (ROCm's), or for either.
inline std::string for_vendor(const Profile& p, std::string nvidia, std::string amd, std::string either) {
  switch (gpu_vendor(p)) {
    case GpuVendor::nvidia: return nvidia;
    case GpuVendor::amd: return amd;
    case GpuVendor::unknown: break;
  }
  return either;
}

// Where decoding and resizing move to the GPU, on the vendor's decoders.
inline std::string gpu_decoders(const Profile& p) {
  return for_vendor(p, "torchvision.io / NVDEC, NVIDIA DALI",
                    "ROCm's rocDecode and rocJPEG, torchvision's transforms on GPU tensors",
                    "the GPU vendor's decoders (NVDEC or DALI on NVIDIA, rocDecode or rocJPEG on AMD), "
                    "torchvision's transforms on GPU tensors");
}

// Whether the trace records the host's side of the run: framework ops,
// Python functions, steps from ranges or host samples. Without any (only
// the runtime's calls and the GPU's ops) it cannot show what the host did
// between launches (where it waited for input, what held its launches).
inline bool host_side_recorded(const Profile& p) {
  return !p.op_names.empty() || p.workload.python_ranges > 0 || !p.host_while_idle.empty() ||
         p.steps.source == StepSource::profiler_step || p.steps.source == StepSource::nvtx;
}

// The framework's words where the trace says which framework ran
// (WorkloadKind::framework), else words for either.
inline std::string for_framework(const Profile& p, std::string pytorch, std::string tensorflow, std::string either) {
  if (p.workload.framework == "pytorch") return pytorch;
  if (p.workload.framework == "tensorflow") return tensorflow;
  return either;
}

// What fuses small kernels, in the program's terms, for "fuse … (HERE)": a
// compiled run is not told to compile (the ops it left eager are what is
// left), a TensorFlow one is told XLA, a program of its own a fused kernel.
inline std::string fuser(const Profile& p) {
  if (p.workload.execution == "compiled")
    return "already compiled: fuse the ops it leaves eager, TORCH_LOGS=graph_breaks";
  if (p.workload.framework == "pytorch") return "torch.compile";
  if (p.workload.framework == "tensorflow") return "XLA: tf.function(jit_compile=True)";
  if (p.workload.framework == "jax") return "XLA under jax.jit: keep the work inside jit";
  return "one kernel for the chain, hand-written or generated";
}

inline std::string device_words(const Totals& t) {
  return t.devices == 1 ? std::string("the GPU") : "the " + std::to_string(t.devices) + " GPUs";
}

struct Builder {
  const Profile& p;
  const Evidence& ev;
  const AnalysisOptions& opt;
  const Totals& t;
  std::vector<Finding>* out;
  std::string_view rule;  // the id of the rule running, which every finding it adds carries

  Finding& add(Severity sev, double metric, double threshold, TimeNs saving) {
    Finding f;
    f.id = std::string(rule);
    f.severity = sev;
    f.metric = metric;
    f.threshold = threshold;
    f.saving_ns = std::max<TimeNs>(0, saving);
    out->push_back(std::move(f));
    return out->back();
  }
};

// "kernels use 87% of what their occupancy allows on GPU 0 (they hold 49% of
// its thread slots, its GPU fill; their theoretical occupancy allows 56%)":
// the measure with the figures it divides, so the answer reads the same as
// the occupancy line.
std::string room_words(const ConcurrencyRoom& room, const DeviceSummary& d);

// overlap.cpp: an all-reduce of 4 MiB or more whose fastest instance moves
// its data slower than any link between GPUs but Ethernet (bus bandwidth
// under 5 GB/s): "the 16.8 MiB all-reduce's fastest instance took 8.7 ms:
// 2.0 GB/s of algorithm bandwidth, 3.5 GB/s of bus bandwidth over 8 ranks";
// empty where none is.
std::string slow_all_reduce(const Profile& p);
// Where a smaller all-reduce (half the bytes or fewer) of the same GPU took
// half the large one's time or more at its fastest, so that, through the
// two, half the large one's time or more does not grow with the size: what
// shows it ("the 5.5 MiB all-reduce's fastest instance took 6.7 ms, 77% of
// the 16.8 MiB one's 8.7 ms for 33% of its bytes: about 5.7 ms of each call
// does not grow with its size …"); empty otherwise.
std::string all_reduce_fixed_cost(const Profile& p);

// [SECTION] The rules, by family ------------------------------------------------------------

// gpu_time.cpp: where the GPU time goes.
void padding_hotspot(Builder& b);
void broadcast_hotspot(Builder& b);
void layout_transpose(Builder& b);
void slow_normalization(Builder& b);
void no_tensor_cores(Builder& b);
void small_grid(Builder& b);
void memory_bound_aux(Builder& b);
void eager_attention(Builder& b);

// idle.cpp: why the GPU is idle.
void low_utilization(Builder& b);
void busy_not_working(Builder& b);
void gpu_idle_gaps(Builder& b);
void input_bound(Builder& b);
void step_host_time(Builder& b);
void launch_bound(Builder& b);
void host_sync(Builder& b);
// Whether launch-bound fires (op-launch-overhead then leaves its ops to it).
bool launch_bound_fires(const Builder& b);
// What a CUDA (HIP) graph capture of the step must leave out: the steps'
// synchronizations with the host between their launches (SyncStats::
// mid_step), which a capture cannot hold, named by place. `blocked`: "a
// CUDA graph capture cannot hold a synchronization with the host, and the
// step synchronizes …: `place` (…), …"; `then`: what to do ("remove them
// first", or capture the step's parts that hold none); `parts`: those parts
// ("## forward ## and ## backward ##") where they issue half the steps'
// launches or more. All empty where the trace shows none (or the run is a
// TensorFlow one or a serving engine's, whose advice captures nothing).
struct CapturePlan {
  std::string blocked, then, parts;
  bool empty() const { return blocked.empty(); }
  // The sentence said before the advice to capture: "A CUDA graph … ; remove them first. "
  std::string lead() const;
};
CapturePlan capture_plan(const Profile& p);
// Whether eager-attention reports this run (its own test, shared with the
// rules that leave its GEMMs to it).
bool eager_attention_fires(const Builder& b);
// A batched product shaped like eager attention's (framework_ops.cpp): the
// scores Q·K^T (M = N = the sequence, K = the head's width, up to 256) or
// scores·V (M = K = the sequence, N = the head's width); not a cube.
bool attention_shaped(const OpRow& r);
// The attention-shaped products (attention_shaped) below roofline_min_fraction
// of their roofline: their time above what that fraction would take (Σ
// devices), which a fused attention kernel, running them near it, removes;
// and the one with the most ("matmul [[3136,12,8,64],[3136,12,64,8]] (fp32)").
struct SlowProducts {
  TimeNs ns = 0;
  const OpRow* top = nullptr;
  std::string top_words;
};
SlowProducts attention_products_below_roofline(const Profile& p, const FindingThresholds& th);
// The share of blocking-copy time among host waits, and whether sync-memcpy
// fires (the idle rules leave its time to it).
double blocking_copy_share(const Builder& b);
bool sync_memcpy_fires(const Builder& b);
// Whether pageable-memcpy fires (copies.cpp): the GPU idle while the driver
// staged pageable copies is then its own.
bool pageable_fires(const Builder& b);

// overlap.cpp: what runs alone that could overlap.
void low_concurrency(Builder& b);
void exposed_communication(Builder& b);
void serialized_weight_update(Builder& b);
void unfused_optimizer(Builder& b);
void straggler(Builder& b);

// copies.cpp
void low_memcpy_overlap(Builder& b);
void pageable_memcpy(Builder& b);
void sync_memcpy(Builder& b);

// memory.cpp
void larger_batch_fits(Builder& b);
void memory_pressure(Builder& b);

// hardware.cpp: what the counters and the recorder measured.
void clocks_throttled(Builder& b);
void memory_bound_kernels(Builder& b);
void dropped_records(Builder& b);

// framework_ops.cpp
void op_below_roofline(Builder& b);
void op_launch_overhead(Builder& b);

}  // namespace gpuscope::detail::rules
