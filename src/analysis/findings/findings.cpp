// The findings: each rule tests one metric against its threshold and, when it
// fires, says what it saw (with the numbers), where (time ranges, kernels)
// and what to change. One function per rule id; kRules (at the end) is the
// registry: id, function, what it tests, severity policy, in the order the
// rules run. docs/findings.md lists the same rules in the same order (tested).
//
// [SECTION] Formatting and shared quantities
// [SECTION] Where the GPU time goes (padding, broadcast, transposes, normalization, tensor cores)
// [SECTION] Why the GPU is idle (utilization, gaps, input, launches, syncs)
// [SECTION] Overlap (concurrency, copies, communication, weight update, stragglers)
// [SECTION] Memory (batch size, pressure)
// [SECTION] Copies and data quality
// [SECTION] Framework ops (roofline, launch overhead)
// [SECTION] The registry and the entry point
//
// A new rule: its function here (b.add() names the finding after the rule
// that runs), its row in kRules, its row in docs/findings.md, its threshold
// in FindingThresholds.
//
// saving_ns estimates the wall-clock time a fix would save over the traced
// window. Devices run in parallel, so a saving measured as time summed over
// devices is divided by the number of devices. Savings of different findings
// overlap (an idle gap can be both "input-bound" and "low utilization"): they
// order findings, they do not add up.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>
#include <string>

#include "analysis/detail/context.h"
#include "analysis/format.h"
#include "analysis/job.h"
#include "analysis/occupancy.h"

namespace gpuscope::detail {

namespace {

// [SECTION] Formatting and shared quantities ---------------------------------------------

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string pct(double share) { return format::percent(share); }
std::string pct1(double share) { return format::percent1(share); }
std::string dur(TimeNs ns) { return format::duration(ns); }
std::string count(std::uint64_t n) { return format::count(n); }
std::string bytes(std::uint64_t b) { return format::bytes(b); }

struct Totals {
  std::size_t devices = 0;
  TimeNs span = 0, busy = 0, idle = 0, kernel_busy = 0, kernel_time = 0;
  TimeNs comm = 0, exposed_comm = 0, memcpy = 0, memcpy_exposed = 0;
  TimeNs host_wait = 0, kernel_wait = 0, other_idle = 0;
  double min_util = 1, max_util = 0;
  TimeNs category[kKernelCategoryCount] = {};
  std::uint64_t category_count[kKernelCategoryCount] = {};
  TimeNs gpu_time = 0;

  explicit Totals(const Profile& p) {
    for (const DeviceSummary& d : p.devices) {
      ++devices;
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

std::vector<std::string> kernels_of(const Profile& p, KernelCategory c, std::size_t n = 5) {
  std::vector<std::string> out;
  for (const Hotspot& h : p.hotspots)
    if (h.category == c && out.size() < n) out.push_back(h.name);
  return out;
}

// "name 12% of kernel time, 40x, mean 1.2 ms; …" for the heaviest `n`
// hotspots that `keep` accepts; "none recorded" when there are none (a "Top:"
// list is never empty).
template <class Keep>
std::string top_kernels_where(const Profile& p, Keep keep, std::size_t n) {
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

std::string top_kernels_text(const Profile& p, KernelCategory c, std::size_t n = 3) {
  return top_kernels_where(
      p, [c](const Hotspot& h) { return h.category == c; }, n);
}

// "The math": convolutions, GEMMs and fused attention (two GEMMs per kernel).
bool is_math(KernelCategory c) {
  return c == KernelCategory::convolution || c == KernelCategory::gemm || c == KernelCategory::attention;
}

// The heaviest math kernels.
std::string top_math_kernels_text(const Profile& p, std::size_t n) {
  return top_kernels_where(
      p, [](const Hotspot& h) { return is_math(h.category); }, n);
}

std::string device_words(const Totals& t) {
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

// [SECTION] Where the GPU time goes --------------------------------------------------------------

void category_hotspot(Builder& b, KernelCategory cat, double threshold, const char* what, const char* why,
                      const char* fix, double saving_fraction) {
  const double share = b.t.share_of_gpu(cat);
  if (share < threshold || share == 0) return;
  const TimeNs time = b.t.category[static_cast<int>(cat)];
  Finding& f = b.add(share >= 3 * threshold ? Severity::critical : Severity::warning, share, threshold,
                     static_cast<TimeNs>(static_cast<double>(b.t.per_device(time)) * saving_fraction));
  f.title = pct1(share) + " of kernel time (" + dur(time) + ") is in " + what + " (" +
            count(b.t.category_count[static_cast<int>(cat)]) + " launches)";
  f.evidence = std::string("Top kernels: ") + top_kernels_text(b.p, cat) + ". Share of kernel time " + pct1(share) +
               " vs threshold " + pct1(threshold) + ". " + why;
  f.recommendation = fix;
  f.kernels = kernels_of(b.p, cat);
  f.ranges = b.ev.ops_by_category[static_cast<int>(cat)].ranges();
}

void padding_hotspot(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  category_hotspot(
      b, KernelCategory::padding, th.padding_share, "padding kernels",
      "An explicit pad copies the whole activation tensor before the convolution instead of padding inside it; "
      "TensorFlow inserts one whenever a SAME convolution needs odd total padding (a 3x3 stride-2 convolution on an "
      "even-sized input), forward and backward, and tf.pad in shortcut branches adds more.",
      "Let the convolution do the padding: use symmetric padding (explicit padding=1 on 3x3 convolutions, input "
      "sizes for which SAME padding is even), or cuDNN's graph API, which takes asymmetric pre/post padding; pad "
      "channels once in the input pipeline instead of in every shortcut. Bundled workload: --padding fused.",
      1.0);
}

void broadcast_hotspot(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  category_hotspot(
      b, KernelCategory::broadcast, th.broadcast_share, "broadcast kernels",
      "Bias adds and batch-norm scale/shift done as a separate broadcast kernel followed by an elementwise kernel "
      "read and write the activation tensor twice more than needed.",
      "Fuse the broadcast into its producer or consumer: bias (+activation) in the convolution's epilogue "
      "(cudnnConvolutionBiasActivationForward, cuDNN graph API fusions), a fused batch norm (tf.nn.fused_batch_norm, "
      "cuDNN batch norm) instead of mean/variance/scale ops, and elementwise kernels that broadcast on the fly instead "
      "of materialising the broadcast tensor. Bundled workload: --bias fused.",
      1.0);
}

void layout_transpose(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  category_hotspot(
      b, KernelCategory::transpose, th.transpose_share, "layout transposes",
      "Converting activations between NCHW and NHWC around individual layers costs a full read and write of the "
      "tensor each time.",
      "Keep one layout end to end: NHWC (channels_last in PyTorch, data_format='channels_last' in TensorFlow) suits "
      "tensor-core convolutions and batch norm; convert once at the input, not around each layer. Bundled workload: "
      "--layout nhwc.",
      1.0);
}

// Normalization: slow when it is a large share of kernel time, or large next to the convolutions it follows.
void slow_normalization(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const double norm = b.t.share_of_gpu(KernelCategory::normalization);
  const TimeNs norm_ns = b.t.category[static_cast<int>(KernelCategory::normalization)];
  const TimeNs conv_ns = b.t.category[static_cast<int>(KernelCategory::convolution)];
  const bool vs_conv = conv_ns > 0 && norm_ns * 2 >= conv_ns && norm >= 0.05;
  if (norm > 0 && (norm >= th.normalization_share || vs_conv)) {
    Finding& f = b.add(norm >= 2 * th.normalization_share ? Severity::critical : Severity::warning, norm,
                       th.normalization_share, b.t.per_device(norm_ns) / 2);
    f.title = pct1(norm) + " of kernel time (" + dur(norm_ns) + ") is in normalization kernels" +
              (conv_ns > 0 ? ", " + fmt("%.2f", double(norm_ns) / double(conv_ns)) + "x the convolution time" : "");
    // Kernels the template-argument rule placed: per-channel statistics computed as generic reductions.
    TimeNs stats_ns = 0;
    std::uint64_t stats_kernels = 0;
    bool nchw = false;
    for (const Hotspot& h : b.p.hotspots)
      if (h.category == KernelCategory::normalization && h.category_rule.starts_with("template arguments")) {
        stats_ns += h.stats.total;
        stats_kernels += h.stats.count;
        nchw = nchw || h.category_rule.find("NCHW") != std::string::npos;
      }
    f.evidence = "Top kernels: " + top_kernels_text(b.p, KernelCategory::normalization) + ". Share " + pct1(norm) +
                 " vs threshold " + pct1(th.normalization_share) +
                 " (or at least half the convolution time with a 5% share).";
    if (stats_kernels)
      f.evidence +=
          " Of it, " + dur(stats_ns) + " (" + count(stats_kernels) + " kernels) are Eigen reductions over " +
          (nchw ? std::string("axes {0,2,3} of NCHW tensors") : std::string("3 of the 4 axes of 4-D tensors")) +
          ": per-channel mean and variance computed as generic reductions, batch norm done the slow way "
          "(tf.nn.moments / unfused batch norm), not by a batch-norm kernel.";
    else
      f.evidence += " Batch norm in NCHW done as reductions over axes [0,2,3] with few threads is slow.";
    f.recommendation =
        "Use a fused batch norm (cuDNN's training kernels, NHWC and its persistent modes; torch.nn.BatchNorm2d with "
        "channels_last; tf.nn.fused_batch_norm) and fold BN + ReLU (+ residual add) into one kernel; keep one layout "
        "so no transposes surround it. Estimated saving: half the normalization time. Bundled workload: --bn fused.";
    f.kernels = kernels_of(b.p, KernelCategory::normalization);
    f.ranges = b.ev.ops_by_category[static_cast<int>(KernelCategory::normalization)].ranges();
  }
}

// Tensor cores: GPUs of compute capability >= 7 have them; the convolutions
// and GEMMs either use them (their names say so) or not.
// Tensor-pipe activity measured during convolutions and GEMMs (hw.tensor_active
// samples attributed to those kernels), per GPU with enough samples; nullopt
// where no GPU measured it. When measured, it decides no-tensor-cores instead
// of the kernel names.
struct TensorMeasure {
  std::uint64_t samples = 0;
  double active = 0;  // sample-weighted mean
  const DeviceSummary* device = nullptr;
};
std::optional<TensorMeasure> measured_tensor_activity(const Builder& b) {
  TensorMeasure m;
  double sum = 0;
  for (const DeviceSummary& d : b.p.devices)
    for (const HwCategory& c : d.hw.by_category) {
      if (!is_math(c.category) || !c.tensor_active) continue;
      sum += *c.tensor_active * static_cast<double>(c.samples);
      m.samples += c.samples;
      if (!m.device) m.device = &d;
    }
  if (m.samples < b.opt.thresholds.hw_min_samples) return std::nullopt;
  m.active = sum / static_cast<double>(m.samples);
  return m;
}

void no_tensor_cores(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  if (const std::optional<TensorMeasure> m = measured_tensor_activity(b)) {
    const TimeNs eligible = b.t.math_ns();
    const double eligible_share = ratio(eligible, b.t.gpu_time);
    if (eligible_share < th.tensor_core_eligible_share || m->active >= th.hw_tensor_idle) return;
    Finding& f = b.add(Severity::warning, m->active, th.hw_tensor_idle, b.t.per_device(eligible) / 2);
    f.title = "Tensor cores idle under the math: the tensor pipes were active " + pct1(m->active) +
              " of the time during " + dur(eligible) + " of convolution, GEMM and attention kernels (measured, " +
              count(m->samples) + " samples)";
    f.evidence = "Measured by the GPU's counters (hw.tensor_active, CUPTI PM sampling), not read from kernel names: " +
                 count(m->samples) +
                 " samples taken while convolution, GEMM or attention kernels ran, mean tensor-pipe activity " +
                 pct1(m->active) + " vs a " + pct1(th.hw_tensor_idle) +
                 " threshold. Convolutions, GEMMs and attention take " + pct1(eligible_share) +
                 " of kernel time. Top: " + top_math_kernels_text(b.p, 2) + ".";
    f.recommendation =
        "The math runs on the FP32 pipes. Use a tensor-core data type: torch.autocast with bf16/fp16, or TF32 on "
        "Ampere and newer (torch.backends.cuda.matmul.allow_tf32 / torch.backends.cudnn.allow_tf32); NHWC "
        "(channels_last) and channel counts that are multiples of 8 so cuDNN and cuBLAS pick tensor-core kernels. "
        "Estimated saving: half the math time. Bundled workload: --precision bf16.";
    for (const Hotspot& h : b.p.hotspots)
      if (is_math(h.category) && f.kernels.size() < 5) f.kernels.push_back(h.name);
    f.ranges = b.ev.ops_by_category[static_cast<int>(KernelCategory::convolution)].ranges();
    return;
  }
  const DeviceSummary* capable = nullptr;
  for (const DeviceSummary& d : b.p.devices)
    if (d.compute_major >= 7 && !capable) capable = &d;
  const TimeNs eligible = b.t.math_ns();
  TimeNs tc = 0;
  for (const Hotspot& h : b.p.hotspots)
    if (is_math(h.category) && h.tensor_cores) tc += h.stats.total;
  const double eligible_share = ratio(eligible, b.t.gpu_time);
  const double tc_share = ratio(tc, eligible);
  if (capable && eligible_share >= th.tensor_core_eligible_share && tc_share < th.tensor_core_min_share) {
    Finding& f = b.add(Severity::warning, tc_share, th.tensor_core_min_share, b.t.per_device(eligible - tc) / 2);
    f.title = "Tensor cores idle: " + pct(tc_share) + " of the " + dur(eligible) +
              " of convolution, GEMM and attention time runs on tensor cores (" + capable->name +
              ", compute capability " + std::to_string(capable->compute_major) + "." +
              std::to_string(capable->compute_minor) + ")";
    f.evidence = "Convolutions, GEMMs and attention take " + pct1(eligible_share) +
                 " of kernel time; tensor-core kernels (names "
                 "with hmma/884/1688/16816/xmma/gmma/wmma/tensorop/nvjet, FlashAttention) take " +
                 pct1(tc_share) + " of it, vs a " + pct1(th.tensor_core_min_share) +
                 " threshold. Top: " + top_math_kernels_text(b.p, 2) + ".";
    f.recommendation =
        "Train in mixed precision: torch.autocast with bf16/fp16 (or TF32 on Ampere and newer: "
        "torch.backends.cuda.matmul.allow_tf32 / torch.backends.cudnn.allow_tf32), tf.keras.mixed_precision; use NHWC "
        "(channels_last) and channel counts that are multiples of 8 so cuDNN and cuBLAS choose tensor-core kernels. "
        "Estimated saving: half the math time. Bundled workload: --precision bf16.";
    for (const Hotspot& h : b.p.hotspots)
      if (is_math(h.category) && f.kernels.size() < 5) f.kernels.push_back(h.name);
    f.ranges = b.ev.ops_by_category[static_cast<int>(KernelCategory::convolution)].ranges();
  }
}

// Memory-bound auxiliary work: elementwise, copy, reduction and layout kernels
// each read and write whole tensors for little arithmetic; when they outweigh
// the math, or one kind of them holds a large share, fusing them (torch.compile,
// XLA, fused library ops) removes most of those round trips. Padding, broadcast
// and transposes that their own findings report are left out (their time is
// counted there, not twice).
struct AuxPart {
  KernelCategory category;
  TimeNs ns;
};

std::vector<AuxPart> aux_parts(const Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  std::vector<AuxPart> parts;
  for (KernelCategory c : {KernelCategory::elementwise, KernelCategory::memory, KernelCategory::reduction})
    parts.push_back({c, b.t.of(c)});
  const std::pair<KernelCategory, double> own[] = {{KernelCategory::transpose, th.transpose_share},
                                                   {KernelCategory::padding, th.padding_share},
                                                   {KernelCategory::broadcast, th.broadcast_share}};
  for (const auto& [c, threshold] : own)
    if (b.t.share_of_gpu(c) < threshold) parts.push_back({c, b.t.of(c)});  // below its own finding's threshold
  return parts;
}

// The op chains the CPU op tree shows, each with the fused op that replaces it.
std::string fusable_chains(const Profile& p) {
  auto has = [&](std::initializer_list<std::string_view> names) {
    for (std::string_view n : names) {
      bool found = false;
      for (const OpRow& r : p.op_names)
        if (r.gpu_self_ns > 0 && (r.name == n || r.name == "aten::" + std::string(n))) found = true;
      if (!found) return false;
    }
    return true;
  };
  std::string s;
  auto add = [&](const std::string& chain) { s += (s.empty() ? "" : "; ") + chain; };
  if (has({"pow", "mean", "rsqrt"}))
    add("pow/mean/rsqrt/mul: an RMS norm written out (torch.nn.RMSNorm or a fused RMSNorm kernel)");
  if (has({"neg", "cat"}) && has({"mul"})) add("neg/cat/mul: rotary embeddings (a fused RoPE kernel)");
  if (has({"silu", "mul"})) add("silu × mul: a SwiGLU gate (a fused SiLU-and-mul kernel)");
  if (has({"gelu", "mul"})) add("gelu × mul: a GeGLU gate (a fused GELU-and-mul kernel)");
  if (has({"var_mean"}) || has({"var", "mean"}))
    add("mean/var: a normalization written out (the library's fused norm)");
  return s;
}

bool tensorflow_kernels(const Profile& p) {
  for (const Hotspot& h : p.hotspots)
    if (h.name.find("Eigen::") != std::string::npos || h.name.find("tensorflow::") != std::string::npos) return true;
  return false;
}

void memory_bound_aux(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const std::vector<AuxPart> parts = aux_parts(b);
  TimeNs aux = 0;
  std::uint64_t launches = 0;
  const AuxPart* top = nullptr;
  for (const AuxPart& a : parts) {
    aux += a.ns;
    launches += b.t.category_count[static_cast<int>(a.category)];
    if (!top || a.ns > top->ns) top = &a;
  }
  const TimeNs math = b.t.math_ns();
  const double aux_share = ratio(aux, b.t.gpu_time);
  const double top_share = top ? ratio(top->ns, b.t.gpu_time) : 0.0;
  const bool over_math = math > 0 && aux > math && aux_share >= th.aux_min_share;
  const bool one_kind = top_share > th.aux_category_share;
  // A share of kernel time says little when the kernels hardly fill the run (a
  // few microseconds of kernels in a trace of a host program).
  // And fusing needs kernels to fuse: a handful of them is no chain.
  const bool matters = ratio(aux, b.t.span) >= th.aux_min_span_share && launches >= th.aux_min_kernels;
  if (aux == 0 || !matters || (!over_math && !one_kind)) return;
  // The metric is what made it fire: the whole share against the math, else the one category's share.
  Finding& f = b.add(aux_share >= 2 * th.aux_min_share && over_math ? Severity::critical : Severity::warning,
                     over_math ? aux_share : top_share, over_math ? th.aux_min_share : th.aux_category_share,
                     b.t.per_device(aux) / 2);
  f.title = "Memory-bound auxiliary work dominates: " + pct1(aux_share) + " of kernel time (" + dur(aux) + ", " +
            count(launches) + " launches) in elementwise, copy, reduction and layout kernels" +
            (math > 0 ? ", " + fmt("%.2f", double(aux) / double(math)) + "x the math" : std::string(", and no math"));
  std::string split;
  for (const AuxPart& a : parts)
    if (a.ns > 0)
      split +=
          (split.empty() ? "" : ", ") + std::string(to_string(a.category)) + " " + pct1(b.t.share_of_gpu(a.category));
  f.evidence =
      "By category: " + split + " of kernel time; the math (convolution + GEMM + attention) " +
      pct1(ratio(math, b.t.gpu_time)) + "; this work fills " + pct1(ratio(aux, b.t.span)) +
      " of the GPUs' span. Fires when it exceeds the math (with at least " + pct1(th.aux_min_share) +
      " of kernel time) or one category of it holds more than " + pct1(th.aux_category_share) +
      ", and fills at least " + pct1(th.aux_min_span_share) + " of the span in at least " + count(th.aux_min_kernels) +
      " launches. Padding, broadcast and transposes that their own findings report "
      "are not counted here. Top: " +
      top_kernels_where(
          b.p,
          [&](const Hotspot& h) {
            return std::any_of(parts.begin(), parts.end(), [&](const AuxPart& a) { return a.category == h.category; });
          },
          3) +
      ".";
  const std::string chains = fusable_chains(b.p);
  if (!chains.empty()) f.evidence += " The CPU ops show chains to fuse: " + chains + ".";
  const bool tf = tensorflow_kernels(b.p);
  if (tf)
    f.recommendation =
        "Fuse the elementwise work into its neighbours with XLA (tf.function(jit_compile=True), or "
        "TF_XLA_FLAGS=--tf_xla_auto_jit=2) and use fused library ops (fused batch norm, fused "
        "bias + activation in the convolution).";
  else if (b.p.workload.execution == "compiled")
    f.recommendation =
        "The run is compiled, yet these kernels remain: look for graph breaks "
        "(TORCH_LOGS=graph_breaks) and ops the compiler does not fuse, and use fused library ops "
        "(fused norms, fused optimizers, SDPA) where they stay eager.";
  else
    f.recommendation =
        "Fuse the chains of small memory-bound ops: torch.compile fuses elementwise, reduction and "
        "copy kernels into a few Triton kernels; otherwise use fused library ops (fused layer/RMS "
        "norm, fused activation-and-gate, SDPA) instead of writing them out op by op.";
  f.recommendation +=
      " Estimated saving: half this time (fusion removes most of the memory round trips; an upper "
      "bound is all " +
      dur(b.t.per_device(aux)) + " of it).";
  for (const Hotspot& h : b.p.hotspots)
    if (f.kernels.size() < 5 &&
        std::any_of(parts.begin(), parts.end(), [&](const AuxPart& a) { return a.category == h.category; }))
      f.kernels.push_back(h.name);
  if (top) f.ranges = b.ev.ops_by_category[static_cast<int>(top->category)].ranges();
}

// Attention computed eagerly: a softmax between two GEMMs on a stream, again
// and again (attention_pass), where no fused attention kernel runs.
void eager_attention(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  if (b.t.of(KernelCategory::attention) > 0 || b.ev.attention_chains < th.eager_attention_min_chains) return;
  const double share = ratio(b.ev.attention_chain_ns, b.t.gpu_time);
  if (share < th.eager_attention_share) return;
  const TimeNs between = b.ev.attention_chain_ns - b.ev.attention_chain_gemm_ns;
  Finding& f = b.add(share >= 3 * th.eager_attention_share ? Severity::critical : Severity::warning, share,
                     th.eager_attention_share, b.t.per_device(between));
  f.title = "Attention runs unfused: " + count(b.ev.attention_chains) + " GEMM → softmax → GEMM chains take " +
            pct1(share) + " of kernel time (" + dur(b.ev.attention_chain_ns) + "), and no fused attention kernel runs";
  f.evidence =
      "On each stream, a softmax kernel with a GEMM among the 3 kernels before it and among the 3 after it: "
      "the scores Q·K^T written to memory, read and written by the softmax (and scale, mask, copies), read "
      "again by the GEMM with V. Of the chains' " +
      dur(b.ev.attention_chain_ns) + ", the GEMMs take " + dur(b.ev.attention_chain_gemm_ns) +
      " and the kernels between them " + dur(between) + ". Share " + pct1(share) + " vs threshold " +
      pct1(th.eager_attention_share) + ". Softmax kernels: " +
      top_kernels_where(
          b.p,
          [](const Hotspot& h) {
            return h.category == KernelCategory::softmax_loss && contains_nocase(h.name, "softmax") &&
                   !contains_nocase(h.name, "loss");
          },
          3) +
      ".";
  f.recommendation =
      "Use a fused attention kernel: torch.nn.functional.scaled_dot_product_attention (it picks FlashAttention, "
      "memory-efficient or cuDNN attention), flash_attn, or the model's SDPA attention implementation "
      "(attn_implementation=\"sdpa\" in Hugging Face Transformers) instead of matmul + softmax + matmul; it keeps "
      "the scores on chip. Estimated saving: the kernels between the GEMMs (an upper bound is the chains' whole " +
      dur(b.t.per_device(b.ev.attention_chain_ns)) + ").";
  for (const Hotspot& h : b.p.hotspots)
    if (f.kernels.size() < 5 && h.category == KernelCategory::softmax_loss && contains_nocase(h.name, "softmax"))
      f.kernels.push_back(h.name);
  f.ranges = b.ev.ops_by_category[static_cast<int>(KernelCategory::softmax_loss)].ranges();
}

// [SECTION] Why the GPU is idle ------------------------------------------------------------------

// The idle rules need a span to be idle in.
bool has_span(const Totals& t) { return t.devices > 0 && t.span > 0; }

// Whether the idle rules below fire (their conditions, shared with
// low-utilization, which leaves out the idle time they count).
bool input_bound_fires(const Builder& b) {
  if (!has_span(b.t) || !b.ev.has_input_ranges || b.ev.input_wait.total() <= 0) return false;
  const bool by_step = b.p.steps.total_ns > 0;
  const double share =
      by_step ? ratio(b.p.steps.input_wait_ns, b.p.steps.total_ns) : ratio(b.ev.input_wait.total(), b.t.span);
  return share >= b.opt.thresholds.input_moderate;
}
bool launch_bound_fires(const Builder& b) {
  const LaunchStats& l = b.p.launches;
  return has_span(b.t) && l.launches > 0 &&
         ratio(b.ev.launch_gaps.total(), b.t.span) >= b.opt.thresholds.launch_host_wait_share &&
         l.short_kernel_share >= b.opt.thresholds.launch_short_kernel_share;
}
// GPU idle after host synchronizations proper, and after blocking copies.
TimeNs sync_idle_ns(const Profile& p) { return p.syncs.gpu_idle_after_ns - p.syncs.gpu_idle_after_copies_ns; }
bool host_sync_fires(const Builder& b) {
  return has_span(b.t) && b.p.syncs.count > 0 && ratio(sync_idle_ns(b.p), b.t.span) >= b.opt.thresholds.host_sync_share;
}
// sync-memcpy rates blocking copies by the host time blocked plus the GPU idle after them.
double blocking_copy_share(const Builder& b) {
  return ratio(b.p.memcpys.synchronous_ns + b.p.syncs.gpu_idle_after_copies_ns, b.t.span);
}
bool sync_memcpy_fires(const Builder& b) {
  return has_span(b.t) && b.p.memcpys.synchronous > 0 && blocking_copy_share(b) >= b.opt.thresholds.sync_memcpy_share;
}
// The idle gaps' time that gpu-idle-gaps counts itself: what neither input
// wait nor a host synchronization explains (warm-up, late launches, queued work).
TimeNs idle_gaps_own_ns(const Evidence& ev) {
  return std::max<TimeNs>(0, ev.idle_gaps.total() - std::min(ev.idle_gaps_explained_ns, ev.idle_gaps.total()));
}
// The gaps take the threshold's share of the run, and not only as input wait
// or idle after synchronizations (which input-bound, host-sync and
// sync-memcpy report).
bool idle_gaps_fire(const Builder& b) {
  const double th = b.opt.thresholds.idle_gaps_share;
  return has_span(b.t) && b.ev.idle_gaps.count() > 0 && ratio(b.ev.idle_gaps.total(), b.t.span) >= th &&
         ratio(idle_gaps_own_ns(b.ev), b.t.span) >= th;
}

// The idle time (summed over devices) the other idle findings count, each
// only if it fires, so that no idle time is reported twice.
struct IdleClaims {
  TimeNs input = 0, sync = 0, copies = 0, launch = 0, gaps = 0;
  TimeNs total() const { return input + sync + copies + launch + gaps; }
};
IdleClaims idle_claims(const Builder& b) {
  IdleClaims c;
  if (input_bound_fires(b)) c.input = b.ev.input_wait.total();
  if (host_sync_fires(b)) c.sync = sync_idle_ns(b.p);
  if (sync_memcpy_fires(b)) c.copies = b.p.syncs.gpu_idle_after_copies_ns;
  if (launch_bound_fires(b)) c.launch = b.ev.launch_gaps.total();
  if (idle_gaps_fire(b)) c.gaps = idle_gaps_own_ns(b.ev);
  return c;
}

void low_utilization(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  if (!has_span(t)) return;
  const double util = ratio(t.busy, t.span);
  if (util >= th.low_utilization) return;
  // The idle time no other finding counts: reported here only when it matters.
  const IdleClaims c = idle_claims(b);
  const TimeNs rest = std::max<TimeNs>(0, t.idle - c.total());
  if (ratio(rest, t.span) < th.low_utilization_rest_share) return;
  Finding& f = b.add(util < 0.6 * th.low_utilization ? Severity::critical : Severity::warning, util, th.low_utilization,
                     t.per_device(rest));
  std::string range =
      t.devices > 1 ? " (" + pct(t.min_util) + "–" + pct(t.max_util) + " across " + std::to_string(t.devices) + " GPUs)"
                    : "";
  f.title = "GPU utilization is " + pct1(util) + range + ": " + device_words(t) + " idle " + pct(1 - util) +
            " of the time (" + dur(t.per_device(t.idle)) + "), " + dur(t.per_device(rest)) +
            " of it not counted by another finding";
  f.evidence = "Busy (any kernel, copy or fill running) " + dur(t.per_device(t.busy)) + " of a " +
               dur(t.per_device(t.span)) + " span, vs a " + pct(th.low_utilization) +
               " threshold. Idle time by what ended each gap: host wait (the next op was not launched yet) " +
               pct(ratio(t.host_wait, t.idle)) + ", kernel wait (gaps < " + dur(b.opt.consecutive_kernel_delay_ns) +
               ") " + pct(ratio(t.kernel_wait, t.idle)) + ", other " + pct(ratio(t.other_idle, t.idle)) + ".";
  std::string counted;
  auto part = [&](TimeNs ns, const char* id) {
    if (ns <= 0) return;
    counted += (counted.empty() ? "" : ", ") + std::string(id) + " " + dur(t.per_device(ns));
  };
  part(c.gaps, "gpu-idle-gaps");
  part(c.input, "input-bound");
  part(c.sync, "host-sync");
  part(c.copies, "sync-memcpy");
  part(c.launch, "launch-bound");
  if (!counted.empty())
    f.evidence += " Counted by other findings (not here): " + counted + "; the rest, " + dur(t.per_device(rest)) +
                  " (" + pct1(ratio(rest, t.span)) + " of the run, threshold " + pct1(th.low_utilization_rest_share) +
                  "), is this finding's.";
  const bool host = t.host_wait >= t.other_idle;
  f.recommendation =
      host ? "The host does not keep the GPU fed: the CPU launches work later than the GPU could run it, in gaps "
             "shorter than the idle-gap rule's. Profile the host side (py-spy, the trace's CPU ops) for Python "
             "overhead between launches; a larger batch per GPU also gives the GPU more work per launch. Estimated "
             "saving: idle time the other findings do not count."
           : "The GPU waits on dependencies rather than on the host (cross-stream events, communication, copies): "
             "see the overlap findings; put independent work on separate streams.";
  f.ranges = b.ev.idle_gaps.ranges();
}

// Busy but not working: the GPU is busy most of its window, yet its SMs are
// mostly idle in the samples taken while kernels ran (hw.sm_active). The work
// is too small for the GPU: the measured version of "low compute utilization".
void busy_not_working(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  for (const DeviceSummary& d : b.p.devices) {
    const DeviceHw& hw = d.hw;
    if (hw.busy_samples < th.hw_min_samples || !hw.busy_sm_active || d.utilization < th.hw_busy_utilization) continue;
    const double low = ratio(static_cast<double>(hw.low_busy_samples), static_cast<double>(hw.busy_samples));
    if (low < th.hw_not_working_share) continue;
    // Upper bound: the busy time the idle SMs leave, were the work spread over them.
    const TimeNs saving = static_cast<TimeNs>(static_cast<double>(d.busy_ns) * low * (1 - *hw.busy_sm_active) / 2);
    Finding& f = b.add(low >= 0.8 ? Severity::critical : Severity::warning, low, th.hw_not_working_share, saving);
    f.device = d.id;
    f.title = "Busy but not working: GPU " + std::to_string(d.id) + " is busy " + pct(d.utilization) +
              " of the time, but its SMs were active only " + pct(*hw.busy_sm_active) +
              " while kernels ran (measured, " + count(hw.busy_samples) + " samples)";
    std::string kernels;
    for (const std::string& k :
         format::short_kernel_names(std::vector<std::string_view>(hw.low_kernels.begin(), hw.low_kernels.end())))
      kernels += (kernels.empty() ? "" : "; ") + k;
    f.evidence =
        "Measured by the GPU's counters (hw.sm_active, CUPTI PM sampling), not derived from when kernels ran: " +
        count(hw.low_busy_samples) + " of " + count(hw.busy_samples) + " samples taken while a kernel ran (" +
        pct(low) + ") show fewer than " + pct(th.hw_low_sm_active) + " of SM cycles active, vs a threshold of " +
        pct(th.hw_not_working_share) + " of the samples. Kernels running during those samples, most first: " +
        (kernels.empty() ? std::string("none recorded") : kernels) +
        ". The saving is an upper bound (the idle SMs' share of the busy time, halved).";
    f.recommendation =
        "The kernels are too small for the GPU: grids of a few blocks, a small batch per GPU, or chains of tiny "
        "launches. Give each kernel more work (a larger batch per GPU, fewer GPUs for this model size), fuse the small "
        "kernels (torch.compile, XLA), run independent small kernels on separate streams, or pick library "
        "algorithms that split the work across more blocks (split-K GEMMs).";
    f.kernels = hw.low_kernels;
  }
}

void gpu_idle_gaps(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  if (!idle_gaps_fire(b)) return;
  const Evidence& ev = b.ev;
  const double gap_share = ratio(ev.idle_gaps.total(), t.span);
  // The gaps' parts: input wait and the idle after host synchronizations are
  // the input-bound and host-sync findings' (their fixes remove it); warm-up
  // is a one-time cost at the start of the capture (no fix of the program
  // saves it); the rest is this finding's saving.
  const TimeNs explained = std::min(ev.idle_gaps_explained_ns, ev.idle_gaps.total());
  const TimeNs sync = std::min(ev.idle_gaps_sync_ns, explained), input = explained - sync;
  const TimeNs warmup = ev.idle_gaps_warmup_ns, launch = ev.idle_gaps_launch_ns, queued = ev.idle_gaps_queued_ns;
  const TimeNs saving = launch + queued;
  // Critical by the gaps a fix of the program removes (warm-up aside).
  const Severity sev = ratio(saving, t.span) >= 0.25 ? Severity::critical : Severity::warning;
  Finding& f = b.add(sev, gap_share, th.idle_gaps_share, t.per_device(saving));
  const std::vector<TimeRange> r = ev.idle_gaps.ranges();
  // The cause with the most time decides the title's words and the advice.
  enum Cause { kWarmup, kLaunch, kQueued, kSync, kInput };
  const std::array<TimeNs, 5> by_cause = {warmup, launch, queued, sync, input};
  const auto top = static_cast<Cause>(std::max_element(by_cause.begin(), by_cause.end()) - by_cause.begin());
  static constexpr const char* kWords[] = {
      "mostly warm-up at the start of the capture", "mostly ended by late host launches",
      "mostly ended by work already queued (dependencies, event waits)",
      "mostly after host synchronizations and blocking copies", "mostly waiting for input"};
  f.title = count(ev.idle_gaps.count()) + " GPU idle gaps of at least " + dur(th.idle_gap_ns) + " total " +
            dur(t.per_device(ev.idle_gaps.total())) + " (" + pct1(gap_share) + " of the run), " + kWords[top];
  f.evidence =
      "Largest gap " + (r.empty() ? std::string("-") : dur(r.front().duration())) + "; gaps >= " + dur(th.idle_gap_ns) +
      " (nsys flags 500 ms; training steps are millisecond-scale) take " + pct1(gap_share) +
      " of the devices' time vs a " + pct1(th.idle_gaps_share) + " threshold. By what ended them: warm-up " +
      dur(t.per_device(warmup)) + " (" + count(ev.idle_gaps_warmup) +
      " gaps ended by the first call of a kernel before the first step ended), a late host launch " +
      dur(t.per_device(launch)) + ", work already queued " + dur(t.per_device(queued)) +
      "; GPU idle after host synchronizations or blocking copies " + dur(t.per_device(sync)) + " and input wait " +
      dur(t.per_device(input)) +
      " are the host-sync, sync-memcpy and input-bound findings' (not counted here). Communication is never in a gap "
      "(a gap has no op running), so exposed communication does not overlap it.";
  std::string advice;
  switch (top) {
    case kWarmup:
      advice =
          "Most of the idle time is warm-up: first calls that load modules, allocate memory or autotune "
          "(cudnn.benchmark, cuBLAS heuristics) before the first step. Profile steady-state steps instead: "
          "torch.profiler.schedule(wait=1, warmup=2, active=3), or run a few iterations before the capture starts. "
          "No saving is claimed for warm-up.";
      break;
    case kLaunch:
      advice =
          "The next op was launched late: look at what the host does in these gaps (the viewer jumps to them): "
          "logging, checkpointing, evaluation, Python overhead. Move that work off the critical path: asynchronous "
          "checkpointing, metrics read every N steps instead of every step.";
      break;
    case kQueued:
      advice =
          "The next op was already queued when the gap began: the GPU waited for a dependency (an event from "
          "another stream or process, a collective's peer, a graph launch). Find what the waiting stream depends "
          "on and overlap it, or remove the wait (cudaStreamWaitEvent on finer-grained events).";
      break;
    case kSync:
      advice =
          "The gaps follow host synchronizations and blocking copies: see the host-sync and sync-memcpy findings "
          "(their fixes remove them).";
      break;
    case kInput:
      advice = "The gaps are input wait: see the input-bound finding (its fix removes them).";
      break;
  }
  f.recommendation = advice +
                     " Estimated saving: the gaps ended by late launches or queued work (not warm-up, input wait "
                     "or the idle after synchronizations).";
  f.ranges = r;
}

// Input: GPU idle while the host runs data-loading ranges.
void input_bound(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  if (!has_span(t)) return;
  if (b.ev.has_input_ranges && b.ev.input_wait.total() > 0) {
    const bool by_step = b.p.steps.total_ns > 0;
    const TimeNs input = by_step ? b.p.steps.input_wait_ns : b.ev.input_wait.total();
    const double share = by_step ? ratio(input, b.p.steps.total_ns) : ratio(input, t.span);
    if (share >= th.input_moderate) {
      Finding& f = b.add(share >= th.input_high ? Severity::critical : Severity::warning, share, th.input_moderate,
                         t.per_device(b.ev.input_wait.total()));
      f.title = std::string(share >= th.input_high ? "Highly" : "Moderately") +
                " input-bound: the GPU waits for input " + pct1(share) + " of " + (by_step ? "step time" : "the run") +
                " (" + dur(t.per_device(input)) +
                (by_step ? " over " + std::to_string(b.p.steps.steps.size()) + " steps" : std::string()) + ")";
      f.evidence = "GPU idle while data-loading ranges run on the host: " + dur(b.ev.input_wait.total()) +
                   "; xprof's anchors: >= " + pct(th.input_moderate) + " moderately, >= " + pct(th.input_high) +
                   " highly input-bound. Host-wait idle overall: " + pct(ratio(t.host_wait, t.span)) + " of the run.";
      f.recommendation =
          "Load the next batch while the GPU computes: more DataLoader workers (num_workers >= 4 per GPU), "
          "pin_memory=True, prefetch_factor and persistent_workers; decode and augment on the GPU (NVIDIA DALI) or "
          "keep a small dataset resident on the GPU; in TensorFlow dataset.prefetch(tf.data.AUTOTUNE) and "
          "num_parallel_calls.";
      f.ranges = b.ev.input_wait.ranges();
    }
  }
}

// Step time outside the GPU's work: before its first op or after its last,
// the GPU has nothing at all, and the span-based figures (utilization, idle
// gaps) cannot see that time. What input-bound counts (data-loading ranges)
// is left to it.
bool preprocessing_name(std::string_view n) {
  for (std::string_view w : {"preprocess", "read_video", "decode", "image_processing", "tokeniz", "transform",
                             "collate", "augment", "load_image", "feature_extraction"})
    if (contains_nocase(n, w)) return true;
  return false;
}
void step_host_time(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const StepSummary& s = b.p.steps;
  if (!has_span(b.t) || s.total_ns <= 0 || s.outside_gpu_ns <= 0) return;
  const TimeNs input = input_bound_fires(b) ? std::min(s.input_wait_ns, s.outside_gpu_ns) : 0;
  const TimeNs own = s.outside_gpu_ns - input;
  const double share = ratio(own, s.total_ns);
  if (share < th.step_host_share) return;
  const bool warmup = s.steps.size() <= 2;
  const bool compiled = b.p.workload.execution == "compiled";
  std::string ranges;
  TimeNs named = 0;
  bool preprocessing = false;
  for (const HostRange& h : s.outside_ranges) {
    ranges +=
        (ranges.empty() ? "" : "; ") + h.name + " " + dur(h.ns) + (h.count > 1 ? " (" + count(h.count) + "x)" : "");
    named = std::max(named, h.ns);
    preprocessing = preprocessing || preprocessing_name(h.name);
  }
  // A first call that compiles (a compiled program, few steps, most of the
  // time before the GPU starts and in no recorded range): the steady state
  // does not pay it.
  const bool compiling = warmup && compiled && ratio(named, own) < 0.5 && s.before_gpu_ns >= own / 2;
  Finding& f = b.add(share >= 0.5 ? Severity::critical : Severity::warning, share, th.step_host_share,
                     compiling ? 0 : b.t.per_device(own));
  const TimeNs after = s.outside_gpu_ns - s.before_gpu_ns;
  f.title = pct1(share) + " of step time (" + dur(b.t.per_device(own)) +
            ") passes before the GPU's first op or after its last: the host works, the GPU has nothing to do";
  f.evidence = "Of " + dur(s.total_ns) + " of step time (" + count(s.steps.size()) + " step" +
               (s.steps.size() == 1 ? "" : "s") + "), " + dur(s.outside_gpu_ns) +
               " lies outside the GPU's work: " + dur(s.before_gpu_ns) + " before its first op, " + dur(after) +
               " after its last. The GPU's span, and so its utilization and idle gaps, leave that time out. " +
               (input > 0 ? dur(input) + " of it is input-bound's (data-loading ranges), not counted here. " : "") +
               (ranges.empty() ? std::string("No recorded host range lies inside it: the host's work there (Python, "
                                             "compilation, profiler start-up) was not recorded.")
                               : "Longest host ranges inside it: " + ranges + ".") +
               " The saving is an upper bound: the step's host time if none of it held the GPU up.";
  if (compiling) {
    f.saving_note = "a first call that compiles (torch.compile): the steady state does not pay it";
    f.recommendation =
        "This capture holds torch.compile's first call, which compiles the model (Dynamo and Inductor) before it "
        "runs: profile the steady state instead — a few untimed iterations first, or torch.profiler.schedule(wait=1, "
        "warmup=1, active=3) — and judge the GPU by those steps.";
  } else if (preprocessing) {
    f.recommendation =
        "Preprocessing on the host holds the GPU up: prepare the next input while the GPU runs this one (a "
        "DataLoader with num_workers and prefetch_factor, a preprocessing thread or process, batched requests in a "
        "serving engine), or move decoding and resizing to the GPU (torchvision.io / NVDEC, NVIDIA DALI).";
  } else {
    f.recommendation =
        std::string(warmup ? "With so few steps this may be warm-up (first-call allocation, autotuning, lazy "
                             "loading): profile a few steps after warm-up before acting on it. "
                           : "") +
        "Otherwise take the host work out of the step's critical path: do it before the step or overlap it with the "
        "GPU's work of the previous one (prefetch, precompute, asynchronous logging), and profile the host side "
        "(the trace's CPU ops, py-spy) for what it is.";
  }
}

// Launch-bound: many short host-wait gaps and kernels shorter than their launch call.
void launch_bound(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  if (!has_span(t)) return;
  const double launch_share = ratio(b.ev.launch_gaps.total(), t.span);
  const LaunchStats& l = b.p.launches;
  if (l.launches > 0 && launch_share >= th.launch_host_wait_share &&
      l.short_kernel_share >= th.launch_short_kernel_share) {
    Finding& f = b.add(launch_share >= 0.25 ? Severity::critical : Severity::warning, launch_share,
                       th.launch_host_wait_share, t.per_device(b.ev.launch_gaps.total()));
    f.title = "Launch-bound: " + pct(l.short_kernel_share) + " of GPU ops run shorter than their launch call (median " +
              dur(l.gpu_duration.median) + " on the GPU vs " + dur(l.cpu_launch.median) +
              " on the CPU); the GPU waits for launches " + pct1(launch_share) + " of the time";
    f.evidence = count(b.ev.launch_gaps.count()) + " idle gaps shorter than " + dur(th.idle_gap_ns) +
                 " ended by an op launched after the gap began total " + dur(b.ev.launch_gaps.total()) + " (" +
                 pct1(launch_share) + " vs a " + pct1(th.launch_host_wait_share) + " threshold); short ops " +
                 pct(l.short_kernel_share) + " vs " + pct(th.launch_short_kernel_share) + " (HTA's short-kernel rule).";
    f.recommendation =
        "Launch less: capture the step in a CUDA graph (torch.cuda.CUDAGraph, torch.compile(mode='reduce-overhead'), "
        "cudaStreamBeginCapture), fuse small elementwise kernels (torch.compile, fused optimizers), and give each "
        "kernel "
        "more work with a larger batch. Bundled workload: --graphs on.";
    f.ranges = b.ev.launch_gaps.ranges();
  }
}

// Host synchronizations that drain the GPU's queue.
void host_sync(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  if (!has_span(t)) return;
  const TimeNs idle = sync_idle_ns(b.p);
  const double sync_share = ratio(idle, t.span);
  if (host_sync_fires(b)) {
    const SyncStats& s = b.p.syncs;
    Finding& f = b.add(sync_share >= 0.10 ? Severity::critical : Severity::warning, sync_share, th.host_sync_share,
                       t.per_device(idle));
    f.title = count(s.count) + " host synchronizations leave the GPU idle " + dur(t.per_device(idle)) + " (" +
              pct1(sync_share) + " of the run)";
    f.evidence = count(s.device_syncs) + " device, " + count(s.stream_syncs) + " stream and " + count(s.event_syncs) +
                 " event synchronizations held the host " + dur(s.total_ns) +
                 "; after they returned the GPU had nothing queued until the host launched again (" + pct1(sync_share) +
                 " vs a " + pct1(th.host_sync_share) + " threshold).";
    if (s.copies)
      f.evidence += " Copies that block the host (" + count(s.copies) + ") leave it idle another " +
                    dur(t.per_device(s.gpu_idle_after_copies_ns)) + ": the sync-memcpy finding's, not counted here.";
    f.recommendation =
        "Keep the host ahead of the GPU: avoid .item(), .cpu(), print(loss) and torch.cuda.synchronize() inside the "
        "step (accumulate metrics on the GPU, read them every N steps), and order streams with events "
        "(cudaStreamWaitEvent) instead of host synchronizations.";
    f.ranges = b.ev.sync_idle.ranges();
  }
}

// [SECTION] Overlap --------------------------------------------------------------------------

// Concurrency: kernels never overlap although they leave the GPU room, and
// something could run beside them (analysis/occupancy.h, concurrency_room:
// the gate and the saving).
void low_concurrency(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  double worst = 1;
  const DeviceSummary* dev = nullptr;
  ConcurrencyRoom worst_room;
  TimeNs saving = 0;
  for (const DeviceSummary& d : b.p.devices) {
    if (d.kernels == 0 || d.kernel_concurrency >= th.low_concurrency) continue;
    const ConcurrencyRoom room = concurrency_room(d);
    if (!room.fires()) continue;
    if (!dev || d.kernel_concurrency < worst) worst = d.kernel_concurrency, dev = &d, worst_room = room;
    saving += room.saving_ns;
  }
  if (dev) {
    Finding& f = b.add(Severity::warning, worst, th.low_concurrency, t.per_device(saving));
    f.device = t.devices > 1 ? kNoDevice : dev->id;
    f.title = "Kernel concurrency is " + pct1(worst) + ": kernels almost never run side by side (" +
              std::to_string(dev->streams) + " stream" + (dev->streams == 1 ? "" : "s") + " on GPU " +
              std::to_string(dev->id) + ")";
    const DeviceOccupancy& o = dev->occupancy;
    std::string used = "kernels use " + pct(worst_room.used) + " of the GPU by " + std::string(worst_room.measure);
    if (worst_room.measure == "GPU fill")
      used += " (they hold " + pct(*o.gpu_fill) + " of its thread slots; their theoretical occupancy allows " +
              pct(*o.theoretical) + ")";
    else if (worst_room.measure == "SM efficiency")
      used += " (blocks against the " + std::to_string(dev->sm_count) + " SMs, duration-weighted)";
    f.evidence = "Time with >= 2 kernels in flight is " + pct1(worst) + " of kernel time vs a " +
                 pct1(th.low_concurrency) + " threshold (nvvp's Low Kernel Concurrency); " + used +
                 ", below 80 %. The GPU waits for the host or for dependencies " +
                 dur(dev->idle_host_wait_ns + dev->idle_other_ns) + ", less than its " + dur(dev->kernel_busy_ns) +
                 " of kernel time, so work is queued that could run side by side; exposed communication " +
                 dur(dev->exposed_communication_ns) + ", copies with no kernel alongside " +
                 dur(dev->memcpy_exposed_ns) + ".";
    f.recommendation =
        "Run independent work concurrently: the gradient all-reduce on its own stream overlapping the backward "
        "pass, input copies on a copy stream, the weight update of one bucket while the next is reduced; small "
        "kernels that leave the GPU's thread slots unused can run side by side on separate streams (or be fused / "
        "captured in a CUDA graph). Estimated saving: the GPU capacity the kernels leave unused during kernel "
        "time, at most what the kernels could overlap each other.";
  }
}

// Copies by kind (MemcpyStats::groups): host-to-device copies from pinned
// memory on a stream of their own are done right; the others each have their fix.
bool copies_done_right(const CopyGroup& g) { return g.direction == "HtoD" && g.memory == "pinned" && g.own_stream; }

std::string copy_kind_words(const CopyGroup& g) {
  std::string s = g.direction;
  if (g.memory == "pinned" || g.memory == "pageable")
    s += (g.direction == "DtoH" ? " to " : " from ") + g.memory + " memory";
  return s + (g.own_stream ? " on a copy stream" : " on a compute stream");
}

std::string copy_group_words(const CopyGroup& g) {
  return copy_kind_words(g) + " (" + count(g.count) + " copies, " + bytes(g.bytes) + ", " + dur(g.time_ns) + ")";
}

// The group with the most time of those `keep` accepts; null when none.
template <class Keep>
const CopyGroup* heaviest_copies(const MemcpyStats& m, Keep&& keep) {
  const CopyGroup* best = nullptr;
  for (const CopyGroup& g : m.groups)
    if (keep(g) && (!best || g.time_ns > best->time_ns)) best = &g;
  return best;
}

// What to change for copies of this kind.
std::string copy_fix(const CopyGroup& g) {
  if (g.direction == "DtoD" || g.direction == "peer") {
    if (g.direction == "DtoD" && !g.own_stream)
      return "These are device-to-device copies on the compute stream: tensors copied by clone(), copy_(), "
             ".contiguous() or .to(dtype) between kernels. Remove the copies rather than speed them up: keep "
             "tensors contiguous in the layout the next op wants (or let it take a strided view), use in-place "
             "ops, and avoid clone() of tensors that are not written to; torch.compile fuses most of them away. "
             "Pinned memory does not apply.";
    return "These are device-to-device (or peer) copies: overlap them with compute on a stream of their own, or "
           "avoid them (peer access or NCCL instead of staged copies, keep data on the GPU that uses it).";
  }
  if (g.direction == "DtoH") {
    std::string s = g.memory == "pageable"
                        ? "Copy into pinned host memory (a buffer allocated with pin_memory=True, filled by "
                          ".copy_(src, non_blocking=True)) "
                        : "Issue the copy asynchronously ";
    return s +
           "on a side stream and wait for it with an event only where the host reads it; read results "
           "(.item(), .cpu(), print(loss)) every N steps rather than every step.";
  }
  if (g.direction == "HtoD") {
    if (g.memory == "pageable")
      return "Copy from pinned memory, asynchronously: DataLoader(pin_memory=True) and .to(device, "
             "non_blocking=True) (cudaHostAlloc + cudaMemcpyAsync), on a copy stream that prefetches batch i+1 "
             "during step i.";
    if (!g.own_stream)
      return "The copies are pinned but run on the compute stream, so kernels wait for them: issue them on a "
             "dedicated copy stream (torch.cuda.Stream, with wait_stream/record_stream before use) that prefetches "
             "the next batch during the current step.";
  }
  return "Copy while computing: cudaMemcpyAsync from pinned memory on a dedicated copy stream, prefetching batch "
         "i+1 during step i (PyTorch: pin_memory=True and .to(device, non_blocking=True) with a prefetching loader).";
}

// Copies that nothing overlaps: except those done right (pinned HtoD on their own stream).
void low_memcpy_overlap(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  const MemcpyStats& m = b.p.memcpys;
  if (t.memcpy <= 0) return;
  // The share of copy time in kinds that want a fix (all of it where the kinds are unknown).
  TimeNs all = 0, to_fix = 0;
  for (const CopyGroup& g : m.groups) {
    all += g.time_ns;
    if (!copies_done_right(g)) to_fix += g.time_ns;
  }
  const double fix_part = m.groups.empty() ? 1.0 : ratio(to_fix, all);
  const double overlap = ratio(t.memcpy - t.memcpy_exposed, t.memcpy);
  const double copy_share = ratio(t.memcpy, t.span) * fix_part;
  if (copy_share < th.memcpy_min_share || overlap >= th.low_memcpy_overlap) return;
  const TimeNs exposed = static_cast<TimeNs>(static_cast<double>(t.memcpy_exposed) * fix_part);
  Finding& f = b.add(Severity::warning, overlap, th.low_memcpy_overlap, t.per_device(exposed));
  const CopyGroup* top = heaviest_copies(m, [](const CopyGroup& g) { return !copies_done_right(g); });
  f.title = "Only " + pct1(overlap) + " of copy time overlaps kernels: " + dur(t.per_device(t.memcpy_exposed)) +
            " of copies run with the GPU otherwise idle" + (top ? ", mostly " + copy_kind_words(*top) : "");
  f.evidence = "Copies take " + pct1(ratio(t.memcpy, t.span)) + " of the run (" + dur(t.memcpy) + "); " +
               pct1(overlap) + " of it overlaps kernels vs a " + pct(th.low_memcpy_overlap) +
               " threshold (nvvp's Low Memcpy/Compute Overlap).";
  if (top) f.evidence += " Heaviest kind: " + copy_group_words(*top) + ".";
  if (fix_part < 1.0)
    f.evidence += " Pinned host-to-device copies on a copy stream (" + pct(1 - fix_part) +
                  " of copy time) are done right and left out of the saving.";
  f.recommendation = top ? copy_fix(*top) : copy_fix(CopyGroup{});
  f.ranges = b.ev.memcpy_exposed.ranges();
}

// Communication nothing hides.
// Communication time by collective kind (from the kernels' names), the
// dominant kind, and whether its durations are heavy-tailed: the longest
// instance ≥ 10x the median, a sign that most of the time is spent waiting
// for a rank that arrives late rather than moving data.
struct CollectiveMix {
  std::uint8_t dominant = 0;  // collective_kind()
  std::string said;           // "65% send/recv, 35% all_reduce"
  bool heavy_tailed = false;
  std::string tail;  // the evidence for it
};

CollectiveMix collective_mix(const Profile& p) {
  CollectiveMix m;
  std::array<TimeNs, 16> by_kind{};
  TimeNs all = 0;
  for (const Hotspot& h : p.hotspots)
    if (h.category == KernelCategory::communication) {
      by_kind[collective_kind(h.name) & 15] += h.stats.total;
      all += h.stats.total;
    }
  if (all <= 0) return m;
  std::vector<std::uint8_t> kinds;
  for (std::uint8_t k = 0; k < by_kind.size(); ++k)
    if (by_kind[k] > 0) kinds.push_back(k);
  std::stable_sort(kinds.begin(), kinds.end(), [&](std::uint8_t a, std::uint8_t b) { return by_kind[a] > by_kind[b]; });
  m.dominant = kinds.front();
  for (std::uint8_t k : kinds)
    m.said += (m.said.empty() ? "" : ", ") + pct(ratio(by_kind[k], all)) + " " + std::string(collective_kind_name(k));
  for (const Hotspot& h : p.hotspots)
    if (h.category == KernelCategory::communication && collective_kind(h.name) == m.dominant && h.stats.count >= 3 &&
        h.stats.median > 0 && h.stats.max >= 10 * h.stats.median) {
      m.heavy_tailed = true;
      m.tail = "the longest " + h.name + " took " + dur(h.stats.max) + ", " +
               count(static_cast<std::uint64_t>(h.stats.max / h.stats.median)) + "x its median of " +
               dur(h.stats.median) + " over " + count(h.stats.count) + " calls.";
      break;
    }
  return m;
}

// The fix for exposed communication of this collective kind.
std::string communication_fix(std::uint8_t kind) {
  const std::string_view k = collective_kind_name(kind);
  if (k == "all_to_all" || k == "send_recv")
    return "Hide the all-to-all / send-recv: pipeline the input distribution so the next batch's exchange runs under "
           "this batch's compute (embedding models: TorchRec's pipelined training, or the sparse all-to-all "
           "overlapped with the dense part), revisit the sharding plan so fewer rows cross ranks, and for pipeline "
           "parallelism overlap each send/recv with the next micro-batch (interleaved schedules).";
  if (k == "all_gather" || k == "reduce_scatter")
    return "Overlap the all-gathers and reduce-scatters with compute: prefetch the next layer's parameters while "
           "this one computes (FSDP forward_prefetch/backward_prefetch, limit_all_gathers; ZeRO-3 prefetch "
           "buckets), fuse small gathers into larger ones, and overlap tensor-parallel collectives with the GEMMs "
           "around them (asynchronous tensor parallelism).";
  if (k == "broadcast")
    return "Broadcast less: broadcast parameters once at the start, not every step (PyTorch DDP: "
           "broadcast_buffers=False when the buffers need no sync each step), and run what stays on a communication "
           "stream alongside compute.";
  return "Overlap the gradient all-reduce with the backward pass: bucket gradients and launch each bucket's "
         "all-reduce on a communication stream as soon as its gradients are ready (PyTorch DDP does this; tune "
         "bucket_cap_mb, gradient_as_bucket_view=True), not one all-reduce per tensor after the whole backward. Small "
         "gradients are latency-bound: fewer, larger buckets help. Bundled workload: --allreduce bucketed.";
}

void exposed_communication(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  if (t.comm > 0) {
    const double share = ratio(t.exposed_comm, t.span);
    if (share >= th.exposed_comm_moderate) {
      Finding& f = b.add(share >= th.exposed_comm_high ? Severity::critical : Severity::warning, share,
                         th.exposed_comm_moderate, t.per_device(t.exposed_comm));
      const double overlapped = ratio(t.comm - t.exposed_comm, t.comm);
      f.title = "Communication is exposed " + pct1(share) + " of the run (" + dur(t.per_device(t.exposed_comm)) +
                "): only " + pct(overlapped) + " of communication time overlaps compute";
      f.evidence = "Communication kernels run " + dur(t.comm) + " (summed over GPUs), " + dur(t.exposed_comm) +
                   " of it with no compute kernel alongside: " + pct1(share) + " of the run vs xprof's anchors (" +
                   pct(th.exposed_comm_moderate) + " moderate, " + pct(th.exposed_comm_high) +
                   " high). Top: " + top_kernels_text(b.p, KernelCategory::communication, 2) + ".";
      const CollectiveMix mix = collective_mix(b.p);
      if (!mix.said.empty()) f.evidence += " By collective: " + mix.said + ".";
      f.recommendation = communication_fix(mix.dominant);
      if (mix.heavy_tailed) {
        f.evidence += " " + mix.tail;
        f.recommendation =
            "Most of this is probably waiting for a slower rank, not data moving: " + mix.tail +
            " Find the rank that arrives last (gpuscope report on every rank's trace names it: straggler) and why "
            "it is late before overlapping anything. Then: " +
            f.recommendation;
      }
      f.kernels = kernels_of(b.p, KernelCategory::communication);
      f.ranges = b.ev.exposed_comm.ranges();
    }
  }
}

// The optimizer's framework ops (PyTorch's "Optimizer.step#SGD.step"), the
// one with the most kernels first; empty when the trace has none.
std::vector<const OpRow*> optimizer_ops(const Profile& p) {
  std::vector<const OpRow*> rows;
  for (const OpRow& r : p.op_names)
    if (r.name.starts_with("Optimizer.step#") && r.calls > 0) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const OpRow* a, const OpRow* b) { return a->kernels_total > b->kernels_total; });
  return rows;
}

// The weight update alone at the end of the step: optimizer kernels by name,
// and every kernel the optimizer's ops launched.
void serialized_weight_update(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  const double opt_share = ratio(b.ev.optimizer_kernel_ns, t.gpu_time);
  const double opt_overlap = ratio(b.ev.optimizer_overlapped_ns, b.ev.optimizer_ns);
  if (b.ev.optimizer_ns > 0 && opt_share >= th.weight_update_share && opt_overlap < th.weight_update_overlap) {
    const TimeNs lone = b.ev.optimizer_ns - b.ev.optimizer_overlapped_ns;
    Finding& f = b.add(opt_share >= 0.10 ? Severity::critical : Severity::warning, opt_overlap,
                       th.weight_update_overlap, t.per_device(lone));
    const std::size_t steps = b.p.steps.steps.size();
    f.title = "The weight update runs alone: " + pct1(opt_share) + " of kernel time in " +
              count(b.ev.optimizer_kernels) + " optimizer kernels" +
              (steps ? " (" + count(b.ev.optimizer_kernels / steps) + " per step)" : std::string()) + ", " +
              pct(opt_overlap) + " of it overlapped";
    f.evidence = "Optimizer kernels take " + dur(b.ev.optimizer_kernel_ns) + " (" + pct1(opt_share) +
                 " of kernel time vs a " + pct(th.weight_update_share) +
                 " threshold); other kernels or communication run alongside for " + pct1(opt_overlap) +
                 " of it (threshold " + pct(th.weight_update_overlap) + ").";
    const std::vector<const OpRow*> ops = optimizer_ops(b.p);
    if (b.ev.optimizer_op_kernels > 0 && !ops.empty())
      f.evidence += " Of them " + count(b.ev.optimizer_op_kernels) + " were launched by " + ops.front()->name +
                    (ops.size() > 1 ? " and the other optimizer ops" : "") + " (" +
                    count(b.ev.optimizer_op_named_kernels) + " named as optimizer kernels).";
    const std::string top = top_kernels_text(b.p, KernelCategory::optimizer, 2);
    if (!top.empty()) f.evidence += " Top: " + top + ".";
    f.recommendation =
        "Use a fused multi-tensor optimizer (one kernel for all parameters: torch.optim.SGD/Adam(foreach=True or "
        "fused=True), apex FusedSGD/FusedAdam) and overlap the update with communication and the next forward: update "
        "each gradient bucket as soon as its all-reduce completes, on a separate stream. Bundled workload: --update "
        "overlapped.";
    f.kernels = kernels_of(b.p, KernelCategory::optimizer);
    if (f.kernels.empty() && !ops.empty())
      for (const OpKernel& k : ops.front()->top_kernels) f.kernels.push_back(k.name);
    f.ranges = b.ev.optimizer.ranges();
  }
}

// A per-parameter (non-foreach) optimizer: its ops launch a few tiny kernels
// per parameter, each step, where a multi-tensor one launches a handful.
void unfused_optimizer(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  const Evidence& ev = b.ev;
  const std::vector<const OpRow*> ops = optimizer_ops(b.p);
  if (ops.empty() || ev.optimizer_op_kernels == 0) return;
  const OpRow& r = *ops.front();
  const double per_step = double(ev.optimizer_op_kernels) / double(r.calls);
  const double named =
      ratio(static_cast<TimeNs>(ev.optimizer_op_named_kernels), static_cast<TimeNs>(ev.optimizer_op_kernels));
  if (per_step < th.optimizer_kernels_per_step || named >= th.optimizer_fused_share) return;
  // A multi-tensor optimizer does the same GPU work in a few launches: the
  // host time beyond the GPU work is what the GPU may wait for.
  const TimeNs excess = std::max<TimeNs>(0, r.cpu_total_ns - ev.optimizer_op_kernel_ns);
  const TimeNs saving = std::min(t.per_device(excess), t.per_device(t.idle));
  Finding& f = b.add(per_step >= 10 * th.optimizer_kernels_per_step ? Severity::critical : Severity::warning, per_step,
                     th.optimizer_kernels_per_step, saving);
  const TimeNs mean = static_cast<TimeNs>(double(ev.optimizer_op_kernel_ns) / double(ev.optimizer_op_kernels));
  f.title = r.name + " launches " + fmt("%.0f", per_step) + " kernels per step (" + count(ev.optimizer_op_kernels) +
            " in " + count(r.calls) + " steps, mean " + dur(mean) +
            "): a per-parameter optimizer, not a multi-tensor (foreach) or fused one";
  f.evidence = "Kernels launched inside the optimizer's ops: " + fmt("%.0f", per_step) + " per step vs a " +
               fmt("%.0f", th.optimizer_kernels_per_step) + " threshold, " + pct(named) +
               " of them named as optimizer kernels (multi_tensor_apply, fused; threshold " +
               pct(th.optimizer_fused_share) + "). The host spends " + dur(r.cpu_total_ns) +
               " in the optimizer step for " + dur(ev.optimizer_op_kernel_ns) + " of GPU work.";
  f.recommendation =
      "Update all parameters in a few launches: torch.optim.SGD/Adam/AdamW(..., foreach=True) (multi-tensor) or "
      "fused=True (one fused kernel, Adam/AdamW/SGD), apex FusedSGD/FusedAdam, or torch.compile the optimizer "
      "step. Estimated saving: the host time of the optimizer step beyond its GPU work, at most the GPU's idle "
      "time.";
  for (const OpKernel& k : r.top_kernels) f.kernels.push_back(k.name);
}

// Stragglers: the rank (or GPU) the others wait for. In a job whose
// collectives were matched across ranks, the rank whose late arrivals made
// the others wait longest; else the one with the most compute.
void straggler(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  if (b.p.ranks.size() < 2 || b.p.skew.slowest_rank < 0) return;
  const bool by_wait = !b.p.stragglers.empty() && b.p.stragglers.front().wait_caused_ns > 0;
  const std::int32_t who_rank = by_wait ? b.p.stragglers.front().rank : b.p.skew.slowest_rank;
  std::vector<TimeNs> work;
  const bool by_step =
      std::all_of(b.p.ranks.begin(), b.p.ranks.end(), [](const RankSummary& r) { return r.compute_per_step_ns > 0; });
  const RankSummary* slow = nullptr;
  for (const RankSummary& r : b.p.ranks) {
    work.push_back(by_step ? r.compute_per_step_ns : r.compute_ns);
    const bool match = by_wait ? r.rank == who_rank : r.rank == who_rank && r.device == b.p.skew.slowest_device;
    if (match && !slow) slow = &r;
  }
  if (!slow) return;
  std::sort(work.begin(), work.end());
  const TimeNs median = work[(work.size() - 1) / 2];
  const TimeNs slowest = by_step ? slow->compute_per_step_ns : slow->compute_ns;
  const double excess = ratio(slowest - median, median);
  // The others' time spent waiting for it, of their time.
  const std::size_t others = b.p.stragglers.size() > 1 ? b.p.stragglers.size() - 1 : 1;
  const TimeNs caused = by_wait ? b.p.stragglers.front().wait_caused_ns : 0;
  const double wait_share = ratio(caused, b.p.window.duration() * static_cast<TimeNs>(others));
  const bool by_compute = excess >= th.straggler_spread;
  if (!by_compute && !(by_wait && wait_share >= th.straggler_wait_share)) return;
  TimeNs others_exposed = 0;
  for (const RankSummary& r : b.p.ranks)
    if (r.rank != slow->rank) others_exposed += r.exposed_communication_ns;
  const std::size_t steps = by_step ? b.p.steps.steps.size() / b.p.ranks.size() : 1;
  const TimeNs saving = by_wait ? caused / static_cast<TimeNs>(others)
                                : (slowest - median) * static_cast<TimeNs>(std::max<std::size_t>(1, steps));
  const bool critical = excess >= 0.25 || (by_wait && wait_share >= th.straggler_wait_critical);
  Finding& f = b.add(critical ? Severity::critical : Severity::warning, by_compute ? excess : wait_share,
                     by_compute ? th.straggler_spread : th.straggler_wait_share, saving);
  f.device = slow->device;
  bool one_rank = true;
  for (const RankSummary& r : b.p.ranks) one_rank = one_rank && r.rank == slow->rank;
  const std::string who = one_rank
                              ? "GPU " + std::to_string(slow->device)
                              : "Rank " + std::to_string(slow->rank) + " (GPU " + std::to_string(slow->device) + ")";
  const std::string compute_words = pct(excess) + " more compute " + (by_step ? "per step " : "") +
                                    "than the median (" + dur(slowest) + " vs " + dur(median) + ")";
  if (by_wait) {
    const Straggler& st = b.p.stragglers.front();
    f.title = who + " is a straggler: last to arrive at " + count(st.last_arrivals) + " of " +
              count(b.p.collectives.size()) + " collectives, the others waited " + dur(caused) + " for it";
    f.evidence = "Arrivals at the " + count(b.p.collectives.size()) + " collectives matched across " +
                 std::to_string(b.p.stragglers.size()) + " ranks: the others spent " + pct(wait_share) +
                 " of their time waiting for this rank; the critical rank of " + count(st.critical_steps) + " of " +
                 count(b.p.job_steps.size()) + " steps; " + compute_words +
                 ". Thresholds: " + pct(th.straggler_wait_share) + " of the others' time, or " +
                 pct(th.straggler_spread) + " more compute than the median.";
  } else {
    f.title = who + " is a straggler: " + compute_words;
    f.evidence =
        "Compute " + std::string(by_step ? "per step " : "") + "across " + std::to_string(b.p.ranks.size()) +
        " ranks/GPUs: spread " + pct(b.p.skew.compute_spread) + "; the others spend " + dur(others_exposed) +
        " in communication nothing hides, much of it waiting for the slowest. Threshold: " + pct(th.straggler_spread) +
        " above the median.";
  }
  f.recommendation =
      "Balance the work across ranks: check the data each rank gets (uneven batch or sequence lengths), "
      "clock/thermal throttling or a slower GPU or link on that rank, and other processes on its host; with "
      "imbalance that cannot be removed, overlap communication so the others' wait is hidden.";
}

// [SECTION] Memory ------------------------------------------------------------------------------

// A GPU's memory peaks, where the trace knows them and the GPU's memory.
struct MemoryUse {
  const DeviceSummary* d = nullptr;
  std::uint64_t capacity = 0, peak = 0;  // peak allocated
  std::uint64_t persistent = 0;          // what stays allocated across steps (0: unknown)
  bool from_steps = false;
  double share() const { return capacity ? double(peak) / double(capacity) : 0; }
};

std::vector<MemoryUse> memory_use(const Profile& p) {
  std::vector<MemoryUse> out;
  for (const DeviceSummary& d : p.devices) {
    if (!d.memory_bytes || !d.peak_allocated_bytes || *d.memory_bytes == 0) continue;
    MemoryUse m{&d, *d.memory_bytes, *d.peak_allocated_bytes, 0, false};
    // The steps' peaks, when there are any: they leave out what happened
    // before the first step (model loading) and after the last.
    std::uint64_t step_peak = 0, step_min = ~std::uint64_t{0};
    for (const Step& s : p.steps.steps) {
      if (s.device != d.id || !s.peak_allocated_bytes || !s.min_allocated_bytes) continue;
      m.from_steps = true;
      step_peak = std::max(step_peak, *s.peak_allocated_bytes);
      step_min = std::min(step_min, *s.min_allocated_bytes);
    }
    if (m.from_steps) m.peak = step_peak, m.persistent = std::min(step_min, step_peak);
    out.push_back(m);
  }
  return out;
}

// How many times the batch could grow: the bytes that scale with it (peak −
// persistent) filling the usable memory beside the persistent ones.
double batch_factor(const MemoryUse& m, double usable_share) {
  const double usable = usable_share * double(m.capacity);
  const double scaling = double(m.peak - m.persistent);
  if (scaling <= 0) return usable / std::max(1.0, double(m.peak));
  return std::max(0.0, (usable - double(m.persistent)) / scaling);
}

std::string factor_text(double f) { return f >= 10 ? fmt("%.0f", std::floor(f)) : fmt("%.1f", f); }

void larger_batch_fits(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const std::vector<MemoryUse> use = memory_use(b.p);
  if (use.empty()) return;
  // The GPU with the least room decides for all of them.
  const MemoryUse& m = *std::max_element(use.begin(), use.end(),
                                         [](const MemoryUse& x, const MemoryUse& y) { return x.share() < y.share(); });
  if (m.share() >= th.memory_headroom_share) return;
  const double factor = batch_factor(m, th.memory_usable_share);
  if (factor < 1.5) return;
  Finding& f = b.add(Severity::info, m.share(), th.memory_headroom_share, 0);
  if (use.size() > 1) f.device = m.d->id;
  const std::string where =
      use.size() > 1 ? "GPU " + std::to_string(m.d->id) + " (the fullest of " + std::to_string(use.size()) + ")"
                     : "the GPU";
  f.title = "Memory peaks at " + bytes(m.peak) + " of " + bytes(m.capacity) + " (" + pct1(m.share()) + ") on " + where +
            ": a batch " + (factor > 100 ? std::string("over 100") : "about " + factor_text(factor)) +
            "× larger would fit";
  f.evidence =
      "Peak allocated " + bytes(m.peak) + (m.from_steps ? " during the steps" : " over the trace") + ", under the " +
      pct(th.memory_headroom_share) + " of the GPU's memory below which room for a larger batch is looked for. " +
      (m.from_steps ? "At least " + bytes(m.persistent) +
                          " stays allocated through every step (weights, optimizer state); the other " +
                          bytes(m.peak - m.persistent) + " is taken to grow with the batch"
                    : "Without steps, all of it is taken to grow with the batch") +
      ", to fill " + pct(th.memory_usable_share) + " of the memory (the rest left for fragmentation): " +
      (factor > 100 ? std::string("over 100") : factor_text(factor)) + "× the batch." +
      (m.d->peak_reserved_bytes ? " The allocator held at most " + bytes(*m.d->peak_reserved_bytes) + "." : "");
  f.recommendation =
      "Raise the batch size per GPU (scale the learning rate with it, or keep the global batch and use fewer GPUs or "
      "fewer gradient-accumulation steps): more work per launch and per step makes launch and synchronization "
      "overhead a smaller share. Memory grows about linearly with the batch: raise it in steps (2×, then 4×), measure "
      "samples per second at each, and keep the size where it stops rising, below the estimate.";
}

void memory_pressure(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const std::size_t steps = b.p.steps.steps.size();
  const double calls_per_step =
      steps ? double(b.ev.allocator_calls) / double(steps) : double(b.ev.allocator_calls) / 100.0;
  for (const DeviceSummary& d : b.p.devices) {
    if (!d.memory_bytes || *d.memory_bytes == 0) continue;
    const std::uint64_t top = std::max(d.peak_reserved_bytes.value_or(0), d.peak_allocated_bytes.value_or(0));
    const double share = double(top) / double(*d.memory_bytes);
    if (top == 0 || share < th.memory_pressure_share) continue;
    const bool fragmented =
        d.peak_reserved_bytes && d.peak_allocated_bytes &&
        double(*d.peak_reserved_bytes) >= th.reserved_over_allocated * double(*d.peak_allocated_bytes);
    const bool churn = b.ev.allocator_calls > 0 && calls_per_step >= th.allocator_calls_per_step;
    if (!fragmented && !churn) continue;
    Finding& f = b.add(share >= 0.97 ? Severity::critical : Severity::warning, share, th.memory_pressure_share,
                       b.t.per_device(b.ev.allocator_call_ns));
    f.device = d.id;
    f.title = "GPU " + std::to_string(d.id) + " is close to its memory (" + pct1(share) + " of " +
              bytes(*d.memory_bytes) + ") with allocator churn" +
              (fragmented ? ": reserved " + bytes(*d.peak_reserved_bytes) + " vs " + bytes(*d.peak_allocated_bytes) +
                                " allocated"
                          : ": " + count(b.ev.allocator_calls) + " cudaMalloc/cudaFree calls");
    std::string ev = "Peak " + std::string(d.peak_reserved_bytes ? "reserved" : "allocated") + " " + bytes(top) +
                     " against a " + pct(th.memory_pressure_share) + " threshold.";
    if (fragmented)
      ev += " The allocator held " + fmt("%.1f", double(*d.peak_reserved_bytes) / double(*d.peak_allocated_bytes)) +
            "× the bytes in live tensors (threshold " + fmt("%.1f", th.reserved_over_allocated) +
            "×): cached blocks the allocation sizes do not fit.";
    if (b.ev.allocator_calls)
      ev += " Hosts called cudaMalloc/cudaFree directly " + count(b.ev.allocator_calls) + " times (" +
            dur(b.ev.allocator_call_ns) + ")" + (steps ? ", " + fmt("%.1f", calls_per_step) + " per step" : "") +
            "; each cudaFree synchronizes the device.";
    f.evidence = ev;
    f.recommendation =
        "Near the limit the caching allocator frees its cache and calls cudaFree/cudaMalloc again (each a device "
        "sync), and an out-of-memory error is close. In PyTorch set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
        "(or max_split_size_mb) against fragmentation; keep tensor shapes stable between steps; lower the batch a "
        "little or use activation checkpointing to leave headroom.";
    f.ranges = b.ev.allocator.ranges();
  }
}

// [SECTION] Copies and data quality -----------------------------------------------------------

void pageable_memcpy(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const MemcpyStats& m = b.p.memcpys;
  const Totals& t = b.t;
  const double pageable_share = ratio(m.pageable_ns, t.span);
  if (m.pageable > 0 && pageable_share >= th.pageable_min_share) {
    Finding& f = b.add(pageable_share >= 0.05 ? Severity::warning : Severity::info, pageable_share,
                       th.pageable_min_share, t.per_device(m.pageable_ns) / 2);
    const double gbps = m.pageable_ns ? double(m.pageable_bytes) / double(m.pageable_ns) : 0;  // bytes/ns = GB/s
    const CopyGroup* top = heaviest_copies(m, [](const CopyGroup& g) { return g.memory == "pageable"; });
    f.title = count(m.pageable) + " copies (" + bytes(m.pageable_bytes) + ", " + dur(m.pageable_ns) +
              ") use pageable host memory, at " + fmt("%.1f", gbps) + " GB/s" +
              (top ? ", mostly " + copy_kind_words(*top) : "");
    f.evidence =
        "Copies with a pageable host side are staged through a driver buffer and cannot overlap the host "
        "(nsys rule cuda_memcpy_async); they take " +
        pct1(pageable_share) + " of the run vs a " + pct1(th.pageable_min_share) + " threshold.";
    std::string kinds;
    for (const CopyGroup& g : m.groups)
      if (g.memory == "pageable") kinds += (kinds.empty() ? "" : "; ") + copy_group_words(g);
    if (!kinds.empty()) f.evidence += " By kind: " + kinds + ".";
    f.recommendation = (top ? copy_fix(*top) : copy_fix(CopyGroup{"HtoD", false, "pageable"})) +
                       " Estimated saving: half the copy time (pinned copies run at full bus bandwidth and overlap).";
    f.ranges = b.ev.pageable.ranges();
  }
}

// Copies that block the host, charged as synchronizations: rated by the host
// time blocked plus the GPU idle that follows, not by the copies' duration.
void sync_memcpy(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const MemcpyStats& m = b.p.memcpys;
  const SyncStats& y = b.p.syncs;
  const Totals& t = b.t;
  if (!sync_memcpy_fires(b)) return;
  const double share = blocking_copy_share(b);
  Finding& f = b.add(share >= 0.05 ? Severity::warning : Severity::info, share, th.sync_memcpy_share,
                     t.per_device(y.gpu_idle_after_copies_ns));
  const CopyGroup* top = nullptr;
  for (const CopyGroup& g : m.groups)
    if (g.blocking && (!top || g.blocking > top->blocking)) top = &g;
  f.title = count(m.synchronous) + " copies block the host " + dur(m.synchronous_ns) + " and leave the GPU idle " +
            dur(t.per_device(y.gpu_idle_after_copies_ns)) + " after them" +
            (top ? ", mostly " + copy_kind_words(*top) : "");
  f.evidence =
      "A copy blocks the calling thread until the GPU's queue drains and the copy is done when it is launched by a "
      "blocking call (cudaMemcpy; nsys rule cuda_memcpy_sync), has a pageable host side, or reads a value back "
      "(.item(), a small .to('cpu'): aten::_local_scalar_dense); host-to-device copies <= " +
      bytes(std::uint64_t(th.sync_memcpy_htod_exempt_bytes)) +
      " are staged and excluded. Like a host synchronization it is charged the host time blocked (" +
      dur(m.synchronous_ns) + ") plus the GPU idle after it returned (" +
      dur(t.per_device(y.gpu_idle_after_copies_ns)) + "): " + pct1(share) + " of the run vs a " +
      pct1(th.sync_memcpy_share) + " threshold.";
  if (top) f.evidence += " Most of them: " + copy_group_words(*top) + ", " + count(top->blocking) + " blocking.";
  // Small device-to-host copies read values back (.item(), a loss to print).
  const bool scalar = top && top->direction == "DtoH" && top->bytes <= 65536 * top->count;
  f.recommendation =
      (scalar ? std::string("Reading values back (.item(), .cpu(), print(loss)) waits for the GPU: keep metrics on the "
                            "GPU and read them every N steps, or copy them into pinned memory with "
                            "non_blocking=True and wait on an event where they are needed.")
              : "Use cudaMemcpyAsync on a stream with pinned memory and wait only where the data is needed (an event), "
                "so the host keeps launching work meanwhile. " +
                    (top ? copy_fix(*top) : std::string())) +
      " Estimated saving: the GPU idle after the copies.";
  f.ranges = b.ev.sync_memcpy.ranges();
}

// Clocks held down for a thermal or power reason (nvml.throttle_reasons)
// during some steps, and how much longer those steps took.
void clocks_throttled(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  for (const DeviceSummary& d : b.p.devices) {
    const DeviceHw& hw = d.hw;
    if (!hw.throttle_samples || !hw.throttled_steps) continue;
    const bool compare = hw.other_steps > 0 && hw.other_step_mean_ns > 0;
    const double slower =
        compare ? static_cast<double>(hw.throttled_step_mean_ns) / static_cast<double>(hw.other_step_mean_ns) - 1 : 0;
    if (compare && slower < th.throttle_slowdown) continue;
    const TimeNs saving = compare ? static_cast<TimeNs>(hw.throttled_steps) *
                                        std::max<TimeNs>(0, hw.throttled_step_mean_ns - hw.other_step_mean_ns)
                                  : 0;
    Finding& f = b.add(Severity::warning, slower, th.throttle_slowdown, saving);
    f.device = d.id;
    std::string reasons;
    const std::pair<std::uint64_t, const char*> names[] = {{0x4, "software power cap"},
                                                           {0x8, "hardware slowdown"},
                                                           {0x20, "software thermal slowdown"},
                                                           {0x40, "hardware thermal slowdown"},
                                                           {0x80, "power brake"}};
    for (const auto& [bit, what] : names)
      if (hw.throttle_mask & bit) reasons += (reasons.empty() ? "" : ", ") + std::string(what);
    f.title = "Clocks throttled on GPU " + std::to_string(d.id) + " (" + reasons + ") in " + count(hw.throttled_steps) +
              " of " + count(hw.throttled_steps + hw.other_steps) + " steps" +
              (compare ? ", which took " + pct1(slower) + " longer than the others" : "");
    std::string clocks;
    if (hw.sm_clock_max_mhz && hw.throttled_sm_clock_mhz)
      clocks = " SM clock " + fmt("%.0f", *hw.throttled_sm_clock_mhz) + " MHz at the throttled samples vs " +
               fmt("%.0f", *hw.sm_clock_max_mhz) + " MHz at most.";
    f.evidence = "Measured by NVML (nvml.throttle_reasons): " + count(hw.throttle_samples) +
                 " samples with a thermal or power reason." + clocks +
                 (compare ? " Throttled steps: mean " + dur(hw.throttled_step_mean_ns) +
                                "; the others: " + dur(hw.other_step_mean_ns) + "."
                          : " Every step was throttled: no unthrottled step to compare with.");
    f.recommendation =
        "The card slowed itself down to stay within its power or temperature limit. Check cooling and airflow "
        "(inlet temperature, fan speed, neighbouring cards), whether the power limit was lowered (nvidia-smi -q -d "
        "POWER), and whether other work shares the card; a lower-power precision (bf16) or a smaller batch per step "
        "also reduces the draw.";
  }
}

// Memory-bound kernels, measured: per kernel category, the DRAM throughput
// (against the GPU's peak bandwidth) and the instruction issue of the samples
// taken while its kernels ran, over every GPU (sample-weighted). A category
// at high DRAM and low issue waits on memory: fusing it with its neighbours
// pays, a faster kernel does not; one at high issue is compute-bound.
struct BoundCategory {
  KernelCategory category = KernelCategory::other;
  double dram = 0, issue = 0;  // fractions of peak
  std::uint64_t samples = 0;   // the fewer of its DRAM and issue samples
  double share = 0;            // of kernel time
};
std::vector<BoundCategory> measured_bound_categories(const Builder& b) {
  struct Acc {
    double dram = 0, issue = 0;
    std::uint64_t dram_n = 0, issue_n = 0;
  };
  std::array<Acc, kKernelCategoryCount> acc{};
  for (const DeviceSummary& d : b.p.devices)
    for (const HwCategory& c : d.hw.by_category) {
      Acc& a = acc[static_cast<int>(c.category)];
      if (c.dram_share && c.dram_samples) {
        a.dram += *c.dram_share * static_cast<double>(c.dram_samples);
        a.dram_n += c.dram_samples;
      }
      if (c.sm_issue && c.issue_samples) {
        a.issue += *c.sm_issue * static_cast<double>(c.issue_samples);
        a.issue_n += c.issue_samples;
      }
    }
  std::vector<BoundCategory> out;
  for (int ci = 0; ci < kKernelCategoryCount; ++ci) {
    const Acc& a = acc[ci];
    const std::uint64_t n = std::min(a.dram_n, a.issue_n);
    if (n < b.opt.thresholds.hw_min_samples) continue;
    const auto cat = static_cast<KernelCategory>(ci);
    out.push_back({cat, a.dram / static_cast<double>(a.dram_n), a.issue / static_cast<double>(a.issue_n), n,
                   b.t.share_of_gpu(cat)});
  }
  std::sort(out.begin(), out.end(), [](const BoundCategory& x, const BoundCategory& y) { return x.share > y.share; });
  return out;
}

void memory_bound_kernels(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const std::vector<BoundCategory> cats = measured_bound_categories(b);
  std::vector<const BoundCategory*> memory, compute;
  double share = 0;
  std::uint64_t samples = 0;
  double dram = 0, issue = 0;  // sample-weighted over the memory-bound categories
  for (const BoundCategory& c : cats) {
    if (c.dram >= th.hw_memory_bound_dram && c.issue <= th.hw_memory_bound_issue) {
      memory.push_back(&c);
      share += c.share;
      samples += c.samples;
      dram += c.dram * static_cast<double>(c.samples);
      issue += c.issue * static_cast<double>(c.samples);
    } else if (c.issue >= th.hw_compute_bound_issue) {
      compute.push_back(&c);
    }
  }
  if (memory.empty() || share < th.hw_memory_bound_share) return;
  dram /= static_cast<double>(samples);
  issue /= static_cast<double>(samples);
  auto names = [](const std::vector<const BoundCategory*>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i)
      s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + std::string(to_string(v[i]->category));
    return s;
  };
  auto numbers = [](const BoundCategory& c) {
    return std::string(to_string(c.category)) + " " + pct(c.share) + " of kernel time, DRAM " + pct(c.dram) +
           " of peak, issue " + pct(c.issue) + " (" + count(c.samples) + " samples)";
  };
  TimeNs time = 0;
  for (const BoundCategory* c : memory) time += b.t.category[static_cast<int>(c->category)];
  // Fusing a chain of memory-bound kernels removes the round trips through
  // DRAM between them: half their time is the rule of thumb.
  Finding& f = b.add(share >= 0.25 ? Severity::warning : Severity::info, share, th.hw_memory_bound_share,
                     b.t.per_device(time) / 2);
  f.title = "Memory-bound kernels: " + names(memory) + " kernels (" + pct1(share) + " of kernel time) moved DRAM at " +
            pct(dram) + " of the peak bandwidth while issuing " + pct(issue) + " of the peak instructions (measured, " +
            count(samples) + " samples)";
  std::string memory_text, compute_text;
  for (const BoundCategory* c : memory) memory_text += (memory_text.empty() ? "" : "; ") + numbers(*c);
  for (const BoundCategory* c : compute) compute_text += (compute_text.empty() ? "" : "; ") + numbers(*c);
  f.evidence =
      "Measured by the GPU's counters (hw.dram_read + hw.dram_write against the GPU's peak bandwidth, "
      "hw.sm_issue), each sample attributed to the longest kernel in flight. Memory-bound (DRAM ≥ " +
      pct(th.hw_memory_bound_dram) + ", issue at most " + pct(th.hw_memory_bound_issue) + "): " + memory_text +
      ". Compute-bound (issue ≥ " + pct(th.hw_compute_bound_issue) +
      "): " + (compute_text.empty() ? std::string("none") : compute_text) + ". No category is judged from fewer than " +
      count(th.hw_min_samples) + " samples.";
  f.recommendation =
      "These kernels wait on memory, not on math: a faster kernel that moves the same bytes gains nothing here. "
      "Fusion pays: merge chains of elementwise, normalization and optimizer kernels so the data stays on chip "
      "(torch.compile, fused optimizers with foreach/fused=True, fused bias + activation, fused layer norm), keep "
      "activations in bf16 to halve the bytes, and avoid materialising intermediates. Estimated saving: half their "
      "time." +
      (compute.empty() ? std::string()
                       : " The compute-bound " + names(compute) +
                             " kernels are where a faster kernel (tensor cores, a better algorithm) pays instead.");
  for (const BoundCategory* c : memory)
    for (const std::string& k : kernels_of(b.p, c->category, 5))
      if (f.kernels.size() < 5) f.kernels.push_back(k);
  f.ranges = b.ev.ops_by_category[static_cast<int>(memory.front()->category)].ranges();
}

void dropped_records(Builder& b) {
  std::uint64_t lost = 0;
  std::string keys;
  for (const auto& [key, value] : b.p.trace_stats) {
    if (value == 0) continue;
    // Rows lost in storage (store.*: a cut or damaged file) were recorded;
    // the report states them apart, first (Profile::trace_quality).
    if (key.starts_with("store.")) continue;
    if (key.find("dropped") == std::string::npos && key.find("lost") == std::string::npos) continue;
    lost += value;
    if (!keys.empty()) keys += ", ";
    keys += key + " = " + count(value);
  }
  if (lost == 0) return;
  std::uint64_t ops = 0;
  for (const DeviceSummary& d : b.p.devices) ops += d.kernels + d.memcpys + d.memsets;
  const double share = ops + lost ? double(lost) / double(ops + lost) : 1.0;
  Finding& f = b.add(share >= 0.01 ? Severity::critical : Severity::warning, share, 0, 0);
  f.title = count(lost) + " records were lost while recording: the numbers in this report undercount";
  f.evidence = "Trace statistics: " + keys + " (about " + pct1(share) + " of the GPU ops).";
  f.recommendation =
      "Record again with larger or more activity buffers, or a shorter capture window, until nothing is dropped; "
      "treat the findings above as lower bounds meanwhile.";
}

// [SECTION] Framework ops (roofline, launch overhead) -----------------------------------------

std::string op_words(const OpRow& r) {
  std::string shapes = r.shapes;
  if (shapes.size() > 60) shapes = shapes.substr(0, 57) + "...";
  return r.name + (shapes.empty() ? "" : " " + shapes) + (r.math.empty() ? "" : " (" + r.math + ")");
}

// The rows of ops that launched kernels themselves (not the ops around them,
// which would count the same time twice), heaviest first.
template <class F>
void for_each_launching_op(const Profile& p, F&& f) {
  for (const OpRow& r : p.ops)
    if (r.gpu_self_ns > 0 && r.calls > 0) f(r);
}

// Matrix products, convolutions and attention far below their roofline; GEMMs
// with a dimension not a multiple of 8 named as such (tensor cores need it).
void op_below_roofline(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  int shown = 0;
  std::uint64_t sms = 0;  // the smallest GPU's (a job of one kind of GPU: all the same)
  for (const DeviceSummary& d : b.p.devices)
    if (d.sm_count) sms = sms ? std::min<std::uint64_t>(sms, d.sm_count) : d.sm_count;
  for_each_launching_op(b.p, [&](const OpRow& r) {
    if (shown == 5 || !r.roofline_fraction || *r.roofline_fraction >= th.roofline_min_fraction) return;
    if (r.family != "gemm" && r.family != "convolution" && r.family != "attention") return;
    const double share = ratio(r.gpu_self_ns, b.t.gpu_time);
    if (share < th.op_min_share) return;
    ++shown;
    // Reaching the threshold would save this much; never more than the op's time.
    const double frac = *r.roofline_fraction;
    const TimeNs saving = static_cast<TimeNs>(static_cast<double>(b.t.per_device(r.gpu_self_ns)) *
                                              std::clamp(1 - frac / th.roofline_min_fraction, 0.0, 1.0));
    Finding& f = b.add(share >= 0.1 ? Severity::critical : Severity::warning, frac, th.roofline_min_fraction, saving);
    f.title = op_words(r) + " reaches " + pct1(frac) + " of its roofline (" + fmt("%.1f", *r.achieved_tflops) +
              " TFLOP/s, " + dur(r.gpu_self_ns) + ", " + pct1(share) + " of kernel time)";
    std::string why;
    if (r.family == "gemm" && !r.aligned8)
      why = " Its dimensions (" + r.dims + ") are not all multiples of 8: tensor cores cannot run it at full rate.";
    bool recent = false;
    for (const DeviceSummary& d : b.p.devices) recent = recent || d.compute_major >= 8;
    if (r.math == "fp32" && recent) why += " It computes in fp32 on a GPU where TF32 or bf16 run many times faster.";
    if (r.family == "gemm" && r.calls >= 100 && r.intensity && *r.intensity < 50)
      why += " It is small (" + fmt("%.0f", *r.intensity) + " FLOP/B) and called " + count(r.calls) +
             " times: batched into one product it would run nearer the roofline.";
    // Fewer blocks than SMs: one wave that leaves SMs idle. No kernel choice,
    // padding or precision reaches the roofline then; more work per launch does.
    const OpKernel* main = r.top_kernels.empty() ? nullptr : &r.top_kernels.front();
    const bool too_small = main && main->blocks > 0 && sms > 0 && main->blocks < sms;
    if (too_small)
      why += " Its main kernel launches " + count(main->blocks) + " blocks on a GPU of " + count(sms) +
             " SMs: at most " + pct(double(main->blocks) / double(sms)) +
             " of the SMs work, the product is too small to fill the GPU.";
    f.evidence = "Roofline fraction " + pct1(frac) + " vs threshold " + pct1(th.roofline_min_fraction) + " (" +
                 r.bound + "-bound at " + fmt("%.1f", r.intensity.value_or(0)) + " FLOP/B, " + r.math + ", " +
                 count(r.calls) + " calls; " + r.dims + ")." + why;
    const std::string saving_words = " Estimated saving: the time above what reaching " +
                                     pct(th.roofline_min_fraction) +
                                     " of the roofline would take, at most the op's time.";
    if (too_small)
      f.recommendation =
          "Give each launch more work: a larger batch (or longer sequences), the small products batched into one "
          "(torch.bmm, grouped GEMMs, one attention call over all heads and sequences), or independent ops run side "
          "by side (CUDA streams, CUDA graphs)." +
          std::string(r.family == "gemm" && !r.aligned8
                          ? " Pad the dimensions to multiples of 8 as well: tensor cores need it."
                          : " Padding and precision do not help a kernel that leaves SMs idle.") +
          saving_words;
    else
      f.recommendation =
          "Pad the dimensions to multiples of 8 (16 for fp8), batch small products (torch.bmm, grouped GEMMs), use "
          "bf16/fp16 autocast or TF32 (torch.backends.cuda.matmul.allow_tf32) for fp32 math." +
          saving_words;
    for (const OpKernel& k : r.top_kernels) f.kernels.push_back(k.name);
  });
}

// Ops whose launch calls take longer than the GPU work they launch: the GPU
// waits for the CPU. Saving: the launch time beyond the GPU time, at most the op's time.
// An op called once or twice is not a pattern: its first call carries one-off
// costs (lazy module loading loads a kernel on its first launch, cuDNN
// autotuning tries algorithms, the caching allocator grows). And a launch call
// that takes a millisecond or more on average is doing setup work, not
// launching: said as such, with the warm-up advice, not fusion.
void op_launch_overhead(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  int shown = 0;
  const TimeNs run = b.p.window.duration();
  for_each_launching_op(b.p, [&](const OpRow& r) {
    if (shown == 5 || r.launch_ns <= r.gpu_self_ns || r.calls < th.launch_overhead_min_calls) return;
    const TimeNs excess = r.launch_ns - r.gpu_self_ns;
    const double share = ratio(excess, b.t.gpu_time);
    if (share < th.launch_overhead_min_share) return;
    ++shown;
    TimeNs saving = std::min(b.t.per_device(excess), r.cpu_total_ns);
    if (run > 0) saving = std::min(saving, run);
    Finding& f = b.add(Severity::warning, share, th.launch_overhead_min_share, saving);
    const TimeNs per_call = r.launch_ns / static_cast<TimeNs>(r.calls);
    const bool setup = per_call >= th.launch_setup_ns;
    f.title = op_words(r) + ": launching takes " + dur(r.launch_ns) + ", its GPU work " + dur(r.gpu_self_ns) + " (" +
              count(r.calls) + " calls" +
              (setup ? ", " + dur(per_call) + " per launch: setup work, not launching" : "") + ")";
    f.evidence =
        "Launch time beyond GPU time " + dur(excess) + " = " + pct1(share) + " of kernel time vs threshold " +
        pct1(th.launch_overhead_min_share) + "; " + fmt("%.1f", double(r.kernels) / double(r.calls)) +
        " kernels per call; mean launch call " + dur(per_call) +
        (setup ? " (a launch takes a few µs: at " + dur(th.launch_setup_ns) + " or more the call does other work first)"
               : "") +
        ".";
    if (setup)
      f.recommendation =
          "The launch calls do one-off work: cuDNN autotuning (torch.backends.cudnn.benchmark=True tries "
          "algorithms on the first call of each input shape), lazy module loading (CUDA_MODULE_LOADING=LAZY loads "
          "a kernel on its first launch) or allocation. Profile after warm-up steps (torch.profiler.schedule("
          "wait=1, warmup=1, active=N)) and keep input shapes fixed so that autotuning runs once.";
    else
      f.recommendation =
          "Fuse the op's small kernels (torch.compile), capture the step in a CUDA graph "
          "(torch.cuda.graphs / torch.compile mode=\"reduce-overhead\"), or make each call do more work (larger "
          "batches).";
    for (const OpKernel& k : r.top_kernels) f.kernels.push_back(k.name);
  });
}

// [SECTION] The registry and the entry point ----------------------------------------------

struct RuleEntry {
  FindingRule rule;
  void (*run)(Builder& b);
};

// Every rule, in the order it runs: findings of one rule stay together in this
// order until analyze() sorts them by saving. `severity` is the policy as
// docs/findings.md states it, for the defaults of FindingThresholds.
constexpr RuleEntry kRules[] = {
    {{"padding-hotspot", "share of kernel time in padding kernels", "critical at ≥ 15 %", "--remove padding"},
     padding_hotspot},
    {{"broadcast-hotspot", "share of kernel time in broadcast kernels", "critical at ≥ 15 %", "--remove broadcast"},
     broadcast_hotspot},
    {{"layout-transpose", "share of kernel time in layout transposes", "critical at ≥ 15 %", "--remove transpose"},
     layout_transpose},
    {{"slow-normalization", "share of kernel time in normalization kernels, also against the convolutions",
      "critical at ≥ 30 %", "--scale normalization=0.5"},
     slow_normalization},
    {{"no-tensor-cores", "share of convolution and GEMM time on tensor cores, on GPUs that have them", "warning",
      "--scale convolution=0.5 --scale gemm=0.5"},
     no_tensor_cores},
    {{"memory-bound-aux",
      "elementwise, copy, reduction and layout kernel time against the math (convolution + GEMM + attention), and "
      "the largest such category's share",
      "critical at ≥ 40 % and above the math", ""},
     memory_bound_aux},
    {{"eager-attention", "GEMM → softmax → GEMM chains on a stream, with no fused attention kernel",
      "critical at ≥ 15 %", ""},
     eager_attention},
    {{"low-utilization", "busy / span over all GPUs, with idle time that no other finding counts",
      "critical below 30 %"},
     low_utilization},
    {{"busy-not-working",
      "share of the samples taken while kernels ran with few SMs active (hw.sm_active), on a GPU busy most of the time",
      "critical at ≥ 80 % of the samples"},
     busy_not_working},
    {{"gpu-idle-gaps", "idle gaps of at least 1 ms, their share of the run, by what ended them",
      "critical at ≥ 25 % ended by late launches or queued work"},
     gpu_idle_gaps},
    {{"input-bound", "GPU idle while the host loads data, share of step time", "critical when highly",
      "--no-input-wait"},
     input_bound},
    {{"step-host-time", "step time before the GPU's first op or after its last, share of step time",
      "critical at ≥ 50 %"},
     step_host_time},
    {{"launch-bound", "short idle gaps waiting for launches, and ops shorter than their launch call",
      "critical at ≥ 25 %", "--cuda-graphs"},
     launch_bound},
    {{"host-sync", "GPU idle after host synchronizations drained its queue", "critical at ≥ 10 %", "--no-host-sync"},
     host_sync},
    {{"low-concurrency", "kernels never side by side on a GPU they leave room on", "warning"}, low_concurrency},
    {{"low-memcpy-overlap", "copy time overlapped by kernels, pinned host-to-device copies on a copy stream aside",
      "warning"},
     low_memcpy_overlap},
    {{"exposed-communication", "communication with no compute alongside, share of the run", "critical when high",
      "--overlap-allreduce"},
     exposed_communication},
    {{"serialized-weight-update", "optimizer kernels running alone", "critical at ≥ 10 % of kernel time",
      "--overlap-update"},
     serialized_weight_update},
    {{"unfused-optimizer",
      "kernels launched per step by the optimizer's ops (Optimizer.step#…), few of them multi-tensor",
      "critical at ≥ 1000 per step", ""},
     unfused_optimizer},
    {{"straggler",
      "the rank whose late arrivals at the matched collectives made the others wait longest (else the GPU or rank "
      "with the most compute), against the median",
      "critical at ≥ 25 % more compute or ≥ 10 % of the others' time", "--balance-ranks"},
     straggler},
    {{"larger-batch-fits", "peak allocated memory per step against the GPU's memory", "info", ""}, larger_batch_fits},
    {{"memory-pressure", "peak reserved memory near the GPU's memory, with fragmentation or direct cudaMalloc/cudaFree",
      "critical at ≥ 97 %", ""},
     memory_pressure},
    {{"pageable-memcpy", "copies with a pageable host side", "warning at ≥ 5 %, else info"}, pageable_memcpy},
    {{"sync-memcpy", "copies that block the host: host time blocked plus the GPU idle after them",
      "warning at ≥ 5 %, else info"},
     sync_memcpy},
    {{"clocks-throttled", "steps with a thermal or power throttle reason (NVML), slower than the others", "warning"},
     clocks_throttled},
    {{"memory-bound-kernels",
      "kernel categories whose samples show high DRAM throughput and low instruction issue (hw.dram_*, hw.sm_issue), "
      "share of kernel time",
      "warning at ≥ 25 %, else info"},
     memory_bound_kernels},
    {{"dropped-records", "records the recorder lost", "critical if ≥ 1 % of the GPU ops"}, dropped_records},
    {{"op-below-roofline", "matrix, convolution and attention ops far below their roofline", "critical at ≥ 10 %"},
     op_below_roofline},
    {{"op-launch-overhead", "ops whose launch calls take longer than their GPU work", "warning"}, op_launch_overhead},
};

constexpr auto kRuleList = [] {
  std::array<FindingRule, std::size(kRules)> rules{};
  for (std::size_t i = 0; i < rules.size(); ++i) rules[i] = kRules[i].rule;
  return rules;
}();

}  // namespace

std::vector<Finding> find_problems(const Profile& p, const Evidence& ev, const AnalysisOptions& opt) {
  std::vector<Finding> out;
  const Totals totals(p);
  Builder b{p, ev, opt, totals, &out, {}};
  for (const RuleEntry& r : kRules) {
    b.rule = r.rule.id;
    r.run(b);
  }
  if (p.devices.size() == 1)
    for (Finding& f : out)
      if (f.device == kNoDevice) f.device = p.devices.front().id;
  return out;
}

}  // namespace gpuscope::detail

namespace gpuscope {

std::span<const FindingRule> finding_rules() { return detail::kRuleList; }

}  // namespace gpuscope
