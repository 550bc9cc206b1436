// Name recognisers the analysis needs beyond kernel categories: tensor-core
// kernels, data-loading ranges, copy names; and the Profile enums' names.
#include <algorithm>
#include <cctype>
#include <string>

#include "analysis/analyze.h"
#include "analysis/detail/context.h"

namespace gpuscope {

namespace {

// Fragments that mark tensor-core math in cuDNN/cuBLAS/CUTLASS kernel names:
// Volta/Turing HMMA tiles (h884, h1688, s884, i8816), Ampere (16816, s1688
// for TF32, xmma), Hopper (gmma, wgmma, sm90 xmma, nvjet), the WMMA API
// (CUTLASS's tensorop: cutlass_tensor_op below); fused attention that runs
// only on tensor cores (FlashAttention 1-3 and cuDNN's flash engines take
// fp16/bf16 only) or whose name gives a half type (memory-efficient
// fmha_cutlassF_f16/bf16; its f32 variants use the FP32 pipes). Not "mma"
// alone ("gammabetabackward"), not "sm80_" alone.
// Lower-case; matched case-insensitively.
constexpr std::string_view kTensorCoreFragments[] = {
    "hmma",
    "imma",
    "gmma",
    "wgmma",
    "xmma",
    "h884",
    "h1688",
    "s884",
    "s1688",
    "i8816",
    "i16832",
    "16816",
    "1688gemm",
    "884gemm",
    "nvjet",
    "bf16s1688",
    "tf32",
    "sm90_",
    "sm80_xmma",
    "cutlass_80_tensorop",
    "ampere_fp16",
    "ampere_bf16",
    "turing_fp16",
    "wmma",
    "flash_fwd",
    "flash_bwd",
    "flash::",
    "flashattn",
    "flash_attn",
    "_flash_",
    "fmha_v2",
    "fmha_cutlassf_f16",
    "fmha_cutlassf_bf16",
    "fmha_cutlassb_f16",
    "fmha_cutlassb_bf16",
    "fmhasm",   // TensorRT-LLM / FlashInfer fused attention for one architecture (fmhaSm90…, fmhaSm100a…)
    "tcgen05",  // Blackwell's tensor-core instructions
};

// Element types only tensor cores multiply: FP8 (e4m3, e5m2), FP4 (e2m1),
// the MX block-scaled formats and their scale type (ue8m0).
constexpr std::string_view kTensorCoreOnlyTypes[] = {"e4m3", "e5m2", "e2m1", "ue8m0", "mxf8", "mxf4", "mxfp", "nvfp4"};

// CUTLASS's tensor-core operator class: "tensorop" as a word of a
// snake_case name (cutlass_tensorop_s1688gemm_…, cutlass_80_tensorop_…,
// tensor_op), or inside a CamelCase type of a name that is CUTLASS's
// (cutlass::arch::OpClassTensorOp, MmaTensorOp, TensorOpMultiplicand). Not
// the end of another library's word: MIOpen's SubTensorOpWithScalar1d is an
// elementwise operation on tensors.
bool cutlass_tensor_op(std::string_view name) {
  for (std::string_view w : {"tensorop", "tensor_op"}) {
    if (!contains_nocase(name, w)) continue;  // the common case: one search, as for any fragment
    if (contains_nocase(name, "cutlass")) return true;
    for (std::size_t i = 0; i + w.size() <= name.size(); ++i)
      if ((i == 0 || !std::isalpha(static_cast<unsigned char>(name[i - 1]))) &&
          contains_nocase(name.substr(i, w.size()), w))
        return true;
  }
  return false;
}

}  // namespace

bool is_tensor_core_kernel(std::string_view name, KernelCategory category) {
  // A copy or a collective does no matrix math, whatever its name holds
  // (vLLM's reshape_and_cache_flash_kernel writes the KV cache).
  if (category == KernelCategory::memory || category == KernelCategory::communication) return false;
  for (std::string_view f : kTensorCoreFragments)
    if (contains_nocase(name, f)) return true;
  if (cutlass_tensor_op(name)) return true;
  if (category == KernelCategory::gemm || category == KernelCategory::convolution ||
      category == KernelCategory::attention)
    for (std::string_view f : kTensorCoreOnlyTypes)
      // A matrix-vector product may widen its FP8 weights and run on the CUDA cores.
      if (contains_nocase(name, f) && !contains_nocase(name, "gemv")) return true;
  return false;
}

bool is_amd_matrix_core_kernel(std::string_view name) {
  // MIOpen's implicit-GEMM convolutions for the matrix cores are "gtcx"
  // (igemm_fwd_gtcx2_nhwc_bf16_…: xdlops; "gtc" alone runs without them).
  for (std::string_view f : {"mfma", "wmma", "gemm_xdl", "gemmxdl", "_xdl_", "xdlops", "_gtcx"})
    if (contains_nocase(name, f)) return true;
  // Tensile's matrix-instruction tile: "_MI" and a digit ("_MI16x16x1_").
  for (std::size_t i = name.find("_MI"); i != std::string_view::npos; i = name.find("_MI", i + 1))
    if (i + 3 < name.size() && std::isdigit(static_cast<unsigned char>(name[i + 3]))) return true;
  // Fused attention for AMD's GPUs multiplies on the matrix cores: AOTriton's
  // (PyTorch-ROCm's flash attention for SDPA: attn_fwd, its backward's
  // bwd_kernel_dk_dv and bwd_kernel_dq, Triton's tl.dot on MFMA), Composable
  // Kernel's and AITER's (ck_tile::FmhaFwdKernel, fmha_fwd_…, fmha_bwd_…).
  // Their names do not say their element type.
  for (std::string_view f :
       {"attn_fwd", "attn_bwd", "bwd_kernel_dk_dv", "bwd_kernel_dq", "fmhafwd", "fmhabwd", "fmha_fwd", "fmha_bwd"})
    if (contains_nocase(name, f)) return true;
  return false;
}

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::critical: return "critical";
  }
  return "info";
}

std::string_view to_string(StepSource s) {
  switch (s) {
    case StepSource::nvtx: return "nvtx";
    case StepSource::profiler_step: return "profiler_step";
    case StepSource::pattern: return "pattern";
    case StepSource::bursts: return "bursts";
    case StepSource::none: break;
  }
  return "none";
}

std::string_view to_string(SavingSource s) { return s == SavingSource::simulated ? "simulated" : "rule_of_thumb"; }

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::yes: return "yes";
    case Verdict::no: return "no";
    case Verdict::unknown: return "unknown";
    case Verdict::not_applicable: return "not_applicable";
    case Verdict::later: return "later";
  }
  return "unknown";
}

bool parse_severity(std::string_view s, Severity* out) {
  for (Severity v : {Severity::info, Severity::warning, Severity::critical})
    if (to_string(v) == s) return *out = v, true;
  return false;
}

bool parse_step_source(std::string_view s, StepSource* out) {
  for (StepSource v :
       {StepSource::none, StepSource::nvtx, StepSource::profiler_step, StepSource::pattern, StepSource::bursts})
    if (to_string(v) == s) return *out = v, true;
  return false;
}

namespace detail {

bool is_start_api(std::string_view n) {
  for (std::string_view p :
       {"cuInit", "cuCtxCreate", "cuDevicePrimaryCtxRetain", "cuModuleLoad", "cuLibraryLoad", "hipModuleLoad"})
    if (n.starts_with(p)) return true;
  return false;
}

bool is_setup_api(std::string_view n) {
  if (is_start_api(n)) return true;
  for (std::string_view p : {"cudaStreamCreate", "cuStreamCreate", "hipStreamCreate", "cudnnCreate", "cublasCreate",
                             "cublasLtCreate", "hipblasCreate", "miopenCreate"})
    if (n.starts_with(p)) return true;
  return false;
}

namespace {
// ASCII lower case (what contains_nocase compares in), once per name: each
// pattern is then one find() over it.
std::string ascii_lower(std::string_view name) {
  std::string lower(name);
  for (char& c : lower)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
  return lower;
}
bool has_any(std::string_view lower, std::initializer_list<std::string_view> parts) {
  return std::any_of(parts.begin(), parts.end(),
                     [&](std::string_view f) { return lower.find(f) != std::string_view::npos; });
}
bool input_range_lower(std::string_view lower) {
  // PyTorch: "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
  // TensorFlow: "IteratorGetNext"; NVTX ranges of hand-written loops.
  if (has_any(lower, {"dataloader", "data_loader", "data loader", "data_load", "data load", "load_batch", "load batch",
                      "next_batch", "next batch", "iteratorgetnext", "input_pipeline", "input pipeline", "data_wait",
                      "wait_for_data"}))
    return true;
  for (std::string_view exact : {"data", "input", "load", "batch", "load data", "data loading", "prefetch"})
    if (lower == exact) return true;
  return false;
}
}  // namespace

bool is_input_range_name(std::string_view name) { return input_range_lower(ascii_lower(name)); }

bool is_data_loading_frame(std::string_view name) {
  const std::string lower = ascii_lower(name);
  return input_range_lower(lower) || has_any(lower, {"torch/utils/data", "collate", "fetch", "dataset", "tokeniz",
                                                     "imread", "imdecode", "decode_jpeg", "decode_image", ".read",
                                                     "read(", "readinto", "load", "npyio", "pil/", "image.open"});
}

}  // namespace detail

}  // namespace gpuscope
