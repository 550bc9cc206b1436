// FLOP and byte formulas against hand-computed cases, one or more per op
// family, and the device peak table.
#include "analysis/ops/roofline.h"

#include <gtest/gtest.h>

namespace gpuscope {
namespace {

OpCost cost(std::string_view op, std::string_view dims, std::string_view types, std::string_view concrete = "") {
  OpInputs in;
  EXPECT_TRUE(parse_op_inputs(dims, types, concrete, &in)) << dims;
  return op_cost(op, in);
}

TEST(Gemm, MmIsTwoMNK) {
  const OpCost c = cost("aten::mm", "[[64,128],[128,32]]", R"(["float","float"])");
  EXPECT_EQ(c.family, OpFamily::gemm);
  EXPECT_EQ(c.math, MathType::fp32);
  ASSERT_TRUE(c.flops && c.bytes);
  EXPECT_DOUBLE_EQ(*c.flops, 2.0 * 64 * 32 * 128);
  EXPECT_DOUBLE_EQ(*c.bytes, (64 * 128 + 128 * 32 + 64 * 32) * 4.0);
  EXPECT_TRUE(c.aligned8);
}

TEST(Gemm, AddmmReadsTheBiasToo) {
  const OpCost c =
      cost("aten::addmm", "[[32],[64,128],[128,32],[],[]]",
           R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"])", R"(["","","","1","1"])");
  ASSERT_TRUE(c.flops && c.bytes);
  EXPECT_DOUBLE_EQ(*c.flops, 524288);
  EXPECT_DOUBLE_EQ(*c.bytes, 28672 + 64);
  EXPECT_EQ(c.math, MathType::bf16);
}

TEST(Gemm, BatchedProducts) {
  const OpCost c = cost("aten::bmm", "[[4,8,16],[4,16,2]]", R"(["c10::Half","c10::Half"])");
  ASSERT_TRUE(c.flops && c.bytes);
  EXPECT_DOUBLE_EQ(*c.flops, 2.0 * 4 * 8 * 2 * 16);
  EXPECT_DOUBLE_EQ(*c.bytes, 4 * (128 + 32 + 16) * 2.0);
  EXPECT_FALSE(c.aligned8);  // N = 2
}

// aten::linear's weight is [N, K], used transposed: the same product as the
// addmm it calls (timesformer's qkv projection, from the real trace).
TEST(Gemm, LinearWithTransposedWeightEqualsItsAddmm) {
  const OpCost linear =
      cost("aten::linear", "[[3136,8,768],[2304,768],[2304]]", R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16"])");
  const OpCost addmm = cost("aten::addmm", "[[2304],[25088,768],[768,2304],[],[]]",
                            R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"])");
  ASSERT_TRUE(linear.flops && addmm.flops);
  EXPECT_DOUBLE_EQ(*linear.flops, 88785027072.0);  // 2 · 25088 · 2304 · 768
  EXPECT_DOUBLE_EQ(*linear.flops, *addmm.flops);
  EXPECT_DOUBLE_EQ(*linear.bytes, *addmm.bytes);
}

TEST(Gemm, MatmulBroadcastsBatchDimensions) {
  const OpCost c = cost("aten::matmul", "[[2,1,8,16],[3,16,4]]", R"(["float","float"])");
  ASSERT_TRUE(c.flops && c.bytes);
  EXPECT_DOUBLE_EQ(*c.flops, 2.0 * 6 * 8 * 4 * 16);
  EXPECT_DOUBLE_EQ(*c.bytes, (2 * 128 + 3 * 64 + 6 * 32) * 4.0);
  const OpCost vec = cost("aten::matmul", "[[16],[16,4]]", R"(["float","float"])");
  ASSERT_TRUE(vec.flops);
  EXPECT_DOUBLE_EQ(*vec.flops, 2.0 * 1 * 4 * 16);
}

TEST(Gemm, MismatchedOrMissingShapesAreUnknown) {
  EXPECT_FALSE(cost("aten::mm", "[[64,128],[64,32]]", R"(["float","float"])").flops);
  EXPECT_FALSE(cost("aten::mm", "", "").flops);
  EXPECT_FALSE(cost("aten::mm", "[[64,128],[128,32]]", "").flops);  // element size unknown
}

// Grouped, strided: input [2, 8, 10, 10], weight [16, 8/4, 3, 3], stride 2,
// padding 1, groups 4 -> output 5 × 5.
TEST(Convolution, GroupedStridedForward) {
  const OpCost c = cost("aten::conv2d", "[[2,8,10,10],[16,2,3,3],[],[],[],[],[]]",
                        R"(["float","float","","ScalarList","ScalarList","ScalarList","Scalar"])",
                        R"(["","","","[2, 2]","[1, 1]","[1, 1]","4"])");
  EXPECT_EQ(c.family, OpFamily::convolution);
  ASSERT_TRUE(c.flops && c.bytes);
  EXPECT_DOUBLE_EQ(*c.flops, 2.0 * 2 * 16 * 25 * 2 * 9);
  EXPECT_DOUBLE_EQ(*c.bytes, (1600 + 288 + 800) * 4.0);
}

TEST(Convolution, ArgumentOrderOfEachOp) {
  // timesformer's patch embedding: 16 × 16 kernels at stride 16 on 224 × 224 -> 14 × 14.
  const double expected = 2.0 * 128 * 768 * 196 * 3 * 256;
  const OpCost conv2d = cost("aten::conv2d", "[[128,3,224,224],[768,3,16,16],[768],[],[],[],[]]",
                             R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","ScalarList","ScalarList",
                                 "ScalarList","Scalar"])",
                             R"(["","","","[16, 16]","[0, 0]","[1, 1]","1"])");
  const OpCost convolution =
      cost("aten::convolution", "[[128,3,224,224],[768,3,16,16],[768],[],[],[],[],[],[]]",
           R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","ScalarList","ScalarList","ScalarList","Scalar",
               "ScalarList","Scalar"])",
           R"(["","","","[16, 16]","[0, 0]","[1, 1]","False","[0, 0]","1"])");
  const OpCost cudnn = cost("aten::cudnn_convolution", "[[128,3,224,224],[768,3,16,16],[],[],[],[],[],[],[]]",
                            R"(["c10::BFloat16","c10::BFloat16","ScalarList","ScalarList","ScalarList","Scalar",
                                "Scalar","Scalar","Scalar"])",
                            R"(["","","[0, 0]","[16, 16]","[1, 1]","1","False","False","True"])");
  ASSERT_TRUE(conv2d.flops && convolution.flops && cudnn.flops);
  EXPECT_DOUBLE_EQ(*conv2d.flops, expected);
  EXPECT_DOUBLE_EQ(*convolution.flops, expected);
  EXPECT_DOUBLE_EQ(*cudnn.flops, expected);
}

TEST(Convolution, ForwardWithoutStrideIsUnknown) {
  // The 2021 traces record shapes but no concrete inputs: the output size is unknown.
  EXPECT_FALSE(cost("aten::cudnn_convolution", "[[32,3,224,224],[64,3,7,7],[],[],[],[],[],[],[]]",
                    R"(["float","float","GenericList","GenericList","GenericList","Int","Bool","Bool","Bool"])")
                   .flops);
  // Transposed convolutions are not modelled.
  EXPECT_FALSE(cost("aten::convolution", "[[2,8,10,10],[8,16,3,3],[],[],[],[],[],[],[]]",
                    R"(["float","float","","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar"])",
                    R"(["","","","[1, 1]","[0, 0]","[1, 1]","True","[0, 0]","1"])")
                   .flops);
}

TEST(Convolution, BackwardCountsTheGradientsAsked) {
  const std::string dims = "[[2,16,5,5],[2,8,10,10],[16,2,3,3],[],[],[],[],[],[],[],[]]";
  const std::string types = R"(["float","float","float","","","","","","","",""])";
  const OpCost both =
      cost("aten::convolution_backward", dims, types,
           R"(["","","","[16]","[2, 2]","[1, 1]","[1, 1]","False","[0, 0]","4","[True, True, False]"])");
  const OpCost weight_only =
      cost("aten::convolution_backward", dims, types,
           R"(["","","","[16]","[2, 2]","[1, 1]","[1, 1]","False","[0, 0]","4","[False, True, False]"])");
  const OpCost unrecorded = cost("aten::convolution_backward", dims, types);
  ASSERT_TRUE(both.flops && weight_only.flops && unrecorded.flops);
  EXPECT_DOUBLE_EQ(*both.flops, 2 * 28800.0);
  EXPECT_DOUBLE_EQ(*weight_only.flops, 28800.0);
  EXPECT_DOUBLE_EQ(*unrecorded.flops, 2 * 28800.0);
}

TEST(Attention, CausalHalvesTheProducts) {
  const std::string dims = "[[2,4,128,64],[2,4,128,64],[2,4,128,64],[],[],[],[]]";
  const std::string types = R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","","Scalar","Scalar","Scalar"])";
  const OpCost full = cost("aten::scaled_dot_product_attention", dims, types, R"(["","","","","0.0","False",""])");
  const OpCost causal = cost("aten::scaled_dot_product_attention", dims, types, R"(["","","","","0.0","True",""])");
  ASSERT_TRUE(full.flops && causal.flops && full.bytes);
  EXPECT_DOUBLE_EQ(*full.flops, 4.0 * 2 * 4 * 128 * 128 * 64);
  EXPECT_DOUBLE_EQ(*causal.flops, *full.flops / 2);
  EXPECT_DOUBLE_EQ(*full.bytes, 4 * (2 * 4 * 128 * 64) * 2.0);
  // Unknown causality: unknown FLOPs.
  EXPECT_FALSE(cost("aten::scaled_dot_product_attention", dims, types).flops);
}

TEST(Attention, FlashForwardAndBackward) {
  const OpCost fwd = cost("aten::_scaled_dot_product_flash_attention", "[[2,4,128,64],[2,4,128,64],[2,4,128,64]]",
                          R"(["c10::Half","c10::Half","c10::Half","Scalar","Scalar","Scalar","Scalar"])",
                          R"(["","","","0.0","True","False",""])");
  const OpCost bwd =
      cost("aten::_scaled_dot_product_flash_attention_backward",
           "[[2,4,128,64],[2,4,128,64],[2,4,128,64],[2,4,128,64],[2,4,128,64],[2,4,128],[],[],[],[],[],[],[],[],[]]",
           R"(["c10::Half","c10::Half","c10::Half","c10::Half","c10::Half","float","","","","","","","","",""])",
           R"(["","","","","","","","","128","128","0.0","True","","",""])");
  ASSERT_TRUE(fwd.flops && bwd.flops);
  EXPECT_DOUBLE_EQ(*fwd.flops, 2.0 * 2 * 4 * 128 * 128 * 64);
  EXPECT_DOUBLE_EQ(*bwd.flops, 2.5 * *fwd.flops);
}

// bert's attention, from the real trace: the SDPA op ([B, H, L, D]) and the
// flash kernel's op ([B, L, H, D]) under it count the same products.
TEST(Attention, SdpaAndFlashForwardLayoutsAgree) {
  const OpCost sdpa =
      cost("aten::scaled_dot_product_attention", "[[1,8,141,64],[1,8,141,64],[1,8,141,64],[],[],[],[],[]]",
           R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","","Scalar","Scalar","","Scalar"])",
           R"(["","","","","0.","False","","False"])");
  const OpCost flash = cost("aten::_flash_attention_forward",
                            "[[1,141,8,64],[1,141,8,64],[1,141,8,64],[],[],[],[],[],[],[],[],[],[],[],[]]",
                            R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","","","Scalar","Scalar","Scalar",
                                "Scalar","Scalar","Scalar","","","",""])",
                            R"(["","","","","","141","141","0.","False","False","0.125","","","",""])");
  ASSERT_TRUE(sdpa.flops && flash.flops);
  EXPECT_DOUBLE_EQ(*sdpa.flops, 4.0 * 1 * 8 * 141 * 141 * 64);  // 40,716,288
  EXPECT_DOUBLE_EQ(*flash.flops, *sdpa.flops);
}

TEST(MemoryBound, ElementwiseReadsInputsAndWritesTheBroadcastOutput) {
  const OpCost same = cost("aten::add", "[[4,8],[4,8],[]]", R"(["float","float","Scalar"])");
  ASSERT_TRUE(same.bytes && same.flops);
  EXPECT_DOUBLE_EQ(*same.bytes, (32 + 32 + 32) * 4.0);
  EXPECT_DOUBLE_EQ(*same.flops, 32);
  const OpCost broadcast = cost("aten::mul", "[[4,8],[8]]", R"(["c10::BFloat16","c10::BFloat16"])");
  ASSERT_TRUE(broadcast.bytes);
  EXPECT_DOUBLE_EQ(*broadcast.bytes, (32 + 8 + 32) * 2.0);
}

TEST(MemoryBound, NormalizationAndReductionHaveBytesOnly) {
  const OpCost norm = cost("aten::layer_norm", "[[4,8],[],[8],[8],[],[]]",
                           R"(["float","ScalarList","float","float","Scalar","Scalar"])");
  EXPECT_EQ(norm.family, OpFamily::normalization);
  ASSERT_TRUE(norm.bytes);
  EXPECT_FALSE(norm.flops);
  EXPECT_DOUBLE_EQ(*norm.bytes, (32 + 8 + 8 + 32) * 4.0);
  const OpCost sum = cost("aten::sum", "[[4,8],[]]", R"(["float","ScalarList"])");
  ASSERT_TRUE(sum.bytes);
  EXPECT_DOUBLE_EQ(*sum.bytes, 32 * 4.0);
}

TEST(Inputs, MalformedShapesAreRefused) {
  OpInputs in;
  EXPECT_FALSE(parse_op_inputs("[[1,2],", "", "", &in));
  EXPECT_FALSE(parse_op_inputs("[[-1]]", "", "", &in));
  EXPECT_FALSE(parse_op_inputs("[[1]]", "[1]", "", &in));
  EXPECT_FALSE(parse_op_inputs("{}", "", "", &in));
  EXPECT_TRUE(in.dims.empty());
  EXPECT_TRUE(parse_op_inputs("[[1, 2], []]", R"(["float", ""])", "", &in));
  EXPECT_EQ(in.dims.size(), 2u);
  // A tensor list (aten::cat's first input) is read, as no shape.
  EXPECT_TRUE(parse_op_inputs("[[[2, 3], [2, 3]], []]", R"(["TensorList", "Scalar"])", "", &in));
  ASSERT_EQ(in.dims.size(), 2u);
  EXPECT_TRUE(in.dims[0].empty());
  EXPECT_FALSE(parse_op_inputs("[[2, [3]]]", "", "", &in));
  EXPECT_FALSE(op_cost("aten::unknown_op", in).flops);
}

TEST(Peaks, KnownModelsByTheirNames) {
  const auto h100 = peaks_for_device("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->model, "H100 SXM");
  EXPECT_DOUBLE_EQ(h100->flops(MathType::bf16), 989.4e12);
  EXPECT_DOUBLE_EQ(h100->memory_bandwidth, 3.35e12);
  EXPECT_FALSE(h100->source.empty());
  const auto v100 = peaks_for_device("Tesla V100-SXM2-32GB");
  ASSERT_TRUE(v100);
  EXPECT_DOUBLE_EQ(v100->flops(MathType::fp32), 15.7e12);
  EXPECT_EQ(v100->flops(MathType::bf16), 0);  // no bf16 on Volta
  EXPECT_DOUBLE_EQ(peaks_for_device("NVIDIA A100-SXM4-80GB")->memory_bandwidth, 2.039e12);
  EXPECT_DOUBLE_EQ(peaks_for_device("NVIDIA H200")->memory_bandwidth, 4.8e12);
  EXPECT_TRUE(peaks_for_device("NVIDIA B200"));
  EXPECT_DOUBLE_EQ(peaks_for_device("AMD Instinct MI300X")->bf16, 1307.4e12);
  EXPECT_FALSE(peaks_for_device("Test GPU"));
  for (const DevicePeaks& p : device_peak_table()) {
    EXPECT_GT(p.fp32, 0) << p.model;
    EXPECT_GT(p.memory_bandwidth, 0) << p.model;
    EXPECT_FALSE(p.source.empty()) << p.model;
  }
}

// ROCm traces may leave the name empty (or generic): the properties that one
// model alone has name it, said to be inferred; others stay as they are.
TEST(Peaks, AmdModelsInferredFromTheirProperties) {
  Device d;
  d.compute_major = 9, d.compute_minor = 4, d.sm_count = 304, d.warp_size = 64;
  d.memory_bytes = 206141652992;  // 192 GiB
  EXPECT_EQ(device_model_name(d), "AMD Instinct MI300X (inferred: gfx942, 304 CUs)");
  EXPECT_DOUBLE_EQ(peaks_for_device(device_model_name(d))->bf16, 1307.4e12);
  d.memory_bytes = 256ull << 30;
  EXPECT_EQ(device_model_name(d), "AMD Instinct MI325X (inferred: gfx942, 304 CUs)");
  d.sm_count = 228;
  EXPECT_EQ(device_model_name(d), "AMD Instinct MI300A (inferred: gfx942, 228 CUs)");
  d.sm_count = 200;  // no model has it
  EXPECT_EQ(device_model_name(d), "");
  d.name = "AMD Radeon Graphics", d.compute_minor = 0, d.sm_count = 104;  // an MI250's GCD or an MI210: either
  EXPECT_EQ(device_model_name(d), "AMD Radeon Graphics");
  d.sm_count = 110;
  EXPECT_EQ(device_model_name(d),
            "AMD Instinct MI250X (one GCD) (inferred: gfx90a, 110 CUs; named \"AMD Radeon Graphics\")");
  d.name = "NVIDIA H100 80GB HBM3";  // a name the trace gives is kept
  EXPECT_EQ(device_model_name(d), "NVIDIA H100 80GB HBM3");
}

// Tensor cores want a convolution's channels in multiples of 8; an image's
// 3 input channels (the stem) are cuDNN's to pad. Only the input and weight
// shapes are needed (a 2021 trace records no stride or groups).
TEST(Convolution, ChannelsAlignedFromTheShapesAlone) {
  auto aligned = [](std::string_view dims) {
    OpInputs in;
    EXPECT_TRUE(parse_op_inputs(dims, "", "", &in)) << dims;
    return conv_channels_aligned(in);
  };
  EXPECT_EQ(aligned("[[32,64,56,56],[256,64,1,1],[],[],[],[],[],[],[]]"), std::optional<bool>(true));
  EXPECT_EQ(aligned("[[32,3,224,224],[64,3,7,7],[],[],[]]"), std::optional<bool>(true));  // the stem
  EXPECT_EQ(aligned("[[32,20,56,56],[64,20,3,3]]"), std::optional<bool>(false));          // 20 input channels
  EXPECT_EQ(aligned("[[32,64,56,56],[100,64,3,3]]"), std::optional<bool>(false));         // 100 output channels
  EXPECT_EQ(aligned("[[32,64,56,56],[64,8,3,3]]"), std::optional<bool>(true));            // 8 groups of 8
  EXPECT_EQ(aligned("[[2048,768],[768,768]]"), std::nullopt);                             // not a convolution's
  EXPECT_EQ(aligned("[[32,64,56,56]]"), std::nullopt);
  // The forward's cost says the same where it is known.
  const OpCost twenty = cost("aten::cudnn_convolution", "[[32,20,56,56],[64,20,3,3],[],[],[],[],[],[],[]]",
                             R"(["float","float","ScalarList","ScalarList","ScalarList","Scalar","Scalar","Scalar",
                                 "Scalar"])",
                             R"(["","","[1, 1]","[1, 1]","[1, 1]","1","False","False","True"])");
  ASSERT_TRUE(twenty.flops);
  EXPECT_FALSE(twenty.aligned8);
}

}  // namespace
}  // namespace gpuscope
