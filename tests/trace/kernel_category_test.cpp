// The kernel category table (src/trace/kernel_category.cpp) on the names the
// diagnosis depends on: Eigen's evaluators, cuDNN/cuBLAS/CUTLASS/Hopper, NCCL,
// ATen, Triton. Every kernel name of the real traces is checked against
// tests/trace/data/kernel_categories.tsv in kernel_category_golden_test.cpp;
// the bundled workload's kernels in tests/workload/kernel_names_test.cpp.
#include "trace/kernel_category.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <ostream>

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
      {"void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, float const*, "
       "float*, float*)",
       K::normalization},
  });
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

}  // namespace
}  // namespace gpuscope
