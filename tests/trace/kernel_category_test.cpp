// The kernel category table (src/trace/kernel_category.cpp) on the names the
// diagnosis depends on: Eigen's evaluators, cuDNN/cuBLAS/CUTLASS/Hopper, NCCL,
// ATen, Triton. Every kernel name of the real traces is checked against
// tests/trace/data/kernel_categories.tsv in kernel_category_golden_test.cpp;
// the bundled workload's kernels in tests/workload/kernel_names_test.cpp.
#include "trace/kernel_category.h"

#include <gtest/gtest.h>

#include <cctype>
#include <initializer_list>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "trace/demangle.h"

namespace gpuscope {
// Readable category names in failure messages.
inline void PrintTo(KernelCategory c, std::ostream* os) { *os << to_string(c); }
namespace {

using K = KernelCategory;

struct Case {
  const char* name;
  KernelCategory expected;
};

void check(std::initializer_list<Case> cases) {
  for (const Case& c : cases) EXPECT_EQ(classify_kernel(c.name), c.expected) << c.name;
}

TEST(KernelCategory, ClassifiesTheReportsKernels) {
  const Case cases[] = {
      {"void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<"
       "Eigen::Tensor<float, 4, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::"
       "IndexPair<int>, 4ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16, "
       "Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, int>(Eigen::TensorEvaluator<>, int)",
       KernelCategory::padding},
      {"void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<"
       "Eigen::Tensor<float, 2, 1, int>, 16>, Eigen::TensorBroadcastingOp<Eigen::array<int, 2ul> const, "
       "Eigen::TensorMap<Eigen::Tensor<float const, 2, 1, int>, 16> const> const> const, Eigen::GpuDevice>, int>",
       KernelCategory::broadcast},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", KernelCategory::communication},
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", KernelCategory::communication},
      {"volta_scudnn_128x64_relu_interior_nn_v1", KernelCategory::convolution},
      {"sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64",
       KernelCategory::convolution},
      {"volta_sgemm_128x64_nn", KernelCategory::gemm},
      {"nvjet_tst_128x64_64x8_1x1_v_bz_coopB_NNT", KernelCategory::gemm},
      {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>(cudnnTensorStruct)",
       KernelCategory::normalization},
      {"void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*)",
       KernelCategory::pooling},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
       "launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::"
       "ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, "
       "at::detail::Array<char*, 2> >(int, {lambda(float)#1}, at::detail::Array<char*, 2>)",
       KernelCategory::elementwise},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>, "
       "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, "
       "float, 4>)",
       KernelCategory::reduction},
      {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
       "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float*, int)",
       KernelCategory::softmax_loss},
      {"void nchwToNhwcKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>(int, int)",
       KernelCategory::transpose},
      {"Memcpy HtoD (Pageable -> Device)", KernelCategory::memory},
      {"triton_poi_fused_add_0", KernelCategory::elementwise},
      {"mystery_kernel", KernelCategory::other},
  };
  for (const Case& c : cases) EXPECT_EQ(classify_kernel(c.name), c.expected) << c.name;
}

TEST(KernelCategory, LibrariesAndFrameworks) {
  check({
      // Eigen (TensorFlow): only the template arguments tell the op.
      {"void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
       "Tensor<float, 4, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<int>, "
       "4ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16, Eigen::MakePointer> const> const> "
       "const, Eigen::GpuDevice>, int>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<"
       "float, 4, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<int>, 4ul> "
       "const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16, Eigen::MakePointer> const> const> const, "
       "Eigen::GpuDevice>, int)",
       K::padding},
      {"void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
       "Tensor<float, 2, 1, int>, 16>, Eigen::TensorBroadcastingOp<Eigen::array<int, 2ul> const, Eigen::TensorMap<"
       "Eigen::Tensor<float const, 2, 1, int>, 16> const> const> const, Eigen::GpuDevice>, int>(Eigen::"
       "TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 2, 1, int>, 16>, Eigen::"
       "TensorBroadcastingOp<Eigen::array<int, 2ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 2, 1, int>, "
       "16> const> const> const, Eigen::GpuDevice>, int)",
       K::broadcast},
      {"void tensorflow::functor::PadInputCustomKernelNHWC<float, 4>(int, float const*, tensorflow::functor::"
       "Dimension<4>, float*, tensorflow::functor::Dimension<4>, tensorflow::functor::Dimension<2>, float)",
       K::padding},
      {"void tensorflow::functor::SwapDimension1And2InTensor3UsingTiles<unsigned int, 256, 32, 32, false>(unsigned "
       "int const*, tensorflow::functor::Dimension<3>, unsigned int*)",
       K::transpose},
      // cuDNN, cuBLAS, CUTLASS, Hopper.
      {"volta_scudnn_128x64_relu_interior_nn_v1", K::convolution},
      {"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int, float "
       "const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, "
       "int)",
       K::convolution},
      {"sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_"
       "execute_segment_k_off_kernel__5x_cudnn",
       K::convolution},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       K::gemm},
      {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1>(cutlass_80_tensorop_s1688gemm_"
       "128x64_32x6_nt_align1::Params)",
       K::gemm},
      {"ampere_sgemm_128x64_nn", K::gemm},
      {"nvjet_tst_128x64_64x8_1x1_v_bz_coopB_NNT", K::gemm},
      // A parameter type must not decide: this is cuBLAS's scal, not a transpose.
      {"void scal_kernel<float, float, 1, false, 6, 5, 5, 3>(cublasTransposeParams<float>, float const*, float*, "
       "float const*)",
       K::elementwise},
      // NCCL, old and new names.
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", K::communication},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", K::communication},
      {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", K::communication},
      // PyTorch ATen.
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
       "TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, "
       "std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous "
       "namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float)",
       K::optimizer},
      // FBGEMM's embedding backward with the optimizer fused in runs in the
      // backward pass: not a weight update of its own.
      {"void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<float, float, float, "
       "1ul, 16>(at::GenericPackedTensorAccessor<float, 2ul, at::RestrictPtrTraits, long>)",
       K::other},
      {"split_embedding_nobag_backward_codegen_sgd_unweighted_kernel_warp_per_row_1", K::other},
      {"void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, float const*, "
       "float*, float*)",
       K::normalization},
  });
}

// Fused attention, as FlashAttention 2 (PyTorch's copy), FlashAttention 3,
// memory-efficient attention and cuDNN's SDPA engines name their kernels;
// eager attention's softmax stays softmax_loss.
TEST(KernelCategory, FusedAttentionKernelsAreAttention) {
  check({
      {"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
       "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, "
       "false, false, false, false, true, false, false>(pytorch_flash::Flash_fwd_params)",
       K::attention},
      {"void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, "
       "false, cutlass::half_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::half_t> >, true, false, false, false, "
       "false, false>(Flash_bwd_params)",
       K::attention},
      {"void cutlass::device_kernel<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, "
       "cute::tuple<cute::C<1>, "
       "cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t> > "
       ">(flash::FlashAttnFwdSm90<>::Params)",
       K::attention},
      {"fmha_cutlassF_f16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::half_t, "
       "cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)",
       K::attention},
      {"fmha_cutlassB_f32_aligned_64x64_k65536_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch::"
       "Sm80, float, true, false, false, 64, 64, 65536, false>::Params)",
       K::attention},
      {"void at::native::(anonymous namespace)::efficient_attention_forward_kernel<float>(float*, float const*)",
       K::attention},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0", K::attention},
      {"attn_fwd", K::attention},
      // A mangled CUTLASS convolution whose template arguments hold "NoPermute".
      {"_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22ImplicitGemm"
       "MultistageINS_4gemm9GemmShapeILi64ELi128ELi32EEENS4_52Conv2dWgradOutputGradientTileAccessIteratorOptimized"
       "INS_11MatrixShapeILi64ELi32EEENS_10tfloat32_tENS_9transform29PitchLinearWarpRakedThreadMapINS_6layout10"
       "NoPermuteEEEEE",
       K::convolution},  // Triton's (and ROCm AITER's) flash attention
      {"_attn_bwd", K::attention},
      // A serving engine's KV-cache write is a copy, "_flash_" in its name or not.
      {"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, (vllm::Fp8KVCacheDataType)1>("
       "__nv_bfloat16 const*, __nv_bfloat16 const*, unsigned char*, unsigned char*, long const*, long, long, long, "
       "long, long, int, int, int, float const*, float const*)",
       K::memory},
      // Eager attention's pieces are not.
      {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, "
       "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
       K::softmax_loss},
      {"void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 3, false, false>("
       "c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)",
       K::softmax_loss},
      {"sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_"
       "execute_segment_k_off_kernel__5x_cudnn",
       K::convolution},
  });
}

// Batched, strided-batched and grouped GEMMs and GEMVs are GEMMs, and a GEMM
// with a bias epilogue stays one ("bias" is an elementwise pattern further down).
TEST(KernelCategory, BatchedGroupedAndBiasEpilogueGemmsAreGemm) {
  check({
      // Tensile's GEMMs (hipBLASLt on an MI300X), a bias epilogue in the name.
      {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_"
       "CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1",
       K::gemm},
      // CUTLASS's number types in a kernel's arguments do not make it a GEMM
      // (a MoE finalize from an LLM serving engine); CUTLASS's own kernels are.
      {"void moe::dev::finalize::finalizeKernelVecLoad<moe::dev::finalize::KernelParams<cutlass::bfloat16_t, "
       "cutlass::bfloat16_t, 4, true> >(moe::dev::finalize::KernelParams<cutlass::bfloat16_t, cutlass::bfloat16_t, 4, "
       "true>)",
       K::other},
      {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::half_t> >(Params)", K::gemm},
      {"void gemmSN_NN_kernel<float, 256, 4, 2, 8, 3, 4, false, cublasGemvTensorStridedBatched<float const>, "
       "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<"
       "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
       "cublasGemvTensorStridedBatched<float>, float>)",
       K::gemm},
      {"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
       "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float "
       "const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParamsEx<int, "
       "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
       "cublasGemvTensorStridedBatched<float>, float>, float, float)",
       K::gemm},
      {"void cutlass::Kernel<cutlass::gemm::kernel::GemmGrouped<cutlass::gemm::threadblock::MmaMultistage<>, "
       "cutlass::epilogue::threadblock::Epilogue<>, cutlass::gemm::threadblock::GemmBatchedIdentityThreadblockSwizzle, "
       "cutlass::gemm::kernel::GroupScheduleMode::kDeviceOnly, false> >(cutlass::gemm::kernel::GemmGrouped<>::Params)",
       K::gemm},
      {"void at::native::(anonymous namespace)::bmm_out_kernel<float>(float*, float const*, float const*, int)",
       K::gemm},
      {"sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage5_warpsize2x2x1_tensor16x8x16_bias_relu_"
       "kernel",
       K::gemm},
      {"void cublasLt::epilogue::impl::globalKernel<8, 32, float, float, float, true, false, false, true>(int, int, "
       "long, float*, float const*, long)",
       K::gemm},
      // A bias add on its own stays elementwise.
      {"void tensorflow::functor::BiasNCHWKernel<float>(int, float const*, float const*, float*, int, int)",
       K::elementwise},
  });
}

// An Eigen reduction over {0, 2, 3} of a 4-D tensor is per-channel
// statistics of an NCHW tensor: batch norm's mean and variance done as
// generic reductions (TensorFlow's tf.nn.moments on NCHW). Other reductions
// stay reductions.
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
constexpr const char* kEigenSquaredDiffSum =
    "void Eigen::internal::InnerReductionKernel<128, Eigen::TensorEvaluator<Eigen::TensorReductionOp<Eigen::internal::"
    "SumReducer<float>, Eigen::array<long, 3ul> const, Eigen::TensorCwiseUnaryOp<Eigen::internal::scalar_square_op<"
    "float const>, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, long>, 16, Eigen::MakePointer> const> const, "
    "Eigen::MakePointer> const, Eigen::GpuDevice>, Eigen::internal::SumReducer<float>, long>(Eigen::internal::"
    "SumReducer<float>, Eigen::TensorEvaluator<Eigen::TensorReductionOp<Eigen::internal::SumReducer<float>, "
    "Eigen::array<long, 3ul> const, Eigen::TensorCwiseUnaryOp<Eigen::internal::scalar_square_op<float const>, "
    "Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, long>, 16, Eigen::MakePointer> const> const, "
    "Eigen::MakePointer> const, Eigen::GpuDevice>, long, long, float*)";
constexpr const char* kEigenRowSum =
    "void Eigen::internal::InnerReductionKernel<128, Eigen::TensorEvaluator<Eigen::TensorReductionOp<Eigen::internal::"
    "SumReducer<float>, Eigen::IndexList<Eigen::type2index<1l> > const, Eigen::TensorMap<Eigen::Tensor<float const, "
    "2, 1, long>, 16, Eigen::MakePointer> const, Eigen::MakePointer> const, Eigen::GpuDevice>, "
    "Eigen::internal::SumReducer<float>, long>(Eigen::internal::SumReducer<float>, Eigen::TensorEvaluator<>, long, "
    "long, float*)";

// Layout changes as TensorFlow runs them: Eigen shufflings and SwapDimension kernels.
TEST(KernelCategory, EigenShufflingsAndTensorFlowSwapsAreTransposes) {
  check({
      {"void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
       "Tensor<float, 4, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorShufflingOp<Eigen::array<int, 4ul> const, "
       "Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, long>, 16, Eigen::MakePointer> const> const> const, "
       "Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, "
       "4, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorShufflingOp<Eigen::array<int, 4ul> const, Eigen::TensorMap<"
       "Eigen::Tensor<float const, 4, 1, long>, 16, Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, long)",
       K::transpose},
      {"void tensorflow::functor::SwapDimension1And2InTensor3SmallDim<float, 1024, 32, false>(float const*, int, int, "
       "int, float*)",
       K::transpose},
      {"void tensorflow::functor::ShuffleInTensor3Simple<float, 2, 1, 0, false>(int, float const*, "
       "tensorflow::functor::Dimension<3>, float*)",
       K::transpose},
  });
}

// MIOpen's implicit-GEMM convolutions carry "gemm" and no "conv": their
// direction word (fwd, bwd, wrw) after "igemm_" says convolution; a GEMM
// library's integer GEMM is not one.
TEST(KernelCategory, MIOpenImplicitGemmConvolutionsAreConvolutions) {
  check({
      {"igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x256x32_wt16x64x4_ws1x1_wr1x2_ta1x4x1x1_1x8x1x32_tb1x4x8x1_1x8x1x32_gkgs",
       K::convolution},
      {"igemm_bwd_gtcx2_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x1x2_1x4x1x64_mh_"
       "gkgs",
       K::convolution},
      {"igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2x1_wr2x2_ta1x4x1x4_1x4x1x64_tb1x4x1x2_1x4x1x64_"
       "gkgs",
       K::convolution},
      {"igemm_fwd_gtc_nchw_fp32_bx0_ex0_bt128x128x16_tb1x1x1x1", K::convolution},
      {"volta_igemm_int8_128x128_ldg4_nn", K::gemm},
      {"Cijk_Ailk_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x16x256_MI16x16x1_SN_LDSB1", K::gemm},
  });
}

// Attention kernels of the serving and diffusion stacks: SageAttention (as
// AITER builds it, and its CUDA kernels), FlashInfer's prefill and decode,
// CK tile's and AITER's fmha; the quantization SageAttention runs first is
// elementwise, and a sampling kernel of the same library is not attention.
TEST(KernelCategory, SageAttentionAndFlashInferAreAttention) {
  check({
      {"sage_fwd", K::attention},
      {"void qk_int_sv_f8_attn_kernel<128, 64, 4, 8, 128, (QuantGranularity)2, (QuantGranularity)2, float, false, "
       "__nv_bfloat16, (ComputeUnit)0, (MaskMode)0, false, false>(signed char*, signed char*)",
       K::attention},
      {"void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u, 4u, 8u, 16u, 1u, 8u, "
       "__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>(__nv_bfloat16*)",
       K::attention},
      {"void flashinfer::SinglePrefillWithKVCacheKernel<128u, 1u>(__half*)", K::attention},
      {"aiter::fmha_fwd_hd128_bf16_rtz", K::attention},
      {"sage_quant_kernel", K::elementwise},
      {"void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, (cub::BlockScanAlgorithm)1>(float*)",
       K::other},
      {"void flashinfer::AppendPagedKVCacheKernel<128u, 8u, __nv_bfloat16, int>(__nv_bfloat16*)", K::other},
  });
}

// Inductor's fused kernels are named after the ops they fused: the layout
// rules read that list only when every op in it moves data, and a pointwise
// or reduction kernel is never a GEMM, convolution or attention kernel.
TEST(KernelCategory, InductorKernelsAreLayoutKernelsOnlyWhenEveryFusedOpMovesData) {
  check({
      // Every op a view, copy or transpose: a layout change.
      {"triton_poi_fused_clone_transpose_21", K::transpose},
      {"triton_poi_fused__unsafe_view_clone_slice_transpose_11", K::transpose},
      {"triton_poi_fused_permute_0", K::transpose},
      {"triton_poi_fused_constant_pad_nd_0", K::padding},
      {"triton_poi_fused__to_copy_constant_pad_nd_view_2", K::padding},
      // A compute op among them: what the kernel computes decides.
      {"triton_red_fused__to_copy_add_addmm_div_empty_like_mean_mul_neg_pow_rsqrt_stack_sub_transpose_unbind_"
       "unsqueeze_view_31",
       K::reduction},
      {"triton_poi_fused__unsafe_view_addmm_cat_clone_gelu_transpose_view_34", K::elementwise},
      {"triton_per_fused__to_copy_add_addmm_mean_mul_pow_rsqrt_transpose_view_8", K::reduction},
      {"triton_red_fused_abs_amax_transpose_view_32", K::reduction},
      {"triton_poi_fused_add_constant_pad_nd_3", K::elementwise},
      {"triton_poi_fused_constant_pad_nd_moe_forward_0", K::elementwise},
      // The heavy op the graph fused around is not the kernel.
      {"triton_poi_fused__scaled_dot_product_flash_attention_cat_transpose_view_10", K::elementwise},
      {"triton_red_fused__to_copy_add_addmm_as_strided_fmha_v3_fwd_mean_mul_neg_pow_rsqrt_stack_unbind_unsqueeze_"
       "view_24",
       K::reduction},
      {"triton_poi_fused_convolution_relu_3", K::elementwise},
      {"triton_poi_fused_bmm_2", K::elementwise},
      // What the op list says of the kernel itself still counts.
      {"triton_red_fused_add_addmm_mul_native_layer_norm_split_unsqueeze_view_16", K::normalization},
      {"triton_per_fused__softmax_0", K::softmax_loss},
      {"triton_poi_fused_add_0", K::elementwise},
      {"triton_poi_fused_0", K::elementwise},
      {"triton_poi_fused_", K::elementwise},
      {"triton_poi", K::other},
      {"triton_", K::other},
      // A template is a GEMM or a convolution, whatever layout its output takes.
      {"triton_tem_fused_addmm_transpose_view_0", K::gemm},
      {"triton_tem_fused_convolution_0", K::convolution},
      // Not Inductor's: the layout words keep their meaning.
      {"batched_transpose_16x64_pack_1x4_ediv_1x2_half", K::transpose},
      {"transpose_kernel_add", K::transpose},
  });
  EXPECT_EQ(category_rule_text("triton_poi_fused__unsafe_view_addmm_cat_clone_gelu_transpose_view_34", K::elementwise),
            "name: triton_poi_");
}

TEST(KernelCategory, PerChannelEigenReductionsAreNormalizationByTheirTemplateArguments) {
  check({
      {kEigenChannelMean, K::normalization},
      {kEigenSquaredDiffSum, K::normalization},
      {kEigenRowSum, K::reduction},
      // {0, 1} of a 4-D tensor: a spatial reduction, not per-channel statistics.
      {"void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
       "Tensor<float, 2, 1, long>, 16>, Eigen::TensorReductionOp<Eigen::internal::SumReducer<float>, Eigen::IndexList<"
       "Eigen::type2index<0l>, Eigen::type2index<1l> > const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, long>, "
       "16> const> const> const, Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<>, long)",
       K::reduction},
      // Broken template arguments fall back to the name patterns, never crash.
      {"void Eigen::internal::InnerReductionKernel<Eigen::TensorReductionOp<Eigen::IndexList<", K::reduction},
      {"Eigen::TensorReductionOp<a, Eigen::IndexList<Eigen::type2index<99999999999l> >, Eigen::Tensor<f, 4>>",
       K::reduction},
  });
  EXPECT_EQ(category_rule_text(kEigenChannelMean, K::normalization),
            "template arguments: reduction over {0,2,3} (per-channel statistics of an NCHW tensor)");
  EXPECT_EQ(category_rule_text(kEigenSquaredDiffSum, K::normalization),
            "template arguments: reduction over 3 of the 4 dimensions");
  EXPECT_EQ(category_rule_text(kEigenRowSum, K::reduction), "name: reduce");  // SumReducer
}

TEST(KernelCategory, TheRuleTextNamesWhatPlacedAKernel) {
  EXPECT_EQ(category_rule_text("ampere_sgemm_128x64_nn", K::gemm), "name: gemm");
  EXPECT_EQ(category_rule_text("void pytorch_flash::flash_fwd_kernel<>(Flash_fwd_params)", K::attention),
            "name: flash_fwd");
  // A GEMM kernel its convolution op moved: the launching op placed it.
  EXPECT_EQ(category_rule_text("volta_sgemm_128x64_nn", K::convolution),
            "launching op: a convolution op (\"conv\" in its name)");
  EXPECT_EQ(category_rule_text("mystery_kernel", K::other), "no rule (other)");
}

TEST(KernelCategory, ParameterListsAreIgnoredButAnonymousNamespacesKept) {
  EXPECT_EQ(classify_kernel("f(conv_params)"), K::other);
  EXPECT_EQ(classify_kernel("my_conv_kernel(int)"), K::convolution);
  EXPECT_EQ(classify_kernel("(anonymous namespace)::max_pool_forward(int)"), K::pooling);
  EXPECT_EQ(classify_kernel(""), K::other);
  EXPECT_EQ(classify_kernel(")))((("), K::other);
}

TEST(KernelCategory, EveryCategoryHasANameThatParsesBack) {
  for (int i = 0; i < kKernelCategoryCount; ++i) {
    const auto c = static_cast<KernelCategory>(i);
    KernelCategory back{};
    ASSERT_TRUE(parse_category(to_string(c), &back)) << to_string(c);
    EXPECT_EQ(back, c);
  }
  KernelCategory x{};
  EXPECT_FALSE(parse_category("nonsense", &x));
}

TEST(Demangle, DemanglesItaniumNamesAndPassesOthersThrough) {
  EXPECT_EQ(demangle("_Z6kernelPfi"), "kernel(float*, int)");
  EXPECT_EQ(demangle("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(demangle("_Zgarbage!!"), "_Zgarbage!!");
  EXPECT_EQ(demangle(""), "");
}

// contains_nocase against the plain definition (every place, every byte
// folded), on haystacks that put matches and near-matches at every offset
// around its 16-byte steps, with the bytes that differ from a letter only in
// bit 0x20 ('@' and '`', '[' and '{', '_' and DEL) and bytes above 0x7f.
TEST(ContainsNocase, AgreesWithThePlainDefinition) {
  auto plain = [](std::string_view h, std::string_view needle) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; };
    for (std::size_t i = 0; i + needle.size() <= h.size(); ++i) {
      std::size_t k = 0;
      while (k < needle.size() && lower(h[i + k]) == needle[k]) ++k;
      if (k == needle.size()) return true;
    }
    return needle.empty();
  };
  const std::string alphabet =
      "aAbB_@`[{ \x7f\xe9"
      "g1";
  const std::vector<std::string> needles = {"a",
                                            "ab",
                                            "ba",
                                            "_@",
                                            "`[",
                                            "a_b",
                                            "gemm",
                                            "g1",
                                            "\xe9"
                                            "a",
                                            "ab{a",
                                            "bbbbbbbbbbbbbbbbbb"};
  std::mt19937 rng(7);
  std::size_t found = 0, tried = 0;
  for (int round = 0; round < 4000; ++round) {
    const std::size_t len = rng() % 70;
    std::string h(len, ' ');
    for (char& c : h) c = alphabet[rng() % alphabet.size()];
    for (const std::string& needle : needles) {
      std::string hay = h;
      if (!hay.empty() && rng() % 2) {  // plant the needle, in mixed case, somewhere (maybe cut at the end)
        const std::size_t at = rng() % hay.size();
        for (std::size_t k = 0; k < needle.size() && at + k < hay.size(); ++k)
          hay[at + k] = rng() % 2 ? static_cast<char>(std::toupper(static_cast<unsigned char>(needle[k]))) : needle[k];
      }
      const bool want = plain(hay, needle);
      EXPECT_EQ(contains_nocase(hay, needle), want) << "haystack '" << hay << "', needle '" << needle << "'";
      found += want;
      ++tried;
    }
  }
  EXPECT_GT(found, tried / 10);  // the planted needles make matches common, and misses too
  EXPECT_LT(found, tried - tried / 10);
}

}  // namespace
}  // namespace gpuscope
