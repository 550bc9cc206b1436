#include "trace/kernel_category.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpuscope {

namespace {

using K = KernelCategory;

// Order matters: first match wins. Keep specific before generic.
constexpr CategoryRule kRules[] = {
    // Communication first: NCCL kernel names contain "reduce", "copy", …
    {K::communication, "nccl"},
    {K::communication, "rccl"},
    {K::communication, "nvshmem"},
    {K::communication, "cross_device_reduce"},
    {K::communication, "all_reduce"},
    {K::communication, "allreduce"},
    {K::communication, "allgather"},
    {K::communication, "reducescatter"},

    // Copies and fills done by the copy engines or as kernels.
    {K::memory, "memcpy"},
    {K::memory, "memset"},

    // The report's pathologies: explicit padding and broadcasting (Eigen names
    // them in template arguments of EigenMetaKernel).
    {K::padding, "tensorpaddingop"},
    {K::padding, "padinput"},
    {K::padding, "reflection_pad"},
    {K::padding, "replication_pad"},
    {K::padding, "constant_pad"},
    {K::padding, "pad_kernel"},
    {K::padding, "pad_nchw"},
    {K::padding, "pad_nhwc"},
    {K::broadcast, "tensorbroadcastingop"},
    {K::broadcast, "broadcast"},

    // CUTLASS's convolutions in cuDNN (cutlass_cudnn_train…ImplicitGemmConvolution),
    // whose template arguments can say "NoPermute": before the layout changes.
    {K::convolution, "implicitgemmconvolution"},

    // Layout changes.
    {K::transpose, "transpose"},
    {K::transpose, "tensorshufflingop"},
    {K::transpose, "swapdimension"},
    {K::transpose, "shuffleintensor3"},
    {K::transpose, "nchwtonhwc"},
    {K::transpose, "nhwctonchw"},
    {K::transpose, "nchw2nhwc"},
    {K::transpose, "nhwc2nchw"},
    {K::transpose, "permute"},

    // FBGEMM's table-batched embedding backward
    // (split_embedding_backward_codegen_rowwise_adagrad_…) applies the
    // optimizer inside the backward kernel: it runs in the backward pass, no
    // weight update of its own to overlap, so not an optimizer kernel.
    {K::other, "embedding_backward"},
    {K::other, "embedding_nobag_backward"},

    // Optimizer updates (before elementwise: they are elementwise kernels).
    // PyTorch's foreach/fused optimizers run multi_tensor_apply kernels.
    {K::optimizer, "multi_tensor_apply"},
    {K::optimizer, "adagrad"},
    {K::optimizer, "sgd"},
    {K::optimizer, "momentum"},
    {K::optimizer, "adam"},
    {K::optimizer, "lamb_"},  // not "lamb": every C++ lambda would match
    {K::optimizer, "applygradientdescent"},
    {K::optimizer, "optimizer"},

    // Normalization.
    {K::normalization, "batchnorm"},
    {K::normalization, "batch_norm"},
    {K::normalization, "bn_fw"},
    {K::normalization, "bn_bw"},
    {K::normalization, "bn_forward"},
    {K::normalization, "bn_backward"},
    {K::normalization, "bn_naive"},  // the bundled workload's batch norm variants
    {K::normalization, "bn_fused"},
    {K::normalization, "bn_nhwc"},
    {K::normalization, "bn_nchw"},
    {K::normalization, "bn_stats"},
    {K::normalization, "bn_apply"},
    {K::normalization, "layernorm"},
    {K::normalization, "layer_norm"},
    {K::normalization, "groupnorm"},
    {K::normalization, "group_norm"},
    {K::normalization, "instance_norm"},
    {K::normalization, "rmsnorm"},
    {K::normalization, "rms_norm"},
    {K::normalization, "welford"},
    {K::normalization, "rowwisemoments"},  // ATen group/layer norm statistics
    {K::normalization, "gammabetabackward"},
    {K::normalization, "computefusedparams"},

    // Writes into a serving engine's KV cache (vLLM's reshape_and_cache_flash,
    // concat_and_cache_mla): copies, before "_flash_" below.
    {K::memory, "reshape_and_cache"},
    {K::memory, "concat_and_cache"},

    // Fused attention, before "fprop" (cuDNN's SDPA engines are fprop/bprop
    // kernels), "cutlass" and "gemm" (FlashAttention and xFormers are CUTLASS
    // kernels) and "softmax" (their names mention the softmax they fuse).
    {K::attention, "flash_fwd"},
    {K::attention, "flash_bwd"},
    {K::attention, "flashattn"},
    {K::attention, "flash_attn"},
    {K::attention, "flash::"},
    {K::attention, "fmha"},  // xFormers/PyTorch memory-efficient (fmha_cutlassF_*), TensorRT/cuDNN fmha_v2
    {K::attention, "attention"},
    {K::attention, "mem_eff"},
    {K::attention, "sdpa"},
    {K::attention, "_flash_"},   // cuDNN's flash fprop/bprop engines (cudnn_generated_*_flash_*)
    {K::attention, "attn_fwd"},  // Triton's and AITER's attention kernels (attn_fwd, _attn_fwd, attn_bwd)
    {K::attention, "attn_bwd"},
    {K::attention, "sage_fwd"},          // SageAttention's kernel as AITER builds it
    {K::attention, "qk_int_sv_"},        // SageAttention's CUDA kernels (qk_int_sv_f8_attn_kernel: int8 QK, fp8 SV)
    {K::attention, "withkvcache"},       // FlashInfer's SinglePrefillWithKVCacheKernel, SingleDecodeWith…
    {K::attention, "withpagedkvcache"},  // FlashInfer's BatchPrefillWithPagedKVCacheKernel, BatchDecodeWith…

    // Convolutions (cuDNN, CUTLASS conv, im2col) before GEMM: cuDNN's
    // implicit-GEMM convolutions carry "gemm" in their names too.
    {K::convolution, "conv"},
    {K::convolution, "scudnn"},
    {K::convolution, "cudnn::detail::implicit"},
    {K::convolution, "precomputed_convolve"},
    {K::convolution, "fprop"},
    {K::convolution, "dgrad"},
    {K::convolution, "wgrad"},
    {K::convolution, "winograd"},
    {K::convolution, "im2col"},
    {K::convolution, "col2im"},
    {K::convolution, "fft2d_"},      // cuDNN's FFT convolution algorithms
    {K::convolution, "cask_cudnn"},  // cuDNN's convolution set-up kernels (computeOffsetsKernel)
    // MIOpen's implicit-GEMM convolutions, one per direction: forward, backward
    // data, backward weights (igemm_fwd_gtcx2_nhwc_bf16_…, igemm_wrw_gtc…).
    {K::convolution, "igemm_fwd_"},
    {K::convolution, "igemm_bwd_"},
    {K::convolution, "igemm_wrw_"},

    // Quantization and dtype packing are elementwise, before "gemm" catches fbgemm_gpu's.
    {K::elementwise, "quantize"},
    {K::elementwise, "fp8rowwise"},
    {K::elementwise, "hfp8"},
    {K::elementwise, "qparam"},
    {K::elementwise, "sage_quant"},  // SageAttention's quantization of Q and K
    {K::other, "fbgemm_gpu::"},      // embedding helpers; not GEMMs despite the library's name
    {K::gemm, "epilogue::"},         // cuBLASLt GEMM epilogues (not "epilogue": ATen's SoftMaxForwardEpilogue)

    // Matrix multiplies.
    // Batched and grouped GEMMs (gemmBatched, gemm_batched, strided_batched
    // and GroupedGemm carry "gemm"; bmm and "grouped" kernels do not), all
    // before "bias": a GEMM with a bias epilogue is a GEMM.
    {K::gemm, "gemm"},
    {K::gemm, "gemv"},
    {K::gemm, "bmm"},
    {K::gemm, "strided_batched"},
    {K::gemm, "grouped_mm"},
    {K::gemm, "cutlass"},
    {K::gemm, "cublas"},
    {K::gemm, "nvjet"},
    {K::gemm, "matmul"},
    {K::gemm, "splitkreduce"},
    {K::gemm, "triton_tem_"},
    {K::gemm, "cijk_"},  // Tensile's (rocBLAS, hipBLASLt) GEMMs: Cijk_Ailk_Bljk_…, with "Bias" epilogues

    // Loss and softmax.
    {K::softmax_loss, "softmax"},
    {K::softmax_loss, "cross_entropy"},
    {K::softmax_loss, "crossentropy"},
    {K::softmax_loss, "nll_loss"},
    {K::softmax_loss, "nllcriterion"},
    {K::softmax_loss, "loss"},

    // Pooling.
    {K::pooling, "pool"},

    // Reductions.
    {K::reduction, "reduce"},
    {K::reduction, "reduction"},
    {K::reduction, "triton_red_"},
    {K::reduction, "triton_per_"},
    {K::reduction, "argmax"},
    {K::reduction, "argmin"},

    // Copies as kernels (concatenation, dtype casts through copy_).
    {K::memory, "catarraybatchedcopy"},
    {K::memory, "copy_kernel"},

    // Everything pointwise.
    {K::elementwise, "elementwise"},
    {K::elementwise, "cwise"},
    {K::elementwise, "eigenmetakernel"},
    {K::elementwise, "triton_poi_"},
    {K::elementwise, "relu"},
    {K::elementwise, "threshold"},
    {K::elementwise, "activation"},
    {K::elementwise, "dropout"},
    {K::elementwise, "sigmoid"},
    {K::elementwise, "tanh"},
    {K::elementwise, "gelu"},
    {K::elementwise, "silu"},
    {K::elementwise, "fill"},
    {K::elementwise, "residual_add"},
    {K::elementwise, "add_kernel"},
    {K::elementwise, "mul_kernel"},
    {K::elementwise, "scalepackedtensor"},  // cuDNN's tensor scaling
    {K::elementwise, "upsample"},
    {K::elementwise, "bias"},  // bias adds that are not broadcasts (broadcast_bias_kernel is caught above)
    {K::elementwise, "scale_kernel"},
    {K::elementwise, "scal_kernel"},  // cuBLAS scal
    {K::elementwise, "augment"},      // data augmentation on the GPU (crop, flip)
    {K::elementwise, "cast"},         // dtype casts (after "broadcast" above)
};

// The name without its parameter list: "f<T>(cublasTransposeParams<float>)"
// must not read as a transpose. The parameter list is the balanced "( … )"
// that ends the name; "(anonymous namespace)" inside the name stays.
std::string_view without_parameters(std::string_view name) {
  if (name.empty() || name.back() != ')') return name;
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')')
      ++depth;
    else if (name[i] == '(' && --depth == 0)
      return i > 0 ? name.substr(0, i) : name;
  }
  return name;
}

// [SECTION] Template arguments: Eigen reductions that are per-channel statistics

// The balanced "< … >" argument list that starts at s[open] == '<', split at
// its top-level commas, each argument trimmed; empty when unbalanced.
std::vector<std::string_view> template_args(std::string_view s, std::size_t open) {
  std::vector<std::string_view> args;
  int depth = 0;
  std::size_t from = open + 1;
  auto push = [&](std::size_t to) {
    std::string_view a = s.substr(from, to - from);
    while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
    while (!a.empty() && a.back() == ' ') a.remove_suffix(1);
    args.push_back(a);
  };
  for (std::size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(') {
      ++depth;
    } else if (c == '>' || c == ')') {
      if (--depth == 0) {
        push(i);
        return args;
      }
    } else if (c == ',' && depth == 1) {
      push(i);
      from = i + 1;
    }
  }
  return {};
}

// The leading unsigned number of `s` ("3ul" -> 3), or -1.
int leading_number(std::string_view s) {
  int n = -1;
  for (char c : s) {
    if (c < '0' || c > '9') break;
    n = (n < 0 ? 0 : n * 10) + (c - '0');
    if (n > 1000) return -1;
  }
  return n;
}

// Eigen::TensorReductionOp<Reducer, Dims, Expr>: which dimensions it reduces
// (when the type says: IndexList<type2index<0l>, …>), how many (array<long,
// 3ul>, DSizes<long, 3>), and the rank of the tensor it reads (the first
// Tensor<T, rank, …> of Expr).
struct EigenReduction {
  std::vector<int> dims;  // empty when the type gives only their number
  int reduced = -1;
  int rank = -1;
};

std::optional<EigenReduction> eigen_reduction(std::string_view core) {
  constexpr std::string_view kOp = "TensorReductionOp<";
  const std::size_t at = core.find(kOp);
  if (at == std::string_view::npos) return std::nullopt;
  const std::vector<std::string_view> args = template_args(core, at + kOp.size() - 1);
  if (args.size() < 3) return std::nullopt;
  EigenReduction r;
  const std::string_view dims = args[1];
  if (const std::size_t il = dims.find("IndexList<"); il != std::string_view::npos) {
    for (std::string_view d : template_args(dims, il + std::string_view("IndexList").size())) {
      const std::size_t t2i = d.find("type2index<");
      if (t2i == std::string_view::npos) return std::nullopt;  // a dimension known only at run time
      const int v = leading_number(d.substr(t2i + std::string_view("type2index<").size()));
      if (v < 0) return std::nullopt;
      r.dims.push_back(v);
    }
    r.reduced = static_cast<int>(r.dims.size());
  } else if (const std::size_t lt = dims.find('<');
             lt != std::string_view::npos &&
             (dims.find("array<") != std::string_view::npos || dims.find("DSizes<") != std::string_view::npos)) {
    const std::vector<std::string_view> a = template_args(dims, lt);
    if (a.size() != 2) return std::nullopt;
    r.reduced = leading_number(a[1]);
  }
  if (const std::size_t t = args[2].find("Tensor<"); t != std::string_view::npos) {
    const std::vector<std::string_view> a = template_args(args[2], t + std::string_view("Tensor").size());
    if (a.size() >= 2) r.rank = leading_number(a[1]);
  }
  return r;
}

// A reduction over every dimension of a 4-D tensor but one is a per-channel
// statistic: batch-norm mean and variance computed as generic reductions.
// {0, 2, 3} is the channel of an NCHW tensor; when the type gives only the
// number of reduced dimensions the layout is not known.
std::optional<std::string> per_channel_statistic(std::string_view core) {
  const std::optional<EigenReduction> r = eigen_reduction(core);
  if (!r || r->rank != 4 || r->reduced != 3) return std::nullopt;
  if (r->dims.empty()) return std::string("template arguments: reduction over 3 of the 4 dimensions");
  if (r->dims == std::vector<int>{0, 2, 3})
    return std::string("template arguments: reduction over {0,2,3} (per-channel statistics of an NCHW tensor)");
  if (r->dims == std::vector<int>{0, 1, 2})
    return std::string("template arguments: reduction over {0,1,2} (per-channel statistics of an NHWC tensor)");
  return std::nullopt;
}

// [SECTION] Inductor's fused kernels: what the op list in the name may decide

// TorchInductor names a Triton kernel it generates after the graph's ops it
// fused: triton_<kind>_fused_<op>_<op>…_<n>, kind poi (pointwise), red
// (reduction), per (persistent reduction) or tem (a template: a GEMM or a
// convolution). The list says what the graph did around the kernel, not what
// the kernel does: a pointwise kernel that fuses a bias add, a GELU and the
// transposed view of its output is elementwise. So the layout rules
// (transpose, padding, broadcast) read the list only when every op in it
// moves data and computes nothing; and a poi/red/per kernel is never a GEMM,
// a convolution or an attention kernel, whatever ops it fused around one:
// Inductor runs those as library calls or templates.
struct InductorKernel {
  bool fused = false;                   // triton_{poi,red,per,tem}_fused_…
  bool data_movement = false;           // every op of the list moves data only
  bool pointwise_or_reduction = false;  // poi, red, per
};

// ATen ops that move, view, copy or pad data and compute nothing, as
// Inductor spells them in a kernel's name (no "aten." prefix).
constexpr std::string_view kDataMovementOps[] = {"transpose",
                                                 "permute",
                                                 "t",
                                                 "view",
                                                 "_unsafe_view",
                                                 "reshape",
                                                 "_reshape_alias",
                                                 "expand",
                                                 "clone",
                                                 "contiguous",
                                                 "copy",
                                                 "_to_copy",
                                                 "cat",
                                                 "stack",
                                                 "squeeze",
                                                 "unsqueeze",
                                                 "select",
                                                 "slice",
                                                 "unbind",
                                                 "split",
                                                 "split_with_sizes",
                                                 "as_strided",
                                                 "alias",
                                                 "narrow",
                                                 "flatten",
                                                 "unflatten",
                                                 "movedim",
                                                 "empty",
                                                 "empty_like",
                                                 "new_empty",
                                                 "constant_pad_nd",
                                                 "detach",
                                                 "lift_fresh"};

// Whether every op of the list `ops` ("_to_copy_transpose_view_31": ops
// joined by '_', then the kernel's number) is a data-movement op; an op
// that is not one of them (add, mul, mean, gelu, rsqrt, …) makes it false.
bool moves_data_only(std::string_view ops) {
  bool any = false;
  while (!ops.empty() && !std::isdigit(static_cast<unsigned char>(ops.front()))) {
    std::size_t longest = 0;  // the longest op that starts here and ends at '_': split_with_sizes, not split
    for (std::string_view op : kDataMovementOps)
      if (ops.starts_with(op) && (ops.size() == op.size() || ops[op.size()] == '_'))
        longest = std::max(longest, op.size());
    if (longest == 0) return false;
    any = true;
    ops.remove_prefix(std::min(ops.size(), longest + 1));
  }
  return any;
}

InductorKernel inductor_kernel(std::string_view lowered) {
  InductorKernel k;
  constexpr std::string_view kTriton = "triton_", kFused = "_fused_";  // triton_<kind>_fused_
  if (lowered.size() < kTriton.size() + 3 + kFused.size() || !lowered.starts_with(kTriton) ||
      lowered.substr(kTriton.size() + 3, kFused.size()) != kFused)
    return k;
  const std::string_view kind = lowered.substr(kTriton.size(), 3);
  if (kind != "poi" && kind != "red" && kind != "per" && kind != "tem") return k;
  k.fused = true;
  k.pointwise_or_reduction = kind != "tem";
  k.data_movement = moves_data_only(lowered.substr(kTriton.size() + 3 + kFused.size()));
  return k;
}

// Whether a rule of category `c` may read the name of kernel `k`.
bool rule_applies(KernelCategory c, const InductorKernel& k) {
  if (!k.fused) return true;
  if ((c == K::transpose || c == K::padding || c == K::broadcast) && !k.data_movement) return false;
  return !(k.pointwise_or_reduction && (c == K::gemm || c == K::convolution || c == K::attention));
}

}  // namespace

std::span<const CategoryRule> category_rules() { return kRules; }

// The template-argument rule comes first: an Eigen reduction's name holds the
// ops it reads (TensorBroadcastingOp, TensorCwiseBinaryOp) that the pattern
// table would take for the kernel's own.
//
// Only the first kClassifiedBytes of a name are read: a name longer than any
// real one (a hostile file's) costs no more than that per rule.
constexpr std::size_t kClassifiedBytes = 8192;  // the longest real kernel name in tests/data/traces: 5,123

// A name in lower case, searched with memmem (linear whatever the name holds,
// where a byte-by-byte search of a name like "xxxx…" against a pattern
// starting with "x" steps back at every byte).
// The name in lower case, with CUTLASS's number types blanked out: a kernel
// that takes cutlass::bfloat16_t (a MoE finalize, a norm) is not thereby a
// CUTLASS GEMM; the "cutlass" rule is for CUTLASS's kernels themselves.
class LoweredName {
 public:
  explicit LoweredName(std::string_view s) : text_(s) {
    for (char& c : text_)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
    static constexpr std::string_view kTypes[] = {"half_t",  "bfloat16_t", "tfloat32_t", "float_e", "float_ue",
                                                  "int4b_t", "uint4b_t",   "complex<",   "array<",  "alignedarray<"};
    constexpr std::string_view ns = "cutlass::";
    for (std::size_t at = text_.find(ns); at != std::string::npos; at = text_.find(ns, at + 1)) {
      const std::string_view rest = std::string_view(text_).substr(at + ns.size());
      for (std::string_view t : kTypes)
        if (rest.starts_with(t)) {
          text_.replace(at, ns.size(), ns.size(), ' ');
          break;
        }
    }
  }
  bool contains(std::string_view lower_needle) const {
    return lower_needle.empty() || ::memmem(text_.data(), text_.size(), lower_needle.data(), lower_needle.size());
  }
  std::string_view text() const { return text_; }

 private:
  std::string text_;
};

namespace {
// The first rule of the table that reads this name and finds its pattern.
const CategoryRule* first_rule(const LoweredName& lowered) {
  const InductorKernel inductor = inductor_kernel(lowered.text());
  for (const CategoryRule& r : kRules)
    if (lowered.contains(r.pattern) && rule_applies(r.category, inductor)) return &r;
  return nullptr;
}
}  // namespace

KernelCategory classify_kernel(std::string_view name) {
  const std::string_view core = without_parameters(name).substr(0, kClassifiedBytes);
  if (per_channel_statistic(core)) return KernelCategory::normalization;
  const CategoryRule* r = first_rule(LoweredName(core));
  return r ? r->category : KernelCategory::other;
}

std::string category_rule_text(std::string_view name, KernelCategory placed) {
  const std::string_view core = without_parameters(name).substr(0, kClassifiedBytes);
  std::optional<std::string> stat = per_channel_statistic(core);
  // The table is searched once: the rule that placed the name is the one to name.
  const CategoryRule* rule = stat ? nullptr : first_rule(LoweredName(core));
  const KernelCategory by_name = stat ? KernelCategory::normalization : rule ? rule->category : KernelCategory::other;
  if (placed != by_name) switch (placed) {
      case KernelCategory::memory: return "launching op: a multi-tensor copy (_foreach_copy_)";
      case KernelCategory::padding: return "launching op: inside a pad op (aten::constant_pad_nd, aten::pad)";
      case KernelCategory::transpose:
        return "launching op: inside a layout copy (aten::contiguous, aten::reshape of a view that is not "
               "contiguous)";
      default: return "launching op: a convolution op (\"conv\" in its name)";
    }
  if (stat) return *std::move(stat);
  if (rule) return "name: " + std::string(rule->pattern);
  return "no rule (other)";
}

bool parse_category(std::string_view s, KernelCategory* out) {
  for (int i = 0; i < kKernelCategoryCount; ++i) {
    const auto c = static_cast<KernelCategory>(i);
    if (to_string(c) == s) {
      *out = c;
      return true;
    }
  }
  return false;
}

KernelCategory classify_by_op(std::string_view op_name, KernelCategory by_name) {
  if (by_name == KernelCategory::gemm && contains_nocase(op_name, "conv")) return KernelCategory::convolution;
  // A multi-tensor kernel that copies (torch._foreach_copy_: CUDA-graph
  // inputs, EMA snapshots) moves memory; it updates no weights.
  if (by_name == KernelCategory::optimizer && op_name.find("_foreach_copy") != std::string_view::npos)
    return KernelCategory::memory;
  return by_name;
}

bool is_pad_op(std::string_view n) {
  return n == "aten::constant_pad_nd" || n == "aten::pad" || n.starts_with("aten::reflection_pad") ||
         n.starts_with("aten::replication_pad") || n == "aten::_pad_circular";
}

bool is_layout_copy_op(std::string_view n) { return n == "aten::contiguous" || n == "aten::reshape"; }

// Kernel names run to hundreds of bytes (C++ templates) and every name is
// tried against every pattern, so the search looks at 16 starting places at
// a time: a place is a candidate when its byte and the next one equal the
// needle's first two with bit 0x20 set on both sides (which folds A-Z onto
// a-z and lets no match through unnoticed; the few other bytes it folds are
// weeded out by the exact check after it).
bool contains_nocase(std::string_view haystack, std::string_view lower_needle) {
  const std::size_t n = lower_needle.size();
  if (n == 0) return true;
  if (n > haystack.size()) return false;
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; };
  const char* h = haystack.data();
  auto matches_at = [&](std::size_t i) {
    std::size_t k = 0;
    while (k < n && lower(h[i + k]) == lower_needle[k]) ++k;
    return k == n;
  };
  const std::size_t last = haystack.size() - n;  // the last place a match can start
  std::size_t i = 0;
#if defined(__SSE2__)
  if (n >= 2) {
    const __m128i fold = _mm_set1_epi8(0x20);
    const __m128i first = _mm_set1_epi8(static_cast<char>(lower_needle[0] | 0x20));
    const __m128i second = _mm_set1_epi8(static_cast<char>(lower_needle[1] | 0x20));
    for (; i + 16 <= last; i += 16) {  // places i .. i + 15, all before `last`; bytes read up to i + 16 < size
      const __m128i a = _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i)), fold);
      const __m128i b = _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i + 1)), fold);
      auto mask =
          static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, second))));
      for (; mask; mask &= mask - 1)
        if (matches_at(i + static_cast<std::size_t>(__builtin_ctz(mask)))) return true;
    }
  }
#endif
  for (; i <= last; ++i)
    if (lower(h[i]) == lower_needle[0] && matches_at(i)) return true;
  return false;
}

}  // namespace gpuscope
