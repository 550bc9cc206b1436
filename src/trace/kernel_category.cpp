#include "trace/kernel_category.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

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

    // Optimizer updates (before elementwise: they are elementwise kernels).
    // PyTorch's foreach/fused optimizers run multi_tensor_apply kernels;
    // FBGEMM's embedding backward applies the optimizer in the same kernel.
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

    // Quantization and dtype packing are elementwise, before "gemm" catches fbgemm_gpu's.
    {K::elementwise, "quantize"},
    {K::elementwise, "fp8rowwise"},
    {K::elementwise, "hfp8"},
    {K::elementwise, "qparam"},
    {K::other, "fbgemm_gpu::"},  // embedding helpers; not GEMMs despite the library's name
    {K::gemm, "epilogue::"},     // cuBLASLt GEMM epilogues

    // Matrix multiplies.
    {K::gemm, "gemm"},
    {K::gemm, "gemv"},
    {K::gemm, "cutlass"},
    {K::gemm, "cublas"},
    {K::gemm, "nvjet"},
    {K::gemm, "matmul"},
    {K::gemm, "splitkreduce"},
    {K::gemm, "triton_tem_"},

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

bool contains_ci(std::string_view haystack, std::string_view lower_needle) {
  if (lower_needle.size() > haystack.size()) return false;
  auto it = std::search(haystack.begin(), haystack.end(), lower_needle.begin(), lower_needle.end(),
                        [](char h, char n) { return std::tolower(static_cast<unsigned char>(h)) == n; });
  return it != haystack.end();
}

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

}  // namespace

std::span<const CategoryRule> category_rules() { return kRules; }

KernelCategory classify_kernel(std::string_view name) {
  const std::string_view core = without_parameters(name);
  for (const CategoryRule& r : kRules)
    if (contains_ci(core, r.pattern)) return r.category;
  return KernelCategory::other;
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
  if (by_name == KernelCategory::gemm && contains_ci(op_name, "conv")) return KernelCategory::convolution;
  return by_name;
}

}  // namespace gpuscope
