// FLOPs and bytes of framework ops from their recorded shapes, and the peaks
// of the GPUs they ran on: what the op table's roofline figures are made of.
//
// [SECTION] Recorded inputs
// [SECTION] Cost of one op call
// [SECTION] Device peaks
//
// Formulas and their sources: docs/ops.md. A cost is known only when the
// shapes (and, where the output size depends on them, the scalar inputs)
// determine it; otherwise it stays unknown (std::nullopt), never a guess.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/trace.h"

namespace gpuscope {

// [SECTION] Recorded inputs -------------------------------------------------------------------

// An op's inputs as PyTorch's profiler records them with record_shapes=True:
// "Input Dims" (one shape per input, [] for scalars and lists), "Input type"
// and "Concrete Inputs" (scalar values as strings: "1", "[16, 16]", "False").
struct OpInputs {
  std::vector<std::vector<std::int64_t>> dims;
  std::vector<std::string> types;
  std::vector<std::string> concrete;
};

// Parses the three JSON texts (each may be empty: not recorded). Returns
// false when one is present but not the expected JSON (a list of lists of
// integers, a list of strings): the caller counts it and knows no cost.
bool parse_op_inputs(std::string_view dims_json, std::string_view types_json, std::string_view concrete_json,
                     OpInputs* out);

// [SECTION] Cost of one op call ----------------------------------------------------------------

enum class OpFamily : std::uint8_t {
  none = 0,  // no formula for this op
  gemm,
  convolution,
  attention,
  elementwise,
  reduction,
  normalization,
};
std::string_view to_string(OpFamily f);

enum class MathType : std::uint8_t { unknown = 0, fp64, fp32, tf32, fp16, bf16, fp8 };
std::string_view to_string(MathType m);
MathType math_type_of(std::string_view torch_type);  // "float" -> fp32, "c10::BFloat16" -> bf16, …

struct OpCost {
  OpFamily family = OpFamily::none;
  std::optional<double> flops;  // per call
  std::optional<double> bytes;  // per call: bytes read and written, each tensor once
  MathType math = MathType::unknown;
  // The dimensions the formula used, in words ("M=2048 N=768 K=3072 batch=1"), empty when unknown.
  std::string dims;
  // For GEMMs: whether every one of M, N, K is a multiple of 8 (tensor cores at full rate); for
  // convolutions: input channels per group (an image's 3 or 4 aside) and output channels.
  bool aligned8 = true;
};

// The family an op name belongs to (aten::addmm -> gemm), none if no formula.
OpFamily op_family(std::string_view op_name);
// The cost of one call of `op_name` with `inputs`.
OpCost op_cost(std::string_view op_name, const OpInputs& inputs);
// A forward convolution's channels (input [N, C, …], weight [K, C/groups,
// …]) as tensor cores want them: input channels per group (an image's 3 or
// 4 aside) and output channels multiples of 8. Null where the shapes are
// not a convolution's; the rest of its inputs (stride, groups) need not be
// recorded.
std::optional<bool> conv_channels_aligned(const OpInputs& inputs);

// [SECTION] Device peaks -----------------------------------------------------------------------

// Dense (no sparsity) peak rates of one GPU model, from its vendor datasheet.
struct DevicePeaks {
  std::string model;                                                 // "H100 SXM"
  std::string source;                                                // "NVIDIA H100 Tensor Core GPU datasheet (SXM5)"
  double fp64 = 0, fp32 = 0, tf32 = 0, fp16 = 0, bf16 = 0, fp8 = 0;  // FLOP/s; 0 = not supported
  double memory_bandwidth = 0;                                       // B/s
  double flops(MathType m) const;                                    // 0 when unknown or unsupported
};

// The table of known GPU models (V100, A100, H100, H200, B200, …).
const std::vector<DevicePeaks>& device_peak_table();
// The peaks of a device named `device_name` ("Tesla V100-SXM2-32GB", "NVIDIA H100 80GB HBM3"), or nullopt.
std::optional<DevicePeaks> peaks_for_device(std::string_view device_name);
// The device's name, or where the trace leaves it empty or generic (ROCm's
// "" or "AMD Radeon Graphics"), the model its properties identify, said to
// be inferred: "AMD Instinct MI300X (inferred: gfx942, 304 CUs)". Only
// properties that one model alone has give a name.
std::string device_model_name(const Device& d);

}  // namespace gpuscope
