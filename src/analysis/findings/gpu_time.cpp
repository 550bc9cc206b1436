// Where the GPU time goes: padding, broadcast and transpose kernels, normalization,
// tensor cores, memory-bound auxiliary kernels, attention done eagerly.
// Each rule: rules.h; its row in registry.cpp and docs/findings.md.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "analysis/findings/rules.h"
#include "analysis/ops/roofline.h"

namespace gpuscope::detail::rules {

namespace {

// Where the work queued ahead of the first step is left out of the shares
// (Totals::backlog_kernel_ns), the sentence that says so; empty otherwise.
std::string backlog_words(const Builder& b) {
  if (b.t.backlog_kernel_ns <= 0) return {};
  return " The " + dur(b.t.backlog_kernel_ns) +
         " of kernels queued ahead of the first step (run before it, in no step's time; see Steps) are left out "
         "of these shares.";
}

Finding* category_hotspot(Builder& b, KernelCategory cat, double threshold, const char* what, const char* why,
                          const char* fix, double saving_fraction) {
  const double share = b.t.own_share(cat);
  if (share < threshold || share == 0) return nullptr;
  const TimeNs time = b.t.own(cat);
  Finding& f = b.add(share >= 3 * threshold ? Severity::critical : Severity::warning, share, threshold,
                     static_cast<TimeNs>(static_cast<double>(b.t.per_device(time)) * saving_fraction));
  f.share = share;
  f.title = pct1(share) + " " + b.t.kernel_time_words() + " (" + dur(time) + ") is in " + what + " (" +
            count(b.t.own_count[static_cast<int>(cat)]) + " launches)";
  f.evidence = std::string("Top kernels: ") + top_kernels_text(b.p, cat) + ". Share " + b.t.kernel_time_words() + " " +
               pct1(share) + " vs threshold " + pct1(threshold) + ". " + why + backlog_words(b);
  f.recommendation = fix;
  f.kernels = kernels_of(b.p, cat);
  f.ranges = b.ev.ops_by_category[static_cast<int>(cat)].ranges();
  return &f;
}
}  // namespace

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

namespace {
// A normalization over each sample's features (layer norm, RMS norm) or
// groups of channels (group, instance norm), by the kernel's name: not batch
// norm, whose fix (cuDNN's fused kernels, folding into the convolution's
// epilogue) does not apply to it.
bool per_sample_norm(std::string_view name) {
  for (std::string_view f :
       {"layer_norm", "layernorm", "rms_norm", "rmsnorm", "group_norm", "groupnorm", "instance_norm", "instancenorm"})
    if (contains_nocase(name, f)) return true;
  return false;
}

}  // namespace

void layout_transpose(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  // The transposes' time in copies a layout op made (aten::contiguous or
  // aten::reshape of a permuted view: attention heads, patch embeddings),
  // not NCHW/NHWC conversions between layers.
  TimeNs copies = 0, all = 0;
  for (const Hotspot& h : b.p.hotspots) {
    if (h.category != KernelCategory::transpose) continue;
    all += h.stats.total;
    if (h.category_rule.starts_with("launching op: inside a layout copy")) copies += h.stats.total;
  }
  if (all > 0 && 2 * copies >= all) {
    Finding* f = category_hotspot(
        b, KernelCategory::transpose, th.transpose_share, "layout copies",
        "Most of them are copies that aten::contiguous or aten::reshape made of views that are not contiguous "
        "(permuted or transposed tensors: attention heads split and merged, patch or sequence dimensions moved): "
        "each reads and writes the whole tensor once more.",
        "Keep the tensors in the layout their consumer reads: use ops that take strided views "
        "(scaled_dot_product_attention on [batch, heads, sequence, dim] views without .contiguous(), "
        "einsum/matmul on the permuted view), fold the permute into the producing GEMM's output layout, or let a "
        "compiler fuse the copy into its neighbours (torch.compile).",
        1.0);
    if (!f) return;
    f->variant = "copies";
    // The Python line that makes the copies, and whose code it is.
    const LaunchedFrom from = launched_from(b.p, [](const Hotspot& h) {
      return h.category == KernelCategory::transpose &&
             h.category_rule.starts_with("launching op: inside a layout copy");
    });
    if (!from.frame.empty()) {
      f->evidence += " The heaviest of them are launched from " + from.frame + " (" + pct(from.share) +
                     " of their time, by the Python frames the trace recorded).";
      if (from.library)
        f->recommendation = "These copies are made in a library's code (" + from.frame +
                            "), not the program's: a version of the library that avoids them, a patch of that "
                            "line, or torch.compile, which fuses such copies into their neighbours, removes them. " +
                            f->recommendation;
    }
    return;
  }
  Finding* f = category_hotspot(
      b, KernelCategory::transpose, th.transpose_share, "layout transposes",
      "Converting activations between NCHW and NHWC around individual layers costs a full read and write of the "
      "tensor each time.",
      "", 1.0);
  if (!f) return;
  // Batch norm's NHWC kernels count only where batch norm runs beside the
  // convolutions (normalization kernels that are not layer, RMS or group norm).
  bool batch_norm = false;
  if (b.t.of(KernelCategory::convolution) > 0)
    for (const Hotspot& h : b.p.hotspots)
      batch_norm = batch_norm || (h.category == KernelCategory::normalization && !per_sample_norm(h.name));
  const std::string rest =
      " suits " +
      for_vendor(
          b.p, "tensor-core convolutions", "MIOpen's NHWC (matrix-core) convolution solvers",
          "the vendor libraries' NHWC convolutions (tensor cores on NVIDIA, MIOpen's matrix-core solvers on AMD)") +
      (batch_norm ? " and batch norm" : "") +
      "; convert once at the input, not around each layer. Bundled workload: --layout nhwc.";
  f->recommendation = for_framework(b.p,
                                    "Keep one layout end to end: NHWC (model.to(memory_format=torch.channels_last) "
                                    "and the inputs likewise)" +
                                        rest,
                                    "Keep one layout end to end: NHWC (data_format='channels_last')" + rest,
                                    "Keep one layout end to end: NHWC (channels_last in PyTorch, "
                                    "data_format='channels_last' in TensorFlow)" +
                                        rest);
}

namespace {

// cuDNN's batch norm (cudnnBatchNormalizationForwardTraining and its
// backward, the NHWC persistent kernels) and MIOpen's (MIOpenBatchNormFwd…,
// MIOpenBatchNormBwd…): statistics, normalization and the affine transform
// in one kernel per pass — already the fused batch norm this rule's fix asks
// for.
bool cudnn_fused_batch_norm(std::string_view name) {
  return name.find("bn_fw_tr") != std::string_view::npos || name.find("bn_bw_") != std::string_view::npos ||
         name.find("bn_fw_inf") != std::string_view::npos || name.find("nhwc_batch_norm") != std::string_view::npos ||
         name.starts_with("cudnn::bn_") || name.starts_with("MIOpenBatchNorm");
}

// The evidence and fix of a normalization that is mostly layer, RMS or group norm.
void per_sample_norm_advice(Builder& b, Finding& f, double norm, TimeNs per_sample_ns) {
  f.evidence = "Top kernels: " + top_kernels_text(b.p, KernelCategory::normalization) + ". Share " + pct1(norm) +
               " vs threshold " + pct1(b.opt.thresholds.normalization_share) + "; " + dur(per_sample_ns) +
               " of it is layer, RMS or group norm (by the kernels' names): each call is one pass over the "
               "activations, which only fusing it with the ops beside it shortens.";
  const bool pytorch = b.p.workload.framework == "pytorch";
  f.recommendation =
      "Fuse the normalization with the ops around it (the residual add before it, the elementwise ops "
      "after it): " +
      fuser(b.p) +
      (pytorch && b.p.workload.execution != "compiled"
           ? "; otherwise a fused add-and-norm kernel (Apex's FusedLayerNorm or FusedRMSNorm, "
             "Transformer Engine's LayerNormLinear)"
           : std::string()) +
      ". Estimated saving: half the normalization time.";
  f.kernels = kernels_of(b.p, KernelCategory::normalization);
  f.ranges = b.ev.ops_by_category[static_cast<int>(KernelCategory::normalization)].ranges();
}

// PyTorch's own batch-norm kernels (at::native::batch_norm_*): what
// torch.nn.BatchNorm2d runs where the vendor's library does not take the
// tensors (on ROCm, MIOpen takes only some dtypes and layouts).
bool native_batch_norm(std::string_view name) { return name.find("at::native::batch_norm_") != std::string_view::npos; }

// A fused batch norm, in the words of the framework and of the GPU's vendor:
// cuDNN's on NVIDIA, MIOpen's on AMD (no cuDNN on ROCm), either where the
// trace does not say whose GPU it is.
std::string batch_norm_fix(const Profile& p) {
  const std::string rest =
      " and fold BN + ReLU (+ residual add) into one kernel; keep one layout so no transposes surround it. "
      "Estimated saving: half the normalization time. Bundled workload: --bn fused.";
  const GpuVendor vendor = gpu_vendor(p);
  bool native = false;
  for (const Hotspot& h : p.hotspots)
    native = native || (h.category == KernelCategory::normalization && native_batch_norm(h.name));
  const std::string amd_pytorch =
      "Use MIOpen's batch norm (torch.nn.BatchNorm2d on ROCm runs it only for the dtypes and layouts MIOpen takes, "
      "PyTorch's native kernels, at::native::batch_norm_*, otherwise" +
      std::string(native ? ", as here" : "") +
      ") with channels_last for its NHWC kernels, or let torch.compile fold BN + ReLU (+ residual add) into one "
      "kernel; keep one layout so no transposes surround it. Estimated saving: half the normalization time. "
      "Bundled workload: --bn fused.";
  const std::string pytorch =
      vendor == GpuVendor::nvidia ? "Use cuDNN's fused batch norm: torch.nn.BatchNorm2d on CUDA tensors (channels_last "
                                    "for its NHWC kernels)" +
                                        rest
      : vendor == GpuVendor::amd
          ? amd_pytorch
          : "Use the vendor library's fused batch norm (cuDNN on NVIDIA, MIOpen on AMD): torch.nn.BatchNorm2d on GPU "
            "tensors (channels_last for its NHWC kernels)" +
                rest;
  const std::string either =
      for_vendor(p,
                 "Use a fused batch norm (cuDNN's training kernels, NHWC and its persistent modes; "
                 "torch.nn.BatchNorm2d with channels_last; tf.nn.fused_batch_norm)",
                 "Use a fused batch norm (MIOpen's batch norm, NHWC; torch.nn.BatchNorm2d with channels_last; "
                 "tf.nn.fused_batch_norm)",
                 "Use a fused batch norm (the vendor library's: cuDNN on NVIDIA, MIOpen on AMD; "
                 "torch.nn.BatchNorm2d with channels_last; tf.nn.fused_batch_norm)");
  return for_framework(p, pytorch,
                       "Use a fused batch norm: tf.keras.layers.BatchNormalization(fused=True) or "
                       "tf.nn.fused_batch_norm, not tf.nn.moments with tf.nn.batch_normalization "
                       "(data_format='channels_last' for its NHWC kernels)" +
                           rest,
                       either + rest);
}

}  // namespace

// Normalization: slow when it is a large share of kernel time, or (batch
// norm) large next to the convolutions it follows — unless cuDNN's fused
// batch norm already does most of it (its fix is in place; what is left is
// the tensor cores' and the layout's, which their own rules judge). Layer, RMS
// and group norm get the fix that fits them: fusion with their neighbours.
void slow_normalization(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const double norm = b.t.share_of_gpu(KernelCategory::normalization);
  const TimeNs norm_ns = b.t.category[static_cast<int>(KernelCategory::normalization)];
  const TimeNs conv_ns = b.t.category[static_cast<int>(KernelCategory::convolution)];
  TimeNs fused_ns = 0, per_sample_ns = 0;
  for (const Hotspot& h : b.p.hotspots) {
    if (h.category != KernelCategory::normalization) continue;
    if (cudnn_fused_batch_norm(h.name)) fused_ns += h.stats.total;
    if (per_sample_norm(h.name)) per_sample_ns += h.stats.total;
  }
  if (norm_ns > 0 && fused_ns * 2 >= norm_ns) return;
  // Mostly layer or RMS norm (a transformer's): one memory pass per call,
  // which only fusion with the ops beside it shortens; next to the
  // convolutions it is no batch norm after them, so only its share counts.
  const bool per_sample = norm_ns > 0 && per_sample_ns * 2 >= norm_ns;
  const bool vs_conv = !per_sample && conv_ns > 0 && norm_ns * 2 >= conv_ns && norm >= 0.05;
  if (norm > 0 && (norm >= th.normalization_share || vs_conv)) {
    Finding& f = b.add(norm >= 2 * th.normalization_share ? Severity::critical : Severity::warning, norm,
                       th.normalization_share, b.t.per_device(norm_ns) / 2);
    f.share = norm;
    f.title =
        pct1(norm) + " of kernel time (" + dur(norm_ns) + ") is in normalization kernels" +
        (conv_ns > 0 && !per_sample ? ", " + fmt("%.2f", double(norm_ns) / double(conv_ns)) + "x the convolution time"
                                    : "");
    if (per_sample) return per_sample_norm_advice(b, f, norm, per_sample_ns);
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
    f.recommendation = batch_norm_fix(b.p);
    f.kernels = kernels_of(b.p, KernelCategory::normalization);
    f.ranges = b.ev.ops_by_category[static_cast<int>(KernelCategory::normalization)].ranges();
  }
}

namespace {

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
}  // namespace

// Small-grid kernels launched mostly (`tiny` of their `ns`) by framework ops
// whose recorded inputs are scalars or tiny tensors: per-step bookkeeping
// (metrics, counters, loss scaling), at the launch floor, which a larger
// batch does not give more blocks; the fix is fewer of them. What that
// saves is their time at most, and only where they hold up the step: the
// replay cannot single them out from larger kernels of the same names, so
// no saving is claimed.
void small_grid_bookkeeping(Builder& b, Finding& f, TimeNs ns, TimeNs tiny, const std::vector<HostRange>& tiny_ops) {
  std::string ops;
  for (const HostRange& o : tiny_ops)
    ops += (ops.empty() ? "" : "; ") + o.name + " " + dur(o.ns) + " (" + count(o.count, "kernel", "kernels") + ")";
  f.variant = "tiny-tensors";
  f.saving_ns = 0;
  f.saving_note = "what batching or deferring them saves is unknown: at most the " + dur(b.t.per_device(tiny)) +
                  " of GPU time the ops on tiny inputs launched, and only where the step waits for them, which the "
                  "replay cannot single out (it does not tell their kernels from larger ones of the same names)";
  f.evidence += " Of their time, " + dur(b.t.per_device(tiny)) + " (" + pct(ratio(tiny, ns)) +
                ") was launched by ops whose recorded inputs are all scalars or tiny tensors (at most 4,096 "
                "elements, at most one dimension above 1), the most by: " +
                ops + ".";
  f.recommendation =
      "Most of these launches are per-step bookkeeping on scalars and tiny tensors (metrics, counters, loss "
      "scaling), at the launch floor: a larger batch does not give a scalar update more blocks. Do fewer of them: "
      "accumulate the metrics on the GPU and read them every N steps, or keep counters on the CPU; or fuse the "
      "updates into a few kernels (" +
      fuser(b.p) + ", torch._foreach_* over the lists of scalars).";
}

// Kernels launched with fewer blocks than half the GPU's SMs, with nothing
// running beside them: most SMs idle while they run (Nsight Compute's launch
// statistics: "the grid is too small to fill the available resources").
void small_grid(Builder& b) {
  constexpr double kShare = 0.05, kCritical = 0.25;
  TimeNs ns = 0, spread = 0, kernel_ns = 0, shaped = 0, tiny = 0;
  std::uint64_t kernels = 0;
  const DeviceSummary* top = nullptr;
  for (const DeviceSummary& d : b.p.devices) {
    kernel_ns += d.kernel_time_ns;
    const DeviceOccupancy& o = d.occupancy;
    if (o.small_grid_ns == 0 || d.kernel_concurrency >= b.opt.thresholds.low_concurrency) continue;
    ns += o.small_grid_ns, spread += o.small_grid_spread_ns, kernels += o.small_grid_kernels;
    shaped += o.small_grid_shaped_ns, tiny += o.small_grid_tiny_ns;
    if (!top || o.small_grid_ns > top->occupancy.small_grid_ns) top = &d;
  }
  const double share = ratio(ns, kernel_ns);
  if (!top || share < kShare) return;
  const DeviceOccupancy& o = top->occupancy;
  Finding& f =
      b.add(share >= kCritical ? Severity::critical : Severity::warning, share, kShare, b.t.per_device(ns - spread));
  f.share = share;
  f.device = b.t.devices > 1 ? kNoDevice : top->id;
  const std::string sms(sm_words(b.p));
  f.title = count(kernels, "kernel runs", "kernels run") + " on fewer " +
            (gpu_vendor(b.p) == GpuVendor::amd ? "workgroups" : "blocks") + " than half the GPU's " + sms + ": " +
            pct1(share) + " of kernel time (" + dur(b.t.per_device(ns)) + ") with most of the GPU idle";
  f.evidence = "Heaviest: " + format::short_kernel_name(o.small_grid_top) + ", " +
               blocks_words(b.p, o.small_grid_top_blocks) + " on GPU " + std::to_string(top->id) + "'s " +
               std::to_string(top->sm_count) + " " + sms + " (GPU fill " + (o.gpu_fill ? pct1(*o.gpu_fill) : "-") +
               "); kernel concurrency " + pct1(top->kernel_concurrency) +
               ": nothing else runs beside them. Their share of kernel time " + pct1(share) + " vs a " + pct1(kShare) +
               " threshold (ours; Nsight Compute flags a grid smaller than the SM count).";
  // (Nsight Compute's rule is NVIDIA's; the same holds for a grid smaller
  // than an AMD GPU's compute units.)
  // Most of their time launched by ops on scalars and tiny tensors: per-step
  // bookkeeping, which no batch size gives more blocks.
  if (b.p.workload.framework != "unknown" && 2 * tiny >= ns) {
    small_grid_bookkeeping(b, f, ns, tiny, o.small_grid_tiny_ops);
    f.kernels = {o.small_grid_top};
    return;
  }
  // A framework sizes its kernels' grids by their tensors: the program's
  // lever is the work per launch, not the grid.
  const std::string saving =
      " Estimated saving: at most their time less what their blocks' work would take "
      "spread over every SM (" +
      dur(b.t.per_device(spread)) +
      "), a rule of thumb: blocks that each wait on memory latency gain less from more of them.";
  f.recommendation =
      b.p.workload.framework == "unknown"
          ? "Give each launch enough blocks to fill the GPU: at least as many as it has SMs, better several times "
            "that (a grid-stride loop keeps any problem size correct); for OpenACC or OpenMP offload, let the "
            "compiler choose the gangs or teams (no num_gangs()/num_teams() limit; collapse() nested loops to expose "
            "more iterations); for a library's kernel, a larger batch gives it more blocks." +
                saving
          : "The framework and its libraries size these kernels' grids by their tensors: grids this small are "
            "tensors this small, or a small batch. A larger batch per GPU gives each launch more blocks; fusing the "
            "small ops (" +
                fuser(b.p) + ") makes fewer, larger launches." +
                (2 * shaped < ns ? " Which of the two it is the trace cannot tell: the ops that launched most of "
                                   "them recorded no input shapes (torch.profiler's record_shapes=True records "
                                   "them)."
                                 : "") +
                saving;
  f.kernels = {o.small_grid_top};
}

// The saving no-tensor-cores states: half the math time. Its replay
// (--scale convolution=0.5 --scale gemm=0.5) makes only the math 2× faster;
// where the fp32 normalization and elementwise kernels hold
// kAuxLowerBoundShare of kernel time or more, mixed precision halves their
// bytes too (they are memory-bound), so the saving is a lower bound, and
// after it that work is a larger share of the step: fusing it is next.
double fp32_aux_share(const Builder& b) {
  return ratio(b.t.category[static_cast<int>(KernelCategory::normalization)] +
                   b.t.category[static_cast<int>(KernelCategory::elementwise)],
               b.t.gpu_time);
}
constexpr double kAuxLowerBoundShare = 0.10;
std::string tensor_core_saving(const Builder& b) {
  const double aux_share = fp32_aux_share(b);
  std::string said = " Estimated saving: half the math time";
  if (aux_share >= kAuxLowerBoundShare)
    said +=
        ", a lower bound: the replay makes only the convolutions and GEMMs 2× faster, while mixed precision "
        "also halves the bytes of the fp32 normalization and elementwise work (" +
        pct1(aux_share) +
        " of kernel time here), which it leaves as is. After it that memory-bound work (normalization, "
        "activations, residual adds) is a larger share of the step: fuse it (" +
        fuser(b.p) +
        (b.t.category[static_cast<int>(KernelCategory::convolution)] > 0
             ? ", or channels_last for cuDNN's fused convolution paths)"
             : ")");
  return said + ". Bundled workload: --precision bf16.";
}

namespace {
// The input channels per group of a convolution op's recorded weight.
std::int64_t stem_channels(const OpRow& r) {
  OpInputs in;
  return parse_op_inputs(r.shapes, "", "", &in) && in.dims.size() > 1 && in.dims[1].size() > 1 ? in.dims[1][1] : 0;
}

// The layout advice for convolutions: channels_last, and channel counts that
// are multiples of 8 unless the ops' recorded shapes show they are already
// (or name one that is not).
std::string conv_layout_advice(const Profile& p, const char* words) {
  TimeNs known = 0, unaligned = 0, conv = 0;
  const OpRow* first = nullptr;
  const OpRow* stem = nullptr;
  for (const OpRow& r : p.ops) {
    if (r.family != "convolution" || r.gpu_self_ns <= 0) continue;
    conv += r.gpu_self_ns;
    OpInputs in;
    if (r.name == "aten::convolution_backward" || !parse_op_inputs(r.shapes, "", "", &in)) continue;
    const std::optional<bool> aligned = conv_channels_aligned(in);
    if (!aligned) continue;
    // An image's own 3 or 4 input channels (the stem), which cuDNN pads
    // itself: aligned as tensor cores take them, but not a multiple of 8.
    if (*aligned && in.dims[1][1] % 8 != 0) stem = &r;
    known += r.gpu_self_ns;
    if (!*aligned) {
      unaligned += r.gpu_self_ns;
      if (!first) first = &r;
    }
  }
  const std::string use = std::string("; use ") + words;
  if (first)
    return use + " and make the channel counts multiples of 8 (" + first->name + " " + first->shapes + " is not; " +
           pct(ratio(unaligned, conv)) +
           " of the convolution ops' GPU time has channels that are not) so cuDNN "
           "chooses tensor-core kernels.";
  const std::string but_stem = stem ? ", but for the stem's " + std::to_string(stem_channels(*stem)) +
                                          " input channels (an image's), which cuDNN pads itself"
                                    : std::string();
  if (conv > 0 && known == conv)
    return use +
           " so cuDNN chooses tensor-core kernels (the convolutions' channel counts, as recorded, are "
           "multiples of 8 already" +
           but_stem + ").";
  if (conv > 0 && 2 * known >= conv)
    return use + " so cuDNN chooses tensor-core kernels (the channel counts are multiples of 8 already" + but_stem +
           ", in the " + pct(ratio(known, conv)) + " of the convolution ops' GPU time whose shapes the trace records).";
  // Too few shapes recorded to tell: said as a check, not as a change.
  return use + " so cuDNN and cuBLAS choose tensor-core kernels; they need channel counts that are multiples of 8, " +
         "which the trace cannot confirm (" +
         (conv > 0 ? "the convolution ops' shapes are recorded for " + pct(ratio(known, conv)) + " of their GPU time"
                   : std::string("no convolution op with recorded shapes")) +
         (p.workload.framework == "pytorch" ? ": torch.profiler's record_shapes=True shows them)." : ").");
}
}  // namespace

void no_tensor_cores(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  if (!nvidia_gpus(b.p)) return;  // another vendor's matrix units: their kernel names are not NVIDIA's
  if (const std::optional<TensorMeasure> m = measured_tensor_activity(b)) {
    const TimeNs eligible = b.t.math_ns();
    const double eligible_share = ratio(eligible, b.t.gpu_time);
    if (eligible_share < th.tensor_core_eligible_share || m->active >= th.hw_tensor_idle) return;
    Finding& f = b.add(Severity::warning, m->active, th.hw_tensor_idle, b.t.per_device(eligible) / 2);
    f.share = eligible_share;
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
    f.share = eligible_share;
    f.title = "Tensor cores idle: " + pct(tc_share) + " of the " + dur(eligible) +
              " of convolution, GEMM and attention time runs on tensor cores (" + capable->name +
              ", compute capability " + std::to_string(capable->compute_major) + "." +
              std::to_string(capable->compute_minor) + ")";
    f.evidence = "Convolutions, GEMMs and attention take " + pct1(eligible_share) +
                 " of kernel time; tensor-core kernels (names "
                 "with hmma/884/1688/16816/xmma/gmma/wmma/tensorop/nvjet, FlashAttention) take " +
                 pct1(tc_share) + " of it, vs a " + pct1(th.tensor_core_min_share) +
                 " threshold. Top: " + top_math_kernels_text(b.p, 2) + ".";
    // The layout advice is for convolutions: a run of GEMMs alone is told
    // about its dimensions only.
    const bool convolutions = b.t.category[static_cast<int>(KernelCategory::convolution)] > 0;
    const std::string saving = tensor_core_saving(b);
    // Its saving (and the replay's prediction) a lower bound: the report says so where it quotes the prediction.
    if (fp32_aux_share(b) >= kAuxLowerBoundShare) f.variant = "lower-bound";
    auto nhwc = [&](const char* words) {
      return convolutions
                 ? conv_layout_advice(b.p, words) + saving
                 : "; keep the GEMMs' dimensions multiples of 8 so cuBLAS chooses tensor-core kernels." + saving;
    };
    // Volta and Turing (7.x): tensor cores take fp16 only, neither bf16
    // nor TF32; fp16 training needs loss scaling.
    bool pre_ampere = true;
    for (const DeviceSummary& d : b.p.devices) pre_ampere = pre_ampere && d.compute_major > 0 && d.compute_major < 8;
    if (pre_ampere)
      f.recommendation = for_framework(
          b.p,
          "Train in mixed precision with fp16: torch.autocast(device_type='cuda', dtype=torch.float16) with "
          "torch.cuda.amp.GradScaler (this GPU's tensor cores take fp16, not bf16 or TF32)" +
              nhwc("channels_last"),
          "Train in mixed precision with fp16: tf.keras.mixed_precision.set_global_policy('mixed_float16') (this "
          "GPU's tensor cores take fp16, not bf16 or TF32)" +
              nhwc("data_format='channels_last'"),
          "Compute in fp16 with fp32 accumulation (this GPU's tensor cores take fp16, not bf16 or TF32; training "
          "needs loss scaling)" +
              nhwc("NHWC (channels_last)"));
    else
      f.recommendation = for_framework(
          b.p,
          "Train in mixed precision: torch.autocast with bf16/fp16 (or TF32 on Ampere and newer: "
          "torch.backends.cuda.matmul.allow_tf32 / torch.backends.cudnn.allow_tf32)" +
              nhwc("channels_last"),
          "Train in mixed precision: tf.keras.mixed_precision.set_global_policy('mixed_float16' or "
          "'mixed_bfloat16') (TF32 is on by default on Ampere and newer)" +
              nhwc("data_format='channels_last'"),
          "Train in mixed precision: torch.autocast with bf16/fp16 (or TF32 on Ampere and newer: "
          "torch.backends.cuda.matmul.allow_tf32 / torch.backends.cudnn.allow_tf32), tf.keras.mixed_precision" +
              nhwc("NHWC (channels_last)"));
    for (const Hotspot& h : b.p.hotspots)
      if (is_math(h.category) && f.kernels.size() < 5) f.kernels.push_back(h.name);
    f.ranges = b.ev.ops_by_category[static_cast<int>(KernelCategory::convolution)].ranges();
  }
}

namespace {

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
    parts.push_back({c, b.t.own(c)});
  const std::pair<KernelCategory, double> own[] = {{KernelCategory::transpose, th.transpose_share},
                                                   {KernelCategory::padding, th.padding_share},
                                                   {KernelCategory::broadcast, th.broadcast_share}};
  for (const auto& [c, threshold] : own)
    if (b.t.own_share(c) < threshold) parts.push_back({c, b.t.own(c)});  // below its own finding's threshold
  return parts;
}

// The dimensions of an op row's first recorded input ("[[8,16,128,64],[…]]"
// → 4); 0 when not recorded.
std::size_t first_input_rank(const std::string& shapes) {
  const std::size_t open = shapes.find('[', 1), close = shapes.find(']', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos || close == open + 1) return 0;
  return 1 + static_cast<std::size_t>(std::count(shapes.begin() + open, shapes.begin() + close, ','));
}

// neg/cat/mul are rotary embeddings only on attention's queries and keys:
// where aten::neg's inputs are recorded, one of 3 or more dimensions (batch,
// heads, sequence, head dim), not a loss's [1024, 1]; where they are not,
// attention in the trace (its kernels or ops).
bool rotary_shaped(const Profile& p) {
  bool recorded = false;
  for (const OpRow& r : p.ops) {
    if (r.name != "aten::neg" || r.shapes.empty()) continue;
    recorded = true;
    if (first_input_rank(r.shapes) >= 3) return true;
  }
  if (recorded) return false;
  if (p.categories.end() != std::find_if(p.categories.begin(), p.categories.end(), [](const CategoryTime& c) {
        return c.category == KernelCategory::attention && c.time_ns > 0;
      }))
    return true;
  for (const OpRow& r : p.op_names)
    if (contains_nocase(r.name, "attention") || contains_nocase(r.name, "softmax")) return true;
  return false;
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
  if (has({"neg", "cat"}) && has({"mul"}) && rotary_shaped(p))
    add("neg/cat/mul: rotary embeddings (a fused RoPE kernel)");
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
}  // namespace

void memory_bound_aux(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const std::vector<AuxPart> parts = aux_parts(b);
  TimeNs aux = 0;
  std::uint64_t launches = 0;
  const AuxPart* top = nullptr;
  for (const AuxPart& a : parts) {
    aux += a.ns;
    launches += b.t.own_count[static_cast<int>(a.category)];
    if (!top || a.ns > top->ns) top = &a;
  }
  const TimeNs math = b.t.own_math_ns();
  const double aux_share = ratio(aux, b.t.own_gpu_time);
  const double top_share = top ? ratio(top->ns, b.t.own_gpu_time) : 0.0;
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
  f.share = aux_share;
  f.title = "Memory-bound auxiliary work dominates: " + pct1(aux_share) + " " + b.t.kernel_time_words() + " (" +
            dur(aux) + ", " + count(launches) + " launches) in elementwise, copy, reduction and layout kernels" +
            (math > 0 ? ", " + fmt("%.2f", double(aux) / double(math)) + "x the math" : std::string(", and no math"));
  std::string split;
  for (const AuxPart& a : parts)
    if (a.ns > 0)
      split += (split.empty() ? "" : ", ") + std::string(to_string(a.category)) + " " + pct1(b.t.own_share(a.category));
  f.evidence =
      "By category: " + split + " " + b.t.kernel_time_words() + "; the math (convolution + GEMM + attention) " +
      pct1(ratio(math, b.t.own_gpu_time)) + "; this work fills " + pct1(ratio(aux, b.t.span)) +
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
  f.evidence += backlog_words(b);
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
bool eager_attention_fires(const Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  return b.t.of(KernelCategory::attention) == 0 && b.ev.attention_chains >= th.eager_attention_min_chains &&
         ratio(b.ev.attention_chain_ns, b.t.gpu_time) >= th.eager_attention_share;
}

void eager_attention(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  if (!eager_attention_fires(b)) return;
  const double share = ratio(b.ev.attention_chain_ns, b.t.gpu_time);
  const TimeNs between = b.ev.attention_chain_ns - b.ev.attention_chain_gemm_ns;
  // The chains' products far below their roofline (a sequence of 8 frames:
  // tiny matrices, one small product per head): a fused kernel runs them
  // near it, so their time above the threshold's is saved too.
  const SlowProducts slow = attention_products_below_roofline(b.p, th);
  const TimeNs products = std::min(slow.ns, b.ev.attention_chain_gemm_ns);
  Finding& f = b.add(share >= 3 * th.eager_attention_share ? Severity::critical : Severity::warning, share,
                     th.eager_attention_share, b.t.per_device(between + products));
  f.share = share;
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
      "Use a fused attention kernel: torch.nn.functional.scaled_dot_product_attention in the "
      "model's attention module (it picks " +
      for_vendor(b.p, "FlashAttention, memory-efficient or cuDNN attention",
                 "AOTriton's or Composable Kernel's flash or memory-efficient attention on ROCm",
                 "a flash or memory-efficient attention kernel for the GPU") +
      "; in Hugging Face Transformers, attn_implementation=\"sdpa\" where the model supports it), or " +
      for_vendor(b.p, "flash_attn", "flash_attn's ROCm build", "flash_attn") +
      ", instead of matmul + softmax + matmul; it keeps the scores on chip. Estimated saving: the "
      "kernels between the GEMMs" +
      (products > 0 ? std::string(" and the products' time above " + pct(th.roofline_min_fraction) +
                                  " of their roofline (" + dur(b.t.per_device(products)) + ")")
                    : std::string()) +
      " (an upper bound is the chains' whole " + dur(b.t.per_device(b.ev.attention_chain_ns)) + ").";
  if (products > 0)
    f.evidence += " The products themselves run far below their roofline: " + slow.top_words + " reaches " +
                  pct1(*slow.top->roofline_fraction) + " of it (" + dur(slow.top->gpu_self_ns) +
                  "); a fused kernel runs them near it, so the products' time above " + pct(th.roofline_min_fraction) +
                  " of it, " + dur(b.t.per_device(products)) + " in all, is saved too.";
  // The attention module to change, where the trace recorded Python frames.
  const LaunchedFrom from = launched_from(b.p, [](const Hotspot& h) {
    return h.category == KernelCategory::softmax_loss && contains_nocase(h.name, "softmax") &&
           !contains_nocase(h.name, "loss");
  });
  if (!from.frame.empty())
    f.recommendation += " The softmax is launched from " + from.frame + " (" + pct(from.share) + " of its time): " +
                        (from.library ? "that is the library's attention code, so the change is its SDPA option, a "
                                        "version that has one, or a patch of that module."
                                      : "the attention to replace.");
  for (const Hotspot& h : b.p.hotspots)
    if (f.kernels.size() < 5 && h.category == KernelCategory::softmax_loss && contains_nocase(h.name, "softmax"))
      f.kernels.push_back(h.name);
  f.ranges = b.ev.ops_by_category[static_cast<int>(KernelCategory::softmax_loss)].ranges();
}

}  // namespace gpuscope::detail::rules
