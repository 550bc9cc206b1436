// The rules about where the math's neighbours spend the time: eager-attention
// (GEMM → softmax → GEMM chains where no fused attention kernel runs),
// memory-bound-aux (elementwise, copy, reduction and layout kernels against
// the math), the layout slow-normalization names for Eigen per-channel
// reductions, and the names that mark tensor-core kernels. Each with planted
// true and false cases.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/findings/rules.h"
#include "support/findings.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;
namespace names = testing::names;

constexpr TimeNs us = 1'000;
constexpr TimeNs ms = 1'000'000;

// Kernel names as PyTorch's eager attention and a transformer block launch them.
constexpr const char* kBmm =
    "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_nn_align1>(cutlass_75_tensorop_bf16_"
    "s1688gemm_bf16_128x128_nn_align1::Params)";
constexpr const char* kScale =
    "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, "
    "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, "
    "at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<"
    "float> >, std::array<char*, 2ul>)";
constexpr const char* kSoftmax =
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, "
    "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)";
constexpr const char* kLogSoftmax =
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
    "namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)";
constexpr const char* kCopy =
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_"
    "cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda("
    "c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda"
    "()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}"
    ">(int, at::native::gpu_kernel_impl_nocast<>(at::TensorIteratorBase&)::{lambda(int)#1})";
constexpr const char* kFlash =
    "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
    "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, false, "
    "false, false, false, true, false, false>(pytorch_flash::Flash_fwd_params)";
constexpr const char* kMeanReduce =
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, "
    "float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
    "unsigned int, float, 4>)";
// TensorFlow's per-channel mean of an NCHW activation as an Eigen reduction over {0, 2, 3}.
constexpr const char* kEigenChannelMean =
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 1, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorReductionOp<Eigen::internal::MeanReducer<float>, "
    "Eigen::IndexList<Eigen::type2index<0l>, Eigen::type2index<2l>, Eigen::type2index<3l> > const, Eigen::TensorMap<"
    "Eigen::Tensor<float const, 4, 1, long>, 16, Eigen::MakePointer> const, Eigen::MakePointer> const> const, "
    "Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 1, "
    "1, long>, 16, Eigen::MakePointer>, Eigen::TensorReductionOp<Eigen::internal::MeanReducer<float>, "
    "Eigen::IndexList<Eigen::type2index<0l>, Eigen::type2index<2l>, Eigen::type2index<3l> > const, Eigen::TensorMap<"
    "Eigen::Tensor<float const, 4, 1, long>, 16, Eigen::MakePointer> const, Eigen::MakePointer> const> const, "
    "Eigen::GpuDevice>, long)";

struct K {
  const char* name;
  TimeNs duration;
  const char* op = nullptr;  // the framework op (cpu_op range) around its launch, if any
  const char* dims = "";     // its recorded input shapes and types (record_shapes=True), if any
  const char* types = "";
};

// `steps` iterations on GPU 0, stream 7: the kernels back to back (1 µs apart),
// each launched 100 µs ahead inside its op's range.
void add_steps(TraceFactory& f, int steps, const std::vector<K>& kernels) {
  TimeNs t = 1 * ms;
  for (int s = 0; s < steps; ++s) {
    const TimeNs step_start = t;
    for (const K& k : kernels) {
      if (k.op) f.cpu_op(k.op, t - 101 * us, t - 94 * us, k.dims, k.types);
      f.kernel(0, 7, k.name, t, t + k.duration, t - 100 * us, 5 * us);
      t += k.duration + 1 * us;
    }
    f.range("step " + std::to_string(s), step_start - 200 * us, t);
  }
}

// `gpu`: the device's name (compute capability 9); empty: a device without
// name or compute capability, so the trace does not say whose GPU ran it.
Profile analyze_steps(int steps, const std::vector<K>& kernels, const std::string& gpu = "NVIDIA H100") {
  TraceFactory f;
  f.device(0, 132, gpu.empty() ? 0 : 9, gpu);
  add_steps(f, steps, kernels);
  const Trace t = f.build();
  return analyze(t);
}

// [SECTION] eager-attention

const std::vector<K> kEagerAttention = {{names::kGemmTensorCore, 300 * us},  // the QKV projection
                                        {kBmm, 200 * us},                    // Q·Kᵀ
                                        {kScale, 50 * us},
                                        {kSoftmax, 300 * us},
                                        {kCopy, 50 * us},
                                        {kBmm, 200 * us}};  // · V

TEST(EagerAttention, SoftmaxBetweenTwoGemmsEveryStepIsUnfusedAttention) {
  const Profile p = analyze_steps(5, kEagerAttention);
  const Finding* f = testing::find_finding(p, "eager-attention");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  // 5 chains of 800 µs (GEMM to GEMM) in 5.5 ms of kernels; the saving is what lies between the GEMMs.
  EXPECT_DOUBLE_EQ(f->metric, 4000.0 / 5500.0);
  EXPECT_EQ(f->severity, Severity::critical);
  EXPECT_EQ(f->saving_ns, 5 * 400 * us);
  EXPECT_NE(f->title.find("5 GEMM → softmax → GEMM chains"), std::string::npos) << f->title;
  EXPECT_NE(f->recommendation.find("scaled_dot_product_attention"), std::string::npos);
  ASSERT_FALSE(f->kernels.empty());
  EXPECT_EQ(f->kernels.front(), kSoftmax);
}

// No op-below-roofline finding, numbered or minor, names the batched
// attention products; the other product still gets one.
void expect_attention_products_not_below_roofline(const Profile& p) {
  ASSERT_TRUE(testing::find_finding(p, "eager-attention")) << testing::describe_findings(p);
  bool mm = false;
  for (const Finding& f : p.findings) {
    if (f.id != "op-below-roofline") continue;
    EXPECT_EQ(f.title.find("aten::bmm"), std::string::npos) << f.title;
    mm = mm || f.title.starts_with("aten::mm");
  }
  for (const Finding& f : p.minor_findings) {
    if (f.id != "op-below-roofline") continue;
    EXPECT_EQ(f.title.find("aten::bmm"), std::string::npos) << f.title;
  }
  EXPECT_TRUE(mm) << testing::describe_findings(p);
}

// The products of eager attention are its own: far below their roofline,
// they are not told to pad or batch, since the fused kernel replaces them.
// That holds for a short sequence too (a video model's attention over 8
// frames: scores [37632, 8, 8] from a head width of 64). A product of
// another shape in the same run still is.
TEST(EagerAttention, ItsProductsAreNotAlsoBelowTheirRoofline) {
  constexpr const char* bf16x2 = R"(["c10::BFloat16","c10::BFloat16"])";
  for (const bool short_sequence : {false, true}) {
    const char* scores = short_sequence ? "[[37632,8,64],[37632,64,8]]" : "[[16,5185,64],[16,64,5185]]";
    const char* values = short_sequence ? "[[37632,8,8],[37632,8,64]]" : "[[16,5185,5185],[16,5185,64]]";
    std::vector<K> step = {{names::kGemmTensorCore, 300 * us, "aten::mm", "[[4096,1000],[1000,1000]]", bf16x2},
                           {kBmm, 200 * us, "aten::bmm", scores, bf16x2},
                           {kScale, 50 * us},
                           {kSoftmax, 300 * us},
                           {kCopy, 50 * us},
                           {kBmm, 200 * us, "aten::bmm", values, bf16x2}};
    const Profile p = analyze_steps(5, step);
    expect_attention_products_not_below_roofline(p);
    // Their time above 30 % of their roofline is the eager-attention
    // finding's to save, beside the kernels between the products.
    const Finding* e = testing::find_finding(p, "eager-attention");
    ASSERT_TRUE(e) << testing::describe_findings(p);
    const detail::rules::SlowProducts slow = detail::rules::attention_products_below_roofline(p, FindingThresholds{});
    EXPECT_EQ(e->saving_ns, 5 * 400 * us + slow.ns) << e->evidence;
    if (!short_sequence) continue;  // 16 heads of 5,185 tokens: near enough their roofline
    ASSERT_GT(slow.ns, 0);
    ASSERT_TRUE(slow.top);
    EXPECT_EQ(slow.top->name, "aten::bmm");
    EXPECT_NE(e->evidence.find("The products themselves run far below their roofline: aten::bmm"), std::string::npos)
        << e->evidence;
    EXPECT_NE(
        e->recommendation.find("the kernels between the GEMMs and the products' time above 30% of their roofline"),
        std::string::npos)
        << e->recommendation;
  }
}

// A square batched product whose width equals its depth ([16, 64, 64] by
// [16, 64, 64]) is no attention scores product: it stays an op below its
// roofline of its own.
TEST(EagerAttention, ACubeOfABatchedProductIsNotTakenForAttention) {
  OpRow r;
  r.family = "gemm";
  r.dims = "M=64 N=64 K=64 batch=16";
  EXPECT_FALSE(detail::rules::attention_shaped(r));
  r.dims = "M=8 N=8 K=64 batch=37632";
  EXPECT_TRUE(detail::rules::attention_shaped(r));
  r.dims = "M=8 N=64 K=8 batch=37632";
  EXPECT_TRUE(detail::rules::attention_shaped(r));
  r.dims = "M=8 N=8 K=64 batch=1";
  EXPECT_FALSE(detail::rules::attention_shaped(r));
}

TEST(EagerAttention, SilentWhereFusedAttentionRuns) {
  std::vector<K> step = kEagerAttention;
  step.push_back({kFlash, 100 * us});
  const Profile p = analyze_steps(5, step);
  EXPECT_FALSE(testing::find_finding(p, "eager-attention")) << testing::describe_findings(p);
}

TEST(EagerAttention, SilentForSoftmaxAwayFromGemmsLogSoftmaxHeadsAndASingleChain) {
  // A softmax with four elementwise kernels on each side: no GEMM within reach.
  std::vector<K> apart = {{names::kGemmTensorCore, 300 * us}};
  for (int i = 0; i < 4; ++i) apart.push_back({kScale, 20 * us});
  apart.push_back({kSoftmax, 300 * us});
  for (int i = 0; i < 4; ++i) apart.push_back({kScale, 20 * us});
  apart.push_back({names::kGemmTensorCore, 300 * us});
  Profile p = analyze_steps(5, apart);
  EXPECT_FALSE(testing::find_finding(p, "eager-attention")) << testing::describe_findings(p);

  // A classifier head's log-softmax between GEMMs is no attention.
  p = analyze_steps(5, {{kBmm, 200 * us}, {kLogSoftmax, 300 * us}, {kBmm, 200 * us}});
  EXPECT_FALSE(testing::find_finding(p, "eager-attention")) << testing::describe_findings(p);

  // One chain is not a pattern.
  p = analyze_steps(1, kEagerAttention);
  EXPECT_FALSE(testing::find_finding(p, "eager-attention")) << testing::describe_findings(p);
}

// [SECTION] memory-bound-aux

// A block whose normalization is written out op by op (pow, mean, rsqrt, mul),
// around one tensor-core GEMM.
std::vector<K> written_out_norm_step() {
  std::vector<K> step = {{names::kGemmTensorCore, 300 * us, "aten::mm"}};
  for (int i = 0; i < 10; ++i) {
    step.push_back({names::kRelu, 15 * us, "aten::pow"});
    step.push_back({kMeanReduce, 10 * us, "aten::mean"});
    step.push_back({names::kRelu, 15 * us, "aten::rsqrt"});
    step.push_back({kScale, 20 * us, "aten::mul"});
  }
  return step;
}

TEST(MemoryBoundAux, ElementwiseAndReductionsAboveTheMathAreNamedWithTheirChains) {
  const Profile p = analyze_steps(5, written_out_norm_step());
  const Finding* f = testing::find_finding(p, "memory-bound-aux");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  // 600 µs of aux kernels per step against 300 µs of GEMM.
  EXPECT_DOUBLE_EQ(f->metric, 600.0 / 900.0);
  EXPECT_EQ(f->severity, Severity::critical);
  EXPECT_EQ(f->saving_ns, 5 * 300 * us);  // half of it; the whole is stated as the upper bound
  EXPECT_NE(f->title.find("2.00x the math"), std::string::npos) << f->title;
  EXPECT_NE(f->evidence.find("pow/mean/rsqrt"), std::string::npos) << f->evidence;
  EXPECT_NE(f->recommendation.find("torch.compile"), std::string::npos);
  EXPECT_NE(f->recommendation.find("upper bound"), std::string::npos);
  EXPECT_FALSE(f->kernels.empty());
}

TEST(MemoryBoundAux, RotaryEmbeddingChainsAndTensorFlowKernelsGetTheirAdvice) {
  // Rotary embeddings written out: neg, cat and mul ops around a GEMM.
  std::vector<K> rope = {{names::kGemmTensorCore, 300 * us, "aten::mm"}};
  for (int i = 0; i < 10; ++i) {
    rope.push_back({names::kRelu, 20 * us, "aten::neg"});
    rope.push_back({kCopy, 20 * us, "aten::cat"});
    rope.push_back({kScale, 20 * us, "aten::mul"});
  }
  // Without attention in the trace (no attention kernel or op, and no
  // recorded shapes), neg/cat/mul is no rotary embedding: a loss, metrics.
  Profile p = analyze_steps(5, rope);
  const Finding* f = testing::find_finding(p, "memory-bound-aux");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_EQ(f->evidence.find("rotary"), std::string::npos) << f->evidence;
  rope.push_back({kScale, 20 * us, "aten::_softmax"});  // attention's softmax
  p = analyze_steps(5, rope);
  f = testing::find_finding(p, "memory-bound-aux");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_NE(f->evidence.find("neg/cat/mul: rotary embeddings"), std::string::npos) << f->evidence;
  EXPECT_EQ(f->evidence.find("pow/mean/rsqrt"), std::string::npos) << f->evidence;

  // TensorFlow (Eigen kernels): XLA, not torch.compile. The broadcasts (17 %)
  // are broadcast-hotspot's; the elementwise kernels alone outweigh the math.
  std::vector<K> tf = {{names::kConvTensorCore, 300 * us}};
  for (int i = 0; i < 30; ++i) tf.push_back({names::kBroadcast, 5 * us});
  for (int i = 0; i < 30; ++i) tf.push_back({names::kRelu, 15 * us});
  p = analyze_steps(5, tf);
  EXPECT_TRUE(testing::find_finding(p, "broadcast-hotspot")) << testing::describe_findings(p);
  f = testing::find_finding(p, "memory-bound-aux");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_DOUBLE_EQ(f->metric, 450.0 / 900.0);  // the broadcast time is not counted twice
  EXPECT_NE(f->recommendation.find("XLA"), std::string::npos) << f->recommendation;
  EXPECT_EQ(f->recommendation.find("torch.compile"), std::string::npos) << f->recommendation;
}

TEST(MemoryBoundAux, OneLargeCategoryFiresEvenBelowTheMath) {
  std::vector<K> step = {{names::kConvTensorCore, 1000 * us}};
  for (int i = 0; i < 20; ++i) step.push_back({names::kRelu, 20 * us});  // 400 µs: 28.6 % of kernel time
  const Profile p = analyze_steps(5, step);
  const Finding* f = testing::find_finding(p, "memory-bound-aux");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_DOUBLE_EQ(f->metric, 400.0 / 1400.0);
  EXPECT_DOUBLE_EQ(f->threshold, 0.25);
  EXPECT_EQ(f->severity, Severity::warning);
}

TEST(MemoryBoundAux, SilentBelowTheThresholdsForFewLaunchesAndForTimeOtherFindingsReport) {
  // 15 % elementwise beside the math.
  std::vector<K> step = {{names::kConvTensorCore, 850 * us}};
  for (int i = 0; i < 10; ++i) step.push_back({names::kRelu, 15 * us});
  Profile p = analyze_steps(5, step);
  EXPECT_FALSE(testing::find_finding(p, "memory-bound-aux")) << testing::describe_findings(p);

  // One long elementwise kernel per step: nothing to fuse it with.
  p = analyze_steps(5, {{names::kConvTensorCore, 300 * us}, {names::kRelu, 600 * us}});
  EXPECT_FALSE(testing::find_finding(p, "memory-bound-aux")) << testing::describe_findings(p);

  // Padding that padding-hotspot reports is not counted again.
  std::vector<K> padded = {{names::kConvTensorCore, 300 * us}};
  for (int i = 0; i < 10; ++i) padded.push_back({names::kPad, 60 * us});
  p = analyze_steps(5, padded);
  EXPECT_TRUE(testing::find_finding(p, "padding-hotspot")) << testing::describe_findings(p);
  EXPECT_FALSE(testing::find_finding(p, "memory-bound-aux")) << testing::describe_findings(p);
}

// [SECTION] slow-normalization: per-channel statistics as Eigen reductions

TEST(SlowNormalization, EigenReductionsOverNchwChannelsAreNamedAsSuch) {
  const Profile p = analyze_steps(5, {{names::kConvTensorCore, 400 * us}, {kEigenChannelMean, 300 * us}});
  const Finding* f = testing::find_finding(p, "slow-normalization");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_NE(f->evidence.find("axes {0,2,3} of NCHW tensors"), std::string::npos) << f->evidence;
  EXPECT_NE(f->recommendation.find("channels_last"), std::string::npos);
  ASSERT_EQ(p.hotspots.size(), 2u);
  EXPECT_EQ(p.hotspots[1].category, KernelCategory::normalization);
  EXPECT_EQ(p.hotspots[1].category_rule,
            "template arguments: reduction over {0,2,3} (per-channel statistics of an NCHW tensor)");
  EXPECT_EQ(p.hotspots[0].category_rule, "name: fprop");

  // A batch-norm kernel by name (not cuDNN's fused one) says nothing about reductions.
  const Profile q = analyze_steps(
      5, {{names::kConvTensorCore, 400 * us}, {"bn_forward_naive_stats_kernel(float const*, float*, int)", 300 * us}});
  const Finding* g = testing::find_finding(q, "slow-normalization");
  ASSERT_TRUE(g) << testing::describe_findings(q);
  EXPECT_EQ(g->evidence.find("{0,2,3} of NCHW"), std::string::npos) << g->evidence;
}

TEST(SlowNormalization, LayerNormIsToldToFuseNotToUseBatchNorm) {
  constexpr const char* kLayerNorm =
      "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
      "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)";
  // A transformer's layer norm, a large share: fuse it with its neighbours.
  const Profile p = analyze_steps(5, {{names::kGemmTensorCore, 400 * us}, {kLayerNorm, 150 * us}});
  const Finding* f = testing::find_finding(p, "slow-normalization");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_NE(f->evidence.find("layer, RMS or group norm"), std::string::npos) << f->evidence;
  EXPECT_NE(f->recommendation.find("Fuse the normalization with the ops around it"), std::string::npos)
      << f->recommendation;
  for (const std::string* text : {&f->title, &f->evidence, &f->recommendation}) {
    EXPECT_EQ(text->find("atch norm"), std::string::npos) << *text;
    EXPECT_EQ(text->find("BatchNorm"), std::string::npos) << *text;
  }
  // Half a patch-embedding convolution's time and under the share threshold:
  // it is no batch norm after convolutions, so it stays silent.
  const Profile q = analyze_steps(
      5, {{names::kGemmTensorCore, 1200 * us}, {names::kConvTensorCore, 100 * us}, {kLayerNorm, 110 * us}});
  EXPECT_FALSE(testing::find_finding(q, "slow-normalization")) << testing::describe_findings(q);
  // The same time in batch norm beside that convolution still fires.
  const Profile r = analyze_steps(5, {{names::kGemmTensorCore, 1200 * us},
                                      {names::kConvTensorCore, 100 * us},
                                      {"bn_forward_naive_stats_kernel(float const*, float*, int)", 110 * us}});
  EXPECT_TRUE(testing::find_finding(r, "slow-normalization")) << testing::describe_findings(r);
}

// [SECTION] Tensor-core kernel names

TEST(TensorCoreNames, FusedAttentionAndMmaFamiliesCountButFp32KernelsDoNot) {
  for (const char* name :
       {kFlash, kBmm, names::kGemmTensorCore, names::kConvTensorCore,
        "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_32x1_nn_align8>(cutlass_80_wmma_"
        "tensorop_bf16_s161616gemm_bf16_16x16_32x1_nn_align8::Params)",
        "fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
        "cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)",
        "void cutlass::device_kernel<flash::FlashAttnFwdSm90<> >(flash::FlashAttnFwdSm90<>::Params)",
        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
        "5x_cublas",
        "volta_h884gemm_64x64_ldg8_nn", "turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn"})
    EXPECT_TRUE(is_tensor_core_kernel(name)) << name;
  for (const char* name :
       {names::kConvFp32, "ampere_sgemm_128x64_nn", "volta_sgemm_128x64_nn",
        "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, "
        "true, 64, 64, 64, true, true>::Params)",
        "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long, long, float const*, "
        "float const*, float const*, float const*, float*, float*)",
        kSoftmax,
        "void cutlass::Kernel<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(cutlass_80_simt_sgemm_128x128_8x4_"
        "nn_align1::Params)"})
    EXPECT_FALSE(is_tensor_core_kernel(name)) << name;
  // A copy does no matrix math: vLLM's KV-cache write is named "flash" but is memory work.
  const char* kv_write =
      "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>("
      "__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, __nv_bfloat16*, long const*, long, long, long, "
      "long, int, int, int, float const*, float const*)";
  EXPECT_TRUE(is_tensor_core_kernel(kv_write));  // by its name alone
  EXPECT_FALSE(is_tensor_core_kernel(kv_write, KernelCategory::memory));
  EXPECT_FALSE(
      is_tensor_core_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL_wgmma_like", KernelCategory::communication));
}

// CUTLASS's "tensorop" marks its tensor-core kernels, as a word of a
// snake_case name or inside CUTLASS's own types; MIOpen's elementwise
// SubTensorOp… kernels end another word with it and are not marked.
TEST(TensorCoreNames, CutlassTensorOpCountsButNotAsTheEndOfAnotherWord) {
  for (const char* name : {"cutlass_tensorop_f64_gemm_64x32_nn_align1", "my_tensor_op_kernel",
                           "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::MmaPipelined<"
                           "cutlass::gemm::GemmShape<128, 128, 32>, cutlass::arch::OpClassTensorOp> > >(Params)"})
    EXPECT_TRUE(is_tensor_core_kernel(name)) << name;
  for (const char* name : {"SubTensorOpWithScalar1d", "SubTensorOpWithCastTensor1d", "SubTensorOpWithSubTensor2d"})
    EXPECT_FALSE(is_tensor_core_kernel(name)) << name;
}

// FP8 and FP4 products run only on tensor cores: a GEMM or attention kernel
// naming those element types is marked; a quantize kernel naming them is not,
// nor a matrix-vector product (it may widen the weights on the CUDA cores).
TEST(TensorCoreNames, Fp8AndFp4ProductsAreTensorCoreMath) {
  EXPECT_TRUE(is_tensor_core_kernel("bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1",
                                    KernelCategory::gemm));
  EXPECT_TRUE(is_tensor_core_kernel("fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128",
                                    KernelCategory::attention));
  EXPECT_FALSE(is_tensor_core_kernel("void vllm::scaled_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>",
                                     KernelCategory::elementwise));
  EXPECT_TRUE(is_tensor_core_kernel("_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1", KernelCategory::gemm));
  EXPECT_FALSE(is_tensor_core_kernel("bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3"));  // category not known
  EXPECT_FALSE(is_tensor_core_kernel("void fp8_gemv_kernel<__nv_fp8_e4m3>(Params)", KernelCategory::gemm));
}

// AMD's matrix cores (MFMA, WMMA) show in their kernels' names: the mark
// says they are used; its absence says nothing (a helper naming no tile).
TEST(TensorCoreNames, AmdMatrixCoreKernelsAreNamed) {
  for (const char* name : {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x16x256_MI16x16x1_SN_LDSB1_AFC1_AFEM1",
                           "void paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16, __hip_bfloat16, 4>(int)",
                           "ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3>", "rocwmma_gemm_kernel"})
    EXPECT_TRUE(is_amd_matrix_core_kernel(name)) << name;
  for (const char* name : {"Cijk_Ailk_Bljk_SB_MT64x64x8_SE_K1", "void at::native::vectorized_elementwise_kernel<4>",
                           "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi8EEEvPT_", "MIOpenConvUni"})
    EXPECT_FALSE(is_amd_matrix_core_kernel(name)) << name;
}

TEST(TensorCoreNames, AttentionIsPartOfTheMathNoTensorCoresLooksAt) {
  // FP32 memory-efficient attention on an H100: the math runs without tensor cores.
  const char* fp32_attention =
      "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, "
      "true, 64, 64, 64, true, true>::Params)";
  Profile p = analyze_steps(5, {{fp32_attention, 800 * us}, {names::kRelu, 100 * us}});
  EXPECT_TRUE(testing::find_finding(p, "no-tensor-cores")) << testing::describe_findings(p);
  // FlashAttention is tensor-core math: nothing to say.
  p = analyze_steps(5, {{kFlash, 800 * us}, {names::kRelu, 100 * us}});
  EXPECT_FALSE(testing::find_finding(p, "no-tensor-cores")) << testing::describe_findings(p);
}

// [SECTION] Fixes in the GPU vendor's words

constexpr const char* kMi300 = "AMD Instinct MI300X";
// PyTorch's own batch-norm kernels, which BatchNorm2d runs where MIOpen does not take the tensors (bf16 on ROCm).
constexpr const char* kNativeBatchNorm =
    "void at::native::batch_norm_collect_statistics_kernel<at::native::Var, c10::BFloat16, c10::BFloat16, float, "
    "int>(at::GenericPackedTensorAccessor<c10::BFloat16 const, 3ul, at::RestrictPtrTraits, int>, float, float, "
    "at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<float, "
    "1ul, at::RestrictPtrTraits, int>)";
constexpr const char* kMiopenConv = "naive_conv_ab_nonpacked_fwd_nchw_float_double_float";
constexpr const char* kMiopenBatchNorm = "MIOpenBatchNormFwdTrainSpatial";
constexpr const char* kNchwToNhwc =
    "void nchwToNhwcKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>(int, int, int, int, float "
    "const*, float*, float, float)";

bool has(const std::string& text, const char* words) { return text.find(words) != std::string::npos; }

TEST(GpuVendor, TheDevicesNameOrComputeCapabilitySaysWhoseGpu) {
  using detail::rules::GpuVendor;
  Profile p;
  EXPECT_EQ(detail::rules::gpu_vendor(p), GpuVendor::unknown);  // no device at all
  DeviceSummary d;
  p.devices.push_back(d);
  EXPECT_EQ(detail::rules::gpu_vendor(p), GpuVendor::unknown);  // a device that says nothing of itself
  p.devices[0].name = "NVIDIA H100 80GB HBM3";
  p.devices[0].compute_major = 9;
  EXPECT_EQ(detail::rules::gpu_vendor(p), GpuVendor::nvidia);
  p.devices[0].name = "AMD Instinct MI210";  // gfx90a: compute capability 9.0, as a Hopper's
  EXPECT_EQ(detail::rules::gpu_vendor(p), GpuVendor::amd);
  p.devices[0].name.clear();
  p.devices[0].compute_minor = 4;  // gfx942: no NVIDIA GPU is 9.4
  EXPECT_EQ(detail::rules::gpu_vendor(p), GpuVendor::amd);
  p.devices[0].compute_major = 8, p.devices[0].compute_minor = 0;
  EXPECT_EQ(detail::rules::gpu_vendor(p), GpuVendor::nvidia);
  // One AMD GPU among unnamed ones: the run is AMD's.
  p.devices.push_back(d);
  p.devices[1].name = kMi300;
  EXPECT_EQ(detail::rules::gpu_vendor(p), GpuVendor::amd);
}

TEST(GpuVendor, BatchNormFixIsMiopensOnAmdCudnnsOnNvidiaBothWhereUnknown) {
  const std::vector<K> step = {{kMiopenConv, 400 * us}, {kNativeBatchNorm, 300 * us}};
  const Profile amd = analyze_steps(5, step, kMi300);
  const Finding* f = testing::find_finding(amd, "slow-normalization");
  ASSERT_TRUE(f) << testing::describe_findings(amd);
  EXPECT_TRUE(has(f->recommendation, "MIOpen's batch norm")) << f->recommendation;
  EXPECT_TRUE(has(f->recommendation, "at::native::batch_norm_*, otherwise, as here)")) << f->recommendation;
  EXPECT_FALSE(has(f->recommendation, "cuDNN")) << f->recommendation;
  EXPECT_FALSE(has(f->recommendation, "CUDA tensors")) << f->recommendation;

  const Profile nvidia = analyze_steps(5, {{names::kConvTensorCore, 400 * us}, {kNativeBatchNorm, 300 * us}});
  const Finding* g = testing::find_finding(nvidia, "slow-normalization");
  ASSERT_TRUE(g) << testing::describe_findings(nvidia);
  EXPECT_TRUE(has(g->recommendation, "cuDNN's fused batch norm")) << g->recommendation;
  EXPECT_FALSE(has(g->recommendation, "MIOpen")) << g->recommendation;

  const Profile unknown = analyze_steps(5, step, "");
  const Finding* h = testing::find_finding(unknown, "slow-normalization");
  ASSERT_TRUE(h) << testing::describe_findings(unknown);
  EXPECT_TRUE(has(h->recommendation, "cuDNN on NVIDIA, MIOpen on AMD")) << h->recommendation;

  // MIOpen's own batch norm holding the normalization time is the fused batch norm already: silent.
  const Profile fused = analyze_steps(5, {{kMiopenConv, 400 * us}, {kMiopenBatchNorm, 300 * us}}, kMi300);
  EXPECT_FALSE(testing::find_finding(fused, "slow-normalization")) << testing::describe_findings(fused);
}

TEST(GpuVendor, LayoutFixNamesMiopensSolversOnAmdAndBatchNormOnlyWhereItRuns) {
  const std::vector<K> with_bn = {{kMiopenConv, 400 * us}, {kNchwToNhwc, 100 * us}, {kNativeBatchNorm, 30 * us}};
  const Profile amd = analyze_steps(5, with_bn, kMi300);
  const Finding* f = testing::find_finding(amd, "layout-transpose");
  ASSERT_TRUE(f) << testing::describe_findings(amd);
  EXPECT_TRUE(has(f->recommendation, "MIOpen's NHWC (matrix-core) convolution solvers and batch norm"))
      << f->recommendation;
  EXPECT_FALSE(has(f->recommendation, "tensor-core")) << f->recommendation;
  // No batch norm beside the convolutions: the fix does not name it.
  const Profile no_bn = analyze_steps(5, {{names::kConvTensorCore, 400 * us}, {kNchwToNhwc, 100 * us}});
  const Finding* g = testing::find_finding(no_bn, "layout-transpose");
  ASSERT_TRUE(g) << testing::describe_findings(no_bn);
  EXPECT_TRUE(has(g->recommendation, "suits tensor-core convolutions;")) << g->recommendation;
  EXPECT_FALSE(has(g->recommendation, "batch norm")) << g->recommendation;
}

TEST(GpuVendor, AttentionFixFitsEveryModelAndNamesCudnnOnlyOnNvidia) {
  const Profile nvidia = analyze_steps(5, kEagerAttention);
  const Finding* f = testing::find_finding(nvidia, "eager-attention");
  ASSERT_TRUE(f) << testing::describe_findings(nvidia);
  EXPECT_TRUE(has(f->recommendation, "cuDNN attention")) << f->recommendation;
  EXPECT_TRUE(has(f->recommendation, "in the model's attention module")) << f->recommendation;
  EXPECT_TRUE(has(f->recommendation, "attn_implementation=\"sdpa\" where the model supports it")) << f->recommendation;
  const Profile amd = analyze_steps(5, kEagerAttention, kMi300);
  const Finding* g = testing::find_finding(amd, "eager-attention");
  ASSERT_TRUE(g) << testing::describe_findings(amd);
  EXPECT_TRUE(has(g->recommendation, "AOTriton")) << g->recommendation;
  EXPECT_FALSE(has(g->recommendation, "cuDNN")) << g->recommendation;
  const Profile unknown = analyze_steps(5, kEagerAttention, "");
  const Finding* h = testing::find_finding(unknown, "eager-attention");
  ASSERT_TRUE(h) << testing::describe_findings(unknown);
  EXPECT_FALSE(has(h->recommendation, "cuDNN")) << h->recommendation;
  EXPECT_FALSE(has(h->recommendation, "AOTriton")) << h->recommendation;
}

}  // namespace
}  // namespace gpuscope
